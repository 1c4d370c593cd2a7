package modelcheck

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// Finding F1 (fixed; the TLA+ model's TLA-F1: tla/MRC_live.cfg,
// tla/MRC_ctl_deadlock.cfg). A PSN queued for retransmission must avoid
// the EV its NACK or timeout named (EV-ST-13), and had no timer of its own
// while it waited (LR-TMR-4 arms timers on transmissions only). When no
// other EV could carry it, the QP never sent it again and never spent
// another retry: it neither made progress nor reached ERROR (QP-ST-10,
// LR-TMR-7). statemachine now runs a stall timer for such a PSN whose
// expiries count retry events (LR-SM-3); the two forms the checker found
// are the passing configurations stall-deadlock and stall-livelock
// (configs.go). The tests below seed the old behaviour
// (statemachine.FaultNoStallTimer). The checker's own stall timer
// (stall.go) catches it first, as RetryBudget: the timer it expects never
// fires in the QP. The Progress check, on its own (Config.only), catches
// the hang in both forms.

// TestSeededNoStallTimerDeadlock, 8 steps: PSN 0 arrives, EV 0x100
// black-holes and the controller DENIES EV 0x101; EV 0x100 cannot become
// ASSUMED_BAD (ev_min_active 1, EV-SET-6), the timeouts queue PSNs 1 and 2
// avoiding it, and without the stall timer nothing is armed once B's
// reverse-path probe is answered: a silent deadlock (LR-SM-3).
func TestSeededNoStallTimerDeadlock(t *testing.T) {
	c := stallConfig(t, "stall-deadlock")
	c.Faults = sm.FaultNoStallTimer
	seeded(t, c, sm.FaultNoStallTimer, InvRetryBudget, 6, true)
	c.only = InvProgress
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil {
		t.Fatalf("FaultNoStallTimer not caught: %d states, %d distinct", r.States, r.Distinct)
	}
	t.Logf("%d states, %d distinct:\n%s", r.States, r.Distinct, r.Violation)
	if r.Violation.Invariant != InvProgress || r.Violation.Len() != 8 {
		t.Errorf("want an 8-step Progress counterexample, got %d steps of %s", r.Violation.Len(), r.Violation.Invariant)
	}
}

// TestSeededNoStallTimerLivelock, 8 steps with a fourth timer: both EVs
// black-hole. EV 0x101 becomes
// ASSUMED_BAD, EV 0x100 cannot (ev_min_active); without the stall timer
// the lost PSN waits for an EV other than 0x100 and only probes on the
// dead EV 0x101 go out, once per probe interval, forever, with the retry
// counter stuck below the budget (LR-SM-3, LR-TMR-7). The checker's stall
// timer restarts for PSN 0 when its timeout queues it in PSN 1's place
// (AMB-101) and ends its avoidance in the third timer step, so the state
// first repeats under a fourth.
func TestSeededNoStallTimerLivelock(t *testing.T) {
	c := stallConfig(t, "stall-livelock")
	c.Faults = sm.FaultNoStallTimer
	seeded(t, c, sm.FaultNoStallTimer, InvRetryBudget, 6, true)
	c.only = InvProgress
	c.Bounds.Timers = 4
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil {
		t.Fatalf("FaultNoStallTimer not caught: %d states, %d distinct", r.States, r.Distinct)
	}
	t.Logf("%d states, %d distinct:\n%s", r.States, r.Distinct, r.Violation)
	if r.Violation.Invariant != InvProgress || r.Violation.Len() != 8 {
		t.Errorf("want an 8-step Progress counterexample, got %d steps of %s", r.Violation.Len(), r.Violation.Invariant)
	}
}

func stallConfig(t *testing.T, name string) Config {
	t.Helper()
	for _, c := range Configurations() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no default configuration %s", name)
	return Config{}
}
