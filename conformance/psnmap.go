package conformance

import (
	"math/bits"

	"github.com/openmrc/mrc/wire"
)

// psnMap maps PSNs to values (the zero value is no entry): a ring indexed
// by the PSN's low bits, so that a lookup is an index and no hash; it
// doubles while two PSNs held share a slot, up to MaxPSNsPerFlow slots,
// and a PSN whose slot another still holds then goes to a map (more).
// Callers bound the entries with len. A connection's arrivals beyond the
// responder's cumulative point (arrTable) and the index of its recent
// arrivals by PSN are psnMaps.
type psnMap[V comparable] struct {
	ring []psnSlot[V]
	occ  []uint64 // bit i: ring[i] is used, so that heldBits reads 64 slots by the word
	n    int      // entries in ring
	more map[uint32]V
	// moreN[i]: the entries of more whose ring slot is i (len(ring) of
	// them while more holds any), so that a get or del of a PSN no entry
	// of more shares a slot with skips the map's hash.
	moreN   []uint32
	maxRing int // the ring's largest size; 0 is MaxPSNsPerFlow
	// With bounded set (the maps heldBits is asked of), every entry lies
	// in [lo, hi] (PSN order) unless wide: bounds kept on put, tightened
	// when an end is deleted, reset when the map is empty. While hi - lo
	// is less than the ring's size, a used slot of a PSN in [lo, hi] holds
	// that PSN (heldBitsBounded).
	bounded bool
	lo, hi  uint32
	wide    bool  // the entries spread too far for lo and hi to bound them
	since   uint8 // heldBits calls since the bounds were last recomputed while wide (rebound)
}

type psnSlot[V comparable] struct {
	psn  uint32
	used bool // a is an entry (a flag, not a compare with zero: V may be a large struct)
	a    V
}

// arrTable holds arrivals by PSN.
type arrTable = psnMap[*arrival]

func (t *psnMap[V]) len() int { return t.n + len(t.more) }

// get returns the entry of q, or zero.
func (t *psnMap[V]) get(q uint32) V {
	if len(t.ring) > 0 {
		if s := &t.ring[q&uint32(len(t.ring)-1)]; s.used && s.psn == q {
			return s.a
		}
	}
	if t.inMore(q) {
		return t.more[q]
	}
	var zero V
	return zero
}

// inMore reports whether more may hold q: an entry of more shares q's
// ring slot.
func (t *psnMap[V]) inMore(q uint32) bool {
	return len(t.more) > 0 && t.moreN[q&uint32(len(t.ring)-1)] != 0
}

// addMore puts q, which the map does not hold, in more.
func (t *psnMap[V]) addMore(q uint32, a V) {
	if t.more == nil {
		t.more = map[uint32]V{}
	}
	if len(t.moreN) != len(t.ring) {
		t.moreN = make([]uint32, len(t.ring))
	}
	t.more[q] = a
	t.moreN[q&uint32(len(t.ring)-1)]++
}

// put stores a (not zero) as the entry of q, which the map does not hold.
func (t *psnMap[V]) put(q uint32, a V) {
	if t.bounded {
		t.bound(q)
	}
	for {
		if len(t.ring) == 0 {
			t.ring = make([]psnSlot[V], 64)
			t.occ = make([]uint64, 1)
		}
		i := q & uint32(len(t.ring)-1)
		s := &t.ring[i]
		if !s.used {
			t.place(s, i, q, a)
			return
		}
		if len(t.ring) >= MaxPSNsPerFlow || t.maxRing > 0 && len(t.ring) >= t.maxRing {
			t.addMore(q, a)
			return
		}
		t.grow()
	}
}

// place stores a as the entry of q in s, ring slot i, which is free.
func (t *psnMap[V]) place(s *psnSlot[V], i, q uint32, a V) {
	*s = psnSlot[V]{psn: q, used: true, a: a}
	t.occ[i>>6] |= 1 << (i & 63)
	t.n++
}

// free forgets the entry held in s, ring slot i; the caller tightens
// the bounds (unbound), which would keep free from being inlined.
func (t *psnMap[V]) free(s *psnSlot[V], i uint32) {
	*s = psnSlot[V]{}
	t.occ[i>>6] &^= 1 << (i & 63)
	t.n--
}

