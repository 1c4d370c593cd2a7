package conformance

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// plantReq makes a caseReq of case cs for requirement id, as a checks
// file's caseID.req does, until the test ends.
func plantReq(t *testing.T, cs caseID, id RequirementID) caseReq {
	saved, n := caseReqs, numCaseReqs
	t.Cleanup(func() { caseReqs, numCaseReqs = saved, n })
	return cs.req(id)
}

// plantCheck replaces case cs's check by a copy that edit changes, until
// the test ends.
func plantCheck(t *testing.T, cs caseID, edit func(c *check)) {
	saved := checks
	t.Cleanup(func() { checks = saved })
	c := *checks[cs]
	c.reqs = append([]caseReq(nil), c.reqs...)
	edit(&c)
	checks[cs] = &c
}

// recheck makes ChecksErr check the planted table afresh, and again after
// the test.
func recheck(t *testing.T) {
	saved := catErr
	t.Cleanup(func() { catErr = saved })
	catErr = sync.OnceValue(func() error { return checkCatalog(passiveCases) })
}

// wantCatalogError fails the test unless err is a *CatalogError naming
// the check of case cs and saying what.
func wantCatalogError(t *testing.T, err error, cs caseID, what string) {
	t.Helper()
	var ce *CatalogError
	if !errors.As(err, &ce) || ce.Case != cs.String() || !strings.Contains(ce.Msg, what) {
		t.Errorf("want an error of %s's check (%q), got %v", cs, what, err)
	}
}

// TestCheckCitesRegisteredRequirement: a requirement a check cites is
// looked up in the spec registry when the judge starts (checkChecks): a
// typo fails it with an *UnknownRequirementError naming the ID, whether
// or not a capture makes the finding fire.
func TestCheckCitesRegisteredRequirement(t *testing.T) {
	if err := checkChecks(passiveCases); err != nil {
		t.Fatal(err)
	}
	typo := RequirementID("WIRE-" + "RETH3") // split: not a citation for spec's TestCitedIDsExist
	r := plantReq(t, cWireMSG, typo)
	plantCheck(t, cWireMSG, func(c *check) { c.reqs = append(c.reqs, r) })
	err := checkChecks(passiveCases)
	var ue *UnknownRequirementError
	if !errors.As(err, &ue) || ue.ID != string(typo) {
		t.Errorf("a check citing %s: checkChecks = %v", typo, err)
	}
	wantCatalogError(t, err, cWireMSG, "not in the registry")
}

// TestCheckCitesDeclaredRequirement: every requirement a finding cites is
// one its check declares (check.reqs), checked when the judge starts: a
// caseReq its check does not list, and a check listing another case's
// caseReq, fail checkChecks.
func TestCheckCitesDeclaredRequirement(t *testing.T) {
	// WIRE-RETH-3 is in the registry and MRC-WIRE-MSG-001 lists it, but
	// the case's check does not declare it.
	plantReq(t, cWireMSG, "WIRE-RETH-3")
	wantCatalogError(t, checkChecks(passiveCases), cWireMSG, "does not declare")

	t.Run("another case's", func(t *testing.T) {
		plantCheck(t, cWireMSG, func(c *check) { c.reqs = append(c.reqs, rDSCP_WIRE_DSCP_1) })
		wantCatalogError(t, checkChecks(passiveCases), cWireMSG, "of another case")
	})
}

// TestCheckRequirementsInTheirCase: the requirements a check cites are
// among its case's requirements in the catalog (cases.go).
func TestCheckRequirementsInTheirCase(t *testing.T) {
	// LR-RTX-1 is in the registry, but MRC-REQ-PSN-001 does not list it.
	r := plantReq(t, cPSN, "LR-RTX-1")
	plantCheck(t, cPSN, func(c *check) { c.reqs = append(c.reqs, r) })
	wantCatalogError(t, checkChecks(passiveCases), cPSN, "the case does not list")
}

// TestEveryCheckCitesItsCaseRequirements: the built-in checks pass the
// checks above: each caseReq in the registry, declared by its check and
// listed by its case; each codec requirement a check judges too.
func TestEveryCheckCitesItsCaseRequirements(t *testing.T) {
	if numCaseReqs == 0 {
		t.Fatal("no caseReqs")
	}
	for r := range numCaseReqs {
		c, cat := checks[r.cs()], passiveSorted()
		i := slices.IndexFunc(cat, func(c Case) bool { return c.ID == r.cs().String() })
		if c == nil || i < 0 {
			t.Errorf("%s: %s cited by no check of a passive case", r.cs(), r)
			continue
		}
		if err := checkCaseReq(c, &cat[i], r); err != nil {
			t.Error(err)
		}
		if !r.cs().cites(r.id()) {
			t.Errorf("%s: %s is not cited by its check", r.cs(), r)
		}
	}
}

// TestJudgeRefusesBrokenChecks: Judge and JudgeFile check the case
// catalog and the check table when they start (ChecksErr) and refuse to
// judge when they are broken, with a *CatalogError naming the check: an
// unregistered requirement, an undeclared one, a check with no catalog
// entry, a check citing a requirement its case does not list.
func TestJudgeRefusesBrokenChecks(t *testing.T) {
	plants := []struct {
		name  string
		cs    caseID
		what  string
		plant func(t *testing.T)
	}{
		{"unregistered", cWireMSG, "not in the registry", func(t *testing.T) {
			r := plantReq(t, cWireMSG, "WIRE-"+"RETH3")
			plantCheck(t, cWireMSG, func(c *check) { c.reqs = append(c.reqs, r) })
		}},
		{"undeclared", cWireMSG, "does not declare", func(t *testing.T) { plantReq(t, cWireMSG, "WIRE-RETH-3") }},
		{"no catalog entry", cPSN, "names no passive case", func(t *testing.T) {
			saved := caseNames[cPSN]
			t.Cleanup(func() { caseNames[cPSN] = saved })
			caseNames[cPSN] = "MRC-REQ-PSN-999"
		}},
		{"not in its case", cPSN, "the case does not list", func(t *testing.T) {
			r := plantReq(t, cPSN, "LR-RTX-1")
			plantCheck(t, cPSN, func(c *check) { c.reqs = append(c.reqs, r) })
		}},
	}
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			p.plant(t)
			recheck(t)
			wantCatalogError(t, ChecksErr(), p.cs, p.what)
			rep, err := JudgeFile("testdata/good.pcapng", Options{})
			if rep != nil {
				t.Error("JudgeFile judged the capture")
			}
			wantCatalogError(t, err, p.cs, p.what)
		})
	}
	// The table as built judges.
	if _, err := JudgeFile("testdata/good.pcapng", Options{}); err != nil {
		t.Fatal(err)
	}
}
