package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRequirementIDText: a finding's requirement is written as the ID's
// text in JSON and in text (the text, JUnit and HTML reports), and read back only when the spec registry defines
// it; an ID the registry lacks is a typed error, and CodecRequirement
// cites it as WIRE-BTH-1.
func TestRequirementIDText(t *testing.T) {
	b, err := json.Marshal(Finding{Verdict: Fail, Requirement: "WIRE-SETH-6"})
	if err != nil || !strings.HasPrefix(string(b), `{"verdict":"FAIL","requirement":"WIRE-SETH-6",`) {
		t.Errorf("JSON %s, %v", b, err)
	}
	if s := fmt.Sprintf("%s %v", RequirementID("RSP-RCV-4"), RequirementID("RSP-RCV-4")); s != "RSP-RCV-4 RSP-RCV-4" {
		t.Errorf("text %q", s)
	}
	var f Finding
	if err := json.Unmarshal(b, &f); err != nil || f.Requirement != "WIRE-SETH-6" {
		t.Errorf("read back: %q, %v", f.Requirement, err)
	}
	// Split so that spec's TestCitedIDsExist does not take it for a
	// citation.
	unknown := "WIRE-" + "XYZ-99"
	var ue *UnknownRequirementError
	if err := json.Unmarshal([]byte(`{"requirement":"`+unknown+`"}`), &f); !errors.As(err, &ue) || ue.ID != unknown {
		t.Errorf("an unknown ID read back: %v", err)
	}
	if id, err := ParseRequirementID(unknown); !errors.As(err, &ue) || id != "" {
		t.Errorf("ParseRequirementID(%s) = %q, %v", unknown, id, err)
	}
	if id, err := ParseRequirementID("WIRE-ICRC-1"); err != nil || id != "WIRE-ICRC-1" {
		t.Errorf("ParseRequirementID(WIRE-ICRC-1) = %q, %v", id, err)
	}
	if got := CodecRequirement(unknown); got != "WIRE-BTH-1" {
		t.Errorf("CodecRequirement(%s) = %s", unknown, got)
	}
	if got := CodecRequirement("WIRE-RETH-2"); got != "WIRE-RETH-2" {
		t.Errorf("CodecRequirement(WIRE-RETH-2) = %s", got)
	}
}
