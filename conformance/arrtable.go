package conformance

// arrTable holds a connection's arrivals beyond the responder's cumulative
// point, by PSN: a ring indexed by the PSN's low bits, so that a lookup is
// an index and no hash; it doubles while two PSNs held share a slot, up to
// MaxPSNsPerFlow slots, and a PSN whose slot another still holds then
// goes to a map (more). Callers bound the entries with len.
type arrTable struct {
	ring []arrSlot
	n    int // entries in ring
	more map[uint32]*arrival
}

type arrSlot struct {
	psn uint32
	a   *arrival // nil: free
}

func (t *arrTable) len() int { return t.n + len(t.more) }

// get returns the arrival of q, or nil.
func (t *arrTable) get(q uint32) *arrival {
	if len(t.ring) > 0 {
		if s := &t.ring[q&uint32(len(t.ring)-1)]; s.a != nil && s.psn == q {
			return s.a
		}
	}
	if len(t.more) > 0 {
		return t.more[q]
	}
	return nil
}

// put stores the arrival of q, which the table does not hold.
func (t *arrTable) put(q uint32, a *arrival) {
	for {
		if len(t.ring) == 0 {
			t.ring = make([]arrSlot, 64)
		}
		s := &t.ring[q&uint32(len(t.ring)-1)]
		if s.a == nil {
			*s = arrSlot{psn: q, a: a}
			t.n++
			return
		}
		if len(t.ring) >= MaxPSNsPerFlow {
			if t.more == nil {
				t.more = map[uint32]*arrival{}
			}
			t.more[q] = a
			return
		}
		t.grow()
	}
}

func (t *arrTable) grow() {
	old := t.ring
	t.ring, t.n = make([]arrSlot, 2*len(old)), 0
	mask := uint32(len(t.ring) - 1)
	for _, s := range old {
		if s.a == nil {
			continue
		}
		if d := &t.ring[s.psn&mask]; d.a == nil {
			*d = s
			t.n++
		} else {
			if t.more == nil {
				t.more = map[uint32]*arrival{}
			}
			t.more[s.psn] = s.a
		}
	}
	for q, a := range t.more {
		if d := &t.ring[q&mask]; d.a == nil {
			*d = arrSlot{psn: q, a: a}
			t.n++
			delete(t.more, q)
		}
	}
}

// del forgets the arrival of q and returns it (nil when not held).
func (t *arrTable) del(q uint32) *arrival {
	if len(t.ring) > 0 {
		if s := &t.ring[q&uint32(len(t.ring)-1)]; s.a != nil && s.psn == q {
			a := s.a
			*s = arrSlot{}
			t.n--
			return a
		}
	}
	if a, ok := t.more[q]; ok {
		delete(t.more, q)
		return a
	}
	return nil
}

// each calls f for every arrival held, in no particular order; f may
// delete the arrival it is given.
func (t *arrTable) each(f func(q uint32, a *arrival)) {
	if t.n > 0 {
		for i := range t.ring {
			if s := t.ring[i]; s.a != nil {
				f(s.psn, s.a)
			}
		}
	}
	for q, a := range t.more {
		f(q, a)
	}
}

// reset forgets every arrival.
func (t *arrTable) reset() {
	clear(t.ring)
	t.n = 0
	clear(t.more)
}
