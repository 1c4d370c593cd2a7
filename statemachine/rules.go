package statemachine

import "github.com/openmrc/mrc/wire"

// rules are the decisions of the reference code that a seeded fault can
// break. Each method is the specification's rule, cited once here; the
// code asks q.st.rules where the rule applies, and each seeded fault of
// faults.go overrides the one rule it breaks. broken is nil in any real
// use, so that a decision costs one predicted branch; with a fault seeded
// it holds every rule: specRules with the seeded faults' overrides
// (BreakRules).
type rules struct{ broken *ruleSet }

// ruleSet holds one function per decision, named as the method of rules
// whose rule it replaces.
type ruleSet struct {
	reach           func(w uint32) uint32
	retryBudget     func(linear, exp int) (int, int)
	stallTimed      func() bool
	stallTimerStops func() bool
	retryStalled    func(q *QP, psn uint32)
	startsNew       func(s QPState) bool
	sqDrained       func(partlySent bool, outstanding int32, atMove bool) bool
	avoidsNamedEV   func() bool
	alsoLost        func(q *QP, psn uint32, c LossCause)
	unexpCounts     func(sacked bool) bool
	heedsNACK       func(reason wire.NACKReason) bool
	recoverable     func(reason wire.NACKReason) bool
	holdOff         func(baseRTT Time) Time
	restoresEV      func(probeOK, need uint8) bool
	duplicate       func(r *responder, p *wire.Packet, d uint32) bool
	beyondWindow    func(d, w uint32) bool
	placesAgain     func() bool
	placementVA     func(p *wire.Packet) uint64
	immAtArrival    func() bool
	commEst         func(first bool) bool
	classesTrimmed  func() bool
	dupVerdict      func(m wire.Multipath) wire.Multipath
	placesIMMAgain  func() bool
}

// specRules are the specification's rules: the methods of rules with
// nothing broken.
var specRules = ruleSet{
	reach: rules{}.reach, retryBudget: rules{}.retryBudget, stallTimed: rules{}.stallTimed,
	stallTimerStops: rules{}.stallTimerStops, retryStalled: rules{}.retryStalled, startsNew: rules{}.startsNew,
	sqDrained: rules{}.sqDrained, avoidsNamedEV: rules{}.avoidsNamedEV, alsoLost: rules{}.alsoLost,
	unexpCounts: rules{}.unexpCounts, heedsNACK: rules{}.heedsNACK, recoverable: rules{}.recoverable,
	holdOff: rules{}.holdOff, restoresEV: rules{}.restoresEV, duplicate: rules{}.duplicate,
	beyondWindow: rules{}.beyondWindow, placesAgain: rules{}.placesAgain, placementVA: rules{}.placementVA,
	immAtArrival: rules{}.immAtArrival, commEst: rules{}.commEst, classesTrimmed: rules{}.classesTrimmed,
	dupVerdict: rules{}.dupVerdict, placesIMMAgain: rules{}.placesIMMAgain,
}

// The requester's rules.

// reach is how far ahead of una the requester may send with window w: W
// PSNs, (p − una) mod 2^24 < W (MPR-WIN-1).
func (r rules) reach(w uint32) uint32 {
	if r.broken != nil {
		return r.broken.reach(w)
	}
	return w
}

// retryBudget splits the retry budget into linear_cnt retries at RTO T and
// exp_cnt retries whose RTO doubles (LR-TMR-4).
func (r rules) retryBudget(linear, exp int) (int, int) {
	if r.broken != nil {
		return r.broken.retryBudget(linear, exp)
	}
	return linear, exp
}

// stallTimed: a retransmission no EV may carry waits, and everything
// behind it, under the stall timer (LR-SM-3).
func (r rules) stallTimed() bool {
	if r.broken != nil {
		return r.broken.stallTimed()
	}
	return true
}

// stallTimerStops: the stall timer stops when the wait it times ends
// (LR-SM-3, LR-TMR-6).
func (r rules) stallTimerStops() bool {
	if r.broken != nil {
		return r.broken.stallTimerStops()
	}
	return true
}

// retryStalled is what a stall timer's expiry does to the waiting PSN
// psn: it stays queued, and may go now on the EV it avoided (LR-SM-3,
// LR-RTX-1, AMB-44).
func (r rules) retryStalled(q *QP, psn uint32) {
	if r.broken != nil {
		r.broken.retryStalled(q, psn)
		return
	}
	q.retryStalled(psn)
}

// startsNew: a QP in state s starts new messages in RTS, not in SQD
// (QP-ST-12).
func (r rules) startsNew(s QPState) bool {
	if r.broken != nil {
		return r.broken.startsNew(s)
	}
	return s != StateSQD
}

// sqDrained: a QP in SQD has drained when no message is partly sent and
// nothing sent is unacknowledged, whether at the move to SQD (atMove) or
// later (QP-ST-12, CTL-AEV-6).
func (r rules) sqDrained(partlySent bool, outstanding int32, atMove bool) bool {
	if r.broken != nil {
		return r.broken.sqDrained(partlySent, outstanding, atMove)
	}
	return !partlySent && outstanding == 0
}

