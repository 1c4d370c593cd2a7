package active

import (
	"context"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/peer"
)

// optionCases are the cases the default reference is NOT-SUPPORTED by:
// it passes them with a peer option, which their own test sets.
var optionCases = map[string]bool{"MRC-CTL-OP-102": true} // TestExplicitRangeCase

// referenceVerdict is the verdict of case c against the default
// reference: NOT-APPLICABLE for an IPv6 case over IPv4, NOT-SUPPORTED for
// the optionCases, PASS for every other.
func referenceVerdict(c Case, v6 bool) conformance.Verdict {
	switch {
	case c.IPv6 && !v6:
		return conformance.NotApplicable
	case optionCases[c.ID]:
		return conformance.NotSupported
	}
	return conformance.Pass
}

// TestExplicitRangeCase: MRC-CTL-OP-102 passes against the reference that
// advertises MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE (peer.Config.ExplicitRange),
// is NOT-SUPPORTED against the default reference, which does not, and
// FAILs CTL-OP-6 against one that advertises it without enforcing it
// (seeded fault ev-range-unchecked).
func TestExplicitRangeCase(t *testing.T) {
	const id = "MRC-CTL-OP-102"
	unchecked, err := peer.ParseFaults("ev-range-unchecked")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		cfg    InprocConfig
		want   conformance.Verdict
		failed string
	}{
		{"explicit-range", InprocConfig{Seed: 1, ExplicitRange: true}, conformance.Pass, ""},
		{"default", InprocConfig{Seed: 1}, conformance.NotSupported, ""},
		{"fault", InprocConfig{Seed: 1, ExplicitRange: true, Faults: unchecked}, conformance.Fail, "CTL-OP-6"},
		{"fault alone", InprocConfig{Seed: 1, Faults: unchecked}, conformance.Fail, "CTL-OP-6"},
	} {
		tgt, err := NewInproc(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), tgt, Options{Cases: id, Today: today, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 1 || rep.Results[0].Verdict != c.want {
			t.Fatalf("%s: %+v, want %s", c.name, rep.Results, c.want)
		}
		r := rep.Results[0]
		t.Logf("%s: %s: %s", c.name, r.Verdict, r.Reason)
		failed := false
		for _, f := range r.Findings {
			failed = failed || f.Verdict == conformance.Fail && string(f.Requirement) == c.failed
		}
		if c.failed != "" && !failed {
			t.Errorf("%s: no FAIL of %s: %+v", c.name, c.failed, r.Findings)
		}
	}
}

// TestExplicitRangeReference: the reference with ExplicitRange passes
// every case, over IPv4 and IPv6, but MRC-CTL-OP-101, whose replacement
// of single EVs such a device refuses (NOT-SUPPORTED), and the IPv6 cases
// over IPv4.
func TestExplicitRangeReference(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		tgt, err := NewInproc(InprocConfig{Seed: 1, IPv6: v6, ExplicitRange: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), tgt, Options{Today: today, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			c, _ := lookupActive(r.Case.ID)
			want := conformance.Pass
			switch {
			case c.IPv6 && !v6:
				want = conformance.NotApplicable
			case r.Case.ID == "MRC-CTL-OP-101":
				want = conformance.NotSupported
			}
			if r.Verdict != want {
				t.Errorf("IPv6 %v: %s: %s (want %s): %s", v6, r.Case.ID, r.Verdict, want, r.Reason)
			}
		}
	}
}
