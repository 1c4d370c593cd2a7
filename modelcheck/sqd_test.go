package modelcheck

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// TestSQDrain: the application may move A to SQD, with or without the
// event, at any moment of a transfer with one loss, post meanwhile, and
// move it back to RTS; every invariant holds, and the search reaches
// SQ_DRAINED (QP-ST-12, CTL-AEV-6). With MRC_MC_LARGE the larger
// sq-drain-large too.
func TestSQDrain(t *testing.T) {
	cfgs := []Config{sqdConfig("sq-drain")}
	if largeRun() {
		cfgs = append(cfgs, sqdLargeConfig("sq-drain-large"))
	}
	for _, cfg := range cfgs {
		r, err := Check(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("| %s | %s | %d | %d | %d | %.1f s |", cfg.Name, describeBounds(cfg), r.States, r.Distinct, r.Depth, r.Elapsed.Seconds())
		if r.Violation != nil {
			t.Fatalf("invariant violated:\n%s", r.Violation)
		}
		if r.Reached["SQDrained"] == 0 || r.Reached["Timeout"] == 0 {
			t.Errorf("%s: the search never drained A, or never timed out (reached: %v)", cfg.Name, r.ReachedList())
		}
	}
}

// TestSeededSQDrainedEarly: SQ_DRAINED raised once the started WR is
// sent, before it is acknowledged (QP-ST-12, CTL-AEV-6): post WR 1; PSN 0
// and its SACK arrive, PSN 1 goes out; move to SQD asking for the event:
// it comes while PSN 1 is in flight.
func TestSeededSQDrainedEarly(t *testing.T) {
	seeded(t, sqdConfig("sq-drain"), sm.FaultSQDrainedEarly, InvSQDrained, 4, true)
}

// TestSeededSQDrainedAtMoveOnly: SQ_DRAINED raised only when the QP is
// drained at the move, never when its last packet is acknowledged later
// (CTL-AEV-6): post WR 1; PSN 0 and its SACK arrive, PSN 1 goes out and
// arrives; move to SQD asking for the event; the ACK of PSN 1 arrives:
// drained, and no event.
func TestSeededSQDrainedAtMoveOnly(t *testing.T) {
	seeded(t, sqdConfig("sq-drain"), sm.FaultSQDrainedAtMoveOnly, InvSQDrained, 6, true)
}

// TestSeededSQDStartsNew: SQD starts the next WR as RTS would (QP-ST-12):
// move to SQD; post WR 1: it goes out.
func TestSeededSQDStartsNew(t *testing.T) {
	seeded(t, sqdConfig("sq-drain"), sm.FaultSQDStartsNew, InvSQDrained, 2, true)
}
