package modelcheck

import (
	"fmt"
	"slices"
	"strings"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Invariant names: the TLA+ model's names (tla/MRC.tla) where it has the
// same property.
const (
	InvNoDuplicatePlacement         = "NoDuplicatePlacement"         // RSP-DUP-1, RSP-RCV-3
	InvCompletionOnlyAfterPlacement = "CompletionOnlyAfterPlacement" // CMP-SND-1, CMP-RCV-1, WIMM-RSP-1
	InvWriteIMMExactlyOnceInOrder   = "WriteIMMExactlyOnceInOrder"   // WIMM-RSP-1, WIMM-RSP-2, CMP-RCV-1
	InvSendCompletionsInOrder       = "SendCompletionsInOrder"       // CMP-SND-2, CMP-ERR-1
	InvWindowRespected              = "WindowRespected"              // MPR-WIN-1, REQ-TX-1
	InvEVTransitionsAllowed         = "EVTransitionsAllowed"         // EV-ST-2 to EV-ST-10
	InvSentOnGoodEV                 = "SentOnGoodEV"                 // EV-ST-1, EV-SET-4, EV-PORT-1
	InvNACKedEVNotReused            = "NACKedEVNotReused"            // EV-ST-13, LR-NACK-1
	InvNACKedPSNQueued              = "NACKedPSNQueued"              // LR-NACK-1, LR-TMR-5
	InvSelectiveRetransmitOnly      = "SelectiveRetransmitOnly"      // LR-RTX-1, LR-SACK-2
	InvRetryBudget                  = "RetryBudget"                  // LR-TMR-6, LR-TMR-7, LR-NACK-5
	InvAckSound                     = "AckSound"                     // LR-SACK-1, LR-SACK-2, RSP-SACK-1
	InvProgress                     = "Progress"                     // QP-ST-10, CMP-SND-1: no silent hang
	InvWriteIMMLimit                = "WriteIMMLimit"                // WIMM-REQ-1, WIMM-RSP-4
	InvInflightAccounting           = "InflightAccounting"           // REQ-TX-1, LR-RTX-3: bytes and PSNs in flight
	InvProbeRestoresEV              = "ProbeRestoresEV"              // EV-ST-7, EV-ST-8
	InvResourceHoldOff              = "ResourceHoldOff"              // LR-NACK-2
	InvMemoryMatchesWrites          = "MemoryMatchesWrites"          // RSP-RCV-3, CMP-SND-1, CMP-RCV-1: the bytes, where a completion says so
	InvErrorJustified               = "ErrorJustified"               // QP-ST-10, LR-TMR-7, LR-NACK-4: ERROR only for a cause the environment gave
	InvWindowAtReceiver             = "WindowAtReceiver"             // MPR-WIN-1: the window as the responder sees it
	InvResponderWindow              = "ResponderWindow"              // RSP-RCV-6, RSP-NACK-4: nothing placed beyond the responder's window
	InvRTOBackoff                   = "RTOBackoff"                   // LR-TMR-4: no timeout before T × 2^max(0, c − linear_cnt)
)

// Invariants lists every invariant the checker evaluates, in the order it
// evaluates them within a step.
var Invariants = []string{
	InvNoDuplicatePlacement, InvNACKedEVNotReused, InvSelectiveRetransmitOnly, InvSentOnGoodEV,
	InvEVTransitionsAllowed, InvCompletionOnlyAfterPlacement, InvWriteIMMExactlyOnceInOrder,
	InvSendCompletionsInOrder, InvNACKedPSNQueued, InvRetryBudget, InvWindowRespected, InvAckSound, InvWriteIMMLimit,
	InvInflightAccounting, InvProbeRestoresEV, InvResourceHoldOff, InvMemoryMatchesWrites, InvErrorJustified,
	InvWindowAtReceiver, InvResponderWindow, InvResponderAnswers, InvRTOBackoff, InvSQDrained, InvCommEst, InvProgress,
}

type violations struct {
	names   []string
	details []string
}

func (v *violations) add(name, format string, args ...any) {
	v.names = append(v.names, name)
	v.details = append(v.details, name+": "+fmt.Sprintf(format, args...))
}

func (v *violations) any() bool { return len(v.names) > 0 }

func recoverable(r wire.NACKReason) bool {
	switch r {
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop, wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource,
		wire.NACKPSNOutOfWindow:
		return true
	}
	return false
}

// justified reports whether the step's input is the event the EV change
// of e claims as its cause, on that EV. An inferred loss (EV-SM-5) is
// justified by a SACK delivered to QP s in this step that made it queue,
// by the reorder rule (LR-RTX-4), a first transmission sent on that EV:
// inferred lists the EVs of the PSNs so queued, before the change.
func (c *checker) justified(s int, e sm.Event, timedOut, inferred []uint32) bool {
	l := &c.log
	k := l.pkt
	in := k != nil && k.to() == s
	sack := in && k.op() == wire.OpSACK && k.p.SETH.Entropy == e.EV
	switch sm.EVCause(e.Reason) {
	case sm.CauseSkipOnce:
		return sack && !k.p.SETH.PR && k.p.SETH.M == wire.MSkipOnce
	case sm.CauseAlwaysSkip:
		return sack && !k.p.SETH.PR && k.p.SETH.M == wire.MAlwaysSkip
	case sm.CauseTrimmed:
		return in && k.op() == wire.OpNACK && k.p.NETH.Entropy == e.EV && k.p.NETH.Reason == wire.NACKTrimmed
	case sm.CauseTimeout:
		for _, v := range timedOut {
			if v == e.EV {
				return l.act.kind == actTimer
			}
		}
		return false
	case sm.CauseRotation:
		return true // any step in which the requester picks an EV
	case sm.CauseProbeOK:
		return sack && k.p.SETH.PR && k.p.SETH.M == wire.MNone
	case sm.CauseProbeSkip:
		return sack && k.p.SETH.PR && k.p.SETH.M == wire.MSkipOnce
	case sm.CauseInferredLoss:
		return in && k.op() == wire.OpSACK && slices.Contains(inferred, e.EV)
	case sm.CauseController:
		return l.act.kind == actCtl && (int(l.act.side) == s || c.cfg.SharedNode) && c.evs[l.act.idx] == e.EV && l.act.arg == e.To
	}
	return false
}

func outstanding(q *sm.QP, psn uint32) bool {
	st := q.PSNStateOf(psn)
	return st == sm.PSNInFlight || st == sm.PSNLost
}

// check evaluates every invariant on the step pre → post that c.log
// describes, updating post's ghost state.
func (c *checker) check(pre, post *world) *violations {
	v := &violations{}
	l := &c.log
	// Placements first: completions in this step are judged against them.
	for s := range 2 {
		g := &post.g[1-s] // QP s places what the other QP sends
		for _, pa := range l.placed[s] {
			p := c.rel(pa)
			switch {
			case p >= maxPSNs:
				v.add(InvNoDuplicatePlacement, "%s placed psn %d, beyond every posted WR", side[s], signedPSN(p))
			case g.placed&(1<<p) != 0:
				v.add(InvNoDuplicatePlacement, "%s placed psn %d a second time", side[s], p)
			default:
				g.placed |= 1 << p
			}
			// ResponderWindow: the responder places only PSNs within
			// (its cumulative ACK, + its window] (RSP-RCV-6).
			if d := wire.PSNDiff(pa, pre.qp[s].ResponderCumulativeACK()); d < 1 || int(d) > c.dynMPR(pre, s) {
				v.add(InvResponderWindow, "%s placed psn %d with its cumulative ACK at %d and a window of %d PSNs", side[s],
					signedPSN(p), signedPSN(c.rel(pre.qp[s].ResponderCumulativeACK())), c.dynMPR(pre, s))
			}
		}
		for _, wr := range l.writes[s] {
			g.write(wr)
		}
	}
	c.checkResponderAnswers(v, pre, post)
	for s := range 2 {
		c.checkSide(v, s, pre, post)
		c.rearmStall(s, post, c.stallFired[s])
	}
	c.checkAdversaryHeld(v, post)
	c.checkReceiverWindow(v, pre, post)
	c.checkEVEvents(v, post)
	c.checkSQD(v, post)
	c.checkCommEst(v, pre, post)
	return v
}

// done reports whether every WR of w has completed and every WriteIMM
// been delivered, or a QP is in ERROR.
func (c *checker) done(w *world) bool {
	if w.qp[0].State() == sm.StateError || w.qp[1].State() == sm.StateError {
		return true
	}
	for s := range 2 {
		if !c.sideDone(w, s) {
			return false
		}
	}
	return true
}

// sideDone reports whether QP s has posted every WR, every one has
// completed (signaled or not) and the peer has delivered every WriteIMM.
func (c *checker) sideDone(w *world, s int) bool {
	return int(w.posted[s]) == len(c.msgs[s]) && w.qp[s].AbstractState().SendQueue == 0 &&
		int(w.g[s].immDone) == len(c.imms(s))
}

func (c *checker) allPosted(w *world) bool {
	return int(w.posted[0]) == len(c.msgs[0]) && int(w.posted[1]) == len(c.msgs[1])
}

// livelockConfirm is how many further timer firings confirm a livelock.
const livelockConfirm = 16

// livelock checks a timer step pre → post with nothing in flight before
// or after, every WR posted, the work not done and every plane up. When post is pre again
// (shifted in time: the fingerprint is relative to the current time), but
// for the time budgets, the random stream and the rotation order, and
// livelockConfirm more timer firings (beyond the budget) keep it so, with
// nothing delivered and nothing completed, the QPs hang while only their
// timers run: the same step repeats forever (QP-ST-10, LR-TMR-7).
func (c *checker) livelock(pre, post *world, scratch []uint64) (*violations, []uint64) {
	if len(pre.net) != 0 || len(post.net) != 0 || pre.down != 0 || c.done(pre) || !c.allPosted(pre) {
		return nil, scratch
	}
	h0, scratch := pre.coarseHash(scratch)
	h1, scratch := post.coarseHash(scratch)
	if h0 != h1 {
		return nil, scratch
	}
	saved := c.log
	c.log = stepLog{}
	defer func() { c.log = saved }()
	w := post
	for range livelockConfirm {
		if deadline(w) == sm.Never {
			return nil, scratch
		}
		nw, err := c.apply(w, action{kind: actTimer})
		if err != nil || len(nw.net) != 0 || len(c.log.comps[0])+len(c.log.comps[1]) != 0 {
			return nil, scratch
		}
		var h uint64
		if h, scratch = nw.coarseHash(scratch); h != h0 {
			return nil, scratch
		}
		w = nw
	}
	v := &violations{}
	v.add(InvProgress, "nothing in flight, and every timer firing leads back to the same state (only time, the random "+
		"stream and the EV rotation change; confirmed for %d more firings), while %s: the QPs hang while their timers run",
		livelockConfirm, c.progressText(pre))
	return v, scratch
}

func (c *checker) progressText(w *world) string {
	var parts []string
	for s := range 2 {
		if len(c.msgs[s]) > 0 {
			parts = append(parts, fmt.Sprintf("%s has %d of %d WRs complete and %d of %d WriteIMMs delivered", side[s],
				w.g[s].sendDone, len(c.msgs[s]), w.g[s].immDone, len(c.imms(s))))
		}
	}
	return strings.Join(parts, ", ")
}

// silentCompletions accounts for unsignaled WRs among the first n that
// completed successfully without a completion (CMP-SND-3): their data must
// have been placed.
func (c *checker) silentCompletions(v *violations, s int, g *ghost, n int) {
	for int(g.sendDone) < n && c.msgs[s][g.sendDone].unsig {
		if m := c.msgs[s][g.sendDone]; !allPlaced(g.placed, m.first, m.first+m.n) {
			v.add(InvCompletionOnlyAfterPlacement, "%s completed unsignaled WR %d before its PSNs %d-%d were all placed",
				side[s], g.sendDone+1, m.first, m.first+m.n-1)
		}
		c.checkMemory(v, s, g, fmt.Sprintf("unsignaled WR %d complete", g.sendDone+1), c.msgs[s][g.sendDone].first,
			c.msgs[s][g.sendDone].first+c.msgs[s][g.sendDone].n)
		g.sendDone++
		g.sendOK++
	}
}

// checkAccounting compares the requester's own bookkeeping with what its
// per-PSN states say: the WriteIMMs it has started and not completed
// (WIMM-REQ-1: at most max_wimm), the PSNs it lists as in flight and the
// payload bytes it counts against the window (REQ-TX-1, LR-RTX-3), and the
// WriteIMMs the peer's responder holds (WIMM-RSP-4: at most
// max_wimm_dest).
func (c *checker) checkAccounting(v *violations, s int, w *world) {
	q := w.qp[s]
	ab := q.AbstractState()
	done := int(w.posted[s]) - ab.SendQueue
	started := 0
	for k, m := range c.msgs[s] {
		if m.imm && k >= done && k < int(w.posted[s]) && wire.PSNLess(c.abs(m.first), q.NextPSN()) {
			started++
		}
	}
	if q.WIMMInFlight() != started || started > max(1, c.cfg.MaxWIMM) {
		v.add(InvWriteIMMLimit, "%s counts %d WriteIMMs in flight; %d are started and not complete; max_wimm %d", side[s],
			q.WIMMInFlight(), started, max(1, c.cfg.MaxWIMM))
	}
	if h := len(w.qp[1-s].WIMMHeld(nil)); h > max(1, c.cfg.MaxWIMMDest) {
		v.add(InvWriteIMMLimit, "%s holds %d WriteIMMs, max_wimm_dest %d", side[1-s], h, max(1, c.cfg.MaxWIMMDest))
	}
	var want []uint32
	inflight := int64(0)
	for p := wire.PSNAdd(q.CumulativeACK(), 1); p != q.NextPSN(); p = wire.PSNAdd(p, 1) {
		switch q.PSNStateOf(p) {
		case sm.PSNInFlight:
			inflight += pathMTU
			want = append(want, p)
		case sm.PSNLost:
			want = append(want, p)
		}
	}
	if got := q.AppendInFlight(nil); !slices.Equal(got, want) {
		v.add(InvInflightAccounting, "%s lists PSNs %v as outstanding, its PSN states say %v", side[s], got, want)
	}
	if q.InflightBytes() != inflight {
		v.add(InvInflightAccounting, "%s counts %d bytes in flight, its in-flight PSNs carry %d", side[s], q.InflightBytes(), inflight)
	}
}

func allPlaced(bits uint32, from, to uint32) bool {
	for p := from; p < to; p++ {
		if bits&(1<<p) == 0 {
			return false
		}
	}
	return true
}

// imms returns the WriteIMMs QP s sends, in RQMSN order.
func (c *checker) imms(s int) []msgInfo {
	var out []msgInfo
	for _, m := range c.msgs[s] {
		if m.imm {
			out = append(out, m)
		}
	}
	return out
}

// progress checks a state in which nothing can happen any more: no packet
// in flight, no deadline, every WR posted and every plane up (waiting for
// a port is not a hang). Every WR must have completed and every WriteIMM
// been delivered, unless a QP is in ERROR or the sender has no GOOD EV left
// (it waits for the controller) (QP-ST-10, CMP-SND-1, WIMM-RSP-1):
// otherwise the QPs hang silently.
func (c *checker) progress(w *world) *violations {
	if len(w.net) != 0 || deadline(w) != sm.Never || w.down != 0 || c.done(w) || draining(w) {
		return nil
	}
	for s := range 2 {
		if int(w.posted[s]) < len(c.msgs[s]) {
			return nil
		}
		if c.sideDone(w, s) {
			continue
		}
		good := false
		for _, e := range w.qp[s].EVs(nil) {
			good = good || e.State == sm.EVGood
		}
		if !good {
			return nil
		}
	}
	v := &violations{}
	v.add(InvProgress, "nothing in flight and no timer armed, but %s", c.progressText(w))
	return v
}

// nackDelivered counts, from the packet the environment delivered to QP s
// in this step (not from what the QP reports about it), a recoverable NACK
// for a PSN outstanding before the step: one retry event (LR-NACK-5), the
// PSN must be queued and avoid the NACK's EV (LR-NACK-1, EV-ST-13), and a
// resource NACK holds it back base_rtt (LR-NACK-2).
func (c *checker) nackDelivered(s int, q0 *sm.QP, g *ghost) {
	k := c.log.pkt
	if k == nil || k.to() != s || k.op() != wire.OpNACK || !sending(q0) {
		return
	}
	n := &k.p.NETH
	psn := n.NACKPSN & wire.PSNMask
	if !recoverable(n.Reason) || !outstanding(q0, psn) {
		return
	}
	psn = c.rel(psn)
	g.retries++
	if psn >= maxPSNs {
		return
	}
	g.owed |= 1 << psn
	if c.evIndex(n.Entropy) >= 0 {
		g.nackEV[psn] = n.Entropy + 1
	}
	switch n.Reason {
	case wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource:
		g.hold[psn] = c.now + c.cfg.baseRTT()
	}
}

// errorJustified: a QP that enters ERROR in this step must have a cause the
// environment gave it in this step: the application's modify, a retry
// budget spent by retry events counted from the environment (LR-TMR-7),
// a fatal answer delivered (NACK UNEXP_EVENT, LR-NACK-4; an AETH NAK,
// CMP-ERR-2), or, as responder, a data packet it must refuse fatally
// (RSP-RCV-2, WIMM-RSP-3, WIMM-RSP-4). Anything else is an ERROR a
// working path would not have caused.
func (c *checker) errorJustified(v *violations, s int, q0, q1 *sm.QP, g *ghost) {
	if q0.State() == sm.StateError || q1.State() != sm.StateError {
		return
	}
	l := &c.log
	k := l.pkt
	in := k != nil && k.to() == s
	var ok bool
	switch cause := q1.ErrorCause(); cause {
	case sm.CauseModify:
		ok = l.act.kind == actModify && int(l.act.side) == s
	case sm.CauseRetryExceeded:
		ok = c.limit >= 0 && int(g.retries) > c.limit
	case sm.CauseRemoteUnexp:
		ok = in && k.op() == wire.OpNACK && k.p.NETH.Reason == wire.NACKUnexpEvent
	case sm.CauseRemoteInvalid, sm.CauseRemoteAccess, sm.CauseRemoteOp:
		ok = in && k.op() == wire.OpAcknowledge && k.p.AETH.Syndrome>>5 == wire.AETHTypeNAK
	case sm.CauseWIMMLimit, sm.CauseNoRecvWR, sm.CauseAccess:
		ok = in && k.isData()
	}
	if !ok {
		v.add(InvErrorJustified, "%s entered ERROR (cause %s) in a %s step that gives no such cause (%d retry events counted, budget %d)",
			side[s], errorCauseNames[min(int(q1.ErrorCause()), len(errorCauseNames)-1)], actNames[l.act.kind], g.retries, c.limit)
	}
}

// checkReceiverWindow checks the MPR window as the responder sees it: no
// data packet sent or delivered in this step lies beyond the receiving
// responder's cumulative ACK + MPR (MPR-WIN-1). A shrinking dynamic
// window and the adversarial requester are exempt: they may.
func (c *checker) checkReceiverWindow(v *violations, pre, post *world) {
	if c.cfg.Adversary || c.cfg.Bounds.DynMPR > 0 {
		return
	}
	l := &c.log
	if k := l.pkt; k != nil && k.isData() {
		if d := wire.PSNDiff(k.p.BTH.PSN, pre.qp[k.to()].ResponderCumulativeACK()); int(d) > c.cfg.MPR {
			v.add(InvWindowAtReceiver, "%s receives psn %d with its cumulative ACK at %d, window %d", side[k.to()], k.p.BTH.PSN,
				signedPSN(pre.qp[k.to()].ResponderCumulativeACK()), c.cfg.MPR)
		}
	}
	for s := range 2 {
		for _, k := range l.sent[s] {
			if d := wire.PSNDiff(k.p.BTH.PSN, post.qp[1-s].ResponderCumulativeACK()); k.isData() && int(d) > c.cfg.MPR {
				v.add(InvWindowAtReceiver, "%s sends psn %d while %s's cumulative ACK is %d, window %d", side[s], k.p.BTH.PSN,
					side[1-s], signedPSN(post.qp[1-s].ResponderCumulativeACK()), c.cfg.MPR)
			}
		}
	}
}

var errorCauseNames = [...]string{"none", "modify", "retry exceeded", "NACK UNEXP_EVENT", "NAK invalid request",
	"NAK remote access", "NAK remote operational", "max_wimm_dest exceeded", "no receive WR", "access outside memory", "unknown"}

// signedPSN shows a cumulative ACK before PSN 0 as −1.
func signedPSN(p uint32) int32 { return int32(p<<8) >> 8 }

// rel is a PSN's offset from the first PSN (Config.StartPSN): the ghost
// state, WRs and payloads are indexed by it; abs is its inverse.
func (c *checker) rel(p uint32) uint32 { return wire.PSNAdd(p, -int(c.cfg.StartPSN)) }

func (c *checker) abs(r uint32) uint32 { return wire.PSNAdd(c.cfg.StartPSN, int(r)) }

// due is when the timer of the PSN at offset p expires, by the checker's
// own record of its last transmission.
func (c *checker) due(g *ghost, p uint32) sm.Time {
	return g.sentAt[p] + sm.Timeout(c.cfg.TimeoutAttr)<<(g.rto[p]-1)
}

// timeoutsDue returns the PSNs (offsets) of QP s whose timers expire in
// this step by the checker's own send times and RTO exponents (LR-TMR-3,
// LR-TMR-4): only a timer step fires them, and it fires all of them. The
// retry event is counted here, from the environment's step and the
// checker's record, not from the QP's report: the timeout of una counts
// when the EV una was last sent on was not ASSUMED_BAD before the step
// (LR-TMR-5, LR-TMR-6).
func (c *checker) timeoutsDue(s int, pre, post *world) uint32 {
	q0 := pre.qp[s]
	pg, g := &pre.g[s], &post.g[s]
	if c.log.act.kind != actTimer || !sending(q0) {
		return 0
	}
	var due uint32
	for p := range uint32(maxPSNs) {
		if pg.rto[p] != 0 && c.due(pg, p) <= post.now {
			due |= 1 << p
		}
	}
	g.owed |= due // LR-TMR-5: each PSN whose timer expires is queued
	una := c.rel(wire.PSNAdd(q0.CumulativeACK(), 1))
	if una < maxPSNs && due&(1<<una) != 0 {
		if i := int(pg.txEV[una]) - 1; i >= 0 {
			if st, _ := q0.EVStateOf(c.evs[i]); st != sm.EVAssumedBad {
				g.retries++
			}
		}
	}
	return due
}
