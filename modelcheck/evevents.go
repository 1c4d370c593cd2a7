package modelcheck

import (
	sm "github.com/openmrc/mrc/statemachine"
)

// InvEVEventsReported (EV-ST-12): every step's EV state changes of a QP
// into GOOD or ASSUMED_BAD (the EV profile's ev_event_mask selects both
// in the model; DENIED cannot be selected, AMB-41) reach an EV event CQ fed with that step's
// output, once each, in order, with the profile, the EV, its port and the
// new state. It is not in Invariants (it checks the CQ, not the protocol).
const InvEVEventsReported = "EVEventsReported"

// checkEVEvents feeds QP s's events of this step to a fresh EV event CQ
// and compares what it reports with the EVState events.
func (c *checker) checkEVEvents(v *violations, post *world) {
	for s := range 2 {
		evs := c.log.ev[s]
		var want []sm.EVEvent
		for _, e := range evs {
			if e.Kind == sm.EvEVState && (sm.EVState(e.To) == sm.EVGood || sm.EVState(e.To) == sm.EVAssumedBad) {
				want = append(want, sm.EVEvent{ProfileID: 1, EV: e.EV, Port: e.Plane + 1, State: sm.EVState(e.To)})
			}
		}
		if len(want) == 0 {
			continue
		}
		cq, err := sm.NewEVEventCQ(len(want), true)
		if err != nil {
			v.add(InvEVEventsReported, "%s: %v", side[s], err)
			continue
		}
		cq.Collect(post.qp[s], &sm.Output{Events: evs})
		got := make([]sm.EVEvent, len(want)+1)
		n := cq.Poll(got)
		if n != len(want) {
			v.add(InvEVEventsReported, "%s: %d EV events reported for %d state changes", side[s], n, len(want))
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				v.add(InvEVEventsReported, "%s: EV event %d is %+v, want %+v", side[s], i, got[i], want[i])
			}
		}
	}
}
