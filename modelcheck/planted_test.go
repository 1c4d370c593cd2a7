package modelcheck

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// The responder's seeded faults that only the adversary's trimmed,
// CE-marked and forged WriteIMM packets (AdvTrim, AdvCE, AdvForgeIMM)
// catch: each overrides one responder rule of statemachine/rules.go.

// advMoves is the adversary with moves m and n injections, 1 timer.
func advMoves(name string, m AdvMoves, n int) Config {
	c := adversary(name)
	c.AdversaryMoves = m
	c.Bounds = Bounds{Injects: n, Timers: 1}
	return c
}

// TestSeededTrimBeforeWindow: the adversary's trimmed PSN 2, beyond B's
// window of 2, is NACKed PSN_OOR_WINDOW as the untrimmed packet would be
// (RSP-SM-3, RSP-DUP-2); a responder that answers the trim first NACKs it
// TRIMMED.
func TestSeededTrimBeforeWindow(t *testing.T) {
	seeded(t, advMoves("trim-hunt", AdvTrim|AdvCE, 2), sm.FaultTrimBeforeWindow, InvResponderAnswers, 2, true)
}

// TestSeededCEDupUnmarked: the adversary sends PSN 0, then PSN 0
// CE-marked; the duplicate's SACK must say SKIP_ONCE (RSP-SACK-3,
// RSP-DUP-2), and with the fault says m = NONE.
func TestSeededCEDupUnmarked(t *testing.T) {
	seeded(t, advMoves("ce-hunt", AdvTrim|AdvCE, 2), sm.FaultCEDupUnmarked, InvResponderAnswers, 4, true)
}

// TestSeededWIMMConflictPlaced: the adversary sends PSN 2 as a WriteIMM
// with RQMSN 0, then the WriteIMM (PSN 3, RQMSN 0); B holds the first and
// must discard the second unanswered (WIMM-SM-1): with the fault it places
// it.
func TestSeededWIMMConflictPlaced(t *testing.T) {
	c := advMoves("wimm-hunt", AdvForgeIMM, 2)
	c.MPR, c.MaxWIMMDest = 4, 2
	seeded(t, c, sm.FaultWIMMConflictPlaced, InvResponderAnswers, 4, true)
}

// TestHostileAdversaryMissesNewMoveFaults: the adversary of
// adversarial-requester-hostile (resends, PSNs of no WR, 2 injections),
// which has none of those moves, passes a responder with the three
// faults above seeded together.
func TestHostileAdversaryMissesNewMoveFaults(t *testing.T) {
	c := hostile("hostile-2", 2)
	c.Faults = sm.FaultTrimBeforeWindow | sm.FaultCEDupUnmarked | sm.FaultWIMMConflictPlaced
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation != nil {
		t.Fatalf("the hostile adversary caught a fault of the new moves:\n%s", r.Violation)
	}
	t.Logf("%d states, %d distinct, no violation", r.States, r.Distinct)
}

// TestNewMoveHuntsPassUnseeded: the reference responder passes the three
// hunts above, so what they catch is the fault.
func TestNewMoveHuntsPassUnseeded(t *testing.T) {
	wimm := advMoves("wimm-hunt", AdvForgeIMM, 2)
	wimm.MPR, wimm.MaxWIMMDest = 4, 2
	for _, c := range []Config{advMoves("trim-hunt", AdvTrim|AdvCE, 2), advMoves("ce-hunt", AdvTrim|AdvCE, 2), wimm} {
		r, err := Check(c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation != nil {
			t.Errorf("%s, nothing seeded:\n%s", c.Name, r.Violation)
		}
	}
}
