package active_test

import (
	"context"
	"fmt"

	"github.com/openmrc/mrc/conformance/active"
	"github.com/openmrc/mrc/peer"
)

// Run a few cases against the in-process reference, then against the
// reference with a seeded bug: the suite catches it.
func Example() {
	for _, fault := range []string{"", "go-back-n"} {
		var names []string
		if fault != "" {
			names = append(names, fault)
		}
		faults, _ := peer.ParseFaults(names...)
		iut, err := active.NewInproc(active.InprocConfig{Faults: faults, Seed: 1})
		if err != nil {
			fmt.Println(err)
			return
		}
		rep, err := active.Run(context.Background(), iut, active.Options{Seed: 1, Cases: "MRC-LR-RTX-101,MRC-RSP-DUP-101"})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range rep.Results {
			fmt.Printf("%-10s %s %s\n", fault, r.Case.ID, r.Verdict)
		}
		fmt.Printf("%-10s exit status %d\n", fault, active.ExitCode(rep))
	}
	// Output:
	//            MRC-LR-RTX-101 PASS
	//            MRC-RSP-DUP-101 PASS
	//            exit status 0
	// go-back-n  MRC-LR-RTX-101 FAIL
	// go-back-n  MRC-RSP-DUP-101 PASS
	// go-back-n  exit status 1
}
