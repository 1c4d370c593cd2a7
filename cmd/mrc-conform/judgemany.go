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
// and writes one report: a section per capture, in argument order, each
// written as soon as it and those before it are judged, then a summary
// over all of them. The output is the same for any jobs. Memory does not
// grow with the number of captures beyond a line of summary each: at
// most 2*jobs reports are held (judged, or waiting for an earlier one to
// be written), and the case totals are one per case.
func judgeMany(files []string, opts conformance.Options, jobs int, format conformance.Format, textOpts conformance.TextOptions, w io.Writer, progress io.Writer) (int, error) {
	type indexed struct {
		i int
		judged
	}
	window := 2 * jobs
	ahead := make(chan struct{}, window) // a slot per report started and not yet written
	sem := make(chan struct{}, jobs)
	ready := make(chan indexed, window)
	go func() {
		var mu sync.Mutex
		done := 0
		for i, f := range files {
			ahead <- struct{}{}
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				o := opts
				o.Jobs, o.Progress = 1, nil
				rep, err := conformance.JudgeFile(f, o)
				if progress != nil {
					mu.Lock()
					done++
					fmt.Fprintf(progress, "\rjudged %d of %d captures", done, len(files))
					mu.Unlock()
				}
				ready <- indexed{i, judged{file: f, rep: rep, err: err}}
			}()
		}
	}()
	out := newManyOut(w, format, textOpts, len(files))
	pending := map[int]judged{}
	var werr error
	for next := 0; next < len(files); {
		r := <-ready
		pending[r.i] = r.judged
		for ; next < len(files); next++ {
			j, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if werr == nil {
				werr = out.section(next, j)
			}
			<-ahead
		}
	}
	if progress != nil {
		fmt.Fprint(progress, "\r\033[K")
	}
	if werr != nil {
		return out.exit, werr
	}
	return out.exit, out.finish()
}

// manyOut writes the report of several captures section by section and
// keeps what the summary needs: a line per capture and the case totals.
type manyOut struct {
	w      io.Writer
	format conformance.Format
	text   conformance.TextOptions
	n      int
	exit   int
	each   []eachCapture
	cases  caseTotals
	buf    bytes.Buffer
}

// eachCapture is one capture's line in the summary.
type eachCapture struct {
	manyCapture
	mustPassed, mustTotal, mustFailed int
}

func newManyOut(w io.Writer, format conformance.Format, text conformance.TextOptions, n int) *manyOut {
	return &manyOut{w: w, format: format, text: text, n: n, exit: conformance.ExitPass, each: make([]eachCapture, 0, n), cases: caseTotals{at: map[string]int{}}}
}

