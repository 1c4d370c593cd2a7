package active

import (
	"context"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestTrafficOutlastsTimeout: a case that waits for the IUT's data
// (before a port goes down, after it comes back: CTL-PORT-1, EV-PORT-3,
// CTL-OP-3) keeps the IUT sending until that data comes or the transfer
// time ends, so a loss recovered by a retransmission timeout longer than
// the case's window is no INCONCLUSIVE. With 60% of the IUT's frames lost
// these seeds stall every outstanding write behind a timeout; a window of
// fixed length saw no data on plane 1 and ended INCONCLUSIVE.
func TestTrafficOutlastsTimeout(t *testing.T) {
	for _, c := range []struct {
		id   string
		seed uint64
	}{{"MRC-CTL-PORT-101", 4}, {"MRC-CTL-PORT-101", 13}, {"MRC-EV-PORT-101", 8}} {
		tgt, err := NewInproc(InprocConfig{Seed: c.seed, Loss: 60})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), tgt, Options{Cases: "MRC-CTL-OP-101,MRC-CTL-PORT-101,MRC-EV-PORT-101", Seed: c.seed, Today: today})
		if err != nil {
			t.Fatal(err)
		}
		r, ok := rep.Result(c.id)
		if !ok {
			t.Fatalf("%s not run", c.id)
		}
		if r.Verdict != conformance.Pass {
			t.Errorf("%s, seed %d, 60%% loss: %s (%s), want PASS", c.id, c.seed, r.Verdict, r.Reason)
		}
	}
}
