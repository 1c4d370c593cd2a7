package workload

import (
	"fmt"

	"github.com/openmrc/mrc/fabric"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// drainRec is what the harness keeps of a requester QP's SQ drains
// (QP-ST-12, CTL-AEV-6), from the QP's output alone.
type drainRec struct {
	started, done uint64 // WRs whose first packet went out; send completions
	inSQD, notify bool   // moved to SQD by Drain, asking for SQ_DRAINED
	raised        bool   // SQ_DRAINED seen in this drain
	seen          bool   // SQ_DRAINED seen in this step
}

// Drain moves every requester QP of MRC connection conn from RTS to SQD
// (mrc_modify_qp, QP-ST-12), asking for IBV_EVENT_SQ_DRAINED when notify
// (IBV_QP_EN_SQD_ASYNC_NOTIFY, CTL-AEV-6). The WR each QP has started
// finishes, no other starts, and WRs posted meanwhile wait for Resume.
// With Options.Check the harness checks it as it runs: no WR's first
// packet leaves a QP in SQD, and SQ_DRAINED comes once per drain, in the
// step in which every WR that started has completed, and never otherwise.
func (h *Harness) Drain(conn int, notify bool) error {
	a, mask := sm.Attr{}, sm.AttrMask(0)
	if notify {
		a.SQDNotify, mask = true, sm.AttrEnSQDAsyncNotify
	}
	return h.modifyReq(conn, sm.StateSQD, a, mask, func(d *drainRec) { *d = drainRec{started: d.started, done: d.done, inSQD: true, notify: notify} })
}

// Resume moves every requester QP of MRC connection conn back from SQD to
// RTS: the WRs that waited start (QP-ST-12).
func (h *Harness) Resume(conn int) error {
	return h.modifyReq(conn, sm.StateRTS, sm.Attr{}, 0, func(d *drainRec) { d.inSQD, d.notify, d.raised = false, false, false })
}

// SQDrained returns the IBV_EVENT_SQ_DRAINED events the requester QPs of
// connection conn have raised.
func (h *Harness) SQDrained(conn int) int {
	if conn < 0 || conn >= len(h.conns) {
		return 0
	}
	return h.conns[conn].sqDrained
}

func (h *Harness) modifyReq(conn int, to sm.QPState, a sm.Attr, mask sm.AttrMask, note func(*drainRec)) error {
	if conn < 0 || conn >= len(h.conns) {
		return ErrNoConn
	}
	c := h.conns[conn]
	if c.Transport != MRC {
		return fmt.Errorf("workload: a drain needs an MRC connection")
	}
	for _, id := range c.Req {
		r := h.refs[id]
		note(&r.drain)
		var err error
		h.Sim.Input(id, func(now Time, out *sm.Output) { err = r.mrc.Modify(now, to, a, mask, out) })
		if err != nil {
			return fmt.Errorf("workload: QP %#x to %s: %w", r.mrc.QPN(), to, err)
		}
	}
	return nil
}

// drainObserve checks a step of requester QP r (drainStep), noting first
// what its output says of a drain: WRs started, SQ_DRAINED, completions.
func (h *Harness) drainObserve(id fabric.EndpointID, r *ref, out *sm.Output) {
	d := &r.drain
	for i := range out.Events {
		e := &out.Events[i]
		switch {
		case e.Kind == sm.EvSQDrained:
			d.seen = true
			h.conns[r.conn].sqDrained++
		case e.Kind == sm.EvPacketSent && wire.Opcode(e.Reason).IsFirst() && e.Flags&sm.FlagRetransmit == 0:
			d.started++
			if d.inSQD {
				h.fail("QP-ST-12", "QP %#x in SQD started a WR (PSN %d, MSN %d)", r.mrc.QPN(), e.PSN, e.MSN)
			}
		}
	}
	for i := range out.Completions {
		if !out.Completions[i].Recv {
			d.done++
		}
	}
	h.drainStep(id, r)
}

// drainStep checks a step of requester QP r once its completions are
// counted: SQ_DRAINED in it only in a drain that asked for it, once, with
// every started WR complete; and a drain that asked for it and is over
// has it (CTL-AEV-6).
func (h *Harness) drainStep(id fabric.EndpointID, r *ref) {
	d := &r.drain
	drained := d.done == d.started
	switch {
	case d.seen && (!d.inSQD || !d.notify || d.raised):
		h.fail("CTL-AEV-6", "QP %#x raised SQ_DRAINED outside a drain that asked for it, or twice", r.mrc.QPN())
	case d.seen && !drained:
		h.fail("CTL-AEV-6", "QP %#x raised SQ_DRAINED with %d of %d started WRs complete", r.mrc.QPN(), d.done, d.started)
	case !d.seen && d.inSQD && d.notify && !d.raised && drained && r.mrc.State() == sm.StateSQD:
		h.fail("CTL-AEV-6", "QP %#x (endpoint %d) is drained (%d WRs complete) but raised no SQ_DRAINED", r.mrc.QPN(), id, d.done)
		d.seen = true // reported once
	}
	d.raised = d.raised || d.seen
	d.seen = false
}
