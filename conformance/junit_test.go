package conformance

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/conformance/internal/capgen"
	"github.com/openmrc/mrc/internal/testenv"
)

// xmllintSchema validates doc against testdata/junit-strict.xsd (the
// facts of Jenkins xUnit's junit-10.xsd) and returns xmllint's verdict.
func xmllintSchema(t *testing.T, doc []byte) (ok bool, out string) {
	t.Helper()
	xmllint := testenv.LookPath(t, "xmllint")
	file := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit-strict.xsd", file).CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	return err == nil, string(b)
}

// everyVerdictReport is a judged report whose results carry every
// verdict and a failure under deviation.
func everyVerdictReport(t *testing.T) *Report {
	rep := judgeTestdata(t, capgen.NACKedEV, Options{})
	seen := map[Verdict]bool{}
	for _, r := range rep.Results {
		seen[r.Verdict] = true
	}
	set := func(i int, v Verdict, reason string, devs ...string) {
		rep.Results[i].Verdict, rep.Results[i].Reason, rep.Results[i].Deviations = v, reason, devs
	}
	n := len(rep.Results)
	set(n-1, Error, "the tester broke")
	set(n-2, NotSupported, "the PICS lists this case as unsupported")
	set(n-3, Inconclusive, "no packet shows `ack_req`")
	set(n-4, Fail, "a deviated failure", "known-bug")
	if !seen[Fail] || !seen[Pass] || !seen[NotApplicable] {
		t.Fatalf("the NACKedEV capture no longer gives FAIL, PASS and NOT-APPLICABLE: %v", seen)
	}
	return rep
}

// TestJUnitStrictSchema: the JUnit report validates against the strict
// schema CI servers use, carries each case's verdict as a property, has
// a timestamp, and reports INCONCLUSIVE as a skipped whose message
// starts with "INCONCLUSIVE:".
func TestJUnitStrictSchema(t *testing.T) {
	rep := everyVerdictReport(t)
	var b bytes.Buffer
	if err := rep.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if ok, out := xmllintSchema(t, b.Bytes()); !ok {
		t.Fatalf("JUnit fails the strict schema:\n%s\n%s", out, b.String())
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	st := doc.Suites[0]
	if st.Timestamp == "" || !strings.HasPrefix(st.Timestamp, "20") {
		t.Errorf("timestamp %q", st.Timestamp)
	}
	props := map[string]string{}
	for _, p := range st.Properties {
		props[p.Name] = p.Value
	}
	for _, r := range rep.Results {
		if v := props["verdict:"+r.Case.ID]; v != r.Verdict.String() {
			t.Errorf("property verdict:%s = %q, want %s", r.Case.ID, v, r.Verdict)
		}
	}
	inconclusive := rep.Results[len(rep.Results)-3].Case.ID
	for _, c := range st.Cases {
		if strings.HasPrefix(c.Name, inconclusive+" ") {
			if c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "INCONCLUSIVE: ") {
				t.Errorf("INCONCLUSIVE case %s: skipped %+v", inconclusive, c.Skipped)
			}
		}
	}
	if st.Skipped == 0 || st.Failures == 0 || st.Errors != 1 {
		t.Errorf("suite counts: %d skipped, %d failures, %d errors", st.Skipped, st.Failures, st.Errors)
	}
}

// TestJUnitSchemaCatchesOldDialect: the schema check is not vacuous: the
// dialect mrc-conform wrote before (skipped on <testsuites>, properties
// inside <testcase>) fails it.
func TestJUnitSchemaCatchesOldDialect(t *testing.T) {
	rep := everyVerdictReport(t)
	var b bytes.Buffer
	if err := rep.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	for name, bad := range map[string]string{
		"skipped on testsuites": strings.Replace(good, `<testsuites name="mrc-conform"`, `<testsuites name="mrc-conform" skipped="3"`, 1),
		"testcase properties":   strings.Replace(good, `<system-out>`, `<properties><property name="verdict" value="PASS"></property></properties><system-out>`, 1),
		"suite without errors":  strings.Replace(good, ` errors="1" skipped=`, ` skipped=`, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the mutation did not apply", name)
		}
		if ok, _ := xmllintSchema(t, []byte(bad)); ok {
			t.Errorf("%s: the strict schema accepted it", name)
		}
	}
}
