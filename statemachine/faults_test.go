package statemachine

import (
	"reflect"
	"slices"
	"testing"

	specpkg "github.com/openmrc/mrc/spec"
)

// allFaults are the statemachine's seeded faults.
var allFaults = []Faults{FaultGoBackN, FaultIgnoreTrim, FaultReuseNACKedEV, FaultEarlyWIMM, FaultPlaceDuplicates,
	FaultBeyondMPR, FaultNoRestore, FaultNoHoldOff, FaultNoStallTimer, FaultPlaceShifted,
	FaultFatalRecoverableNACK, FaultResponderWindowOffByOne, FaultNoBackoff, FaultStallTimerKept, FaultStallDequeues,
	FaultSQDrainedEarly, FaultSQDStartsNew, FaultSQDrainedAtMoveOnly, FaultIgnoreSACKedUnexp,
	FaultCommEstRepeated, FaultRtxTakenAsNew, FaultHalfSpaceOffByOne, FaultRingAlias,
	FaultTrimBeforeWindow, FaultCEDupUnmarked, FaultWIMMConflictPlaced}

// TestFaultNames: every seeded fault is one bit with a name and a
// description of its own, found again by its name; a set names its faults
// sorted, and making a fault whose name is taken panics.
func TestFaultNames(t *testing.T) {
	var union Faults
	for _, f := range allFaults {
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
	NewFault("go-back-n", "LR-RTX-1", "again", func(*ruleSet) {})
}

// TestFaultRules: every seeded fault names a requirement the
// specification defines and overrides exactly one rule of rules.go, and
// BreakRules leaves the rules unbroken (nil) for faults that break another
// package's rules or none.
func TestFaultRules(t *testing.T) {
	type otherRules struct{ f func() }
	other := NewFault("test-other-rules", "LR-RTX-1", "breaks a rules type of another package",
		func(o *otherRules) { o.f = func() {} })
	if BreakRules(0, specRules) != nil || BreakRules(other, specRules) != nil || BreakRules(other, otherRules{}) == nil {
		t.Error("BreakRules breaks the wrong rules")
	}
	spec := reflect.ValueOf(specRules)
	for _, f := range allFaults {
		if _, ok := specpkg.Lookup(f.Requirement()); !ok {
			t.Errorf("fault %s: requirement %q not in the specification", f, f.Requirement())
		}
		b := BreakRules(f, specRules)
		if b == nil {
			t.Errorf("fault %s breaks no rule", f)
			continue
		}
		var changed []string
		got := reflect.ValueOf(*b)
		for i := range got.NumField() {
			if got.Field(i).Pointer() != spec.Field(i).Pointer() {
				changed = append(changed, got.Type().Field(i).Name)
			}
		}
		if len(changed) != 1 {
			t.Errorf("fault %s overrides %v, want one rule", f, changed)
		}
	}
	for i := range spec.NumField() {
		if spec.Field(i).IsNil() {
			t.Errorf("specRules.%s is nil", spec.Type().Field(i).Name)
		}
	}
}
