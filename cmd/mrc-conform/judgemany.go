package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/openmrc/mrc/conformance"
)

// captureFiles expands the judge's arguments: a directory stands for the
// capture files under it (.pcap, .pcapng, gzip-compressed or not), in
// name order.
func captureFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			n := strings.TrimSuffix(d.Name(), ".gz")
			if !d.IsDir() && (strings.HasSuffix(n, ".pcap") || strings.HasSuffix(n, ".pcapng")) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s is a directory with no .pcap or .pcapng file in it", a)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// judged is one capture's outcome in a judgement of several.
type judged struct {
	file string
	rep  *conformance.Report
	err  error
}

// exitRank orders exit statuses from best to worst, for the status of a
// judgement of several captures: the worst of theirs.
var exitRank = map[int]int{conformance.ExitPass: 0, conformance.ExitUnsupported: 1, conformance.ExitFail: 2, conformance.ExitError: 3}

func worseExit(a, b int) int {
	if exitRank[b] > exitRank[a] {
		return b
	}
	return a
}

// judgeMany judges several captures, jobs at a time (each on one worker),
// and writes one report: a section per capture, in argument order, then a
// summary over all of them. The output is the same for any jobs.
func judgeMany(files []string, opts conformance.Options, jobs int, format conformance.Format, textOpts conformance.TextOptions, w, progress io.Writer) (int, error) {
	res := make([]judged, len(files))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, f string) {
			defer wg.Done()
			defer func() { <-sem }()
			o := opts
			o.Jobs, o.Progress = 1, nil
			rep, err := conformance.JudgeFile(f, o)
			res[i] = judged{file: f, rep: rep, err: err}
			if progress != nil {
				mu.Lock()
				done++
				fmt.Fprintf(progress, "\rjudged %d of %d captures", done, len(files))
				mu.Unlock()
			}
		}(i, f)
	}
	wg.Wait()
	if progress != nil {
		fmt.Fprint(progress, "\r\033[K")
	}
	exit := conformance.ExitPass
	for _, r := range res {
		code := conformance.ExitError
		if r.err == nil {
			code = r.rep.ExitCode()
		}
		exit = worseExit(exit, code)
	}
	var err error
	if format == conformance.FormatJSON {
		err = writeManyJSON(w, res, exit)
	} else {
		err = writeManyText(w, res, exit, textOpts)
	}
	return exit, err
}

func writeManyText(w io.Writer, res []judged, exit int, o conformance.TextOptions) error {
	var b bytes.Buffer
	for i, r := range res {
		fmt.Fprintf(&b, "== capture %d of %d: %s ==\n", i+1, len(res), r.file)
		if r.err != nil {
			fmt.Fprintf(&b, "ERROR %v\n\n", r.err)
			continue
		}
		if err := r.rep.WriteTextOpts(&b, o); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "== summary over %d captures ==\n", len(res))
	for _, r := range res {
		if r.err != nil {
			fmt.Fprintf(&b, "%-8s exit %-3d %s: %v\n", "ERROR", conformance.ExitError, r.file, r.err)
			continue
		}
		s := r.rep.Summary
		fmt.Fprintf(&b, "%-8s exit %-3d %s: MUST %d/%d passed, %d failed\n", s.Result, s.ExitCode, r.file, s.MustPassed, s.MustTotal, s.MustFailed)
	}
	if cases := caseTotals(res); len(cases) > 0 {
		fmt.Fprintf(&b, "cases over the %d captures judged: the worst verdict, captures per verdict, observations and findings\n", judgedCount(res))
		for _, c := range cases {
			fmt.Fprintf(&b, "%-22s %-14s ", c.ID, c.Verdict)
			sep := ""
			for _, v := range conformance.Verdicts {
				if n := c.Verdicts[v.String()]; n > 0 {
					fmt.Fprintf(&b, "%s%s %d", sep, v, n)
					sep = ", "
				}
			}
			fmt.Fprintf(&b, "; %d checked, %d findings\n", c.Checked, c.FindingCount)
		}
	}
	fmt.Fprintf(&b, "RESULT over %d captures: exit status %d (the worst of theirs)\n", len(res), exit)
	_, err := w.Write(b.Bytes())
	return err
}

// manyJSON is the JSON report of several captures: each capture's report
// as it would be alone, and a summary.
type manyJSON struct {
	SchemaVersion string            `json:"schema_version"`
	Captures      []json.RawMessage `json:"captures"`
	Summary       manySummary       `json:"summary"`
}

type manySummary struct {
	Captures int           `json:"captures"`
	ExitCode int           `json:"exit_code"`
	Each     []manyCapture `json:"each"`
	Cases    []caseTotal   `json:"cases"`
}

// caseTotal is one case over the captures judged: its verdict over them
// all (the worst), how many captures gave each verdict, and their
// observations and findings together.
type caseTotal struct {
	ID           string         `json:"id"`
	Verdict      string         `json:"verdict"`
	Verdicts     map[string]int `json:"verdicts"`
	Checked      int            `json:"checked"`
	FindingCount int            `json:"finding_count"`
}

// caseTotals returns the cases of the captures judged (those that could
// be read), in report order, each totalled over them.
func caseTotals(res []judged) []caseTotal {
	out := []caseTotal{}
	var worst []conformance.Verdict
	at := map[string]int{}
	for _, r := range res {
		if r.err != nil {
			continue
		}
		for _, c := range r.rep.Results {
			i, ok := at[c.Case.ID]
			if !ok {
				i, at[c.Case.ID] = len(out), len(out)
				t := caseTotal{ID: c.Case.ID, Verdicts: map[string]int{}}
				for _, v := range conformance.Verdicts {
					t.Verdicts[v.String()] = 0
				}
				out, worst = append(out, t), append(worst, c.Verdict)
			}
			t := &out[i]
			t.Verdicts[c.Verdict.String()]++
			t.Checked += c.Checked
			t.FindingCount += c.FindingCount
			worst[i] = conformance.Worse(worst[i], c.Verdict)
		}
	}
	for i := range out {
		out[i].Verdict = worst[i].String()
	}
	return out
}

// judgedCount is how many of the captures could be read and judged.
func judgedCount(res []judged) int {
	n := 0
	for _, r := range res {
		if r.err == nil {
			n++
		}
	}
	return n
}

type manyCapture struct {
	File     string `json:"file"`
	Result   string `json:"result"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
}

func writeManyJSON(w io.Writer, res []judged, exit int) error {
	out := manyJSON{SchemaVersion: conformance.SchemaVersion, Captures: []json.RawMessage{},
		Summary: manySummary{Captures: len(res), ExitCode: exit, Each: []manyCapture{}}}
	for _, r := range res {
		if r.err != nil {
			out.Summary.Each = append(out.Summary.Each, manyCapture{File: r.file, Result: "ERROR", ExitCode: conformance.ExitError, Error: r.err.Error()})
			out.Captures = append(out.Captures, json.RawMessage("null"))
			continue
		}
		var b bytes.Buffer
		if err := r.rep.Write(&b, conformance.FormatJSON); err != nil {
			return err
		}
		out.Captures = append(out.Captures, json.RawMessage(bytes.TrimSpace(b.Bytes())))
		out.Summary.Each = append(out.Summary.Each, manyCapture{File: r.file, Result: r.rep.Summary.Result, ExitCode: r.rep.ExitCode()})
	}
	out.Summary.Cases = caseTotals(res)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
