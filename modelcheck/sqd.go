package modelcheck

import (
	"fmt"

	sm "github.com/openmrc/mrc/statemachine"
)

// SQ drain (QP-ST-12, CTL-AEV-6). The application moves a sending QP from
// RTS to SQD, with or without IBV_QP_EN_SQD_ASYNC_NOTIFY, at any moment
// (Bounds.Drains such moves), and back to RTS whenever it is in SQD.
// SQDrained checks the drain against the checker's own record of what
// the QP sent and had acknowledged.

// InvSQDrained: in SQD no message starts; IBV_EVENT_SQ_DRAINED is raised
// once per move that asked for it, in the step in which every packet of
// every started message is acknowledged (or at the move, if they already
// are), and never otherwise (QP-ST-12, CTL-AEV-6).
const InvSQDrained = "SQDrained"

// The arg of an actSQD action.
const (
	sqdQuiet  = iota // RTS→SQD without EN_SQD_ASYNC_NOTIFY
	sqdNotify        // RTS→SQD with EN_SQD_ASYNC_NOTIFY
	sqdResume        // SQD→RTS
)

// sqdGhost is what SQDrained remembers of QP s's drains.
type sqdGhost struct {
	started uint16 // bit m: WR m's first packet has been sent
	drains  uint8  // moves to SQD so far (Bounds.Drains)
	notify  bool   // the current drain asked for SQ_DRAINED
	raised  bool   // and the QP raised it
}

func (g sqdGhost) word() uint64 {
	return uint64(g.started) | uint64(g.drains)<<16 | boolBit(g.notify)<<24 | boolBit(g.raised)<<25
}

// sqdActions appends the drain and resume moves enabled in w.
func (c *checker) sqdActions(w *world, dst []action) []action {
	if c.cfg.Bounds.Drains == 0 {
		return dst
	}
	for s := range 2 {
		if len(c.msgs[s]) == 0 {
			continue
		}
		switch w.qp[s].State() {
		case sm.StateRTS:
			if int(w.sqd[s].drains) < c.cfg.Bounds.Drains {
				dst = append(dst, action{kind: actSQD, side: uint8(s), arg: sqdQuiet}, action{kind: actSQD, side: uint8(s), arg: sqdNotify})
			}
		case sm.StateSQD:
			dst = append(dst, action{kind: actSQD, side: uint8(s), arg: sqdResume})
		}
	}
	return dst
}

// applySQD moves QP a.side into or out of SQD (mrc_modify_qp).
func (c *checker) applySQD(w *world, a action) error {
	s := int(a.side)
	g := &w.sqd[s]
	to, attr, mask := sm.StateRTS, sm.Attr{}, sm.AttrMask(0)
	if a.arg != sqdResume {
		to = sm.StateSQD
		g.drains++
		g.notify, g.raised = a.arg == sqdNotify, false
		if g.notify {
			attr.SQDNotify, mask = true, sm.AttrEnSQDAsyncNotify
		}
	} else {
		g.notify, g.raised = false, false
	}
	c.record("Modify", sm.Event{QPN: qpns[s], To: uint8(to), Value: uint64(mask)})
	if err := w.own(s).Modify(w.now, to, attr, mask, &c.out); err != nil {
		return fmt.Errorf("modelcheck: %s to %s: %w", side[s], to, err)
	}
	c.collect(w, s)
	return nil
}

// describeSQD renders an actSQD action for counterexamples.
func describeSQD(a action) string {
	switch a.arg {
	case sqdQuiet:
		return side[a.side] + " to SQD"
	case sqdNotify:
		return side[a.side] + " to SQD with EN_SQD_ASYNC_NOTIFY"
	}
	return side[a.side] + " SQD to RTS"
}

