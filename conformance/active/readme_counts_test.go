package active

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestREADMECaseCounts: the counts the READMEs give of the catalog's
// cases (README.md's "117 cases: 62 passive, 55 active",
// conformance/README.md's table row "| cases | 117: 62 passive, 55
// active |") and of the wire-observable MUST requirements are the
// catalog's (conformance.Coverage, as mrc-conform requirements counts
// them).
func TestREADMECaseCounts(t *testing.T) {
	_, sum := conformance.Coverage(nil)
	for _, f := range []struct {
		file, pattern string
		want          []int
	}{
		{"../../README.md", `\((\d+) cases: (\d+) passive, (\d+) active\)`, []int{sum.Cases, sum.PassiveCases, sum.ActiveCases}},
		{"../README.md", `\| cases \| (\d+): (\d+) passive, (\d+) active \|`, []int{sum.Cases, sum.PassiveCases, sum.ActiveCases}},
		{"../../README.md", `Every one of the (\d+) wire-observable\s+MUST requirements`, []int{sum.ObservableMust}},
		{"../README.md", `\| wire-observable MUST / MUST NOT requirements \| (\d+),`, []int{sum.ObservableMust}},
	} {
		b, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(f.pattern).FindAllSubmatch(b, -1)
		if len(m) != 1 {
			t.Errorf("%s: %d matches of %s, want one", f.file, len(m), f.pattern)
			continue
		}
		for i, w := range f.want {
			if n, _ := strconv.Atoi(string(m[0][i+1])); n != w {
				t.Errorf("%s says %q; the catalog's count is %d, not %d", f.file, m[0][0], w, n)
			}
		}
	}
}