// avoidsNamedEV: a retransmission never goes on the EV the NACK or timeout
// named (EV-ST-13, LR-NACK-1).
func (r rules) avoidsNamedEV() bool {
	if r.broken != nil {
		return r.broken.avoidsNamedEV()
	}
	return true
}

// alsoLost marks lost what the loss of psn brings with it: nothing, since
// only lost PSNs are retransmitted (LR-RTX-1).
func (r rules) alsoLost(q *QP, psn uint32, c LossCause) {
	if r.broken != nil {
		r.broken.alsoLost(q, psn, c)
	}
}

// unexpCounts: an UNEXP_EVENT NACK whose PSN is outstanding counts even
// when a SACK's bitmap covered the PSN (sacked) (LR-NACK-4, AMB-100).
func (r rules) unexpCounts(sacked bool) bool {
	if r.broken != nil {
		return r.broken.unexpCounts(sacked)
	}
	return true
}

// heedsNACK: the requester acts on every recoverable NACK (LR-NACK-1).
func (r rules) heedsNACK(reason wire.NACKReason) bool {
	if r.broken != nil {
		return r.broken.heedsNACK(reason)
	}
	return true
}

// recoverable: a recoverable NACK is answered by retransmission, never by
// ERROR (LR-NACK-1, LR-NACK-5).
func (r rules) recoverable(reason wire.NACKReason) bool {
	if r.broken != nil {
		return r.broken.recoverable(reason)
	}
	return true
}

// holdOff is how long a retransmission waits after a resource NACK:
// base_rtt (LR-NACK-2).
func (r rules) holdOff(baseRTT Time) Time {
	if r.broken != nil {
		return r.broken.holdOff(baseRTT)
	}
	return baseRTT
}

// restoresEV: an ASSUMED_BAD EV returns to GOOD once probe_successes
// probes in a row (need) were answered with m = NONE (EV-ST-7).
func (r rules) restoresEV(probeOK, need uint8) bool {
	if r.broken != nil {
		return r.broken.restoresEV(probeOK, need)
	}
	return probeOK >= need
}

// The responder's rules.

// duplicate: a data packet d PSNs past cack is a duplicate when it is at
// or behind cack, in the half of the PSN space behind it (d = 0 or
// d ≥ 2^23), or within the window and already received, whatever its rtx
// flag (RSP-DUP-1, RSP-DUP-2, RSP-RCV-6).
func (r rules) duplicate(rsp *responder, p *wire.Packet, d uint32) bool {
	if r.broken != nil {
		return r.broken.duplicate(rsp, p, d)
	}
	return d == 0 || d >= 1<<23 || d <= rsp.maxWin && rsp.ring.get(p.BTH.PSN&wire.PSNMask)
}

// beyondWindow: a PSN d past cack that is no duplicate is out of window
// beyond the responder's MPR window w (RSP-RCV-6, RSP-NACK-4).
func (r rules) beyondWindow(d, w uint32) bool {
	if r.broken != nil {
		return r.broken.beyondWindow(d, w)
	}
	return d > w
}

// placesAgain: a duplicate is never placed again (RSP-DUP-1).
func (r rules) placesAgain() bool {
	if r.broken != nil {
		return r.broken.placesAgain()
	}
	return false
}

// placementVA is where a data packet's payload goes: the VA its RETH
// carries (RSP-RCV-3).
func (r rules) placementVA(p *wire.Packet) uint64 {
	if r.broken != nil {
		return r.broken.placementVA(p)
	}
	return p.RETH.VA
}

// immAtArrival: a WriteIMM completes once every earlier message has, not
// when its last packet arrives (WIMM-RSP-1).
func (r rules) immAtArrival() bool {
	if r.broken != nil {
		return r.broken.immAtArrival()
	}
	return false
}

// commEst: IBV_EVENT_COMM_EST is raised on the first request packet a QP
// in RTR accepts, and only then (CTL-AEV-4).
func (r rules) commEst(first bool) bool {
	if r.broken != nil {
		return r.broken.commEst(first)
	}
	return first
}

// classesTrimmed: a trimmed packet's PSN is classed before its trim is
// answered, so a trimmed duplicate is re-acknowledged and a trimmed PSN
// out of window is NACKed PSN_OOR_WINDOW, as the untrimmed packet would
// be (RSP-DUP-2, RSP-SM-3).
func (r rules) classesTrimmed() bool {
	if r.broken != nil {
		return r.broken.classesTrimmed()
	}
	return true
}

// dupVerdict is the m of the SACK that answers a duplicate: m, the
// verdict of its CE mark, as for any packet (RSP-SACK-3, RSP-DUP-2).
func (r rules) dupVerdict(m wire.Multipath) wire.Multipath {
	if r.broken != nil {
		return r.broken.dupVerdict(m)
	}
	return m
}

// placesIMMAgain: a WriteIMM whose RQMSN is already held is discarded
// without a response, never placed (WIMM-SM-1).
func (r rules) placesIMMAgain() bool {
	if r.broken != nil {
		return r.broken.placesIMMAgain()
	}
	return false
}
