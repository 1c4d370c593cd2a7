package conformance

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestOldestTrimDue: over random NACKs put and taken (trimmed, trimmed on
// the last hop, out of window; PSN numbers near 0, near 2^23 and near
// 2^24, where "before" wraps), nackTrims always holds the PSNs of the
// trimmed packets' NACKs in ascending order, and oldestTrimDue finds what
// a walk of all the NACKs finds: the lowest PSN number of a trimmed
// packet's NACK before psn and due.
func TestOldestTrimDue(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	reasons := []wire.NACKReason{wire.NACKTrimmed, wire.NACKTrimmedLastHop, wire.NACKPSNOutOfWindow}
	psn := func() uint32 {
		base := []uint32{0, 1 << 22, 1 << 23, 1<<24 - 64}[rng.IntN(4)]
		return (base + uint32(rng.IntN(128)) - 32) & wire.PSNMask
	}
	walk := func(fl *flow, x uint32, due int64) (uint32, bool) {
		q, found := uint32(0), false
		for p, o := range fl.nackPend {
			if o.trim() && psnAfter(x, p) && o.ns <= due && (!found || p < q) {
				q, found = p, true
			}
		}
		return q, found
	}
	for round := 0; round < 200; round++ {
		fl := newFlow(flowKey{}, 0)
		for op := 0; op < 300; op++ {
			switch q := psn(); rng.IntN(3) {
			case 0, 1:
				fl.putNACK(q, pendingNACK{frame: op + 1, ns: int64(rng.IntN(1000)), reason: reasons[rng.IntN(len(reasons))]})
			case 2:
				fl.delNACK(q)
			}
			var want []uint32
			for p, o := range fl.nackPend {
				if o.trim() {
					want = append(want, p)
				}
			}
			slices.Sort(want)
			if !slices.Equal(fl.nackTrims, want) {
				t.Fatalf("seed %d, round %d, op %d: nackTrims %v, want %v", seed, round, op, fl.nackTrims, want)
			}
			x, due := psn(), int64(rng.IntN(1000))
			gq, gok := fl.oldestTrimDue(x, due)
			wq, wok := walk(fl, x, due)
			if gq != wq || gok != wok {
				t.Fatalf("seed %d, round %d, op %d: oldestTrimDue(%d, %d) = %d, %v; the walk finds %d, %v", seed, round, op, x, due, gq, gok, wq, wok)
			}
		}
	}
}
