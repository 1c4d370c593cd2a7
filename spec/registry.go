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

// The patterns of Parse, compiled on first use (a program that only looks
// IDs up through LevelOf never compiles them).
var (
	reqIDRE       = lazyRegexp(`^[A-Z][A-Z0-9]*-[A-Z][A-Z0-9]*-[0-9]+$`)
	ambHeadingRE  = lazyRegexp(`^### (AMB-[1-9][0-9]*): (\S.*)$`)
	profileNameRE = lazyRegexp(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
)

// lazyRegexp returns a function that compiles expr on its first call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

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
	ps := &parseState{r: &Registry{byID: map[string]int{}, ambID: map[string]int{}}, reqLine: map[string]fileLine{}}
	for _, name := range names {
		if err := ps.file(name, files[name]); err != nil {
			return nil, err
		}
	}
	if err := ps.crossCheck(); err != nil {
		return nil, err
	}
	return ps.r, nil
}

// parseState is what Parse carries across files: the registry being
// built, the AMB-n references to check once every file is read, and where
// each requirement ID was first defined.
type parseState struct {
	r       *Registry
	refs    []ambRef
	reqLine map[string]fileLine // where each ID was first defined
}

type fileLine struct {
	file string
	line int
}

type ambRef struct {
	id, amb, file string
	line          int
}

// fileParser reads one file: the requirement item and the ambiguity entry
// it is in the middle of, the current section and whether it is inside a
// code fence.
type fileParser struct {
	*parseState
	name        string
	section     string
	inFence     bool
	item        []string // lines of the requirement item being read, if inItem
	inItem      bool
	itemLine    int
	itemSection string
	amb         *Ambiguity // ambiguity entry being read
	ambLine     int
	ambField    string // last field read, for continuation lines
	ambSeen     map[string]bool
}

func (ps *parseState) file(name, text string) error {
	p := &fileParser{parseState: ps, name: name, ambSeen: map[string]bool{}}
	rest, n := strings.ReplaceAll(text, "\r\n", "\n"), 0
	for more := true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		n++
		if err := p.line(n, line); err != nil {
			return err
		}
	}
	if err := p.finishReq(); err != nil {
		return err
	}
	if p.inFence {
		return &parseError{name, n, "unterminated code fence"}
	}
	return p.finishAmb()
}

// line reads line number ln.
func (p *fileParser) line(ln int, line string) error {
	isCont := strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "" && !reqCandidate(line)
	if isCont && p.inItem {
		p.item = append(p.item, strings.TrimSpace(line))
		return nil
	}
	if err := p.finishReq(); err != nil {
		return err
	}
	if strings.HasPrefix(strings.TrimSpace(line), "```") {
		p.inFence = !p.inFence
		return nil
	}
	switch {
	case p.inFence:
		return nil
	case isCont && p.amb != nil && p.ambField != "":
		if err := ambAppend(p.amb, p.ambField, strings.TrimSpace(line)); err != nil {
			return &parseError{p.name, ln, err.Error()}
		}
		return nil
	case strings.TrimSpace(line) == "":
		p.ambField = ""
		return nil
	}
	if title, ok := headingTitle(line); ok {
		return p.heading(ln, line, title)
	}
	if p.amb != nil {
		return p.ambLineField(ln, line)
	}
	if reqCandidate(line) {
		p.item, p.inItem = append(p.item[:0], line), true
		p.itemLine = ln
		p.itemSection = p.section
	}
	return nil
}

// heading starts a section, and an ambiguity entry when the heading names
// one.
func (p *fileParser) heading(ln int, line, title string) error {
	if err := p.finishAmb(); err != nil {
		return err
	}
	p.section = title
	if !strings.HasPrefix(title, "AMB-") && !strings.HasPrefix(title, "AMB ") {
		return nil
	}
	am := ambHeadingRE().FindStringSubmatch(line)
	if am == nil {
		return &parseError{p.name, ln, fmt.Sprintf("malformed ambiguity heading %q (want \"### AMB-n: Title\")", line)}
	}
	if _, dup := p.r.ambID[am[1]]; dup {
		return &parseError{p.name, ln, "duplicate ambiguity " + am[1]}
	}
	p.amb = &Ambiguity{ID: am[1], Title: am[2]}
	p.ambLine = ln
	p.ambField = ""
	p.ambSeen = map[string]bool{}
	return nil
}

