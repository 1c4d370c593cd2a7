package conformance

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
)

// Feedback addressed to the wrong QP (RSP-SACK-6: SACKs go to the peer
// QP's number; WIRE-SETH-9 for NACKs). A connection's flow knows the
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

// pendSample is how many held feedback frames of one dest_qp keep their
// evidence: as many as a case's findings, so that a held frame's finding
// is kept as one judged at once would be.
const pendSample = MaxFindings

// qpView is what a flow's traffic says of its requester's QP number.
type qpView struct {
	self      uint16 // bits 15:0, as the requester's first probe names it
	selfFrame int    // that probe's frame; 0: none seen
	// named is the first QP number other than its own that the responder
	// addresses the requester by, in a frame of kind namedBy.
	named      uint32
	namedFrame int // 0: none seen
	namedBy    string
	pend       *qpPending // nil until feedback is held
}

// qpPending holds feedback frames not yet judged, grouped by their
// dest_qp: two numbers at most, and the evidence of the first pendSample
// frames of each; feedback to a third number is not held (it stays
// passed).
type qpPending struct {
	groups [2]pendGroup
}

type pendGroup struct {
	dest   uint32
	n      int // frames held, with or without their evidence
	passed int // of the frames beyond the sample, those counted as a pass
	sample []pendFrame
}

type pendFrame struct {
	frame  int
	ns     int64
	plane  int
	nack   bool
	passed bool // counted as a pass when it arrived (not failed otherwise)
}

// destVerdict is what the judge can say of a feedback frame's dest_qp.
type destVerdict uint8

const (
	destUndecided destVerdict = iota
	destRight
	destWrong
)

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

// selfTrusted reports whether the requester's own naming decides: it
// named a QP, and not the responder's number while the responder
// addresses it by another.
func selfTrusted(fl *flow) bool {
	v := &fl.qp
	return v.selfFrame != 0 && (v.self != uint16(fl.key.qpn) || v.namedFrame == 0)
}

// judgeDest judges a feedback dest_qp by what is known now.
func (e *engine) judgeDest(fl *flow, dest uint32) destVerdict {
	if d, ok := e.declaredReqQP(fl); ok {
		return verdictOf(dest == d)
	}
	v := &fl.qp
	if v.namedFrame != 0 && ownQP(fl, dest) {
		return destWrong
	}
	if selfTrusted(fl) && v.self != uint16(fl.key.qpn) {
		return verdictOf(uint16(dest) == v.self)
	}
	return destUndecided
}

func verdictOf(ok bool) destVerdict {
	if ok {
		return destRight
	}
	return destWrong
}

// expectedDest describes the requester's QP a misaddressed feedback frame
// should have gone to, and the frame that names it (0: none).
func (e *engine) expectedDest(fl *flow) (string, int) {
	if d, ok := e.declaredReqQP(fl); ok {
		return fmt.Sprintf("dest_qp 0x%06x, the requester's QP as the PICS's qp_pairs declares it", d), 0
	}
	v := &fl.qp
	if selfTrusted(fl) && v.self != uint16(fl.key.qpn) {
		return fmt.Sprintf("dest_qp with bits 15:0 0x%04x, the requester's QP as its probe (frame %d) names it", v.self, v.selfFrame), v.selfFrame
	}
	return fmt.Sprintf("dest_qp 0x%06x, the requester's QP as the responder's own %s (frame %d) addresses it", v.named, v.namedBy, v.namedFrame), v.namedFrame
}

// feedbackQP judges the QP numbers of a SACK or NACK: its dest_qp against
// the requester's QP (held when not yet known) and its spdcid against the
// responder's (dcid).
func (e *engine) feedbackQP(x *fbCtx, spdcid uint16, what string) {
	fl, dest := x.fl, x.p.BTH.DestQP
	e.responderNames(x.pt, fl, dest, what)
	verdict := e.judgeDest(fl, dest)
	if verdict == destWrong {
		e.failedCases = append(e.failedCases, cWireDCID)
		e.misaddressed(x.pt, fl, dest, what == "NACK")
		return // one finding for the frame
	}
	passed := !e.frameFailed(cWireDCID) && !x.mismatch
	e.dcid(x.judgedRow, x.pt, fl, x.rsp, x.mismatch, spdcid)
	if verdict == destUndecided {
		e.hold(fl, dest, what == "NACK", passed, x.pt.curPlane)
	}
}

