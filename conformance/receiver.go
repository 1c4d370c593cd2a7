package conformance

import (
	"math/bits"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// discardReqs are the strict findings that make a responder discard a
// packet (RSP-RCV-1, WIRE-PAY-1, WIRE-BTH-3, WIRE-LEN-1, ...): such a
// packet must cause no SACK, NACK or state change.
var discardReqs = [wire.NumReqs]bool{
	wire.ReqICRC1: true, wire.ReqBTH3: true, wire.ReqLEN1: true, wire.ReqOP2: true, wire.ReqBTH9: true,
	wire.ReqPAY1: true, wire.ReqBTH8: true, wire.ReqENC1: true, wire.ReqTRIM1: true,
}

// discarded reports whether a responder discards the packet of r, and the
// requirement it breaks for which it does (WIRE-ICRC-1 for a bad ICRC):
// a value, so that judging such frames builds no text.
func discarded(r *pcap.Record) (bool, wire.ReqID) {
	if r.HasICRC() && !r.ICRCOK { // a write cut is taken as whole (cutWrite)
		return true, wire.ReqICRC1
	}
	for i := range r.Violations {
		if req := r.Violations[i].Req; req < wire.NumReqs && discardReqs[req] {
			return true, req
		}
	}
	return false, wire.NoReq
}

// window returns the responder's tracking window W = 128 × mpr_dest, or 0
// when the PICS does not declare it.
func (e *engine) window() uint32 {
	if m := e.pics.Parameters.MPRDest; m != nil {
		return uint32(128 * *m)
	}
	return 0
}

// newArrival returns a copy of a for the arrived table, from the flow's
// free list or a new chunk: an arrival costs no allocation in steady state.
func (fl *flow) newArrival(a *arrival) *arrival {
	if len(fl.arrFree) == 0 {
		chunk := make([]arrival, 64)
		for i := range chunk {
			fl.arrFree = append(fl.arrFree, &chunk[i])
		}
	}
	p := fl.arrFree[len(fl.arrFree)-1]
	fl.arrFree = fl.arrFree[:len(fl.arrFree)-1]
	*p = *a
	return p
}

// needAnswer records that a SACK must answer arrival a at once
// (RSP-SACK-5), replacing an earlier arrival of its PSN, up to MaxPending.
func (fl *flow) needAnswer(e *engine, a *arrival) {
	if !e.roomIn(fl.needSACK.len(), MaxPending) {
		return
	}
	fl.needSACK.maxRing = maxNeedSACKRing
	fl.needSACK.set(a.psn, needSACK{frame: a.frame, ns: a.ns, ev: a.ev, plane: int32(a.plane)})
}

// needSACK is an arrival a SACK must answer at once: what its finding
// names when none does (notAnsweredAtOnce), not the whole arrival, so that
// recording and answering one copies 24 bytes rather than about 100.
type needSACK struct {
	frame int
	ns    int64
	ev    uint32
	plane int32
}

// needArrivals returns the arrivals a SACK must still answer, by PSN
// (for reports at the end).
func (fl *flow) needArrivals() map[uint32]arrival {
	m := make(map[uint32]arrival, fl.needSACK.len())
	fl.needSACK.each(func(q uint32, n needSACK) {
		m[q] = arrival{psn: q, frame: n.frame, ns: n.ns, ev: n.ev, plane: int(n.plane)}
	})
	return m
}

// maxNeedSACKRing bounds needSACK's ring; PSNs beyond it sharing a slot
// go to its map.
const maxNeedSACKRing = 1024

// freeArrival returns an arrival taken out of the arrived table.
func (fl *flow) freeArrival(a *arrival) { fl.arrFree = append(fl.arrFree, a) }

// pushRecent remembers an arrival in the ring of recent arrivals; each
// links to the previous arrival of its PSN, so that findTrigger follows
// one PSN's arrivals instead of scanning the ring.
func (fl *flow) pushRecent(a *arrival) {
	fl.recentIdx.maxRing = 4 * recentArrivals
	fl.recentSeq++
	seq := fl.recentSeq
	prev := fl.recentIdx.set(a.psn, seq)
	var dst *arrival
	if len(fl.recent) < recentArrivals {
		fl.recent = append(fl.recent, arrival{})
		dst = &fl.recent[len(fl.recent)-1]
	} else {
		dst = &fl.recent[(seq-1)%recentArrivals]
		fl.recentIdx.delIf(dst.psn, dst.seq)
	}
	*dst = *a
	dst.seq, dst.prevSeq = seq, prev
}

// findTrigger returns, of the recent write arrivals of a SACK's ack_psn,
// the one the SACK s answers, and whether any of them carried its EV. A
// PSN that arrived more than once (a retransmission, a duplicate) has
// copies that may differ in EV, CE mark and timestamp, and at a capture
// point the answer to an earlier copy may follow a later one. The answered
// copy is the one whose EV, tx_timestamp and ECN the SACK reflects
// (WIRE-EV-5, WIRE-CCS-2, RSP-SACK-3): the latest that agrees on most of
// them, the EV first.
func (fl *flow) findTrigger(psn uint32, s *wire.SETH) (best *arrival, evSeen bool, badICRC int) {
	bestScore := -1
	for q := fl.recentIdx.get(psn); q != 0 && q+recentArrivals > fl.recentSeq; {
		a := &fl.recent[(q-1)%recentArrivals]
		if a.seq != q {
			break
		}
		if a.badICRC && badICRC == 0 {
			badICRC = a.frame
		}
		if !a.probe && !a.discarded {
			evSeen = evSeen || a.ev == s.Entropy
			if sc := triggerScore(a, s); sc > bestScore {
				best, bestScore = a, sc
			}
		}
		q = a.prevSeq
	}
	return best, evSeen, badICRC
}

// triggerScore ranks how well arrival a fits SACK s as its trigger: its
// EV, then its timestamp, then its ECN mark.
func triggerScore(a *arrival, s *wire.SETH) int {
	sc := 0
	if a.ev == s.Entropy {
		sc += 4
	}
	ts := uint16(0)
	if a.hasTS {
		ts = a.ts
	}
	if ts == s.CC.TxTimestamp {
		sc += 2
	}
	if mFits(s.M, a.ce) {
		sc++
	}
	return sc
}

// mFits reports whether a SACK's m is right for a trigger that arrived
// CE-marked when ce (RSP-SACK-3, RSP-SACK-4, RSP-PRB-2).
func mFits(m wire.Multipath, ce bool) bool {
	return m == wire.MAlwaysSkip || (ce && m == wire.MSkipOnce) || (!ce && m == wire.MNone)
}

// setBaseline fixes the responder's cumulative point from the QP's first
// PSN (fromStart) or from the first feedback seen.
func (e *engine) setBaseline(fl *flow, cack uint32, fromStart bool) {
	fl.rGuess, fl.rBase = fromStart, cack
	fl.rKnown, fl.rStart, fl.rcum = true, fromStart, cack
	fl.arrived.each(func(q uint32, a *arrival) {
		if !psnAfter(q, cack) {
			fl.arrived.del(q)
			fl.freeArrival(a)
		}
	})
	e.advanceRcum(fl, false)
	fl.pushRcum(e.now, fl.rcum, fl.bytes)
}

func (fl *flow) pushRcum(ns int64, rcum uint32, b int64) {
	if len(fl.rcumHist) >= 1024 {
		fl.compactRcum()
	}
	if n := len(fl.rcumHist); n > 0 && ns < fl.rcumHist[n-1].ns {
		fl.rcumBack++
	}
	fl.rcumHist = append(fl.rcumHist, rcumEvent{rcum: rcum, ns: ns, bytes: b})
}

// compactRcum keeps the later half of rcumHist.
func (fl *flow) compactRcum() {
	fl.rcumHist = append(fl.rcumHist[:0], fl.rcumHist[512:]...)
	fl.rcumLast = max(0, fl.rcumLast-512)
	fl.rcumBack = 0
	for i := 1; i < len(fl.rcumHist); i++ {
		if fl.rcumHist[i].ns < fl.rcumHist[i-1].ns {
			fl.rcumBack++
		}
	}
}

// rcumAt returns the cumulative point and byte count as of time t: the
// latest event of rcumHist at or before t. While the history is in time
// order (rcumBack), it is found by walking from the previous answer
// (rcumLast): SACKs ask a reaction time back from their own time, which
// moves with the capture, so the walk is a step or two. Otherwise, by a
// scan from the end.
func (fl *flow) rcumAt(t int64) (rcumEvent, bool) {
	h := fl.rcumHist
	if len(h) == 0 {
		return rcumEvent{}, false
	}
	if fl.rcumBack == 0 {
		i := min(fl.rcumLast, len(h)-1)
		for i+1 < len(h) && h[i+1].ns <= t {
			i++
		}
		for i >= 0 && h[i].ns > t {
			i--
		}
		if i < 0 {
			fl.rcumLast = 0
			return rcumEvent{}, false
		}
		fl.rcumLast = i
		return h[i], true
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].ns <= t {
			return h[i], true
		}
	}
	return rcumEvent{}, false
}

