package modelcheck

import (
	"fmt"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// IBV_EVENT_COMM_EST (CTL-AEV-4, AMB-96). With Config.RTRStart, B starts
// in RTR, as an application leaves a responder until it has seen its
// peer, and moves to RTS (transition rts) at any moment; A sends to it
// from the start. CommEst checks the event against the packets delivered.

// InvCommEst: a QP raises IBV_EVENT_COMM_EST in the step in which, in RTR,
// it receives its first request packet (a write or a probe) and in no
// other step (CTL-AEV-4, AMB-96).
const InvCommEst = "CommEst"

// bringUp moves QP s from RESET to RTS, or to RTR only for B with
// RTRStart.
func (c *checker) bringUp(q *sm.QP, s int) error {
	if !c.cfg.RTRStart || s != 1 {
		return q.BringUp(0, c.cfg.attr(s), &c.out)
	}
	a := c.cfg.attr(s)
	for _, st := range []struct {
		to sm.QPState
		m  sm.AttrMask
	}{{sm.StateInit, sm.MaskInit}, {sm.StateRTR, sm.MaskRTR}} {
		if err := q.Modify(0, st.to, a, st.m, &c.out); err != nil {
			return err
		}
	}
	return nil
}

// rtsActions appends B's move from RTR to RTS while it is in RTR.
func (c *checker) rtsActions(w *world, dst []action) []action {
	if c.cfg.RTRStart && w.qp[1].State() == sm.StateRTR {
		dst = append(dst, action{kind: actRTS, side: 1})
	}
	return dst
}

// applyRTS moves QP a.side from RTR to RTS (mrc_modify_qp).
func (c *checker) applyRTS(w *world, a action) error {
	s := int(a.side)
	c.record("Modify", sm.Event{QPN: qpns[s], To: uint8(sm.StateRTS)})
	if err := w.own(s).Modify(w.now, sm.StateRTS, c.cfg.attr(s), sm.MaskRTS, &c.out); err != nil {
		return fmt.Errorf("modelcheck: %s to RTS: %w", side[s], err)
	}
	c.collect(w, s)
	return nil
}

// checkCommEst evaluates CommEst on the step pre → post; post.est
// records which QPs have raised the event.
func (c *checker) checkCommEst(v *violations, pre, post *world) {
	if !c.cfg.RTRStart {
		return
	}
	k := c.log.pkt
	for s := range 2 {
		raised := 0
		for _, e := range c.log.ev[s] {
			if e.Kind == sm.EvCommEst {
				raised++
			}
		}
		first := k != nil && k.to() == s && (k.isData() || k.op() == wire.OpProbe) &&
			pre.qp[s].State() == sm.StateRTR && pre.est&(1<<s) == 0
		switch {
		case raised > 1 || raised == 1 && !first:
			v.add(InvCommEst, "%s raises COMM_EST %d time(s) in a %s step that is not its first request packet in RTR", side[s],
				raised, actNames[c.log.act.kind])
		case raised == 0 && first:
			v.add(InvCommEst, "%s in RTR receives its first request packet (%s) but raises no COMM_EST", side[s], pktString(k))
		}
		if raised > 0 || first {
			post.est |= 1 << s
		}
	}
}

// commEstConfig is base with B in RTR until the application moves it to
// RTS, one drop and one timer firing.
func commEstConfig(name string) Config {
	c := base(name)
	c.RTRStart = true
	c.Bounds = Bounds{Drops: 1, Timers: 1}
	return c
}
