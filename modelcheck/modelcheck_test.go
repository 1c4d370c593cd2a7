package modelcheck

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// mustReach says what each default configuration has to reach, so that a
// bound too tight to exercise the feature it is about fails the test
// instead of passing vacuously.
var mustReach = map[string][]string{
	"reorder-spurious-timeout":      {"Timeout", "Duplicate", "IMMDelivered", "EVState GOOD->ASSUMED_BAD"},
	"loss":                          {"Timeout", "EVState GOOD->ASSUMED_BAD", "EVState ASSUMED_BAD->GOOD", "ProbeResult"},
	"trim":                          {"NACKSent TRIMMED", "NACKSent TRIMMED_LASTHOP", "EVState GOOD->SKIP", "EVState SKIP->GOOD"},
	"ecn-always-skip":               {"EVState GOOD->ASSUMED_BAD", "EVState ASSUMED_BAD->GOOD"},
	"ecn-skip-once":                 {"EVState GOOD->SKIP", "EVState SKIP->GOOD"},
	"duplicate":                     {"Duplicate"},
	"pathfail-retry-exhausted":      {"QPError RetryExceeded", "Timeout"},
	"bidirectional":                 {"IMMDelivered", "Timeout"},
	"port-flap":                     {"Plane"},
	"controller":                    {"EVState GOOD->DENIED", "EVState ASSUMED_BAD->GOOD"},
	"backup-replacement":            {"EVReplaced"},
	"window-1":                      {"NACKSent TRIMMED", "IMMDelivered"},
	"resource-nack":                 {"NACKSent NO_BITMAP", "NACKSent NO_PKT_BUFFER", "NACKSent NO_RESOURCE", "Retry"},
	"dynamic-mpr":                   {"NACKSent PSN_OOR_WINDOW"},
	"modify-to-error":               {"QPError Modify"},
	"no-receive-wr":                 {"QPError NoRecvWR", "QPError RemoteUnexp"},
	"wimm-dest-overflow":            {"QPError WIMMLimit", "QPError RemoteInvalid"},
	"bad-address-unsignaled":        {"QPError Access", "QPError RemoteAccess"},
	"nscc":                          {"Cwnd"},
	"nscc-resource":                 {"NACKSent NO_BITMAP", "QPError RetryExceeded"},
	"coalesce-timestamps":           {"Timeout"},
	"reorder-guard-1":               {"Lost", "EVCause inferred loss"},
	"no-trim-nack":                  {"SACKSent"},
	"loss-ce-probe":                 {"EVState ASSUMED_BAD->SKIP"},
	"stall-deadlock":                {"StallTimeout", "QPError RetryExceeded", "EVState GOOD->DENIED"},
	"stall-livelock":                {"StallTimeout", "QPError RetryExceeded", "ProbeSent"},
	"rto-backoff":                   {"Retry", "Timeout", "EVState ASSUMED_BAD->GOOD"},
	"psn-wrap":                      {"Timeout", "IMMDelivered", "EVState ASSUMED_BAD->GOOD"},
	"backup-pool":                   {"EVReplaced", "Timeout"},
	"bidirectional-2":               {"IMMDelivered", "NACKSent TRIMMED"},
	"adversarial-requester":         {"NACKSent PSN_OOR_WINDOW", "Duplicate", "IMMDelivered"},
	"adversarial-requester-hostile": {"NACKSent PSN_OOR_WINDOW", "Duplicate"},
	"shared-profile":                {"EVState GOOD->DENIED", "EVState GOOD->ASSUMED_BAD", "IMMDelivered"},
	"adversarial-requester-trim-ce": {"NACKSent TRIMMED", "NACKSent TRIMMED_LASTHOP", "NACKSent PSN_OOR_WINDOW", "Duplicate"},
	"adversarial-requester-wimm":    {"Ignored", "IMMDelivered", "NACKSent PSN_OOR_WINDOW", "Duplicate"},
}

// workingPath lists the configurations in which no path fails, nothing
// asks for ERROR (no modify, no resource shortage, no bad address or
// missing receive WR, no controller), and the retry budget exceeds the
// retry events the faults and timer firings can cause: there, under any
// schedule, no QP may enter ERROR at all (QP-ST-10, LR-TMR-7).
var workingPath = map[string]bool{"reorder-spurious-timeout": true, "loss": true, "trim": true, "ecn-always-skip": true,
	"ecn-skip-once": true, "duplicate": true, "bidirectional": true, "port-flap": true, "backup-replacement": true,
	"window-1": true, "reorder-guard-1": true, "no-trim-nack": true, "coalesce-timestamps": true, "psn-wrap": true,
	"rto-backoff": true, "nscc": true}

// errorsReached lists the ERROR causes a search reached.
func errorsReached(r *Result) []string {
	var l []string
	for _, k := range r.ReachedList() {
		if strings.HasPrefix(k, "QPError") {
			l = append(l, k)
		}
	}
	return l
}

func largeRun() bool { return os.Getenv("MRC_MC_LARGE") != "" }