// advanceRcum moves the cumulative point over the PSNs after it that
// arrived, taking each out of the arrived table; with nextArrived, the
// first of them arrived without entering the table (arrive).
func (e *engine) advanceRcum(fl *flow, nextArrived bool) {
	for {
		q := wire.PSNAdd(fl.rcum, 1)
		if !nextArrived {
			a := fl.arrived.del(q)
			if a == nil {
				return
			}
			fl.freeArrival(a)
		}
		nextArrived = false
		fl.rcum = q
		if fl.ackReq.mayHold(q) {
			if _, ok := fl.ackReq.m[q]; ok {
				fl.ackDue[q] = e.now // cack reaches an ack_req PSN (RSP-ACK-1)
			}
		}
		for i := 0; i < len(fl.held); i++ {
			if !psnAfter(fl.held[i].lastPSN, q) {
				fl.held = append(fl.held[:i], fl.held[i+1:]...)
				i--
			}
		}
	}
}

// arriveWrite records a write as it reached the responder's capture point.
func (e *engine) arriveWrite(pt *point, fl *flow, rsp string, r *pcap.Record) {
	e.arrive(pt, fl, rsp, r)
	fl.pushRecent(&e.ax.a)
}

// arrive takes a write into the responder's view (arriveWrite) and runs
// the arrived hooks; the arrival is built in e.ax.a.
func (e *engine) arrive(pt *point, fl *flow, rsp string, r *pcap.Record) {
	p := &r.Packet
	psn, op := p.BTH.PSN, p.BTH.Opcode
	x := &e.ax // the arrival is built in the hook's context: no copy
	// Zeroed, then filled in place: a composite literal is built aside
	// and copied.
	a := &x.a
	*a = arrival{}
	a.psn, a.ev, a.frame, a.ns, a.ce, a.trimmed = psn, r.EV, e.frameNo, e.now, p.ECN() == 3, p.Trimmed
	a.lastHop, a.payload, a.plane = p.TrimmedLastHop, len(p.Payload), pt.curPlane
	if p.Decoded&wire.HasTSETH != 0 {
		a.ts, a.hasTS = p.TSETH.TxTimestamp, true
	}
	bad, _ := discarded(r)
	// The responder discards data whose P_Key is not its QP's
	// (WIRE-BTH-12, RSP-RCV-1): such a packet is not received.
	a.discarded = bad || !e.pkeyOK(fl, p.BTH.PKey)
	a.valid = !p.Trimmed && !a.discarded
	if !a.discarded && !p.BTH.Retransmit && (!fl.havePreEnd || !fl.rKnown && psnAfter(fl.preEnd, psn)) {
		// A requester sends new PSNs in order: one below the first new
		// PSN seen was sent before the capture began (preCapture).
		fl.preEnd, fl.havePreEnd = psn, true
	}
	if !fl.rKnown && e.pics.Capture.FromQPStart && !a.discarded && !p.BTH.Retransmit && op.IsFirst() && p.METH.MSN == 0 && p.METH.RQMSN == 0 {
		// The QP's first message (REQ-PSN-3), in a capture from QP start:
		// a guess that the responder's first feedback confirms.
		e.setBaseline(fl, wire.PSNAdd(psn, -1), true)
	}
	if !fl.rKnown {
		e.arriveBeforeBaseline(fl, a)
		return
	}
	d := psnDist(psn, fl.rcum)
	w := e.window()
	dup := d == 0 || d >= 1<<23 || fl.arrived.get(psn) != nil
	oor := !dup && w > 0 && d > w
	a.duplicate, a.inWindow = dup, !dup && !oor
	needs := a.ce || p.BTH.AckReq || p.BTH.Retransmit || op.IsLast()
	class := arrOther
	switch {
	case a.discarded || (!a.valid && !a.trimmed):
		if b, ok := fl.badArr[psn]; ok || e.roomIn(len(fl.badArr), MaxPending) {
			b.frame = e.frameNo
			fl.badArr[psn] = b
		}
	case oor:
		if e.roomIn(len(fl.oorPend), MaxPending) {
			fl.oorPend[psn] = *a
		}
	case a.trimmed && !dup:
		if e.roomIn(len(fl.trimPend), MaxPending) {
			fl.trimPend[psn] = *a
			fl.trimArr[psn] = e.frameNo
		}
		class = arrTrimmed
	case dup:
		a.needAnswer = true
		fl.needAnswer(e, a)
	default:
		if !e.roomIn(fl.arrived.len(), MaxPSNsPerFlow) {
			e.capFlow(pt, fl)
			return
		}
		// The PSN after the cumulative point does not enter the arrived
		// table, which advanceRcum, below, would take it straight back out
		// of: it is told the PSN arrived (nextArrived). The table's bounds
		// pass it.
		next := d == 1
		if next {
			fl.arrived.passed(psn)
		} else {
			fl.arrived.put(psn, fl.newArrival(a))
		}
		if len(fl.refused) > 0 {
			delete(fl.refused, psn)
		}
		fl.bytes += int64(a.payload)
		if needs || !next {
			a.needAnswer = true
			fl.needAnswer(e, a)
		}
		if p.BTH.AckReq && e.roomIn(fl.ackReq.len(), MaxPending) {
			fl.ackReq.put(psn, *a)
		}
		if op.HasImm() {
			e.wimmArrive(pt, fl, rsp, *a)
		}
		e.advanceRcum(fl, next)
		fl.pushRcum(e.now, fl.rcum, fl.bytes)
	}
	x.pt, x.fl, x.rsp, x.class = pt, fl, rsp, class
	k := arriveKind(0)
	if class == arrTrimmed {
		k |= aTrimmed
	}
	for _, c := range e.hk.arrivedBy[k] {
		c.arrived(e, x)
	}
}

