package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/pcap"
)

const ctd = "../../conformance/testdata/"

// TestJudgeExitCodes checks the documented exit codes of judge: 0 when
// every MUST passes, 1 when one FAILs (here MPR-WIN-1), 2 on usage errors.
func TestJudgeExitCodes(t *testing.T) {
	pics := "--pics=" + ctd + "reference.pics.json"
	for _, c := range []struct {
		args   []string
		status int
		out    string
	}{
		{[]string{ctd + "good.pcapng", pics, "--today", "2026-06-01"}, 0, "RESULT PASS (exit status 0)"},
		{[]string{ctd + "fault-beyond-mpr.pcapng", pics}, 1, "MRC-MPR-WIN-001"},
		{[]string{ctd + "fault-unflagged-rtx.pcapng", pics, "--deviations", ctd + "example.deviations", "--today", "2026-06-01"}, 0, "FAIL*"},
		{[]string{ctd + "good.pcapng", "--pics", "default"}, 0, "features none"},
		{[]string{ctd + "good.pcapng"}, 2, ""},
		{[]string{pics}, 2, ""},
		{[]string{ctd + "good.pcapng", pics, "--format", "xml"}, 2, ""},
		{[]string{ctd + "good.pcapng", "--pics", ctd + "example.deviations"}, 2, ""},
		{[]string{ctd + "good.pcapng", pics, "--deviations", ctd + "reference.pics.json"}, 2, ""},
		{[]string{ctd + "missing.pcapng", pics}, 2, ""},
		{[]string{ctd + "good.pcapng", pics, "--today", "tomorrow"}, 2, ""},
		{[]string{"-", pics}, 2, ""},
		// RSP-PRB-1: a probe never answered FAILs at B's own tap, and is
		// INCONCLUSIVE when the capture was taken away from the DUT.
		{[]string{ctd + "fault-unanswered-probe.pcapng", pics}, 1, "MRC-RSP-PRB-001"},
		{[]string{ctd + "fault-unanswered-probe.pcapng", pics, "--capture-at", "remote"}, 0, "RESULT PASS"},
		{[]string{ctd + "fault-unanswered-probe.pcapng", pics, "--capture-at", "nearby"}, 2, ""},
	} {
		out, errOut, status := run(t, append([]string{"judge"}, c.args...)...)
		if status != c.status {
			t.Errorf("judge %v: status %d, want %d; stderr %q", c.args, status, c.status, errOut)
		}
		if !strings.Contains(out, c.out) {
			t.Errorf("judge %v: output lacks %q", c.args, c.out)
		}
	}
}

