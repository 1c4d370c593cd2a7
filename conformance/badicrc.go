package conformance

import (
	"fmt"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// A frame whose ICRC is bad was corrupted before the capture point, after
// it (the capture's copy alone), or on its way to the receiver: whether
// its receiver had it whole the capture cannot tell. It is one
// WIRE-ICRC-1 finding against its sender and no arrival, answer or loss
// signal; a check that would fail on another frame because of what the
// receiver may have done with it is undecided instead, with a reason
// naming it:
//   - feedback claiming a PSN seen only with a bad ICRC (badICRCClaims),
//     whose claim is then taken as the responder's word (adoptClaim);
//   - feedback answering a PSN or probe of which a copy had a bad ICRC,
//     which may be the copy it answers (failUnsure);
//   - an arrival, ack_req PSN or endpoint request left unanswered, a
//     resend with no loss signal, or a PSN beyond una's window, when
//     feedback seen with a bad ICRC may be the answer, the signal or the
//     acknowledgement (badFeedbackSince);
//   - data on an EV retired by ALWAYS_SKIP after a probe answer on it that
//     had a bad ICRC, which may have revived it (retiredEV);
//   - a QP's first message, when a write before it had a bad ICRC.

// badCtx is what the badICRC hook of a check sees: a frame whose ICRC is
// bad, sent by src, and whether it is an endpoint response to a request
// still waiting at pt (epWaiting), which it may answer (EP-GEN-5).
type badCtx struct {
	pt        *point
	src       string
	r         *pcap.Record
	epWaiting bool
}

// badICRC takes in a frame whose ICRC is bad: the badICRC hooks judge it
// (one WIRE-ICRC-1 finding against its sender); its connection remembers
// it, for the checks above. An endpoint response no longer leaves its
// request waiting: it may answer it.
func (e *engine) badICRC(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	e.countNode(pt, src, dst, p)
	psn := p.BTH.PSN
	x := &e.bx
	*x = badCtx{pt: pt, src: src, r: r}
	k := epKey{dst, src, uint16(psn)}
	if p.BTH.Opcode == wire.OpEndpointResp && pt.ep[k] != nil {
		delete(pt.ep, k)
		x.epWaiting = true
	}
	for _, c := range e.hk.badICRC {
		c.badICRC(e, x)
	}
	switch op := p.BTH.Opcode; {
	case op.IsWrite():
		e.badICRCWrite(pt, src, dst, r)
	case op == wire.OpProbe:
		pt.badProbes[pt.badProbeN%len(pt.badProbes)] = badProbe{req: src, rsp: dst, qpn: p.BTH.DestQP, id: p.PETH.ProbeID, frame: e.frameNo}
		pt.badProbeN++
	case op == wire.OpSACK, op == wire.OpNACK, op == wire.OpAcknowledge:
		e.badICRCFeedback(pt, src, dst, p)
	}
}

// badICRCFeedback remembers feedback seen with a bad ICRC: it may answer
// arrivals (pending, ackMissing), be the loss signal of a resend
// (resendWhy) or, a probe answer, revive the EV it is on (EV-ST-7).
func (e *engine) badICRCFeedback(pt *point, src, dst string, p *wire.Packet) {
	fl, _ := e.feedbackFlow(pt, src, dst, p.BTH.DestQP, 0, false)
	if fl == nil {
		return
	}
	fl.badFbFrame, fl.badFbNs = e.frameNo, e.now
	if p.BTH.Opcode == wire.OpSACK && p.SETH.PR {
		if b, ok := fl.bad[p.SETH.Entropy]; ok && b.cause != evstate.CauseTimeout {
			b.revive = e.frameNo
			fl.bad[p.SETH.Entropy] = b
		}
	}
}

// badFeedbackSince returns the frame of the latest feedback seen with a
// bad ICRC at or after time ns, 0 when none.
func (fl *flow) badFeedbackSince(ns int64) int {
	if fl.badFbFrame != 0 && fl.badFbNs >= ns {
		return fl.badFbFrame
	}
	return 0
}

// unaSince returns when una last moved, 0 when it never did.
func (fl *flow) unaSince() int64 {
	if n := len(fl.unaHist); n > 0 {
		return fl.unaHist[n-1].ns
	}
	return 0
}

// badICRCWrite remembers a write seen with a bad ICRC: its PSN as arrived
// with a bad ICRC (fl.badArr) and the copy among the recent arrivals, for
// feedback that may answer it (findTrigger); or, before the connection
// has a flow, in the point's badFirst, for the flow to take.
func (e *engine) badICRCWrite(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	psn := p.BTH.PSN
	fl := pt.dataFlowOf(src, dst, p.BTH.DestQP)
	if fl == nil {
		pt.badFirst[e.frameNo%len(pt.badFirst)] = badWrite{req: src, rsp: dst, qpn: p.BTH.DestQP, psn: psn, frame: e.frameNo, payload: len(p.Payload)}
		return
	}
	fl.markBadICRC(e, psn, e.frameNo, len(p.Payload))
	fl.pushRecent(&arrival{psn: psn, ev: r.EV, frame: e.frameNo, ns: e.now, plane: pt.curPlane, discarded: true, badICRC: true})
	if fl.anchored && psn == wire.PSNAdd(fl.maxSent, 1) {
		// The sender's next PSN, corrupted on its way: it was sent,
		// so the next one is no gap (REQ-PSN-1).
		fl.maxSent = psn
	}
}

// markBadICRC records that PSN psn arrived with a bad ICRC in frame,
// with payload bytes.
func (fl *flow) markBadICRC(e *engine, psn uint32, frame, payload int) {
	b, ok := fl.badArr[psn]
	if !ok && !e.roomIn(len(fl.badArr), MaxPending) {
		return
	}
	b.frame, b.icrc, b.payload = frame, frame, payload
	fl.badArr[psn] = b
}

// takeBadFirst gives a new flow the bad-ICRC writes its point saw before
// it existed.
func (pt *point) takeBadFirst(e *engine, fl *flow) {
	for i := range pt.badFirst {
		b := &pt.badFirst[i]
		if b.frame != 0 && b.qpn == fl.key.qpn && b.req == fl.key.req && b.rsp == fl.key.rsp {
			fl.markBadICRC(e, b.psn, b.frame, b.payload)
			*b = badWrite{}
		}
	}
}

// dataFlowOf returns the flow dataFlow would return, without creating or
// completing one; nil when there is none.
func (pt *point) dataFlowOf(req, rsp string, qpn uint32) *flow {
	if f := pt.flows[flowKey{req: req, rsp: rsp, qpn: qpn}]; f != nil {
		return f
	}
	return pt.flows[flowKey{req: req, rsp: rsp, qpn: qpn & 0xFFFF, partial: true}]
}

// badICRCCopy returns the latest frame in which PSN q arrived with a bad
// ICRC, 0 when none.
func (fl *flow) badICRCCopy(q uint32) int {
	if len(fl.badArr) == 0 {
		return 0
	}
	return fl.badArr[q].icrc
}

// adoptClaim takes the responder's word that PSN q, seen only with a bad
// ICRC (frame), arrived whole: its feedback is judged with q arrived and
// its payload received (rcvd_bytes, ooo_count), and the cumulative point
// moves on.
func (e *engine) adoptClaim(fl *flow, q uint32, frame int) {
	if fl.arrived.get(q) != nil || !psnAfter(q, fl.rcum) || !e.roomIn(fl.arrived.len(), MaxPSNsPerFlow) {
		return
	}
	b := fl.badArr[q]
	fl.arrived.put(q, fl.newArrival(&arrival{psn: q, frame: frame, ns: e.now, valid: true, inWindow: true, payload: b.payload}))
	fl.bytes += int64(b.payload)
	if q == wire.PSNAdd(fl.rcum, 1) {
		e.advanceRcum(fl, false)
		fl.pushRcum(e.now, fl.rcum, fl.bytes)
	}
}

// badProbe returns the latest frame at pt holding a probe of fl with id
// seen with a bad ICRC, 0 when none.
func (pt *point) badProbe(fl *flow, id uint16) int {
	f := 0
	for _, b := range pt.badProbes {
		qpn := b.qpn
		if fl.key.partial {
			qpn &= 0xFFFF
		}
		if b.frame != 0 && b.id == id && qpn == fl.key.qpn && b.req == fl.key.req && b.rsp == fl.key.rsp {
			f = max(f, b.frame)
		}
	}
	return f
}

// failUnsure records, in place of a failure of an answer hook, an
// observation left undecided because the feedback may answer e.unsure, a
// frame seen with a bad ICRC.
func (e *engine) failUnsure(req caseReq, pt *point, node string, why func(f *Finding)) {
	bad := e.unsure
	reason := fmt.Sprintf("the feedback may answer frame %d, whose ICRC is bad", bad)
	e.undecidedWhy(req, pt, node, reason, func(f *Finding) {
		if why != nil {
			why(f)
		}
		f.Observed += " (undecidable: " + reason + ")"
		f.Related = append(f.Related, bad)
	})
}