// arriveBeforeBaseline takes write arrival a into the responder's view
// while its cumulative point is not known: a whole PSN is held as arrived,
// a trimmed one as pending its NACK.
func (e *engine) arriveBeforeBaseline(fl *flow, a *arrival) {
	psn := a.psn
	if a.valid && e.roomIn(fl.arrived.len(), MaxPSNsPerFlow) && fl.arrived.get(psn) == nil {
		fl.arrived.put(psn, fl.newArrival(a))
		fl.bytes += int64(a.payload)
	}
	if a.trimmed && !a.discarded && e.roomIn(len(fl.trimPend), MaxPending) {
		fl.trimPend[psn] = *a
		fl.trimArr[psn] = e.frameNo
	}
}

// arriveCtx is what the arrived hook of a check sees: a write as it
// reached the responder, once the responder's view took it in (the
// arrivals before its baseline is known are not shown).
type arriveCtx struct {
	pt    *point
	fl    *flow
	rsp   string
	a     arrival
	class arrivalClass
}

type arrivalClass uint8

const (
	arrOther   arrivalClass = iota // discarded, out of window, a duplicate or in window
	arrTrimmed                     // a new PSN that arrived trimmed
)

// pkeyOK reports whether a data packet or probe with P_Key k reaches the
// responder's QP: k must be the QP's P_Key, which the responder's own
// packets on the connection carry; before any is seen, the PICS's pkey,
// else 0xFFFF (WIRE-BTH-12).
func (e *engine) pkeyOK(fl *flow, k uint16) bool {
	if fl.haveRspKey {
		return k == fl.rspPKey
	}
	if v := e.pics.Parameters.PKey; v != nil {
		return int(k) == *v
	}
	return k == 0xFFFF
}

