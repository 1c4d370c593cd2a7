package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SchemaVersion is the version of the JSON report (report-schema.md). It
// changes in its major part when a field is removed or changes meaning,
// and in its minor part when fields are added.
const SchemaVersion = "1.5"

// Version is the conformance toolkit's version, printed in reports.
const Version = "0.1.0"

// MaxFindings bounds the findings a Result keeps; FindingCount counts all.
const MaxFindings = 50

// LastFindings bounds the latest findings a Result keeps beyond its first
// MaxFindings (Result.LastFindings): a capture that starts to fail late,
// or stops failing, shows where its failures end as well as where they
// begin.
const LastFindings = 10

// Finding is one observation that did not pass: the evidence behind a
// verdict, tied to a frame of the capture.
type Finding struct {
	Verdict     Verdict       `json:"verdict"`
	Requirement RequirementID `json:"requirement"`          // the requirement broken (or not decidable)
	Connection  string        `json:"connection,omitempty"` // connection ID (Report.Connections)
	Node        string        `json:"node,omitempty"`       // the node whose behaviour is judged
	Frame       int           `json:"frame,omitempty"`      // offending frame, 1-based; 0 if none
	Related     []int         `json:"related,omitempty"`    // frames that set the expectation
	TimeNs      int64         `json:"time_ns"`              // since the first frame
	Point       string        `json:"point,omitempty"`      // capture point
	Plane       int           `json:"plane"`                // -1 when unknown
	EV          *uint32       `json:"ev,omitempty"`
	PSN         *uint32       `json:"psn,omitempty"`
	Expected    string        `json:"expected"`
	Observed    string        `json:"observed"`

	timing bool   // decided from timestamps
	absent bool   // rests on a packet not seen (onAbsence)
	frame  bool   // decided from the frame alone (onFrame)
	ord    uint64 // when it was judged (engine.ord)
	// at is where and when it was judged, before its evidence (failWhy's
	// why) named other frames: all that a finding in LastFindings keeps.
	at findingPlace
}

// findingPlace is the frame being judged when a finding was made: its
// number and time, and the plane and connection it was judged on.
type findingPlace struct {
	frame int
	ns    int64
	plane int
	conn  string
}

// placeOnly returns f reduced to where and when it was judged, as
// LastFindings keeps it (lastPlace): a finding kept in full and one kept
// last alone then read alike, whichever engine (parallel.go) kept them.
func (f *Finding) placeOnly() Finding {
	l := placeOf(f)
	return l.finding()
}

// Result is the outcome of one case.
type Result struct {
	Case    Case    `json:"-"`
	Verdict Verdict `json:"verdict"`
	// Reason explains the verdict in one line.
	Reason string `json:"reason"`
	// Checked is the number of observations the case evaluated.
	Checked int `json:"checked"`
	// Findings are the first MaxFindings observations that did not pass,
	// in frame order; FindingCount counts them all. When Verdict is FAIL
	// or NON-STRICT, Findings or LastFindings hold one finding of that
	// verdict: if neither would (the first and the latest were all made
	// INCONCLUSIVE), the first judged of those that decided the verdict
	// takes the last place (showEvidence).
	Findings     []Finding `json:"findings"`
	FindingCount int       `json:"finding_count"`
	// LastFindings are, of the observations that did not pass and are
	// not in Findings, the last LastFindings judged, in frame order: the
	// frame, its time, point, plane, connection, node and requirement,
	// without the evidence text, which is built for Findings alone.
	LastFindings []Finding `json:"last_findings,omitempty"`
	// Deviations names the unexpired deviations covering the case.
	Deviations []string `json:"deviations,omitempty"`
	// DurationNs is the case's run time (active mode; 0 in passive mode).
	DurationNs int64 `json:"duration_ns,omitempty"`
	// Seed is the seed of a randomized active case.
	Seed *int64 `json:"seed,omitempty"`
}

// Deviated reports whether a FAIL or NON-STRICT is covered by a deviation.
func (r *Result) Deviated() bool {
	return len(r.Deviations) > 0 && (r.Verdict == Fail || r.Verdict == NonStrict)
}

// Interface describes one capture interface.
type Interface struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Point string `json:"point"`
	Plane int    `json:"plane"`
	// Dropped is how many frames the capture lost on the interface, from
	// its pcapng interface statistics (pcap.Interface.Dropped).
	Dropped uint64 `json:"dropped,omitempty"`
}

