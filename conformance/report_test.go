package conformance

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/conformance/internal/capgen"
	"github.com/openmrc/mrc/pcap"
)

func picsWith(t *testing.T, edit func(m map[string]any)) *PICS {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(capgen.PICS), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.Marshal(m)
	p, err := ParsePICS(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDeviationCoversFailure: a FAIL under an unexpired deviation keeps its
// verdict, is reported beside the deviation and does not fail the run; an
// expired deviation is ignored and listed.
func TestDeviationCoversFailure(t *testing.T) {
	devs, err := LoadDeviations("testdata/example.deviations")
	if err != nil {
		t.Fatal(err)
	}
	rep := judgeTestdata(t, capgen.Unflagged, Options{Deviations: devs})
	res, _ := rep.Result("MRC-LR-RTX-003") // WIRE-BTH-5
	if res.Verdict != Fail || !res.Deviated() || res.Deviations[0] != "fw12-retry-flag" {
		t.Fatalf("verdict %s, deviations %v", res.Verdict, res.Deviations)
	}
	if rep.ExitCode() != 0 || rep.Summary.MustDeviated != 1 || rep.Summary.MustFailed != 0 {
		t.Errorf("exit %d, summary %+v", rep.ExitCode(), rep.Summary)
	}
	if len(rep.Summary.ExpiredIgnore) != 1 || rep.Summary.ExpiredIgnore[0] != "old-ecn-marking" {
		t.Errorf("expired: %v", rep.Summary.ExpiredIgnore)
	}
	var j bytes.Buffer
	if err := rep.WriteJUnit(&j); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `<skipped message="FAIL under deviation fw12-retry-flag`) {
		t.Error("JUnit does not skip the deviated failure")
	}
	var txt bytes.Buffer
	rep.WriteText(&txt)
	for _, want := range []string{"FAIL*", "deviation    fw12-retry-flag (active", "EXPIRED, ignored", "RESULT PASS (exit status 0)"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	// After the expiry date the same failure fails the run.
	rep = judgeTestdata(t, capgen.Unflagged, Options{Deviations: devs, Today: testDay.AddDate(1, 0, 0)})
	if rep.ExitCode() != 1 {
		t.Errorf("expired deviation still covers: exit %d", rep.ExitCode())
	}
}

// TestPICSSelectsCases: unsupported cases are NOT-SUPPORTED, features not
// declared make cases NOT-APPLICABLE, missing parameters INCONCLUSIVE.
func TestPICSSelectsCases(t *testing.T) {
	p := picsWith(t, func(m map[string]any) {
		m["unsupported_cases"] = []string{"MRC-LR-RTX-001"}
		delete(m["features"].(map[string]any), "tseth")
		delete(m["parameters"].(map[string]any), "mpr")
	})
	rep := judgeTestdata(t, capgen.GoBackN, Options{PICS: p})
	for id, want := range map[string]Verdict{
		"MRC-LR-RTX-001":     NotSupported,
		"MRC-WIRE-TSETH-001": NotApplicable,
		"MRC-REQ-HDR-001":    NotApplicable,
		"MRC-MPR-WIN-001":    Inconclusive,
	} {
		if got := rep.Verdict(id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d", rep.ExitCode())
	}
}

// TestDUTFilter: with only B under test, A's go-back-N is not judged.
func TestDUTFilter(t *testing.T) {
	p := picsWith(t, func(m map[string]any) { m["dut"] = []string{"B"} })
	rep := judgeTestdata(t, capgen.GoBackN, Options{PICS: p})
	if v := rep.Verdict("MRC-LR-RTX-001"); v == Fail {
		t.Errorf("the requester A is judged although only B is the DUT")
	}
	if v := rep.Verdict("MRC-RSP-SACK-001"); v != Pass {
		t.Errorf("B's SACKs: %s", v)
	}
}

// TestUntrustedTimestamps: timing cases become INCONCLUSIVE, including a
// failure that only the timestamps prove (LR-RTX-1 before the timer).
func TestUntrustedTimestamps(t *testing.T) {
	p := picsWith(t, func(m map[string]any) { m["capture"].(map[string]any)["timestamps"] = "untrusted" })
	rep := judgeTestdata(t, capgen.Premature, Options{PICS: p})
	if v := rep.Verdict("MRC-LR-RTX-002"); v != Inconclusive {
		t.Errorf("MRC-LR-RTX-002: %s, want INCONCLUSIVE", v)
	}
	if rep.Capture.TimestampsTrusted {
		t.Error("timestamps reported trusted")
	}
	if v := rep.Verdict("MRC-WIRE-ICRC-001"); v != Pass {
		t.Errorf("a non-timing case changed: %s", v)
	}
}

// TestReportFormats checks the JUnit, HTML and text renderings of a
// failing run.
func TestReportFormats(t *testing.T) {
	rep := judgeTestdata(t, capgen.NACKedEV, Options{})
	var j bytes.Buffer
	if err := rep.WriteJUnit(&j); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit is not XML: %v", err)
	}
	if doc.Tests != len(rep.Results) || doc.Failures != 1 || len(doc.Suites[0].Cases) != len(rep.Results) {
		t.Errorf("JUnit counts: %d tests, %d failures", doc.Tests, doc.Failures)
	}
	for _, c := range doc.Suites[0].Cases {
		if strings.HasPrefix(c.Name, "MRC-LR-NACK-001 ") {
			if c.Failure == nil || !strings.Contains(c.Failure.Body, "EV-ST-13") || !strings.Contains(c.Failure.Body, "RDMA_WRITE_LAST_IMM") {
				t.Errorf("failure evidence: %+v", c.Failure)
			}
		}
	}
	var h bytes.Buffer
	if err := rep.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	html := h.String()
	for _, want := range []string{"<svg", "MRC-LR-NACK-001", "expected: an EV other than 0x00020003", "EV-ST-13 (MUST NOT"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", " src=", "<link", "https://", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML is not self-contained: %q", bad)
		}
	}
	if strings.Count(html, "http://") != strings.Count(html, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("HTML references an external URL")
	}
}

// TestAnnotatedCapture: the annotated pcapng carries the verdict on the
// offending frame and keeps every frame and the original comments.
func TestAnnotatedCapture(t *testing.T) {
	var out bytes.Buffer
	rep := judgeTestdata(t, capgen.NACKedEV, Options{Annotate: &out})
	res, _ := rep.Result("MRC-LR-NACK-001")
	bad := res.Findings[0].Frame
	r, err := pcap.NewReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var f pcap.Frame
	n, found := 0, false
	for {
		if err := r.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		var cs []string
		for _, c := range f.Comments {
			cs = append(cs, string(c))
		}
		all := strings.Join(cs, "\n")
		if n == 1 && !strings.Contains(all, "mrc-conform judge") {
			t.Errorf("frame 1 lacks the summary comment: %q", all)
		}
		if len(cs) == 0 || !strings.Contains(cs[0], "→") {
			t.Errorf("frame %d lost its original comment", n)
		}
		if f.Number == bad {
			found = strings.Contains(all, "MRC-LR-NACK-001 FAIL (EV-ST-13)")
		}
	}
	if n != rep.Capture.Frames || !found {
		t.Errorf("%d frames (want %d), verdict on frame %d: %v", n, rep.Capture.Frames, bad, found)
	}
}

// TestTestdataUpToDate checks that the checked-in testdata equal what the
// generator writes (go generate ./conformance).
func TestTestdataUpToDate(t *testing.T) {
	files, err := capgen.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./conformance)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s is stale: run go generate ./conformance", name)
		}
	}
}

