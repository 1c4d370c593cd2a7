package spec

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Level is a requirement keyword of RFC 2119.
type Level string

// The requirement levels this specification uses.
const (
	Must      Level = "MUST"
	MustNot   Level = "MUST NOT"
	Should    Level = "SHOULD"
	ShouldNot Level = "SHOULD NOT"
	May       Level = "MAY"
)

// Confidence says how strongly the public sources support a requirement.
type Confidence string

// The confidence values.
const (
	// Primary: stated by the white paper, the MRC paper, the OCP API or the
	// OpenAI blog.
	Primary Confidence = "primary"
	// Secondary: stated only by secondary sources that read the spec.
	Secondary Confidence = "secondary"
	// Decision: a project decision recorded in the ambiguity register.
	Decision Confidence = "decision"
)

// Prefixes are the requirement ID prefixes of the embedded specification.
var Prefixes = []string{"WIRE", "REQ", "EV", "LR", "MPR", "WIMM", "RSP", "CC", "QP", "EP", "CMP", "CTL"}

// Requirement is one normative statement of the specification.
type Requirement struct {
	ID         string     // e.g. "WIRE-BTH-1"
	Level      Level      // MUST, MUST NOT, SHOULD, SHOULD NOT or MAY
	Section    string     // text of the nearest preceding Markdown heading
	Text       string     // the requirement text, continuation lines joined
	Provenance string     // the sources that support it
	Confidence Confidence // primary, secondary or decision
	File       string     // Markdown file name, e.g. "11-wire-headers.md"
	Line       int        // 1-based line of the requirement's first line
}

// Ambiguity is one entry of the ambiguity register.
type Ambiguity struct {
	ID            string   // e.g. "AMB-1"
	Title         string   // heading text after "AMB-n: "
	Options       []string // the alternatives, as listed
	Default       string   // the project's choice
	Reason        string   // why
	ProfileFields []string // json names of Profile fields; empty for "none"
}

// Registry is a parsed specification: its requirements in document order
// and its ambiguity register.
type Registry struct {
	reqs  []Requirement
	byID  map[string]int
	ambs  []Ambiguity
	ambID map[string]int
}

// Requirements returns the requirements in document order (files sorted by
// name, then by line).
func (r *Registry) Requirements() []Requirement { return slices.Clone(r.reqs) }

// Lookup returns the requirement with the given ID.
func (r *Registry) Lookup(id string) (Requirement, bool) {
	i, ok := r.byID[id]
	if !ok {
		return Requirement{}, false
	}
	return r.reqs[i], true
}

// Ambiguities returns the ambiguity entries in document order.
func (r *Registry) Ambiguities() []Ambiguity {
	out := make([]Ambiguity, len(r.ambs))
	for i, a := range r.ambs {
		a.Options = slices.Clone(a.Options)
		a.ProfileFields = slices.Clone(a.ProfileFields)
		out[i] = a
	}
	return out
}

// LookupAmbiguity returns the ambiguity entry with the given ID ("AMB-n").
func (r *Registry) LookupAmbiguity(id string) (Ambiguity, bool) {
	i, ok := r.ambID[id]
	if !ok {
		return Ambiguity{}, false
	}
	a := r.ambs[i]
	a.Options = slices.Clone(a.Options)
	a.ProfileFields = slices.Clone(a.ProfileFields)
	return a, true
}

var (
	// A line that is meant to be a requirement: a list item opening with a
	// bold upper-case word followed by a hyphen.
	reqCandidateRE = regexp.MustCompile(`^\s*[-*+]\s+\*\*[A-Z][A-Z0-9]*-`)
	reqLineRE      = regexp.MustCompile(`^- \*\*([^*]+)\*\* \(([^;()]+); provenance: ([^;]+); confidence: ([^)]+)\) (\S.*)$`)
	reqIDRE        = regexp.MustCompile(`^[A-Z][A-Z0-9]*-[A-Z][A-Z0-9]*-[0-9]+$`)
	headingRE      = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)
	ambHeadingRE   = regexp.MustCompile(`^### (AMB-[1-9][0-9]*): (\S.*)$`)
	ambFieldRE     = regexp.MustCompile(`^- (Options|Default|Reason|Profile): (\S.*)$`)
	ambRefRE       = regexp.MustCompile(`\bAMB-[0-9]+\b`)
	profileNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
)

var ambFieldOrder = []string{"Options", "Default", "Reason", "Profile"}

type parseError struct {
	file string
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("spec: %s:%d: %s", e.file, e.line, e.msg) }

