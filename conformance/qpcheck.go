package conformance

import "github.com/openmrc/mrc/wire"

// Feedback addressed to the wrong QP (RSP-SACK-6: SACKs go to the peer
// QP's number; WIRE-SETH-9 for NACKs; RSP-ACK-1 for ACKNOWLEDGEs, which
// the requester would not receive). A connection's flow knows the
// responder's QP (its key, the dest_qp of the requester's writes and
// probes); what the requester's QP is, the judge learns from whatever
// names it, by authority:
//
//  1. the PICS's qp_pairs;
//  2. the requester itself: the spdcid of its probes;
//  3. the responder: the dest_qp of its ACKs, SACKs and NACKs, and of its
//     own probes (those whose spdcid is the connection's responder QP).
//
// Feedback whose dest_qp disagrees with 1 or 2 is misaddressed. With
// only 3, the responder addresses the requester by two numbers, and
// feedback sent to the responder's own QP number (as one implementation
// did) is the one at fault; both QPs may carry one number, so feedback to
// it alone is no fault. A requester naming the responder's QP number as
// its own, while the responder addresses it by another, has its probe at
// fault instead (2 is then set aside).
//
// Feedback that cannot be judged yet is held (qpPending) and judged once
// what arrives later decides it: each frame is one observation, passed
// when it arrives and turned into a failure if it is found misaddressed.
//
// The engine learns 3 as a frame arrives, before the hooks see it
// (responderNames, qpView); MRC-WIRE-SETH-002's check (feedbackDCID,
// probeDCID in checks_wire.go) learns 2 from the probes it passes, and
// judges and holds the feedback, in a state of its own (dcidState).

// qpView is what a flow's traffic says of its requester's QP number.
type qpView struct {
	// named is the first QP number other than its own that the responder
	// addresses the requester by, in a frame of kind namedBy.
	named      uint32
	namedFrame int // 0: none seen
	namedBy    string
	// probed is bits 15:0 of the requester's QP as its first probe names
	// it (spdcid), passing or not; agreed, the first QP number the
	// responder's feedback addresses it by whose bits 15:0 are probed.
	// The report's requester QP (requesterQP) comes from them.
	probed      uint16
	probedFrame int // 0: none seen
	agreed      uint32
	agreedFrame int // 0: none seen
}

// ownQP reports whether q is the flow's responder QP number (bits 15:0
// when only those are known).
func ownQP(fl *flow, q uint32) bool {
	if fl.key.partial {
		return uint16(q) == uint16(fl.key.qpn)
	}
	return q == fl.key.qpn
}

// declaredReqQP returns the requester's QP as the PICS's qp_pairs pairs
// it with the flow's responder QP.
func (e *engine) declaredReqQP(fl *flow) (uint32, bool) {
	return e.pics.declaredPeer(fl.key.rsp, fl.key.qpn, fl.key.partial, fl.key.req)
}

// feedbackNames records what a SACK's, NACK's or ACK's dest_qp says of
// its requester's QP, before the feedback hooks see it.
func (e *engine) feedbackNames(x *fbCtx) {
	what := "ACK"
	switch x.op {
	case wire.OpSACK:
		what = "SACK"
	case wire.OpNACK:
		what = "NACK"
	}
	e.responderNames(x.fl, x.p.BTH.DestQP, what)
	if v := &x.fl.qp; v.probedFrame != 0 && v.agreedFrame == 0 && uint16(x.p.BTH.DestQP) == v.probed {
		v.agreed, v.agreedFrame = x.p.BTH.DestQP, e.frameNo
	}
}

// responderNames records that the responder of fl addresses its
// requester by QP q in a frame of kind what: the first QP number other
// than its own (qpView.named; namedFrame is this frame when it names it
// first).
func (e *engine) responderNames(fl *flow, q uint32, what string) {
	if fl.qp.namedFrame != 0 || ownQP(fl, q) {
		return
	}
	fl.qp.named, fl.qp.namedFrame, fl.qp.namedBy = q, e.frameNo, what
}

// proberNamesPeer records what a probe names, before the probe hooks see
// it: on its flow, the prober's own QP (qpView.probed); on the flows
// whose responder QP is the prober's (bits 15:0, its spdcid) and whose
// requester is the probe's destination, that their responder addresses
// its requester by the probe's dest_qp.
func (e *engine) proberNamesPeer(x *probeCtx) {
	if v := &x.fl.qp; v.probedFrame == 0 {
		v.probed, v.probedFrame = x.p.PETH.SPDCID, e.frameNo
	}
	for _, f := range x.peerFlows() {
		if uint16(f.key.qpn) == x.p.PETH.SPDCID {
			e.responderNames(f, x.p.BTH.DestQP, "probe")
		}
	}
}

// peerFlows returns the flows of the other direction of the probe's node
// pair: those its prober is the responder of.
func (x *probeCtx) peerFlows() []*flow {
	return x.pt.pairs[[2]string{x.fl.key.rsp, x.req}]
}

// requesterQP returns the requester's QP of fl as the PICS or the
// traffic establishes it, for the report: the PICS's qp_pairs; else, when
// the requester's probes name its QP (and not as the responder's number
// while the responder addresses it by another, selfTrusted), the first
// number the responder addresses it by that agrees with them, or their
// bits 15:0 alone; else the first number other than its own the
// responder addresses it by; else the first feedback's dest_qp. One
// misaddressed feedback frame does not rename the requester's QP.
func (e *engine) requesterQP(fl *flow) (uint32, bool) {
	if d, ok := e.declaredReqQP(fl); ok {
		return d, true
	}
	v := &fl.qp
	switch {
	case v.probedFrame != 0 && (v.probed != uint16(fl.key.qpn) || v.namedFrame == 0):
		if v.agreedFrame != 0 {
			return v.agreed, true
		}
		return uint32(v.probed), true
	case v.namedFrame != 0:
		return v.named, true
	}
	return fl.reqQPN, fl.haveReqQPN
}
