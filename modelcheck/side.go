package modelcheck

import (
	"fmt"

	"github.com/openmrc/mrc/internal/evtable"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// sideStep is what the checks of one QP's part of a step share: the QP and
// its ghost before and after, the EV states as the step's events move
// them, and what the environment did to its timers.
type sideStep struct {
	s         int
	pre, post *world
	q0, q1    *sm.QP
	pg, g     *ghost
	st        []sm.EVState
	// mustBe is what a probe answer requires of each EV by the end of the
	// step (EV-ST-7, EV-ST-8); timedOut and inferred the EVs the step's
	// timeouts and inferred losses name.
	mustBe             [8]sm.EVState
	timedOut, inferred []uint32
	// due are the PSNs whose timers expire in this step by the checker's
	// record; stalled the PSN waiting when its stall timer fired (fired).
	due, stalled    uint32
	fired, unaMoved bool
}

// checkSide checks QP s's part of the step pre → post: as requester (its
// events, EV states, timers, retries, window, acknowledgements) and as the
// writer of completions.
func (c *checker) checkSide(v *violations, s int, pre, post *world) {
	x := c.newSideStep(s, pre, post)
	for _, e := range c.log.ev[s] {
		c.sideEvent(v, x, e)
	}
	c.checkTimersFired(v, x)
	c.checkEVStates(v, x)
	c.errorJustified(v, s, x.q0, x.q1, x.g)
	c.checkCompletions(v, s, post)
	if !sending(x.q0) || len(c.msgs[s]) == 0 {
		return
	}
	c.checkQueues(v, x)
	c.checkRetryBudget(v, x)
	if sending(x.q1) {
		c.checkWindowAndAcks(v, x)
	}
}

func (c *checker) newSideStep(s int, pre, post *world) *sideStep {
	x := &sideStep{s: s, pre: pre, post: post, q0: pre.qp[s], q1: post.qp[s], pg: &pre.g[s], g: &post.g[s]}
	for _, e := range x.q0.EVs(nil) {
		x.st = append(x.st, e.State)
	}
	c.nackDelivered(s, x.q0, x.g)
	c.sackWindow(s, x.q0, x.g)
	x.due = c.timeoutsDue(s, pre, post)
	x.stalled, x.fired = c.stallExpiry(s, pre, post, x.due)
	x.unaMoved = wire.PSNDiff(x.q1.CumulativeACK(), x.q0.CumulativeACK()) > 0
	return x
}

// sideEvent follows one event of QP s through the ghost state and the
// checks that judge it as it happens.
func (c *checker) sideEvent(v *violations, x *sideStep, e sm.Event) {
	g := x.g
	switch e.Kind {
	case sm.EvProbeSent:
		if i := c.evIndex(e.EV); i >= 0 {
			if x.st[i] == sm.EVAssumedBad && g.probing&(1<<i) != 0 {
				g.probeRun[i] = 0 // the last round's probe went unanswered (EV-PRB-2)
			}
			g.probing |= 1 << i
		}
	case sm.EvProbeResult:
		c.probeResult(x, e)
	case sm.EvEVState:
		c.evStateEvent(v, x, e)
	case sm.EvTimeout:
		c.timeoutEvent(v, x, e)
	case sm.EvLost:
		if sm.LossCause(e.Reason) == sm.LossReorder {
			// An inferred loss (LR-RTX-4) names the EV the PSN went out
			// on, as a timeout does (EV-SM-5, EV-ST-13).
			x.inferred = append(x.inferred, e.EV)
			if c.rel(e.PSN) < maxPSNs {
				g.nackEV[c.rel(e.PSN)] = e.EV + 1
			}
		}
	case sm.EvPacketSent:
		if wire.Opcode(e.Reason).IsWrite() {
			c.dataSent(v, x, e)
		}
	}
}

// probeResult: an answer to a probe on an ASSUMED_BAD EV counts towards
// probe_success_threshold (m = NONE, EV-ST-7), moves it to SKIP
// (SKIP_ONCE, EV-ST-8) or restarts the run.
func (c *checker) probeResult(x *sideStep, e sm.Event) {
	g := x.g
	i := c.evIndex(e.EV)
	if i < 0 {
		return
	}
	g.probing &^= 1 << i
	if x.st[i] != sm.EVAssumedBad {
		return
	}
	switch wire.Multipath(e.Reason) {
	case wire.MNone:
		if g.probeRun[i]++; int(g.probeRun[i]) >= max(1, c.cfg.ProbeSuccesses) {
			x.mustBe[i] = sm.EVGood
		}
	case wire.MSkipOnce:
		x.mustBe[i] = sm.EVSkip
	default:
		g.probeRun[i] = 0
	}
}

// evStateEvent is EVTransitionsAllowed for one reported EV change: in the
// profile, from the EV's state, in the table, and justified by the step.
func (c *checker) evStateEvent(v *violations, x *sideStep, e sm.Event) {
	s, g := x.s, x.g
	i := c.evIndex(e.EV)
	from, to := sm.EVState(e.From), sm.EVState(e.To)
	if i >= 0 && to == sm.EVAssumedBad {
		g.probeRun[i], g.probing = 0, g.probing&^(1<<i)
	}
	switch {
	case i < 0:
		v.add(InvEVTransitionsAllowed, "%s EV %#x is not in the profile", side[s], e.EV)
		return
	case from != x.st[i]:
		v.add(InvEVTransitionsAllowed, "%s EV %#x event says %s->%s but the EV was %s", side[s], e.EV, from, to, x.st[i])
	case !evtable.Allowed(from, to, sm.EVCause(e.Reason)):
		v.add(InvEVTransitionsAllowed, "%s EV %#x %s->%s for cause %s is not in the table", side[s], e.EV, from, to, sm.EVCause(e.Reason))
	case !c.justified(s, e, x.timedOut, x.inferred):
		v.add(InvEVTransitionsAllowed, "%s EV %#x %s->%s claims cause %s, which this step (%s) is not", side[s], e.EV, from,
			to, sm.EVCause(e.Reason), actNames[c.log.act.kind])
	}
	if x.mustBe[i] == sm.EVSkip && from == sm.EVSkip && sm.EVCause(e.Reason) == sm.CauseRotation {
		// The answer made the EV SKIP; a rotation ending later in the
		// same step may end the SKIP (EV-ST-6).
		x.mustBe[i] = sm.EVUnknown
	}
	x.st[i] = to
}

// timeoutEvent is RTOBackoff for one reported timeout: only a PSN whose
// timer the checker has expiring in this step may time out (LR-TMR-4).
func (c *checker) timeoutEvent(v *violations, x *sideStep, e sm.Event) {
	pg := x.pg
	x.timedOut = append(x.timedOut, e.EV)
	if rp := c.rel(e.PSN); rp >= maxPSNs || x.due&(1<<rp) == 0 {
		at := "never sent"
		if rp < maxPSNs && pg.rto[rp] != 0 {
			at = fmt.Sprintf("due at %s (sent at %s, RTO T×2^%d)", fmtTime(c.due(pg, rp)), fmtTime(pg.sentAt[rp]), pg.rto[rp]-1)
		}
		v.add(InvRTOBackoff, "%s times out psn %d at %s, in a %s step; its timer is %s", side[x.s], e.PSN, fmtTime(e.Time),
			actNames[c.log.act.kind], at)
	} else {
		x.due &^= 1 << rp
		x.g.rto[rp] = 0
	}
	if c.rel(e.PSN) < maxPSNs {
		x.g.nackEV[c.rel(e.PSN)] = e.EV + 1
	}
}

// dataSent records a data packet's send time and RTO exponent and checks
// a retransmission (SelectiveRetransmitOnly, NACKedEVNotReused,
// ResourceHoldOff) and the EV it goes on (SentOnGoodEV).
func (c *checker) dataSent(v *violations, x *sideStep, e sm.Event) {
	s, g := x.s, x.g
	if p := c.rel(e.PSN); p < maxPSNs {
		r := 0
		if !x.unaMoved {
			r = int(g.retries)
		}
		if x.fired && p < x.stalled {
			r-- // sent by the pump before the stall timer expired
		}
		g.sentAt[p] = e.Time
		g.txEV[p] = uint8(c.evIndex(e.EV) + 1)
		g.rto[p] = uint8(min(max(0, r-c.cfg.LinearCnt), sm.MaxTimeout-int(c.cfg.TimeoutAttr)) + 1)
		if e.Flags&sm.FlagRetransmit != 0 {
			if x.pg.acked&(1<<p) != 0 {
				v.add(InvSelectiveRetransmitOnly, "%s retransmits psn %d, which was already acknowledged", side[s], e.PSN)
			}
			if n := g.nackEV[p]; n != 0 && n == e.EV+1 {
				v.add(InvNACKedEVNotReused, "%s retransmits psn %d on EV %#x, the EV the NACK or timeout named", side[s], e.PSN, e.EV)
			}
			g.nackEV[p] = 0
			if h := g.hold[p]; h != 0 && e.Time < h {
				v.add(InvResourceHoldOff, "%s retransmits psn %d at %v, before its resource NACK's hold-off ends at %v", side[s],
					e.PSN, e.Time, h)
			}
			g.hold[p] = 0
		}
	}
	down := x.post.down&(1<<e.Plane) != 0
	if i := c.evIndex(e.EV); i < 0 || x.st[i] != sm.EVGood || down {
		state := "unknown"
		if i >= 0 {
			state = x.st[i].String()
		}
		v.add(InvSentOnGoodEV, "%s sends psn %d on EV %#x, which is %s (plane %d down=%v)", side[s], e.PSN, e.EV, state,
			e.Plane, down)
	}
}

// checkTimersFired: a PSN whose timer expired may have been queued
// otherwise within the step; one still in flight must have timed out
// (RTOBackoff, LR-TMR-3).
func (c *checker) checkTimersFired(v *violations, x *sideStep) {
	pg := x.pg
	for p := range uint32(maxPSNs) {
		if x.due&(1<<p) != 0 && sending(x.q1) && x.q1.PSNStateOf(c.abs(p)) == sm.PSNInFlight {
			v.add(InvRTOBackoff, "%s: the timer of psn %d expired at %s (sent at %s, RTO T×2^%d), but it is still in flight "+
				"without a timeout", side[x.s], c.abs(p), fmtTime(c.due(pg, p)), fmtTime(pg.sentAt[p]), pg.rto[p]-1)
		}
	}
}

// checkEVStates: every EV ends the step in the state its events moved it
// to (no silent change, EVTransitionsAllowed), and a probe answer's
// requirement holds (ProbeRestoresEV).
func (c *checker) checkEVStates(v *violations, x *sideStep) {
	s := x.s
	for i, e := range x.q1.EVs(nil) {
		if e.State != x.st[i] {
			v.add(InvEVTransitionsAllowed, "%s EV %#x changed %s->%s without an EVState event", side[s], e.Value, x.st[i], e.State)
		}
		if i >= len(x.mustBe) {
			continue
		}
		if m := x.mustBe[i]; m != sm.EVUnknown && e.State != m && sending(x.q1) {
			v.add(InvProbeRestoresEV, "%s EV %#x is %s after %d probe answer(s) with m = %s; it must be %s", side[s], e.Value,
				e.State, x.g.probeRun[i], map[sm.EVState]string{sm.EVGood: "NONE", sm.EVSkip: "SKIP_ONCE"}[m], m)
		}
	}
}

// checkCompletions checks the completions QP s wrote: its sends
// (CMP-SND-*) and its receives of the other QP's WriteIMMs (WIMM-RSP-*,
// CMP-RCV-1).
func (c *checker) checkCompletions(v *violations, s int, post *world) {
	g, gr := &post.g[s], &post.g[1-s]
	for _, cp := range c.log.comps[s] {
		if cp.Recv {
			if cp.Status == sm.StatusSuccess {
				c.checkRecvCompletion(v, s, gr, cp)
			}
			continue
		}
		c.silentCompletions(v, s, g, int(min(cp.WRID-1, uint64(post.posted[s]))))
		want := uint64(g.sendDone) + 1
		if cp.WRID != want || want > uint64(post.posted[s]) {
			v.add(InvSendCompletionsInOrder, "%s completes WR %d, want WR %d (posted %d)", side[s], cp.WRID, want, post.posted[s])
		} else if m := c.msgs[s][want-1]; cp.Status == sm.StatusSuccess && !allPlaced(g.placed, m.first, m.first+m.n) {
			v.add(InvCompletionOnlyAfterPlacement, "%s completes WR %d before its PSNs %d-%d are all placed (placed %b)", side[s],
				cp.WRID, m.first, m.first+m.n-1, g.placed)
		} else if cp.Status == sm.StatusSuccess {
			c.checkMemory(v, s, g, fmt.Sprintf("WR %d complete", cp.WRID), m.first, m.first+m.n)
		}
		g.sendDone++
		if cp.Status == sm.StatusSuccess {
			g.sendOK++
		}
	}
	c.silentCompletions(v, s, g, int(post.posted[s])-post.qp[s].AbstractState().SendQueue)
}

// checkRecvCompletion checks a successful WriteIMM receive completion QP s
// wrote: the next in RQMSN order, after its PSNs and every earlier one are
// placed, with the right bytes in memory.
func (c *checker) checkRecvCompletion(v *violations, s int, gr *ghost, cp sm.Completion) {
	defer func() { gr.immDone++ }()
	if c.cfg.Adversary {
		c.checkAdversaryIMM(v, s, gr, cp)
		return
	}
	imms := c.imms(1 - s)
	if int(gr.immDone) >= len(imms) || int(cp.RQMSN) != int(gr.immDone) {
		v.add(InvWriteIMMExactlyOnceInOrder, "%s delivers WriteIMM rqmsn=%d, want rqmsn=%d of %d", side[s], cp.RQMSN,
			gr.immDone, len(imms))
		return
	}
	switch m := imms[gr.immDone]; {
	case !allPlaced(gr.placed, m.first, m.first+m.n):
		v.add(InvCompletionOnlyAfterPlacement, "%s delivers WriteIMM rqmsn=%d before its PSNs %d-%d are all placed (placed %b)",
			side[s], cp.RQMSN, m.first, m.first+m.n-1, gr.placed)
	case !allPlaced(gr.placed, 0, m.first):
		v.add(InvWriteIMMExactlyOnceInOrder, "%s delivers WriteIMM rqmsn=%d before every earlier PSN (0-%d) is placed (placed %b)",
			side[s], cp.RQMSN, m.first-1, gr.placed)
	default:
		c.checkMemory(v, s, gr, fmt.Sprintf("WriteIMM rqmsn=%d received", cp.RQMSN), 0, m.first+m.n)
	}
}

// checkQueues updates the per-PSN ghost state of a requester that was in
// RTS: hold-offs, timers and avoided EVs of PSNs no longer outstanding,
// NACKedPSNQueued, SelectiveRetransmitOnly for queued PSNs, what has been
// acknowledged, and the retry count's reset when una advances (LR-TMR-6).
func (c *checker) checkQueues(v *violations, x *sideStep) {
	s, q1, g := x.s, x.q1, x.g
	rts := sending(q1)
	for p := uint32(0); p < maxPSNs; p++ {
		ps := q1.PSNStateOf(c.abs(p))
		if !rts || ps == sm.PSNNotOutstanding || ps == sm.PSNSACKed {
			g.hold[p], g.nackEV[p] = 0, 0
		}
		if ps != sm.PSNInFlight || !rts {
			g.rto[p] = 0
		}
	}
	c.checkOwed(v, s, q1, g)
	if !rts {
		return
	}
	una := wire.PSNAdd(q1.CumulativeACK(), 1)
	for p := una; p != q1.NextPSN(); p = wire.PSNAdd(p, 1) {
		if c.rel(p) < maxPSNs && q1.PSNStateOf(p) == sm.PSNLost && x.pg.acked&(1<<c.rel(p)) != 0 {
			v.add(InvSelectiveRetransmitOnly, "%s queues psn %d for retransmission, which was already acknowledged", side[s], p)
		}
	}
	if wire.PSNDiff(una, wire.PSNAdd(x.q0.CumulativeACK(), 1)) > 0 {
		g.retries = 0 // LR-TMR-6: reset when una advances
	}
	for p := uint32(0); p < maxPSNs && wire.PSNLess(c.abs(p), una); p++ {
		g.acked |= 1 << p
	}
	for p := una; p != q1.NextPSN(); p = wire.PSNAdd(p, 1) {
		if c.rel(p) < maxPSNs && q1.PSNStateOf(p) == sm.PSNSACKed {
			g.acked |= 1 << c.rel(p)
		}
	}
}

// checkRetryBudget is RetryBudget (LR-TMR-6, LR-TMR-7): the QP's retry
// counter against the retry events the checker counted.
func (c *checker) checkRetryBudget(v *violations, x *sideStep) {
	s, q1, g := x.s, x.q1, x.g
	rts := sending(q1)
	switch {
	case rts && q1.Retries() != int(g.retries):
		v.add(InvRetryBudget, "%s retry counter is %d, but %d retry events happened since una last advanced", side[s],
			q1.Retries(), g.retries)
	case rts && c.limit >= 0 && int(g.retries) > c.limit:
		v.add(InvRetryBudget, "%s is in RTS after %d retries, beyond the budget %d", side[s], g.retries, c.limit)
	case c.limit >= 0 && int(g.retries) > c.limit && q1.State() != sm.StateError:
		v.add(InvRetryBudget, "%s spent %d retries of %d but is in %s, not ERROR", side[s], g.retries, c.limit, q1.State())
	case q1.State() == sm.StateError && q1.ErrorCause() == sm.CauseRetryExceeded && (c.limit < 0 || int(g.retries) <= c.limit):
		v.add(InvRetryBudget, "%s entered ERROR (retry exceeded) after %d retries of %d", side[s], g.retries, c.limit)
	}
}

// checkWindowAndAcks checks a requester in RTS: WindowRespected (every PSN
// sent within una + W, MPR-WIN-1), its own accounting, and AckSound (what
// it counts as acknowledged the responder has received).
func (c *checker) checkWindowAndAcks(v *violations, x *sideStep) {
	s, q1 := x.s, x.q1
	una := wire.PSNAdd(q1.CumulativeACK(), 1)
	if d := wire.PSNDiff(q1.NextPSN(), una); d > int32(c.cfg.MPR) {
		v.add(InvWindowRespected, "%s has sent up to psn %d with una %d: %d PSNs, window %d", side[s],
			wire.PSNAdd(q1.NextPSN(), -1), una, d, c.cfg.MPR)
	}
	c.checkAccounting(v, s, x.post)
	r := x.post.qp[1-s]
	if wire.PSNDiff(q1.CumulativeACK(), r.ResponderCumulativeACK()) > 0 {
		v.add(InvAckSound, "%s cumulative ACK %d is beyond %s's %d", side[s], q1.CumulativeACK(), side[1-s], r.ResponderCumulativeACK())
	}
	for p := una; p != q1.NextPSN(); p = wire.PSNAdd(p, 1) {
		if q1.PSNStateOf(p) == sm.PSNSACKed && !r.ResponderHas(p) {
			v.add(InvAckSound, "%s counts psn %d as SACKed but %s has not received it", side[s], p, side[1-s])
		}
	}
}
