package conformance

import (
	"fmt"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire/evstate"
)

// The cases of this file's checks, with their catalog entries.
var (
	cEVReflect = passiveCase(Case{
		ID: "MRC-WIRE-EV-002", Title: "Feedback reflects the triggering EV",
		Assertion:    "Every SACK and NACK carries in entropy the EV of the data or probe packet that triggered it, as that packet carried it on the wire (bits it did not carry are 0).",
		Requirements: []RequirementID{"WIRE-EV-5", "WIRE-EV-3", "WIRE-EV-8"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Steps: []string{stepDecode, stepReconstr, "For each SACK or NACK, find the arrival it answers (ack PSN, nack_psn or probe) and compare entropy with that arrival's EV."},
		Pass:  "every reflected EV matches", Fail: "a SACK or NACK reflecting an EV its trigger did not carry", Inconclusive: "no feedback whose trigger was captured",
	})
	cFatal = passiveCase(Case{
		ID: "MRC-LR-NACK-003", Title: "No transmission after a fatal error",
		Assertion:    "After an UNEXP_EVENT NACK or an AETH NAK (codes 1-3) the requester's QP is in ERROR and sends nothing more.",
		Requirements: []RequirementID{"LR-NACK-4", "QP-ST-10", "QP-ST-11", "RSP-ACK-3"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "After a fatal NACK or NAK reaches the requester, report any write or probe it sends on that connection after the reaction time."},
		Pass:  "silence after the fatal error", Fail: "a packet sent after the error", Inconclusive: "no fatal NACK or NAK",
	})
	cWIMMReq = passiveCase(Case{
		ID: "MRC-WIMM-REQ-001", Title: "WriteIMMs in flight stay within max_wimm",
		Assertion:    "The requester has at most max_wimm WriteIMM messages in flight, from the transmission of a WriteIMM's first packet until the cumulative acknowledgement covers its last.",
		Requirements: []RequirementID{"WIMM-REQ-1", "WIMM-REQ-2"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Parameters: []string{"max_wimm"},
		Steps:      []string{stepDecode, stepReconstr, "Count WriteIMMs started and not yet cumulatively acknowledged at each WriteIMM's first transmission."},
		Pass:       "never more than max_wimm", Fail: "a WriteIMM started while max_wimm were in flight", Inconclusive: "no WriteIMM",
	})
	cEVBad = passiveCase(Case{
		ID: "MRC-EV-BAD-001", Title: "ALWAYS_SKIP retires the EV",
		Assertion:    "After a SACK with m = ALWAYS_SKIP reflecting EV E, the requester sends no data on E until a probe on E is answered with m = NONE or SKIP_ONCE.",
		Requirements: []RequirementID{"EV-ST-4", "EV-ST-1", "EV-SET-4", "EV-ST-10", "LR-SACK-3", "EV-ST-7"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReqPlanes,
		Steps: []string{stepDecode, stepReconstr, "Mark E ASSUMED_BAD when the ALWAYS_SKIP SACK reaches the requester (plus the reaction time), unless that would leave fewer than ev_min_active usable EVs.", "Report data sent on E before a probe answer revives it."},
		Pass:  "no data on a retired EV", Fail: "data on an EV after ALWAYS_SKIP", Inconclusive: "no ALWAYS_SKIP in the capture",
	})
	cEVTimeout = passiveCase(Case{
		ID: "MRC-EV-BAD-002", Title: "A timeout retires the EV",
		Assertion:    "When a packet sent on EV E times out (no NACK, no SACK evidence) the requester moves E to ASSUMED_BAD and stops sending data on it until a probe on E is answered.",
		Requirements: []RequirementID{"EV-ST-5", "LR-TMR-5"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReqPlanes,
		Parameters: []string{"timeout"}, Timing: true,
		Steps: []string{stepDecode, stepReconstr, "Find retransmissions that only a timeout can justify; mark the EV of the PSN's previous send ASSUMED_BAD.", "Report data sent on it before a probe answer revives it."},
		Pass:  "no data on an EV after its timeout", Fail: "data on an EV whose packet timed out", Inconclusive: "no timeout-driven retransmission",
	})
	cProbePace = passiveCase(Case{
		ID: "MRC-EV-PRB-001", Title: "Probes on a retired EV are paced",
		Assertion:    "The requester sends at most one probe per ASSUMED_BAD EV per probe interval (one base timeout).",
		Requirements: []RequirementID{"EV-PRB-2", "EV-PRB-1"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReqPlanes,
		Parameters: []string{"timeout"}, Timing: true,
		Steps: []string{stepDecode, stepReconstr, "For EVs retired by ALWAYS_SKIP or timeout, open a probe interval of one base timeout at each probe on them.", "A second probe on the EV inside the interval fails; an interval the capture passes without one passes."},
		Pass:  "every probe interval on a retired EV held one probe", Fail: "two probes on the same retired EV within the interval", Inconclusive: "no probe interval on a retired EV ended within the capture",
	})
	cEcho = passiveCase(Case{
		ID: "MRC-WIRE-EV-003", Title: "SRv6 echo values are unique per path",
		Assertion:    "In SRv6 mode the 32-bit echo value in the inner headers identifies one EV of the QP: the same echo value never travels with two different outer paths.",
		Requirements: []RequirementID{"WIRE-EV-9"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Features: []string{"srv6"},
		Steps:    []string{stepDecode, stepReconstr, "Map each connection's echo values to the outer destination address they travel with."},
		Pass:     "one path per echo value", Fail: "an echo value seen with two outer paths", Inconclusive: "no SRv6 packet",
	})
	cRevPlane = passiveCase(Case{
		ID: "MRC-EV-REV-001", Title: "Feedback leaves on the arrival plane",
		Assertion:    "The SACK, NACK or endpoint response to a packet leaves on the plane the packet arrived on (the plane's reverse EV).",
		Requirements: []RequirementID{"EV-REV-4", "EV-REV-1", "EP-GEN-6"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp + ", capture interfaces named per plane (<point>/planeN)",
		Steps: []string{stepDecode, stepReconstr, "For each SACK, NACK and endpoint response whose trigger was captured, compare the capture planes."},
		Pass:  "every answer on its trigger's plane", Fail: "an answer on another plane", Inconclusive: "no answer whose trigger's plane is known",
	})
)

// The requirements this file's checks cite, each made for its case
// (caseID.req) and declared by its check (check.reqs).
var (
	rEVBad_EV_ST_4       = cEVBad.req("EV-ST-4")
	rEVTimeout_EV_ST_5   = cEVTimeout.req("EV-ST-5")
	rProbePace_EV_PRB_2  = cProbePace.req("EV-PRB-2")
	rEcho_WIRE_EV_9      = cEcho.req("WIRE-EV-9")
	rEVReflect_WIRE_EV_5 = cEVReflect.req("WIRE-EV-5")
	rRevPlane_EV_REV_4   = cRevPlane.req("EV-REV-4")
	rRevPlane_EP_GEN_6   = cRevPlane.req("EP-GEN-6")
	rFatal_QP_ST_11      = cFatal.req("QP-ST-11")
	rWIMMReq_WIMM_REQ_1  = cWIMMReq.req("WIMM-REQ-1")
)

// The checks of EVs and paths: retired EVs carry no data, probes on them
// are paced, echo values keep their path, feedback reflects its trigger's
// EV and plane.
func init() {
	addChecks(
		check{cs: cEVBad, reqs: []caseReq{rEVBad_EV_ST_4}, sent: retiredEV(cEVBad), sentOn: wRetired, event: evRetiredOK(cEVBad)},
		check{cs: cEVTimeout, reqs: []caseReq{rEVTimeout_EV_ST_5}, sent: retiredEV(cEVTimeout), sentOn: wRetired, event: evRetiredOK(cEVTimeout)},
		check{cs: cProbePace, reqs: []caseReq{rProbePace_EV_PRB_2}, probe: probePace, timer: probeIntervalEnd, state: probePaceState.slot},
		check{cs: cEcho, reqs: []caseReq{rEcho_WIRE_EV_9}, sent: echoPath, sentOn: wSRv6, state: echoState.slot},
		check{cs: cEVReflect, reqs: []caseReq{rEVReflect_WIRE_EV_5}, answer: reflectEV, framesShow: true},
		check{cs: cRevPlane, reqs: []caseReq{rRevPlane_EV_REV_4, rRevPlane_EP_GEN_6}, answer: answerPlane, answerOn: answerOn(ansTrigger, ansProbe, ansTrim), endpoint: endpointPlane, framesShow: true},
		check{cs: cFatal, reqs: []caseReq{rFatal_QP_ST_11}, sent: afterFatal, sentOn: wFatal, probe: probeAfterFatal, event: fatalSeen},
		check{cs: cWIMMReq, reqs: []caseReq{rWIMMReq_WIMM_REQ_1}, msg: wimmInFlight},
	)
}

// retiredEV checks EV-ST-4 (cEVBad) or EV-ST-5 (cEVTimeout): an EV retired
// by ALWAYS_SKIP or a timeout carries no data.
func retiredEV(cs caseID) func(e *engine, x *sentCtx) {
	return func(e *engine, x *sentCtx) {
		fl := x.fl
		if len(fl.bad) == 0 {
			return
		}
		b, ok := fl.bad[x.ev]
		if !ok {
			// One observation for the retirement of the lowest retired EV
			// (not map order, which would make the counts vary run to run).
			lo, lcs := ^uint32(0), cEVBad
			for v, b := range fl.bad {
				if v <= lo {
					lo, lcs = v, retiredBy(b.cause)
				}
			}
			if lcs == cs {
				e.ok(cs, x.pt, x.req, true)
			}
			return
		}
		if retiredBy(b.cause) != cs || x.t < b.since {
			return
		}
		rid := rEVBad_EV_ST_4
		if cs == cEVTimeout {
			rid = rEVTimeout_EV_ST_5
		}
		why := func(f *Finding) {
			x.fill(f, fmt.Sprintf("no data on EV 0x%08x, retired by %s in frame %d", x.ev, b.cause, b.frame), "data sent on it", b.frame)
		}
		switch {
		case b.revive != 0:
			e.undecidedWhy(rid, x.pt, x.req, fmt.Sprintf("a probe answer on the EV (frame %d) had a bad ICRC: the requester may have had it whole, which revives the EV (EV-ST-7)", b.revive), why)
		case b.unsure:
			e.undecidedWhy(rid, x.pt, x.req, "with EVs the requester may have retired on losses its SACKs showed, the ev_min_active floor may have kept this one in use (EV-SET-6)", why)
		default:
			e.failWhy(rid, x.pt, x.req, onTiming, why)
		}
	}
}

// retiredBy returns the case judging data on an EV retired by cause c:
// cEVTimeout for a timeout (EV-ST-5), cEVBad for a SACK (EV-ST-4).
func retiredBy(c evstate.Cause) caseID {
	if c == evstate.CauseTimeout {
		return cEVTimeout
	}
	return cEVBad
}

// evRetiredOK: an EV retired (by ALWAYS_SKIP, cEVBad, or a timeout,
// cEVTimeout) is an observation of the retirement.
func evRetiredOK(cs caseID) func(e *engine, x *eventCtx) {
	return func(e *engine, x *eventCtx) {
		if x.kind == evRetired && retiredBy(x.cause) == cs {
			e.ok(cs, x.pt, x.fl.key.req, false)
		}
	}
}

// probeIntervals is EV-PRB-2's state on a connection: the retired EVs
// whose probe interval is open, each with the time of the probe that
// opened it, at most MaxEVsPerFlow (roomIn). An entry leaves when its
// interval ends (probeIntervalEnd).
type probeIntervals struct{ open map[uint32]int64 }

func (s *probeIntervals) entries() int { return len(s.open) }

var probePaceState = newConnState(func() *probeIntervals { return &probeIntervals{open: map[uint32]int64{}} })

// probePace checks EV-PRB-2: at most one probe per base timeout T on a
// retired EV. A probe opens an interval of T, less the tolerance, and
// arms a timer at its end (probeIntervalEnd); a second probe on the EV
// inside it fails. When the timer was refused (maxTimers), the next probe
// after the interval passes it instead.
func probePace(e *engine, x *probeCtx) {
	fl := x.fl
	to := e.pics.Parameters.Timeout
	if _, bad := fl.bad[x.ev]; !bad || to == nil {
		return
	}
	T := baseTimeout(*to)
	s := probePaceState.of(fl)
	prev, open := s.open[x.ev]
	if open {
		if e.now-prev < T-e.tol {
			e.failWhy(rProbePace_EV_PRB_2, x.pt, x.req, onTiming, func(f *Finding) {
				f.EV = u32p(x.ev)
				f.Expected = fmt.Sprintf("at most one probe per %d ns (base timeout) on a retired EV", T)
				f.Observed = fmt.Sprintf("a probe %d ns after the previous one", e.now-prev)
			})
		} else {
			e.ok(cProbePace, x.pt, x.req, true)
		}
	}
	if open || e.roomIn(len(s.open), MaxEVsPerFlow) {
		s.open[x.ev] = e.now
		e.arm(checks[cProbePace], x.pt, fl, e.now+T-e.tol, uint64(x.ev), uint64(e.now))
	}
}

// probeIntervalEnd: capture time passed the end of the probe interval
// that the probe on EV t.a at time t.b opened, with no second probe on
// the EV inside it: a pass of EV-PRB-2, decided when the interval ends.
func probeIntervalEnd(e *engine, x *timerCtx) {
	s := probePaceState.of(x.fl)
	ev := uint32(x.a)
	if at, ok := s.open[ev]; !ok || at != int64(x.b) {
		return // a later probe on the EV opened another interval
	}
	delete(s.open, ev)
	e.ok(cProbePace, x.pt, x.fl.key.req, true)
}

// echoPaths is WIRE-EV-9's state on a connection: the outer path each
// SRv6 echo value travelled with, at most MaxEVsPerFlow (roomIn).
type echoPaths struct{ paths map[uint32][16]byte }

func (s *echoPaths) entries() int { return len(s.paths) }

var echoState = newConnState(func() *echoPaths { return &echoPaths{paths: map[uint32][16]byte{}} })

// echoPath checks that an SRv6 echo value travels with one path
// (WIRE-EV-9). Its state: echoPaths.
func echoPath(e *engine, x *sentCtx) {
	p, ev := x.p, x.ev
	if !p.SRv6 {
		return
	}
	s := echoState.of(x.fl)
	if prev, ok := s.paths[ev]; ok {
		if prev != p.Outer.Dst {
			e.failWhy(rEcho_WIRE_EV_9, x.pt, x.req, 0, func(f *Finding) {
				f.EV = u32p(ev)
				f.Expected, f.Observed = "one outer path per echo value", fmt.Sprintf("echo 0x%08x with outer DA %x, earlier %x", ev, p.Outer.Dst, prev)
			})
			return
		}
	} else if e.roomIn(len(s.paths), MaxEVsPerFlow) {
		s.paths[ev] = p.Outer.Dst
	}
	x.pass(cEcho, false)
}

// reflectEV checks WIRE-EV-5: feedback carries its trigger's EV.
func reflectEV(e *engine, x *answerCtx) {
	a := x.a
	switch {
	case x.kind == ansProbeUnmatched:
		if x.other != nil {
			e.failWhy(rEVReflect_WIRE_EV_5, x.pt, x.rsp, 0, func(f *Finding) {
				f.EV, f.Related = u32p(x.ev), []int{x.other.frame}
				f.Expected, f.Observed = fmt.Sprintf("entropy 0x%08x of probe %d", x.other.ev, x.other.probeID), fmt.Sprintf("entropy 0x%08x", x.ev)
			})
		}
	case a == nil:
	case x.kind == ansProbe || x.evSeen || x.ev == a.ev:
		x.pass(cEVReflect, false)
	default:
		e.failWhy(rEVReflect_WIRE_EV_5, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.EV, f.Related = u32p(a.psn), u32p(x.ev), []int{a.frame}
			f.Expected, f.Observed = fmt.Sprintf("entropy 0x%08x, the EV of frame %d", a.ev, a.frame), fmt.Sprintf("%s entropy 0x%08x", x.what, x.ev)
		})
	}
}

// answerPlane checks EV-REV-4: an answer leaves on its trigger's plane.
func answerPlane(e *engine, x *answerCtx) {
	if x.kind == ansProbeUnmatched || x.kind == ansOOR {
		return
	}
	if x.a == nil {
		return
	}
	what := x.what
	if x.kind == ansProbe {
		what = "probe answer"
	}
	e.samePlane(x.judgedRow, x.pt, x.rsp, x.a.plane, x.a.frame, rRevPlane_EV_REV_4, what)
}

// endpointPlane checks EP-GEN-6: an endpoint response leaves on its
// request's plane.
func endpointPlane(e *engine, x *epCtx) {
	if x.req != nil {
		e.samePlane(judgedRow{e.row(x.pt, x.src)}, x.pt, x.src, x.req.plane, x.req.frame, rRevPlane_EP_GEN_6, "endpoint response")
	}
}

// samePlane checks that an answer leaves on its trigger's plane (EV-REV-4,
// EP-GEN-6).
func (e *engine) samePlane(j judgedRow, pt *point, node string, plane, frame int, req caseReq, what string) {
	if plane < 0 || pt.curPlane < 0 {
		return
	}
	if plane != pt.curPlane {
		// A node with no usable EV left on the arrival plane answers on
		// another. Its path states follow its own transmissions and their
		// fate (timeouts of packets lost before a remote point), which
		// only a point at the node sees whole.
		e.failWhy(req, pt, node, onAbsence, func(f *Finding) {
			f.Related = []int{frame}
			f.Expected, f.Observed = fmt.Sprintf("the %s on plane %d, where frame %d arrived", what, plane, frame), fmt.Sprintf("sent on plane %d", pt.curPlane)
		})
		return
	}
	j.pass(cRevPlane, false)
}

// afterFatal checks QP-ST-11: a QP in ERROR sends nothing (LR-NACK-4).
func afterFatal(e *engine, x *sentCtx) {
	fl := x.fl
	if !fl.fatal {
		return
	}
	if x.t >= fl.fatalNs {
		e.failWhy(rFatal_QP_ST_11, x.pt, x.req, onTiming, func(f *Finding) {
			x.fill(f, "no packet after the fatal NACK/NAK of frame "+itoa(fl.fatalFrame), "a write sent after it", fl.fatalFrame)
		})
	} else {
		x.pass(cFatal, true)
	}
}

func probeAfterFatal(e *engine, x *probeCtx) {
	fl := x.fl
	if fl.fatal && e.now >= fl.fatalNs {
		e.failWhy(rFatal_QP_ST_11, x.pt, x.req, onTiming, func(f *Finding) {
			f.EV, f.Related = u32p(x.ev), []int{fl.fatalFrame}
			f.Expected, f.Observed = "no packet after the fatal NACK/NAK of frame "+itoa(fl.fatalFrame), "a probe sent after it"
		})
	}
}

func fatalSeen(e *engine, x *eventCtx) {
	if x.kind == evFatal {
		e.ok(cFatal, x.pt, x.fl.key.req, false)
	}
}

// wimmInFlight checks WIMM-REQ-1 when a WriteIMM's last packet is first
// sent: at its first packet's transmission, fewer than max_wimm WriteIMMs
// were in flight.
func wimmInFlight(e *engine, c *msgCtx) {
	mw := e.pics.Parameters.MaxWIMM
	if c.phase != msgEnd || !c.p.BTH.Opcode.HasImm() || mw == nil {
		return
	}
	m := c.m
	inFlight := 0
	for _, w := range c.fl.wimm {
		if !w.done || w.doneNs > m.firstNs {
			inFlight++
		}
	}
	if inFlight >= *mw {
		e.failWhy(rWIMMReq_WIMM_REQ_1, c.pt, c.node, 0, func(f *Finding) {
			f.PSN, f.Frame = u32p(m.firstPSN), m.firstFr
			f.Expected = fmt.Sprintf("at most max_wimm = %d WriteIMMs in flight", *mw)
			f.Observed = fmt.Sprintf("a WriteIMM started with %d in flight", inFlight)
		})
	} else {
		e.ok(cWIMMReq, c.pt, c.node, false)
	}
}