// set stores a (not zero) as the entry of q, held or not, and returns the
// entry it replaces (zero when q was not held), leaving the map as del
// then put would. An unbounded map decides most by q's ring slot alone:
// one holding q is replaced in place, where put would put it back once del
// freed the slot; a free one, when more holds nothing of the slot, is
// where put would place q, which the map does not hold.
func (t *psnMap[V]) set(q uint32, a V) (prev V) {
	if n := uint32(len(t.ring)); n > 0 && !t.bounded {
		i := q & (n - 1)
		switch s := &t.ring[i]; {
		case s.used && s.psn == q:
			prev, s.a = s.a, a
			return prev
		case !s.used && !t.inMore(q):
			t.place(s, i, q, a)
			return prev
		}
	}
	if t.bounded || t.inMore(q) {
		prev = t.del(q)
	}
	t.put(q, a)
	return prev
}

// delIf forgets the entry of q if it is a.
func (t *psnMap[V]) delIf(q uint32, a V) {
	if n := uint32(len(t.ring)); n > 0 {
		i := q & (n - 1)
		if s := &t.ring[i]; s.used && s.psn == q {
			if s.a == a {
				t.free(s, i)
				if t.bounded {
					t.unbound(q)
				}
			}
			return
		}
	}
	if t.inMore(q) && t.more[q] == a {
		t.del(q)
	}
}

func (t *psnMap[V]) grow() {
	old := t.ring
	t.ring, t.n = make([]psnSlot[V], 2*len(old)), 0
	t.occ = make([]uint64, len(t.ring)/64)
	mask := uint32(len(t.ring) - 1)
	for _, s := range old {
		if !s.used {
			continue
		}
		if d := &t.ring[s.psn&mask]; !d.used {
			*d = s
			t.setOcc(s.psn & mask)
			t.n++
		} else {
			if t.more == nil {
				t.more = map[uint32]V{}
			}
			t.more[s.psn] = s.a
		}
	}
	for q, a := range t.more {
		if d := &t.ring[q&mask]; !d.used {
			*d = psnSlot[V]{psn: q, used: true, a: a}
			t.setOcc(q & mask)
			t.n++
			delete(t.more, q)
		}
	}
	t.moreN = nil
	if len(t.more) > 0 {
		t.moreN = make([]uint32, len(t.ring))
		for q := range t.more {
			t.moreN[q&mask]++
		}
	}
}

func (t *psnMap[V]) setOcc(i uint32) { t.occ[i>>6] |= 1 << (i & 63) }

// bound widens [lo, hi] to hold q, an entry being put.
func (t *psnMap[V]) bound(q uint32) {
	switch {
	case t.len() == 0:
		t.lo, t.hi, t.wide = q, q, false
		return
	case t.wide:
		return
	case psnAfter(t.lo, q):
		t.lo = q
	case psnAfter(q, t.hi):
		t.hi = q
	}
	if span := psnDist(t.hi, t.lo); span >= MaxPSNsPerFlow || psnDist(q, t.lo) > span {
		t.wide = true // far beyond any ring: bounds no longer kept
	}
}

// unbound tightens [lo, hi] after entry q was deleted.
func (t *psnMap[V]) unbound(q uint32) {
	switch {
	case t.len() == 0:
		t.wide = false
	case t.wide:
	case q == t.lo:
		t.lo = wire.PSNAdd(q, 1)
	case q == t.hi:
		t.hi = wire.PSNAdd(q, -1)
	}
}

// passed tightens a bounded map's bounds past q, a PSN it does not hold,
// as a del of q would were it held: the arrived table's bounds follow the
// cumulative point over a PSN that moves it without entering the table
// (arrive), and so stay as narrow as heldBitsBounded needs.
func (t *psnMap[V]) passed(q uint32) {
	if t.bounded {
		t.unbound(q)
	}
}

