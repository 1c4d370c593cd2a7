package conformance

import (
	"math/rand/v2"
	"testing"
)

// TestRcumAtAgreesWithScan checks rcumAt (a walk from its previous answer
// while the history is in time order) against a scan from the end, the way RSP-SACK-1 and
// RSP-SACK-7 ask for the cumulative point a reaction time ago, over
// histories with equal times, times going backwards (frames judged out of
// order) and the history's compaction past 1024 events.
func TestRcumAtAgreesWithScan(t *testing.T) {
	const seed = 3
	r := rand.New(rand.NewPCG(seed, 0))
	scan := func(fl *flow, at int64) (rcumEvent, bool) {
		for i := len(fl.rcumHist) - 1; i >= 0; i-- {
			if fl.rcumHist[i].ns <= at {
				return fl.rcumHist[i], true
			}
		}
		return rcumEvent{}, false
	}
	walked := 0
	for run := 0; run < 20; run++ {
		fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
		ns := int64(1000)
		for i := 0; i < 3000; i++ {
			switch k := r.IntN(20); {
			case k == 0 && run%2 == 1:
				ns -= int64(r.IntN(50)) // a frame out of time order
			case k < 5:
				// same time
			default:
				ns += int64(r.IntN(20))
			}
			fl.pushRcum(ns, uint32(i), int64(i))
			if fl.rcumBack == 0 {
				walked++
			}
			for j := 0; j < 3; j++ {
				at := ns - int64(r.IntN(300)) + 10
				got, gok := fl.rcumAt(at)
				want, wok := scan(fl, at)
				if got != want || gok != wok {
					t.Fatalf("seed %d run %d push %d: rcumAt(%d) = %+v %v, scan %+v %v", seed, run, i, at, got, gok, want, wok)
				}
			}
		}
	}
	if walked < 20*3000/2 {
		t.Errorf("the walk answered after %d of %d pushes", walked, 20*3000)
	}
}
