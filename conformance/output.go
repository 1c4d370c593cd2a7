package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/openmrc/mrc/spec"
)

// Format is a report format.
type Format string

// Report formats.
const (
	FormatText  Format = "text"
	FormatJSON  Format = "json"
	FormatJUnit Format = "junit"
	FormatHTML  Format = "html"
)

// Formats lists the report formats.
var Formats = []Format{FormatText, FormatJSON, FormatJUnit, FormatHTML}

// Write writes the report in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	switch f {
	case FormatText:
		return r.WriteText(w)
	case FormatJSON:
		return r.WriteJSON(w)
	case FormatJUnit:
		return r.WriteJUnit(w)
	case FormatHTML:
		return r.WriteHTML(w)
	}
	return fmt.Errorf("conformance: unknown report format %q (want text, json, junit or html)", f)
}

// jsonCase is a result as the JSON report shows it: the case's catalog
// entry and its outcome.
type jsonCase struct {
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Assertion    string          `json:"assertion"`
	Requirements []RequirementID `json:"requirements"`
	Level        spec.Level      `json:"level"`
	Mode         Mode            `json:"mode"`
	View         View            `json:"view,omitempty"`
	Topology     string          `json:"topology"`
	Features     []string        `json:"features"`
	Parameters   []string        `json:"parameters"`
	Timing       bool            `json:"timing"`
	Result
	Deviated bool `json:"deviated"`
}

type jsonReport struct {
	*Report
	Cases []jsonCase `json:"cases"`
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// JSON returns the report as the JSON document of report-schema.md.
func (r *Report) JSON() ([]byte, error) {
	jr := jsonReport{Report: r, Cases: []jsonCase{}}
	for _, res := range r.Results {
		c := res.Case
		res.Findings = append([]Finding{}, res.Findings...)
		jr.Cases = append(jr.Cases, jsonCase{ID: c.ID, Title: c.Title, Assertion: c.Assertion, Requirements: nonNil(c.Requirements),
			Level: c.Level, Mode: c.Mode, View: c.View, Topology: c.Topology, Features: nonNil(c.Features),
			Parameters: nonNil(c.Parameters), Timing: c.Timing, Result: res, Deviated: res.Deviated()})
	}
	return json.MarshalIndent(jr, "", "  ")
}

// WriteJSON writes the JSON report.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func plural(n int, s string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, s)
	}
	return fmt.Sprintf("%d %ss", n, s)
}

func (f *Finding) where() string {
	var parts []string
	if f.Connection != "" {
		parts = append(parts, f.Connection)
	}
	if f.Point != "" {
		pl := ""
		if f.Plane >= 0 {
			pl = fmt.Sprintf(" plane %d", f.Plane)
		}
		parts = append(parts, "at "+f.Point+pl)
	}
	if f.PSN != nil {
		parts = append(parts, fmt.Sprintf("PSN %d", *f.PSN))
	}
	if f.EV != nil {
		parts = append(parts, fmt.Sprintf("EV 0x%08x", *f.EV))
	}
	return strings.Join(parts, ", ")
}

// TextOptions tune the terminal summary.
type TextOptions struct {
	// Findings is how many findings to print per case (default, and
	// when not positive, textFindings).
	Findings int
	// All prints every case; by default PASS and NOT-APPLICABLE cases
	// are listed in one line each and the others with their reasons.
	All bool
	// SummaryOnly prints only the summary that ends the report (the
	// counts and the RESULT line), for a terminal whose report went to
	// a file.
	SummaryOnly bool
}

// textFindings is how many of a case's first and last findings the
// terminal summary prints by default.
const textFindings = 3

// WriteText writes the terminal summary with the default options.
func (r *Report) WriteText(w io.Writer) error { return r.WriteTextOpts(w, TextOptions{}) }