// heldBits returns the bits of bm (bit i for PSN base+i) whose PSN t
// holds: a SACK bitmap's claims checked in one pass over the ring, a few
// instructions a bit, rather than a get each.
func (t *psnMap[V]) heldBits(base uint32, bm uint64) uint64 {
	if t.wide && len(t.more) == 0 {
		if t.since++; t.since >= reboundEvery {
			t.rebound()
		}
	}
	if h, ok := t.heldBitsBounded(base, bm); ok {
		return h
	}
	var h uint64
	if n := uint32(len(t.ring)); n > 0 && t.n > 0 {
		for b := bm; b != 0; b &= b - 1 {
			i := bits.TrailingZeros64(b)
			q := (base + uint32(i)) & wire.PSNMask
			if s := &t.ring[q&(n-1)]; s.used && s.psn == q {
				h |= 1 << i
			}
		}
	}
	if len(t.more) > 0 {
		for b := bm &^ h; b != 0; b &= b - 1 {
			i := bits.TrailingZeros64(b)
			if _, ok := t.more[(base+uint32(i))&wire.PSNMask]; ok {
				h |= 1 << i
			}
		}
	}
	return h
}

// del forgets the entry of q and returns it (zero when not held).
func (t *psnMap[V]) del(q uint32) V {
	if len(t.ring) > 0 {
		i := q & uint32(len(t.ring)-1)
		if s := &t.ring[i]; s.used && s.psn == q {
			a := s.a
			t.free(s, i)
			if t.bounded {
				t.unbound(q)
			}
			return a
		}
	}
	if !t.inMore(q) {
		var zero V
		return zero
	}
	if a, ok := t.more[q]; ok {
		delete(t.more, q)
		t.moreN[q&uint32(len(t.ring)-1)]--
		if t.bounded {
			t.unbound(q)
		}
		return a
	}
	var zero V
	return zero
}

// each calls f for every entry held, in no particular order; f may
// delete the entry it is given.
func (t *psnMap[V]) each(f func(q uint32, a V)) {
	if t.n > 0 {
		for i := range t.ring {
			if s := &t.ring[i]; s.used {
				f(s.psn, s.a)
			}
		}
	}
	for q, a := range t.more {
		f(q, a)
	}
}

// reset forgets every entry.
func (t *psnMap[V]) reset() {
	clear(t.ring)
	clear(t.occ)
	t.n = 0
	clear(t.more)
	clear(t.moreN)
	t.wide = false
}

// reboundEvery is how many heldBits calls a wide map waits before its
// bounds are computed again from its entries (rebound): the entries that
// made it wide have mostly gone by then.
const reboundEvery = 16

// rebound computes [lo, hi] from the ring's entries (the map holds none
// in more): every entry is lo plus its distance from the first one found.
func (t *psnMap[V]) rebound() {
	t.since = 0
	ref, first := uint32(0), true
	var lo, hi int32
	for w, word := range t.occ {
		for b := word; b != 0; b &= b - 1 {
			q := t.ring[w<<6|bits.TrailingZeros64(b)].psn
			if first {
				ref, first = q, false
				continue
			}
			d := wire.PSNDiff(q, ref)
			lo, hi = min(lo, d), max(hi, d)
		}
	}
	t.lo, t.hi = wire.PSNAdd(ref, int(lo)), wire.PSNAdd(ref, int(hi))
	t.wide = hi-lo >= MaxPSNsPerFlow
}

// heldBitsBounded is heldBits by the word, when every entry is in the
// ring and [lo, hi] spans less than the ring: then a PSN of [lo, hi] is
// held exactly when its slot is used. ok is false otherwise.
func (t *psnMap[V]) heldBitsBounded(base uint32, bm uint64) (h uint64, ok bool) {
	size := uint32(len(t.ring))
	if t.n == 0 {
		return 0, len(t.more) == 0
	}
	span := psnDist(t.hi, t.lo)
	d := wire.PSNDiff(base, t.lo) // bit i is PSN lo + d + i
	if !t.bounded || t.wide || len(t.more) > 0 || span >= size || !linearPSNs(d) {
		return 0, false
	}
	// The bits of [lo, hi]: i from -d to span - d.
	first, last := -int64(d), int64(span)-int64(d)
	if last < 0 || first > 63 {
		return 0, true
	}
	in := ^uint64(0)
	if first > 0 {
		in <<= uint(first)
	}
	if last < 63 {
		in &= 1<<(uint(last)+1) - 1
	}
	s := base & (size - 1)
	w, off := s>>6, s&63
	x := t.occ[w] >> off
	if off != 0 {
		x |= t.occ[(int(w)+1)&(len(t.occ)-1)] << (64 - off) // len(t.occ) is a power of two
	}
	return bm & in & x, true
}
