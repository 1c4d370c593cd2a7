package conformance

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Mode says how a case is run.
type Mode string

// Modes.
const (
	// Passive cases are judged from a capture alone (mrc-conform judge).
	Passive Mode = "passive"
	// Active cases need a tester that sends crafted packets or drives the
	// implementation through a control channel (package conformance/active).
	Active Mode = "active"
)

// View names the capture point whose packets a passive case reads.
type View string

// Views.
const (
	// ViewSender: the packet's own sender; wire-format cases.
	ViewSender View = "sender"
	// ViewRequester: the capture point nearest the requester, which sees
	// its transmissions and the feedback as it arrives there.
	ViewRequester View = "requester"
	// ViewResponder: the capture point nearest the responder, which sees
	// arrivals as the responder receives them and its feedback as sent.
	ViewResponder View = "responder"
)

// Case is one conformance test case, in the shape of an IBTA compliance
// statement test: requirement → assertion → topology → preconditions on the
// implementation (PICS) → steps → verdict rules.
type Case struct {
	ID           string          `json:"id"`           // e.g. "MRC-LR-RTX-001"
	Title        string          `json:"title"`        // one line
	Assertion    string          `json:"assertion"`    // what must hold, in one or two sentences
	Requirements []RequirementID `json:"requirements"` // spec requirement IDs the case checks
	Level        spec.Level      `json:"level"`        // the strongest level among them (MUST NOT counts as MUST)
	Mode         Mode            `json:"mode"`
	View         View            `json:"view,omitempty"` // passive cases: where the packets are read
	Topology     string          `json:"topology"`
	// Features are PICS features the implementation must declare for
	// the case to apply; "!name" means the feature must not be declared.
	// A case whose features do not hold is NOT-APPLICABLE.
	Features []string `json:"features,omitempty"`
	// Parameters are PICS parameters the case needs; when one is missing
	// the case is INCONCLUSIVE.
	Parameters []string `json:"parameters,omitempty"`
	// Timing cases depend on capture timestamps and are INCONCLUSIVE when
	// the timestamps cannot be trusted.
	Timing bool `json:"timing,omitempty"`
	// Steps are the procedure, tester actions and observations in order.
	Steps []string `json:"steps"`
	// The verdict rules.
	Pass         string `json:"pass"`
	Fail         string `json:"fail"`
	Inconclusive string `json:"inconclusive,omitempty"`
}

// Strict reports whether a violation of the case is a FAIL (MUST, MUST
// NOT) rather than NON-STRICT (SHOULD, SHOULD NOT) or informational (MAY).
func (c *Case) Strict() bool { return c.Level == spec.Must || c.Level == spec.MustNot }