// writeFindings writes the first n of a case's findings with their
// evidence and, when there were more, how many, and the last n judged. A
// FAIL or NON-STRICT case none of whose findings written has its verdict
// gets the first that has it written too (unshownEvidence), so that the
// terminal shows what failed.
func writeFindings(p func(string, ...any), res *Result, n int) {
	show := res.Findings[:min(n, len(res.Findings))]
	last := res.LastFindings[max(0, len(res.LastFindings)-n):]
	switch i, inLast := res.unshownEvidence(n); {
	case i < 0:
	case inLast:
		last = append([]Finding{res.LastFindings[i]}, last...)
	default:
		show = append(slices.Clone(show), res.Findings[i])
	}
	for _, f := range show {
		p("%29s %s frame %d (%s) %s\n", "", f.Verdict, f.Frame, f.where(), f.Requirement)
		p("%29s   expected: %s\n", "", f.Expected)
		p("%29s   observed: %s\n", "", f.Observed)
	}
	if more := res.FindingCount - len(show); len(res.Findings) > n && more > 0 {
		p("%29s … %d more (see the JSON or HTML report)\n", "", more)
	}
	for _, f := range last {
		p("%29s last: %s frame %d (%s) %s\n", "", f.Verdict, f.Frame, f.where(), f.Requirement)
	}
}

// unshownEvidence returns where the first finding of a FAIL or NON-STRICT
// case's own verdict is, when the n first and n last findings the text
// writes (writeFindings) hold none: its index, in LastFindings if inLast;
// -1 when they hold one, or there is none.
func (res *Result) unshownEvidence(n int) (i int, inLast bool) {
	if res.Verdict != Fail && res.Verdict != NonStrict {
		return -1, false
	}
	is := func(f Finding) bool { return f.Verdict == res.Verdict }
	if slices.ContainsFunc(res.Findings[:min(n, len(res.Findings))], is) ||
		slices.ContainsFunc(res.LastFindings[max(0, len(res.LastFindings)-n):], is) {
		return -1, false
	}
	if i := slices.IndexFunc(res.Findings, is); i >= 0 {
		return i, false
	}
	return slices.IndexFunc(res.LastFindings, is), true
}