// misaddressed records a feedback frame sent to the wrong QP.
func (e *engine) misaddressed(pt *point, fl *flow, dest uint32, nack bool) {
	req, what := rWireDCID_RSP_SACK_6, "SACK"
	if nack {
		req, what = rWireDCID_WIRE_SETH_9, "NACK"
	}
	e.failWhy(req, pt, fl.key.rsp, 0, func(f *Finding) {
		exp, frame := e.expectedDest(fl)
		if frame != 0 {
			f.Related = []int{frame}
		}
		f.Expected = exp
		f.Observed = fmt.Sprintf("%s to dest_qp 0x%06x", what, dest)
		if ownQP(fl, dest) {
			f.Observed += ", the responder's own QP"
		}
	})
}

// feedbackNamesQP records what an ACK's dest_qp says of the requester's
// QP.
func (e *engine) feedbackNamesQP(x *fbCtx) {
	e.responderNames(x.pt, x.fl, x.p.BTH.DestQP, "ACK")
}

// responderNames records that the responder of fl addresses its
// requester by QP q in a frame of kind what, and judges the feedback held
// that this decides.
func (e *engine) responderNames(pt *point, fl *flow, q uint32, what string) {
	if fl.qp.namedFrame != 0 || ownQP(fl, q) {
		return
	}
	fl.qp.named, fl.qp.namedFrame, fl.qp.namedBy = q, e.frameNo, what
	e.settle(pt, fl)
}

// hold keeps a feedback frame whose dest_qp cannot be judged yet.
func (e *engine) hold(fl *flow, dest uint32, nack, passed bool, plane int) {
	if fl.qp.pend == nil {
		fl.qp.pend = &qpPending{}
	}
	g := fl.qp.pend.group(dest)
	if g == nil {
		return // a third number: not held
	}
	g.dest = dest
	g.n++
	if len(g.sample) < pendSample {
		if g.sample == nil {
			g.sample = make([]pendFrame, 0, pendSample)
		}
		g.sample = append(g.sample, pendFrame{frame: e.frameNo, ns: e.now, plane: plane, nack: nack, passed: passed})
	} else if passed {
		g.passed++
	}
}

// group returns the group of dest_qp dest, or an empty one; nil when two
// other numbers are held.
func (p *qpPending) group(dest uint32) *pendGroup {
	var free *pendGroup
	for i := range p.groups {
		g := &p.groups[i]
		if g.n > 0 && g.dest == dest {
			return g
		}
		if g.n == 0 && free == nil {
			free = g
		}
	}
	return free
}

// settle judges the held feedback of fl that what is known now decides:
// misaddressed frames turn from a pass into a failure, with their own
// frame, time and plane; the others stay passed.
func (e *engine) settle(pt *point, fl *flow) {
	if fl.qp.pend == nil {
		return
	}
	for i := range fl.qp.pend.groups {
		g := &fl.qp.pend.groups[i]
		if g.n == 0 {
			continue
		}
		switch e.judgeDest(fl, g.dest) {
		case destUndecided:
			continue
		case destWrong:
			e.failHeld(pt, fl, g)
		}
		g.n, g.passed, g.sample = 0, 0, g.sample[:0]
	}
}

// failHeld turns a group of held feedback frames into failures. A held
// frame's finding is placed as at its own frame; the frames beyond the
// sample are counted, without a finding, as their findings would not
// have been kept.
func (e *engine) failHeld(pt *point, fl *flow, g *pendGroup) {
	o := e.count(cWireDCID, pt, fl.key.rsp)
	now, plane, cur := e.now, pt.curPlane, pt.curFlow
	pt.curFlow = fl
	for _, h := range g.sample {
		if h.passed {
			o.ok--
		}
		e.now, pt.curPlane = h.ns, h.plane
		e.misaddressedAt(pt, fl, g.dest, h)
	}
	e.now, pt.curPlane, pt.curFlow = now, plane, cur
	rest := g.n - len(g.sample)
	o.ok -= g.passed
	o.bad += rest
	o.total += rest
}

