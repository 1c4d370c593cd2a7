package active

import (
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/peer"
)

// TestAPIObjectCases runs the control-API object cases against the
// reference, which must pass, and against each of their seeded faults,
// which each case must catch (CTL-GEN-3, CTL-OP-3, CTL-PORT-2, CTL-CQ-1,
// CTL-CQ-2, CTL-AEV-2, CTL-BAT-3, CTL-SVC-1, CTL-VER-1, CTL-QPH-3, CTL-AEV-4,
// CTL-AEV-5, CTL-VER-2, CTL-VER-3, CTL-CQ-5, CTL-CQ-6, CTL-AEV-6, QP-ST-12).
func TestAPIObjectCases(t *testing.T) {
	const sel = "MRC-CTL-*"
	for _, v6 := range []bool{false, true} {
		rep := runInprocOn(t, v6, peer.FaultSet{}, sel, Options{})
		if len(rep.Results) != 12 {
			t.Fatalf("%d results, want the 12 MRC-CTL cases", len(rep.Results))
		}
		for _, r := range rep.Results {
			if c, _ := lookupActive(r.Case.ID); c.IPv6 && !v6 && r.Verdict == conformance.NotApplicable ||
				optionCases[r.Case.ID] && r.Verdict == conformance.NotSupported {
				continue
			}
			if r.Verdict != conformance.Pass {
				t.Errorf("IPv6 %v: %s: %s: %s", v6, r.Case.ID, r.Verdict, r.Reason)
				for _, f := range r.Findings {
					t.Logf("    %s %s: expected %s; observed %s", f.Verdict, f.Requirement, f.Expected, f.Observed)
				}
			}
		}
	}
	for fault, id := range map[string]string{"gen-ev-unexpanded": "MRC-CTL-GEN-101", "replace-ev-noop": "MRC-CTL-OP-101",
		"ignore-port-admin": "MRC-CTL-PORT-101", "no-solicited-flag": "MRC-CTL-CQ-101", "notify-any": "MRC-CTL-CQ-101",
		"no-port-async-event": "MRC-CTL-PORT-101", "batch-sorted": "MRC-CTL-BAT-101", "adj-svc-time-set": "MRC-CTL-BAT-101",
		"version-swapped": "MRC-CTL-VER-101", "vendor-cfg-dropped": "MRC-CTL-VER-101", "no-srv6-encap": "MRC-CTL-EVX-101",
		"no-comm-est": "MRC-CTL-AEV-101", "no-qp-fatal": "MRC-CTL-AEV-101", "context-any-version": "MRC-CTL-VER-102",
		"channel-unwired": "MRC-CTL-CQ-102", "no-sq-drained": "MRC-CTL-AEV-102"} {
		fs, err := peer.ParseFaults(fault)
		if err != nil {
			t.Fatal(err)
		}
		rep := runInprocOn(t, true, fs, id, Options{})
		if len(rep.Results) != 1 || rep.Results[0].Verdict != conformance.Fail {
			t.Errorf("fault %s: %s not FAIL: %+v", fault, id, rep.Results)
		}
	}
}
