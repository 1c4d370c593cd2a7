package modelcheck

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// TestEVEventsReportedCanFail: with an ev_event_mask that leaves out
// GOOD, the EV event CQ reports fewer events than the model expects, and
// the controller configuration's first return to GOOD violates
// EVEventsReported (EV-ST-12).
func TestEVEventsReportedCanFail(t *testing.T) {
	var cfg Config
	for _, c := range Configurations() {
		if c.Name == "controller" {
			cfg = c
		}
	}
	if cfg.Name == "" {
		t.Fatal("no controller configuration")
	}
	cfg.evMask = sm.EVEventAssumedBad
	r, err := Check(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil || r.Violation.Invariant != InvEVEventsReported {
		t.Fatalf("want an EVEventsReported violation, got %v", r)
	}
	t.Log(r.Violation)
}
