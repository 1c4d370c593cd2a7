package active

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestLossyFabric runs the whole suite against the reference on a
// simulated fabric that drops 10 % of the IUT's frames, as the end-to-end
// test's nftables rule does, for several seeds, over IPv4 (odd seeds) and
// IPv6 (even seeds): no check may take a loss for a failure, and every
// case still decides (PASS; the IPv6-only cases do not apply over IPv4).
// Synthetic time makes each run reproducible. Liveness checks get seven
// tries, two more than the real-time profile's five: with five, some
// answer is lost five times in a row in about one seed in 500, an
// INCONCLUSIVE that any change to the frames exchanged can move onto one
// of these 16 seeds.
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
		tim.Tries = 7
		rep, err := Run(context.Background(), tgt, Options{Seed: seed, Today: today, Timing: &tim})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			c, _ := lookupActive(r.Case.ID)
			if want := referenceVerdict(c, v6); r.Verdict != want {
				t.Errorf("seed %d (IPv6 %v): %s: %s: %s", seed, v6, r.Case.ID, r.Verdict, r.Reason)
				for _, f := range r.Findings {
					t.Logf("    %s %s frame %d: expected %s; observed %s", f.Verdict, f.Requirement, f.Frame, f.Expected, f.Observed)
				}
			}
		}
	}
}

// TestInprocDeterministic runs one lossy in-process seed twice: the run
// is a function of its seed alone (synthetic clock, seeded loss, seeded
// tester and peer), so the two runs must agree frame for frame and verdict
// for verdict, whatever the machine's load. A difference means real time
// or some other unseeded input has leaked into the in-process transport,
// and TestLossyFabric's verdicts would depend on it.
func TestInprocDeterministic(t *testing.T) {
	const seed = 11
	run := func() (*conformance.Report, []string, []byte) {
		tgt, err := NewInproc(InprocConfig{Seed: seed, Loss: 10})
		if err != nil {
			t.Fatal(err)
		}
		tim := SyntheticTiming()
		tim.Tries = 5
		var logs []string
		var capture bytes.Buffer
		rep, err := Run(context.Background(), tgt, Options{Seed: seed, Today: today, Timing: &tim, Capture: &capture,
			Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
		if err != nil {
			t.Fatal(err)
		}
		return rep, logs, capture.Bytes()
	}
	rep1, logs1, cap1 := run()
	rep2, logs2, cap2 := run()
	for i := range max(len(logs1), len(logs2)) {
		if i >= len(logs1) || i >= len(logs2) || logs1[i] != logs2[i] {
			line := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end of log)"
			}
			t.Errorf("two runs of seed %d log differently from line %d:\n  %s\n  %s", seed, i+1, line(logs1), line(logs2))
			break
		}
	}
	if !bytes.Equal(cap1, cap2) {
		t.Errorf("two runs of seed %d captured different frames (%d and %d bytes)", seed, len(cap1), len(cap2))
	}
	for i := range rep1.Results {
		a, b := rep1.Results[i], rep2.Results[i]
		if a.Verdict != b.Verdict || !reflect.DeepEqual(a.Findings, b.Findings) {
			t.Errorf("%s: %s (%s) in one run, %s (%s) in the other", a.Case.ID, a.Verdict, a.Reason, b.Verdict, b.Reason)
		}
	}
}
