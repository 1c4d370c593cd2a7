package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRequirementsCommand lists requirements with their cases and the
// wire-observable MUST coverage (e.g. EV-ST-13 is covered by
// MRC-LR-NACK-001).
func TestRequirementsCommand(t *testing.T) {
	out, errOut, status := run(t, "requirements")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	for _, want := range []string{"EV-ST-13", "MRC-LR-NACK-001", "wire-observable MUST requirements with a case:", "catalog:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Every wire-observable MUST has a case (passive or active): none is
	// listed MISSING, and the coverage is complete.
	out, _, status = run(t, "requirements", "--uncovered")
	if status != 0 || strings.Contains(out, "MISSING") || !strings.Contains(out, "(100.0%)") {
		t.Errorf("requirements --uncovered: status %d\n%s", status, out)
	}
	out, _, status = run(t, "requirements", "--uncovered", "--prefix", "wire")
	if status != 0 || strings.Contains(out, "WIRE-BTH-5 ") || strings.Contains(out, "\nREQ-") {
		t.Errorf("--uncovered --prefix wire: status %d\n%s", status, out)
	}
	out, _, status = run(t, "requirements", "--format", "json", "--prefix", "EV-ST")
	var v requirementsJSON
	if status != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v.Requirements) == 0 || v.Summary.ObservableMust == 0 {
		t.Fatalf("json: status %d", status)
	}
	for _, rc := range v.Requirements {
		if !strings.HasPrefix(rc.ID, "EV-ST") {
			t.Errorf("prefix filter let %s through", rc.ID)
		}
		if rc.ID == "EV-ST-13" && (len(rc.Cases) == 0 || rc.Tests == 0) {
			t.Errorf("EV-ST-13: cases %v, %d test citations", rc.Cases, rc.Tests)
		}
	}
	for _, bad := range [][]string{{"requirements", "--format", "xml"}, {"requirements", "extra"}, {"requirements", "--nope"}} {
		if _, _, status := run(t, bad...); status != 2 {
			t.Errorf("%v: status %d, want 2", bad, status)
		}
	}
}