// TestTrimNACKDeclaredAbsent: with trim_nack declared false, the requester
// must send DSCP_NO_TRIM (WIRE-DSCP-5) and the responder must not NACK
// trims (RSP-NACK-2); the good exchange, which does both, fails both.
func TestTrimNACKDeclaredAbsent(t *testing.T) {
	p := picsWith(t, func(m map[string]any) { m["features"].(map[string]any)["trim_nack"] = false })
	rep := judgeTestdata(t, capgen.Good, Options{PICS: p})
	for id, want := range map[string]Verdict{"MRC-WIRE-DSCP-001": Fail, "MRC-RSP-NACK-002": Fail, "MRC-RSP-NACK-001": NotApplicable} {
		if got := rep.Verdict(id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	res, _ := rep.Result("MRC-WIRE-DSCP-001")
	if res.Findings[0].Requirement != "WIRE-DSCP-5" {
		t.Errorf("finding names %s", res.Findings[0].Requirement)
	}
}

// TestInlineCode: Markdown inline code in case text renders as <code>,
// everything else escaped, an unpaired backtick kept.
func TestInlineCode(t *testing.T) {
	for in, want := range map[string]string{
		"sets `ack_req` on <last>": "sets <code>ack_req</code> on &lt;last&gt;",
		"`a` and `b<c`":            "<code>a</code> and <code>b&lt;c</code>",
		"a ` alone":                "a ` alone",
		"":                         "",
	} {
		if got := string(inlineCode(in)); got != want {
			t.Errorf("inlineCode(%q) = %q, want %q", in, got, want)
		}
	}
}