// TestConfigurations explores every default configuration (and with
// MRC_MC_LARGE=1 the large ones) and requires every invariant to hold in
// every reachable state: NoDuplicatePlacement (RSP-DUP-1),
// CompletionOnlyAfterPlacement (CMP-SND-1, CMP-RCV-1),
// WriteIMMExactlyOnceInOrder (WIMM-RSP-1, WIMM-RSP-2),
// SendCompletionsInOrder (CMP-SND-2), WindowRespected (MPR-WIN-1),
// EVTransitionsAllowed (EV-ST-2 to EV-ST-10), SentOnGoodEV (EV-ST-1),
// NACKedEVNotReused (EV-ST-13), NACKedPSNQueued (LR-NACK-1),
// SelectiveRetransmitOnly (LR-RTX-1), RetryBudget (LR-TMR-6, LR-TMR-7),
// AckSound (LR-SACK-1) and Progress (QP-ST-10).
func TestConfigurations(t *testing.T) {
	cfgs := Configurations()
	if largeRun() {
		cfgs = append(cfgs, LargeConfigurations()...)
	} else {
		t.Log("MRC_MC_LARGE is not set: the large configurations are not explored")
	}
	var rows []string
	var total time.Duration
	for _, cfg := range cfgs {
		t.Run(cfg.Name, func(t *testing.T) {
			r, err := Check(cfg)
			if err != nil {
				t.Fatal(err)
			}
			total += r.Elapsed
			t.Logf("%s: %d states, %d distinct, depth %d, %d terminal, %v", cfg.Name, r.States, r.Distinct, r.Depth,
				r.Terminal, r.Elapsed.Round(time.Millisecond))
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d | %d | %.1f s |", cfg.Name, describeBounds(cfg), r.States,
				r.Distinct, r.Depth, r.Elapsed.Seconds()))
			if r.Violation != nil {
				t.Fatalf("invariant violated:\n%s", r.Violation)
			}
			if e := errorsReached(r); workingPath[cfg.Name] && len(e) > 0 {
				t.Errorf("%s has a working path and a retry budget beyond its faults, yet a QP entered ERROR: %v", cfg.Name, e)
			}
			for _, want := range mustReach[cfg.Name] {
				if r.Reached[want] == 0 {
					t.Errorf("the search never reached %q: the bounds are too tight for what %s is about (reached: %v)",
						want, cfg.Name, r.ReachedList())
				}
			}
		})
	}
	t.Logf("summary (%v in all):\n| configuration | bounds | states | distinct | depth | time |\n|---|---|---|---|---|---|\n%s",
		total.Round(time.Millisecond), strings.Join(rows, "\n"))
}

// describeBounds renders a configuration's bounds for the summary table.
func describeBounds(c Config) string {
	var p []string
	msgs := func(ms []Msg) string {
		var s []string
		for _, m := range ms {
			k := "W"
			if m.Imm {
				k = "WI"
			}
			k = fmt.Sprintf("%s%d", k, m.Packets)
			if m.Unsignaled {
				k += " unsignaled"
			}
			if m.BadAddress {
				k += " bad-address"
			}
			s = append(s, k)
		}
		return strings.Join(s, "+")
	}
	p = append(p, fmt.Sprintf("%d EV", c.Planes*c.EVsPerPlane))
	if c.BackupsPerPlane > 0 {
		p[0] += fmt.Sprintf("+%d backup", c.Planes*c.BackupsPerPlane)
	}
	if c.Planes > 1 {
		p[0] += fmt.Sprintf(" on %d planes", c.Planes)
	}
	p = append(p, "A: "+msgs(c.Msgs[0]))
	if len(c.Msgs[1]) > 0 {
		p = append(p, "B: "+msgs(c.Msgs[1]))
	}
	p = append(p, fmt.Sprintf("MPR %d", c.MPR))
	if l := c.retryLimit(); l >= 0 {
		p = append(p, fmt.Sprintf("retry %d", l))
	}
	b := c.Bounds
	for _, x := range []struct {
		n    int
		name string
	}{{b.Drops, "drop"}, {b.Dups, "dup"}, {b.Trims, "trim"}, {b.CEs, "CE"}, {b.NetFaults, "faults total"},
		{b.PathFails, "path fail"}, {b.Timers, "timer"}, {b.Ticks, "tick"}, {b.PortFlaps, "port flap"}, {b.Controller, "ctl"},
		{b.Modify, "modify-to-error"}, {b.Resource, "resource change"}, {b.DynMPR, "dynamic-MPR change"},
		{b.Penalty, "penalty change"}, {b.Injects, "injected packets"}, {b.Drains, "drain"}} {
		if x.n > 0 {
			p = append(p, fmt.Sprintf("%d %s", x.n, x.name))
		}
	}
	if c.AlwaysSkipAfter > 0 {
		p = append(p, fmt.Sprintf("always-skip %d", c.AlwaysSkipAfter))
	}
	if c.RTRStart {
		p = append(p, "B from RTR")
	}
	if !c.SilentTimeouts {
		p = append(p, "spurious timeouts")
	}
	for _, x := range []struct {
		on   bool
		name string
	}{{c.NSCC, "NSCC"}, {c.DynamicMPR, "dynamic MPR"}, {c.RecvWRs < 0, "no receive WRs"}, {c.Coalesce > 1, "ack_coalesce 2"},
		{c.Timestamps, "timestamps"}, {c.NoTrimNACK, "no trim NACK"}, {c.Adversary, "adversarial requester"},
		{c.AdversaryMoves&AdvResend != 0, "resends"}, {c.AdversaryMoves&AdvForge != 0, "PSNs of no WR"},
		{c.AdversaryMoves&AdvTrim != 0, "trimmed"}, {c.AdversaryMoves&AdvCE != 0, "CE-marked"},
		{c.AdversaryMoves&AdvForgeIMM != 0, "WriteIMMs under other PSNs and RQMSNs"}, {c.SharedNode, "one Node, shared EV profile"},
		{c.StartPSN != 0, fmt.Sprintf("first PSN %#x", c.StartPSN)},
		{c.ReorderThreshold > 0, fmt.Sprintf("reorder guard %d", c.ReorderThreshold)}} {
		if x.on {
			p = append(p, x.name)
		}
	}
	return strings.Join(p, ", ")
}
