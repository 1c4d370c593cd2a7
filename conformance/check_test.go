package conformance

import (
	"slices"
	"testing"
)

// TestEveryPassiveCaseHasOneCheck: every passive case of the catalog has
// exactly one check value and every check one passive case; a check's
// requirements are in the registry.
func TestEveryPassiveCaseHasOneCheck(t *testing.T) {
	if err := checkChecks(passiveCases); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range passiveCases {
		if c.Mode != Passive {
			continue
		}
		n++
		k := 0
		for _, ch := range checks[:numCases] {
			if ch != nil && ch.cs.String() == c.ID {
				k++
			}
		}
		if k != 1 {
			t.Errorf("%s: %d check values", c.ID, k)
		}
	}
	if n != int(numCases) {
		t.Errorf("%d passive cases, %d checks", n, numCases)
	}
	// Planted faults: a case without its check, a check citing a
	// requirement the registry lacks, a case no check judges.
	saved := checks
	defer func() { checks = saved }()
	checks[cPSN] = nil
	if err := checkChecks(passiveCases); err == nil {
		t.Error("checkChecks accepted a case without a check")
	}
	checks = saved
	plantCheck(t, cPSN, func(c *check) { c.reqs = append(c.reqs, plantReq(t, cPSN, "REQ-"+"PSN-999")) })
	if err := checkChecks(passiveCases); err == nil {
		t.Error("checkChecks accepted a requirement not in the registry")
	}
	checks = saved
	cat := slices.Clone(passiveCases)
	for i := range cat {
		if cat[i].ID == cPSN.String() {
			cat[i].ID = "MRC-REQ-PSN-999"
		}
	}
	if err := checkChecks(cat); err == nil {
		t.Error("checkChecks accepted a check whose case is not in the catalog")
	}
	// A second check for one case is refused when registered.
	savedErr := checksErr
	defer func() { checksErr = savedErr }()
	addChecks(check{cs: cPSN, reqs: []caseReq{rPSN_REQ_PSN_1}})
	if checksErr == nil {
		t.Error("addChecks accepted a second check for one case")
	}
}

// TestFindingsCiteDeclaredRequirements judges the repository's captures
// and checks that every finding cites a requirement its case's check
// declares.
func TestFindingsCiteDeclaredRequirements(t *testing.T) {
	seen := 0
	for _, c := range goldenCaptures(t) {
		for _, p := range picsFor(c) {
			rep, err := judgeGolden(t, c, p)
			if err != nil {
				continue
			}
			for _, r := range rep.Results {
				cs := slices.Index(caseNames[:numCases], r.Case.ID)
				if cs < 0 {
					continue
				}
				for _, f := range r.Findings {
					seen++
					if !caseID(cs).cites(f.Requirement) {
						t.Errorf("%s %s: %s finding cites %s, which its check does not declare", c, p, r.Case.ID, f.Requirement)
					}
				}
			}
		}
	}
	if seen < 100 {
		t.Errorf("only %d findings seen", seen)
	}
}
