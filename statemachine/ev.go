package statemachine

import (
	"fmt"
	"sort"

	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// EVState is the per-EV path state (EV-ST-1), the vocabulary's
// evstate.State. The zero value is the API's UNKNOWN.
type EVState = evstate.State

// EV states.
const (
	EVUnknown    = evstate.Unknown
	EVGood       = evstate.Good       // usable
	EVSkip       = evstate.Skip       // skipped until the end of the current rotation
	EVAssumedBad = evstate.AssumedBad // out of use; probed in the background
	EVDenied     = evstate.Denied     // out of use by controller decision
)

// evSet is an EV profile compiled for lookup. It is immutable and shared by
// every QP (and clone) that uses the profile.
type evSet struct {
	id             uint64
	values         []uint32
	plane          []uint8  // 0-based plane of each EV
	byValue        []uint16 // EV indices sorted by value
	hash           []uint16 // open-addressing table: EV index + 1, 0 empty
	hashShift      uint8
	perPlane       [][]uint16
	active         []int // active EVs per plane
	planes         int
	minActive      int
	probeInterval  Time // 0: one base timeout of the QP
	probeSuccesses uint8
	srv6           []SRv6Path // per EV, nil unless the profile is SRv6
}

func buildEVSet(p *EVProfile) (*evSet, error) {
	f := fmt.Sprintf("EVProfiles[id=%d]", p.ID)
	n := len(p.EVs)
	if n < 2 || n > MaxEVs {
		return nil, cfgErr(f+".EVs", "%d EVs: want [2, %d]", n, MaxEVs)
	}
	s := &evSet{id: p.ID, values: make([]uint32, n), plane: make([]uint8, n), byValue: make([]uint16, n)}
	for i, e := range p.EVs {
		if e.Port < 1 || e.Port > MaxPlanes {
			return nil, cfgErr(f+".EVs", "EV %#x: port %d outside [1, %d]", e.Value, e.Port, MaxPlanes)
		}
		s.values[i], s.plane[i], s.byValue[i] = e.Value, e.Port-1, uint16(i)
		if int(e.Port) > s.planes {
			s.planes = int(e.Port)
		}
	}
	sort.Slice(s.byValue, func(a, b int) bool { return s.values[s.byValue[a]] < s.values[s.byValue[b]] })
	for i := 1; i < n; i++ {
		if s.values[s.byValue[i]] == s.values[s.byValue[i-1]] {
			return nil, cfgErr(f+".EVs", "EV %#x appears twice: feedback could not name one path", s.values[s.byValue[i]])
		}
	}
	hb := 1
	for 1<<hb < 2*n {
		hb++
	}
	s.hash, s.hashShift = make([]uint16, 1<<hb), uint8(32-hb)
	for i, v := range s.values {
		h := v * 0x9E3779B1 >> s.hashShift
		for s.hash[h] != 0 {
			h = (h + 1) & uint32(len(s.hash)-1)
		}
		s.hash[h] = uint16(i + 1)
	}
	s.perPlane = make([][]uint16, s.planes)
	for i := range s.values {
		s.perPlane[s.plane[i]] = append(s.perPlane[s.plane[i]], uint16(i))
	}
	s.active = make([]int, s.planes)
	total := 0
	for pl, evs := range s.perPlane {
		a := p.ActivePerPlane
		if a <= 0 {
			a = max(1, len(evs)/2)
		}
		s.active[pl] = min(a, len(evs))
		total += s.active[pl]
	}
	if p.MinActive < 0 || p.MinActive > n {
		return nil, cfgErr(f+".MinActive", "%d: want [0, %d] (ev_count)", p.MinActive, n)
	}
	_ = total
	s.minActive = p.MinActive
	if len(p.SRv6) != 0 && len(p.SRv6) != n {
		return nil, cfgErr(f+".SRv6", "%d paths for %d EVs", len(p.SRv6), n)
	}
	s.srv6 = append([]SRv6Path(nil), p.SRv6...)
	if len(s.srv6) == 0 {
		s.srv6 = nil
	}
	s.probeInterval = p.ProbeInterval
	if s.probeInterval < 0 {
		return nil, cfgErr(f+".ProbeInterval", "negative")
	}
	ps := p.ProbeSuccesses
	if ps == 0 {
		ps = 1
	}
	if ps < 1 || ps > maxProbeOK {
		return nil, cfgErr(f+".ProbeSuccesses", "%d: want [1, %d]", ps, maxProbeOK)
	}
	s.probeSuccesses = uint8(ps)
	if p.EventMask&^(EVEventGood|EVEventAssumedBad) != 0 {
		return nil, cfgErr(f+".EventMask", "%#x: only MRC_CTL_EV_GOOD and _ASSUMED_BAD bits (EV-ST-12, AMB-41)", p.EventMask)
	}
	return s, nil
}

// lookup returns the index of EV value v.
func (s *evSet) lookup(v uint32) (int, bool) {
	h := v * 0x9E3779B1 >> s.hashShift
	for {
		e := s.hash[h]
		if e == 0 {
			return -1, false
		}
		if s.values[e-1] == v {
			return int(e - 1), true
		}
		h = (h + 1) & uint32(len(s.hash)-1)
	}
}

// The per-EV byte of a QP's EV table: the state in bits 0-2, then flags,
// then the count of consecutive good probe answers in bits 5-7. One byte
// per EV keeps a 256-EV table at 256 bytes per QP.
const (
	evStateMask uint8 = 7
	evActive    uint8 = 1 << 3 // in the active set (else a backup)
	evProbing   uint8 = 1 << 4 // a probe is outstanding
	evOKShift         = 5
	maxProbeOK        = 7
)

// evTable is a QP's view of its EV profile: per-EV state, the active set in
// rotation order, and the backup sets (the EVs of each plane not active).
type evTable struct {
	set       *evSet
	e         []uint8  // per-EV byte, see evStateMask
	order     []uint16 // the active set, in this rotation's order
	pos       int
	planeDown uint32
	nBad      int              // EVs in ASSUMED_BAD
	nSkip     int              // EVs in SKIP
	nDenied   int              // EVs in DENIED
	probeAt   Time             // next probe round, Never while no EV is ASSUMED_BAD
	probeInt  Time             // probe interval
	rev       [MaxPlanes]int16 // reverse EV per plane (EV-REV-1), -1: none yet
	rotations uint64
}

func (t *evTable) state(i int) EVState { return EVState(t.e[i] & evStateMask) }
func (t *evTable) active(i int) bool   { return t.e[i]&evActive != 0 }
func (t *evTable) probing(i int) bool  { return t.e[i]&evProbing != 0 }
func (t *evTable) probeOK(i int) uint8 { return t.e[i] >> evOKShift }

func (t *evTable) setFlag(i int, f uint8, on bool) {
	if on {
		t.e[i] |= f
	} else {
		t.e[i] &^= f
	}
}

func (t *evTable) setProbeOK(i int, n uint8) {
	t.e[i] = t.e[i]&^(maxProbeOK<<evOKShift) | min(n, maxProbeOK)<<evOKShift
}

func (t *evTable) init(s *evSet, r *rng) {
	n := len(s.values)
	*t = evTable{set: s, e: make([]uint8, n), probeAt: Never}
	for i := range t.e {
		t.e[i] = uint8(EVGood)
	}
	for i := range t.rev {
		t.rev[i] = -1
	}
	// A random subset of each plane becomes active: senders do not
	// coordinate, so QPs sharing a profile spread over different paths;
	// the rest of each plane is its backup set (EV-SET-1, EV-SET-2).
	tmp := make([]uint16, 0, n)
	for pl, evs := range s.perPlane {
		tmp = append(tmp[:0], evs...)
		r.shuffle(tmp)
		t.order = append(t.order, tmp[:s.active[pl]]...)
	}
	r.shuffle(t.order)
	for _, e := range t.order {
		t.e[e] |= evActive
	}
}

func (t *evTable) clone() evTable {
	c := *t
	c.e = append([]uint8(nil), t.e...)
	c.order = append([]uint16(nil), t.order...)
	return c
}

func (t *evTable) probeDeadline() Time {
	if t.nBad == 0 || t.set == nil {
		return Never
	}
	return t.probeAt
}

func (t *evTable) planeUp(i int) bool { return t.planeDown&(1<<t.set.plane[i]) == 0 }

// usable reports whether EV i may carry a packet now: only GOOD EVs on
// planes that are up are used (EV-ST-1, EV-SET-4, EV-PORT-1, EV-PORT-2).
func (t *evTable) usable(i int) bool { return t.e[i]&evStateMask == uint8(EVGood) && t.planeUp(i) }

// nextEV picks the EV for the next data packet: the next GOOD EV of the
// pseudo-random rotation over the active set whose plane is up, never
// avoid (EV-SET-4, EV-ST-13). When the rotation ends, SKIP EVs become GOOD
// again and the order of the whole active set, retired EVs included, is
// reshuffled (EV-SET-3, EV-ST-6, AMB-99).
//
// At most 2n+1 entries are looked at, n the active set's size. Under
// uniform loss most of the active set is retired (EV-SM-5) and the scan
// passes over many entries per packet, so it runs over the rest of the
// rotation as one slice.
func (q *QP) nextEV(avoid int) (int, bool) {
	t := &q.ev
	n := len(t.order)
	if n == 0 {
		return -1, false
	}
	for budget := 2*n + 1; budget > 0; {
		if t.pos >= n {
			q.endRotation()
		}
		rest := t.order[t.pos:min(n, t.pos+budget)]
		for k, e := range rest {
			if i := int(e); i != avoid && t.usable(i) {
				t.pos += k + 1
				return i, true
			}
		}
		t.pos += len(rest)
		budget -= len(rest)
	}
	return -1, false
}

func (q *QP) endRotation() {
	t := &q.ev
	t.rotations++
	if t.nSkip > 0 {
		for i := range t.e {
			if t.state(i) == EVSkip {
				q.evEvent(i, CauseRotation)
			}
		}
	}
	q.rng.shuffle(t.order)
	t.pos = 0
}

// reverseEV picks the EV for a control packet answering a packet received
// on plane pl (0-based, or -1 when unknown): the plane's reverse EV while it
// is usable, else another usable active EV of that plane, which becomes the
// reverse EV, else any usable EV (EV-REV-1, EV-REV-4).
func (q *QP) reverseEV(pl int) (int, bool) {
	t := &q.ev
	if pl < 0 || pl >= t.set.planes || t.planeDown&(1<<pl) != 0 {
		return q.anyUsableEV()
	}
	if r := int(t.rev[pl]); r >= 0 && t.usable(r) {
		return r, true
	}
	evs := t.set.perPlane[pl]
	if len(evs) == 0 {
		return q.anyUsableEV()
	}
	start := q.rng.intn(len(evs))
	for k := range evs {
		i := int(evs[(start+k)%len(evs)])
		if t.active(i) && t.usable(i) {
			t.rev[pl] = int16(i)
			return i, true
		}
	}
	return q.anyUsableEV()
}

// anyUsableEV returns a usable EV without advancing the data rotation.
func (q *QP) anyUsableEV() (int, bool) {
	t := &q.ev
	n := len(t.order)
	if n == 0 {
		return -1, false
	}
	start := q.rng.intn(n)
	for k := 0; k < n; k++ {
		if i := int(t.order[(start+k)%n]); t.usable(i) {
			return i, true
		}
	}
	for i := range t.e {
		if t.usable(i) {
			return i, true
		}
	}
	return -1, false
}

// setEV moves EV i to state to for cause c if the path-state table allows
// it (evstate.Allowed: EV-ST-2 to EV-ST-10, EV-ST-14, EV-SM-5), keeping the
// active set full from the same plane's backup set. Anything else is not a
// transition and leaves the EV as it is.
func (q *QP) setEV(i int, to EVState, c EVCause) bool {
	t := &q.ev
	from := t.state(i)
	if from == to || !evstate.Allowed(from, to, c) {
		return false
	}
	if to == EVAssumedBad && evstate.FloorHolds(c, len(t.e), t.nBad+t.nDenied, t.set.minActive) {
		return false // ev_min_active keeps the EV in its state (EV-SET-6)
	}
	t.e[i] = t.e[i]&^evStateMask | uint8(to)
	t.count(from, -1)
	t.count(to, +1)
	if to == EVAssumedBad {
		t.e[i] &^= evProbing | maxProbeOK<<evOKShift
		if t.probeAt == Never {
			t.probeAt = addSat(q.now, t.probeInt)
		}
	}
	q.emit(Event{Kind: EvEVState, EV: t.set.values[i], Plane: t.set.plane[i], From: uint8(from), To: uint8(to), Reason: uint8(c)})
	out := to == EVAssumedBad || to == EVDenied
	wasOut := from == EVAssumedBad || from == EVDenied
	switch {
	case out && t.active(i):
		q.replaceFromBackup(i)
	case !out && wasOut && !t.active(i):
		q.rejoinActive(i)
	}
	return true
}

func (t *evTable) count(s EVState, d int) {
	switch s {
	case EVAssumedBad:
		t.nBad += d
	case EVSkip:
		t.nSkip += d
	case EVDenied:
		t.nDenied += d
	}
}

// swapActive puts EV in into the active-set position of EV out.
func (t *evTable) swapActive(out, in int) {
	for k, e := range t.order {
		if int(e) == out {
			t.order[k] = uint16(in)
			break
		}
	}
	t.e[out] &^= evActive
	t.e[in] |= evActive
}

// replaceFromBackup swaps active EV i for a GOOD backup EV of the same
// plane, so that planes stay equally loaded; with none the plane's active
// set shrinks (EV-REP-1, EV-SET-5).
func (q *QP) replaceFromBackup(i int) {
	t := &q.ev
	evs := t.set.perPlane[t.set.plane[i]]
	start := q.rng.intn(len(evs))
	for k := range evs {
		j := int(evs[(start+k)%len(evs)])
		if !t.active(j) && t.state(j) == EVGood {
			t.swapActive(i, j)
			q.emit(Event{Kind: EvEVReplaced, EV: t.set.values[i], Plane: t.set.plane[i], Value: uint64(t.set.values[j])})
			return
		}
	}
}

// rejoinActive handles an EV back from ASSUMED_BAD or DENIED: it joins its
// plane's backup set, and enters the active set only to replace an active
// EV of its plane that is out of use (EV-REP-2).
func (q *QP) rejoinActive(i int) {
	t := &q.ev
	pl := t.set.plane[i]
	for _, e := range t.order {
		if s := t.state(int(e)); t.set.plane[e] == pl && (s == EVAssumedBad || s == EVDenied) {
			t.swapActive(int(e), i)
			q.emit(Event{Kind: EvEVRestored, EV: t.set.values[i], Plane: pl, Value: uint64(t.set.values[e])})
			return
		}
	}
}

// sackVerdict applies a SACK's verdict to the EV it reflects (LR-SACK-3):
// an answer to a probe goes to probeResult (EV-PRB-4); otherwise m = NONE
// adopts the EV as its plane's reverse EV (EV-REV-3), and SKIP_ONCE and
// ALWAYS_SKIP are the path-state events evstate.OfSACK names (EV-ST-2,
// EV-ST-4, EV-ST-10). A reserved m reads as NONE (WIRE-SETH-3);
// sackVerdict returns m as read.
func (q *QP) sackVerdict(s *wire.SETH, ev int, evOK bool) wire.Multipath {
	m := s.M
	if m > wire.MAlwaysSkip {
		m = wire.MNone
	}
	if !evOK {
		if m != wire.MNone || s.PR {
			q.ignore(IgnoreUnknownEV, s.CACKPSN, s.Entropy)
		}
	} else if s.PR {
		q.probeResult(ev, uint16(s.AckPSNOffset), m)
	} else if m == wire.MNone {
		q.adoptReverse(ev)
	} else {
		q.evEvent(ev, evstate.OfSACK(m, false))
	}
	return m
}

// evEvent moves EV i as the path-state table moves its state on event c
// (evstate.Next); an event the table has no row for leaves it as it is.
func (q *QP) evEvent(i int, c EVCause) bool {
	to, ok := evstate.Next(q.ev.state(i), c)
	return ok && q.setEV(i, to, c)
}

// probeResult handles a SACK with pr = 1 reflecting EV i: an answer to the
// outstanding probe on i (matched by probe_id) counts toward restoring an
// ASSUMED_BAD EV (EV-ST-7), moves it to SKIP on SKIP_ONCE (EV-ST-8), and
// leaves it on ALWAYS_SKIP (EV-ST-10). An answer with m = NONE makes the EV
// its plane's reverse EV (EV-REV-2).
func (q *QP) probeResult(i int, id uint16, m wire.Multipath) {
	t := &q.ev
	if !t.probing(i) || id != q.req.probeID(i) {
		q.ignore(IgnoreUnknownProbe, uint32(id), t.set.values[i])
		return
	}
	t.setFlag(i, evProbing, false)
	q.emit(Event{Kind: EvProbeResult, EV: t.set.values[i], Plane: t.set.plane[i], Reason: uint8(m)})
	if m == wire.MNone {
		q.adoptReverse(i)
	}
	if t.state(i) != EVAssumedBad {
		return
	}
	switch c := evstate.OfSACK(m, true); c {
	case CauseProbeOK:
		t.setProbeOK(i, t.probeOK(i)+1)
		if q.st.rules.restoresEV(t.probeOK(i), t.set.probeSuccesses) {
			q.evEvent(i, c)
		}
	case CauseProbeSkip:
		q.evEvent(i, c)
	default:
		t.setProbeOK(i, 0)
	}
}

// adoptReverse makes a GOOD EV its plane's reverse EV (EV-REV-2, EV-REV-3)
// and records the evidence that it works (EV-SM-4).
func (q *QP) adoptReverse(i int) {
	if t := &q.ev; t.state(i) == EVGood {
		pl := t.set.plane[i]
		t.rev[pl] = int16(i)
		q.rsp.proof[pl] = int16(i)
	}
}