// CaptureInfo describes the judged capture.
type CaptureInfo struct {
	File              string      `json:"file"`
	SHA256            string      `json:"sha256,omitempty"`
	Format            string      `json:"format"`
	Frames            int         `json:"frames"`
	MRCFrames         int         `json:"mrc_frames"`
	DurationNs        int64       `json:"duration_ns"`
	Interfaces        []Interface `json:"interfaces"`
	TimestampsTrusted bool        `json:"timestamps_trusted"`
	// PointNodes says which node each capture point was taken to be
	// nearest, and how that was decided.
	PointNodes []PointNode `json:"point_nodes"`
	Notes      []string    `json:"notes"`
	// bases is the capture-wide number of each pcapng section's first
	// interface (ifaceTable.bases), by section number, for the evidence's
	// frames (enrich).
	bases []int
}

// PointNode records where a node's packets are judged.
type PointNode struct {
	Node  string `json:"node"`
	Point string `json:"point"`
	How   string `json:"how"` // "declared", "declared, no frame of the capture at it", "only point", "ttl", "first seen"
	// AtNode says whether the point is at the node's own interface
	// (PICS capture.location, capture.points): only there does a packet
	// not seen prove that it was not sent or not received.
	AtNode bool `json:"at_node"`
}

// Connection summarises one reconstructed connection (one direction of
// data on a QP pair).
type Connection struct {
	ID           string `json:"id"`
	Requester    string `json:"requester"`
	Responder    string `json:"responder"`
	ResponderQPN uint32 `json:"responder_qpn"`
	RequesterQPN uint32 `json:"requester_qpn"` // as the PICS's qp_pairs or the traffic establishes it (requesterQP); 0 when nothing names it
	Planes       []int  `json:"planes"`
	EVs          int    `json:"evs"`
	Writes       int    `json:"writes"`
	Retransmits  int    `json:"retransmits"`
	Trimmed      int    `json:"trimmed"`
	SACKs        int    `json:"sacks"`
	NACKs        int    `json:"nacks"`
	ACKs         int    `json:"acks"`
	Probes       int    `json:"probes"`
	FirstFrame   int    `json:"first_frame"`
	LastFrame    int    `json:"last_frame"`
}

// PICSInfo describes the PICS used.
type PICSInfo struct {
	File           string         `json:"file,omitempty"`
	SHA256         string         `json:"sha256,omitempty"`
	Implementation Implementation `json:"implementation"`
	Profile        string         `json:"profile"`
	EVMode         string         `json:"ev_mode"`
	Features       []string       `json:"features"`
	DUT            []string       `json:"dut,omitempty"`
}

// DeviationInfo is a deviation as reported.
type DeviationInfo struct {
	Name    string   `json:"name"`
	Cases   []string `json:"cases"`
	Expires string   `json:"expires"`
	Reason  string   `json:"reason"`
	Expired bool     `json:"expired"`
	Used    []string `json:"used_by,omitempty"` // cases whose FAIL/NON-STRICT it covers
}

// DeviationsInfo describes the deviations file.
type DeviationsInfo struct {
	File   string          `json:"file,omitempty"`
	SHA256 string          `json:"sha256,omitempty"`
	Date   string          `json:"date"` // the date expiry was judged against
	List   []DeviationInfo `json:"list"`
}

// Summary counts the verdicts and gives the run's result and exit status
// (the table "Results and exit status" in the README).
type Summary struct {
	Verdicts     map[string]int `json:"verdicts"`
	MustTotal    int            `json:"must_total"`
	MustPassed   int            `json:"must_passed"`
	MustFailed   int            `json:"must_failed"`   // FAIL not covered by a deviation
	MustDeviated int            `json:"must_deviated"` // FAIL covered by a deviation
	ShouldTotal  int            `json:"should_total"`
	ShouldPassed int            `json:"should_passed"`
	ShouldFailed int            `json:"should_non_strict"`
	Inconclusive int            `json:"inconclusive"`
	Errors       int            `json:"errors"`
	// MustVerdicts and ShouldVerdicts count the verdicts of the MUST and
	// SHOULD cases alone.
	MustVerdicts   map[string]int `json:"must_verdicts"`
	ShouldVerdicts map[string]int `json:"should_verdicts"`
	Result         string         `json:"result"` // a Result* constant
	// Why explains a result other than PASS in one line.
	Why           string   `json:"result_reason,omitempty"`
	ExitCode      int      `json:"exit_code"`
	FailedCases   []string `json:"failed_cases"`
	ExpiredIgnore []string `json:"expired_deviations"`
}

// Results of a run (Summary.Result), with their exit status. Only PASS
// says the implementation was checked and met every MUST that was checked.
const (
	// ResultPass: at least one MUST case PASSed (or FAILed under an
	// unexpired deviation), no other MUST case FAILed, no case ERRORed.
	ResultPass = "PASS" // exit status 0
	// ResultFail: a MUST case FAILed outside an unexpired deviation.
	ResultFail = "FAIL" // exit status 1
	// ResultError: a case ended in ERROR, a fault of the tester or the
	// setup (a dead data path, a broken control channel).
	ResultError = "ERROR" // exit status 2
	// ResultInconclusive: no MUST case could be checked, and not because
	// the implementation lacks what was asked (INCONCLUSIVE cases, or no
	// MUST case selected): the setup gave the tester nothing to judge.
	ResultInconclusive = "INCONCLUSIVE" // exit status 2
	// ResultUnsupported: no MUST case was checked because the
	// implementation supports none that was asked: every MUST case is
	// NOT-SUPPORTED or NOT-APPLICABLE.
	ResultUnsupported = "UNSUPPORTED" // exit status 127
)

