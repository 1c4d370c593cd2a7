package conformance

import (
	"fmt"
	"math/bits"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// caseID is a passive case of the catalog, as the checkers record it: a
// typed index, so that an observation costs no string hashing. init
// checks the names against the catalog.
type caseID uint8

// The passive cases.
const (
	cWireENC caseID = iota
	cWireUDP
	cWireICRC
	cWireGEN
	cWireBTH1
	cWireBTH2
	cWireBTH3
	cWireBTH4
	cWireFlags
	cWirePKey
	cWireOP
	cWirePAY
	cWireMSG
	cWireMETH
	cWIMMOrd
	cWireTSETH
	cWireAETH
	cWireSETH
	cWireDCID
	cWireNETH
	cWirePETH
	cWireEP
	cDSCP
	cECN
	cDSCPSRv6
	cDSCPTrim
	cEVEnc
	cEVReflect
	cPSN
	cRtxSame
	cRtxAcked
	cRtxWhy
	cRtxFlag
	cNackEV
	cNackHold
	cFatal
	cNackRecov
	cRetryLim
	cMPR
	cWIMMReq
	cTSETHAll
	cEVBad
	cEVTimeout
	cProbePace
	cClaims
	cCurrent
	cTrigger
	cMVerdict
	cCounters
	cImmediate
	cTrimNACK
	cNoTrimNak
	cOOR
	cACK
	cProbeAns
	cWIMMRsp
	cEPAnswer
	cRtxOrder
	cRtxFirst
	cPSU
	cEcho
	cRevPlane
	numCases
)

// caseNames are the catalog IDs of the passive cases.
var caseNames = [numCases]string{
	cWireENC:   "MRC-WIRE-ENC-001",
	cWireUDP:   "MRC-WIRE-UDP-001",
	cWireICRC:  "MRC-WIRE-ICRC-001",
	cWireGEN:   "MRC-WIRE-GEN-001",
	cWireBTH1:  "MRC-WIRE-BTH-001",
	cWireBTH2:  "MRC-WIRE-BTH-002",
	cWireBTH3:  "MRC-WIRE-BTH-003",
	cWireBTH4:  "MRC-WIRE-BTH-004",
	cWireFlags: "MRC-WIRE-BTH-005",
	cWirePKey:  "MRC-WIRE-BTH-006",
	cWireOP:    "MRC-WIRE-OP-001",
	cWirePAY:   "MRC-WIRE-PAY-001",
	cWireMSG:   "MRC-WIRE-MSG-001",
	cWireMETH:  "MRC-WIRE-METH-001",
	cWIMMOrd:   "MRC-WIMM-ORD-001",
	cWireTSETH: "MRC-WIRE-TSETH-001",
	cWireAETH:  "MRC-WIRE-AETH-001",
	cWireSETH:  "MRC-WIRE-SETH-001",
	cWireDCID:  "MRC-WIRE-SETH-002",
	cWireNETH:  "MRC-WIRE-NETH-001",
	cWirePETH:  "MRC-WIRE-PETH-001",
	cWireEP:    "MRC-WIRE-EP-001",
	cDSCP:      "MRC-WIRE-DSCP-001",
	cECN:       "MRC-WIRE-DSCP-002",
	cDSCPSRv6:  "MRC-WIRE-DSCP-003",
	cDSCPTrim:  "MRC-WIRE-DSCP-004",
	cEVEnc:     "MRC-WIRE-EV-001",
	cEVReflect: "MRC-WIRE-EV-002",
	cPSN:       "MRC-REQ-PSN-001",
	cRtxSame:   "MRC-REQ-PSN-002",
	cRtxAcked:  "MRC-LR-RTX-001",
	cRtxWhy:    "MRC-LR-RTX-002",
	cRtxFlag:   "MRC-LR-RTX-003",
	cNackEV:    "MRC-LR-NACK-001",
	cNackHold:  "MRC-LR-NACK-002",
	cFatal:     "MRC-LR-NACK-003",
	cNackRecov: "MRC-LR-NACK-004",
	cRetryLim:  "MRC-LR-TMR-001",
	cMPR:       "MRC-MPR-WIN-001",
	cWIMMReq:   "MRC-WIMM-REQ-001",
	cTSETHAll:  "MRC-REQ-HDR-001",
	cEVBad:     "MRC-EV-BAD-001",
	cEVTimeout: "MRC-EV-BAD-002",
	cProbePace: "MRC-EV-PRB-001",
	cClaims:    "MRC-RSP-SACK-001",
	cCurrent:   "MRC-RSP-SACK-002",
	cTrigger:   "MRC-RSP-SACK-003",
	cMVerdict:  "MRC-RSP-SACK-004",
	cCounters:  "MRC-RSP-SACK-005",
	cImmediate: "MRC-RSP-SACK-006",
	cTrimNACK:  "MRC-RSP-NACK-001",
	cNoTrimNak: "MRC-RSP-NACK-002",
	cOOR:       "MRC-RSP-NACK-003",
	cACK:       "MRC-RSP-ACK-001",
	cProbeAns:  "MRC-RSP-PRB-001",
	cWIMMRsp:   "MRC-WIMM-RSP-001",
	cEPAnswer:  "MRC-EP-GEN-001",
	cRtxOrder:  "MRC-LR-RTX-004",
	cRtxFirst:  "MRC-REQ-TX-001",
	cPSU:       "MRC-EP-PSU-001",
	cEcho:      "MRC-WIRE-EV-003",
	cRevPlane:  "MRC-EV-REV-001",
}

func (c caseID) String() string { return caseNames[c] }

// baseTimeout is T = 1.024 µs × 2^timeout in ns (LR-TMR-1).
func baseTimeout(timeout int) int64 { return 1024 << timeout }

// write handles a write packet at a point: the requester's view of it as
// a transmission and the responder's view of it as an arrival.
func (e *engine) write(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	fl := e.dataFlow(pt, src, dst, p.BTH.DestQP)
	if fl == nil {
		return
	}
	pt.curFlow = fl
	fl.touch(e.frameNo, pt.curPlane)
	fl.addEV(r.EV)
	fl.writes++
	if p.Trimmed {
		fl.trimmed++
	}
	e.tlPacket(pt, fl, r)
	e.pkeyCheck(pt, fl, src, p)
	e.sendWrite(pt, fl, src, r)
	e.arriveWrite(pt, fl, dst, r)
}

func (e *engine) pkeyCheck(pt *point, fl *flow, node string, p *wire.Packet) {
	if !fl.havePKey {
		// A P_Key the responder discards (a tester's crafted frame, say)
		// cannot be the connection's: it is judged against the
		// responder's key and does not become the reference.
		if !e.pkeyOK(fl, p.BTH.PKey) {
			e.fail(cWirePKey, pt, node, false, Finding{Requirement: "WIRE-BTH-12",
				Expected: "the P_Key of the responder's QP", Observed: fmt.Sprintf("P_Key 0x%04x", p.BTH.PKey)})
			return
		}
		fl.pkey, fl.havePKey, fl.pkeyFrame = p.BTH.PKey, true, e.frameNo
		e.ok(cWirePKey, pt, node, false)
		return
	}
	if p.BTH.PKey != fl.pkey {
		e.fail(cWirePKey, pt, node, false, Finding{Requirement: "WIRE-BTH-12", Related: []int{fl.pkeyFrame},
			Expected: fmt.Sprintf("P_Key 0x%04x, as in frame %d of this connection", fl.pkey, fl.pkeyFrame),
			Observed: fmt.Sprintf("P_Key 0x%04x", p.BTH.PKey)})
		return
	}
	e.ok(cWirePKey, pt, node, false)
}

// sendWrite judges a write as the requester sent it.
func (e *engine) sendWrite(pt *point, fl *flow, req string, r *pcap.Record) {
	p := &r.Packet
	psn, t, ev := p.BTH.PSN, e.now, r.EV
	st := fl.psns.get(psn)
	acked := fl.haveUna && !psnAfter(psn, fl.una)
	isNew := st == nil && !acked && (!fl.haveMax || psnAfter(psn, fl.maxSent))
	preCapture := false
	if isNew && !fl.anchored && p.BTH.Retransmit {
		isNew, preCapture = false, true // a resend of a PSN sent before the capture began
	}
	if !isNew && st == nil && !acked && !preCapture {
		preCapture = true // behind the highest PSN sent, first seen now
	}
	fd := func(req, exp, obs string, related ...int) Finding {
		return Finding{Requirement: req, PSN: u32p(psn), EV: u32p(ev), Expected: exp, Observed: obs, Related: related}
	}
	fl.lastWriteNs = t

	// QP in ERROR sends nothing (LR-NACK-4, QP-ST-11).
	if fl.fatal {
		if t >= fl.fatalNs {
			e.fail(cFatal, pt, req, true, fd("QP-ST-11", "no packet after the fatal NACK/NAK of frame "+itoa(fl.fatalFrame),
				"a write sent after it", fl.fatalFrame))
		} else {
			e.ok(cFatal, pt, req, true)
		}
	}
	// EVs retired by ALWAYS_SKIP or a timeout carry no data (EV-ST-4, EV-ST-5).
	if b, ok := fl.bad[ev]; ok {
		if t >= b.since {
			rid := "EV-ST-4"
			if b.cs == cEVTimeout {
				rid = "EV-ST-5"
			}
			f := fd(rid,
				fmt.Sprintf("no data on EV 0x%08x, retired by %s in frame %d", ev, b.kind, b.frame),
				"data sent on it", b.frame)
			if b.unsure {
				e.undecided(b.cs, pt, req, "with EVs the requester may have retired on losses its SACKs showed, the ev_min_active floor may have kept this one in use (EV-SET-6)", &f)
			} else {
				e.fail(b.cs, pt, req, true, f)
			}
		}
	} else if len(fl.bad) > 0 {
		// One observation for the retirement of the lowest retired EV
		// (not map order, which would make the counts vary run to run).
		lo, cs := ^uint32(0), cEVBad
		for v, b := range fl.bad {
			if v <= lo {
				lo, cs = v, b.cs
			}
		}
		e.ok(cs, pt, req, true)
	}
	if at, ok := fl.maybeBad[ev]; ok && t >= at+e.grace {
		delete(fl.maybeBad, ev) // in use after the loss was inferred
	}
	// REQ-HDR-1 (SHOULD): a TSETH in every write.
	if p.Decoded&wire.HasTSETH != 0 {
		e.ok(cTSETHAll, pt, req, false)
	} else {
		var f Finding
		if e.keeps(cTSETHAll, pt, req) {
			f = fd("REQ-HDR-1", "a TSETH in every write", "no TSETH")
		}
		e.fail(cTSETHAll, pt, req, false, f)
	}
	e.payloadSize(pt, fl, req, p)
	e.mprCheck(pt, fl, req, p)

	e.psuCheck(pt, fl, req, "a write")
	e.echoCheck(pt, fl, req, p, ev)
	if isNew {
		fl.lastNewNs = t
		for _, q := range sortedPSNs(fl.nackPend) {
			pn := fl.nackPend[q]
			if pn.trim() && !pn.overtaken && t >= pn.ns+e.grace {
				pn.overtaken = true
				fl.nackPend[q] = pn
				// The retransmission may have been sent and lost before
				// the capture point.
				e.failAbsent(cRtxFirst, pt, req, true, fd("REQ-TX-2", fmt.Sprintf("the retransmission of PSN %d (TRIMMED NACK in frame %d) before new PSNs", q, pn.frame),
					fmt.Sprintf("new PSN %d sent first", psn), pn.frame))
			}
		}
		if p.BTH.Retransmit {
			// The first sighting is the first transmission only where
			// nothing is lost before the capture point.
			e.failAbsent(cRtxFlag, pt, req, false, fd("WIRE-BTH-5", "rtx = 0 on the first transmission of a PSN", "rtx = 1 on the first sighting"))
		} else {
			e.ok(cRtxFlag, pt, req, false)
		}
		if fl.anchored {
			if want := wire.PSNAdd(fl.maxSent, 1); psn != want {
				// The skipped PSNs may have been lost before the point.
				var f Finding
				if e.keeps(cPSN, pt, req) {
					f = fd("REQ-PSN-1", fmt.Sprintf("PSN %d (the highest sent, %d, plus one)", want, fl.maxSent),
						fmt.Sprintf("PSN %d: %d PSNs skipped", psn, psnDist(psn, want)))
				}
				e.failAbsent(cPSN, pt, req, false, f)
			} else {
				e.ok(cPSN, pt, req, false)
			}
		} else {
			e.ok(cPSN, pt, req, false)
			if e.pics.Capture.FromQPStart || (p.METH.MSN == 0 && p.METH.RQMSN == 0 && p.BTH.Opcode.IsFirst()) {
				fl.startKnown, fl.firstPSN = true, psn
			}
		}
		fl.anchored, fl.haveMax, fl.maxSent = true, true, psn
		e.dscpWrite(pt, req, p, ev, false, false)
		if !e.roomIn(fl.psns.len(), MaxPSNsPerFlow) {
			e.capFlow(pt, fl)
		} else {
			h, pay := fingerprints(p)
			ok, jumped := fl.psns.put(psn, psnInfo{firstFrame: e.frameNo, lastFrame: e.frameNo, lastNs: t, lastEV: ev, sends: 1,
				hdrFP: h, payFP: pay, payOK: !p.Trimmed})
			if jumped {
				e.note("connection %s at %q: PSN %d lies more than %d PSNs beyond those outstanding; the earlier ones are no longer tracked", fl.key, pt.name, psn, MaxPSNsPerFlow)
			}
			if !ok {
				e.capFlow(pt, fl)
			}
		}
		e.message(pt, fl, req, p)
		return
	}

	// A resend.
	fl.retransmits++
	// A PSN first seen behind the highest one sent is a resend, or, at a
	// point away from the requester where packets sprayed over several
	// planes arrive out of order, a first transmission overtaken: the
	// flag and class findings then rest on order the point may not show.
	reordered := st == nil
	e.dscpWrite(pt, req, p, ev, true, reordered)
	if !p.BTH.Retransmit {
		first := 0
		if st != nil {
			first = st.firstFrame
		}
		var f Finding
		if e.keeps(cRtxFlag, pt, req) {
			f = fd("WIRE-BTH-5", "rtx = 1 on a retransmission", "rtx = 0 on a resend of PSN "+itoa(int(psn))+firstNote(first), nonZero(first)...)
		}
		if reordered {
			e.failAbsent(cRtxFlag, pt, req, false, f)
		} else {
			e.fail(cRtxFlag, pt, req, false, f)
		}
	} else {
		e.ok(cRtxFlag, pt, req, false)
	}
	if pn := fl.nackPend[psn]; pn.frame != 0 {
		delete(fl.nackPend, psn)
		e.ok(cNackRecov, pt, req, false)
		if pn.trim() && t >= pn.ns+e.grace {
			if !pn.overtaken {
				e.ok(cRtxFirst, pt, req, true)
			}
			older := false
			for _, q := range sortedPSNs(fl.nackPend) {
				o := fl.nackPend[q]
				if o.trim() && psnAfter(psn, q) && t >= o.ns+e.grace {
					older = true
					// Its retransmission may have been lost before the point.
					e.failAbsent(cRtxOrder, pt, req, true, fd("LR-RTX-2", fmt.Sprintf("PSN %d first: older, and NACKed in frame %d", q, o.frame),
						fmt.Sprintf("PSN %d retransmitted first", psn), o.frame))
					break
				}
			}
			if !older {
				e.ok(cRtxOrder, pt, req, true)
			}
		}
	}
	// LR-RTX-1: never resend what was acknowledged.
	switch {
	case acked:
		ae := fl.ackOf(psn)
		if ae.frame != 0 && t-ae.ns < e.grace {
			e.ok(cRtxAcked, pt, req, true) // the acknowledgement may not have reached it yet
		} else {
			e.fail(cRtxAcked, pt, req, true, fd("LR-RTX-1", fmt.Sprintf("no resend: cumulatively acknowledged (cack %d) in frame %d", ae.una, ae.frame),
				"PSN resent (go-back-N)", nonZero(ae.frame)...))
		}
	case st != nil && st.ackSel:
		if t-st.ackNs < e.grace {
			e.ok(cRtxAcked, pt, req, true)
		} else {
			e.fail(cRtxAcked, pt, req, true, fd("LR-SACK-2", fmt.Sprintf("no resend: selectively acknowledged in the SACK bitmap of frame %d", st.ackFrame),
				"PSN resent (go-back-N)", st.ackFrame))
		}
	default:
		e.ok(cRtxAcked, pt, req, false)
	}
	if st == nil || acked || st.ackSel {
		if st != nil {
			st.sends++
			st.lastNs, st.lastEV, st.lastFrame = t, ev, e.frameNo
		}
		return
	}
	// REQ-PSN-2: the resend repeats the original.
	h, pay := fingerprints(p)
	switch {
	case h != st.hdrFP:
		e.fail(cRtxSame, pt, req, false, fd("REQ-PSN-2", "the opcode, flags, METH, RETH and ImmDt of frame "+itoa(st.firstFrame), "different headers", st.firstFrame))
	case st.payOK && !p.Trimmed && pay != st.payFP:
		e.fail(cRtxSame, pt, req, false, fd("REQ-PSN-2", "the payload of frame "+itoa(st.firstFrame), "a different payload", st.firstFrame))
	default:
		e.ok(cRtxSame, pt, req, false)
	}
	if !st.payOK && !p.Trimmed {
		st.payFP, st.payOK = pay, true
	}
	// EV-ST-13, LR-NACK-2: the retransmission after a NACK.
	if n := st.nack; n.kind == sigNACK {
		if ev == n.ev {
			if t-n.ns >= e.grace {
				f := fd("EV-ST-13", fmt.Sprintf("an EV other than 0x%08x, which the %s NACK of frame %d reflects", n.ev, n.reason, n.frame),
					fmt.Sprintf("retransmitted on EV 0x%08x", ev), n.frame)
				// Unless no other loss signal could have come between, the
				// NACK's own retransmission may have been lost before the
				// point and this one answer a later signal.
				quiet := fl.lastFbNs <= n.ns
				to := e.pics.Parameters.Timeout
				switch {
				case to != nil && t-n.ns >= baseTimeout(*to)-e.tol:
					// A base timeout or more after the NACK: when no other EV
					// could carry it, the stall timer's expiry (at least T)
					// lets the PSN go back on the NACKed EV (LR-SM-3, AMB-44),
					// and the capture cannot show which EVs were usable.
					e.undecided(cNackEV, pt, req, "retransmitted on the NACKed EV at least a base timeout after the NACK, which LR-SM-3 allows when no other EV is usable (AMB-44)",
						&Finding{Requirement: "EV-ST-13", PSN: u32p(psn), EV: u32p(ev), Related: []int{n.frame}})
				case quiet && to != nil:
					e.fail(cNackEV, pt, req, true, f)
				default:
					e.failAbsent(cNackEV, pt, req, true, f)
				}
			} else {
				e.undecided(cNackEV, pt, req, "retransmitted on the NACKed EV within the reaction time of the NACK", &Finding{Requirement: "EV-ST-13", PSN: u32p(psn), EV: u32p(ev), Related: []int{n.frame}})
			}
		} else {
			e.ok(cNackEV, pt, req, false)
		}
		switch n.reason {
		case wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource:
			if rtt := e.pics.Parameters.BaseRTTNs; rtt != nil {
				if t-n.ns >= *rtt-e.tol {
					e.ok(cNackHold, pt, req, true)
				} else {
					e.fail(cNackHold, pt, req, true, fd("LR-NACK-2", fmt.Sprintf("retransmission ≥ %d ns after the %s NACK of frame %d", *rtt, n.reason, n.frame),
						fmt.Sprintf("%d ns after it", t-n.ns), n.frame))
				}
			}
		}
	}
	// LR-RTX-1, LR-TMR-4/5: a loss signal justifies the resend.
	timedOut := false
	switch {
	case st.loss.kind != 0:
		e.ok(cRtxWhy, pt, req, false)
	case e.pics.Parameters.Timeout == nil:
		e.undecided(cRtxWhy, pt, req, "no NACK or SACK gap; timeout not declared", nil)
	default:
		T := baseTimeout(*e.pics.Parameters.Timeout)
		if el := t - st.lastNs; el >= T-e.tol {
			e.ok(cRtxWhy, pt, req, true)
			timedOut = true
		} else {
			e.fail(cRtxWhy, pt, req, true, fd("LR-RTX-1", fmt.Sprintf("a NACK, a SACK gap, or ≥ %d ns (base timeout) since the previous send in frame %d", T, st.lastFrame),
				fmt.Sprintf("resent %d ns after it with no loss signal", el), st.lastFrame))
		}
	}
	if timedOut {
		// EV-ST-5: the EV of the timed-out packet is retired.
		fl.retryEvents++
		e.retire(pt, fl, st.lastEV, t+e.grace, st.lastFrame, "timeout", cEVTimeout)
	}
	// LR-TMR-7: no retransmission once the retry counter is exhausted.
	if fl.exhausted && t >= fl.exhaustedNs+e.grace {
		fl.exhaustedBad = true
		e.fail(cRetryLim, pt, req, true, fd("LR-TMR-7", "no retransmission after the retry counter was exhausted", "a retransmission"))
	}
	e.checkExhausted(fl, t)
	st.sends++
	st.lastNs, st.lastEV, st.lastFrame = t, ev, e.frameNo
	st.loss, st.nack = signal{}, signal{}
	if fl.haveMarked && !psnAfter(psn, fl.markedTo) {
		fl.markedTo = wire.PSNAdd(psn, -1) // its loss evidence is spent: the next SACK past it marks it again
	}
}

func firstNote(f int) string {
	if f == 0 {
		return ""
	}
	return " first sent in frame " + itoa(f)
}

func nonZero(f int) []int {
	if f == 0 {
		return nil
	}
	return []int{f}
}

// checkExhausted notes when the retry events since una last advanced
// exceed linear_cnt + exp_cnt (LR-TMR-7).
func (e *engine) checkExhausted(fl *flow, t int64) {
	q := &e.pics.Parameters
	if q.LinearCnt == nil || q.ExpCnt == nil || *q.ExpCnt >= 25 || fl.exhausted {
		return
	}
	if fl.retryEvents > *q.LinearCnt+*q.ExpCnt {
		fl.exhausted, fl.exhaustedNs = true, t
	}
}

func (e *engine) capFlow(pt *point, fl *flow) {
	if !fl.capped {
		fl.capped = true
		e.hitBound(fmt.Sprintf("connection %s at %q: PSN table full; later PSNs are not tracked", fl.key, pt.name))
		e.undecided(cPSN, pt, fl.key.req, "PSN state bound exceeded", nil)
		e.undecided(cRtxWhy, pt, fl.key.req, "PSN state bound exceeded", nil)
	}
}

// retire marks an EV ASSUMED_BAD from time since, unless that would leave
// fewer than ev_min_active usable EVs (EV-SET-6).
func (e *engine) retire(pt *point, fl *flow, ev uint32, since int64, frame int, kind string, cs caseID) {
	if _, ok := fl.bad[ev]; ok || !e.roomIn(len(fl.bad), MaxEVsPerFlow) {
		return
	}
	unsure := false
	if m := e.pics.Parameters.EVMinActive; m != nil {
		left := len(fl.evs) - len(fl.bad) - 1
		if left < *m {
			return
		}
		// A requester also retires EVs on losses it infers from the SACK
		// bitmap (not only on timeouts): those the judge has not retired
		// may have used up the floor (EV-SET-6).
		for v := range fl.maybeBad {
			if _, b := fl.bad[v]; !b && v != ev {
				left--
			}
		}
		unsure = left < *m
	}
	fl.bad[ev] = badEV{since: since, frame: frame, kind: kind, cs: cs, unsure: unsure}
	e.ok(cs, pt, fl.key.req, false)
}

// ackOf returns the una update that first acknowledged psn.
func (f *flow) ackOf(psn uint32) unaEvent {
	for _, u := range f.unaHist {
		if !psnAfter(psn, u.una) {
			return u
		}
	}
	return unaEvent{}
}

// dscpWrite checks a write's traffic class (WIRE-DSCP-1, WIRE-DSCP-5).
func (e *engine) dscpWrite(pt *point, node string, p *wire.Packet, ev uint32, resend, reordered bool) {
	if p.Trimmed {
		return
	}
	prof := e.prof
	want, class := prof.DSCP.Trimmable, "DSCP_TRIMMABLE (first transmission)"
	if resend {
		want, class = prof.DSCP.TrimmableRetx, "DSCP_TRIMMABLE_RETX (retransmission)"
		if prof.Retransmit == 1 {
			want, class = prof.DSCP.Control, "DSCP_CONTROL (retransmission, retransmit_class control)"
		}
	}
	req := "WIRE-DSCP-1"
	got := p.DSCP()
	rtxClass := prof.DSCP.TrimmableRetx
	if prof.Retransmit == 1 {
		rtxClass = prof.DSCP.Control
	}
	// A first sighting flagged and classed as a retransmission: its first
	// transmission may have been lost before the capture point.
	absent := !resend && p.BTH.Retransmit && got == rtxClass || resend && reordered && !p.BTH.Retransmit
	switch v, declared := e.pics.Declared("trim_nack"); {
	case declared && !v:
		want, class, req = prof.DSCP.NoTrim, "DSCP_NO_TRIM (peer without trim NACKs)", "WIRE-DSCP-5"
	case !declared && got == prof.DSCP.NoTrim:
		want = got // trim_nack undeclared: DSCP_NO_TRIM is allowed too
	}
	if got != want {
		var f Finding
		if e.keeps(cDSCP, pt, node) {
			if _, declared := e.pics.Declared("trim_nack"); !declared {
				class += " or DSCP_NO_TRIM (trim_nack not declared)"
			}
			f = Finding{Requirement: req, PSN: u32p(p.BTH.PSN), EV: u32p(ev), Expected: fmt.Sprintf("DSCP %d, %s", want, class), Observed: fmt.Sprintf("DSCP %d", got)}
		}
		if absent {
			e.failAbsent(cDSCP, pt, node, false, f)
		} else {
			e.fail(cDSCP, pt, node, false, f)
		}
		return
	}
	e.ok(cDSCP, pt, node, false)
}

// payloadSize checks WIRE-PAY-1.
func (e *engine) payloadSize(pt *point, fl *flow, node string, p *wire.Packet) {
	if p.Trimmed {
		return
	}
	n, op := len(p.Payload), p.BTH.Opcode
	mtu, declared := fl.mtu, false
	if m := e.pics.Parameters.PathMTU; m != nil {
		mtu, declared = *m, true
	}
	bad := ""
	switch op {
	case wire.OpWriteFirst, wire.OpWriteMiddle:
		if mtu == 0 && n > 0 {
			fl.mtu, mtu = n, n
		}
		if n != mtu {
			bad = fmt.Sprintf("%s with %d bytes, want exactly the path MTU %d", op, n, mtu)
		}
	case wire.OpWriteLast, wire.OpWriteLastImm:
		if n == 0 {
			bad = fmt.Sprintf("%s with no payload", op)
		}
	}
	limit := 4096
	if mtu > 0 {
		limit = mtu
	}
	if bad == "" && n > limit {
		bad = fmt.Sprintf("%s with %d bytes, more than the path MTU %d", op, n, limit)
	}
	if bad != "" {
		exp := "a payload size the opcode allows"
		if !declared {
			exp += " (path MTU inferred from the connection's FIRST/MIDDLE packets)"
		}
		e.fail(cWirePAY, pt, node, false, Finding{Requirement: "WIRE-PAY-1", PSN: u32p(p.BTH.PSN), Expected: exp, Observed: bad})
		return
	}
	e.ok(cWirePAY, pt, node, false)
}

// mprCheck checks MPR-WIN-1 for a write.
func (e *engine) mprCheck(pt *point, fl *flow, node string, p *wire.Packet) {
	m := e.pics.Parameters.MPR
	if m == nil {
		return
	}
	base, known := fl.una, fl.haveUna
	if !known && fl.startKnown {
		base, known = wire.PSNAdd(fl.firstPSN, -1), true
	}
	if !known {
		return
	}
	mpr := *m
	if e.pics.Has("dynamic_mpr") && len(fl.dynMPR) > 0 {
		// The most permissive value the requester may still act on: the
		// largest advertised within the reaction time, and the one before.
		adv := 0
		for i := len(fl.dynMPR) - 1; i >= 0; i-- {
			adv = max(adv, int(fl.dynMPR[i].una))
			if e.now-fl.dynMPR[i].ns >= e.grace {
				break
			}
		}
		mpr = min(mpr, adv)
	}
	w := uint32(128 * mpr)
	d := psnDist(p.BTH.PSN, base)
	if d == 0 || d >= 1<<23 {
		return // acknowledged already: LR-RTX-1's business
	}
	if d > w {
		e.fail(cMPR, pt, node, false, Finding{Requirement: "MPR-WIN-1", PSN: u32p(p.BTH.PSN),
			Expected: fmt.Sprintf("PSN ≤ una %d + %d (128 × MPR %d)", base, w, mpr),
			Observed: fmt.Sprintf("PSN %d, %d beyond una", p.BTH.PSN, d)})
		return
	}
	e.ok(cMPR, pt, node, false)
}

// message assembles messages from first transmissions in PSN order and
// checks segmentation, RETH, MSN and RQMSN (WIRE-RETH-2, WIRE-PAY-2,
// REQ-SEG-2, WIRE-METH-2, WIRE-METH-3).
func (e *engine) message(pt *point, fl *flow, node string, p *wire.Packet) {
	m := &fl.msg
	op, psn := p.BTH.Opcode, p.BTH.PSN
	fail := func(cs caseID, req, exp, obs string) {
		e.fail(cs, pt, node, false, Finding{Requirement: req, PSN: u32p(psn), Expected: exp, Observed: obs, Related: nonZero(m.firstFr)})
	}
	if m.active && psn != m.nextPSN {
		m.active = false // a PSN gap (REQ-PSN-1 reports it); restart at the next FIRST
	}
	if !m.active {
		if !op.IsFirst() {
			return // joined mid-message
		}
		if m.havePrev && psn != m.nextPSN {
			m.havePrev = false
		}
		m.active = true
		m.msn, m.rqmsn, m.firstPSN, m.firstFr = p.METH.MSN, p.METH.RQMSN, psn, e.frameNo
		m.va0, m.rkey, m.dmaLen, m.bytes, m.bytesOK = p.RETH.VA, p.RETH.RKey, p.RETH.DMALength, 0, true
		m.firstNs = e.now
		// Message-to-message rules.
		if m.havePrev {
			if want := m.prevMSN + 1; p.METH.MSN != want {
				fail(cWireMETH, "WIRE-METH-2", fmt.Sprintf("MSN %d (previous message %d + 1)", want, m.prevMSN), fmt.Sprintf("MSN %d", p.METH.MSN))
			} else {
				e.ok(cWireMETH, pt, node, false)
			}
			want := m.prevRQMSN
			if m.prevIMM {
				want++
			}
			if p.METH.RQMSN != want {
				fail(cWIMMOrd, "WIRE-METH-3", fmt.Sprintf("RQMSN %d (previous message %d, %s)", want, m.prevRQMSN, map[bool]string{true: "a WriteIMM", false: "a plain write"}[m.prevIMM]),
					fmt.Sprintf("RQMSN %d: the responder would complete WriteIMMs out of send order", p.METH.RQMSN))
			} else {
				e.ok(cWIMMOrd, pt, node, false)
			}
		} else if fl.startKnown && psn == fl.firstPSN && e.pics.Capture.FromQPStart {
			if p.METH.MSN != 0 || p.METH.RQMSN != 0 {
				fail(cWireMETH, "REQ-PSN-3", "MSN 0 and RQMSN 0 on the QP's first message", fmt.Sprintf("MSN %d, RQMSN %d", p.METH.MSN, p.METH.RQMSN))
			} else {
				e.ok(cWireMETH, pt, node, false)
			}
		}
	} else {
		// Inside a message.
		if op == wire.OpWriteFirst || op == wire.OpWriteOnly || op == wire.OpWriteOnlyImm {
			fail(cWireMSG, "REQ-SEG-2", "RDMA_WRITE_MIDDLE or a LAST opcode inside a message", op.String())
			m.active = false
			return
		}
		if p.METH.MSN != m.msn {
			fail(cWireMETH, "WIRE-METH-2", fmt.Sprintf("MSN %d, as in the message's first packet", m.msn), fmt.Sprintf("MSN %d", p.METH.MSN))
		}
		if p.METH.RQMSN != m.rqmsn {
			fail(cWIMMOrd, "WIRE-METH-3", fmt.Sprintf("RQMSN %d, as in the message's first packet", m.rqmsn), fmt.Sprintf("RQMSN %d", p.METH.RQMSN))
		}
		if p.RETH.RKey != m.rkey || p.RETH.DMALength != m.dmaLen {
			fail(cWireMSG, "WIRE-RETH-2", fmt.Sprintf("r_key 0x%x, dma_length %d as in the first packet", m.rkey, m.dmaLen),
				fmt.Sprintf("r_key 0x%x, dma_length %d", p.RETH.RKey, p.RETH.DMALength))
		}
		if m.bytesOK && p.RETH.VA != m.va0+m.bytes {
			fail(cWireMSG, "WIRE-RETH-2", fmt.Sprintf("va 0x%x (start + %d bytes)", m.va0+m.bytes, m.bytes), fmt.Sprintf("va 0x%x", p.RETH.VA))
		}
	}
	if p.Trimmed {
		m.bytesOK = false
	}
	m.bytes += uint64(len(p.Payload))
	m.nextPSN = wire.PSNAdd(psn, 1)
	if op.IsLast() {
		ok := true
		if m.bytesOK && m.bytes != uint64(m.dmaLen) {
			fail(cWireMSG, "WIRE-PAY-2", fmt.Sprintf("payloads summing to dma_length %d", m.dmaLen), fmt.Sprintf("%d bytes", m.bytes))
			ok = false
		}
		if ok {
			e.ok(cWireMSG, pt, node, false)
		}
		imm := op.HasImm()
		if imm {
			e.wimmStart(pt, fl, node, psn)
		}
		m.active, m.havePrev = false, true
		m.prevMSN, m.prevRQMSN, m.prevIMM, m.prevFrame = m.msn, m.rqmsn, imm, m.firstFr
	}
}

// wimmStart checks WIMM-REQ-1 when a WriteIMM's last packet is first sent:
// at its first packet's transmission, fewer than max_wimm WriteIMMs were
// in flight.
func (e *engine) wimmStart(pt *point, fl *flow, node string, lastPSN uint32) {
	m := &fl.msg
	keep := fl.wimm[:0]
	for _, w := range fl.wimm {
		if !w.done || w.doneNs >= m.firstNs {
			keep = append(keep, w)
		}
	}
	fl.wimm = keep
	if mw := e.pics.Parameters.MaxWIMM; mw != nil {
		inFlight := 0
		for _, w := range fl.wimm {
			if !w.done || w.doneNs > m.firstNs {
				inFlight++
			}
		}
		if inFlight >= *mw {
			e.fail(cWIMMReq, pt, node, false, Finding{Requirement: "WIMM-REQ-1", PSN: u32p(m.firstPSN), Frame: m.firstFr,
				Expected: fmt.Sprintf("at most max_wimm = %d WriteIMMs in flight", *mw),
				Observed: fmt.Sprintf("a WriteIMM started with %d in flight", inFlight)})
		} else {
			e.ok(cWIMMReq, pt, node, false)
		}
	}
	if e.roomIn(len(fl.wimm), MaxPending) {
		fl.wimm = append(fl.wimm, wimmOpen{firstNs: m.firstNs, lastPSN: lastPSN, frame: m.firstFr})
	}
}

// advanceUna moves the requester's cumulative point (LR-SACK-1, RSP-ACK-2).
func (e *engine) advanceUna(fl *flow, cack uint32) {
	if fl.haveMax && psnAfter(cack, fl.maxSent) {
		return // not before the next unsent PSN: discarded by the requester
	}
	if fl.haveUna && !psnAfter(cack, fl.una) {
		return
	}
	fl.una, fl.haveUna = cack, true
	fl.retryEvents = 0
	fl.exhausted = false
	if len(fl.unaHist) >= 256 {
		fl.unaHist = append(fl.unaHist[:0], fl.unaHist[128:]...)
	}
	fl.unaHist = append(fl.unaHist, unaEvent{una: cack, ns: e.now, frame: e.frameNo})
	// Drop the PSNs now cumulatively acknowledged.
	fl.psns.dropThrough(cack)
	for q := range fl.nackPend {
		if !psnAfter(q, cack) {
			delete(fl.nackPend, q)
		}
	}
	for i := range fl.wimm {
		if w := &fl.wimm[i]; !w.done && !psnAfter(w.lastPSN, cack) {
			w.done, w.doneNs = true, e.now
		}
	}
}

// sackAtRequester applies a SACK to the requester's view.
func (e *engine) sackAtRequester(pt *point, fl *flow, s *wire.SETH) {
	t := e.now
	e.advanceUna(fl, s.CACKPSN)
	base := s.BitmapBase()
	high, haveHigh := s.CACKPSN, true
	for bm := s.SACKBitmap; bm != 0; bm &= bm - 1 {
		i := bits.TrailingZeros64(bm)
		q := wire.PSNAdd(base, i)
		if fl.haveMax && psnAfter(q, fl.maxSent) {
			continue
		}
		if st := fl.psns.get(q); st != nil && !st.ackSel {
			st.ackSel, st.ackNs, st.ackFrame = true, t, e.frameNo
			if pn, ok := fl.nackPend[q]; ok && pn.frame != 0 {
				delete(fl.nackPend, q)
			}
		}
		if psnAfter(q, high) {
			high = q
		}
	}
	// Loss evidence: PSNs between una and the highest acknowledged PSN
	// that the SACK does not acknowledge (LR-RTX-4).
	if haveHigh && fl.haveUna && psnAfter(high, fl.una) {
		mark := func(q uint32, st *psnInfo) {
			if !st.ackSel && st.loss.kind == 0 && st.lastNs <= t && psnAfter(high, q) {
				st.loss = signal{kind: sigGap, frame: e.frameNo, ns: t}
				if _, ok := fl.maybeBad[st.lastEV]; !ok && e.roomIn(len(fl.maybeBad), MaxEVsPerFlow) {
					fl.maybeBad[st.lastEV] = t
				}
			}
		}
		// PSNs up to fl.markedTo were marked by an earlier SACK, or
		// acknowledged, and none was resent since: start after them.
		from := fl.una
		if fl.haveMarked && psnAfter(fl.markedTo, from) {
			from = fl.markedTo
		}
		stop, stopped := uint32(0), false
		fl.psns.each(from, high, func(q uint32, st *psnInfo) {
			if !stopped && !st.ackSel && st.loss.kind == 0 && st.lastNs > t {
				stop, stopped = wire.PSNAdd(q, -1), true // sent after this SACK's time: a later SACK marks it
			}
			mark(q, st)
		})
		to := wire.PSNAdd(high, -1)
		if fl.haveMax && psnAfter(to, fl.maxSent) {
			to = fl.maxSent // PSNs not sent yet are marked when a SACK passes them
		}
		if stopped && psnAfter(to, stop) {
			to = stop
		}
		if !fl.haveMarked || psnAfter(to, fl.markedTo) || stopped {
			fl.markedTo, fl.haveMarked = to, true
		}
	}
	if s.MPR != 0 && e.pics.Has("dynamic_mpr") {
		if len(fl.dynMPR) >= 64 {
			fl.dynMPR = append(fl.dynMPR[:0], fl.dynMPR[32:]...)
		}
		fl.dynMPR = append(fl.dynMPR, unaEvent{una: uint32(s.MPR), ns: t, frame: e.frameNo})
	}
	switch {
	case s.PR && (s.M == wire.MNone || s.M == wire.MSkipOnce):
		delete(fl.bad, s.Entropy) // a probe answer revives the EV (EV-ST-7, EV-ST-8)
		delete(fl.maybeBad, s.Entropy)
	case !s.PR && s.M == wire.MAlwaysSkip:
		e.retire(pt, fl, s.Entropy, t+e.grace, e.frameNo, "ALWAYS_SKIP", cEVBad)
	}
}

// nackAtRequester applies a NACK to the requester's view.
func (e *engine) nackAtRequester(pt *point, fl *flow, n *wire.NETH) {
	t := e.now
	st := fl.psns.get(n.NACKPSN)
	if st == nil || st.ackSel {
		return // not outstanding: ignored (LR-NACK-6)
	}
	if n.Reason == wire.NACKUnexpEvent {
		e.fatalAt(pt, fl)
		return
	}
	if !n.Reason.Valid() {
		return
	}
	sig := signal{kind: sigNACK, frame: e.frameNo, ns: t, ev: n.Entropy, reason: n.Reason}
	st.nack, st.loss = sig, sig
	fl.retryEvents++
	e.checkExhausted(fl, t)
	switch n.Reason {
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop, wire.NACKPSNOutOfWindow:
		if e.roomIn(len(fl.nackPend), MaxPending) {
			fl.nackPend[n.NACKPSN] = pendingNACK{frame: e.frameNo, ns: t, reason: n.Reason}
		}
	}
}

func (e *engine) fatalAt(pt *point, fl *flow) {
	if fl.fatal {
		return
	}
	fl.fatal, fl.fatalNs, fl.fatalFrame = true, e.now+e.grace, e.frameNo
	e.ok(cFatal, pt, fl.key.req, false)
}

// psuCheck checks that nothing goes to a peer on a plane it reported down
// (EP-PSU-3, EV-PORT-2). Plane n − 1 carries port n.
func (e *engine) psuCheck(pt *point, fl *flow, node, what string) {
	u, ok := pt.psu[[2]string{fl.key.rsp, node}]
	if !ok || e.now < u.ns+e.grace || pt.curPlane < 0 || pt.curPlane > 30 {
		return
	}
	if u.mask&(1<<(pt.curPlane+1)) == 0 {
		e.fail(cPSU, pt, node, true, Finding{Requirement: "EP-PSU-3", Related: []int{u.frame},
			Expected: fmt.Sprintf("nothing on plane %d: %s's port status update (frame %d, mask 0x%08x) reports port %d down", pt.curPlane, fl.key.rsp, u.frame, u.mask, pt.curPlane+1),
			Observed: what + " on plane " + itoa(pt.curPlane)})
		return
	}
	e.ok(cPSU, pt, node, true)
}

// echoCheck checks that an SRv6 echo value travels with one path (WIRE-EV-9).
func (e *engine) echoCheck(pt *point, fl *flow, node string, p *wire.Packet, ev uint32) {
	if !p.SRv6 {
		return
	}
	if fl.echo == nil {
		fl.echo = map[uint32][16]byte{}
	}
	if prev, ok := fl.echo[ev]; ok {
		if prev != p.Outer.Dst {
			e.fail(cEcho, pt, node, false, Finding{Requirement: "WIRE-EV-9", EV: u32p(ev),
				Expected: "one outer path per echo value", Observed: fmt.Sprintf("echo 0x%08x with outer DA %x, earlier %x", ev, p.Outer.Dst, prev)})
			return
		}
	} else if e.roomIn(len(fl.echo), MaxEVsPerFlow) {
		fl.echo[ev] = p.Outer.Dst
	}
	e.ok(cEcho, pt, node, false)
}

// probeAtRequester checks probe pacing on retired EVs (EV-PRB-2).
func (e *engine) probeAtRequester(pt *point, fl *flow, node string, ev uint32) {
	e.psuCheck(pt, fl, node, "a probe")
	if fl.fatal && e.now >= fl.fatalNs {
		e.fail(cFatal, pt, node, true, Finding{Requirement: "QP-ST-11", EV: u32p(ev), Related: []int{fl.fatalFrame},
			Expected: "no packet after the fatal NACK/NAK of frame " + itoa(fl.fatalFrame), Observed: "a probe sent after it"})
	}
	if _, bad := fl.bad[ev]; !bad {
		return
	}
	to := e.pics.Parameters.Timeout
	if prev, ok := fl.probeNs[ev]; ok && to != nil {
		T := baseTimeout(*to)
		if e.now-prev < T-e.tol {
			e.fail(cProbePace, pt, node, true, Finding{Requirement: "EV-PRB-2", EV: u32p(ev),
				Expected: fmt.Sprintf("at most one probe per %d ns (base timeout) on a retired EV", T),
				Observed: fmt.Sprintf("a probe %d ns after the previous one", e.now-prev)})
		} else {
			e.ok(cProbePace, pt, node, true)
		}
	}
	if e.roomIn(len(fl.probeNs), MaxEVsPerFlow) {
		fl.probeNs[ev] = e.now
	}
}