// TestJudgeOutputs writes every format to files and the annotated capture.
func TestJudgeOutputs(t *testing.T) {
	dir := t.TempDir()
	pics := "--pics=" + ctd + "reference.pics.json"
	capture := ctd + "fault-nacked-ev-reused.pcapng"
	for _, f := range []string{"json", "junit", "html"} {
		out := filepath.Join(dir, "report."+f)
		args := []string{"judge", capture, pics, "--format", f, "-o", out}
		if f == "json" {
			args = append(args, "--annotate", filepath.Join(dir, "annotated.pcapng"))
		}
		stdout, errOut, status := run(t, args...)
		if status != 1 || errOut != "" || !strings.Contains(stdout, "FAIL (exit status 1), report in") {
			t.Errorf("%s: status %d, stdout %q, stderr %q", f, status, stdout, errOut)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case "json":
			var v struct {
				SchemaVersion string `json:"schema_version"`
				Summary       struct {
					FailedCases []string `json:"failed_cases"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(b, &v); err != nil || v.SchemaVersion == "" || len(v.Summary.FailedCases) != 1 || v.Summary.FailedCases[0] != "MRC-LR-NACK-001" {
				t.Errorf("JSON report: %v %+v", err, v)
			}
		case "junit":
			var v struct{}
			if err := xml.Unmarshal(b, &v); err != nil || !bytes.Contains(b, []byte(`<failure message=`)) {
				t.Errorf("JUnit report: %v", err)
			}
		case "html":
			if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte("<svg")) {
				t.Error("HTML report")
			}
		}
	}
	r, err := pcap.Open(filepath.Join(dir, "annotated.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f pcap.Frame
	found := false
	for r.Next(&f) == nil {
		for _, c := range f.Comments {
			if strings.HasPrefix(string(c), "MRC-LR-NACK-001 FAIL (EV-ST-13)") {
				found = true
			}
		}
	}
	if !found {
		t.Error("annotated capture lacks the verdict comment")
	}
}

// TestJudgeSeveralCaptures judges the seeded-fault directory: one report
// with a section per capture in name order and a summary, exit status the
// worst (1: the faults FAIL), identical for 1 and 2 jobs and with the
// captures read mapped (--mmap); a capture that cannot be read is an
// ERROR section and makes the status 2.
func TestJudgeSeveralCaptures(t *testing.T) {
	pics := "--pics=" + ctd + "reference.pics.json"
	var outs []string
	for _, extra := range [][]string{{"--jobs", "1"}, {"--jobs", "2"}, {"--jobs", "2", "--mmap"}} {
		var stdout, stderr bytes.Buffer
		code := runJudge(append([]string{ctd, pics, "--today", "2026-06-01"}, extra...), &stdout, &stderr)
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1; %s", extra, code, stderr.String())
		}
		outs = append(outs, stdout.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("the report of several captures differs between 1 and 2 jobs (%v) or with --mmap (%v)", outs[0] != outs[1], outs[0] != outs[2])
	}
	// The directory's captures, those of its e2e subdirectory included.
	files, _ := filepath.Glob(ctd + "*.pcapng")
	e2e, _ := filepath.Glob(ctd + "e2e/*.pcapng.gz")
	files = append(files, e2e...)
	if n := strings.Count(outs[0], "== capture "); n != len(files) {
		t.Errorf("%d sections, want %d", n, len(files))
	}
	if !strings.Contains(outs[0], fmt.Sprintf("== summary over %d captures ==", len(files))) {
		t.Errorf("no summary:\n%s", outs[0][max(0, len(outs[0])-2000):])
	}
	var stdout, stderr bytes.Buffer
	code := runJudge([]string{ctd + "good.pcapng", ctd + "missing.pcapng", pics, "--format", "json", "--today", "2026-06-01"}, &stdout, &stderr)
	var m struct {
		Captures []json.RawMessage `json:"captures"`
		Summary  struct {
			ExitCode int `json:"exit_code"`
			Each     []struct {
				Result string `json:"result"`
			} `json:"each"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatal(err, stderr.String())
	}
	if code != 2 || m.Summary.ExitCode != 2 || len(m.Captures) != 2 || m.Summary.Each[0].Result != "PASS" || m.Summary.Each[1].Result != "ERROR" {
		t.Errorf("exit %d, summary %+v", code, m.Summary)
	}
}

// TestJudgeSHA256OnRequest: the report carries the capture's SHA-256 only
// with --sha256 (hashing the file costs about as much CPU as judging it).
func TestJudgeSHA256OnRequest(t *testing.T) {
	capture := ctd + "good.pcapng"
	data, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%x", sha256.Sum256(data))
	for _, asked := range []bool{false, true} {
		args := []string{"judge", capture, "--pics", "default", "--format", "json"}
		if asked {
			args = append(args, "--sha256")
		}
		out, errOut, status := run(t, args...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, errOut)
		}
		var rep struct {
			Capture struct {
				SHA256 string `json:"sha256"`
			} `json:"capture"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if got := rep.Capture.SHA256; asked && got != want || !asked && got != "" {
			t.Errorf("--sha256=%v: capture.sha256 %q (file's %s)", asked, got, want)
		}
	}
}

// TestJudgeSeveralCapturesCaseTotals (issue 12: several captures judged
// into one report with a summary over all of them): the summary of
// several captures gives, for each case, its verdict over them all (the
// worst), how many captures gave each verdict, and the observations and
// findings of them all, in JSON (summary.cases) and in text (a line per
// case under the summary).
func TestJudgeSeveralCapturesCaseTotals(t *testing.T) {
	files := []string{ctd + "good.pcapng", ctd + "fault-gobackn.pcapng", ctd + "fault-bad-icrc.pcapng"}
	args := append(slices.Clone(files), "--pics="+ctd+"reference.pics.json", "--today", "2026-06-01")
	var stdout, stderr bytes.Buffer
	runJudge(append(slices.Clone(args), "--format", "json"), &stdout, &stderr)
	type caseJSON struct {
		ID           string         `json:"id"`
		Verdict      string         `json:"verdict"`
		Verdicts     map[string]int `json:"verdicts"`
		Checked      int            `json:"checked"`
		FindingCount int            `json:"finding_count"`
	}
	var m struct {
		Captures []struct {
			Cases []caseJSON `json:"cases"`
		} `json:"captures"`
		Summary struct {
			Cases []caseJSON `json:"cases"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatal(err, stderr.String())
	}
	if len(m.Captures) != len(files) || len(m.Captures[0].Cases) == 0 {
		t.Fatalf("%d captures, want %d with their cases", len(m.Captures), len(files))
	}
	rank := map[string]int{}
	for i, v := range []string{"NOT-APPLICABLE", "NOT-SUPPORTED", "PASS", "INCONCLUSIVE", "NON-STRICT", "FAIL", "ERROR"} {
		rank[v] = i
	}
	var want []caseJSON
	for i, c := range m.Captures[0].Cases {
		w := caseJSON{ID: c.ID, Verdict: c.Verdict, Verdicts: map[string]int{}}
		for v := range rank {
			w.Verdicts[v] = 0
		}
		for _, capture := range m.Captures {
			o := capture.Cases[i]
			w.Verdicts[o.Verdict]++
			w.Checked += o.Checked
			w.FindingCount += o.FindingCount
			if rank[o.Verdict] > rank[w.Verdict] {
				w.Verdict = o.Verdict
			}
		}
		want = append(want, w)
	}
	if !reflect.DeepEqual(m.Summary.Cases, want) {
		t.Errorf("summary.cases:\n%+v\nwant\n%+v", m.Summary.Cases, want)
	}
	stdout.Reset()
	runJudge(args, &stdout, &stderr)
	_, summary, _ := strings.Cut(stdout.String(), "== summary over 3 captures ==")
	for _, w := range want {
		line := fmt.Sprintf("%-22s %-14s", w.ID, w.Verdict)
		if !strings.Contains(summary, line) || w.FindingCount > 0 && !strings.Contains(summary, fmt.Sprintf("%d findings", w.FindingCount)) {
			t.Errorf("the text summary has no line %q with %d findings:\n%s", line, w.FindingCount, summary)
			break
		}
	}
}

// TestJudgeMmapFlag: --mmap asks the judge to read captures mapped
// (conformance.Options.Mapped); without it they are read copied.
func TestJudgeMmapFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--mmap"}, true}} {
		var fl judgeFlags
		fs := judgeFlagSet(&fl)
		if err := fs.Parse(append([]string{"--pics", "default"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		opts, code := judgeOptions(cli.Command{Name: "mrc-conform judge", Stdout: io.Discard, Stderr: &stderr}, &fl)
		if code != 0 || opts.Mapped != c.want {
			t.Errorf("%v: exit %d, Mapped %v, want %v; %s", c.args, code, opts.Mapped, c.want, stderr.String())
		}
	}
}
