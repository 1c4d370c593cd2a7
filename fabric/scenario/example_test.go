package scenario_test

import (
	"fmt"

	"github.com/openmrc/mrc/fabric/scenario"
)

// Run one of the white paper's scenarios and read its asserted outcomes.
func ExamplePlaneDown() {
	r, err := scenario.PlaneDown(1, scenario.Options{})
	if err != nil {
		panic(err)
	}
	for _, c := range r.Checks {
		fmt.Println(c.What, c.OK)
	}
	fmt.Printf("MRC keeps %.0f%% of its throughput\n", 100*r.Values["mrc_post_ratio"])
	// Output:
	// no QP error true
	// settles at 7/8 ± 5 % true
	// MRC keeps 87% of its throughput
}