// Parse parses specification Markdown. files maps a file name to its
// content; files are read in name order. Parse is strict: a line that looks
// like a requirement but does not match the requirement format, an unknown
// level or confidence, a malformed or duplicate ID, a decision requirement
// whose text names no AMB-n, a reference to an AMB-n that is not in the
// register, and an ambiguity entry that lacks a field or has an extra one
// are all errors.
func Parse(files map[string]string) (*Registry, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)

	r := &Registry{byID: map[string]int{}, ambID: map[string]int{}}
	type ref struct {
		id, amb, file string
		line          int
	}
	var refs []ref
	reqLine := map[string]string{} // ID -> "file:line" of first definition

	for _, name := range names {
		lines := strings.Split(strings.ReplaceAll(files[name], "\r\n", "\n"), "\n")
		section := ""
		inFence := false
		var item []string // lines of the requirement item being read
		var itemLine int
		var itemSection string
		var amb *Ambiguity // ambiguity entry being read
		var ambLine int
		var ambField string // last field read, for continuation lines
		ambSeen := map[string]bool{}

		finishAmb := func() error {
			if amb == nil {
				return nil
			}
			for _, f := range ambFieldOrder {
				if !ambSeen[f] {
					return &parseError{name, ambLine, fmt.Sprintf("%s: missing %q field", amb.ID, f)}
				}
			}
			if len(amb.Options) < 2 {
				return &parseError{name, ambLine, fmt.Sprintf("%s: needs at least two options separated by \" | \"", amb.ID)}
			}
			r.ambID[amb.ID] = len(r.ambs)
			r.ambs = append(r.ambs, *amb)
			amb = nil
			return nil
		}
		// finishReq parses the requirement item read so far, if any.
		finishReq := func() error {
			if item == nil {
				return nil
			}
			joined := strings.Join(item, " ")
			item = nil
			req, err := parseRequirement(joined)
			if err != nil {
				return &parseError{name, itemLine, err.Error()}
			}
			if prev, dup := reqLine[req.ID]; dup {
				return &parseError{name, itemLine, fmt.Sprintf("duplicate requirement %s (first at %s)", req.ID, prev)}
			}
			if itemSection == "" {
				return &parseError{name, itemLine, req.ID + ": requirement before any heading"}
			}
			reqLine[req.ID] = fmt.Sprintf("%s:%d", name, itemLine)
			req.Section, req.File, req.Line = itemSection, name, itemLine
			for _, m := range ambRefRE.FindAllString(req.Text, -1) {
				refs = append(refs, ref{req.ID, m, name, itemLine})
			}
			r.byID[req.ID] = len(r.reqs)
			r.reqs = append(r.reqs, req)
			return nil
		}

		for i, line := range lines {
			ln := i + 1
			isCont := strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "" && !reqCandidateRE.MatchString(line)
			if isCont && item != nil {
				item = append(item, strings.TrimSpace(line))
				continue
			}
			if err := finishReq(); err != nil {
				return nil, err
			}
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			if isCont && amb != nil && ambField != "" {
				if err := ambAppend(amb, ambField, strings.TrimSpace(line)); err != nil {
					return nil, &parseError{name, ln, err.Error()}
				}
				continue
			}
			if strings.TrimSpace(line) == "" {
				ambField = ""
				continue
			}

			if m := headingRE.FindStringSubmatch(line); m != nil {
				if err := finishAmb(); err != nil {
					return nil, err
				}
				section = m[2]
				if strings.HasPrefix(m[2], "AMB-") || strings.HasPrefix(m[2], "AMB ") {
					am := ambHeadingRE.FindStringSubmatch(line)
					if am == nil {
						return nil, &parseError{name, ln, fmt.Sprintf("malformed ambiguity heading %q (want \"### AMB-n: Title\")", line)}
					}
					if _, dup := r.ambID[am[1]]; dup {
						return nil, &parseError{name, ln, "duplicate ambiguity " + am[1]}
					}
					amb = &Ambiguity{ID: am[1], Title: am[2]}
					ambLine = ln
					ambField = ""
					ambSeen = map[string]bool{}
				}
				continue
			}

			if amb != nil {
				m := ambFieldRE.FindStringSubmatch(line)
				if m == nil {
					return nil, &parseError{name, ln, fmt.Sprintf("%s: unexpected line %q (want \"- Options|Default|Reason|Profile: ...\")", amb.ID, line)}
				}
				f := m[1]
				if ambSeen[f] {
					return nil, &parseError{name, ln, fmt.Sprintf("%s: duplicate %q field", amb.ID, f)}
				}
				if want := ambFieldOrder[len(ambSeen)]; f != want {
					return nil, &parseError{name, ln, fmt.Sprintf("%s: field %q out of order (want %q)", amb.ID, f, want)}
				}
				ambSeen[f] = true
				ambField = f
				if err := ambAppend(amb, f, m[2]); err != nil {
					return nil, &parseError{name, ln, err.Error()}
				}
				continue
			}

			if reqCandidateRE.MatchString(line) {
				item = []string{line}
				itemLine = ln
				itemSection = section
			}
		}
		if err := finishReq(); err != nil {
			return nil, err
		}
		if inFence {
			return nil, &parseError{name, len(lines), "unterminated code fence"}
		}
		if err := finishAmb(); err != nil {
			return nil, err
		}
	}

	// Cross-checks that need the whole document.
	for _, q := range r.reqs {
		if q.Confidence == Decision && !ambRefRE.MatchString(q.Text) {
			return nil, &parseError{q.File, q.Line, q.ID + ": decision requirement names no AMB-n entry in its text"}
		}
	}
	for _, f := range refs {
		if _, ok := r.ambID[f.amb]; !ok {
			return nil, &parseError{f.file, f.line, fmt.Sprintf("%s refers to %s, which is not in the ambiguity register", f.id, f.amb)}
		}
	}
	return r, nil
}

