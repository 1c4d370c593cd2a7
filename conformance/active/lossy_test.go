package active

import (
	"context"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestLossyFabric runs the whole suite against the reference on a
// simulated fabric that drops 10 % of the IUT's frames, as the end-to-end
// test's nftables rule does, for several seeds, over IPv4 (odd seeds) and
// IPv6 (even seeds): no check may take a loss for a failure, and every
// case still decides (PASS; the IPv6-only cases do not apply over IPv4).
// Synthetic time makes each run reproducible.
func TestLossyFabric(t *testing.T) {
	var seeds []uint64
	for s := uint64(1); s <= 16; s++ {
		seeds = append(seeds, s)
	}
	if testing.Short() {
		seeds = seeds[:4]
	}
	for _, seed := range seeds {
		v6 := seed%2 == 0
		tgt, err := NewInproc(InprocConfig{Seed: seed, Loss: 10, IPv6: v6})
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
			c, _ := lookupActive(r.Case.ID)
			if want := map[bool]conformance.Verdict{false: conformance.Pass, true: conformance.NotApplicable}[c.IPv6 && !v6]; r.Verdict != want {
				t.Errorf("seed %d (IPv6 %v): %s: %s: %s", seed, v6, r.Case.ID, r.Verdict, r.Reason)
				for _, f := range r.Findings {
					t.Logf("    %s %s frame %d: expected %s; observed %s", f.Verdict, f.Requirement, f.Frame, f.Expected, f.Observed)
				}
			}
		}
	}
}