// misaddressedAt records held feedback frame h as misaddressed.
func (e *engine) misaddressedAt(pt *point, fl *flow, dest uint32, h pendFrame) {
	frameNo := e.frameNo
	e.frameNo = h.frame
	e.misaddressed(pt, fl, dest, h.nack)
	e.frameNo = frameNo
}

// What a probe's spdcid is judged against (probeQP).
const (
	byNone      = iota
	byPICS      // qp_pairs
	byResponder // the QP the responder addresses the requester by
	bySelf      // the requester's first probe
)

// probeQP judges the spdcid of a probe, the prober's own QP number
// (WIRE-SETH-9), and learns what the probe names: the prober's QP for
// its flow, and its peer's QP (dest_qp) for the flows it answers as
// responder.
func (e *engine) probeQP(x *probeCtx) {
	fl, spdcid := x.fl, x.p.PETH.SPDCID
	e.proberNamesPeer(x)
	if e.frameFailed(cWireDCID) {
		return // the frame's dpdcid finding covers WIRE-SETH-9 already
	}
	v := &fl.qp
	want, by := spdcid, byNone
	switch d, ok := e.declaredReqQP(fl); {
	case ok:
		want, by = uint16(d), byPICS
	case v.namedFrame != 0 && spdcid == uint16(fl.key.qpn) && uint16(v.named) != spdcid:
		want, by = uint16(v.named), byResponder
	case v.selfFrame != 0:
		want, by = v.self, bySelf
	}
	if spdcid != want {
		e.failWhy(rWireDCID_WIRE_SETH_9, x.pt, x.req, 0, func(f *Finding) {
			basis := "as the PICS's qp_pairs declares it"
			switch by {
			case byResponder:
				basis = fmt.Sprintf("as the responder's %s (frame %d) addresses it, not the responder's own QP", v.namedBy, v.namedFrame)
				f.Related = []int{v.namedFrame}
			case bySelf:
				basis = fmt.Sprintf("as its probe of frame %d names it", v.selfFrame)
				f.Related = []int{v.selfFrame}
			}
			f.Expected = fmt.Sprintf("spdcid 0x%04x, the requester's QP %s", want, basis)
			f.Observed = fmt.Sprintf("spdcid 0x%04x", spdcid)
		})
		return
	}
	judgedRow{e.row(x.pt, x.req)}.pass(cWireDCID, false)
	if v.selfFrame == 0 {
		v.self, v.selfFrame = spdcid, e.frameNo
		e.settle(x.pt, fl)
	}
}

// proberNamesPeer records, on the flows whose responder QP is the
// prober's (bits 15:0, its spdcid) and whose requester is the probe's
// destination, that their responder addresses its requester by the
// probe's dest_qp.
func (e *engine) proberNamesPeer(x *probeCtx) {
	dst := x.fl.key.rsp
	for _, f := range x.pt.pairs[[2]string{dst, x.req}] {
		if uint16(f.key.qpn) == x.p.PETH.SPDCID {
			e.responderNames(x.pt, f, x.p.BTH.DestQP, "probe")
		}
	}
}

// feedbackDCID checks the QP numbers of a SACK or NACK (feedbackQP) and
// learns what an ACK's dest_qp names.
func feedbackDCID(e *engine, x *fbCtx) {
	switch x.op {
	case wire.OpSACK:
		e.feedbackQP(x, x.p.SETH.SPDCID, "SACK")
	case wire.OpNACK:
		e.feedbackQP(x, x.p.NETH.SPDCID, "NACK")
	case wire.OpAcknowledge:
		e.feedbackNamesQP(x)
	}
}

func probeDCID(e *engine, x *probeCtx) { e.probeQP(x) }