// rspPKeySeen learns the responder's P_Key from a packet it sent on fl.
func (e *engine) rspPKeySeen(fl *flow, k uint16) {
	if fl.haveRspKey {
		return
	}
	fl.rspPKey, fl.haveRspKey = k, true
	want := uint16(0xFFFF)
	if v := e.pics.Parameters.PKey; v != nil {
		want = uint16(*v)
	}
	if k != want {
		e.note("connection %s uses P_Key 0x%04x, not 0x%04x: arrivals before the responder's first packet were judged against 0x%04x (declare parameters.pkey)", fl.key, k, want, want)
	}
}

// ackReqSet holds the ack_req PSNs that arrived and that no ACK covered
// yet, with their arrivals (RSP-ACK-1), and counts them by their PSN's low
// byte: advanceRcum, which steps the cumulative point one PSN at a time,
// then hashes only a PSN that may be one of them. put, del and reset keep
// the counts; m is read directly.
type ackReqSet struct {
	m map[uint32]arrival
	n [256]uint16 // entries of m by PSN & 0xFF (at most MaxPending)
}

func (s *ackReqSet) len() int { return len(s.m) }

// mayHold reports whether q may be an entry: false means it is not.
func (s *ackReqSet) mayHold(q uint32) bool { return s.n[q&0xFF] != 0 }

func (s *ackReqSet) put(q uint32, a arrival) {
	if _, ok := s.m[q]; !ok {
		s.n[q&0xFF]++
	}
	s.m[q] = a
}

func (s *ackReqSet) del(q uint32) {
	if _, ok := s.m[q]; ok {
		delete(s.m, q)
		s.n[q&0xFF]--
	}
}

func (s *ackReqSet) reset() {
	clear(s.m)
	s.n = [256]uint16{}
}

// unarrive forgets an arrival the responder refused (a NACK or NAK for it).
func (e *engine) unarrive(fl *flow, psn uint32) {
	if e.roomIn(len(fl.refused), MaxPending) {
		fl.refused[psn] = e.frameNo
	}
	if a := fl.arrived.del(psn); a != nil {
		fl.bytes -= int64(a.payload)
		fl.freeArrival(a)
	}
	fl.needSACK.del(psn)
	fl.ackReq.del(psn)
	delete(fl.ackDue, psn)
}

// confirmBaseline checks a guessed baseline (the QP's first message,
// REQ-PSN-3) against the responder's first feedback: a cumulative point
// behind the guess proves it wrong (the message was not the QP's first),
// and the responder's view restarts from the feedback.
func (e *engine) confirmBaseline(fl *flow, cack uint32) {
	if !fl.rGuess {
		return
	}
	fl.rGuess = false
	if !psnAfter(fl.rBase, cack) {
		return
	}
	e.note("connection %s: the first message seen (MSN 0) was not the QP's first: the responder reports cack %d; its arrivals are judged from there", fl.key, cack)
	fl.rKnown, fl.rStart = false, false
	fl.arrived.each(func(_ uint32, a *arrival) { fl.freeArrival(a) })
	fl.arrived.reset()
	fl.needSACK.reset()
	clear(fl.trimPend)
	clear(fl.oorPend)
	fl.ackReq.reset()
	clear(fl.ackDue)
	clear(fl.wimmExcess)
	fl.held, fl.rcumHist, fl.rcumBack, fl.rcumLast, fl.bytes = nil, nil, 0, 0, 0
}

// preCapture reports whether PSN q, claimed but not seen arriving, may
// have arrived before the capture began: in a capture not from QP start,
// a PSN of the baseline SACK's bitmap, or one after the baseline and
// before the first new PSN seen (preEnd; every one until one is seen).
func (fl *flow) preCapture(q uint32) bool {
	if fl.rStart {
		return false
	}
	if fl.preBase[q] {
		return true
	}
	if d := psnDist(q, fl.rBase); d == 0 || d >= 1<<23 {
		return false
	}
	return !fl.havePreEnd || psnAfter(fl.preEnd, q)
}

