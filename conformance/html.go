package conformance

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
)

// WriteHTML writes a self-contained HTML report (inline CSS and SVG, no
// script, no external asset): the summary, every case with its verdict,
// and for each failing case the requirements' text, the expected and
// observed packets of each finding, and the per-EV, per-plane timeline of
// the connection around the failure.
func (r *Report) WriteHTML(w io.Writer) error {
	frames := map[int]Frame{}
	for _, f := range r.Frames {
		frames[f.Number] = f
	}
	type fview struct {
		Finding
		Where    string
		Summary  string
		Related  []Frame
		HasFrame bool
	}
	type cview struct {
		Result
		Deviated  bool
		Class     string
		Reqs      []string
		Findings  []fview
		Last      []fview // Result.LastFindings
		Timelines []template.HTML
		More      int
	}
	var cases []cview
	for _, res := range r.Results {
		cv := cview{Result: res, Deviated: res.Deviated(), Class: strings.ToLower(res.Verdict.String())}
		if cv.Deviated {
			cv.Class = "deviated"
		}
		for _, id := range res.Case.Requirements {
			cv.Reqs = append(cv.Reqs, requirementText(string(id)))
		}
		conns := map[string]bool{}
		for _, f := range res.Findings {
			fv := fview{Finding: f, Where: f.where()}
			if fr, ok := frames[f.Frame]; ok {
				fv.Summary, fv.HasFrame = fr.Summary, true
			}
			for _, rf := range f.Related {
				if fr, ok := frames[rf]; ok {
					fv.Related = append(fv.Related, fr)
				}
			}
			cv.Findings = append(cv.Findings, fv)
			if f.Verdict == Fail || f.Verdict == NonStrict {
				conns[f.Connection+" at "+f.Point] = true
			}
		}
		cv.More = res.FindingCount - len(res.Findings)
		for _, f := range res.LastFindings {
			cv.Last = append(cv.Last, fview{Finding: f, Where: f.where()})
		}
		for _, tl := range r.Timelines {
			if conns[tl.Connection] || (tl.Case != "" && tl.Case == res.Case.ID) {
				cv.Timelines = append(cv.Timelines, timelineSVG(tl))
			}
		}
		cases = append(cases, cv)
	}
	// Failures first: what needs reading leads both the table and the
	// details; the catalog order holds within each verdict.
	slices.SortStableFunc(cases, func(a, b cview) int { return htmlRank(&a.Result) - htmlRank(&b.Result) })
	data := struct {
		R        *Report
		Cases    []cview
		Counts   string
		Features string
	}{R: r, Cases: cases, Counts: strings.Join(sortedVerdictCounts(r.Summary.Verdicts), " · "), Features: strings.Join(r.PICS.Features, ", ")}
	return htmlTmpl().Execute(w, data)
}

// htmlRank orders the HTML report's cases: failures, errors and
// non-strict first, passes and cases that did not apply last.
func htmlRank(r *Result) int {
	switch {
	case r.Deviated():
		return 3
	case r.Verdict == Fail:
		return 0
	case r.Verdict == Error:
		return 1
	case r.Verdict == NonStrict:
		return 2
	case r.Verdict == Inconclusive:
		return 4
	case r.Verdict == NotSupported:
		return 5
	case r.Verdict == Pass:
		return 6
	}
	return 7
}

// inlineCode renders text as HTML with Markdown's inline code: `x`
// becomes <code>x</code>; everything else is escaped. An unpaired
// backtick stays as it is.
func inlineCode(s string) template.HTML {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(template.HTMLEscapeString(p))
		case i == len(parts)-1: // unpaired
			b.WriteString("`" + template.HTMLEscapeString(p))
		default:
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
		}
	}
	return template.HTML(b.String())
}

