package statemachine

import (
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// ResourceCondition is the responder's simulated resource state, set by
// the caller to exercise the resource NACKs (RSP-NACK-3).
type ResourceCondition uint8

// Resource conditions.
const (
	ResourcesOK      ResourceCondition = iota
	NoTrackingBitmap                   // new data is NACKed NO_BITMAP
	NoPacketBuffer                     // new data is NACKed NO_PKT_BUFFER
	NoOtherResource                    // new data is NACKed NO_RESOURCE
)

// wimmSlot holds the immediate data of one WriteIMM until every earlier
// message is complete (WIMM-RSP-1).
type wimmSlot struct {
	imm   uint32
	last  uint32 // PSN of the message's last packet
	len   uint32 // dma_length
	msn   uint16
	rqmsn uint16
	early bool // FaultEarlyWIMM already delivered it
	se    bool // the last packet's BTH se flag (CTL-CQ-2)
}

// ecnRun counts consecutive CE-marked arrivals on one EV for the
// ALWAYS_SKIP policy; a small direct-mapped table bounds the memory.
type ecnRun struct {
	ev uint32
	n  uint16
}

// responder is the receiving half of a QP. Internally epsn is the oldest
// PSN not yet received, that is the spec's cack + 1 (AMB-26).
type responder struct {
	epsn      uint32
	win       uint32 // W: MPR_DEST × 128, or the dynamic window (RSP-RCV-6)
	maxWin    uint32 // MPR_DEST × 128
	dyn       bool
	pmtu      int
	ring      rxRing
	held      int    // PSNs received beyond cack (ooo_count)
	msnDone   uint32 // messages received completely (AETH msn)
	rcvdBytes uint64
	expRQMSN  uint16     // RQMSN of the next WriteIMM to deliver
	stash     []wimmSlot // held WriteIMMs, sorted by RQMSN, ring of max_wimm_dest
	head, n   int
	pend      int // in-order arrivals not yet acknowledged
	ackDue    Time
	pendPSN   uint32
	pendEV    uint32
	pendTS    uint16
	pendPlane int8
	pen       uint8
	restore   bool
	res       ResourceCondition
	runs      [8]ecnRun
	// proof holds, per plane, the reverse EV adopted on evidence that it
	// works (EV-REV-2, EV-REV-3) since the last probe answer the QP sent on
	// that plane, or -1: the EV a probe answer may take (EV-SM-4).
	proof [MaxPlanes]int16
}

func (r *responder) init(a *Attr, unit int) {
	w := uint32(a.MPRDest) * uint32(unit)
	*r = responder{epsn: wire.PSNAdd(a.RQPSN, 0), win: w, maxWin: w, dyn: a.Cap&CapDynamicMPR != 0,
		pmtu: int(a.PathMTU), ackDue: Never, ring: newRxRing(w), stash: make([]wimmSlot, a.MaxWIMMDest)}
	for i := range r.proof {
		r.proof[i] = -1
	}
}

func (r *responder) clone() responder {
	c := *r
	c.ring = r.ring.clone()
	c.stash = append([]wimmSlot(nil), r.stash...)
	return c
}

func (r *responder) clearPending() { r.pend, r.ackDue = 0, Never }

func (r *responder) slot(k int) *wimmSlot { return &r.stash[(r.head+k)%len(r.stash)] }

// isTrimmed recognises a trimmed packet by its DSCP under the profile
// (WIRE-DSCP-2), or by the codec's verdict.
func (q *QP) isTrimmed(p *wire.Packet) (trimmed, lastHop bool) {
	d := &q.st.cfg.Profile.DSCP
	dscp := p.DSCP()
	lastHop = p.TrimmedLastHop || dscp == d.TrimmedLastHop
	return lastHop || p.Trimmed || dscp == d.Trimmed, lastHop
}

func plane(port int) int8 { return int8(port - 1) }

// payloadOK applies WIRE-PAY-1: FIRST and MIDDLE carry exactly one path
// MTU, LAST 1 to path MTU bytes, ONLY 0 to path MTU bytes.
func (r *responder) payloadOK(op wire.Opcode, n int) bool {
	switch op {
	case wire.OpWriteFirst, wire.OpWriteMiddle:
		return n == r.pmtu
	case wire.OpWriteLast, wire.OpWriteLastImm:
		return n >= 1 && n <= r.pmtu
	}
	return n <= r.pmtu
}

// accessOK applies RSP-RCV-2 against Config.MRs (none: all memory).
func (q *QP) accessOK(p *wire.Packet) bool {
	mrs := q.st.cfg.MRs
	if len(mrs) == 0 {
		return true
	}
	va, n := p.RETH.VA, uint64(len(p.Payload))
	for _, m := range mrs {
		if m.RKey == p.RETH.RKey && va >= m.VA && va-m.VA <= m.Len && n <= m.Len-(va-m.VA) {
			return true
		}
	}
	return false
}

// onData handles one write packet. Its PSN is classified by
// d = (p − cack) mod 2^24 (RSP-RCV-6): new PSNs are placed at once in any
// order (RSP-RCV-3, RSP-RCV-4); duplicates are re-acknowledged and never
// placed twice (RSP-DUP-1 to RSP-DUP-3); out-of-window PSNs are NACKed
// (RSP-NACK-4); trimmed packets are NACKed (RSP-NACK-1, RSP-NACK-2).
func (q *QP) onData(port int, p *wire.Packet) {
	r := &q.rsp
	psn := p.BTH.PSN & wire.PSNMask
	ev := q.st.codec.EV(p, q.st.qp.Addr.EVMode)
	pl := plane(port)
	ts := p.TSETH.TxTimestamp
	ce := p.ECN() == 3
	op := p.BTH.Opcode
	d := (psn - r.epsn + 1) & wire.PSNMask
	dup := q.st.rules.duplicate(r, p, d)
	oor := !dup && q.st.rules.beyondWindow(d, r.win)
	if trimmed, lastHop := q.isTrimmed(p); trimmed {
		if !q.st.rules.classesTrimmed() {
			dup, oor = false, false
		}
		switch {
		case q.st.cfg.Device.NoTrimNACK:
			q.ignore(IgnoreTrimmed, psn, ev)
		case dup:
			q.sendSACK(psn, ev, ts, pl, q.verdict(ev, ce))
		case oor:
			q.sendNACK(psn, ev, ts, pl, wire.NACKPSNOutOfWindow)
		case lastHop:
			q.sendNACK(psn, ev, ts, pl, wire.NACKTrimmedLastHop)
		default:
			q.sendNACK(psn, ev, ts, pl, wire.NACKTrimmed)
		}
		return
	}
	if !r.payloadOK(op, len(p.Payload)) {
		q.ignore(IgnoreBadLength, psn, ev)
		return
	}
	switch {
	case dup:
		if q.trace() {
			q.emit(Event{Kind: EvDuplicate, PSN: psn, EV: ev})
		}
		if q.st.rules.placesAgain() {
			q.place(p, psn)
		}
		q.receivedData()
		if p.BTH.Retransmit {
			// The requester resent what we hold: our answer did not reach
			// it, so the reverse EV may be dead. Answer as a probe is
			// answered (EV-SM-6, EV-SM-4).
			q.sackFor(psn, ev, ts, pl, q.verdict(ev, ce), true)
			return
		}
		q.sendSACK(psn, ev, ts, pl, q.st.rules.dupVerdict(q.verdict(ev, ce)))
		return
	case oor:
		q.sendNACK(psn, ev, ts, pl, wire.NACKPSNOutOfWindow)
		return
	case r.res == NoTrackingBitmap:
		q.sendNACK(psn, ev, ts, pl, wire.NACKNoBitmap)
		return
	case r.res == NoPacketBuffer:
		q.sendNACK(psn, ev, ts, pl, wire.NACKNoPktBuffer)
		return
	case r.res == NoOtherResource:
		q.sendNACK(psn, ev, ts, pl, wire.NACKNoResource)
		return
	case !q.accessOK(p):
		q.sendAETH(pl, wire.AETHTypeNAK<<5|aethNAKRemoteAccess, psn)
		q.enterError(CauseAccess, StatusFlushError)
		return
	}
	if op.HasImm() && !q.stashIMM(p, psn, ev, ts, pl) {
		return
	}
	q.accept(p, psn, d, ev, ts, pl, ce)
}

// accept records a new PSN d places after the expected one (d = 1 is the
// expected PSN itself), places its payload, moves the cumulative
// acknowledgement over what is now contiguous and acknowledges: at once
// when the packet carries feedback of its own (RSP-SACK-5), else after
// Ack.Coalesce packets or Ack.Delay.
func (q *QP) accept(p *wire.Packet, psn, d, ev uint32, ts uint16, pl int8, ce bool) {
	r := &q.rsp
	op := p.BTH.Opcode
	r.ring.set(psn, op.IsLast(), p.BTH.AckReq)
	r.held++
	r.rcvdBytes += uint64(len(p.Payload))
	q.place(p, psn)
	ackNow := false
	if d == 1 {
		for r.ring.get(r.epsn) {
			last, areq := r.ring.clear(r.epsn)
			if last {
				r.msnDone++
			}
			ackNow = ackNow || areq
			r.held--
			r.epsn = wire.PSNAdd(r.epsn, 1)
		}
		q.releaseIMM()
		if !q.responding() {
			return
		}
	}
	q.receivedData()
	// RSP-SACK-5: acknowledge at once what carries feedback of its own.
	r.pend++
	r.pendPSN, r.pendEV, r.pendTS, r.pendPlane = psn, ev, ts, pl
	if d != 1 || r.held > 0 || ce || p.BTH.AckReq || p.BTH.Retransmit || op.IsLast() || r.pend >= q.st.cfg.Policy.Ack.Coalesce {
		q.sendSACK(psn, ev, ts, pl, q.verdict(ev, ce))
	} else if r.ackDue == Never {
		r.ackDue = addSat(q.now, q.st.cfg.Policy.Ack.Delay)
	}
	if ackNow {
		q.sendAETH(pl, wire.AETHTypeACK<<5|wire.AETHNoCredit, wire.PSNAdd(r.epsn, -1)) // RSP-ACK-1
	}
}

// receivedData notes, for the reverse-path probe of EV-REV-2, that data
// arrived in this RTT; a duplicate counts too, since it is the data a QP
// whose answers die keeps receiving (EV-SM-6).
func (q *QP) receivedData() {
	if q.sending() {
		rq := &q.req
		rq.rcvdData = true
		if rq.revAt == Never {
			rq.revAt = addSat(q.now, rq.revInt)
		}
	}
}

func (q *QP) place(p *wire.Packet, psn uint32) {
	q.out.Placements = append(q.out.Placements, Placement{VA: q.st.rules.placementVA(p), RKey: p.RETH.RKey, Data: p.Payload, PSN: psn, MSN: p.METH.MSN})
	if q.trace() {
		q.emit(Event{Kind: EvPlaced, PSN: psn, MSN: p.METH.MSN, Value: uint64(len(p.Payload))})
	}
}

// stashIMM holds a WriteIMM's immediate data in RQMSN order. At most
// max_wimm_dest may be held; one more is not placed, is answered as the
// profile's wimm_limit_signal says and fails the QP (WIMM-RSP-4).
func (q *QP) stashIMM(p *wire.Packet, psn, ev uint32, ts uint16, pl int8) bool {
	r := &q.rsp
	rqmsn := p.METH.RQMSN
	if r.n == len(r.stash) {
		if q.st.cfg.Profile.WIMMLimit == spec.WIMMLimitNACKUnexpEvent {
			q.sendNACK(psn, ev, ts, pl, wire.NACKUnexpEvent)
		} else {
			q.sendAETH(pl, wire.AETHTypeNAK<<5|wire.AETHNAKInvalidRequest, psn)
		}
		q.enterError(CauseWIMMLimit, StatusFlushError)
		return false
	}
	off := rqmsn - r.expRQMSN
	if off >= 1<<15 {
		q.ignore(IgnoreWIMMConflict, psn, ev) // an RQMSN already delivered
		return false
	}
	k := r.n
	for ; k > 0 && r.slot(k-1).rqmsn-r.expRQMSN >= off; k-- {
		if r.slot(k-1).rqmsn == rqmsn {
			q.ignore(IgnoreWIMMConflict, psn, ev)
			return q.st.rules.placesIMMAgain()
		}
	}
	for j := r.n; j > k; j-- {
		*r.slot(j) = *r.slot(j - 1)
	}
	s := r.slot(k)
	*s = wimmSlot{imm: p.ImmDt, last: psn, len: p.RETH.DMALength, msn: p.METH.MSN, rqmsn: rqmsn, se: p.BTH.SE}
	r.n++
	if q.st.rules.immAtArrival() {
		s.early = q.deliverIMM(s)
	}
	return true
}

// releaseIMM delivers, in RQMSN order, every held WriteIMM whose last PSN
// cack has reached, so that it completes after every earlier message
// (WIMM-RSP-1, WIMM-RSP-2); each is delivered exactly once.
func (q *QP) releaseIMM() {
	r := &q.rsp
	for r.n > 0 {
		s := r.slot(0)
		if !wire.PSNLess(s.last, r.epsn) {
			return
		}
		if !s.early && !q.deliverIMM(s) {
			return
		}
		r.expRQMSN = s.rqmsn + 1
		*s = wimmSlot{}
		r.head = (r.head + 1) % len(r.stash)
		r.n--
	}
}

// deliverIMM consumes the oldest receive WR for a WriteIMM and writes its
// completion (CMP-RCV-1). With no receive WR posted the responder sends
// UNEXP_EVENT and fails the QP (WIMM-RSP-3, RSP-NACK-5).
func (q *QP) deliverIMM(s *wimmSlot) bool {
	if q.rqLen == 0 {
		r := &q.rsp
		q.sendNACK(s.last, r.pendEV, 0, r.pendPlane, wire.NACKUnexpEvent)
		q.enterError(CauseNoRecvWR, StatusFlushError)
		return false
	}
	wrid := q.rq[q.rqHead]
	q.rqHead = (q.rqHead + 1) % len(q.rq)
	q.rqLen--
	q.out.Completions = append(q.out.Completions, Completion{QPN: q.st.qp.QPN, WRID: wrid, Status: StatusSuccess,
		Opcode: OpRecvWriteImm, Recv: true, ByteLen: s.len, Imm: s.imm, MSN: s.msn, RQMSN: s.rqmsn, Solicited: s.se})
	q.emit(Event{Kind: EvIMMDelivered, PSN: s.last, MSN: s.msn, Value: uint64(s.rqmsn)})
	return true
}

// verdict is the m field for an arrival on ev: SKIP_ONCE when it was
// CE-marked (RSP-SACK-3, RSP-PRB-2); ALWAYS_SKIP when always_skip_threshold
// marks in a row hit the same EV, after which its count restarts
// (RSP-SACK-4).
func (q *QP) verdict(ev uint32, ce bool) wire.Multipath {
	r := &q.rsp
	e := &r.runs[(ev^ev>>11)&uint32(len(r.runs)-1)]
	if !ce {
		if e.ev == ev {
			e.n = 0
		}
		return wire.MNone
	}
	n := q.st.cfg.Policy.Ack.AlwaysSkipAfter
	if n < 0 {
		return wire.MSkipOnce
	}
	if e.ev != ev {
		*e = ecnRun{ev: ev}
	}
	if e.n++; int(e.n) >= n {
		e.n = 0
		return wire.MAlwaysSkip
	}
	return wire.MSkipOnce
}

// onProbe answers a reliability probe with a SACK carrying the current
// state, pr = 1, the probe_id, the probe's EV and timestamp; the probe
// changes no tracking state (RSP-PRB-1, RSP-PRB-2).
func (q *QP) onProbe(port int, p *wire.Packet) {
	ev := q.st.codec.EV(p, q.st.qp.Addr.EVMode)
	q.sendSACKProbe(p.PETH.ProbeID, ev, p.PETH.TxTimestamp, plane(port), q.verdict(ev, p.ECN() == 3))
}

// ackTimer sends a coalesced SACK whose delay ran out (RSP-SACK-5).
func (q *QP) ackTimer() {
	r := &q.rsp
	if r.ackDue != Never && q.now >= r.ackDue {
		q.sendSACK(r.pendPSN, r.pendEV, r.pendTS, r.pendPlane, wire.MNone)
	}
}

// control starts a control packet on the reverse path: DSCP_CONTROL,
// Not-ECT, the QP's P_Key, to the peer QP (RSP-SACK-6, RSP-NACK-6,
// EV-REV-4).
func (q *QP) control(pl int8, op wire.Opcode, psn uint32) (*wire.Packet, bool) {
	ev, ok := q.reverseEV(int(pl))
	if !ok {
		return nil, false
	}
	return q.controlOn(ev, op, psn), true
}

// probeAnswerEV picks the EV for a SACK answering a probe that arrived on
// plane pl (0-based, or -1 when unknown): the plane's reverse EV if it is
// usable and the QP adopted it on evidence that it works (an answered probe
// or a SACK of its own data, EV-REV-2, EV-REV-3) after the last probe
// answer it sent on that plane; otherwise an EV drawn at random from every
// EV of that plane the QP has not DENIED, whatever its state, or, when the
// plane is unknown or down, from every such EV of the planes that are up
// (EV-SM-4). A QP learns that a reverse path died only when what it sends
// there goes unanswered, and a QP whose traffic has stopped learns
// nothing; on a reverse EV held without fresh evidence, every answer to
// the peer's probes may die while each side waits for the other's answers
// to find a working path. Drawing from the whole plane, ASSUMED_BAD EVs
// included (the QP may hold them bad on a stale verdict), gets answers
// through on any working reverse path, and a dead reverse EV costs at most
// one answer per piece of evidence.
func (q *QP) probeAnswerEV(pl int) (int, bool) {
	t := &q.ev
	if pl >= 0 && pl < t.set.planes && t.planeDown&(1<<pl) == 0 {
		r := &q.rsp
		if rv := t.rev[pl]; rv >= 0 && r.proof[pl] == rv && t.usable(int(rv)) {
			r.proof[pl] = -1 // the next answer needs new evidence
			return int(rv), true
		}
		if i, ok := q.randomEV(t.set.perPlane[pl], q.answerable); ok {
			return i, true
		}
	}
	return q.randomEV(nil, q.answerable)
}

// answerable reports whether EV i may carry a probe answer: not DENIED and
// on a plane that is up (EV-SM-4).
func (q *QP) answerable(i int) bool { return q.ev.state(i) != EVDenied && q.ev.planeUp(i) }

// randomEV returns an EV drawn uniformly from those of evs (of the whole
// table when evs is nil) for which want holds.
func (q *QP) randomEV(evs []uint16, want func(int) bool) (int, bool) {
	n := len(evs)
	if evs == nil {
		n = len(q.ev.e)
	}
	at := func(k int) int {
		if evs == nil {
			return k
		}
		return int(evs[k])
	}
	c := 0
	for k := range n {
		if want(at(k)) {
			c++
		}
	}
	if c == 0 {
		return -1, false
	}
	j := q.rng.intn(c)
	for k := range n {
		if want(at(k)) {
			if j == 0 {
				return at(k), true
			}
			j--
		}
	}
	return -1, false
}

// controlOn starts a control packet on EV ev: DSCP_CONTROL, Not-ECT, the
// QP's P_Key, to the peer QP (RSP-SACK-6, RSP-NACK-6).
func (q *QP) controlOn(ev int, op wire.Opcode, psn uint32) *wire.Packet {
	o := q.out.newPacket()
	q.fillHeaders(o, ClassControl, ev, false)
	o.Pkt.BTH = wire.BTH{Opcode: op, PKey: q.st.pkey, DestQP: q.attr.DestQPN, PSN: psn}
	return &o.Pkt
}

// sackBitmap returns the 64 bits from base (at or after cack + 1): bit k is
// 1 when PSN base+k is set in the tracking bitmap (WIRE-SETH-6).
func (r *responder) sackBitmap(base uint32) uint64 {
	return r.ring.bits64(base, int(r.maxWin)-int(wire.PSNDiff(base, r.epsn)))
}

// sendSACK builds a Reliability SACK for the packet with PSN trig
// (RSP-SACK-1): cack_psn, ack_psn_offset (0 when the offset does not fit 16
// bits), the 64-PSN bitmap based at cack + 1, or at trig − 63 when trig lies
// in the window beyond cack + 64 (RSP-SACK-2), the reflected EV and
// timestamp, m, dynamic MPR (MPR-DYN-2) and CC_STATE (RSP-SACK-7).
func (q *QP) sendSACK(trig, ev uint32, ts uint16, pl int8, m wire.Multipath) {
	q.sackFor(trig, ev, ts, pl, m, false)
}

// sackFor is sendSACK; answer sends it on the EV a probe answer would take
// (EV-SM-4), as for a retransmitted duplicate (EV-SM-6).
func (q *QP) sackFor(trig, ev uint32, ts uint16, pl int8, m wire.Multipath, answer bool) {
	r := &q.rsp
	cack := wire.PSNAdd(r.epsn, -1)
	base, off := r.epsn, int16(1)
	d := wire.PSNDiff(trig, cack)
	if d > 64 && uint32(d) <= r.maxWin {
		base, off = wire.PSNAdd(trig, -63), int16(d-63)
	}
	ackOff := int16(0)
	if d >= -32768 && d <= 32767 {
		ackOff = int16(d)
	}
	q.buildSACK(cack, base, off, ackOff, false, answer, ev, ts, pl, m)
}

// sendSACKProbe answers a probe: pr = 1 and probe_id in ack_psn_offset
// (WIRE-SETH-7), bitmap at cack + 1.
func (q *QP) sendSACKProbe(id uint16, ev uint32, ts uint16, pl int8, m wire.Multipath) {
	r := &q.rsp
	q.buildSACK(wire.PSNAdd(r.epsn, -1), r.epsn, 1, int16(id), true, true, ev, ts, pl, m)
}

// buildSACK builds and queues a SACK; answer selects the EV of a probe
// answer (EV-SM-4) instead of the plane's reverse EV (EV-REV-4).
func (q *QP) buildSACK(cack, base uint32, off, ackOff int16, probe, answer bool, ev uint32, ts uint16, pl int8, m wire.Multipath) {
	r := &q.rsp
	r.pend, r.ackDue = 0, Never
	var p *wire.Packet // BTH psn = cack_psn (WIRE-SETH-10)
	if answer {
		on, ok := q.probeAnswerEV(int(pl)) // EV-SM-4
		if !ok {
			return
		}
		p = q.controlOn(on, wire.OpSACK, cack)
	} else {
		var ok bool
		if p, ok = q.control(pl, wire.OpSACK, cack); !ok {
			return
		}
	}
	var mpr uint8
	if r.dyn {
		mpr = uint8(r.win / uint32(q.st.cfg.Test.MPRUnit))
	}
	p.SETH = wire.SETH{
		M: m, PR: probe, AckPSNOffset: ackOff, Entropy: ev, CACKPSN: cack, MPR: mpr,
		SPDCID: uint16(q.st.qp.QPN), DPDCID: uint16(q.attr.DestQPN),
		SACKOffset: off, SACKBitmap: r.sackBitmap(base),
		CC: wire.CCState{TxTimestamp: ts, OOOCount: uint16(min(r.held, 0x7FFF)), RC: r.restore,
			RcvCwndPen: r.pen & 0x7F, RcvdBytes: uint32(r.rcvdBytes/q.st.rcvdUnit) & wire.PSNMask},
	}
	r.restore = false
	if q.trace() {
		var f uint8
		if probe {
			f = FlagProbe
		}
		q.emit(Event{Kind: EvSACKSent, PSN: cack, EV: ev, Reason: uint8(m), Flags: f})
	}
}

// sendNACK builds a Reliability NACK (RSP-NACK-1, RSP-NACK-6,
// WIRE-NETH-3, WIRE-NETH-4).
func (q *QP) sendNACK(psn, ev uint32, ts uint16, pl int8, reason wire.NACKReason) {
	p, ok := q.control(pl, wire.OpNACK, psn)
	if !ok {
		return
	}
	p.NETH = wire.NETH{CCType: q.st.cfg.Profile.NETHCCType, Reason: reason, Entropy: ev, NACKPSN: psn, TxTimestamp: ts,
		SPDCID: uint16(q.st.qp.QPN), DPDCID: uint16(q.attr.DestQPN)}
	if q.trace() {
		q.emit(Event{Kind: EvNACKSent, PSN: psn, EV: ev, Reason: uint8(reason)})
	}
}

// sendAETH builds the RoCE transport ACK or NAK (RSP-ACK-1, WIRE-AETH-2).
// An ACK's BTH psn is cack and its msn counts the messages received
// completely.
func (q *QP) sendAETH(pl int8, syndrome uint8, psn uint32) {
	p, ok := q.control(pl, wire.OpAcknowledge, psn)
	if !ok {
		return
	}
	p.AETH = wire.AETH{Syndrome: syndrome, MSN: q.rsp.msnDone & wire.PSNMask}
	if q.trace() {
		q.emit(Event{Kind: EvACKSent, PSN: psn, MSN: uint16(q.rsp.msnDone), Reason: syndrome})
	}
}
