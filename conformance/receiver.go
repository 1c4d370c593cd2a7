package conformance

import (
	"fmt"
	"math/bits"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// discardReqs are the strict findings that make a responder discard a
// packet (RSP-RCV-1, WIRE-PAY-1, WIRE-BTH-3, WIRE-LEN-1, ...): such a
// packet must cause no SACK, NACK or state change.
var discardReqs = map[string]bool{
	"WIRE-ICRC-1": true, "WIRE-BTH-3": true, "WIRE-LEN-1": true, "WIRE-OP-2": true, "WIRE-BTH-9": true,
	"WIRE-PAY-1": true, "WIRE-BTH-8": true, "WIRE-ENC-1": true, "WIRE-TRIM-1": true,
}

func discarded(r *pcap.Record) (bool, string) {
	if !r.Packet.Trimmed && !r.ICRCOK {
		return true, "a bad ICRC"
	}
	for _, v := range r.Violations {
		if discardReqs[v.Req] {
			return true, "a " + v.Req + " violation"
		}
	}
	return false, ""
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
func (fl *flow) newArrival(a arrival) *arrival {
	if len(fl.arrFree) == 0 {
		chunk := make([]arrival, 64)
		for i := range chunk {
			fl.arrFree = append(fl.arrFree, &chunk[i])
		}
	}
	p := fl.arrFree[len(fl.arrFree)-1]
	fl.arrFree = fl.arrFree[:len(fl.arrFree)-1]
	*p = a
	return p
}

// freeArrival returns an arrival taken out of the arrived table.
func (fl *flow) freeArrival(a *arrival) { fl.arrFree = append(fl.arrFree, a) }

// pushRecent remembers an arrival in the ring of recent arrivals; each
// links to the previous arrival of its PSN, so that findRecent follows
// one PSN's arrivals instead of scanning the ring.
func (fl *flow) pushRecent(a arrival) {
	if fl.recentIdx == nil {
		fl.recentIdx = make(map[uint32]uint64, 64)
	}
	fl.recentSeq++
	a.seq = fl.recentSeq
	a.prevSeq = fl.recentIdx[a.psn]
	fl.recentIdx[a.psn] = a.seq
	if len(fl.recent) < recentArrivals {
		fl.recent = append(fl.recent, a)
		return
	}
	slot := (a.seq - 1) % recentArrivals
	if old := &fl.recent[slot]; fl.recentIdx[old.psn] == old.seq {
		delete(fl.recentIdx, old.psn)
	}
	fl.recent[slot] = a
}

// findRecent returns the latest arrival of psn (a probe when probe) at or
// before now, and whether any arrival of psn carried ev.
func (fl *flow) findRecent(psn uint32, probe bool, ev uint32) (latest *arrival, evSeen bool) {
	for q := fl.recentIdx[psn]; q != 0 && q+recentArrivals > fl.recentSeq; {
		a := &fl.recent[(q-1)%recentArrivals]
		if a.seq != q {
			break
		}
		if a.probe == probe && !a.discarded {
			if latest == nil {
				latest = a
			}
			if a.ev == ev {
				evSeen = true
			}
		}
		q = a.prevSeq
	}
	return latest, evSeen
}

// setBaseline fixes the responder's cumulative point from the QP's first
// PSN (fromStart) or from the first feedback seen.
func (e *engine) setBaseline(fl *flow, cack uint32, fromStart bool) {
	fl.rGuess, fl.rBase = fromStart, cack
	fl.rKnown, fl.rStart, fl.rcum = true, fromStart, cack
	for q, a := range fl.arrived {
		if !psnAfter(q, cack) {
			delete(fl.arrived, q)
			fl.freeArrival(a)
		}
	}
	e.advanceRcum(fl)
	fl.pushRcum(e.now, fl.rcum, fl.bytes)
}

func (fl *flow) pushRcum(ns int64, rcum uint32, b int64) {
	if len(fl.rcumHist) >= 1024 {
		fl.rcumHist = append(fl.rcumHist[:0], fl.rcumHist[512:]...)
	}
	fl.rcumHist = append(fl.rcumHist, rcumEvent{rcum: rcum, ns: ns, bytes: b})
}

// rcumAt returns the cumulative point and byte count as of time t.
func (fl *flow) rcumAt(t int64) (rcumEvent, bool) {
	for i := len(fl.rcumHist) - 1; i >= 0; i-- {
		if fl.rcumHist[i].ns <= t {
			return fl.rcumHist[i], true
		}
	}
	return rcumEvent{}, false
}

func (e *engine) advanceRcum(fl *flow) {
	for {
		q := wire.PSNAdd(fl.rcum, 1)
		a := fl.arrived[q]
		if a == nil {
			return
		}
		delete(fl.arrived, q)
		fl.freeArrival(a)
		fl.rcum = q
		if _, ok := fl.ackReq[q]; ok {
			fl.ackDue[q] = e.now // cack reaches an ack_req PSN (RSP-ACK-1)
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
	p := &r.Packet
	psn, op := p.BTH.PSN, p.BTH.Opcode
	a := arrival{psn: psn, ev: r.EV, frame: e.frameNo, ns: e.now, ce: p.ECN() == 3, trimmed: p.Trimmed,
		lastHop: p.TrimmedLastHop, payload: len(p.Payload), plane: pt.curPlane}
	if p.Decoded&wire.HasTSETH != 0 {
		a.ts, a.hasTS = p.TSETH.TxTimestamp, true
	}
	bad, _ := discarded(r)
	// The responder discards data whose P_Key is not its QP's
	// (WIRE-BTH-12, RSP-RCV-1): such a packet is not received.
	a.discarded = bad || !e.pkeyOK(fl, p.BTH.PKey)
	a.valid = !p.Trimmed && !a.discarded
	if !fl.rKnown && e.pics.Capture.FromQPStart && !a.discarded && !p.BTH.Retransmit && op.IsFirst() && p.METH.MSN == 0 && p.METH.RQMSN == 0 {
		// The QP's first message (REQ-PSN-3), in a capture from QP start:
		// a guess that the responder's first feedback confirms.
		e.setBaseline(fl, wire.PSNAdd(psn, -1), true)
	}
	defer func() { fl.pushRecent(a) }()
	if !fl.rKnown {
		if a.valid && e.roomIn(len(fl.arrived), MaxPSNsPerFlow) && fl.arrived[psn] == nil {
			fl.arrived[psn] = fl.newArrival(a)
			fl.bytes += int64(a.payload)
		}
		if a.trimmed && !a.discarded && e.roomIn(len(fl.trimPend), MaxPending) {
			fl.trimPend[psn] = a
			fl.trimArr[psn] = e.frameNo
		}
		return
	}
	d := psnDist(psn, fl.rcum)
	w := e.window()
	dup := d == 0 || d >= 1<<23 || fl.arrived[psn] != nil
	oor := !dup && w > 0 && d > w
	a.duplicate, a.inWindow = dup, !dup && !oor
	needs := a.ce || p.BTH.AckReq || p.BTH.Retransmit || op.IsLast()
	switch {
	case a.discarded || (!a.valid && !a.trimmed):
		if e.roomIn(len(fl.badArr), MaxPending) {
			fl.badArr[psn] = e.frameNo
		}
	case oor:
		if e.roomIn(len(fl.oorPend), MaxPending) {
			fl.oorPend[psn] = a
		}
	case a.trimmed && !dup:
		if e.roomIn(len(fl.trimPend), MaxPending) {
			fl.trimPend[psn] = a
			fl.trimArr[psn] = e.frameNo
		}
		e.ok(cNoTrimNak, pt, rsp, false)
	case dup:
		a.needAnswer = true
		if e.roomIn(len(fl.needSACK), MaxPending) {
			fl.needSACK[psn] = a
		}
	default:
		if !e.roomIn(len(fl.arrived), MaxPSNsPerFlow) {
			e.capFlow(pt, fl)
			return
		}
		fl.arrived[psn] = fl.newArrival(a)
		delete(fl.refused, psn)
		fl.bytes += int64(a.payload)
		if needs || d != 1 {
			a.needAnswer = true
			if e.roomIn(len(fl.needSACK), MaxPending) {
				fl.needSACK[psn] = a
			}
		}
		if p.BTH.AckReq && e.roomIn(len(fl.ackReq), MaxPending) {
			fl.ackReq[psn] = a
		}
		if op.HasImm() {
			e.wimmArrive(pt, fl, rsp, a)
		}
		e.advanceRcum(fl)
		fl.pushRcum(e.now, fl.rcum, fl.bytes)
	}
}

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

// unarrive forgets an arrival the responder refused (a NACK or NAK for it).
func (e *engine) unarrive(fl *flow, psn uint32) {
	if e.roomIn(len(fl.refused), MaxPending) {
		fl.refused[psn] = e.frameNo
	}
	if a := fl.arrived[psn]; a != nil {
		fl.bytes -= int64(a.payload)
		delete(fl.arrived, psn)
		fl.freeArrival(a)
	}
	delete(fl.needSACK, psn)
	delete(fl.ackReq, psn)
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
	for _, a := range fl.arrived {
		fl.freeArrival(a)
	}
	clear(fl.arrived)
	clear(fl.needSACK)
	clear(fl.trimPend)
	clear(fl.oorPend)
	clear(fl.ackReq)
	clear(fl.ackDue)
	clear(fl.wimmExcess)
	fl.held, fl.rcumHist, fl.bytes = nil, nil, 0
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
	e.feedbackQP(pt, fl, src, p.BTH.DestQP, "RSP-SACK-6", "SACK")
	e.dcid(pt, fl, src, mismatch, s.SPDCID)
	e.pkeyCheck(pt, fl, src, p)
	e.rspPKeySeen(fl, p.BTH.PKey)
	e.sackAtRequester(pt, fl, s)
	e.sackAtResponder(pt, fl, src, r)
}

func (e *engine) dcid(pt *point, fl *flow, node string, mismatch bool, spdcid uint16) {
	if e.frameFailed(cWireDCID) {
		return // the frame's dpdcid finding covers WIRE-SETH-9 already
	}
	if mismatch {
		e.fail(cWireDCID, pt, node, false, Finding{Requirement: "WIRE-SETH-9",
			Expected: fmt.Sprintf("spdcid 0x%04x (bits 15:0 of the sending QP 0x%06x)", uint16(fl.key.qpn), fl.key.qpn),
			Observed: fmt.Sprintf("spdcid 0x%04x", spdcid)})
		return
	}
	e.ok(cWireDCID, pt, node, false)
}

// sackAtResponder judges a SACK as the responder sent it.
func (e *engine) sackAtResponder(pt *point, fl *flow, rsp string, r *pcap.Record) {
	p := &r.Packet
	s := &p.SETH
	t := e.now
	fl.lastFbNs, fl.haveFb = t, true
	cack := s.CACKPSN
	e.confirmBaseline(fl, cack)
	if !fl.rKnown {
		e.setBaseline(fl, cack, false)
		for bm := s.SACKBitmap; bm != 0; bm &= bm - 1 {
			fl.preBase[wire.PSNAdd(s.BitmapBase(), bits.TrailingZeros64(bm))] = true
			if len(fl.preBase) > 64 {
				break
			}
		}
		fl.lastCack, fl.haveCack = cack, true
		if s.PR {
			e.probeAnswer(pt, fl, rsp, s)
		}
		return // the first feedback is the baseline, not judged
	}
	e.claims(pt, fl, rsp, s)
	e.current(pt, fl, rsp, s)
	if s.PR {
		e.probeAnswer(pt, fl, rsp, s)
	} else {
		e.trigger(pt, fl, rsp, s)
	}
	e.counters(pt, fl, rsp, s)
	if !fl.haveCack || psnAfter(cack, fl.lastCack) {
		fl.lastCack, fl.haveCack = cack, true
	}
}

// claims checks that the SACK claims only arrivals (MRC-RSP-SACK-001).
func (e *engine) claims(pt *point, fl *flow, rsp string, s *wire.SETH) {
	cack := s.CACKPSN
	psn := func(q uint32) *uint32 { return u32p(q) }
	why := func(q uint32) (string, []int) {
		if f := fl.badArr[q]; f != 0 {
			return fmt.Sprintf("PSN %d arrived only with a bad ICRC, a wrong P_Key or another discard violation (frame %d)", q, f), []int{f}
		}
		if f := fl.trimArr[q]; f != 0 {
			return fmt.Sprintf("PSN %d arrived only trimmed (frame %d)", q, f), []int{f}
		}
		if f := fl.refused[q]; f != 0 {
			return fmt.Sprintf("PSN %d was refused by a NACK (frame %d)", q, f), []int{f}
		}
		return fmt.Sprintf("PSN %d was never seen arriving", q), nil
	}
	okAll := true
	if fl.haveCack && psnAfter(fl.lastCack, cack) {
		okAll = false
		e.fail(cClaims, pt, rsp, false, Finding{Requirement: "RSP-RCV-4", PSN: psn(cack),
			Expected: fmt.Sprintf("cack_psn ≥ %d, reported earlier", fl.lastCack), Observed: fmt.Sprintf("cack_psn %d: moved backward", cack)})
	}
	if psnAfter(cack, fl.rcum) {
		q := wire.PSNAdd(fl.rcum, 1)
		for fl.arrived[q] != nil {
			q = wire.PSNAdd(q, 1)
		}
		if !fl.preBase[q] {
			okAll = false
			w, rel := why(q)
			e.fail(cClaims, pt, rsp, false, Finding{Requirement: "WIRE-SETH-6", PSN: psn(q), Related: rel,
				Expected: fmt.Sprintf("cack_psn ≤ %d (every PSN up to it arrived)", fl.rcum),
				Observed: fmt.Sprintf("cack_psn %d: %s", cack, w)})
		}
	}
	base := s.BitmapBase()
	for bm := s.SACKBitmap; bm != 0; bm &= bm - 1 {
		q := wire.PSNAdd(base, bits.TrailingZeros64(bm))
		if !psnAfter(q, fl.rcum) || fl.arrived[q] != nil || fl.preBase[q] {
			continue
		}
		if d := psnDist(q, fl.rcum); d >= 1<<23 {
			continue
		}
		okAll = false
		w, rel := why(q)
		e.fail(cClaims, pt, rsp, false, Finding{Requirement: "WIRE-SETH-6", PSN: psn(q), Related: rel,
			Expected: "bitmap bits only for PSNs that arrived whole", Observed: "bit set: " + w})
	}
	if okAll {
		e.ok(cClaims, pt, rsp, false)
	}
}

// current checks that the SACK reports every arrival older than the
// reaction time (MRC-RSP-SACK-002).
func (e *engine) current(pt *point, fl *flow, rsp string, s *wire.SETH) {
	t := e.now - e.grace
	at, ok := fl.rcumAt(t)
	if !ok || len(fl.arrived) > 4096 {
		return
	}
	for q := range fl.refused {
		if !psnAfter(q, at.rcum) {
			return // refused after it was counted: the reconstruction is unsure
		}
	}
	if psnAfter(at.rcum, s.CACKPSN) {
		var f Finding
		if e.keeps(cCurrent, pt, rsp) {
			f = Finding{Requirement: "RSP-SACK-1", PSN: u32p(s.CACKPSN),
				Expected: fmt.Sprintf("cack_psn ≥ %d: every PSN up to it had arrived %d ns before", at.rcum, e.grace),
				Observed: fmt.Sprintf("cack_psn %d", s.CACKPSN)}
		}
		e.failAbsent(cCurrent, pt, rsp, true, f)
		return
	}
	// The lowest PSN the bitmap leaves out although it arrived (the
	// first in bitmap order, so that the report does not depend on map
	// order).
	base := s.BitmapBase()
	missing, bit := (*arrival)(nil), uint32(64)
	check := func(q uint32, a *arrival) {
		if a.ns > t || !psnAfter(q, s.CACKPSN) {
			return
		}
		if i := psnDist(q, base); i < bit && s.SACKBitmap&(1<<i) == 0 {
			missing, bit = a, i
		}
	}
	if len(fl.arrived) <= 64 {
		for q, a := range fl.arrived {
			check(q, a)
		}
	} else {
		for i := 0; i < 64; i++ {
			if a := fl.arrived[wire.PSNAdd(base, i)]; a != nil {
				check(a.psn, a)
			}
		}
	}
	if missing != nil {
		var f Finding
		if q := missing.psn; e.keeps(cCurrent, pt, rsp) {
			f = Finding{Requirement: "RSP-SACK-1", PSN: u32p(q), Related: []int{missing.frame},
				Expected: fmt.Sprintf("bitmap bit %d set: PSN %d arrived in frame %d", bit, q, missing.frame), Observed: "bit clear"}
		}
		e.failAbsent(cCurrent, pt, rsp, true, f)
		return
	}
	e.ok(cCurrent, pt, rsp, true)
}

// trigger checks the fields a SACK takes from the packet that triggered it.
func (e *engine) trigger(pt *point, fl *flow, rsp string, s *wire.SETH) {
	trig := s.AckPSN()
	a, evSeen := fl.findRecent(trig, false, s.Entropy)
	if fl.needSACK[trig].frame != 0 {
		delete(fl.needSACK, trig)
		e.ok(cImmediate, pt, rsp, false)
	}
	if a == nil {
		if s.AckPSNOffset == 0 {
			return // offset overflow is reported as 0 (RSP-SACK-2)
		}
		obs := fmt.Sprintf("ack_psn %d never arrived", trig)
		var rel []int
		if f := fl.badArr[trig]; f != 0 {
			obs, rel = fmt.Sprintf("ack_psn %d arrived only with a bad ICRC, a wrong P_Key or another discard violation (frame %d)", trig, f), []int{f}
		}
		e.fail(cTrigger, pt, rsp, false, Finding{Requirement: "RSP-SACK-1", PSN: u32p(trig), Related: rel,
			Expected: "ack_psn_offset naming a PSN that arrived", Observed: obs})
		return
	}
	okT := true
	if w := e.window(); w > 0 {
		d := psnDist(trig, s.CACKPSN)
		want := wire.PSNAdd(s.CACKPSN, 1)
		if d > 64 && d <= w {
			want = wire.PSNAdd(trig, -63)
		}
		if got := s.BitmapBase(); got != want {
			okT = false
			e.fail(cTrigger, pt, rsp, false, Finding{Requirement: "RSP-SACK-2", PSN: u32p(trig), Related: []int{a.frame},
				Expected: fmt.Sprintf("bitmap base %d", want), Observed: fmt.Sprintf("bitmap base %d (sack_offset %d)", got, s.SACKOffset)})
		}
	}
	wantTS := uint16(0)
	if a.hasTS {
		wantTS = a.ts
	}
	if s.CC.TxTimestamp != wantTS {
		okT = false
		e.fail(cTrigger, pt, rsp, false, Finding{Requirement: "WIRE-CCS-2", PSN: u32p(trig), Related: []int{a.frame},
			Expected: fmt.Sprintf("tx_timestamp %d reflected from frame %d", wantTS, a.frame), Observed: fmt.Sprintf("tx_timestamp %d", s.CC.TxTimestamp)})
	}
	if okT {
		e.ok(cTrigger, pt, rsp, false)
	}
	e.reflect(pt, rsp, s.Entropy, a, evSeen, "SACK")
	e.mVerdict(pt, rsp, s, a)
	e.samePlane(pt, rsp, a.plane, a.frame, "EV-REV-4", "SACK")
}

// samePlane checks that an answer leaves on its trigger's plane (EV-REV-4,
// EP-GEN-6).
func (e *engine) samePlane(pt *point, node string, plane, frame int, req, what string) {
	if plane < 0 || pt.curPlane < 0 {
		return
	}
	if plane != pt.curPlane {
		// A node with no usable EV left on the arrival plane answers on
		// another. Its path states follow its own transmissions and their
		// fate (timeouts of packets lost before a remote point), which
		// only a point at the node sees whole.
		e.failAbsent(cRevPlane, pt, node, false, Finding{Requirement: req, Related: []int{frame},
			Expected: fmt.Sprintf("the %s on plane %d, where frame %d arrived", what, plane, frame), Observed: fmt.Sprintf("sent on plane %d", pt.curPlane)})
		return
	}
	e.ok(cRevPlane, pt, node, false)
}

// reflect checks WIRE-EV-5: feedback carries the trigger's EV.
func (e *engine) reflect(pt *point, node string, got uint32, a *arrival, evSeen bool, what string) {
	if evSeen || got == a.ev {
		e.ok(cEVReflect, pt, node, false)
		return
	}
	e.fail(cEVReflect, pt, node, false, Finding{Requirement: "WIRE-EV-5", PSN: u32p(a.psn), EV: u32p(got), Related: []int{a.frame},
		Expected: fmt.Sprintf("entropy 0x%08x, the EV of frame %d", a.ev, a.frame), Observed: fmt.Sprintf("%s entropy 0x%08x", what, got)})
}

// mVerdict checks RSP-SACK-3 and RSP-PRB-2.
func (e *engine) mVerdict(pt *point, node string, s *wire.SETH, a *arrival) {
	okM := s.M == wire.MAlwaysSkip || (a.ce && s.M == wire.MSkipOnce) || (!a.ce && s.M == wire.MNone)
	if okM {
		e.ok(cMVerdict, pt, node, false)
		return
	}
	exp := "m = NONE (trigger not CE-marked)"
	req := "RSP-SACK-3"
	if a.ce {
		exp = "m = SKIP_ONCE (trigger CE-marked)"
	}
	if a.probe {
		req = "RSP-PRB-2"
	}
	f := Finding{Requirement: req, PSN: u32p(a.psn), EV: u32p(a.ev), Related: []int{a.frame},
		Expected: exp, Observed: "m = " + s.M.String()}
	if !a.ce {
		// A CE mark applied after the capture point is not seen there.
		e.failAbsent(cMVerdict, pt, node, false, f)
		return
	}
	e.fail(cMVerdict, pt, node, false, f)
}

// counters checks CC_STATE rcvd_bytes and ooo_count (MRC-RSP-SACK-005).
func (e *engine) counters(pt *point, fl *flow, rsp string, s *wire.SETH) {
	if !fl.rStart || len(fl.arrived) > 4096 {
		return
	}
	unit := int64(e.prof.RcvdBytesUnit)
	hi := fl.bytes / unit
	lo := hi
	if at, ok := fl.rcumAt(e.now - e.grace); ok {
		lo = at.bytes / unit
	} else {
		lo = 0
	}
	got := int64(s.CC.RcvdBytes)
	span := (hi - lo) & 0xFFFFFF
	if (got-lo)&0xFFFFFF > span {
		f := Finding{Requirement: "WIRE-CCS-1",
			Expected: fmt.Sprintf("rcvd_bytes in [%d, %d] (%d distinct payload bytes / %d)", lo&0xFFFFFF, hi&0xFFFFFF, fl.bytes, unit),
			Observed: fmt.Sprintf("rcvd_bytes %d", got)}
		if (lo-got)&0xFFFFFF < (got-hi)&0xFFFFFF {
			// Fewer bytes than the arrivals seen: arrivals the
			// responder may not have had.
			e.failAbsent(cCounters, pt, rsp, false, f)
		} else {
			e.fail(cCounters, pt, rsp, false, f)
		}
		return
	}
	if s.CACKPSN == fl.rcum {
		lo, hi := 0, 0
		for _, a := range fl.arrived {
			hi++
			if a.ns <= e.now-e.grace {
				lo++
			}
		}
		lo, hi = min(lo, 32767), min(hi, 32767)
		if g := int(s.CC.OOOCount); g < lo || g > hi {
			f := Finding{Requirement: "RSP-SACK-7",
				Expected: fmt.Sprintf("ooo_count in [%d, %d] (PSNs held beyond cack)", lo, hi), Observed: fmt.Sprintf("ooo_count %d", g)}
			if g < lo {
				e.failAbsent(cCounters, pt, rsp, false, f)
			} else {
				e.fail(cCounters, pt, rsp, false, f)
			}
			return
		}
	}
	e.ok(cCounters, pt, rsp, false)
}

// probeAnswer matches a pr = 1 SACK with a probe (RSP-PRB-1, WIRE-SETH-7).
func (e *engine) probeAnswer(pt *point, fl *flow, rsp string, s *wire.SETH) {
	id := uint16(s.AckPSNOffset)
	for i := len(fl.probes) - 1; i >= 0; i-- {
		a := fl.probes[i]
		if a.probeID != id || a.ev != s.Entropy {
			continue
		}
		fl.probes = append(fl.probes[:i], fl.probes[i+1:]...)
		if a.hasTS && s.CC.TxTimestamp != a.ts {
			e.fail(cProbeAns, pt, rsp, false, Finding{Requirement: "RSP-PRB-1", EV: u32p(a.ev), Related: []int{a.frame},
				Expected: fmt.Sprintf("tx_timestamp %d reflected from the probe", a.ts), Observed: fmt.Sprintf("tx_timestamp %d", s.CC.TxTimestamp)})
		} else {
			e.ok(cProbeAns, pt, rsp, false)
		}
		e.ok(cEVReflect, pt, rsp, false)
		e.mVerdict(pt, rsp, s, &a)
		e.samePlane(pt, rsp, a.plane, a.frame, "EV-REV-4", "probe answer")
		return
	}
	// Not a probe we saw: a wrong EV or id, or no probe at all.
	for _, a := range fl.probes {
		if a.probeID == id {
			e.fail(cEVReflect, pt, rsp, false, Finding{Requirement: "WIRE-EV-5", EV: u32p(s.Entropy), Related: []int{a.frame},
				Expected: fmt.Sprintf("entropy 0x%08x of probe %d", a.ev, id), Observed: fmt.Sprintf("entropy 0x%08x", s.Entropy)})
			return
		}
	}
	e.fail(cProbeAns, pt, rsp, false, Finding{Requirement: "WIRE-SETH-7",
		Expected: "pr = 1 only in answer to a probe", Observed: fmt.Sprintf("pr = 1 SACK with probe_id %d, EV 0x%08x: no such probe arrived", id, s.Entropy)})
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
	e.feedbackQP(pt, fl, src, p.BTH.DestQP, "WIRE-SETH-9", "NACK")
	e.dcid(pt, fl, src, mismatch, n.SPDCID)
	e.pkeyCheck(pt, fl, src, p)
	e.rspPKeySeen(fl, p.BTH.PKey)
	e.nackAtRequester(pt, fl, n)
	e.nackAtResponder(pt, fl, src, n)
}

func (e *engine) nackAtResponder(pt *point, fl *flow, rsp string, n *wire.NETH) {
	fl.lastFbNs, fl.haveFb = e.now, true
	psn := n.NACKPSN
	switch n.Reason {
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop:
		if v, _ := e.pics.Declared("trim_nack"); !v {
			e.fail(cNoTrimNak, pt, rsp, false, Finding{Requirement: "RSP-NACK-2", PSN: u32p(psn),
				Expected: "trimmed packets discarded silently (no trim-NACK support declared)", Observed: n.Reason.String() + " NACK"})
		}
		a, ok := fl.trimPend[psn]
		if !ok {
			// The trimmed arrival was not seen: at a point before the
			// trimming switch it looked whole.
			e.failAbsent(cTrimNACK, pt, rsp, false, Finding{Requirement: "RSP-NACK-1", PSN: u32p(psn),
				Expected: "a trim NACK only for a new PSN that arrived trimmed", Observed: fmt.Sprintf("%s NACK for PSN %d, which did not arrive trimmed (or was answered already)", n.Reason, psn)})
			return
		}
		delete(fl.trimPend, psn)
		rel := []int{a.frame}
		want := wire.NACKTrimmed
		if a.lastHop {
			want = wire.NACKTrimmedLastHop
		}
		okN := true
		if n.Reason != want {
			okN = false
			e.fail(cTrimNACK, pt, rsp, false, Finding{Requirement: "RSP-NACK-1", PSN: u32p(psn), Related: rel,
				Expected: want.String() + " for the trimmed DSCP of frame " + itoa(a.frame), Observed: n.Reason.String()})
		}
		wantTS := uint16(0)
		if a.hasTS {
			wantTS = a.ts
		}
		if n.TxTimestamp != wantTS {
			okN = false
			e.fail(cTrimNACK, pt, rsp, false, Finding{Requirement: "WIRE-NETH-3", PSN: u32p(psn), Related: rel,
				Expected: fmt.Sprintf("tx_timestamp %d of the trimmed packet", wantTS), Observed: fmt.Sprintf("tx_timestamp %d", n.TxTimestamp)})
		}
		if okN {
			e.ok(cTrimNACK, pt, rsp, false)
		}
		e.reflect(pt, rsp, n.Entropy, &a, false, "NACK")
		e.samePlane(pt, rsp, a.plane, a.frame, "EV-REV-4", "NACK")
	case wire.NACKPSNOutOfWindow:
		if a, ok := fl.oorPend[psn]; ok {
			delete(fl.oorPend, psn)
			e.ok(cOOR, pt, rsp, false)
			e.reflect(pt, rsp, n.Entropy, &a, false, "NACK")
			return
		}
		if !fl.rKnown || !fl.haveCack {
			// No cumulative point reported yet (an out-of-window PSN before
			// any in-window one): the window is unknown, nothing to judge;
			// the PSN was not received.
			e.unarrive(fl, psn)
			return
		}
		if w := e.window(); w > 0 && psnDist(psn, fl.lastCack) > w && psnDist(psn, fl.lastCack) < 1<<23 {
			e.ok(cOOR, pt, rsp, false) // out of window for the cack it last reported
			e.unarrive(fl, psn)
			return
		}
		e.fail(cOOR, pt, rsp, false, Finding{Requirement: "RSP-NACK-4", PSN: u32p(psn),
			Expected: "PSN_OOR_WINDOW only for a PSN beyond cack + 128 × mpr_dest", Observed: fmt.Sprintf("PSN_OOR_WINDOW NACK for PSN %d, inside the window", psn)})
	case wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource:
		e.unarrive(fl, psn)
	case wire.NACKUnexpEvent:
		for q := range fl.wimmExcess {
			delete(fl.wimmExcess, q)
			e.ok(cWIMMRsp, pt, rsp, false)
		}
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
	e.pkeyCheck(pt, fl, src, p)
	e.rspPKeySeen(fl, p.BTH.PKey)
	a := &p.AETH
	psn := p.BTH.PSN
	switch a.Type() {
	case wire.AETHTypeACK:
		e.advanceUna(fl, psn)
		fl.lastFbNs, fl.haveFb = e.now, true
		e.confirmBaseline(fl, psn)
		if !fl.rKnown {
			e.setBaseline(fl, psn, false)
			return
		}
		if psnAfter(psn, fl.rcum) && psnDist(psn, fl.rcum) < 1<<23 {
			q := wire.PSNAdd(fl.rcum, 1)
			e.fail(cClaims, pt, src, false, Finding{Requirement: "RSP-RCV-4", PSN: u32p(q),
				Expected: fmt.Sprintf("ACK psn ≤ %d (every PSN up to it arrived)", fl.rcum), Observed: fmt.Sprintf("ACK psn %d: PSN %d never arrived whole", psn, q)})
		} else {
			e.ok(cClaims, pt, src, false)
		}
		for q := range fl.ackReq {
			// An ACK covers the ack_req PSNs at or behind its psn, within
			// half the PSN space: one 2^23 or more away covers nothing
			// (24-bit serial arithmetic, RSP-RCV-6).
			if psnDist(psn, q) < 1<<23 {
				delete(fl.ackReq, q)
				delete(fl.ackDue, q)
				e.ok(cACK, pt, src, false)
			}
		}
	case wire.AETHTypeNAK:
		fl.lastFbNs, fl.haveFb = e.now, true
		if v := a.Value(); v >= 1 && v <= 3 {
			e.fatalAt(pt, fl)
		}
		if a.Value() == wire.AETHNAKInvalidRequest {
			if _, ok := fl.wimmExcess[psn]; ok {
				delete(fl.wimmExcess, psn)
				e.ok(cWIMMRsp, pt, src, false)
			}
		}
		e.unarrive(fl, psn)
	}
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
	fl.addEV(r.EV)
	e.tlPacket(pt, fl, r)
	e.pkeyCheck(pt, fl, src, p)
	e.probeQP(pt, fl, src, p.PETH.SPDCID)
	e.probeAtRequester(pt, fl, src, r.EV)
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

// endpoint handles endpoint requests and responses on QP 0x2.
func (e *engine) endpoint(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	id := uint16(p.BTH.PSN)
	if p.BTH.Opcode == wire.OpEndpointReq {
		h := &p.ERTH
		switch {
		case h.Op == wire.EPPortStatusUpdate && h.PortStatusMask&1 != 0:
			e.fail(cWireEP, pt, src, false, Finding{Requirement: "WIRE-ERTH-2", Expected: "port_status_mask bit 0 clear (ports are 1-based)", Observed: fmt.Sprintf("mask 0x%08x", h.PortStatusMask)})
		case h.Op == wire.EPEVProbe && h.PortStatusMask != 0:
			e.fail(cWireEP, pt, src, false, Finding{Requirement: "WIRE-ERTH-2", Expected: "port_status_mask 0 in an EV_PROBE", Observed: fmt.Sprintf("mask 0x%08x", h.PortStatusMask)})
		default:
			e.ok(cWireEP, pt, src, false)
		}
		if h.Op == wire.EPPortStatusUpdate {
			if bad, _ := discarded(r); !bad && len(pt.psu) < MaxPending {
				pt.psu[[2]string{src, dst}] = psuState{mask: h.PortStatusMask, ns: e.now, frame: e.frameNo}
			}
		}
		if bad, _ := discarded(r); !bad && len(pt.ep) < MaxPending {
			pt.ep[epKey{src, dst, id}] = &epReq{frame: e.frameNo, ns: e.now, op: h.Op, ts: h.TxTimestamp, plane: pt.curPlane}
		}
		return
	}
	k := epKey{dst, src, id}
	q := pt.ep[k]
	if q == nil {
		return
	}
	delete(pt.ep, k)
	e.ok(cEPAnswer, pt, src, false)
	e.samePlane(pt, src, q.plane, q.frame, "EP-GEN-6", "endpoint response")
	h := &p.EETH
	if h.Op != q.op || h.TxTimestamp != q.ts {
		e.fail(cWireEP, pt, src, false, Finding{Requirement: "WIRE-EETH-1", Related: []int{q.frame},
			Expected: fmt.Sprintf("op %s and tx_timestamp %d of request frame %d", q.op, q.ts, q.frame),
			Observed: fmt.Sprintf("op %s, tx_timestamp %d", h.Op, h.TxTimestamp)})
		return
	}
	e.ok(cWireEP, pt, src, false)
}

// finish judges what the end of the capture leaves unanswered.
func (e *engine) finish() {
	if e.fragments > 0 {
		e.note("%d IP fragments were discarded and not judged (WIRE-ENC-5, AMB-33)", e.fragments)
	}
	for _, pn := range sortedKeys(e.points) {
		pt := e.points[pn]
		// The end's findings carry their own frames' planes, not the last
		// frame's (keep fills an unset plane from curPlane).
		pt.curFlow, pt.curPlane = nil, 0
		for _, fl := range pt.sortedFlows() {
			pt.curFlow = fl
			e.finishFlow(pt, fl)
		}
		pt.curFlow = nil
		for _, k := range sortedEP(pt.ep) {
			q := pt.ep[k]
			last := e.nodes[nodePoint{k.rsp, pn}]
			f := Finding{Requirement: "EP-GEN-5", Frame: q.frame, TimeNs: q.ns, Plane: q.plane,
				Expected: "an ENDPOINT_RESPONSE with request id " + itoa(int(k.id)), Observed: "none"}
			if last != nil && last.lastNs > q.ns+e.grace {
				e.failAbsent(cEPAnswer, pt, k.rsp, false, f)
			} else {
				e.undecided(cEPAnswer, pt, k.rsp, "the capture ends before an answer could be expected", &f)
			}
		}
	}
}

func (e *engine) finishFlow(pt *point, fl *flow) {
	rsp, req := fl.key.rsp, fl.key.req
	alive := func(a arrival) bool { return fl.haveFb && fl.lastFbNs > a.ns+e.grace }
	pend := func(cs caseID, reqID, exp string, m map[uint32]arrival) {
		for _, q := range sortedPSNs(m) {
			a := m[q]
			f := Finding{Requirement: reqID, Frame: a.frame, TimeNs: a.ns, Plane: a.plane, PSN: u32p(q), EV: u32p(a.ev),
				Expected: exp, Observed: "none before the end of the capture"}
			if alive(a) {
				f.Observed = "none, although the responder kept sending feedback"
				e.failAbsent(cs, pt, rsp, false, f)
			} else {
				e.undecided(cs, pt, rsp, "the capture ends before an answer could be expected", &f)
			}
		}
	}
	pend(cImmediate, "RSP-SACK-5", "a SACK answering this packet (ack_psn = its PSN)", fl.needSACK)
	if e.pics.Has("trim_nack") {
		pend(cTrimNACK, "RSP-NACK-1", "a TRIMMED or TRIMMED_LASTHOP NACK for this trimmed packet", fl.trimPend)
	}
	pend(cOOR, "RSP-NACK-4", "a PSN_OOR_WINDOW NACK for this out-of-window packet", fl.oorPend)
	pend(cWIMMRsp, "WIMM-RSP-4", "the WriteIMM limit refusal (AETH NAK invalid request or UNEXP_EVENT NACK)", fl.wimmExcess)
	probes := map[uint32]arrival{}
	for i, a := range fl.probes {
		probes[uint32(i)] = a
	}
	pend(cProbeAns, "RSP-PRB-1", "a SACK with pr = 1 answering this probe", probes)
	// ACKs due: the cumulative point stepped onto an ack_req PSN (RSP-ACK-1).
	for _, q := range sortedPSNs(fl.ackReq) {
		a := fl.ackReq[q]
		due, ok := fl.ackDue[q]
		if !ok {
			continue // cack never reached it
		}
		due = max(due, a.ns)
		f := Finding{Requirement: "RSP-ACK-1", Frame: a.frame, TimeNs: a.ns, Plane: a.plane, PSN: u32p(q),
			Expected: "an ACKNOWLEDGE covering this ack_req PSN once cack passed it", Observed: "none"}
		if fl.haveFb && fl.lastFbNs > due+e.grace {
			e.failAbsent(cACK, pt, rsp, false, f)
		} else {
			e.undecided(cACK, pt, rsp, "the capture ends before the ACK could be expected", &f)
		}
	}
	// NACKed PSNs the requester never recovered (LR-NACK-1, LR-NACK-3).
	for _, q := range sortedPSNs(fl.nackPend) {
		pn := fl.nackPend[q]
		f := Finding{Requirement: "LR-NACK-1", Frame: pn.frame, TimeNs: pn.ns, PSN: u32p(q), Plane: -1,
			Expected: fmt.Sprintf("PSN %d retransmitted after its %s NACK", q, pn.reason), Observed: "not retransmitted"}
		if pn.reason == wire.NACKPSNOutOfWindow {
			f.Requirement = "LR-NACK-3"
		}
		if fl.lastNewNs > pn.ns+e.grace && !fl.fatal {
			f.Observed = "not retransmitted, while new PSNs were sent after the NACK"
			e.failAbsent(cNackRecov, pt, req, false, f)
		} else {
			e.undecided(cNackRecov, pt, req, "the capture ends before the retransmission could be expected", &f)
		}
	}
	if fl.exhausted && !fl.exhaustedBad {
		e.ok(cRetryLim, pt, req, false)
	}
}

func sortedPSNs[V any](m map[uint32]V) []uint32 {
	out := make([]uint32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slicesSort(out)
	return out
}