// adoptUnseen takes the responder's word that PSN q, claimed by feedback
// (frame, at ns) but not seen arriving, arrived: later feedback is judged
// with q arrived. Its payload is unknown (unseenPay) unless q was seen
// arriving out of the window (oorPend), judged against a cumulative point
// the responder had passed. A PSN after the highest the requester was
// seen sending (maxSent) was not sent: its claim is not taken.
func (e *engine) adoptUnseen(fl *flow, q uint32, frame int, ns int64) {
	if fl.arrived.get(q) != nil || !psnAfter(q, fl.rcum) || fl.haveMax && psnAfter(q, fl.maxSent) || !e.roomIn(fl.arrived.len(), MaxPSNsPerFlow) {
		return
	}
	a := arrival{psn: q, frame: frame, ns: ns, valid: true, inWindow: true}
	if o, ok := fl.oorPend[q]; ok {
		a.payload = o.payload
		delete(fl.oorPend, q)
	} else {
		fl.unseenPay++
	}
	fl.arrived.put(q, fl.newArrival(&a))
	fl.bytes += int64(a.payload)
	if q == wire.PSNAdd(fl.rcum, 1) {
		e.advanceRcum(fl, false)
		fl.pushRcum(e.now, fl.rcum, fl.bytes)
	}
}

// resyncCum moves the cumulative point to cum on the responder's word
// (its cack_psn or ACK psn), once a claim of PSNs not seen arriving is
// judged: each PSN up to cum counts as received, as advanceRcum counts
// them, so that one PSN the capture missed is one finding. The word is
// taken no further than the highest PSN the requester was seen sending
// (maxSent). Arrivals judged out of the window of the old point are
// judged again against the new one.
func (e *engine) resyncCum(fl *flow, cum uint32) {
	if fl.haveMax && psnAfter(cum, fl.maxSent) {
		cum = fl.maxSent
	}
	n := psnDist(cum, fl.rcum)
	if n == 0 || n >= 1<<23 {
		return
	}
	old, seen := fl.rcum, uint32(0)
	in := func(q uint32) bool { d := psnDist(q, old); return d >= 1 && d <= n }
	fl.arrived.each(func(q uint32, a *arrival) {
		if in(q) {
			fl.arrived.del(q)
			fl.freeArrival(a)
			seen++
		}
	})
	for q, a := range fl.oorPend {
		if in(q) {
			fl.bytes += int64(a.payload)
			delete(fl.oorPend, q)
			seen++
		}
	}
	fl.unseenPay += int(n - seen)
	for q := range fl.ackReq.m {
		if _, due := fl.ackDue[q]; in(q) && !due {
			fl.ackDue[q] = e.now // cack reaches an ack_req PSN (RSP-ACK-1)
		}
	}
	k := 0
	for _, h := range fl.held {
		if psnAfter(h.lastPSN, cum) {
			fl.held[k] = h
			k++
		}
	}
	fl.held = fl.held[:k]
	fl.rcum = cum
	e.reclassifyOOR(fl)
	e.advanceRcum(fl, false)
	fl.pushRcum(e.now, fl.rcum, fl.bytes)
}

// reclassifyOOR takes into the arrived table the arrivals held as out of
// the window (oorPend) that the window of the current cumulative point
// holds, by PSN value (the table's bound may stop it part way). It runs
// once per resynchronisation, not per frame: the sort's allocation is no
// cost of the hot path.
func (e *engine) reclassifyOOR(fl *flow) {
	w := e.window()
	if w == 0 || len(fl.oorPend) == 0 {
		return
	}
	for _, q := range sortedPSNs(fl.oorPend) {
		a := fl.oorPend[q]
		d := psnDist(q, fl.rcum)
		if d == 0 || d >= 1<<23 {
			delete(fl.oorPend, q)
			continue
		}
		if d > w || fl.arrived.get(q) != nil || !e.roomIn(fl.arrived.len(), MaxPSNsPerFlow) {
			continue
		}
		a.inWindow = true
		fl.arrived.put(q, fl.newArrival(&a))
		fl.bytes += int64(a.payload)
		delete(fl.oorPend, q)
	}
}

// wimmArrive counts WriteIMMs held at the responder (WIMM-RSP-4).
func (e *engine) wimmArrive(pt *point, fl *flow, rsp string, a arrival) {
	m := e.pics.Parameters.MaxWIMMDest
	if m == nil {
		return
	}
	held := 0
	for _, h := range fl.held {
		if psnAfter(h.lastPSN, fl.rcum) {
			held++
		}
	}
	if held >= *m {
		if e.roomIn(len(fl.wimmExcess), MaxPending) {
			fl.wimmExcess[a.psn] = a
		}
		return
	}
	if e.roomIn(len(fl.held), MaxPending) {
		fl.held = append(fl.held, heldWIMM{lastPSN: a.psn, frame: a.frame})
	}
}

