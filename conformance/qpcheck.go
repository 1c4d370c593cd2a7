package conformance

import "fmt"

// Feedback addressed to the wrong QP (RSP-SACK-6: SACKs go to the peer
// QP's number; WIRE-SETH-9 for NACKs' dpdcid). The requester names its
// own QP in the spdcid of its probes; feedback whose dest_qp differs from
// it in bits 15:0 is misaddressed. Feedback sent to the responder's own
// QP number, as one implementation did, is the common case.

// learnPeerQP records the requester's QP bits 15:0 as its probe names them.
func (e *engine) learnPeerQP(fl *flow, spdcid uint16) {
	if !fl.havePeerQP {
		fl.peerQP, fl.havePeerQP, fl.peerQPFrame = spdcid, true, e.frameNo
	}
}

// probeQP judges a probe's spdcid against the QP the feedback so far was
// sent to. When that feedback went to the responder's own QP number and
// the probe names another, the feedback is at fault, not the probe.
func (e *engine) probeQP(pt *point, fl *flow, src string, spdcid uint16) {
	defer e.learnPeerQP(fl, spdcid)
	if !fl.haveReqQPN {
		return
	}
	if uint16(fl.reqQPN) != spdcid && fl.reqQPN == fl.key.qpn {
		e.failedCases = append(e.failedCases, cWireDCID)
		e.failWhy(cWireDCID, pt, fl.key.rsp, 0, "RSP-SACK-6", func(f *Finding) {
			f.Frame, f.Related = fl.reqQPNFrame, []int{e.frameNo}
			f.Expected = fmt.Sprintf("feedback to the requester's QP, 0x%04x in bits 15:0 as its probe (frame %d) names it", spdcid, e.frameNo)
			f.Observed = fmt.Sprintf("feedback to dest_qp 0x%06x, the responder's own QP", fl.reqQPN)
		})
		return
	}
	e.dcid(judgedRow{e.row(pt, src)}, pt, fl, src, uint16(fl.reqQPN) != spdcid, spdcid)
}

// feedbackQP judges the dest_qp of a SACK or NACK against the QP the
// requester named; it reports whether it found a fault.
func (e *engine) feedbackQP(pt *point, fl *flow, rsp string, destQP uint32, req reqID, what string) bool {
	if !fl.havePeerQP || uint16(destQP) == fl.peerQP {
		return false
	}
	e.failedCases = append(e.failedCases, cWireDCID)
	e.failWhy(cWireDCID, pt, rsp, 0, req, func(f *Finding) {
		f.Related = []int{fl.peerQPFrame}
		f.Expected = fmt.Sprintf("dest_qp with bits 15:0 0x%04x, the requester's QP as its probe (frame %d) names it", fl.peerQP, fl.peerQPFrame)
		f.Observed = fmt.Sprintf("%s to dest_qp 0x%06x", what, destQP)
		if destQP == fl.key.qpn {
			f.Observed += ", the responder's own QP"
		}
	})
	return true
}