// checkSQD evaluates SQDrained on the step pre → post for both QPs and
// updates post's drain ghost.
func (c *checker) checkSQD(v *violations, post *world) {
	if c.cfg.Bounds.Drains == 0 {
		return
	}
	l := &c.log
	for s := range 2 {
		g := &post.sqd[s]
		inSQD := post.qp[s].State() == sm.StateSQD
		for _, list := range [2][]*packet{l.sent[s], l.holed[s]} {
			for _, k := range list {
				m := c.msgStartedBy(s, k)
				if m < 0 || g.started&(1<<m) != 0 {
					continue
				}
				g.started |= 1 << m
				if inSQD {
					v.add(InvSQDrained, "%s starts WR %d (psn %d) in SQD", side[s], m+1, k.p.BTH.PSN)
				}
			}
		}
		raised := 0
		for _, e := range l.ev[s] {
			if e.Kind == sm.EvSQDrained {
				raised++
			}
		}
		pending, psn := c.sqdPending(post, s)
		switch {
		case raised > 0 && (!inSQD || !g.notify):
			v.add(InvSQDrained, "%s raises SQ_DRAINED in %s, not in a drain that asked for it", side[s], post.qp[s].State())
		case raised > 1 || raised == 1 && g.raised:
			v.add(InvSQDrained, "%s raises SQ_DRAINED again in the same drain", side[s])
		case raised == 1 && pending:
			v.add(InvSQDrained, "%s raises SQ_DRAINED while psn %d of a started WR is not acknowledged", side[s], psn)
		case raised == 0 && inSQD && g.notify && !g.raised && !pending:
			v.add(InvSQDrained, "%s is drained (every started WR acknowledged) but raised no SQ_DRAINED", side[s])
		}
		g.raised = g.raised || raised > 0
	}
}

// msgStartedBy is the index of the WR of QP s whose first packet k is, a
// first transmission; -1 if k is none.
func (c *checker) msgStartedBy(s int, k *packet) int {
	if !k.isData() || k.p.BTH.Retransmit {
		return -1
	}
	r := c.rel(k.p.BTH.PSN)
	for m, mi := range c.msgs[s] {
		if mi.first == r {
			return m
		}
	}
	return -1
}

// sqdPending reports whether a PSN of a started WR of QP s is not
// acknowledged in w by the checker's record, and the first such.
func (c *checker) sqdPending(w *world, s int) (bool, uint32) {
	for m, mi := range c.msgs[s] {
		if w.sqd[s].started&(1<<m) == 0 {
			continue
		}
		for p := mi.first; p < mi.first+mi.n; p++ {
			if w.g[s].acked&(1<<p) == 0 {
				return true, c.abs(p)
			}
		}
	}
	return false, 0
}

// draining reports whether a QP of w is in SQD: the application's resume
// is enabled, so w is not a hang (Progress).
func draining(w *world) bool {
	return w.qp[0].State() == sm.StateSQD || w.qp[1].State() == sm.StateSQD
}

// sqdConfig is base with A posting a 2-packet WRITE and a 1-packet WRITE
// (PSNs 0-2) under a window of 1 PSN, so that the first WR is partly sent
// until its first packet is acknowledged; one move to SQD, with or without
// the event, at any moment; one drop and one timer firing.
func sqdConfig(name string) Config {
	c := base(name)
	c.Msgs = [2][]Msg{{{Packets: 2}, {Packets: 1}}}
	c.MPR = 1
	c.Bounds = Bounds{Drains: 1, Drops: 1, Timers: 1}
	return c
}

// sqdLargeConfig is a 3-packet and a 1-packet WRITE (PSNs 0-3) under a
// window of 2, one move to SQD, one drop and two timer firings.
func sqdLargeConfig(name string) Config {
	c := base(name)
	c.Msgs = [2][]Msg{{{Packets: 3}, {Packets: 1}}}
	c.Bounds = Bounds{Drains: 1, Drops: 1, Timers: 2}
	return c
}

// sending reports whether q's requester works: in RTS, and in SQD, which
// retransmits, acknowledges and answers as RTS does (QP-ST-12). The
// invariants about the requester hold in both.
func sending(q *sm.QP) bool { return q.State() == sm.StateRTS || q.State() == sm.StateSQD }
