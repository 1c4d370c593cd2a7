package conformance

import (
	"fmt"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// The cases of this file's checks, with their catalog entries.
var (
	cPSN = passiveCase(Case{
		ID: "MRC-REQ-PSN-001", Title: "PSNs are consecutive",
		Assertion:    "The requester numbers write packets consecutively modulo 2^24, sending new PSNs in order.",
		Requirements: []RequirementID{"REQ-PSN-1", "WIRE-BTH-4"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Once a first transmission is seen, expect each new PSN to be the previous highest plus one (mod 2^24)."},
		Pass:  "every new PSN follows the previous one", Fail: "a skipped PSN or a new PSN behind the highest", Inconclusive: "no first transmission",
	})
	cRtxSame = passiveCase(Case{
		ID: "MRC-REQ-PSN-002", Title: "A retransmission repeats the original",
		Assertion:    "A retransmission reuses the PSN, opcode, METH, RETH, ImmDt and payload of the first transmission; only EV, rtx, DSCP and TSETH timestamp may change.",
		Requirements: []RequirementID{"REQ-PSN-2"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Fingerprint each PSN's first transmission and compare every resend of it."},
		Pass:  "every resend matches", Fail: "a resend whose content differs", Inconclusive: "no retransmission of a PSN whose first transmission was captured",
	})
	cRtxAcked = passiveCase(Case{
		ID: "MRC-LR-RTX-001", Title: "No go-back-N: acknowledged PSNs are never resent",
		Assertion:    "After a SACK (cumulatively or in its bitmap) or an ACK acknowledges a PSN, the requester never sends that PSN again.",
		Requirements: []RequirementID{"LR-RTX-1", "LR-SACK-1", "LR-SACK-2", "LR-SACK-5", "RSP-ACK-2", "LR-NACK-6"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Track what each SACK and ACK acknowledges as it reaches the requester's capture point.", "For every write, check that its PSN was not acknowledged at least the PICS reaction time before it was sent."},
		Pass:  "no acknowledged PSN resent", Fail: "a PSN resent after its acknowledgement reached the requester", Inconclusive: "no retransmission",
	})
	cRtxWhy = passiveCase(Case{
		ID: "MRC-LR-RTX-002", Title: "Every retransmission follows a loss signal",
		Assertion:    "The requester retransmits only PSNs it has determined lost: named in a NACK, reported missing by a SACK (a later PSN acknowledged), or whose timer expired (at least the base timeout 1.024 µs × 2^timeout after its last send).",
		Requirements: []RequirementID{"LR-RTX-1", "LR-TMR-1", "LR-TMR-4", "LR-TMR-5", "LR-RTX-4"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Parameters: []string{"timeout"}, Timing: true,
		Steps: []string{stepDecode, stepReconstr, "Record per PSN the NACKs naming it and the SACKs showing it missing.", "For every retransmission without such a signal since the previous send, require the time since that send to reach the base timeout, minus the PICS tolerance."},
		Pass:  "every retransmission is justified", Fail: "a retransmission with no NACK, no SACK gap and before the timer could expire",
		Inconclusive: "no retransmission, timeout not declared, or timestamps untrusted while a retransmission could only be justified by a timer",
	})
	cRtxFlag = passiveCase(Case{
		ID: "MRC-LR-RTX-003", Title: "Retransmissions carry rtx, first transmissions do not",
		Assertion:    "Every resend of a PSN sets the BTH rtx flag; first transmissions never do.",
		Requirements: []RequirementID{"WIRE-BTH-5", "LR-RTX-3"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Classify every write as first transmission or resend from the PSNs seen before it; compare with rtx."},
		Pass:  "every flag matches", Fail: "a resend without rtx, or a first transmission with rtx", Inconclusive: "no write packet",
	})
	cNackEV = passiveCase(Case{
		ID: "MRC-LR-NACK-001", Title: "The NACKed EV is not reused for the retransmission",
		Assertion:    "The retransmission of a PSN named in a NACK does not use the EV that NACK reflects.",
		Requirements: []RequirementID{"EV-ST-13", "LR-NACK-1"}, Level: spec.MustNot, Mode: Passive, View: ViewRequester, Topology: topoReqPlanes,
		Steps: []string{stepDecode, stepReconstr, "For each NACK naming an outstanding PSN, find the PSN's next transmission and compare its EV with the NACK's entropy."},
		Pass:  "every such retransmission uses another EV", Fail: "a retransmission on the NACKed EV", Inconclusive: "no NACK followed by a retransmission",
	})
	cNackHold = passiveCase(Case{
		ID: "MRC-LR-NACK-002", Title: "Resource NACKs are honoured with a hold-off",
		Assertion:    "After a NO_BITMAP, NO_PKT_BUFFER or NO_RESOURCE NACK the requester retransmits the PSN no earlier than base_rtt later.",
		Requirements: []RequirementID{"LR-NACK-2"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Parameters: []string{"base_rtt_ns"}, Timing: true,
		Steps: []string{stepDecode, stepReconstr, "For each resource NACK, time the PSN's next transmission."},
		Pass:  "every retransmission waits base_rtt", Fail: "a retransmission earlier than base_rtt minus tolerance", Inconclusive: "no resource NACK",
	})
	cNackRecov = passiveCase(Case{
		ID: "MRC-LR-NACK-004", Title: "NACKed PSNs are retransmitted",
		Assertion:    "A PSN named in a TRIMMED, TRIMMED_LASTHOP or PSN_OOR_WINDOW NACK while outstanding is retransmitted (or acknowledged) later.",
		Requirements: []RequirementID{"LR-NACK-1", "LR-NACK-3"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "For each such NACK, look for a later transmission or acknowledgement of its PSN before the capture ends."},
		Pass:  "every NACKed PSN is recovered", Fail: "a NACKed PSN neither resent nor acknowledged while the requester kept sending other PSNs",
		Inconclusive: "no such NACK, or the capture ends before recovery could be expected",
	})
	cRetryLim = passiveCase(Case{
		ID: "MRC-LR-TMR-001", Title: "Retries stop when the counter is exhausted",
		Assertion:    "When more than linear_cnt + exp_cnt retries happen without the cumulative point advancing, the requester stops retransmitting (exp_cnt 25: never).",
		Requirements: []RequirementID{"LR-TMR-7", "LR-TMR-6"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Parameters: []string{"linear_cnt", "exp_cnt"},
		Steps:      []string{stepDecode, stepReconstr, "Count retransmissions since the cumulative point last advanced."},
		Pass:       "the retry limit was reached and the requester stopped", Fail: "more retransmissions than the retry counter allows", Inconclusive: "the limit was never reached, or it is unlimited",
	})
	cMPR = passiveCase(Case{
		ID: "MRC-MPR-WIN-001", Title: "The requester stays inside the MPR window",
		Assertion:    "Every PSN p sent satisfies (p − una) mod 2^24 ≤ 128 × MPR, una being the cumulative point the SACKs and ACKs reported so far (or the first PSN − 1).",
		Requirements: []RequirementID{"MPR-WIN-1", "REQ-TX-1", "REQ-PSN-4", "MPR-DYN-3", "MPR-DYN-4"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Parameters: []string{"mpr"},
		Steps:      []string{stepDecode, stepReconstr, "Track una from the SACKs and ACKs seen before each send (and, with dynamic MPR, the advertised window).", "Check each write's distance from una."},
		Pass:       "every PSN inside the window", Fail: "a PSN beyond una + 128 × MPR", Inconclusive: "mpr not declared, or una never known",
	})
	cTSETHAll = passiveCase(Case{
		ID: "MRC-REQ-HDR-001", Title: "TSETH in every write",
		Assertion:    "A requester whose congestion control uses reflected timestamps includes a TSETH in every write, first transmissions and retransmissions.",
		Requirements: []RequirementID{"REQ-HDR-1"}, Level: spec.Should, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Features: []string{"tseth"},
		Steps:    []string{stepDecode, stepReconstr, "Check that every write carries a TSETH."},
		Pass:     "every write carries one", Fail: "a write without TSETH (NON-STRICT)", Inconclusive: "no write",
	})
	cRtxOrder = passiveCase(Case{
		ID: "MRC-LR-RTX-004", Title: "Oldest NACKed PSN retransmitted first",
		Assertion:    "Among PSNs awaiting retransmission because a TRIMMED or TRIMMED_LASTHOP NACK named them, the requester retransmits the oldest first.",
		Requirements: []RequirementID{"LR-RTX-2"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Keep the PSNs named by trim NACKs that reached the requester and are neither retransmitted nor acknowledged.", "At each retransmission of such a PSN, check that no older one is still waiting."},
		Pass:  "every NACKed PSN retransmitted in PSN order", Fail: "a NACKed PSN retransmitted while an older NACKed PSN waits", Inconclusive: "no retransmission after a trim NACK",
	})
	cRtxFirst = passiveCase(Case{
		ID: "MRC-REQ-TX-001", Title: "Retransmissions before new PSNs",
		Assertion:    "When both are admissible, the requester sends a retransmission a trim NACK asked for before any new PSN.",
		Requirements: []RequirementID{"REQ-TX-2"}, Level: spec.Should, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "For each PSN named by a trim NACK, note whether a new PSN was sent after the NACK reached the requester and before the PSN's retransmission."},
		Pass:  "no new PSN overtook a pending retransmission", Fail: "a new PSN sent while a NACKed PSN waited (NON-STRICT)", Inconclusive: "no retransmission after a trim NACK",
	})
)

// The requirements this file's checks cite, each made for its case
// (caseID.req) and declared by its check (check.reqs).
var (
	rTSETHAll_REQ_HDR_1  = cTSETHAll.req("REQ-HDR-1")
	rMPR_MPR_WIN_1       = cMPR.req("MPR-WIN-1")
	rRtxFirst_REQ_TX_2   = cRtxFirst.req("REQ-TX-2")
	rRtxFlag_WIRE_BTH_5  = cRtxFlag.req("WIRE-BTH-5")
	rPSN_REQ_PSN_1       = cPSN.req("REQ-PSN-1")
	rNackRecov_LR_NACK_1 = cNackRecov.req("LR-NACK-1")
	rNackRecov_LR_NACK_3 = cNackRecov.req("LR-NACK-3")
	rRtxOrder_LR_RTX_2   = cRtxOrder.req("LR-RTX-2")
	rRtxAcked_LR_RTX_1   = cRtxAcked.req("LR-RTX-1")
	rRtxAcked_LR_SACK_2  = cRtxAcked.req("LR-SACK-2")
	rRtxSame_REQ_PSN_2   = cRtxSame.req("REQ-PSN-2")
	rNackEV_EV_ST_13     = cNackEV.req("EV-ST-13")
	rNackHold_LR_NACK_2  = cNackHold.req("LR-NACK-2")
	rRtxWhy_LR_RTX_1     = cRtxWhy.req("LR-RTX-1")
	rRetryLim_LR_TMR_7   = cRetryLim.req("LR-TMR-7")
)

// The requester's checks: what it sends and resends, judged against the
// PSN window and the loss signals that reached it.
func init() {
	addChecks(
		check{cs: cTSETHAll, reqs: []caseReq{rTSETHAll_REQ_HDR_1}, sent: tsethInEveryWrite},
		check{cs: cMPR, reqs: []caseReq{rMPR_MPR_WIN_1}, sent: mprWindow, sentOn: wMPR},
		check{cs: cRtxFirst, reqs: []caseReq{rRtxFirst_REQ_TX_2}, sent: retransmitFirst, sentOn: wNACKed | wNACKPend, state: overtakenState.slot},
		check{cs: cRtxFlag, reqs: []caseReq{rRtxFlag_WIRE_BTH_5}, sent: retransmitFlag},
		check{cs: cPSN, reqs: []caseReq{rPSN_REQ_PSN_1}, sent: psnNext, sentOn: wNew, event: untracked(cPSN)},
		check{cs: cNackRecov, reqs: []caseReq{rNackRecov_LR_NACK_1, rNackRecov_LR_NACK_3}, resent: nackRecovered, resentOn: wNACKed, finish: nackNotRecovered},
		check{cs: cRtxOrder, reqs: []caseReq{rRtxOrder_LR_RTX_2}, resent: retransmitOrder, resentOn: wNACKed},
		check{cs: cRtxAcked, reqs: []caseReq{rRtxAcked_LR_RTX_1, rRtxAcked_LR_SACK_2}, resent: resendAcked},
		check{cs: cRtxSame, reqs: []caseReq{rRtxSame_REQ_PSN_2}, resent: resendSame, resentOn: wTracked},
		check{cs: cNackEV, reqs: []caseReq{rNackEV_EV_ST_13}, resent: resendOffNACKedEV, resentOn: wTracked},
		check{cs: cNackHold, reqs: []caseReq{rNackHold_LR_NACK_2}, resent: resendHold, resentOn: wTracked},
		check{cs: cRtxWhy, reqs: []caseReq{rRtxWhy_LR_RTX_1}, resent: resendWhy, resentOn: wTracked, event: untracked(cRtxWhy)},
		check{cs: cRetryLim, reqs: []caseReq{rRetryLim_LR_TMR_7}, resent: retryLimit, resentOn: wTracked, finish: retryLimitReached, state: retryState.slot},
	)
}

// tsethInEveryWrite checks REQ-HDR-1 (SHOULD): a TSETH in every write.
func tsethInEveryWrite(e *engine, x *sentCtx) {
	if x.p.Decoded&wire.HasTSETH != 0 {
		x.pass(cTSETHAll, false)
		return
	}
	e.failWhy(rTSETHAll_REQ_HDR_1, x.pt, x.req, 0, func(f *Finding) { x.at(f, "a TSETH in every write", "no TSETH") })
}

// mprWindow checks MPR-WIN-1: a write lies within 128 × MPR of una.
func mprWindow(e *engine, x *sentCtx) {
	m := e.pics.Parameters.MPR
	fl := x.fl
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
	if e.dynMPR && len(fl.dynMPR) > 0 {
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
	d := psnDist(x.psn, base)
	if d == 0 || d >= 1<<23 {
		return // acknowledged already: LR-RTX-1's business
	}
	if d > w {
		why := func(f *Finding) {
			f.PSN = u32p(x.psn)
			f.Expected = fmt.Sprintf("PSN ≤ una %d + %d (128 × MPR %d)", base, w, mpr)
			f.Observed = fmt.Sprintf("PSN %d, %d beyond una", x.psn, d)
		}
		if bad := fl.badFeedbackSince(fl.unaSince()); bad != 0 {
			e.undecidedWhy(rMPR_MPR_WIN_1, x.pt, x.req, fmt.Sprintf("feedback seen with a bad ICRC (frame %d) may have moved una", bad), why)
			return
		}
		e.failWhy(rMPR_MPR_WIN_1, x.pt, x.req, 0, why)
		return
	}
	x.pass(cMPR, false)
}

// nacksOvertaken is REQ-TX-2's state on a connection: the trim NACKs a new
// PSN overtook while they waited, by PSN, each the frame of the NACK
// (pendingNACK.frame: a later NACK of the PSN is another). A mark is made
// for a NACK nackPend holds, and those of NACKs nackPend no longer holds
// are dropped before a mark that would outnumber its entries (mark): the
// marks are never more than nackPend held, at most MaxPending.
type nacksOvertaken struct {
	marks map[uint32]int
}

func (s *nacksOvertaken) entries() int { return len(s.marks) }

var overtakenState = newConnState(func() *nacksOvertaken { return &nacksOvertaken{marks: map[uint32]int{}} })

// overtaken reports whether a new PSN overtook pn, the NACK waiting for PSN q.
func (s *nacksOvertaken) overtaken(q uint32, pn pendingNACK) bool {
	f, ok := s.marks[q]
	return ok && f == pn.frame
}

// mark records that a new PSN overtook pn, the NACK waiting for PSN q of
// fl, first dropping the marks of the NACKs fl no longer waits for.
func (s *nacksOvertaken) mark(fl *flow, q uint32, pn pendingNACK) {
	if len(s.marks) >= len(fl.nackPend) {
		for p, f := range s.marks {
			if fl.nackPend[p].frame != f {
				delete(s.marks, p)
			}
		}
	}
	s.marks[q] = pn.frame
}

// retransmitFirst checks REQ-TX-2: a PSN NACKed as trimmed is resent
// before new PSNs. Its state: nacksOvertaken, marked when a new PSN goes
// first.
func retransmitFirst(e *engine, x *sentCtx) {
	fl, t := x.fl, x.t
	if !x.isNew {
		if pn := x.nack; pn.frame != 0 && pn.trim() && t >= pn.ns+e.grace && !overtakenState.of(fl).overtaken(x.psn, pn) {
			x.pass(cRtxFirst, true)
		}
		return
	}
	if len(fl.nackPend) == 0 {
		return // no NACK waiting: no map walked
	}
	s := overtakenState.of(fl)
	due := false // a trim NACK waiting beyond the reaction time: only then sort (sortedPSNs allocates)
	for q, pn := range fl.nackPend {
		if pn.trim() && t >= pn.ns+e.grace && !s.overtaken(q, pn) {
			due = true
			break
		}
	}
	if !due {
		return
	}
	e.psnBuf = appendPSNs(e.psnBuf[:0], fl.nackPend)
	for _, q := range e.psnBuf {
		pn := fl.nackPend[q]
		if pn.trim() && t >= pn.ns+e.grace && !s.overtaken(q, pn) {
			s.mark(fl, q, pn)
			// The retransmission may have been sent and lost before
			// the capture point.
			e.failWhy(rRtxFirst_REQ_TX_2, x.pt, x.req, onTiming|onAbsence, func(f *Finding) {
				x.at(f, fmt.Sprintf("the retransmission of PSN %d (TRIMMED NACK in frame %d) before new PSNs", q, pn.frame),
					fmt.Sprintf("new PSN %d sent first", x.psn), pn.frame)
			})
		}
	}
}

// retransmitFlag checks WIRE-BTH-5: rtx is set on resends only.
func retransmitFlag(e *engine, x *sentCtx) {
	rtx := x.p.BTH.Retransmit
	switch {
	case x.isNew && rtx:
		// The first sighting is the first transmission only where
		// nothing is lost before the capture point.
		e.failWhy(rRtxFlag_WIRE_BTH_5, x.pt, x.req, onAbsence, func(f *Finding) {
			x.at(f, "rtx = 0 on the first transmission of a PSN", "rtx = 1 on the first sighting")
		})
	case !x.isNew && !rtx:
		first := 0
		if x.st != nil {
			first = x.st.firstFrame
		}
		// A PSN first seen behind the highest one sent is a resend, or, at
		// a point away from the requester where packets sprayed over
		// several planes arrive out of order, a first transmission
		// overtaken: the finding rests on order the point may not show.
		// A copy of the first transmission on its EV may be a duplicate
		// the fabric made (copyLike): one send the point may not show.
		how := failHow(0)
		if x.st == nil || x.copyLike {
			how = onAbsence
		}
		e.failWhy(rRtxFlag_WIRE_BTH_5, x.pt, x.req, how, func(f *Finding) {
			x.at(f, "rtx = 1 on a retransmission", "rtx = 0 on a resend of PSN "+itoa(int(x.psn))+firstNote(first), nonZero(first)...)
		})
	default:
		x.pass(cRtxFlag, false)
	}
}

// untracked: once a connection's PSN table is full (evCapped), its later
// PSNs go unjudged, which leaves case cs undecided at the requester.
func untracked(cs caseID) func(e *engine, x *eventCtx) {
	return func(e *engine, x *eventCtx) {
		if x.kind == evCapped {
			e.undecided(cs, x.pt, x.fl.key.req, "PSN state bound exceeded")
		}
	}
}

// psnNext checks REQ-PSN-1: a first transmission takes the next PSN.
func psnNext(e *engine, x *sentCtx) {
	fl := x.fl
	if !x.isNew {
		return
	}
	if !fl.anchored {
		x.pass(cPSN, false)
		return
	}
	if want := wire.PSNAdd(fl.maxSent, 1); x.psn != want {
		// The skipped PSNs may have been lost before the point.
		e.failWhy(rPSN_REQ_PSN_1, x.pt, x.req, onAbsence, func(f *Finding) {
			x.at(f, fmt.Sprintf("PSN %d (the highest sent, %d, plus one)", want, fl.maxSent),
				fmt.Sprintf("PSN %d: %d PSNs skipped", x.psn, psnDist(x.psn, want)))
		})
		return
	}
	x.pass(cPSN, false)
}

// nackRecovered: a PSN a NACK named is resent (LR-NACK-1, LR-NACK-3).
func nackRecovered(e *engine, x *sentCtx) {
	if x.nack.frame != 0 {
		x.pass(cNackRecov, false)
	}
}

// nackNotRecovered: NACKed PSNs the requester never resent.
func nackNotRecovered(e *engine, pt *point, fl *flow) {
	for _, q := range sortedPSNs(fl.nackPend) {
		pn := fl.nackPend[q]
		req := rNackRecov_LR_NACK_1
		if pn.reason == wire.NACKPSNOutOfWindow {
			req = rNackRecov_LR_NACK_3
		}
		obs := "not retransmitted"
		why := func(f *Finding) {
			f.Frame, f.TimeNs, f.PSN, f.Plane = pn.frame, pn.ns, u32p(q), -1
			f.Expected, f.Observed = fmt.Sprintf("PSN %d retransmitted after its %s NACK", q, pn.reason), obs
		}
		if fl.lastNewNs > pn.ns+e.grace && !fl.fatal {
			obs = "not retransmitted, while new PSNs were sent after the NACK"
			e.failWhy(req, pt, fl.key.req, onAbsence, why)
		} else {
			e.undecidedWhy(req, pt, fl.key.req, "the capture ends before the retransmission could be expected", why)
		}
	}
}

// retransmitOrder checks LR-RTX-2: trimmed PSNs are resent oldest first.
func retransmitOrder(e *engine, x *sentCtx) {
	pn := x.nack
	if x.isNew || pn.frame == 0 || !pn.trim() || x.t < pn.ns+e.grace {
		return
	}
	// The lowest PSN number waiting (the first of sortedPSNs).
	if q, found := x.fl.oldestTrimDue(x.psn, x.t-e.grace); found {
		o := x.fl.nackPend[q]
		// Its retransmission may have been lost before the point.
		e.failWhy(rRtxOrder_LR_RTX_2, x.pt, x.req, onTiming|onAbsence, func(f *Finding) {
			x.at(f, fmt.Sprintf("PSN %d first: older, and NACKed in frame %d", q, o.frame),
				fmt.Sprintf("PSN %d retransmitted first", x.psn), o.frame)
		})
		return
	}
	x.pass(cRtxOrder, true)
}

// resendAcked checks LR-RTX-1 and LR-SACK-2: never resend what was
// acknowledged.
func resendAcked(e *engine, x *sentCtx) {
	if x.isNew {
		return
	}
	st, t := x.st, x.t
	switch {
	case x.acked:
		ae := x.fl.ackOf(x.psn)
		if ae.frame != 0 && t-ae.ns < e.grace {
			x.pass(cRtxAcked, true) // the acknowledgement may not have reached it yet
		} else {
			e.failWhy(rRtxAcked_LR_RTX_1, x.pt, x.req, x.resent(onTiming), func(f *Finding) {
				x.at(f, fmt.Sprintf("no resend: cumulatively acknowledged (cack %d) in frame %d", ae.una, ae.frame),
					"PSN resent (go-back-N)", nonZero(ae.frame)...)
			})
		}
	case st != nil && st.ackSel:
		if t-st.ackNs < e.grace {
			x.pass(cRtxAcked, true)
		} else {
			e.failWhy(rRtxAcked_LR_SACK_2, x.pt, x.req, x.resent(onTiming), func(f *Finding) {
				x.at(f, fmt.Sprintf("no resend: selectively acknowledged in the SACK bitmap of frame %d", st.ackFrame),
					"PSN resent (go-back-N)", st.ackFrame)
			})
		}
	default:
		x.pass(cRtxAcked, false)
	}
}

// resent is how a finding against a resend rests: on how, and, for a
// copy of the first transmission on its EV (copyLike), on the requester
// having sent it at all, where the fabric may have duplicated it.
func (x *sentCtx) resent(how failHow) failHow {
	if x.copyLike {
		how |= onAbsence
	}
	return how
}

// resendSame checks REQ-PSN-2: a resend repeats the original. Its state:
// the PSN record's header fingerprint and payload identity (taken from the
// first whole copy whose size is no finding: a copy with a wrong pad count
// or payload size is reported as such, and a resend that corrects it
// repeats the write the requester meant).
func resendSame(e *engine, x *sentCtx) {
	if !x.tracked {
		return
	}
	st, p, id := x.st, x.p, x.fl.psns.payload(x.psn)
	switch {
	case headerFP(p) != st.hdrFP:
		e.failWhy(rRtxSame_REQ_PSN_2, x.pt, x.req, 0, func(f *Finding) {
			x.at(f, "the opcode, flags, METH, RETH and ImmDt of frame "+itoa(st.firstFrame), "different headers", st.firstFrame)
		})
	case id.ok && !p.Trimmed && !x.r.Cut && x.size == sizeOK && !e.samePayload(id, x.r):
		e.failWhy(rRtxSame_REQ_PSN_2, x.pt, x.req, 0, func(f *Finding) {
			x.at(f, "the payload of frame "+itoa(st.firstFrame), "a different payload", st.firstFrame)
		})
	default: // same payloads, or a copy not whole (trimmed, or cut by the snap length): same headers
		x.pass(cRtxSame, false)
	}
	if !id.ok && !p.Trimmed && !x.r.Cut && x.size == sizeOK {
		id.keep(x.r)
	}
}

// resendOffNACKedEV checks EV-ST-13: the retransmission after a NACK goes
// on another EV.
func resendOffNACKedEV(e *engine, x *sentCtx) {
	if !x.tracked || x.st.nack.kind != sigNACK {
		return
	}
	n, t := x.st.nack, x.t
	switch {
	case x.ev != n.ev:
		x.pass(cNackEV, false)
	case t-n.ns < e.grace:
		e.undecidedWhy(rNackEV_EV_ST_13, x.pt, x.req, "retransmitted on the NACKed EV within the reaction time of the NACK", func(f *Finding) {
			f.PSN, f.EV, f.Related = u32p(x.psn), u32p(x.ev), []int{n.frame}
		})
	default:
		why := func(f *Finding) {
			x.at(f, fmt.Sprintf("an EV other than 0x%08x, which the %s NACK of frame %d reflects", n.ev, n.reason, n.frame),
				fmt.Sprintf("retransmitted on EV 0x%08x", x.ev), n.frame)
		}
		// Unless no other loss signal could have come between, the
		// NACK's own retransmission may have been lost before the
		// point and this one answer a later signal.
		quiet := x.fl.lastFbNs <= n.ns
		to := e.pics.Parameters.Timeout
		switch {
		case to != nil && t-n.ns >= baseTimeout(*to)-e.tol:
			// A base timeout or more after the NACK: when no other EV
			// could carry it, the stall timer's expiry (at least T)
			// lets the PSN go back on the NACKed EV (LR-SM-3, AMB-44),
			// and the capture cannot show which EVs were usable.
			e.undecidedWhy(rNackEV_EV_ST_13, x.pt, x.req, "retransmitted on the NACKed EV at least a base timeout after the NACK, which LR-SM-3 allows when no other EV is usable (AMB-44)",
				func(f *Finding) { f.PSN, f.EV, f.Related = u32p(x.psn), u32p(x.ev), []int{n.frame} })
		case quiet && to != nil:
			e.failWhy(rNackEV_EV_ST_13, x.pt, x.req, onTiming, why)
		default:
			e.failWhy(rNackEV_EV_ST_13, x.pt, x.req, onTiming|onAbsence, why)
		}
	}
}

// resendHold checks LR-NACK-2: after a NACK for lack of resources the
// requester waits a base RTT before resending.
func resendHold(e *engine, x *sentCtx) {
	if !x.tracked || x.st.nack.kind != sigNACK {
		return
	}
	n, t := x.st.nack, x.t
	switch n.reason {
	case wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource:
	default:
		return
	}
	rtt := e.pics.Parameters.BaseRTTNs
	if rtt == nil {
		return
	}
	if t-n.ns >= *rtt-e.tol {
		x.pass(cNackHold, true)
		return
	}
	e.failWhy(rNackHold_LR_NACK_2, x.pt, x.req, onTiming, func(f *Finding) {
		x.at(f, fmt.Sprintf("retransmission ≥ %d ns after the %s NACK of frame %d", *rtt, n.reason, n.frame),
			fmt.Sprintf("%d ns after it", t-n.ns), n.frame)
	})
}

// resendWhy checks LR-RTX-1, LR-TMR-4/5: a loss signal or a timeout
// justifies the resend.
func resendWhy(e *engine, x *sentCtx) {
	if !x.tracked {
		return
	}
	st := x.st
	bad := x.fl.badFeedbackSince(st.lastNs)
	switch to := e.pics.Parameters.Timeout; {
	case st.loss.kind != 0:
		x.pass(cRtxWhy, false)
	case to == nil:
		e.undecided(cRtxWhy, x.pt, x.req, "no NACK or SACK gap; timeout not declared")
	case x.timedOut:
		x.pass(cRtxWhy, true)
	case bad != 0:
		e.undecided(cRtxWhy, x.pt, x.req, fmt.Sprintf("feedback seen with a bad ICRC (frame %d) may have been the loss signal", bad))
	default:
		T := baseTimeout(*to)
		e.failWhy(rRtxWhy_LR_RTX_1, x.pt, x.req, x.resent(onTiming), func(f *Finding) {
			x.at(f, fmt.Sprintf("a NACK, a SACK gap, or ≥ %d ns (base timeout) since the previous send in frame %d", T, st.lastFrame),
				fmt.Sprintf("resent %d ns after it with no loss signal", x.t-st.lastNs), st.lastFrame)
		})
	}
}

// retryFailed is LR-TMR-7's state on a connection: whether a
// retransmission after the retry counter ran out failed it. It holds no
// container.
type retryFailed struct{ failed bool }

func (*retryFailed) entries() int { return 0 }

var retryState = newConnState(func() *retryFailed { return &retryFailed{} })

// retryLimit checks LR-TMR-7: no retransmission once the retry counter is
// exhausted. Its state: retryFailed, set on a failure.
func retryLimit(e *engine, x *sentCtx) {
	fl := x.fl
	if !x.tracked || !fl.exhausted || x.t < fl.exhaustedNs+e.grace {
		return
	}
	retryState.of(fl).failed = true
	why := func(f *Finding) {
		x.at(f, "no retransmission after the retry counter was exhausted", "a retransmission")
	}
	if bad := fl.badFeedbackSince(fl.unaSince()); bad != 0 {
		// An acknowledgement resets the counter (LR-TMR-6).
		e.undecidedWhy(rRetryLim_LR_TMR_7, x.pt, x.req, fmt.Sprintf("feedback seen with a bad ICRC (frame %d) may have reset the retry counter", bad), why)
		return
	}
	e.failWhy(rRetryLim_LR_TMR_7, x.pt, x.req, onTiming, why)
}

// retryLimitReached: a connection whose retry counter ran out and sent
// nothing more passes.
func retryLimitReached(e *engine, pt *point, fl *flow) {
	if fl.exhausted && !retryState.of(fl).failed {
		e.ok(cRetryLim, pt, fl.key.req, false)
	}
}
