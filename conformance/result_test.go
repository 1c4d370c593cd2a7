package conformance

import (
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
)

// TestResultTable: the summary's result and exit status follow the
// README's table "Results and exit status", first matching row first, and
// its count line names each result.
func TestResultTable(t *testing.T) {
	must := func(v Verdict) Result {
		return Result{Case: Case{ID: "MRC-X-Y-1" + v.String()[:2], Level: spec.Must}, Verdict: v}
	}
	should := func(v Verdict) Result { return Result{Case: Case{ID: "MRC-X-Z-1", Level: spec.Should}, Verdict: v} }
	for _, c := range []struct {
		name    string
		results []Result
		result  string
		exit    int
		line    string
	}{
		{"error outranks fail", []Result{must(Error), must(Fail), must(Pass)}, ResultError, 2, "MUST 1 passed, 1 failed, 1 in error (3 cases)"},
		{"fail", []Result{must(Fail), must(Pass)}, ResultFail, 1, "MUST 1 passed, 1 failed (2 cases)"},
		{"pass", []Result{must(Pass), must(NotApplicable), must(Inconclusive)}, ResultPass, 0, "MUST 1 passed, 0 failed, 1 inconclusive, 1 not applicable (3 cases)"},
		{"non-strict is no failure", []Result{must(Pass), should(NonStrict)}, ResultPass, 0, "MUST 1 passed, 0 failed (1 case)"},
		{"nothing supported", []Result{must(NotSupported), must(NotApplicable)}, ResultUnsupported, 127, "MUST 0 passed, 0 failed, 1 not applicable, 1 not supported (2 cases)"},
		{"nothing observable", []Result{must(Inconclusive), must(NotSupported)}, ResultInconclusive, 2, "MUST 0 passed, 0 failed, 1 inconclusive, 1 not supported (2 cases)"},
		{"no MUST case", []Result{should(Pass)}, ResultInconclusive, 2, "MUST 0 passed, 0 failed (0 cases)"},
		{"no case", nil, ResultInconclusive, 2, "MUST 0 passed, 0 failed (0 cases)"},
	} {
		s := summarize(c.results, nil)
		if s.Result != c.result || s.ExitCode != c.exit {
			t.Errorf("%s: %s %d, want %s %d", c.name, s.Result, s.ExitCode, c.result, c.exit)
		}
		if got := s.Line("MUST"); got != c.line {
			t.Errorf("%s: %q, want %q", c.name, got, c.line)
		}
		if (s.Why == "") != (c.result == ResultPass) {
			t.Errorf("%s: reason %q", c.name, s.Why)
		}
		if c.result == ResultUnsupported || c.result == ResultInconclusive {
			if !strings.HasPrefix(s.Why, "nothing was checked") {
				t.Errorf("%s: reason %q does not say nothing was checked", c.name, s.Why)
			}
		}
	}
}