// fbCtx is what the feedback hook of a check sees: a SACK, NACK or
// ACKNOWLEDGE, once both views of the connection took it in, but for the
// responder's cumulative point it reports (fl.lastCack is the one before).
type fbCtx struct {
	judgedRow // the responder's
	pt        *point
	fl        *flow
	rsp       string // the node that sent the feedback
	p         *wire.Packet
	op        wire.Opcode
	mismatch  bool // a SACK's or NACK's spdcid disagrees with the connection's QP
	// judged: the responder's view had its baseline before this feedback
	// (the first feedback is the baseline, not judged).
	judged bool
	// A NACK's trimmed or out-of-window arrival (hasPend), taken out of
	// trimPend or oorPend (held in the engine's pendArr: the context,
	// reset for every frame, holds no arrival); oorOut: a PSN_OOR_WINDOW
	// NACK for a PSN beyond the window of the cack last reported.
	pend    *arrival
	hasPend bool
	oorOut  bool
	// acksCovered: the ack_req PSNs an ACK covers; wimmRefused: the
	// WriteIMMs over the limit a NACK or NAK refuses.
	acksCovered, wimmRefused int
}

// answerCtx is what the answer hook of a check sees: feedback answering an
// arrival.
type answerCtx struct {
	judgedRow // the responder's
	kind      answerKind
	pt        *point
	fl        *flow
	rsp       string
	s         *wire.SETH // the SACK (ansTrigger, ansProbe, ansProbeUnmatched)
	ev        uint32     // the feedback's entropy
	what      string     // "SACK" or "NACK"
	a         *arrival   // the arrival answered (when it left the model, a copy in the engine's ansArr); nil when a SACK's trigger never arrived
	other     *arrival   // ansProbeUnmatched: a probe with the answer's id on another EV
	// evSeen: some arrival of the trigger's PSN carried the SACK's EV;
	// neededAnswer: the trigger was waiting for an immediate SACK.
	evSeen, neededAnswer bool
	// unsure: a copy of the trigger's PSN, or a probe with the answer's
	// id, seen with a bad ICRC (its frame; 0 none), which the feedback
	// may answer.
	unsure int
}

type answerKind uint8

const (
	ansTrigger        answerKind = iota + 1 // a SACK's trigger (ack_psn)
	ansProbe                                // the probe a pr = 1 SACK answers
	ansProbeUnmatched                       // a pr = 1 SACK answering no probe seen
	ansTrim                                 // the trimmed arrival a trim NACK answers
	ansOOR                                  // the out-of-window arrival a PSN_OOR_WINDOW NACK answers
)

func (e *engine) runFeedback(x *fbCtx) {
	e.feedbackNames(x)
	for _, c := range e.hk.feedbackOp[x.op] {
		c.feedback(e, x)
	}
}

func (e *engine) runAnswer(x *answerCtx) {
	e.unsure = x.unsure
	for _, c := range e.hk.answerBy[x.kind] {
		c.answer(e, x)
	}
	e.unsure = 0
}

// feedbackAt starts the feedback context of a frame on fl.
func (e *engine) feedbackAt(pt *point, fl *flow, rsp string, p *wire.Packet, mismatch bool) *fbCtx {
	x := &e.fbx
	*x = fbCtx{judgedRow: judgedRow{e.row(pt, rsp)}, pt: pt, fl: fl, rsp: rsp, p: p, op: p.BTH.Opcode, mismatch: mismatch}
	return x
}

// sack handles a RELIABILITY_SACK.
func (e *engine) sack(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	s := &p.SETH
	fl, mismatch := e.feedbackFlow(pt, src, dst, p.BTH.DestQP, s.SPDCID, true)
	if fl == nil {
		return
	}
	pt.curFlow = fl
	fl.touch(e.frameNo, pt.curPlane)
	fl.sacks++
	e.tlPacket(pt, fl, r)
	x := e.feedbackAt(pt, fl, src, p, mismatch)
	e.sackAtRequester(pt, fl, s)
	x.judged = e.sackBaseline(fl, s)
	e.runFeedback(x)
	if s.PR {
		e.probeAnswer(x)
	} else if x.judged {
		e.trigger(x)
	}
	if x.judged && (!fl.haveCack || psnAfter(s.CACKPSN, fl.lastCack)) {
		fl.lastCack, fl.haveCack = s.CACKPSN, true
	}
	e.rspPKeySeen(fl, p.BTH.PKey)
}

// sackBaseline takes a SACK into the responder's view before it is
// judged: the first feedback sets the baseline and is not judged.
func (e *engine) sackBaseline(fl *flow, s *wire.SETH) (judged bool) {
	fl.lastFbNs, fl.haveFb = e.now, true
	cack := s.CACKPSN
	e.confirmBaseline(fl, cack)
	if fl.rKnown {
		return true
	}
	e.setBaseline(fl, cack, false)
	for bm := s.SACKBitmap; bm != 0; bm &= bm - 1 {
		fl.preBase[wire.PSNAdd(s.BitmapBase(), bits.TrailingZeros64(bm))] = true
		if len(fl.preBase) > 64 {
			break
		}
	}
	fl.lastCack, fl.haveCack = cack, true
	return false
}

// trigger finds the arrival a SACK answers (its ack_psn) and runs the
// answer hooks.
func (e *engine) trigger(x *fbCtx) {
	fl, s := x.fl, &x.p.SETH
	trig := s.AckPSN()
	ax := &e.ansx
	*ax = answerCtx{judgedRow: x.judgedRow, kind: ansTrigger, pt: x.pt, fl: fl, rsp: x.rsp, s: s, ev: s.Entropy, what: "SACK"}
	ax.a, ax.evSeen, ax.unsure = fl.findTrigger(trig, s)
	if ax.a == nil && ax.unsure == 0 {
		ax.unsure = fl.badICRCCopy(trig) // seen before the recent ring held it
	}
	ax.neededAnswer = fl.needSACK.del(trig).frame != 0
	// runAnswer, spelled out: too big to inline, and most SACKs come here.
	e.unsure = ax.unsure
	for _, c := range e.hk.answerBy[ansTrigger] {
		c.answer(e, ax)
	}
	e.unsure = 0
}

