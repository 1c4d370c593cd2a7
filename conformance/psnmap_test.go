package conformance

import (
	"reflect"

	"github.com/openmrc/mrc/wire"
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
	tb := arrTable{bounded: true}
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

// TestHeldBitsBounded drives an arrTable as a responder's arrivals beyond
// its cumulative point (PSNs put ahead of it, the point advancing over
// them, a few deleted out of order, rarely one far away) and checks that
// heldBits agrees with a map at every step, and that its word-wide path
// (heldBitsBounded) decides most of them, across the 2^24 wrap.
func TestHeldBitsBounded(t *testing.T) {
	for _, start := range []uint32{0, 0xFFFF00} {
		const seed = 7
		r := rand.New(rand.NewPCG(seed, uint64(start)))
		tb := arrTable{bounded: true}
		ref := map[uint32]*arrival{}
		cum := start
		var far []uint32
		bounded, steps := 0, 0
		for i := 0; i < 100000; i++ {
			switch k := r.IntN(10); {
			case k < 5:
				q := (cum + 1 + uint32(r.IntN(200))) & 0xFFFFFF
				if r.IntN(500) == 0 {
					q = (cum + 1<<20 + uint32(r.IntN(1<<20))) & 0xFFFFFF // far ahead: the bounds give way
					far = append(far, q)
				}
				if ref[q] == nil {
					ref[q] = &arrival{psn: q}
					tb.put(q, ref[q])
				}
			case k < 8:
				cum = (cum + 1) & 0xFFFFFF
				if got, want := tb.del(cum), ref[cum]; got != want {
					t.Fatalf("seed %d step %d: del(%d) = %p, want %p", seed, i, cum, got, want)
				}
				delete(ref, cum)
			default:
				q := (cum + uint32(r.IntN(200))) & 0xFFFFFF
				if len(far) > 0 && r.IntN(4) == 0 {
					q, far = far[0], far[1:] // refused: the bounds hold again once it is gone
				}
				if got, want := tb.del(q), ref[q]; got != want {
					t.Fatalf("seed %d step %d: del(%d) = %p, want %p", seed, i, q, got, want)
				}
				delete(ref, q)
			}
			base := (cum + uint32(r.IntN(260)) - 60) & 0xFFFFFF
			bm := r.Uint64()
			checkHeldBits(t, &tb, ref, base, bm)
			if _, ok := tb.heldBitsBounded(base, bm); ok {
				bounded++
			}
			steps++
		}
		if bounded < steps/2 {
			t.Errorf("start %#x: the word-wide path decided %d of %d steps", start, bounded, steps)
		}
	}
}

// TestAckReqSetCounts drives ackReqSet with puts (new PSNs and PSNs held
// already), deletes (held and not) and resets, and checks after each step
// that mayHold is true for every PSN held (advanceRcum skips a PSN it is
// false for) and that the counts are those of the map's PSNs, so that it
// is false again for a low byte once none of its PSNs is held.
func TestAckReqSetCounts(t *testing.T) {
	const seed = 3
	r := rand.New(rand.NewPCG(seed, 0))
	s := ackReqSet{m: map[uint32]arrival{}}
	for i := 0; i < 20000; i++ {
		q := uint32(r.IntN(1 << 10)) // four PSNs share each low byte
		switch k := r.IntN(100); {
		case k < 50:
			s.put(q, arrival{psn: q})
		case k < 99:
			s.del(q)
		default:
			s.reset()
		}
		var want [256]uint16
		for p := range s.m {
			want[p&0xFF]++
			if !s.mayHold(p) {
				t.Fatalf("seed %d step %d: mayHold(%d) false for a PSN held", seed, i, p)
			}
		}
		if s.n != want {
			t.Fatalf("seed %d step %d: counts by low byte differ from the map's PSNs", seed, i)
		}
		if b := q & 0xFF; want[b] == 0 && s.mayHold(q) {
			t.Fatalf("seed %d step %d: mayHold(%d) true with no PSN of its low byte held", seed, i, q)
		}
	}
}

// TestPSNMapMoreCounts drives a psnMap whose ring stops at 64 slots (as
// needSACK's stops at maxNeedSACKRing), so that most PSNs share a slot
// and go to more, against a map: get and del skip more for a PSN whose
// slot no entry of more shares (moreN), which must never miss one. moreN
// must count more's entries by slot at every step, and after the ring
// grows with entries in more.
func TestPSNMapMoreCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tb := psnMap[uint64]{maxRing: 64}
	ref := map[uint32]uint64{}
	for i := 0; i < 100000; i++ {
		q := uint32(r.IntN(1000))
		switch r.IntN(3) {
		case 0:
			if _, ok := ref[q]; !ok {
				ref[q] = uint64(i) + 1
				tb.put(q, uint64(i)+1)
			}
		case 1:
			if got, want := tb.del(q), ref[q]; got != want {
				t.Fatalf("step %d: del(%d) = %d, want %d", i, q, got, want)
			}
			delete(ref, q)
		default:
			if got, want := tb.get(q), ref[q]; got != want {
				t.Fatalf("step %d: get(%d) = %d, want %d", i, q, got, want)
			}
		}
		switch i {
		case 50000:
			tb.reset()
			clear(ref)
		case 70000:
			tb.maxRing = 256 // the ring grows with more in use
		}
		checkMoreN(t, &tb, i)
	}
	if len(tb.more) == 0 || len(tb.ring) != 256 {
		t.Errorf("%d PSNs in more, %d slots: want some, and 256", len(tb.more), len(tb.ring))
	}
}

