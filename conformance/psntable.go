package conformance

import "github.com/openmrc/mrc/wire"

// psnTable is the requester-side record of the PSNs a connection has sent
// and not had cumulatively acknowledged: a ring indexed by PSN, so that a
// lookup is an index and a SACK's walk over its window touches no map. It
// grows by doubling while the PSNs it holds span more than its size, up to
// MaxPSNsPerFlow; callers check room with len first.
type psnTable struct {
	ring []psnEntry
	pay  []payloadID // the payload identity of ring[i]'s PSN, apart: a SACK's walk over ring touches fewer cache lines
	open []uint64    // bit i: ring[i] is used and not ackSel (no SACK acknowledged it yet), so that a SACK visits only those, by the word
	lo   uint32      // no PSN before lo is held
	n    int
	// jumps counts put's restarts: the first is noted, the later ones
	// would say the same.
	jumps int
}

type psnEntry struct {
	psnInfo
	psn  uint32
	used bool
}

func (t *psnTable) len() int { return t.n }

// get returns the record of q, or nil.
func (t *psnTable) get(q uint32) *psnInfo {
	if len(t.ring) == 0 || psnDist(q, t.lo) >= uint32(len(t.ring)) {
		return nil
	}
	e := &t.ring[q&uint32(len(t.ring)-1)]
	if !e.used || e.psn != q {
		return nil
	}
	return &e.psnInfo
}

// put stores the record of q, which follows every PSN held. It reports
// false when q lies more than MaxPSNsPerFlow beyond the oldest PSN held.
// A jump that far (a PSN out of any window, such as a tester's crafted
// out-of-window write) when the table holds fewer than MaxPSNsPerFlow/2
// PSNs restarts the table at q instead: the requester's REQ-PSN-1 finding
// covers the jump, and one stray PSN must not end the tracking of the
// connection. jumped reports that restart.
func (t *psnTable) put(q uint32, info psnInfo) (ok, jumped bool) {
	st, ok, jumped := t.add(q)
	if ok {
		*st = info
		t.setOpen(q&uint32(len(t.ring)-1), !info.ackSel)
	}
	return ok, jumped
}

// add is put of a zero record, which it returns for the caller to fill
// in place (a record is 17 words: passed by value, it is copied at each
// call), not ackSel; nil when put would report false.
func (t *psnTable) add(q uint32) (st *psnInfo, ok, jumped bool) {
	if t.n > 0 && psnDist(q, t.lo) >= MaxPSNsPerFlow && t.n < MaxPSNsPerFlow/2 {
		for i := range t.ring {
			t.ring[i] = psnEntry{}
		}
		clear(t.open)
		t.n, jumped = 0, true
		t.jumps++
	}
	if t.n == 0 {
		t.lo = q
	}
	d := psnDist(q, t.lo)
	if d >= MaxPSNsPerFlow {
		return nil, false, jumped
	}
	for d >= uint32(len(t.ring)) {
		t.grow()
	}
	i := q & uint32(len(t.ring)-1)
	e := &t.ring[i]
	if !e.used {
		t.n++
	}
	*e = psnEntry{psn: q, used: true}
	t.pay[i].ok = false
	t.setOpen(i, true)
	return &e.psnInfo, true, jumped
}

// payload returns the payload identity of q, which the table holds.
func (t *psnTable) payload(q uint32) *payloadID { return &t.pay[q&uint32(len(t.ring)-1)] }

// setOpen records whether ring slot i holds an entry not ackSel (open).
func (t *psnTable) setOpen(i uint32, on bool) {
	if on {
		t.open[i>>6] |= 1 << (i & 63)
	} else {
		t.open[i>>6] &^= 1 << (i & 63)
	}
}

// markSel records that a SACK acknowledged q, which the table holds.
func (t *psnTable) markSel(q uint32, st *psnInfo) {
	st.ackSel = true
	t.setOpen(q&uint32(len(t.ring)-1), false)
}

// openFrom returns the open bits of the 64 slots of PSNs base to
// base+63: bit i clear means the slot of base+i holds no entry, or one
// acknowledged selectively already, so base+i has nothing to mark.
func (t *psnTable) openFrom(base uint32) uint64 {
	s := base & uint32(len(t.ring)-1)
	w, off := s>>6, s&63
	x := t.open[w] >> off
	if off != 0 {
		x |= t.open[(int(w)+1)&(len(t.open)-1)] << (64 - off) // len(t.open) is a power of two
	}
	return x
}

// openIn returns the open bits (openFrom) of the PSNs q to end-1, at
// most 64 from q, and how many PSNs they cover: a walk over span's PSNs
// that skips those with nothing to mark visits the set bits only.
func (t *psnTable) openIn(q, end uint32) (bm uint64, n uint32) {
	n = min(psnDist(end, q), 64)
	bm = t.openFrom(q)
	if n < 64 {
		bm &= 1<<n - 1
	}
	return bm, n
}

func (t *psnTable) grow() {
	size := max(64, 2*len(t.ring))
	old, oldPay := t.ring, t.pay
	t.ring = make([]psnEntry, size)
	t.pay = make([]payloadID, size)
	t.open = make([]uint64, size/64)
	for i := range old {
		if e := &old[i]; e.used {
			t.ring[e.psn&uint32(size-1)] = *e
			t.pay[e.psn&uint32(size-1)] = oldPay[i]
			t.setOpen(e.psn&uint32(size-1), !e.ackSel)
		}
	}
}

// dropThrough forgets every PSN up to and including cack.
func (t *psnTable) dropThrough(cack uint32) {
	if t.n == 0 {
		return
	}
	if psnAfter(t.lo, cack) {
		return
	}
	d := psnDist(cack, t.lo)
	if d >= 1<<23 {
		return // cack is far behind: nothing held is covered
	}
	if int(d) >= len(t.ring) {
		for i := range t.ring {
			t.ring[i] = psnEntry{}
		}
		clear(t.open)
		t.n = 0
		t.lo = wire.PSNAdd(cack, 1)
		return
	}
	for q := t.lo; ; q = wire.PSNAdd(q, 1) {
		if e := &t.ring[q&uint32(len(t.ring)-1)]; e.used && e.psn == q {
			e.used = false // store writes every field again
			t.setOpen(q&uint32(len(t.ring)-1), false)
			t.n--
		}
		if q == cack {
			break
		}
	}
	t.lo = wire.PSNAdd(cack, 1)
}

// span returns the PSNs [start, end) the table may hold after from and
// before to, in PSN order (get says which it holds).
func (t *psnTable) span(from, to uint32) (start, end uint32) {
	if t.n == 0 {
		return 0, 0
	}
	start = t.lo
	if psnAfter(from, wire.PSNAdd(t.lo, -1)) {
		start = wire.PSNAdd(from, 1)
	}
	size := uint32(len(t.ring))
	if !psnAfter(to, start) || psnDist(start, t.lo) >= size {
		return start, start
	}
	if limit := wire.PSNAdd(t.lo, int(size)); psnAfter(to, limit) {
		return start, limit
	}
	return start, to
}