// probeAnswer matches a pr = 1 SACK with a probe (by probe id and EV) and
// runs the answer hooks.
func (e *engine) probeAnswer(x *fbCtx) {
	fl, s := x.fl, &x.p.SETH
	id := uint16(s.AckPSNOffset)
	ax := &e.ansx
	*ax = answerCtx{judgedRow: x.judgedRow, kind: ansProbeUnmatched, pt: x.pt, fl: fl, rsp: x.rsp, s: s, ev: s.Entropy, what: "SACK"}
	for i := len(fl.probes) - 1; i >= 0; i-- {
		if a := fl.probes[i]; a.probeID == id && a.ev == s.Entropy {
			fl.probes = append(fl.probes[:i], fl.probes[i+1:]...)
			e.ansArr = a
			ax.kind, ax.a = ansProbe, &e.ansArr
			e.runAnswer(ax)
			return
		}
	}
	// Not a probe we saw: a wrong EV or id, or no probe at all.
	for i := range fl.probes {
		if fl.probes[i].probeID == id {
			ax.other = &fl.probes[i]
			break
		}
	}
	ax.unsure = x.pt.badProbe(fl, id)
	e.runAnswer(ax)
}

// nack handles a RELIABILITY_NACK.
func (e *engine) nack(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	n := &p.NETH
	fl, mismatch := e.feedbackFlow(pt, src, dst, p.BTH.DestQP, n.SPDCID, true)
	if fl == nil {
		return
	}
	pt.curFlow = fl
	fl.touch(e.frameNo, pt.curPlane)
	fl.nacks++
	e.tlPacket(pt, fl, r)
	x := e.feedbackAt(pt, fl, src, p, mismatch)
	e.nackAtRequester(pt, fl, n)
	e.nackAtResponder(x)
	e.rspPKeySeen(fl, p.BTH.PKey)
}

// nackAtResponder takes a NACK into the responder's view and runs the
// feedback and answer hooks.
func (e *engine) nackAtResponder(x *fbCtx) {
	fl, n := x.fl, &x.p.NETH
	fl.lastFbNs, fl.haveFb = e.now, true
	psn := n.NACKPSN
	x.judged = fl.rKnown
	var pend map[uint32]arrival
	switch n.Reason {
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop:
		pend = fl.trimPend
	case wire.NACKPSNOutOfWindow:
		pend = fl.oorPend
		if w := e.window(); fl.rKnown && fl.haveCack && w > 0 && psnDist(psn, fl.lastCack) > w && psnDist(psn, fl.lastCack) < 1<<23 {
			x.oorOut = true // out of window for the cack it last reported
		}
	case wire.NACKUnexpEvent:
		x.wimmRefused = len(fl.wimmExcess)
	}
	if a, ok := pend[psn]; ok {
		delete(pend, psn)
		e.pendArr = a
		x.pend, x.hasPend = &e.pendArr, true
		x.oorOut = false
	}
	e.runFeedback(x)
	if x.hasPend {
		ax := &e.ansx
		e.ansArr = *x.pend
		*ax = answerCtx{judgedRow: x.judgedRow, kind: ansTrim, pt: x.pt, fl: fl, rsp: x.rsp, ev: n.Entropy, what: "NACK", a: &e.ansArr}
		if n.Reason == wire.NACKPSNOutOfWindow {
			ax.kind = ansOOR
		}
		e.runAnswer(ax)
	}
	switch n.Reason {
	case wire.NACKPSNOutOfWindow:
		if !x.hasPend && (x.oorOut || !fl.rKnown || !fl.haveCack) {
			e.unarrive(fl, psn) // the PSN was not received
		}
	case wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource:
		e.unarrive(fl, psn)
	case wire.NACKUnexpEvent:
		clear(fl.wimmExcess)
	}
}

// aeth handles an ACKNOWLEDGE (RoCE ACK or NAK).
func (e *engine) aeth(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	fl, _ := e.feedbackFlow(pt, src, dst, p.BTH.DestQP, 0, false)
	if fl == nil {
		return
	}
	pt.curFlow = fl
	fl.touch(e.frameNo, pt.curPlane)
	fl.acks++
	x := e.feedbackAt(pt, fl, src, p, false)
	a := &p.AETH
	psn := p.BTH.PSN
	switch a.Type() {
	case wire.AETHTypeACK:
		e.advanceUna(fl, psn)
		fl.lastFbNs, fl.haveFb = e.now, true
		e.confirmBaseline(fl, psn)
		if !fl.rKnown {
			e.setBaseline(fl, psn, false)
			break
		}
		x.judged = true
		for q := range fl.ackReq.m {
			// An ACK covers the ack_req PSNs at or behind its psn, within
			// half the PSN space: one 2^23 or more away covers nothing
			// (24-bit serial arithmetic, RSP-RCV-6).
			if psnDist(psn, q) < 1<<23 {
				fl.ackReq.del(q)
				delete(fl.ackDue, q)
				x.acksCovered++
			}
		}
	case wire.AETHTypeNAK:
		fl.lastFbNs, fl.haveFb = e.now, true
		if v := a.Value(); v >= 1 && v <= 3 {
			e.fatalAt(pt, fl)
		}
		if _, ok := fl.wimmExcess[psn]; ok && a.Value() == wire.AETHNAKInvalidRequest {
			delete(fl.wimmExcess, psn)
			x.wimmRefused = 1
		}
	}
	e.runFeedback(x)
	if a.Type() == wire.AETHTypeNAK {
		e.unarrive(fl, psn)
	}
	e.rspPKeySeen(fl, p.BTH.PKey)
}