// checkMoreN checks that tb.moreN counts tb.more's entries by ring slot.
func checkMoreN(t *testing.T, tb *psnMap[uint64], step int) {
	t.Helper()
	if len(tb.more) == 0 {
		return
	}
	if len(tb.moreN) != len(tb.ring) {
		t.Fatalf("step %d: %d counts for %d slots", step, len(tb.moreN), len(tb.ring))
	}
	want := make([]uint32, len(tb.ring))
	for q := range tb.more {
		want[q&uint32(len(tb.ring)-1)]++
	}
	for i := range want {
		if tb.moreN[i] != want[i] {
			t.Fatalf("step %d: slot %d counts %d entries of more, want %d", step, i, tb.moreN[i], want[i])
		}
	}
}

// TestPSNMapSetDelIf drives two psnMaps with the same PSNs, one by set
// and delIf, the other by what they stand for (del then put; get then
// del), and checks after each step that the two are the same map, ring,
// overflow map, counts and bounds alike, with a ring that stops at 64
// slots, so that most PSNs share a slot and go to more; then, with a ring
// that grows, that they hold the same entries within the same bounds.
// Each unbounded and bounded.
func TestPSNMapSetDelIf(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		seed := uint64(rand.Uint32())
		r := rand.New(rand.NewPCG(seed, 5))
		a := psnMap[uint64]{maxRing: 64, bounded: bounded}
		b := psnMap[uint64]{maxRing: 64, bounded: bounded}
		fast, inMore := 0, 0
		for i := 0; i < 50000; i++ {
			q := (wire.PSNMask - 150 + uint32(r.IntN(300))) & wire.PSNMask // across the 2^24 wrap
			v := uint64(r.IntN(4)) + 1
			switch r.IntN(3) {
			case 0:
				got := a.set(q, v)
				want := b.del(q)
				b.put(q, v)
				if got != want {
					t.Fatalf("seed %d step %d: set(%d) replaced %d, want %d", seed, i, q, got, want)
				}
			case 1:
				if len(a.more) > 0 && a.moreN[q&uint32(len(a.ring)-1)] != 0 {
					inMore++
				}
				a.delIf(q, v)
				if b.get(q) == v {
					b.del(q)
				}
			default:
				if got, want := a.get(q), b.get(q); got != want {
					t.Fatalf("seed %d step %d: get(%d) = %d, want %d", seed, i, q, got, want)
				}
			}
			if a.maxRing != 0 && !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d step %d (PSN %d): set and delIf left %+v, del and put %+v", seed, i, q, a, b)
			}
			if a.maxRing == 0 && i%16 == 0 { // grow moves entries of more in map order: the same entries, not the same slots
				sameEntries(t, &a, &b, seed, i)
			}
			if i == 30000 {
				a.maxRing, b.maxRing = 0, 0 // the ring grows with more in use
			}
			if !bounded && len(a.ring) > 0 && a.ring[q&uint32(len(a.ring)-1)].psn == q {
				fast++
			}
		}
		if !bounded && fast < 10000 || inMore < 1000 {
			t.Errorf("seed %d: %d steps ended with the PSN in its slot, %d delIf of a slot more shares", seed, fast, inMore)
		}
	}
}

// sameEntries checks that a and b hold the same entries within the same
// bounds, and that a's moreN counts its overflow map by slot.
func sameEntries(t *testing.T, a, b *psnMap[uint64], seed uint64, step int) {
	t.Helper()
	if a.len() != b.len() || a.lo != b.lo || a.hi != b.hi || a.wide != b.wide {
		t.Fatalf("seed %d step %d: %d entries in [%d, %d] (wide %v), want %d in [%d, %d] (%v)", seed, step, a.len(), a.lo, a.hi, a.wide, b.len(), b.lo, b.hi, b.wide)
	}
	b.each(func(q uint32, v uint64) {
		if got := a.get(q); got != v {
			t.Fatalf("seed %d step %d: get(%d) = %d, want %d", seed, step, q, got, v)
		}
	})
	m := psnMap[uint64]{ring: a.ring, more: a.more, moreN: a.moreN}
	checkMoreN(t, &m, step)
}
