package spec_test

import (
	"fmt"

	"github.com/openmrc/mrc/spec"
)

func ExampleLookup() {
	r, ok := spec.Lookup("WIRE-BTH-3")
	if !ok {
		fmt.Println("not found")
		return
	}
	fmt.Println(r.Level, r.Confidence)
	fmt.Println(r.Section)
	fmt.Println(r.File)

	a, _ := spec.LookupAmbiguity("AMB-1")
	fmt.Println(a.Title, "->", a.Default)
	// Output:
	// MUST secondary
	// BTH (Base Transport Header)
	// 11-wire-headers.md
	// UDP destination port -> 4791
}