// Exit statuses of mrc-conform (the README's table).
const (
	ExitPass        = 0
	ExitFail        = 1
	ExitError       = 2 // also usage errors and unreadable input
	ExitUnsupported = 127
)

// summarize counts the results and decides the result and exit status.
func summarize(results []Result, expired []Deviation) Summary {
	s := Summary{Verdicts: map[string]int{}, MustVerdicts: map[string]int{}, ShouldVerdicts: map[string]int{},
		FailedCases: []string{}, ExpiredIgnore: []string{}}
	for _, v := range Verdicts {
		s.Verdicts[v.String()], s.MustVerdicts[v.String()], s.ShouldVerdicts[v.String()] = 0, 0, 0
	}
	for i := range results {
		res := &results[i]
		s.Verdicts[res.Verdict.String()]++
		strict := res.Case.Strict()
		if strict {
			s.MustTotal++
			s.MustVerdicts[res.Verdict.String()]++
		} else if normLevel(res.Case.Level) == "SHOULD" {
			s.ShouldTotal++
			s.ShouldVerdicts[res.Verdict.String()]++
		}
		switch res.Verdict {
		case Pass:
			if strict {
				s.MustPassed++
			} else {
				s.ShouldPassed++
			}
		case Fail:
			if res.Deviated() {
				s.MustDeviated++
			} else {
				s.MustFailed++
				s.FailedCases = append(s.FailedCases, res.Case.ID)
			}
		case NonStrict:
			s.ShouldFailed++
		case Inconclusive:
			s.Inconclusive++
		case Error:
			s.Errors++
		}
	}
	for _, d := range expired {
		s.ExpiredIgnore = append(s.ExpiredIgnore, d.Name)
	}
	slices.Sort(s.ExpiredIgnore)
	s.Result, s.Why = decide(&s)
	s.ExitCode = map[string]int{ResultPass: ExitPass, ResultFail: ExitFail, ResultError: ExitError,
		ResultInconclusive: ExitError, ResultUnsupported: ExitUnsupported}[s.Result]
	return s
}

// decide applies the table of results, first row first.
func decide(s *Summary) (result, why string) {
	mv := s.MustVerdicts
	unsupported := mv[NotSupported.String()] + mv[NotApplicable.String()]
	switch {
	case s.Errors > 0:
		return ResultError, plural(s.Errors, "case") + " ended in ERROR (a tester or setup fault: see the reasons)"
	case s.MustFailed > 0:
		return ResultFail, plural(s.MustFailed, "MUST case") + " FAILed"
	case s.MustPassed+s.MustDeviated > 0:
		return ResultPass, ""
	case s.MustTotal > 0 && unsupported == s.MustTotal:
		return ResultUnsupported, fmt.Sprintf("nothing was checked: the implementation supports no MUST case that was asked (of %d: %d NOT-SUPPORTED, %d NOT-APPLICABLE)",
			s.MustTotal, mv[NotSupported.String()], mv[NotApplicable.String()])
	case s.MustTotal == 0:
		return ResultInconclusive, "nothing was checked: no MUST case was selected"
	}
	return ResultInconclusive, fmt.Sprintf("nothing was checked: no MUST case could be judged (%d INCONCLUSIVE, %d NOT-SUPPORTED, %d NOT-APPLICABLE)",
		mv[Inconclusive.String()], mv[NotSupported.String()], mv[NotApplicable.String()])
}

