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
	ring    []psnSlot[V]
	n       int // entries in ring
	more    map[uint32]V
	maxRing int // the ring's largest size; 0 is MaxPSNsPerFlow
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
	if len(t.more) > 0 {
		return t.more[q]
	}
	var zero V
	return zero
}

// put stores a (not zero) as the entry of q, which the map does not hold.
func (t *psnMap[V]) put(q uint32, a V) {
	for {
		if len(t.ring) == 0 {
			t.ring = make([]psnSlot[V], 64)
		}
		s := &t.ring[q&uint32(len(t.ring)-1)]
		if !s.used {
			*s = psnSlot[V]{psn: q, used: true, a: a}
			t.n++
			return
		}
		if len(t.ring) >= MaxPSNsPerFlow || t.maxRing > 0 && len(t.ring) >= t.maxRing {
			if t.more == nil {
				t.more = map[uint32]V{}
			}
			t.more[q] = a
			return
		}
		t.grow()
	}
}

func (t *psnMap[V]) grow() {
	old := t.ring
	t.ring, t.n = make([]psnSlot[V], 2*len(old)), 0
	mask := uint32(len(t.ring) - 1)
	for _, s := range old {
		if !s.used {
			continue
		}
		if d := &t.ring[s.psn&mask]; !d.used {
			*d = s
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
			t.n++
			delete(t.more, q)
		}
	}
}

// heldBits returns the bits of bm (bit i for PSN base+i) whose PSN t
// holds: a SACK bitmap's claims checked in one pass over the ring, a few
// instructions a bit, rather than a get each.
func (t *psnMap[V]) heldBits(base uint32, bm uint64) uint64 {
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
		if s := &t.ring[q&uint32(len(t.ring)-1)]; s.used && s.psn == q {
			a := s.a
			*s = psnSlot[V]{}
			t.n--
			return a
		}
	}
	if len(t.more) == 0 {
		var zero V
		return zero
	}
	if a, ok := t.more[q]; ok {
		delete(t.more, q)
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
	t.n = 0
	clear(t.more)
}
