package conformance

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/conformance/internal/capgen"
)

var schemaRow = regexp.MustCompile("^\\| `([^`]+)` \\| [^|]+ \\| (always|optional) \\|")

// schemaFields reads the field table of report-schema.md.
func schemaFields(t *testing.T) map[string]string {
	b, err := os.ReadFile("report-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := schemaRow.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[2]
		}
	}
	if !strings.Contains(string(b), "schema version "+SchemaVersion) {
		t.Errorf("report-schema.md does not document schema version %s", SchemaVersion)
	}
	return out
}

func jsonPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			jsonPaths(c, p, out)
		}
	case []any:
		out[prefix+"[]"] = true
		for _, c := range x {
			jsonPaths(c, prefix+"[]", out)
		}
	default:
		out[prefix] = true
	}
}

// TestJSONMatchesSchema checks that the JSON report has exactly the fields
// report-schema.md documents: every field written is documented, every
// "always" field is written, and every documented field is written by at
// least one of the reports below (active-only fields excepted).
func TestJSONMatchesSchema(t *testing.T) {
	doc := schemaFields(t)
	pics := referencePICS(t)
	var m map[string]any
	if err := json.Unmarshal([]byte(capgen.PICS), &m); err != nil {
		t.Fatal(err)
	}
	m["dut"] = []string{"A", "B"}
	impl := m["implementation"].(map[string]any)
	impl["firmware"], impl["driver"] = "fw", "drv"
	fb, _ := json.Marshal(m)
	full, err := ParsePICS(fb)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := LoadDeviations("testdata/example.deviations")
	if err != nil {
		t.Fatal(err)
	}
	union := map[string]bool{}
	for _, c := range []struct {
		f    capgen.Fault
		opts Options
	}{
		{capgen.Good, Options{PICS: pics}},
		{capgen.GoBackN, Options{PICS: full, Deviations: devs, CaptureSHA256: true}},
		{capgen.Unflagged, Options{PICS: pics, Deviations: devs}},
	} {
		v := reportJSON(t, judgeTestdata(t, c.f, c.opts))
		if got := v.(map[string]any)["schema_version"]; got != SchemaVersion {
			t.Errorf("schema_version %v", got)
		}
		paths := map[string]bool{}
		jsonPaths(v, "", paths)
		for p := range paths {
			union[p] = true
			if _, ok := doc[p]; !ok {
				t.Errorf("%s: field %s is not documented in report-schema.md", c.f, p)
			}
		}
		for p, pres := range doc {
			if pres == "always" && !paths[p] {
				t.Errorf("%s: documented field %s (always) is missing", c.f, p)
			}
		}
	}
	rep, err := JudgeFile(lastFindingsCapture, Options{Today: testDay}) // more findings than listed
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]bool{}
	jsonPaths(reportJSON(t, rep), "", last)
	for p := range last {
		if union[p] = true; doc[p] == "" {
			t.Errorf("%s: field %s is not documented in report-schema.md", lastFindingsCapture, p)
		}
	}
	for p := range lostReportPaths(t) { // a capture whose interface lost frames
		if union[p] = true; doc[p] == "" {
			t.Errorf("lost frames: field %s is not documented in report-schema.md", p)
		}
	}
	activeOnly := []string{"cases[].duration_ns", "cases[].seed", "timelines[].case"}
	for p := range doc {
		if !union[p] && !slices.Contains(activeOnly, p) {
			t.Errorf("documented field %s appears in no report", p)
		}
	}
}

// reportJSON returns rep's JSON form, decoded.
func reportJSON(t *testing.T, rep *Report) any {
	t.Helper()
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
