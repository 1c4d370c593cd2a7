package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestRequirementIDText: a finding's requirement is written as the ID's
// text in JSON and in text (the text, JUnit and HTML reports), and read back only when the spec registry defines
// it; an ID the registry lacks is a typed error. CodecRequirement cites
// a wire.ReqID as its text, and wire.NoReq as WIRE-BTH-1.
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
	if got := CodecRequirement(wire.NoReq); got != "WIRE-BTH-1" {
		t.Errorf("CodecRequirement(NoReq) = %s", got)
	}
	if got := CodecRequirement(wire.NumReqs); got != "WIRE-BTH-1" {
		t.Errorf("CodecRequirement(NumReqs) = %s", got)
	}
	if got := CodecRequirement(wire.ReqPAY2); got != "WIRE-PAY-2" {
		t.Errorf("CodecRequirement(ReqPAY2) = %s", got)
	}
}

// TestCaseRequirementUnknown: a case's requirement IDs are looked up in
// the spec registry when the catalog is checked; a planted ID the registry
// lacks fails the check (checkCatalog, which CatalogErr runs) with an
// *UnknownRequirementError naming it, and the unplanted catalog loads.
func TestCaseRequirementUnknown(t *testing.T) {
	if err := checkCatalog(passiveCases); err != nil {
		t.Fatalf("the built-in catalog: %v", err)
	}
	unknown := RequirementID("WIRE-" + "XYZ-99") // split: not a citation
	bad := slices.Clone(passiveCases)
	bad[3].Requirements = append(slices.Clone(bad[3].Requirements), unknown)
	err := checkCatalog(bad)
	var ue *UnknownRequirementError
	var ce *CatalogError
	if !errors.As(err, &ue) || ue.ID != string(unknown) || !errors.As(err, &ce) || ce.Case != bad[3].ID {
		t.Errorf("a case citing %s: checkCatalog = %v", unknown, err)
	}
	// An active case registered with such an ID is refused the same way.
	c := bad[3]
	c.ID, c.Mode = "MRC-WIRE-XYZ-999", Active
	if err := Register(c); !errors.As(err, &ue) || ue.ID != string(unknown) {
		t.Errorf("Register of a case citing %s = %v", unknown, err)
	}
	if _, ok := LookupCase(c.ID); ok {
		t.Errorf("%s was registered", c.ID)
	}
}

// TestValidCaseIDAsPattern: validCaseID, which Validate uses, agrees with
// CaseIDPattern on every case ID of the catalog and on IDs at each edge
// of the pattern.
func TestValidCaseIDAsPattern(t *testing.T) {
	ids := []string{"", "MRC-", "MRC-A-B-001", "MRC-A-B-01", "MRC-A-B-0011", "MRC-a-B-001", "MRC-A-b-001", "MRC--B-001",
		"MRC-A--001", "MRC-A1-B-001", "MRC-A-B1-001", "MRC-A-B-00x", "MRC-A-B-C-001", "XMRC-A-B-001", "MRC-A-B-001\n",
		"MRC-A-B-001-", "MRC-AB-9Z-123", "mrc-A-B-001", "MRC-É-B-001"}
	for _, c := range Catalog() {
		ids = append(ids, c.ID)
	}
	for _, id := range ids {
		if got, want := validCaseID(id), CaseIDPattern().MatchString(id); got != want {
			t.Errorf("validCaseID(%q) = %v, CaseIDPattern %v", id, got, want)
		}
	}
}

// laterRuns counts TestRegisterLaterOnUse's runs in this process.
var laterRuns int

// TestRegisterLaterOnUse: a registration deferred with RegisterLater runs
// once, on the first use of the whole catalog; judging a capture, which
// reads only the passive cases, does not run it.
func TestRegisterLaterOnUse(t *testing.T) {
	laterRuns++ // a case of its own each run: go test -count N registers N
	c := passiveCases[0]
	c.ID, c.Mode, c.View = fmt.Sprintf("MRC-WIRE-LATER-%03d", 900+laterRuns%100), Active, ""
	runs := 0
	RegisterLater(func() {
		runs++
		if err := Register(c); err != nil {
			t.Errorf("Register(%s): %v", c.ID, err)
		}
	})
	rep, err := JudgeFile("testdata/good.pcapng", Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 0 || len(rep.Results) != len(passiveCases) {
		t.Errorf("judging ran the deferred registration %d times; %d results for %d passive cases", runs, len(rep.Results), len(passiveCases))
	}
	if _, ok := LookupCase(c.ID); !ok || runs != 1 {
		t.Errorf("LookupCase(%s) = %v after %d runs", c.ID, ok, runs)
	}
	if !slices.ContainsFunc(Catalog(), func(x Case) bool { return x.ID == c.ID }) || runs != 1 {
		t.Errorf("Catalog() lacks %s, or the registration ran %d times", c.ID, runs)
	}
}
