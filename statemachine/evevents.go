package statemachine

import "fmt"

// EV events and controller operations on EV profiles: what the OCP control
// API (mrc_ctl.h) calls ev_event_mask, the EV event CQ
// (mrc_ctl_create_ev_event_cq, mrc_ctl_poll_ev_event) and
// MRC_CTL_EV_OP_MODIFY_EV_STATE on a profile. Like the QP, these are pure
// data structures driven by their inputs: the caller feeds a QP's Output
// to an EVEventCQ after each step.

// EVEventMask selects the EV states whose entry generates an EV event
// (MRC_CTL_EV_GOOD, MRC_CTL_EV_ASSUMED_BAD, MRC_CTL_EV_DENIED in
// ev_event_mask).
type EVEventMask uint8

// EV event mask bits.
const (
	EVEventGood       EVEventMask = 1 << iota // MRC_CTL_EV_GOOD
	EVEventAssumedBad                         // MRC_CTL_EV_ASSUMED_BAD
	EVEventDenied                             // MRC_CTL_EV_DENIED
)

func (m EVEventMask) has(s EVState) bool {
	switch s {
	case EVGood:
		return m&EVEventGood != 0
	case EVAssumedBad:
		return m&EVEventAssumedBad != 0
	case EVDenied:
		return m&EVEventDenied != 0
	}
	return false
}

// EVEvent is one entry of the EV event CQ (struct mrc_ctl_ev_event).
type EVEvent struct {
	ProfileID uint64
	EV        uint32
	Port      uint8 // 1-based NIC port of the EV
	State     EVState
	// DropCount is the number of EV events dropped, because the CQ was
	// full, between the previous event delivered to the queue and this
	// one; without precise drop counting it is 1 if any were and 0
	// otherwise (EV-ST-12).
	DropCount uint32
}

// EVEventCQ is an EV event completion queue. It does not overrun: an
// event that finds it full is dropped and counted in the DropCount of the
// next event it accepts.
type EVEventCQ struct {
	ring    []EVEvent
	head, n int
	precise bool
	dropped uint32
}

// NewEVEventCQ returns an EV event CQ with room for cqe events. precise
// is MRC_CTL_OPT_CAP_EV_EVENT_PRECISE_DROP_CNT.
func NewEVEventCQ(cqe int, precise bool) (*EVEventCQ, error) {
	if cqe < 1 || cqe > 1<<20 {
		return nil, cfgErr("cqe", "%d: want [1, 1048576]", cqe)
	}
	return &EVEventCQ{ring: make([]EVEvent, cqe), precise: precise}, nil
}

// Collect adds to the CQ the EV events of q's step out: every EV state
// change of q into a state its EV profile's EventMask selects (EV-ST-12).
// Each QP keeps its own path state (EV-ST-11), so a change in several QPs
// of one profile yields one event per QP (AMB-41).
func (c *EVEventCQ) Collect(q *QP, out *Output) {
	mask := q.evEventMask()
	if mask == 0 {
		return
	}
	for i := range out.Events {
		e := &out.Events[i]
		if e.Kind != EvEVState || e.QPN != q.st.qp.QPN || !mask.has(EVState(e.To)) {
			continue
		}
		c.push(EVEvent{ProfileID: q.attr.EVProfileID, EV: e.EV, Port: e.Plane + 1, State: EVState(e.To)})
	}
}

func (c *EVEventCQ) push(ev EVEvent) {
	if c.n == len(c.ring) {
		if c.dropped < ^uint32(0) {
			c.dropped++
		}
		return
	}
	ev.DropCount = c.dropped
	if !c.precise && ev.DropCount > 1 {
		ev.DropCount = 1
	}
	c.dropped = 0
	c.ring[(c.head+c.n)%len(c.ring)] = ev
	c.n++
}

// Poll moves up to len(dst) events, oldest first, into dst and returns how
// many (mrc_ctl_poll_ev_event).
func (c *EVEventCQ) Poll(dst []EVEvent) int {
	k := min(len(dst), c.n)
	for i := range k {
		dst[i] = c.ring[c.head]
		c.head = (c.head + 1) % len(c.ring)
	}
	c.n -= k
	return k
}

// Len is the number of events waiting.
func (c *EVEventCQ) Len() int { return c.n }

// evEventMask is the EventMask of q's EV profile, or 0.
func (q *QP) evEventMask() EVEventMask {
	if q.mask&AttrEVProfileID == 0 {
		return 0
	}
	for i := range q.st.cfg.EVProfiles {
		if p := &q.st.cfg.EVProfiles[i]; p.ID == q.attr.EVProfileID {
			return p.EventMask
		}
	}
	return 0
}

// SetProfileEVState is MRC_CTL_EV_OP_MODIFY_EV_STATE on an EV profile: it
// applies the controller's change of EV ev to every QP of qps that uses
// profile, each keeping its own path state (EV-ST-11, EV-ST-9), and
// returns how many it changed. Every QP must come from n; QPs with
// another profile, or none yet, are left alone. out collects every QP's
// events.
func (n *Node) SetProfileEVState(now Time, qps []*QP, profile uint64, ev uint32, s EVState, out *Output) (int, error) {
	for _, q := range qps {
		if q.st.node != n.nd {
			return 0, fmt.Errorf("%w: QP %#x belongs to another Node", ErrInvalidAttr, q.st.qp.QPN)
		}
	}
	k := 0
	for _, q := range qps {
		if q.mask&AttrEVProfileID == 0 || q.attr.EVProfileID != profile || q.ev.set == nil {
			continue
		}
		if err := q.SetEVState(now, ev, s, out); err != nil {
			return k, fmt.Errorf("QP %#x: %w", q.st.qp.QPN, err)
		}
		k++
	}
	return k, nil
}
