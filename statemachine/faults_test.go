package statemachine

import (
	"slices"
	"testing"
)

// TestFaultNames: every seeded fault is one bit with a name and a
// description of its own, found again by its name; a set names its faults
// sorted, and making a fault whose name is taken panics.
func TestFaultNames(t *testing.T) {
	all := []Faults{FaultGoBackN, FaultIgnoreTrim, FaultReuseNACKedEV, FaultEarlyWIMM, FaultPlaceDuplicates,
		FaultBeyondMPR, FaultNoRestore, FaultNoHoldOff, FaultNoStallTimer, FaultPlaceShifted,
		FaultFatalRecoverableNACK, FaultResponderWindowOffByOne, FaultNoBackoff, FaultStallTimerKept, FaultStallDequeues,
		FaultSQDrainedEarly, FaultSQDStartsNew, FaultSQDrainedAtMoveOnly, FaultIgnoreSACKedUnexp,
		FaultCommEstRepeated, FaultRtxTakenAsNew, FaultHalfSpaceOffByOne, FaultRingAlias}
	var union Faults
	for _, f := range all {
		if f == 0 || f&(f-1) != 0 || union&f != 0 || f.Doc() == "" {
			t.Errorf("fault %#x (%s): not one bit of its own with a description", uint64(f), f)
		}
		if g, ok := FaultNamed(f.Name()); !ok || g != f {
			t.Errorf("fault %s: FaultNamed gives %#x, %v", f.Name(), uint64(g), ok)
		}
		union |= f
	}
	if got := (FaultNoBackoff | FaultGoBackN).Names(); !slices.Equal(got, []string{"go-back-n", "no-backoff"}) {
		t.Errorf("Names: %q", got)
	}
	if !union.Has(FaultNoRestore) || Faults(0).Has(FaultNoRestore) || union.Has(0) || Faults(0).String() != "none" {
		t.Error("Has or String wrong")
	}
	defer func() {
		if recover() == nil {
			t.Error("a second fault named go-back-n was made")
		}
	}()
	NewFault("go-back-n", "again")
}