// htmlTmpl is parsed on first use: most runs write no HTML report.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"md":    inlineCode,
		"ns":    fmtNs,
		"lower": strings.ToLower,
		"hex":   func(v *uint32) string { return fmt.Sprintf("0x%08x", *v) },
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>MRC conformance report{{with .R.Capture}}: {{.File}}{{end}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:80em}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}h3{font-size:1em;margin:.2em 0}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td:first-child a{white-space:nowrap}code,pre{font:12px/1.3 ui-monospace,monospace}pre{background:#f7f7f7;padding:.4em;margin:.2em 0;white-space:pre-wrap;word-break:break-all}
.v{font-weight:bold;padding:0 .4em;border-radius:3px;white-space:nowrap}
.pass{background:#d8f0d8}.fail{background:#f6c9c9}.non-strict{background:#fbe3b8}.inconclusive{background:#e4e4f6}
.not-applicable,.not-supported{background:#eee;color:#666}.error{background:#222;color:#fff}.deviated{background:#f3e0f3}
.case{border:1px solid #ccc;border-radius:4px;padding:.6em;margin:.8em 0}.exp{color:#155724}.obs{color:#8b0000}
.meta td:first-child{font-weight:bold;white-space:nowrap}.small{font-size:12px;color:#555}
</style></head><body>
<h1>MRC conformance report — <span class="v {{lower .R.Summary.Result}}">{{.R.Summary.Result}}</span></h1>
<table class="meta">
<tr><td>tool</td><td>{{.R.Tool.Name}} {{.R.Tool.Version}}, {{.R.Mode}} mode, report schema {{.R.SchemaVersion}}, {{.R.Tool.Requirements}} spec requirements</td></tr>
{{with .R.Capture}}<tr><td>capture</td><td><code>{{.File}}</code> ({{.Format}}, {{.Frames}} frames, {{.MRCFrames}} MRC, {{ns .DurationNs}}){{if .SHA256}}<br><span class="small">sha256 {{.SHA256}}</span>{{end}}</td></tr>
<tr><td>capture points</td><td>{{range .PointNodes}}node {{.Node}} judged at <code>{{.Point}}</code> ({{.How}})<br>{{end}}{{if not .TimestampsTrusted}}<b>timestamps not trusted: timing cases are INCONCLUSIVE</b>{{end}}</td></tr>
{{if .Notes}}<tr><td>notes</td><td>{{range .Notes}}{{.}}<br>{{end}}</td></tr>{{end}}{{end}}
<tr><td>PICS</td><td><code>{{or .R.PICS.File "(default)"}}</code> — {{.R.PICS.Implementation.Vendor}} {{.R.PICS.Implementation.Model}} {{.R.PICS.Implementation.Version}}; profile {{.R.PICS.Profile}}, EV mode {{.R.PICS.EVMode}}; features: {{or .Features "none"}}{{if .R.PICS.SHA256}}<br><span class="small">sha256 {{.R.PICS.SHA256}}</span>{{end}}</td></tr>
<tr><td>deviations</td><td>{{range .R.Deviations.List}}<b>{{.Name}}</b> on {{range .Cases}}{{.}} {{end}}(expires {{.Expires}}{{if .Expired}}, <b>EXPIRED — ignored</b>{{end}}): {{.Reason}}{{if .Used}} — covers the failure of {{range .Used}}{{.}} {{end}}{{end}}<br>{{else}}none{{end}}</td></tr>
<tr><td>summary</td><td>{{.R.Summary.Line "MUST"}}; {{.R.Summary.Line "SHOULD"}}; {{.Counts}}; exit status {{.R.Summary.ExitCode}}{{with .R.Summary.Why}}: {{.}}{{end}}</td></tr>
</table>
{{if .R.Connections}}<h2>Connections</h2>
<table><tr><th>id</th><th>requester → responder</th><th>QPNs</th><th>writes</th><th>rtx</th><th>trimmed</th><th>SACK</th><th>NACK</th><th>ACK</th><th>probes</th><th>EVs</th><th>planes</th><th>frames</th></tr>
{{range .R.Connections}}<tr><td>{{.ID}}</td><td>{{.Requester}} → {{.Responder}}</td><td>{{printf "0x%06x" .RequesterQPN}} → {{printf "0x%06x" .ResponderQPN}}</td><td>{{.Writes}}</td><td>{{.Retransmits}}</td><td>{{.Trimmed}}</td><td>{{.SACKs}}</td><td>{{.NACKs}}</td><td>{{.ACKs}}</td><td>{{.Probes}}</td><td>{{.EVs}}</td><td>{{.Planes}}</td><td>{{.FirstFrame}}–{{.LastFrame}}</td></tr>
{{end}}</table>{{end}}
<h2>Cases</h2>
<table><tr><th>case</th><th>level</th><th>verdict</th><th>checked</th><th>title</th><th>reason</th></tr>
{{range .Cases}}<tr><td><a href="#{{.Case.ID}}">{{.Case.ID}}</a></td><td>{{.Case.Level}}</td><td><span class="v {{.Class}}">{{.Verdict}}{{if .Deviated}} (deviation){{end}}</span></td><td>{{.Checked}}</td><td>{{md .Case.Title}}</td><td class="small">{{md .Reason}}</td></tr>
{{end}}</table>
<h2>Details</h2>
{{range .Cases}}<div class="case" id="{{.Case.ID}}">
<h3>{{.Case.ID}} — {{md .Case.Title}} <span class="v {{.Class}}">{{.Verdict}}</span></h3>
<div>{{md .Case.Assertion}}</div>
<div class="small">level {{.Case.Level}} · {{.Case.Mode}}{{if .Case.View}} · read at the {{.Case.View}}'s capture point{{end}} · topology: {{.Case.Topology}}{{if .Case.Features}} · PICS features: {{range .Case.Features}}{{.}} {{end}}{{end}}{{if .Case.Parameters}} · parameters: {{range .Case.Parameters}}{{.}} {{end}}{{end}}{{if .Case.Timing}} · timing{{end}}</div>
<div>{{md .Reason}}{{if .Deviations}} — deviation {{range .Deviations}}<b>{{.}}</b> {{end}}{{end}}</div>
{{if .Findings}}<details{{if eq .Class "fail" "non-strict" "deviated"}} open{{end}}><summary>requirements, steps and verdict rules</summary>
<ul>{{range .Reqs}}<li>{{md .}}</li>{{end}}</ul>
<ol>{{range .Case.Steps}}<li>{{md .}}</li>{{end}}</ol>
<div class="small">PASS: {{md .Case.Pass}} · FAIL: {{md .Case.Fail}}{{if .Case.Inconclusive}} · INCONCLUSIVE: {{md .Case.Inconclusive}}{{end}}</div></details>
<table><tr><th>#</th><th>verdict</th><th>requirement</th><th>where</th><th>expected vs observed</th></tr>
{{range $i, $f := .Findings}}<tr><td>{{$f.Frame}}</td><td><span class="v {{lower $f.Verdict.String}}">{{$f.Verdict}}</span></td><td>{{$f.Requirement}}</td><td class="small">{{$f.Where}} · t={{ns $f.TimeNs}}</td>
<td><div class="exp">expected: {{md $f.Expected}}</div>{{range $f.Related}}<pre>#{{.Number}} t={{ns .TimeNs}} {{.Point}} {{.Summary}}</pre>{{end}}<div class="obs">observed: {{md $f.Observed}}</div>{{if $f.HasFrame}}<pre>#{{$f.Frame}} t={{ns $f.TimeNs}} {{$f.Point}} {{$f.Summary}}</pre>{{end}}</td></tr>
{{end}}</table>{{if gt .More 0}}<div class="small">… {{.More}} more findings (see the JSON report)</div>{{end}}
{{if .Last}}<table><tr><th>#</th><th>verdict</th><th>requirement</th><th>where: the last findings judged</th></tr>
{{range .Last}}<tr><td>{{.Frame}}</td><td><span class="v {{lower .Verdict.String}}">{{.Verdict}}</span></td><td>{{.Requirement}}</td><td class="small">{{.Where}} · t={{ns .TimeNs}}</td></tr>
{{end}}</table>{{end}}
{{range .Timelines}}{{.}}{{end}}{{end}}
</div>{{end}}
</body></html>
`))
})

// timelineSVG draws one connection's events: one row per EV, grouped by
// plane, events left to right in capture order (the exact times are in
// each mark's tooltip); frames with a FAIL finding are ringed in red.
func timelineSVG(tl Timeline) template.HTML {
	if len(tl.Events) == 0 {
		return ""
	}
	type row struct {
		plane int
		ev    uint32
	}
	rowsM := map[row]bool{}
	t0, t1 := tl.Events[0].TimeNs, tl.Events[0].TimeNs
	for _, e := range tl.Events {
		rowsM[row{e.Plane, e.EV}] = true
		t0, t1 = min(t0, e.TimeNs), max(t1, e.TimeNs)
	}
	var rows []row
	for r := range rowsM {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.plane != b.plane {
			return a.plane - b.plane
		}
		return int(a.ev) - int(b.ev)
	})
	idx := map[row]int{}
	for i, r := range rows {
		idx[r] = i
	}
	const left, rowH, top = 150, 18, 24
	step := max(4.0, min(16.0, 820.0/float64(len(tl.Events))))
	width := max(int(step*float64(len(tl.Events)))+10, 820)
	rank := 0
	x := func(int64) float64 { rank++; return left + step*float64(rank) }
	h := top + rowH*len(rows) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<figure><figcaption>Timeline of %s (%s to %s): one row per EV, by plane; events in capture order</figcaption>`, template.HTMLEscapeString(tl.Connection), fmtNs(t0), fmtNs(t1))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" font-size="11">`, left+width+20, h)
	for i, r := range rows {
		y := top + i*rowH
		pl := "?"
		if r.plane >= 0 {
			pl = fmt.Sprint(r.plane)
		}
		fmt.Fprintf(&b, `<text x="2" y="%d">plane %s 0x%08x</text><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/>`, y+4, pl, r.ev, left, y, left+width, y)
	}
	for _, e := range tl.Events {
		y := float64(top + idx[row{e.Plane, e.EV}]*rowH)
		cx := x(e.TimeNs)
		title := fmt.Sprintf("frame %d, %s, PSN %d, t=%s", e.Frame, e.Kind, e.PSN, fmtNs(e.TimeNs))
		var shape string
		switch e.Kind {
		case "send":
			shape = fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="4" fill="#2a6fdb">`, cx, y)
		case "rtx":
			shape = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="8" height="8" fill="#e08a00" transform="rotate(45 %.1f %.1f)">`, cx-4, y-4, cx, y)
		case "trim":
			shape = fmt.Sprintf(`<path d="M%.1f %.1fl8 8m0 -8l-8 8" stroke="#a00" stroke-width="2">`, cx-4, y-4)
		case "nack":
			shape = fmt.Sprintf(`<path d="M%.1f %.1fl5 9h-10z" fill="#c00">`, cx, y-5)
		case "bad":
			shape = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="4" height="12" fill="#000">`, cx-2, y-6)
		case "skip":
			shape = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="4" height="12" fill="#a0a">`, cx-2, y-6)
		case "probe":
			shape = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="8" height="8" fill="none" stroke="#080" stroke-width="2">`, cx-4, y-4)
		default: // sack
			shape = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="2" height="10" fill="#4a4">`, cx-1, y-5)
		}
		fmt.Fprintf(&b, `%s<title>%s</title>%s`, shape, template.HTMLEscapeString(title), closing(shape))
		if e.Mark {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="8" fill="none" stroke="red" stroke-width="2"><title>%s: FAIL</title></circle>`, cx, y, template.HTMLEscapeString(title))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d">● send  ◆ retransmission  ✕ trimmed  ▲ NACK  | SACK (purple: SKIP_ONCE, black: ALWAYS_SKIP)  □ probe  ◯ failing frame</text>`, left, h-8)
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String())
}

func closing(shape string) string {
	tag := shape[1:strings.IndexAny(shape, " >")]
	return "</" + tag + ">"
}
