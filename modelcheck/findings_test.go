package modelcheck

import (
	"testing"
)

// Finding F1 (also found by the TLA+ model: tla/MRC_ctl_deadlock.cfg and
// the MRC_live*.cfg liveness runs). A PSN queued for retransmission must
// avoid the EV its NACK or timeout named (EV-ST-13), but has no timer of
// its own while it waits (LR-TMR-4 arms timers on transmissions only).
// When no other EV can carry it, the QP never sends it again and never
// spends another retry, so it neither makes progress nor reaches ERROR
// (QP-ST-10, LR-TMR-7). These tests pin the two forms the model checker
// finds in statemachine/ today; when the implementation is fixed (for
// example with a timer for queued PSNs, or by letting the retransmission
// fall back to the named EV), they fail and become ordinary
// configurations that must pass.

// TestFindingF1Deadlock: the controller DENIES EV 0x101 while EV 0x100
// black-holes; EV 0x100 cannot become ASSUMED_BAD (ev_min_active = 1,
// EV-SET-6), its timeouts queue PSNs 0 and 1 avoiding it, and nothing is
// armed any more: a silent deadlock.
func TestFindingF1Deadlock(t *testing.T) {
	c := base("finding-F1-deadlock")
	c.Bounds = Bounds{Controller: 1, PathFails: 1, Timers: 2}
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil {
		t.Fatalf("F1 (deadlock) is no longer reachable (%d states): statemachine/ may have been fixed; make this a passing configuration", r.States)
	}
	t.Logf("%d states, %d distinct:\n%s", r.States, r.Distinct, r.Violation)
	if r.Violation.Invariant != InvProgress || r.Violation.Len() != 5 {
		t.Errorf("want a 5-step Progress counterexample, got %d steps of %s", r.Violation.Len(), r.Violation.Invariant)
	}
}

// TestFindingF1Livelock: both EVs black-hole with a retry budget of 2.
// EV 0x101 becomes ASSUMED_BAD, EV 0x100 cannot (ev_min_active); the lost
// PSN must avoid EV 0x100 and EV 0x101 is out of use, so only probes on
// the dead EV 0x101 go out, once per probe interval, forever: the retry
// counter stays at 2 and the QP never reaches ERROR.
func TestFindingF1Livelock(t *testing.T) {
	c := base("finding-F1-livelock")
	c.Bounds = Bounds{PathFails: 2, Timers: 3}
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil {
		t.Fatalf("F1 (livelock) is no longer reachable (%d states): statemachine/ may have been fixed; make this a passing configuration", r.States)
	}
	t.Logf("%d states, %d distinct:\n%s", r.States, r.Distinct, r.Violation)
	if r.Violation.Invariant != InvProgress {
		t.Errorf("want a Progress counterexample, got %s", r.Violation.Invariant)
	}
}