// ambLineField reads one "- Field: value" line of an ambiguity entry; the
// fields come once each, in ambFieldOrder.
func (p *fileParser) ambLineField(ln int, line string) error {
	f, value, ok := ambField(line)
	if !ok {
		return &parseError{p.name, ln, fmt.Sprintf("%s: unexpected line %q (want \"- Options|Default|Reason|Profile: ...\")", p.amb.ID, line)}
	}
	if p.ambSeen[f] {
		return &parseError{p.name, ln, fmt.Sprintf("%s: duplicate %q field", p.amb.ID, f)}
	}
	if want := ambFieldOrder[len(p.ambSeen)]; f != want {
		return &parseError{p.name, ln, fmt.Sprintf("%s: field %q out of order (want %q)", p.amb.ID, f, want)}
	}
	p.ambSeen[f] = true
	p.ambField = f
	if err := ambAppend(p.amb, f, value); err != nil {
		return &parseError{p.name, ln, err.Error()}
	}
	return nil
}

// finishAmb adds the ambiguity entry read so far, if any, once it has
// every field and at least two options.
func (p *fileParser) finishAmb() error {
	amb := p.amb
	if amb == nil {
		return nil
	}
	for _, f := range ambFieldOrder {
		if !p.ambSeen[f] {
			return &parseError{p.name, p.ambLine, fmt.Sprintf("%s: missing %q field", amb.ID, f)}
		}
	}
	if len(amb.Options) < 2 {
		return &parseError{p.name, p.ambLine, fmt.Sprintf("%s: needs at least two options separated by \" | \"", amb.ID)}
	}
	p.r.ambID[amb.ID] = len(p.r.ambs)
	p.r.ambs = append(p.r.ambs, *amb)
	p.amb = nil
	return nil
}

// finishReq parses the requirement item read so far, if any.
func (p *fileParser) finishReq() error {
	if !p.inItem {
		return nil
	}
	joined := strings.Join(p.item, " ")
	p.inItem = false
	req, err := parseRequirement(joined)
	if err != nil {
		return &parseError{p.name, p.itemLine, err.Error()}
	}
	if prev, dup := p.reqLine[req.ID]; dup {
		return &parseError{p.name, p.itemLine, fmt.Sprintf("duplicate requirement %s (first at %s:%d)", req.ID, prev.file, prev.line)}
	}
	if p.itemSection == "" {
		return &parseError{p.name, p.itemLine, req.ID + ": requirement before any heading"}
	}
	p.reqLine[req.ID] = fileLine{p.name, p.itemLine}
	req.Section, req.File, req.Line = p.itemSection, p.name, p.itemLine
	for _, m := range ambRefs(req.Text) {
		p.refs = append(p.refs, ambRef{req.ID, m, p.name, p.itemLine})
	}
	p.r.byID[req.ID] = len(p.r.reqs)
	p.r.reqs = append(p.r.reqs, req)
	return nil
}

// crossCheck runs the checks that need the whole document: a decision
// names its AMB-n, and every AMB-n named is in the register.
func (ps *parseState) crossCheck() error {
	for _, q := range ps.r.reqs {
		if q.Confidence == Decision && len(ambRefs(q.Text)) == 0 {
			return &parseError{q.File, q.Line, q.ID + ": decision requirement names no AMB-n entry in its text"}
		}
	}
	for _, f := range ps.refs {
		if _, ok := ps.r.ambID[f.amb]; !ok {
			return &parseError{f.file, f.line, fmt.Sprintf("%s refers to %s, which is not in the ambiguity register", f.id, f.amb)}
		}
	}
	return nil
}

// The matchers below do what reqCandidateRE, reqLineRE and ambRefRE
// (registry_test.go) describe, without a regular expression's
// backtracking: the spec is parsed at the start of every program that
// looks a requirement up (TestMatchersAgreeWithRegexps).

// spaces are the characters of \s.
const spaces = " \t\n\f\r"

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isWord(c byte) bool  { return isUpper(c) || isDigit(c) || 'a' <= c && c <= 'z' || c == '_' }

