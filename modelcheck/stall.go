package modelcheck

import (
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The checker's own stall timer (LR-SM-3). A queued retransmission that no
// EV may carry waits under a timer of RTO(c) = T × 2^max(0, c − linear_cnt)
// that times one PSN's wait: it starts when that PSN begins to wait and
// starts again when another PSN waits in its place or a NACK renews the
// waiting PSN's avoidance (AMB-101); each expiry is one retry event
// (LR-TMR-6) and ends the waiting PSN's avoidance of the EV its NACK or
// timeout named (AMB-44), never less than RTO(c) after it began. The ghost
// arms it from what it sees at the end of a step (the oldest queued PSN
// not held back, within the window and cwnd, still queued after the QP's
// pump) and fires it on timer steps that reach its deadline. The retry is
// counted from that environment event, not from the QP's EvStallTimeout.

// waiting returns the offset of the PSN QP s waits to retransmit in w, if
// any: the oldest queued PSN that is not held back by a resource NACK
// (LR-NACK-2), within the window (effWin: MPR, or the smaller window the
// responder advertised, MPR-DYN-3) and within cwnd (LR-RTX-3). After a
// step the QP's pump has sent every retransmission it could, so a PSN
// that is still queued has no EV to go on.
func (c *checker) waiting(w *world, s int) (uint32, bool) {
	q, g := w.qp[s], &w.g[s]
	if !sending(q) {
		return 0, false
	}
	una := wire.PSNAdd(q.CumulativeACK(), 1)
	for p := una; p != q.NextPSN(); p = wire.PSNAdd(p, 1) {
		r := c.rel(p)
		if r >= maxPSNs || q.PSNStateOf(p) != sm.PSNLost || g.hold[r] > w.now {
			continue
		}
		win := c.cfg.MPR
		if g.peerWin != 0 && int(g.peerWin) < win {
			win = int(g.peerWin)
		}
		if int(wire.PSNDiff(p, una)) >= win {
			return 0, false
		}
		if c.cfg.NSCC && q.InflightBytes() != 0 && q.InflightBytes()+pathMTU > q.Cwnd() {
			return 0, false
		}
		return r, true
	}
	return 0, false
}

// stallExpiry reports whether the checker's stall timer of QP s expires
// in this step (a timer step reaching its deadline, the QP still in RTS
// and within its retry budget after the step's timeouts) and which PSN
// (offset) waits then: the oldest queued one (before the step, or timed
// out in it, due) not held back that the QP's pump did not retransmit
// before the expiry. A PSN retransmitted in the step on an EV other than
// the one it avoids went out before the expiry (the same EV states held
// then); one retransmitted on the EV it avoids, or not at all, is the one
// that waited; if it is not the PSN the timer was timing, the pump
// restarted the timer for it and nothing expires (AMB-101). On expiry the
// retry is counted and the PSN's avoidance ends.
func (c *checker) stallExpiry(s int, pre, post *world, due uint32) (uint32, bool) {
	pg, g := &pre.g[s], &post.g[s]
	q0 := pre.qp[s]
	c.stallFired[s] = false
	if c.log.act.kind != actTimer || pg.stallAt == 0 || pg.stallAt > post.now || !sending(q0) {
		return 0, false
	}
	if c.limit >= 0 && int(g.retries) > c.limit {
		return 0, false // a timeout of this step spent the budget: the QP failed first
	}
	sentOn := c.retransmittedOn(s)
	una := wire.PSNAdd(q0.CumulativeACK(), 1)
	for p := una; p != q0.NextPSN(); p = wire.PSNAdd(p, 1) {
		r := c.rel(p)
		if r >= maxPSNs || g.hold[r] > post.now {
			continue
		}
		avoid := pg.nackEV[r]
		switch {
		case due&(1<<r) != 0:
			avoid = 0
			if i := pg.txEV[r]; i != 0 {
				avoid = c.evs[i-1] + 1
			}
		case q0.PSNStateOf(p) != sm.PSNLost:
			continue
		}
		if e := sentOn[r]; e != 0 && (avoid == 0 || e != avoid) {
			continue // sent before the expiry
		}
		if r != uint32(pg.stallPSN) {
			return 0, false // another PSN waits now: the pump restarted the timer (AMB-101)
		}
		g.retries++
		g.nackEV[r] = 0
		c.stallFired[s] = true
		return r, true
	}
	return 0, false
}

// retransmittedOn lists, by PSN offset, EV+1 of the first retransmission
// QP s sent in this step.
func (c *checker) retransmittedOn(s int) [maxPSNs]uint32 {
	var on [maxPSNs]uint32
	for _, e := range c.log.ev[s] {
		if e.Kind == sm.EvPacketSent && e.Flags&sm.FlagRetransmit != 0 && wire.Opcode(e.Reason).IsWrite() {
			if r := c.rel(e.PSN); r < maxPSNs && on[r] == 0 {
				on[r] = e.EV + 1
			}
		}
	}
	return on
}

// rearmStall updates the checker's stall timer of QP s at the end of a
// step: stopped when nothing waits, started with RTO(c) of the retries
// counted so far when a wait begins, the timer has just expired, another
// PSN waits, or a NACK delivered in the step renewed the waiting PSN's
// avoidance (the timer times one PSN's wait, AMB-101).
func (c *checker) rearmStall(s int, post *world, fired bool) {
	g := &post.g[s]
	r, ok := c.waiting(post, s)
	if !ok {
		g.stallAt = 0
		return
	}
	if g.stallAt == 0 || fired || r != uint32(g.stallPSN) || c.nackedIn(s, r) {
		g.stallPSN = uint8(r)
		sh := min(max(0, int(g.retries)-c.cfg.LinearCnt), sm.MaxTimeout-int(c.cfg.TimeoutAttr))
		g.stallAt = post.now + sm.Timeout(c.cfg.TimeoutAttr)<<sh
	}
}

// nackedIn reports whether this step delivered to QP s a recoverable NACK
// for the PSN at offset r.
func (c *checker) nackedIn(s int, r uint32) bool {
	k := c.log.pkt
	return k != nil && k.to() == s && k.op() == wire.OpNACK && recoverable(k.p.NETH.Reason) &&
		c.rel(k.p.NETH.NACKPSN&wire.PSNMask) == r
}

// sackWindow records the window a SACK delivered to QP s advertises
// (dynamic MPR, MPR-DYN-3): the requester's effective window from then on.
func (c *checker) sackWindow(s int, q0 *sm.QP, g *ghost) {
	k := c.log.pkt
	if !c.cfg.DynamicMPR || k == nil || k.to() != s || k.op() != wire.OpSACK || !sending(q0) {
		return
	}
	if m := k.p.SETH.MPR; m != 0 {
		g.peerWin = m
	}
}
