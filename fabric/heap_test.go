package fabric

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// TestAgendaOrder: events come out by time and, at equal times, in the
// order they were pushed — whatever the interleaving of pushes and pops —
// which is the tie-break that makes runs deterministic.
func TestAgendaOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		var a agenda
		var ref []event
		var now Time
		for k := 0; k < 500; k++ {
			if r.IntN(3) > 0 || len(ref) == 0 {
				var tm Time
				switch r.IntN(10) {
				case 0: // beyond the wheel's horizon: the overflow heap
					tm = now + Time(wheelSize-50+r.IntN(200))
				case 1:
					tm = now + Time(r.IntN(5*wheelSize))
				case 2:
					tm = now + Time(r.IntN(1e9))
				default:
					tm = now + Time(r.IntN(20)) // many equal times
				}
				a.push(tm, evArrive, int32(k))
				ref = append(ref, event{t: tm, seq: a.seq, id: int32(k)})
				continue
			}
			sort.SliceStable(ref, func(i, j int) bool { return ref[i].before(&ref[j]) })
			if a.nextTime() != ref[0].t {
				t.Fatalf("round %d: next time %d, want %d", round, a.nextTime(), ref[0].t)
			}
			got := a.pop()
			want := ref[0]
			ref = ref[1:]
			if got.t != want.t || got.id != want.id {
				t.Fatalf("round %d: popped (t=%d id=%d), want (t=%d id=%d)", round, got.t, got.id, want.t, want.id)
			}
			now = got.t
		}
		for len(ref) > 0 {
			sort.SliceStable(ref, func(i, j int) bool { return ref[i].before(&ref[j]) })
			if got := a.pop(); got.id != ref[0].id {
				t.Fatalf("drain: popped id %d, want %d", got.id, ref[0].id)
			}
			ref = ref[1:]
		}
		if a.len() != 0 {
			t.Fatalf("%d events left", a.len())
		}
	}
}