// reqCandidate reports whether line is meant to be a requirement: a list
// item opening with a bold upper-case word followed by a hyphen.
func reqCandidate(line string) bool {
	i := skipSpaces(line, 0)
	if i == len(line) || line[i] != '-' && line[i] != '*' && line[i] != '+' {
		return false
	}
	j := skipSpaces(line, i+1)
	if j == i+1 {
		return false // no space after the marker
	}
	if j+2 >= len(line) || line[j] != '*' || line[j+1] != '*' || !isUpper(line[j+2]) {
		return false
	}
	k := j + 3
	for k < len(line) && (isUpper(line[k]) || isDigit(line[k])) {
		k++
	}
	return k < len(line) && line[k] == '-'
}

// skipSpaces returns the index of the first character of s at or after i
// that is not in spaces.
func skipSpaces(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// isSpace reports whether c is in spaces.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// headingTitle returns the title of a Markdown heading line: one to six
// '#', white space, and the title, less the white space and closing '#'s
// that end the line (at least one character of it stays the title). line
// holds no line break (file splits the text at them).
func headingTitle(line string) (string, bool) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	rest := line[n:]
	body := strings.TrimLeft(rest, spaces)
	sp := len(rest) - len(body)
	if n == 0 || n > 6 || sp == 0 {
		return "", false
	}
	if body == "" {
		if sp < 2 {
			return "", false
		}
		return rest[sp-1:], true // the last space is the title
	}
	t := strings.TrimRight(strings.TrimRight(strings.TrimRight(body, spaces), "#"), spaces)
	if t == "" {
		t = body[:1]
	}
	return t, true
}

// ambField splits an ambiguity entry's "- Field: value" line.
func ambField(line string) (field, value string, ok bool) {
	rest, ok := strings.CutPrefix(line, "- ")
	if !ok {
		return "", "", false
	}
	for _, f := range ambFieldOrder {
		if v, ok := strings.CutPrefix(rest, f+": "); ok && textValue(v) {
			return f, v, true
		}
	}
	return "", "", false
}

// textValue reports whether s matches \S.*: a first character that is not
// white space, and no line break.
func textValue(s string) bool {
	return s != "" && strings.IndexByte(spaces, s[0]) < 0 && !strings.ContainsRune(s, '\n')
}

// ambRefs returns the AMB-n references of text, whole words.
func ambRefs(text string) []string {
	var refs []string
	for i := 0; ; {
		k := strings.Index(text[i:], "AMB-")
		if k < 0 {
			return refs
		}
		start := i + k
		j := start + len("AMB-")
		for j < len(text) && isDigit(text[j]) {
			j++
		}
		if j > start+len("AMB-") && (start == 0 || !isWord(text[start-1])) && (j == len(text) || !isWord(text[j])) {
			refs = append(refs, text[start:j])
		}
		i = start + 1
	}
}

// splitRequirement splits a requirement line as reqLineRE does, without
// its backtracking: each group ends at the first character it may not
// hold, so there is one way to split.
func splitRequirement(line string) (m [6]string, ok bool) {
	rest, ok := strings.CutPrefix(line, "- **")
	if !ok {
		return m, false
	}
	var i int
	cut := func(stop, sep string) bool {
		i = strings.IndexAny(rest, stop)
		if i <= 0 || !strings.HasPrefix(rest[i:], sep) {
			return false
		}
		return true
	}
	fields := []struct{ stop, sep string }{{"*", "** ("}, {";()", "; provenance: "}, {";", "; confidence: "}, {")", ") "}}
	for k, f := range fields {
		if !cut(f.stop, f.sep) {
			return m, false
		}
		m[k+1], rest = rest[:i], rest[i+len(f.sep):]
	}
	if !textValue(rest) {
		return m, false
	}
	m[0], m[5] = line, rest
	return m, true
}

func parseRequirement(line string) (Requirement, error) {
	m, ok := splitRequirement(line)
	if !ok {
		return Requirement{}, fmt.Errorf("malformed requirement line %q (want \"- **ID** (LEVEL; provenance: ...; confidence: ...) text\")", line)
	}
	id, level, prov, conf, text := m[1], Level(m[2]), strings.TrimSpace(m[3]), Confidence(m[4]), m[5]
	if !reqIDRE().MatchString(id) {
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
			if f == "none" || !profileNameRE().MatchString(f) {
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