// probeCtx is what the probe hook of a check sees: a probe as its
// requester sent it.
type probeCtx struct {
	pt  *point
	fl  *flow
	req string
	p   *wire.Packet
	ev  uint32
}

// probe handles a RELIABILITY_PROBE_REQ.
func (e *engine) probe(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	fl := e.dataFlow(pt, src, dst, p.BTH.DestQP)
	if fl == nil {
		return
	}
	pt.curFlow = fl
	fl.touch(e.frameNo, pt.curPlane)
	fl.prb++
	e.addEV(fl, r.EV)
	e.tlPacket(pt, fl, r)
	x := &e.px
	*x = probeCtx{pt: pt, fl: fl, req: src, p: p, ev: r.EV}
	e.proberNamesPeer(x)
	for _, c := range e.hk.probe {
		c.probe(e, x)
	}
	if bad, _ := discarded(r); bad || p.Trimmed || !e.pkeyOK(fl, p.BTH.PKey) {
		return // discarded by the responder (RSP-RCV-1, WIRE-BTH-12)
	}
	a := arrival{psn: 0, ev: r.EV, frame: e.frameNo, ns: e.now, ce: p.ECN() == 3, ts: p.PETH.TxTimestamp, hasTS: true,
		probe: true, probeID: p.PETH.ProbeID, valid: true, plane: pt.curPlane}
	if len(fl.probes) >= 256 {
		fl.probes = fl.probes[1:]
	}
	fl.probes = append(fl.probes, a)
}

type epKey struct {
	req, rsp string
	id       uint16
}

type epReq struct {
	frame int
	ns    int64
	op    wire.EndpointOp
	ts    uint16
	plane int
}

// epCtx is what the endpoint hook of a check sees: an endpoint request,
// or a response with the request it answers (req).
type epCtx struct {
	pt  *point
	src string
	p   *wire.Packet
	req *epReq
}

// endpoint handles endpoint requests and responses on QP 0x2.
func (e *engine) endpoint(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	id := uint16(p.BTH.PSN)
	x := &e.epx
	*x = epCtx{pt: pt, src: src, p: p}
	if p.BTH.Opcode == wire.OpEndpointReq {
		e.runEndpoint(x)
		h := &p.ERTH
		if bad, _ := discarded(r); !bad {
			if h.Op == wire.EPPortStatusUpdate && len(pt.psu) < MaxPending {
				pt.psu[[2]string{src, dst}] = psuState{mask: h.PortStatusMask, ns: e.now, frame: e.frameNo}
			}
			if len(pt.ep) < MaxPending {
				pt.ep[epKey{src, dst, id}] = &epReq{frame: e.frameNo, ns: e.now, op: h.Op, ts: h.TxTimestamp, plane: pt.curPlane}
			}
		}
		return
	}
	k := epKey{dst, src, id}
	if x.req = pt.ep[k]; x.req == nil {
		return
	}
	delete(pt.ep, k)
	e.runEndpoint(x)
}

func (e *engine) runEndpoint(x *epCtx) {
	for _, c := range e.hk.endpoint {
		c.endpoint(e, x)
	}
}

// finish runs the finish hooks on what the end of the capture leaves
// pending.
func (e *engine) finish() {
	if e.fragments > 0 {
		e.discardNote(discardFragment, e.fragments, "%d IP fragments were discarded and not judged (WIRE-ENC-5, AMB-33)")
	}
	for _, pn := range sortedKeys(e.points) {
		pt := e.points[pn]
		// The end's findings carry their own frames' planes, not the last
		// frame's (keep fills an unset plane from curPlane).
		pt.curFlow, pt.curPlane = nil, 0
		for _, fl := range pt.sortedFlows() {
			pt.curFlow = fl
			for _, c := range e.hk.finish {
				c.finish(e, pt, fl)
			}
		}
		pt.curFlow = nil
		for _, c := range e.hk.finishPoint {
			c.finishPoint(e, pt)
		}
	}
}

func sortedPSNs[V any](m map[uint32]V) []uint32 {
	return appendPSNs(make([]uint32, 0, len(m)), m)
}

// appendPSNs appends the keys of m to buf, sorted: with a buffer kept
// from frame to frame, a hot check sorts without allocating.
func appendPSNs[V any](buf []uint32, m map[uint32]V) []uint32 {
	for k := range m {
		buf = append(buf, k)
	}
	slicesSort(buf)
	return buf
}
