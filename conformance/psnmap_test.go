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
			checkHeldBits(t, &tb, ref, (q-uint32(r.IntN(64)))&0xFFFFFF, r.Uint64())
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

// checkHeldBits compares tb.heldBits with a get of each bit's PSN in ref.
func checkHeldBits(t *testing.T, tb *arrTable, ref map[uint32]*arrival, base uint32, bm uint64) {
	t.Helper()
	var want uint64
	for i := 0; i < 64; i++ {
		if bm&(1<<i) != 0 && ref[(base+uint32(i))&0xFFFFFF] != nil {
			want |= 1 << i
		}
	}
	if got := tb.heldBits(base, bm); got != want {
		t.Fatalf("heldBits(%d, %#x) = %#x, want %#x", base, bm, got, want)
	}
}

// TestHeldBitsAcrossWrap: a bitmap from just below 2^24 covers PSNs
// that wrapped to 0 (WIRE-BTH-4).
func TestHeldBitsAcrossWrap(t *testing.T) {
	var tb arrTable
	ref := map[uint32]*arrival{}
	for _, q := range []uint32{0xFFFFFE, 0xFFFFFF, 0, 3, 40} {
		ref[q] = &arrival{psn: q}
		tb.put(q, ref[q])
	}
	checkHeldBits(t, &tb, ref, 0xFFFFF0, ^uint64(0))
	if got := tb.heldBits(0xFFFFFE, 0b1111); got != 0b0111 {
		t.Fatalf("heldBits across the wrap = %#b, want 0b111", got)
	}
}
