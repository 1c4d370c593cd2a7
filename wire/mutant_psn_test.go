package wire

// Tests written against mutants of psn.go that the package's own tests
// let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import "testing"

// TestMutantPSNLessStrict: PSNLess is a strict order in the 24-bit serial
// arithmetic that REQ-PSN-4's bound on outstanding PSNs keeps unambiguous:
// no PSN is less than itself, and PSNMask is less than 0 across the wrap.
func TestMutantPSNLessStrict(t *testing.T) {
	for _, a := range []uint32{0, 1, PSNMask} {
		if PSNLess(a, a) {
			t.Errorf("PSNLess(%d, %d) true", a, a)
		}
	}
	if !PSNLess(PSNMask, 0) || PSNLess(0, PSNMask) {
		t.Error("PSNMask and 0 across the wrap: want PSNMask < 0 only")
	}
}