// Line is the one-line count of a level's verdicts, each result named:
// "MUST 41 passed, 0 failed, 1 not applicable (42 cases)".
func (s Summary) Line(level string) string {
	vs, total := s.MustVerdicts, s.MustTotal
	failed, failWord := s.MustFailed, "failed"
	if level == "SHOULD" {
		vs, total = s.ShouldVerdicts, s.ShouldTotal
		failed, failWord = vs[NonStrict.String()], "non-strict"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d passed, %d %s", level, vs[Pass.String()], failed, failWord)
	if level == "MUST" && s.MustDeviated > 0 {
		fmt.Fprintf(&b, ", %d failed under a deviation", s.MustDeviated)
	}
	for _, v := range []struct {
		v    Verdict
		word string
	}{{Inconclusive, "inconclusive"}, {NotApplicable, "not applicable"}, {NotSupported, "not supported"}, {Error, "in error"}} {
		if n := vs[v.v.String()]; n > 0 {
			fmt.Fprintf(&b, ", %d %s", n, v.word)
		}
	}
	fmt.Fprintf(&b, " (%s)", plural(total, "case"))
	return b.String()
}

// Frame is a capture frame referenced by evidence, with its one-line
// decode.
type Frame struct {
	Number  int    `json:"number"`
	TimeNs  int64  `json:"time_ns"`
	Point   string `json:"point"`
	Plane   int    `json:"plane"`
	Summary string `json:"summary"`
}

// TimelineEvent is one point of a per-EV timeline.
type TimelineEvent struct {
	Frame  int    `json:"frame"`
	TimeNs int64  `json:"time_ns"`
	Plane  int    `json:"plane"`
	EV     uint32 `json:"ev"`
	PSN    uint32 `json:"psn"`
	Kind   string `json:"kind"` // send, rtx, trim, sack, nack, probe, skip, bad
	Mark   bool   `json:"mark"` // the frame carries a FAIL or NON-STRICT finding
}

// Timeline is the per-EV, per-plane history of one connection around its
// failures.
type Timeline struct {
	Connection string `json:"connection"`
	// Case is set on an active run's timelines: the case whose frames
	// they show.
	Case   string          `json:"case,omitempty"`
	Events []TimelineEvent `json:"events"`
}

// Report is the outcome of a conformance run: what was judged, under which
// PICS and deviations, and one Result per case of the catalog that the
// mode runs. Its JSON form is documented in report-schema.md.
type Report struct {
	SchemaVersion string         `json:"schema_version"`
	Tool          ToolInfo       `json:"tool"`
	Mode          Mode           `json:"mode"`
	Capture       *CaptureInfo   `json:"capture,omitempty"`
	PICS          PICSInfo       `json:"pics"`
	Deviations    DeviationsInfo `json:"deviations"`
	Connections   []Connection   `json:"connections"`
	Results       []Result       `json:"-"`
	Frames        []Frame        `json:"frames"`
	Timelines     []Timeline     `json:"timelines"`
	Summary       Summary        `json:"summary"`
	// Timestamp is when the run started, or when the judge made the
	// report (the JUnit suite's timestamp). It is not in the JSON, which
	// stays a function of the inputs.
	Timestamp time.Time `json:"-"`
}

// ToolInfo names the tool and the specification it judges against.
type ToolInfo struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Requirements int    `json:"spec_requirements"`
}

// Result returns the result of case id.
func (r *Report) Result(id string) (*Result, bool) {
	for i := range r.Results {
		if r.Results[i].Case.ID == id {
			return &r.Results[i], true
		}
	}
	return nil, false
}

// Verdict returns the verdict of case id (ERROR when absent).
func (r *Report) Verdict(id string) Verdict {
	if res, ok := r.Result(id); ok {
		return res.Verdict
	}
	return Error
}

// Finalize applies the deviations to the results, sorts everything and
// computes the summary, the result and the exit status (see the Result*
// constants). Usage errors (2) are the command's.
func (r *Report) Finalize(active, expired []Deviation) {
	slices.SortFunc(r.Results, func(a, b Result) int { return strings.Compare(a.Case.ID, b.Case.ID) })
	used := map[string][]string{}
	for i := range r.Results {
		res := &r.Results[i]
		res.Deviations = nil
		for _, d := range active {
			if d.Matches(res.Case.ID) {
				res.Deviations = append(res.Deviations, d.Name)
				if res.Verdict == Fail || res.Verdict == NonStrict {
					used[d.Name] = append(used[d.Name], res.Case.ID)
				}
			}
		}
		slices.SortStableFunc(res.Findings, func(a, b Finding) int { return a.Frame - b.Frame })
		slices.SortStableFunc(res.LastFindings, func(a, b Finding) int { return a.Frame - b.Frame })
	}
	r.Deviations.List = r.Deviations.List[:0]
	for _, set := range [][]Deviation{active, expired} {
		for _, d := range set {
			r.Deviations.List = append(r.Deviations.List, DeviationInfo{Name: d.Name, Cases: slices.Clone(d.Cases),
				Expires: d.ExpiresString(), Reason: d.Reason, Expired: d.Expired, Used: used[d.Name]})
		}
	}
	slices.SortFunc(r.Deviations.List, func(a, b DeviationInfo) int { return strings.Compare(a.Name, b.Name) })
	s := summarize(r.Results, expired)
	r.Summary = s
	slices.SortFunc(r.Frames, func(a, b Frame) int { return a.Number - b.Number })
}

// ExitCode is the process exit status the report calls for.
func (r *Report) ExitCode() int { return r.Summary.ExitCode }
