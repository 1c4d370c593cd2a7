package modelcheck

import (
	"strings"
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// faultHunt is the configuration the seeded-bug tests search: base with
// one network fault of any kind and two timer firings.
func faultHunt(f sm.Faults) Config {
	c := base("fault-hunt")
	c.Faults = f
	c.Bounds = Bounds{Drops: 1, Dups: 1, Trims: 1, CEs: 1, NetFaults: 1, Timers: 2}
	return c
}

// checkFault runs the search with fault f and requires the counterexample
// to violate want first and to be exactly steps long. The search is
// breadth-first, so no shorter counterexample exists within the bounds.
func checkFault(t *testing.T, f sm.Faults, want string, steps int, mention ...string) {
	t.Helper()
	r, err := Check(faultHunt(f))
	if err != nil {
		t.Fatal(err)
	}
	v := r.Violation
	if v == nil {
		t.Fatalf("seeded bug %#x not caught: %d states, %d distinct, depth %d", f, r.States, r.Distinct, r.Depth)
	}
	t.Logf("%d states, %d distinct before the counterexample:\n%s", r.States, r.Distinct, v)
	if v.Invariant != want {
		t.Errorf("first violated invariant %s (all: %v), want %s", v.Invariant, v.All, want)
	}
	if v.Len() != steps {
		t.Errorf("counterexample of %d steps, want the minimal %d", v.Len(), steps)
	}
	text := v.String()
	for _, m := range mention {
		if !strings.Contains(text, m) {
			t.Errorf("counterexample does not mention %q", m)
		}
	}
	if len(v.Trace) == 0 {
		t.Error("no NDJSON trace")
	}
}

// TestSeededGoBackN: retransmitting everything after a lost PSN re-queues
// a PSN the responder already acknowledged (LR-RTX-1, LR-SACK-2).
func TestSeededGoBackN(t *testing.T) {
	checkFault(t, sm.FaultGoBackN, InvSelectiveRetransmitOnly, 5, "drop A>B WRITE_FIRST psn=0", "timer", "queues psn=1")
}

// TestSeededIgnoreTrim: a TRIMMED NACK that is ignored leaves the PSN in
// flight instead of queueing it, and charges no retry (LR-NACK-1,
// LR-NACK-5).
func TestSeededIgnoreTrim(t *testing.T) {
	checkFault(t, sm.FaultIgnoreTrim, InvNACKedPSNQueued, 4, "trim A>B", "NACK TRIMMED")
}

// TestSeededReuseNACKedEV: the retransmission of a NACKed PSN uses the EV
// the NACK named (EV-ST-13, LR-NACK-1).
func TestSeededReuseNACKedEV(t *testing.T) {
	checkFault(t, sm.FaultReuseNACKedEV, InvNACKedEVNotReused, 4, "NACK TRIMMED", "rtx")
}

// TestSeededEarlyWIMM: immediate data released when the WriteIMM's last
// packet arrives, before an earlier PSN is placed (WIMM-RSP-1, WIMM-RSP-2).
func TestSeededEarlyWIMM(t *testing.T) {
	checkFault(t, sm.FaultEarlyWIMM, InvWriteIMMExactlyOnceInOrder, 5, "WRITE_ONLY_IMM", "receive completion")
}

// TestSeededPlaceDuplicates: a duplicated packet is placed twice
// (RSP-DUP-1).
func TestSeededPlaceDuplicates(t *testing.T) {
	checkFault(t, sm.FaultPlaceDuplicates, InvNoDuplicatePlacement, 4, "dup A>B", "duplicate psn=0")
}

// TestSeededBeyondMPR: the requester sends PSN 2 with una 0 and an MPR
// window of 2 PSNs (MPR-WIN-1).
func TestSeededBeyondMPR(t *testing.T) {
	checkFault(t, sm.FaultBeyondMPR, InvWindowRespected, 2, "post A WR 2")
}

// TestDefaultBuildHasNoFaults: the configurations the default tests check
// seed no bug.
func TestDefaultBuildHasNoFaults(t *testing.T) {
	for _, c := range append(Configurations(), LargeConfigurations()...) {
		if c.Faults != 0 {
			t.Errorf("%s seeds faults %#x", c.Name, c.Faults)
		}
	}
}

// TestSeededNoRestore: an ASSUMED_BAD EV whose probe is answered with
// m = NONE stays ASSUMED_BAD (EV-ST-7).
func TestSeededNoRestore(t *testing.T) {
	checkFault(t, sm.FaultNoRestore, InvProbeRestoresEV, 10, "timeout", "PROBE")
}

// TestSeededNoHoldOff: after a resource NACK the PSN is retransmitted at
// once instead of base_rtt later (LR-NACK-2). The hold-off is the NSCC
// base RTT, so the search runs with congestion control on and a
// responder that runs short of resources once.
func TestSeededNoHoldOff(t *testing.T) {
	c := base("fault-hunt-nscc")
	c.NSCC = true
	c.Faults = sm.FaultNoHoldOff
	c.Bounds = Bounds{Resource: 1, Timers: 1}
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil {
		t.Fatalf("FaultNoHoldOff not caught: %d states", r.States)
	}
	t.Logf("%d states, %d distinct before the counterexample:\n%s", r.States, r.Distinct, r.Violation)
	if r.Violation.Invariant != InvResourceHoldOff || r.Violation.Len() != 4 {
		t.Errorf("got %d steps of %s, want the minimal 4 of %s", r.Violation.Len(), r.Violation.Invariant, InvResourceHoldOff)
	}
}
