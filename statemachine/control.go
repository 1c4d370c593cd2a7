package statemachine

import (
	"fmt"

	"github.com/openmrc/mrc/wire/evstate"
)

// SetPortStatus tells the QP which NIC ports are up, locally and at the
// peer, as port-status masks: bit n = port n up, bit 0 unused
// (WIRE-ERTH-2). A plane is usable only while both ends are up: its EVs
// carry nothing while it is down (EV-PORT-1, EV-PORT-2, EP-PSU-3) and are
// usable again, in the state they had, when it comes back (EV-PORT-3).
// Port exclusion moves no EV to ASSUMED_BAD and does not count toward
// ev_min_active (EV-PORT-4).
func (q *QP) SetPortStatus(now Time, local, remote uint32, out *Output) {
	q.begin(now, out)
	defer q.end()
	t := &q.ev
	if t.set == nil {
		return
	}
	up := local & remote >> 1 // bit pl = plane pl (port pl+1) up at both ends
	down := ^up & (1<<t.set.planes - 1)
	changed := down ^ t.planeDown
	if changed == 0 {
		return
	}
	t.planeDown = down
	for pl := 0; pl < t.set.planes; pl++ {
		if changed&(1<<pl) == 0 {
			continue
		}
		var from, to uint8 = 1, 0
		if down&(1<<pl) == 0 {
			from, to = 0, 1
		}
		q.emit(Event{Kind: EvPlane, Plane: uint8(pl), From: from, To: to})
	}
	q.pump()
}

// SetEVState is the controller's MODIFY_EV_STATE on this QP: it moves EV
// ev to GOOD, ASSUMED_BAD or DENIED from any state (EV-ST-9, EV-ST-14);
// other states are rejected, and the state the EV already has changes
// nothing. A controller ASSUMED_BAD is not held back by ev_min_active and
// is probed like any other; a controller GOOD needs no probe. A controller
// change on an EV profile applies to every QP using it: call this on each
// (EV-ST-11).
func (q *QP) SetEVState(now Time, ev uint32, s EVState, out *Output) error {
	q.begin(now, out)
	defer q.end()
	if q.ev.set == nil {
		return fmt.Errorf("%w: the QP has no EV profile before INIT", ErrQPState)
	}
	i, ok := q.ev.set.lookup(ev)
	if !ok {
		return fmt.Errorf("%w: %#x", ErrUnknownEV, ev)
	}
	if !evstate.ControllerMay(s) {
		return fmt.Errorf("%w: the controller sets GOOD, ASSUMED_BAD or DENIED, not %s", ErrInvalidAttr, s)
	}
	q.setEV(i, s, CauseController)
	q.pump()
	return nil
}

// SetReceivePenalty sets the responder's host backpressure: rcv_cwnd_pen
// (0-127) in every SACK from now on, and the restore flag r_c in the next
// one (CC-RSP-3).
func (q *QP) SetReceivePenalty(pen uint8, restore bool) error {
	if pen > 127 {
		return fmt.Errorf("%w: rcv_cwnd_pen %d exceeds 127", ErrInvalidAttr, pen)
	}
	q.rsp.pen, q.rsp.restore = pen, restore
	return nil
}

// SetResourceCondition simulates the responder running short of tracking
// state, packet buffers or another resource: until it is set back to
// ResourcesOK, new data is NACKed with the matching reason and not placed
// (RSP-NACK-3).
func (q *QP) SetResourceCondition(c ResourceCondition) { q.rsp.res = c }

// SetDynamicMPR resizes the responder's tracking window to units × 128
// PSNs, at most MPR_DEST, and advertises it in every SACK (MPR-DYN-2). It
// needs CapDynamicMPR (MPR-DYN-1).
func (q *QP) SetDynamicMPR(units uint8) error {
	r := &q.rsp
	if !r.dyn {
		return fmt.Errorf("%w: dynamic MPR is not enabled (CapDynamicMPR)", ErrQPState)
	}
	unit := uint32(q.st.cfg.Test.MPRUnit)
	if units == 0 || uint32(units)*unit > r.maxWin {
		return fmt.Errorf("%w: dynamic MPR %d outside [1, MPR_DEST=%d]", ErrInvalidAttr, units, r.maxWin/unit)
	}
	r.win = uint32(units) * unit
	return nil
}