// WriteTextOpts writes the terminal summary.
func (r *Report) WriteTextOpts(w io.Writer, o TextOptions) error {
	if o.Findings <= 0 {
		o.Findings = textFindings
	}
	var b strings.Builder
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	p("mrc-conform %s, %s mode — MRC conformance report (schema %s)\n", r.Tool.Version, r.Mode, r.SchemaVersion)
	if c := r.Capture; c != nil {
		sha := ""
		if len(c.SHA256) >= 12 {
			sha = ", sha256 " + c.SHA256[:12] + "…"
		}
		p("capture      %s (%s, %s, %d MRC, %s%s)\n", c.File, c.Format, plural(c.Frames, "frame"), c.MRCFrames, fmtNs(c.DurationNs), sha)
		var pts []string
		for _, pn := range c.PointNodes {
			pts = append(pts, fmt.Sprintf("%s at %s (%s)", pn.Node, pn.Point, pn.How))
		}
		if len(pts) > 0 {
			p("nodes        %s\n", strings.Join(pts, "; "))
		}
		if !c.TimestampsTrusted {
			p("timestamps   NOT TRUSTED: timing cases are INCONCLUSIVE\n")
		}
		for _, n := range c.Notes {
			p("note         %s\n", n)
		}
	}
	impl := strings.TrimSpace(strings.Join([]string{r.PICS.Implementation.Vendor, r.PICS.Implementation.Model, r.PICS.Implementation.Version}, " "))
	pf := r.PICS.File
	if pf == "" {
		pf = "(default PICS)"
	}
	feats := strings.Join(r.PICS.Features, ", ")
	if feats == "" {
		feats = "none"
	}
	p("PICS         %s: %s; profile %s, EV mode %s; features %s\n", pf, impl, r.PICS.Profile, r.PICS.EVMode, feats)
	for _, c := range r.Connections {
		p("connection   %s %s→%s qp 0x%06x: %s (%d rtx, %d trimmed), %d SACK, %d NACK, %d ACK, %d probe, %d EV, planes %v\n",
			c.ID, c.Requester, c.Responder, c.ResponderQPN, plural(c.Writes, "write"), c.Retransmits, c.Trimmed, c.SACKs, c.NACKs, c.ACKs, c.Probes, c.EVs, c.Planes)
	}
	for _, d := range r.Deviations.List {
		state := "active"
		if d.Expired {
			state = "EXPIRED, ignored"
		}
		p("deviation    %s (%s, expires %s) on %s: %s\n", d.Name, state, d.Expires, strings.Join(d.Cases, ","), d.Reason)
	}
	p("\n%-20s %-8s %-15s %7s  %s\n", "CASE", "LEVEL", "VERDICT", "CHECKED", "TITLE")
	for _, res := range r.Results {
		v := res.Verdict.String()
		if res.Deviated() {
			v += "*"
		}
		p("%-20s %-8s %-15s %7d  %s\n", res.Case.ID, res.Case.Level, v, res.Checked, res.Case.Title)
		if res.Verdict == Pass || res.Verdict == NotApplicable {
			if !o.All {
				continue
			}
		}
		p("%29s %s\n", "", res.Reason)
		if len(res.Deviations) > 0 {
			p("%29s deviation %s\n", "", strings.Join(res.Deviations, ", "))
		}
		writeFindings(p, &res, o.Findings)
	}
	summary := b.Len()
	s := r.Summary
	p("\n%s", s.Line("MUST"))
	if len(s.FailedCases) > 0 {
		p(": failed %s", strings.Join(s.FailedCases, ", "))
	}
	p("\n")
	if s.ShouldTotal > 0 {
		p("%s\n", s.Line("SHOULD"))
	}
	if len(s.ExpiredIgnore) > 0 {
		p("expired deviations ignored: %s\n", strings.Join(s.ExpiredIgnore, ", "))
	}
	p("RESULT %s (exit status %d)", s.Result, s.ExitCode)
	if s.Why != "" {
		p(": %s", s.Why)
	}
	p("\n")
	out := b.String()
	if o.SummaryOnly {
		out = strings.TrimPrefix(out[summary:], "\n")
	}
	_, err := io.WriteString(w, out)
	return err
}

func fmtNs(ns int64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3f s", float64(ns)/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3f ms", float64(ns)/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
}

// JUnit XML.

// The JUnit document follows the strict dialect CI servers accept
// (Jenkins xUnit's junit-10.xsd, restated in
// testdata/junit-strict.xsd): no skipped count on <testsuites>, a
// timestamp on <testsuite>, no properties inside <testcase> — so each
// case's verdict is a suite property named "verdict:CASE-ID".
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// junitSeconds is a duration in JUnit's form: seconds with a fraction.
func junitSeconds(ns int64) string { return fmt.Sprintf("%.6f", float64(max(ns, 0))/1e9) }

func (r *Report) evidence(res *Result) string {
	var b strings.Builder
	frames := map[int]string{}
	for _, f := range r.Frames {
		frames[f.Number] = f.Summary
	}
	for i, f := range res.Findings {
		fmt.Fprintf(&b, "%d. %s %s frame %d (%s)\n   expected: %s\n   observed: %s\n", i+1, f.Verdict, f.Requirement, f.Frame, f.where(), f.Expected, f.Observed)
		if s, ok := frames[f.Frame]; ok {
			fmt.Fprintf(&b, "   frame %d: %s\n", f.Frame, s)
		}
		for _, rf := range f.Related {
			if s, ok := frames[rf]; ok {
				fmt.Fprintf(&b, "   related frame %d: %s\n", rf, s)
			}
		}
	}
	if res.FindingCount > len(res.Findings) {
		fmt.Fprintf(&b, "… %d more findings\n", res.FindingCount-len(res.Findings))
	}
	for _, f := range res.LastFindings {
		fmt.Fprintf(&b, "last: %s %s frame %d (%s)\n", f.Verdict, f.Requirement, f.Frame, f.where())
	}
	return b.String()
}

