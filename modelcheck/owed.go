package modelcheck

import (
	sm "github.com/openmrc/mrc/statemachine"
)

// checkOwed is NACKedPSNQueued (LR-NACK-1, LR-TMR-5) as an obligation
// that outlives the step that created it. A recoverable NACK the
// environment delivered for an outstanding PSN, or the expiry of the
// PSN's timer by the checker's own record, owes the PSN a retransmission
// (ghost.owed). Only a retransmitted data packet of that PSN that the
// requester hands to the network (or to a failed path) discharges it, or
// the PSN being acknowledged, or the QP leaving RTS. In every state until
// then, the PSN must be queued for retransmission: a PSN that goes back to
// in flight with nothing sent, in this step or any later one, was dropped
// from the queue.
func (c *checker) checkOwed(v *violations, s int, q1 *sm.QP, g *ghost) {
	if g.owed == 0 {
		return
	}
	for _, list := range [2][]*packet{c.log.sent[s], c.log.holed[s]} {
		for _, k := range list {
			if r := c.rel(k.p.BTH.PSN); k.isData() && k.p.BTH.Retransmit && r < maxPSNs {
				g.owed &^= 1 << r
			}
		}
	}
	rts := sending(q1)
	for p := uint32(0); p < maxPSNs; p++ {
		if g.owed&(1<<p) == 0 {
			continue
		}
		switch ps := q1.PSNStateOf(c.abs(p)); {
		case !rts || ps == sm.PSNNotOutstanding || ps == sm.PSNSACKed:
			g.owed &^= 1 << p
		case ps != sm.PSNLost:
			v.add(InvNACKedPSNQueued, "%s psn %d is owed a retransmission (a recoverable NACK or its timer expired) but is in "+
				"flight, not queued, and no retransmission of it was sent", side[s], c.abs(p))
			g.owed &^= 1 << p
		}
	}
}