func parseRequirement(line string) (Requirement, error) {
	m := reqLineRE.FindStringSubmatch(line)
	if m == nil {
		return Requirement{}, fmt.Errorf("malformed requirement line %q (want \"- **ID** (LEVEL; provenance: ...; confidence: ...) text\")", line)
	}
	id, level, prov, conf, text := m[1], Level(m[2]), strings.TrimSpace(m[3]), Confidence(m[4]), m[5]
	if !reqIDRE.MatchString(id) {
		return Requirement{}, fmt.Errorf("malformed requirement ID %q (want PREFIX-TOPIC-n)", id)
	}
	switch level {
	case Must, MustNot, Should, ShouldNot, May:
	default:
		return Requirement{}, fmt.Errorf("%s: unknown level %q", id, level)
	}
	switch conf {
	case Primary, Secondary, Decision:
	default:
		return Requirement{}, fmt.Errorf("%s: unknown confidence %q", id, conf)
	}
	if prov == "" {
		return Requirement{}, fmt.Errorf("%s: empty provenance", id)
	}
	return Requirement{ID: id, Level: level, Text: strings.TrimSpace(text), Provenance: prov, Confidence: conf}, nil
}

// ambAppend adds a field's first line or a continuation line to a.
func ambAppend(a *Ambiguity, field, text string) error {
	switch field {
	case "Options":
		// Options may continue on the next line; re-split the whole list.
		all := strings.Join(a.Options, " | ")
		if all != "" {
			all += " "
		}
		all += text
		var opts []string
		for _, o := range strings.Split(all, " | ") {
			o = strings.TrimSpace(o)
			if o == "" {
				return fmt.Errorf("%s: empty option", a.ID)
			}
			opts = append(opts, o)
		}
		a.Options = opts
	case "Default":
		a.Default = joinText(a.Default, text)
	case "Reason":
		a.Reason = joinText(a.Reason, text)
	case "Profile":
		if len(a.ProfileFields) == 0 && text == "none" {
			return nil
		}
		for _, f := range strings.Split(text, ",") {
			f = strings.TrimSpace(f)
			if f == "none" || !profileNameRE.MatchString(f) {
				return fmt.Errorf("%s: bad profile field %q (want json names separated by commas, or none)", a.ID, f)
			}
			a.ProfileFields = append(a.ProfileFields, f)
		}
	}
	return nil
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

//go:embed *.md
var mdFiles embed.FS

var (
	embeddedOnce sync.Once
	embeddedReg  *Registry
	embeddedErr  error
)

// Embedded returns the registry parsed from the Markdown files of this
// package, parsing them once. It also checks that every requirement ID uses
// one of Prefixes.
func Embedded() (*Registry, error) {
	embeddedOnce.Do(func() {
		embeddedReg, embeddedErr = loadEmbedded(mdFiles)
	})
	return embeddedReg, embeddedErr
}

func loadEmbedded(fsys fs.FS) (*Registry, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	files := make(map[string]string, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		files[n] = string(b)
	}
	r, err := Parse(files)
	if err != nil {
		return nil, err
	}
	for _, q := range r.reqs {
		p, _, _ := strings.Cut(q.ID, "-")
		if !slices.Contains(Prefixes, p) {
			return nil, &parseError{q.File, q.Line, fmt.Sprintf("%s: unknown prefix %q (want one of %v)", q.ID, p, Prefixes)}
		}
	}
	return r, nil
}

// empty is returned by the package-level functions when the embedded
// specification does not parse; TestEmbeddedRegistryParses reports the error.
var empty = &Registry{byID: map[string]int{}, ambID: map[string]int{}}

func embedded() *Registry {
	r, err := Embedded()
	if err != nil {
		return empty
	}
	return r
}

// Requirements returns the embedded specification's requirements in
// document order (files sorted by name, then by line).
func Requirements() []Requirement { return embedded().Requirements() }

// Lookup returns the embedded requirement with the given ID.
func Lookup(id string) (Requirement, bool) { return embedded().Lookup(id) }

// Ambiguities returns the embedded ambiguity register in document order.
func Ambiguities() []Ambiguity { return embedded().Ambiguities() }

// LookupAmbiguity returns the embedded ambiguity entry with the given ID.
func LookupAmbiguity(id string) (Ambiguity, bool) { return embedded().LookupAmbiguity(id) }