// WriteJUnit writes JUnit XML: one testcase per case. FAIL is a failure,
// ERROR an error; NON-STRICT passes with its evidence in system-out;
// INCONCLUSIVE, NOT-APPLICABLE, NOT-SUPPORTED and a FAIL covered by a
// deviation are skipped, with the reason as message.
func (r *Report) WriteJUnit(w io.Writer) error {
	name := "mrc-conform " + string(r.Mode)
	if r.Capture != nil {
		name += " " + r.Capture.File
	}
	when := r.Timestamp
	if when.IsZero() {
		when = time.Now()
	}
	// ISO 8601 without a zone, in UTC, as Ant and Surefire write it.
	st := junitSuite{Name: name, Timestamp: when.UTC().Format("2006-01-02T15:04:05")}
	var total int64
	st.Properties = []junitProperty{{"schema_version", r.SchemaVersion}, {"tool_version", r.Tool.Version},
		{"pics", r.PICS.File}, {"pics_sha256", r.PICS.SHA256}, {"profile", r.PICS.Profile}, {"result", r.Summary.Result}}
	if r.Capture != nil {
		st.Properties = append(st.Properties, junitProperty{"capture_sha256", r.Capture.SHA256})
	}
	for i := range r.Results {
		res := &r.Results[i]
		c := res.Case
		area := strings.SplitN(c.ID, "-", 3)
		jc := junitCase{Name: c.ID + " " + c.Title, ClassName: "mrc." + strings.ToLower(area[1]), Time: junitSeconds(res.DurationNs)}
		total += res.DurationNs
		st.Properties = append(st.Properties, junitProperty{"verdict:" + c.ID, res.Verdict.String()})
		out := fmt.Sprintf("verdict %s; level %s; requirements %s\n%s\n", res.Verdict, c.Level, JoinRequirements(c.Requirements, " "), res.Reason)
		ev := r.evidence(res)
		switch {
		case res.Deviated():
			jc.Skipped = &junitMessage{Message: fmt.Sprintf("%s under deviation %s: %s", res.Verdict, strings.Join(res.Deviations, ","), res.Reason)}
			out += ev
			st.Skipped++
		case res.Verdict == Fail:
			jc.Failure = &junitMessage{Message: res.Reason, Type: "FAIL", Body: ev}
			st.Failures++
		case res.Verdict == Error:
			jc.Error = &junitMessage{Message: res.Reason, Type: "ERROR", Body: ev}
			st.Errors++
		case res.Verdict == NonStrict:
			out += ev
		case res.Verdict == Pass:
		default: // INCONCLUSIVE, NOT-APPLICABLE, NOT-SUPPORTED: the message starts with the verdict
			jc.Skipped = &junitMessage{Message: res.Verdict.String() + ": " + res.Reason}
			st.Skipped++
		}
		jc.SystemOut = out
		st.Cases = append(st.Cases, jc)
		st.Tests++
	}
	st.Time = junitSeconds(total)
	doc := junitSuites{Name: "mrc-conform", Tests: st.Tests, Failures: st.Failures, Errors: st.Errors, Time: st.Time, Suites: []junitSuite{st}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// requirementText returns "ID (LEVEL): text" for the HTML report.
func requirementText(id string) string {
	q, ok := spec.Lookup(id)
	if !ok {
		return id
	}
	return fmt.Sprintf("%s (%s, %s): %s", id, q.Level, q.Confidence, q.Text)
}

func sortedVerdictCounts(m map[string]int) []string {
	var out []string
	for _, v := range Verdicts {
		if n := m[v.String()]; n > 0 {
			out = append(out, fmt.Sprintf("%s %d", v, n))
		}
	}
	return slices.Clip(out)
}
