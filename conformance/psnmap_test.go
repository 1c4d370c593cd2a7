package conformance

import (
	"math/rand/v2"
	"testing"
)

// TestArrTableAgreesWithMap drives arrTable and a map with the same
// puts, gets and deletes, with PSNs close together and far apart (slot
// collisions at the ring's largest size go to the overflow map).
func TestArrTableAgreesWithMap(t *testing.T) {
	const seed = 12
	r := rand.New(rand.NewPCG(seed, 0))
	var tb arrTable
	ref := map[uint32]*arrival{}
	base := uint32(1000)
	sawMore := false
	for i := 0; i < 200000; i++ {
		q := (base + uint32(r.IntN(300))) & 0xFFFFFF
		if r.IntN(50) == 0 {
			q = (base + uint32(MaxPSNsPerFlow)*uint32(1+r.IntN(3)) + uint32(r.IntN(8))) & 0xFFFFFF // same slot as a near PSN
		}
		switch r.IntN(3) {
		case 0:
			if ref[q] == nil {
				a := &arrival{psn: q}
				ref[q] = a
				tb.put(q, a)
			}
		case 1:
			if got, want := tb.del(q), ref[q]; got != want {
				t.Fatalf("seed %d step %d: del(%d) = %p, want %p", seed, i, q, got, want)
			}
			delete(ref, q)
		default:
			if got, want := tb.get(q), ref[q]; got != want {
				t.Fatalf("seed %d step %d: get(%d) = %p, want %p", seed, i, q, got, want)
			}
		}
		if len(tb.more) > 0 {
			sawMore = true
		}
		if tb.len() != len(ref) {
			t.Fatalf("seed %d step %d: len %d, want %d", seed, i, tb.len(), len(ref))
		}
		if i%1000 == 0 {
			base += uint32(r.IntN(200))
		}
	}
	n := 0
	tb.each(func(q uint32, a *arrival) {
		n++
		if ref[q] != a {
			t.Fatalf("each: %d -> %p, want %p", q, a, ref[q])
		}
	})
	if !sawMore {
		t.Error("no PSN went to the overflow map")
	}
	if n != len(ref) || len(tb.ring) > MaxPSNsPerFlow {
		t.Fatalf("each saw %d of %d; ring %d slots", n, len(ref), len(tb.ring))
	}
}
