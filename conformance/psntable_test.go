package conformance

import (
	"math/rand/v2"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestPSNTableMatchesMap drives the PSN ring and a map with the same
// sends and cumulative acknowledgements, across the 2^24 wrap, and
// requires the same contents after every step.
func TestPSNTableMatchesMap(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		var tb psnTable
		model := map[uint32]int{}
		next := wire.PSNAdd(0, -int(rng.IntN(3000))) // starts before the wrap
		una := wire.PSNAdd(next, -1)
		for step := 0; step < 3000; step++ {
			if rng.IntN(3) > 0 { // send up to 40 new PSNs, skipping some
				for k := rng.IntN(40); k > 0; k-- {
					if rng.IntN(10) > 0 {
						if ok, _ := tb.put(next, psnInfo{firstFrame: step}); !ok {
							t.Fatalf("seed %d: put %d refused", seed, next)
						}
						model[next] = step
					}
					next = wire.PSNAdd(next, 1)
				}
			} else if d := psnDist(next, una); d > 1 { // acknowledge part of the window
				una = wire.PSNAdd(una, 1+rng.IntN(int(d-1)))
				tb.dropThrough(una)
				for q := range model {
					if !psnAfter(q, una) {
						delete(model, q)
					}
				}
			}
			if tb.len() != len(model) {
				t.Fatalf("seed %d step %d: len %d, model %d", seed, step, tb.len(), len(model))
			}
			for q, f := range model {
				if st := tb.get(q); st == nil || st.firstFrame != f {
					t.Fatalf("seed %d step %d: PSN %d lost", seed, step, q)
				}
			}
			n := 0
			for q, end := tb.span(una, next); q != end; q = wire.PSNAdd(q, 1) {
				if tb.get(q) == nil {
					continue
				}
				if _, ok := model[q]; !ok {
					t.Fatalf("seed %d: span visits %d, not held", seed, q)
				}
				n++
			}
			if n != len(model) {
				t.Fatalf("seed %d step %d: span visited %d of %d", seed, step, n, len(model))
			}
			if tb.get(una) != nil {
				t.Fatalf("seed %d: acknowledged PSN %d still held", seed, una)
			}
		}
	}
}

// TestPSNTableJump: one PSN far out of any window (the tester's crafted
// out-of-window write in MRC-RSP-RCV-102) restarts the table at that PSN
// instead of filling it, so the connection stays tracked; the in-process
// run's capture was judged all INCONCLUSIVE ("PSN table full") before.
func TestPSNTableJump(t *testing.T) {
	var tb psnTable
	for q := uint32(96); q < 98; q++ {
		if ok, jumped := tb.put(q, psnInfo{firstFrame: int(q)}); !ok || jumped {
			t.Fatalf("put %d: ok %v, jumped %v", q, ok, jumped)
		}
	}
	far := wire.PSNAdd(96, 1<<23-1)
	ok, jumped := tb.put(far, psnInfo{firstFrame: 1})
	if !ok || !jumped {
		t.Fatalf("put %d: ok %v, jumped %v; want a restart", far, ok, jumped)
	}
	if tb.len() != 1 || tb.get(far) == nil || tb.get(96) != nil {
		t.Errorf("after the jump: len %d, far held %v, 96 held %v", tb.len(), tb.get(far) != nil, tb.get(96) != nil)
	}
	if ok, jumped := tb.put(wire.PSNAdd(far, 1), psnInfo{}); !ok || jumped {
		t.Errorf("the PSN after the jump: ok %v, jumped %v", ok, jumped)
	}
}

// TestPSNTableOpenIn: the PSNs of a span that a SACK's loss walk must
// visit (held, not acknowledged selectively) all have their bit in
// openIn's words, and no bit lies beyond the span, across the 2^24 wrap
// and as the ring grows.
func TestPSNTableOpenIn(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		var tb psnTable
		next := wire.PSNAdd(0, -int(rng.IntN(3000)))
		una := wire.PSNAdd(next, -1)
		for step := 0; step < 2000; step++ {
			for k := rng.IntN(40); k > 0; k-- {
				if rng.IntN(10) > 0 {
					tb.put(next, psnInfo{})
				}
				next = wire.PSNAdd(next, 1)
			}
			for k := rng.IntN(20); k > 0; k-- {
				if q := wire.PSNAdd(una, 1+rng.IntN(int(psnDist(next, una)))); tb.get(q) != nil && !tb.get(q).ackSel {
					tb.markSel(q, tb.get(q))
				}
			}
			if rng.IntN(4) == 0 {
				una = wire.PSNAdd(una, rng.IntN(int(psnDist(next, una))))
				tb.dropThrough(una)
			}
			from := wire.PSNAdd(una, rng.IntN(1+int(psnDist(next, una))))
			for q, end := tb.span(from, next); q != end; {
				bm, n := tb.openIn(q, end)
				if n == 0 || n > 64 || n > psnDist(end, q) || n < 64 && bm>>n != 0 {
					t.Fatalf("seed %d step %d: openIn(%d, %d) = %#x over %d PSNs", seed, step, q, end, bm, n)
				}
				for i := range n {
					if st := tb.get(wire.PSNAdd(q, int(i))); st != nil && !st.ackSel && bm&(1<<i) == 0 {
						t.Fatalf("seed %d step %d: PSN %d open, bit %d clear in openIn(%d, %d)", seed, step, wire.PSNAdd(q, int(i)), i, q, end)
					}
				}
				q = wire.PSNAdd(q, int(n))
			}
		}
	}
}
