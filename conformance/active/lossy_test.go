package active

import (
	"context"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestLossyFabric runs the whole suite against the reference on a
// simulated fabric that drops 10 % of the IUT's frames, as the end-to-end
// test's nftables rule does, for several seeds: no check may take a loss
// for a failure. Synthetic time makes each run reproducible.
func TestLossyFabric(t *testing.T) {
	var seeds []uint64
	for s := uint64(1); s <= 16; s++ {
		seeds = append(seeds, s)
	}
	if testing.Short() {
		seeds = seeds[:4]
	}
	for _, seed := range seeds {
		tgt, err := NewInproc(InprocConfig{Seed: seed, Loss: 10})
		if err != nil {
			t.Fatal(err)
		}
		tim := SyntheticTiming()
		tim.Tries = 5
		rep, err := Run(context.Background(), tgt, Options{Seed: seed, Today: today, Timing: &tim})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Verdict == conformance.Fail || r.Verdict == conformance.Error {
				t.Errorf("seed %d: %s: %s: %s", seed, r.Case.ID, r.Verdict, r.Reason)
				for _, f := range r.Findings {
					t.Logf("    %s %s frame %d: expected %s; observed %s", f.Verdict, f.Requirement, f.Frame, f.Expected, f.Observed)
				}
			}
		}
	}
}