// CaseIDPattern returns the shape of case IDs, MRC-AREA-TOPIC-nnn,
// compiled on first use (not at every program's start).
var CaseIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^MRC-[A-Z]+-[A-Z0-9]+-[0-9]{3}$`) })

// validCaseID reports whether id matches CaseIDPattern, without a regular
// expression: the catalog's IDs are checked at every start
// (TestValidCaseIDAsPattern).
func validCaseID(id string) bool {
	rest, ok := strings.CutPrefix(id, "MRC-")
	if !ok {
		return false
	}
	area, rest, ok := strings.Cut(rest, "-")
	if !ok || area == "" || strings.TrimFunc(area, isUpper) != "" {
		return false
	}
	topic, num, ok := strings.Cut(rest, "-")
	return ok && topic != "" && strings.TrimFunc(topic, func(r rune) bool { return isUpper(r) || isDigit(r) }) == "" &&
		len(num) == 3 && strings.TrimFunc(num, isDigit) == ""
}

func isUpper(r rune) bool { return 'A' <= r && r <= 'Z' }
func isDigit(r rune) bool { return '0' <= r && r <= '9' }

// CatalogError reports a malformed case. Err, when set, is the typed
// cause (an *UnknownRequirementError for a requirement ID the spec
// registry does not define).
type CatalogError struct {
	Case string
	Msg  string
	Err  error
}

func (e *CatalogError) Error() string { return "conformance: case " + e.Case + ": " + e.Msg }

// Unwrap returns the typed cause, if any.
func (e *CatalogError) Unwrap() error { return e.Err }

// Validate checks a case against the requirement registry: a well-formed
// ID, at least one requirement, every requirement in the registry, a level
// that is one of its requirements' levels, a known mode, feature names the
// PICS defines, parameter names the PICS defines, steps and verdict rules.
func (c *Case) Validate() error {
	bad := func(f string, a ...any) error { return &CatalogError{Case: c.ID, Msg: fmt.Sprintf(f, a...)} }
	if !validCaseID(c.ID) {
		return bad("ID does not match %s", CaseIDPattern())
	}
	if c.Title == "" || c.Assertion == "" || c.Topology == "" || len(c.Steps) == 0 || c.Pass == "" || c.Fail == "" {
		return bad("title, assertion, topology, steps, pass and fail rules are required")
	}
	if len(c.Requirements) == 0 {
		return bad("covers no requirement")
	}
	levelOK := false
	for _, id := range c.Requirements {
		level, ok := id.Level()
		if !ok {
			return &CatalogError{Case: c.ID, Msg: "requirement " + string(id) + " is not in the registry", Err: &UnknownRequirementError{ID: string(id)}}
		}
		if normLevel(level) == normLevel(c.Level) {
			levelOK = true
		}
	}
	if !levelOK {
		return bad("level %s is not the level of any of its requirements", c.Level)
	}
	switch c.Mode {
	case Passive:
		switch c.View {
		case ViewSender, ViewRequester, ViewResponder:
		default:
			return bad("passive case with view %q", c.View)
		}
	case Active:
	default:
		return bad("unknown mode %q", c.Mode)
	}
	for _, f := range c.Features {
		if _, ok := FeatureDocs[strings.TrimPrefix(f, "!")]; !ok {
			return bad("unknown PICS feature %q", f)
		}
	}
	for _, p := range c.Parameters {
		if _, ok := ParameterDocs[p]; !ok {
			return bad("unknown PICS parameter %q", p)
		}
	}
	return nil
}

func normLevel(l spec.Level) spec.Level {
	switch l {
	case spec.MustNot:
		return spec.Must
	case spec.ShouldNot:
		return spec.Should
	}
	return l
}

var (
	catMu    sync.RWMutex
	catalog  = map[string]*Case{}
	catOrder []string // sorted IDs
	catInit  sync.Once
	// later are the registrations deferred with RegisterLater, not run
	// yet; laterMu is held while they run.
	laterMu sync.Mutex
	later   []func()
	// catErr is checkCatalog's verdict on the built-in passive cases.
	catErr = sync.OnceValue(func() error { return checkCatalog(passiveCases) })
)

// initCatalog adds the passive cases to the catalog. It does not check
// them: ChecksErr does when the judge starts, and CatalogErr, which the
// package's tests and mrc-conform's cases and requirements commands call.
func initCatalog() {
	catInit.Do(func() {
		for i := range passiveCases {
			addCase(&passiveCases[i]) // a second case with one ID: checkCatalog reports it
		}
	})
}

// loadCatalog adds the passive cases, then runs the registrations other
// packages deferred with RegisterLater.
func loadCatalog() {
	initCatalog()
	laterMu.Lock()
	defer laterMu.Unlock()
	for len(later) > 0 {
		f := later[0]
		later = later[1:]
		f()
	}
}

// passiveSorted returns the passive cases sorted by ID, as a judge report
// lists them, without loading the catalog.
var passiveSorted = sync.OnceValue(func() []Case {
	out := slices.Clone(passiveCases)
	slices.SortFunc(out, func(a, b Case) int { return strings.Compare(a.ID, b.ID) })
	return out
})

// checkCatalog checks the passive cases against the spec registry and the
// judge: each case valid (Validate: a requirement ID the registry lacks is
// an *UnknownRequirementError), the judge's caseIDs and checks naming
// exactly these cases, and the requirement IDs the judge maps in the
// registry. It returns the first error.
func checkCatalog(cases []Case) error {
	for i := range cases {
		if err := cases[i].Validate(); err != nil {
			return err
		}
	}
	if err := checkCaseNames(cases); err != nil {
		return err
	}
	if err := checkChecks(cases); err != nil {
		return err
	}
	return checkJudgeRequirements(codecNames(), hooks.codecJudged)
}

// codecNames returns the text of every wire.ReqID, by ReqID.
func codecNames() (names [wire.NumReqs]string) {
	for r := range wire.NumReqs {
		names[r] = r.String()
	}
	return names
}

// checkJudgeRequirements checks the requirements the codec reports
// (wire.ReqID; names, their text by ReqID): each in the spec registry and
// judged by a check (judged, by ReqID: check.codec), so that a codec
// finding is cited as its own requirement under its own case
// (codecReq). The requirements that make a responder discard a packet
// (discardReqs) are ReqIDs too.
func checkJudgeRequirements(names [wire.NumReqs]string, judged [wire.NumReqs]bool) error {
	for r := wire.NoReq + 1; r < wire.NumReqs; r++ {
		id := names[r]
		if _, ok := spec.LevelOf(id); !ok {
			return &CatalogError{Case: "(codec requirements)", Msg: "the codec reports requirement " + id + ", which is not in the registry", Err: &UnknownRequirementError{ID: id}}
		}
		if !judged[r] {
			return &CatalogError{Case: "(codec requirements)", Msg: "the codec reports requirement " + id + ", which no check judges (check.codec)"}
		}
	}
	return nil
}

// checkCaseNames checks that the judge's caseIDs name exactly the passive
// cases of the catalog, each once.
func checkCaseNames(cases []Case) error {
	want := map[string]bool{}
	for _, c := range cases {
		if want[c.ID] {
			return &CatalogError{Case: c.ID, Msg: "registered twice"}
		}
		if c.Mode == Passive {
			want[c.ID] = true
		}
	}
	seen := map[string]bool{}
	for i, n := range caseNames[:numCases] {
		if !want[n] || seen[n] {
			return &CatalogError{Case: n, Msg: fmt.Sprintf("caseID %d names no passive case, or one named twice", i)}
		}
		seen[n] = true
	}
	if len(seen) != len(want) {
		for id := range want {
			if !seen[id] {
				return &CatalogError{Case: id, Msg: "a passive case no caseID names: the judge records nothing for it"}
			}
		}
	}
	return nil
}

func register(c *Case) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return addCase(c)
}

// addCase adds a copy of a validated case to the catalog.
func addCase(c *Case) error {
	catMu.Lock()
	defer catMu.Unlock()
	if _, dup := catalog[c.ID]; dup {
		return &CatalogError{Case: c.ID, Msg: "registered twice"}
	}
	cc := *c
	cc.Requirements = slices.Clone(c.Requirements)
	cc.Features = slices.Clone(c.Features)
	cc.Parameters = slices.Clone(c.Parameters)
	cc.Steps = slices.Clone(c.Steps)
	catalog[c.ID] = &cc
	i, _ := slices.BinarySearch(catOrder, c.ID)
	catOrder = slices.Insert(catOrder, i, c.ID)
	return nil
}

// Register adds a case to the catalog, after Validate. Packages that
// implement other modes (conformance/active) call it from the function
// they give RegisterLater, so that mrc-conform requirements counts their
// coverage.
func Register(c Case) error {
	initCatalog()
	return register(&c)
}

// RegisterLater adds a function that registers a package's cases with
// Register. It runs once, when the whole catalog is first used (Catalog,
// LookupCase, CasesCovering, CatalogErr, Coverage, ParseDeviations): a
// program that only judges captures builds, checks and stores none of
// those cases. Packages call it from init; register must not call it.
func RegisterLater(register func()) {
	laterMu.Lock()
	defer laterMu.Unlock()
	later = append(later, register)
}

// ChecksErr returns the first error of the built-in passive cases and the
// judge's checks (checkCatalog): a case with no check, a check with no
// catalog entry, a requirement a check cites that the registry lacks, its
// check does not declare or its case does not list. It is computed once,
// from the registry's level table (spec.LevelOf), not its text. Judge and
// JudgeFile return it before reading a frame, and mrc-conform judge exits
// with status 2 on it at start: no verdict of a broken check table is
// reported.
func ChecksErr() error { return catErr() }

// CatalogErr returns the first error of the built-in passive cases
// against the spec registry and the judge (checkCatalog), after loading
// the whole catalog; the package tests fail on it, and mrc-conform's
// cases and requirements commands report it.
func CatalogErr() error {
	loadCatalog()
	return catErr()
}

// Catalog returns every case, passive and registered, sorted by ID.
func Catalog() []Case {
	loadCatalog()
	catMu.RLock()
	defer catMu.RUnlock()
	out := make([]Case, 0, len(catOrder))
	for _, id := range catOrder {
		out = append(out, *catalog[id])
	}
	return out
}

// LookupCase returns the case with the given ID.
func LookupCase(id string) (Case, bool) {
	loadCatalog()
	catMu.RLock()
	defer catMu.RUnlock()
	c, ok := catalog[id]
	if !ok {
		return Case{}, false
	}
	return *c, true
}

// CasesCovering returns the IDs of the cases that list requirement id,
// sorted.
func CasesCovering(id string) []string {
	var out []string
	for _, c := range Catalog() {
		if slices.Contains(c.Requirements, RequirementID(id)) {
			out = append(out, c.ID)
		}
	}
	return out
}
