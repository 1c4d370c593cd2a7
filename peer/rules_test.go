package peer

import (
	"errors"
	"flag"
	"reflect"
	"slices"
	"testing"

	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
)

// TestFaultRules: every fault the peer seeds names a requirement the
// specification defines; each of the peer's own overrides exactly one rule
// of rules.go, and the statemachine's override none of them.
func TestFaultRules(t *testing.T) {
	ofStatemachine := []sm.Faults{sm.FaultGoBackN, sm.FaultIgnoreTrim, sm.FaultReuseNACKedEV, sm.FaultEarlyWIMM,
		sm.FaultPlaceDuplicates, sm.FaultBeyondMPR, sm.FaultNoRestore, sm.FaultNoHoldOff, sm.FaultIgnoreSACKedUnexp}
	if rulesOf(FaultSet{}) != &specRules {
		t.Error("no fault seeded, yet the rules are not specRules")
	}
	want := reflect.ValueOf(specRules)
	for i := range want.NumField() {
		if want.Field(i).IsNil() {
			t.Errorf("specRules.%s is nil", want.Type().Field(i).Name)
		}
	}
	for _, f := range Faults {
		if _, ok := spec.Lookup(f.Requirement()); !ok {
			t.Errorf("fault %s: requirement %q not in the specification", f, f.Requirement())
		}
		var changed []string
		if b := sm.BreakRules(f, specRules); b != nil {
			got := reflect.ValueOf(*b)
			for i := range got.NumField() {
				if got.Field(i).Pointer() != want.Field(i).Pointer() {
					changed = append(changed, got.Type().Field(i).Name)
				}
			}
		}
		if slices.Contains(ofStatemachine, f) {
			if len(changed) != 0 {
				t.Errorf("statemachine fault %s overrides the peer's %v", f, changed)
			}
		} else if len(changed) != 1 {
			t.Errorf("fault %s overrides %v, want one rule", f, changed)
		}
	}
}

// TestFaultFlag: a FaultSet is the --fault flag, repeatable, and names an
// unknown fault in its error.
func TestFaultFlag(t *testing.T) {
	var s FaultSet
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(&s, "fault", "")
	if err := fs.Parse([]string{"--fault", "no-restore", "--fault", "bad-icrc"}); err != nil {
		t.Fatal(err)
	}
	if s.String() != "bad-icrc,no-restore" {
		t.Errorf("--fault no-restore --fault bad-icrc gives %q", s.String())
	}
	var ue *UnknownFaultError
	if err := s.Set("flaky"); !errors.As(err, &ue) || ue.Name != "flaky" {
		t.Errorf("unknown fault: %v", err)
	}
}
