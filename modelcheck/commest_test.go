package modelcheck

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// TestCommEst: B starts in RTR while A sends to it, one packet may be lost,
// and the application moves B to RTS at any moment; every invariant holds
// and B raises COMM_EST (CTL-AEV-4, AMB-96).
func TestCommEst(t *testing.T) {
	cfg := commEstConfig("comm-est")
	r, err := Check(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("| %s | %s | %d | %d | %d | %.1f s |", cfg.Name, describeBounds(cfg), r.States, r.Distinct, r.Depth, r.Elapsed.Seconds())
	if r.Violation != nil {
		t.Fatalf("invariant violated:\n%s", r.Violation)
	}
	if r.Reached["CommEst"] == 0 {
		t.Errorf("the search never raised COMM_EST (reached: %v)", r.ReachedList())
	}
}

// TestSeededCommEstRepeated: COMM_EST raised on every request packet B
// accepts in RTR (CTL-AEV-4): post; deliver PSN 0 (the event); deliver
// PSN 1 (again).
func TestSeededCommEstRepeated(t *testing.T) {
	seeded(t, commEstConfig("comm-est"), sm.FaultCommEstRepeated, InvCommEst, 3, true)
}