// section writes capture i's section and adds it to the summary.
func (m *manyOut) section(i int, r judged) error {
	e := eachCapture{manyCapture: manyCapture{File: r.file, Result: "ERROR", ExitCode: conformance.ExitError}}
	if r.err != nil {
		e.Error = r.err.Error()
	} else {
		s := r.rep.Summary
		e.Result, e.ExitCode = s.Result, r.rep.ExitCode()
		e.mustPassed, e.mustTotal, e.mustFailed = s.MustPassed, s.MustTotal, s.MustFailed
		m.cases.add(r.rep)
	}
	m.each = append(m.each, e)
	m.exit = worseExit(m.exit, e.ExitCode)
	b := &m.buf
	b.Reset()
	if m.format == conformance.FormatJSON {
		if i == 0 {
			fmt.Fprintf(b, "{\n  \"schema_version\": %q,\n  \"captures\": [", conformance.SchemaVersion)
		} else {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		if err := m.jsonSection(r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(b, "== capture %d of %d: %s ==\n", i+1, m.n, r.file)
		if r.err != nil {
			fmt.Fprintf(b, "ERROR %v\n\n", r.err)
		} else {
			if err := r.rep.WriteTextOpts(b, m.text); err != nil {
				return err
			}
			b.WriteString("\n")
		}
	}
	_, err := m.w.Write(b.Bytes())
	return err
}

// jsonSection appends capture r's JSON report, indented as an element of
// the captures array (null for a capture that could not be judged).
func (m *manyOut) jsonSection(r judged) error {
	if r.err != nil {
		m.buf.WriteString("null")
		return nil
	}
	var one bytes.Buffer
	if err := r.rep.Write(&one, conformance.FormatJSON); err != nil {
		return err
	}
	return json.Indent(&m.buf, bytes.TrimSpace(one.Bytes()), "    ", "  ")
}

// finish writes the summary.
func (m *manyOut) finish() error {
	if m.format == conformance.FormatJSON {
		return m.finishJSON()
	}
	b := &m.buf
	b.Reset()
	fmt.Fprintf(b, "== summary over %d captures ==\n", m.n)
	for _, e := range m.each {
		if e.Error != "" {
			fmt.Fprintf(b, "%-8s exit %-3d %s: %v\n", "ERROR", conformance.ExitError, e.File, e.Error)
			continue
		}
		fmt.Fprintf(b, "%-8s exit %-3d %s: MUST %d/%d passed, %d failed\n", e.Result, e.ExitCode, e.File, e.mustPassed, e.mustTotal, e.mustFailed)
	}
	if cases := m.cases.totals(); len(cases) > 0 {
		fmt.Fprintf(b, "cases over the %d captures judged: the worst verdict, captures per verdict, observations and findings\n", m.cases.judged)
		for _, c := range cases {
			fmt.Fprintf(b, "%-22s %-14s ", c.ID, c.Verdict)
			sep := ""
			for _, v := range conformance.Verdicts {
				if n := c.Verdicts[v.String()]; n > 0 {
					fmt.Fprintf(b, "%s%s %d", sep, v, n)
					sep = ", "
				}
			}
			fmt.Fprintf(b, "; %d checked, %d findings\n", c.Checked, c.FindingCount)
		}
	}
	fmt.Fprintf(b, "RESULT over %d captures: exit status %d (the worst of theirs)\n", m.n, m.exit)
	_, err := m.w.Write(b.Bytes())
	return err
}

// finishJSON closes the captures array and writes the summary, laid out
// as json.Encoder.SetIndent("", "  ") lays out the whole report.
func (m *manyOut) finishJSON() error {
	s := manySummary{Captures: m.n, ExitCode: m.exit, Each: make([]manyCapture, 0, len(m.each)), Cases: m.cases.totals()}
	for _, e := range m.each {
		s.Each = append(s.Each, e.manyCapture)
	}
	sum, err := json.MarshalIndent(s, "  ", "  ")
	if err != nil {
		return err
	}
	b := &m.buf
	b.Reset()
	if m.n == 0 {
		fmt.Fprintf(b, "{\n  \"schema_version\": %q,\n  \"captures\": []", conformance.SchemaVersion)
	} else {
		b.WriteString("\n  ]")
	}
	b.WriteString(",\n  \"summary\": ")
	b.Write(sum)
	b.WriteString("\n}\n")
	_, err = m.w.Write(b.Bytes())
	return err
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

// caseTotals totals each case over the captures judged (those that could
// be read), in report order.
type caseTotals struct {
	judged int
	out    []caseTotal
	worst  []conformance.Verdict
	at     map[string]int
}

func (t *caseTotals) add(rep *conformance.Report) {
	t.judged++
	for _, c := range rep.Results {
		i, ok := t.at[c.Case.ID]
		if !ok {
			i, t.at[c.Case.ID] = len(t.out), len(t.out)
			ct := caseTotal{ID: c.Case.ID, Verdicts: map[string]int{}}
			for _, v := range conformance.Verdicts {
				ct.Verdicts[v.String()] = 0
			}
			t.out, t.worst = append(t.out, ct), append(t.worst, c.Verdict)
		}
		ct := &t.out[i]
		ct.Verdicts[c.Verdict.String()]++
		ct.Checked += c.Checked
		ct.FindingCount += c.FindingCount
		t.worst[i] = conformance.Worse(t.worst[i], c.Verdict)
	}
}

// totals returns the cases totalled, each with its worst verdict.
func (t *caseTotals) totals() []caseTotal {
	out := []caseTotal{}
	for i, c := range t.out {
		c.Verdict = t.worst[i].String()
		out = append(out, c)
	}
	return out
}

type manyCapture struct {
	File     string `json:"file"`
	Result   string `json:"result"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
}
