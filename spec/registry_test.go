package spec

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestEmbeddedRegistryParses(t *testing.T) {
	r, err := Embedded()
	if err != nil {
		t.Fatalf("embedded specification does not parse: %v", err)
	}
	if n := len(r.Requirements()); n < 150 {
		t.Errorf("embedded specification has %d requirements, want at least 150", n)
	}
	for i := 1; i <= 22; i++ {
		id := "AMB-" + itoa(i)
		if _, ok := r.LookupAmbiguity(id); !ok {
			t.Errorf("ambiguity register lacks %s", id)
		}
	}
	if len(Requirements()) != len(r.Requirements()) || len(Ambiguities()) != len(r.Ambiguities()) {
		t.Error("package-level accessors disagree with Embedded()")
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestNoDuplicateIDs(t *testing.T) {
	seen := map[string]string{}
	for _, q := range Requirements() {
		where := q.File + ":" + itoa(q.Line)
		if prev, ok := seen[q.ID]; ok {
			t.Errorf("%s defined at %s and %s", q.ID, prev, where)
		}
		seen[q.ID] = where
	}
	ambs := map[string]bool{}
	for _, a := range Ambiguities() {
		if ambs[a.ID] {
			t.Errorf("ambiguity %s defined twice", a.ID)
		}
		ambs[a.ID] = true
	}
}

func TestRequirementsWellFormed(t *testing.T) {
	reqs := Requirements()
	for i, q := range reqs {
		if q.Section == "" || q.Text == "" || q.Provenance == "" || q.File == "" || q.Line <= 0 {
			t.Errorf("%s: incomplete requirement %+v", q.ID, q)
		}
		p, _, _ := strings.Cut(q.ID, "-")
		if !slices.Contains(Prefixes, p) {
			t.Errorf("%s: unknown prefix", q.ID)
		}
		if q.Confidence == Decision {
			refs := ambRefRE.FindAllString(q.Text, -1)
			if len(refs) == 0 {
				t.Errorf("%s: decision without AMB reference", q.ID)
			}
			for _, a := range refs {
				if _, ok := LookupAmbiguity(a); !ok {
					t.Errorf("%s: refers to unknown %s", q.ID, a)
				}
			}
		}
		if i > 0 {
			prev := reqs[i-1]
			if prev.File > q.File || (prev.File == q.File && prev.Line >= q.Line) {
				t.Errorf("requirements out of document order: %s (%s:%d) before %s (%s:%d)",
					prev.ID, prev.File, prev.Line, q.ID, q.File, q.Line)
			}
		}
		if got, ok := Lookup(q.ID); !ok || got != q {
			t.Errorf("Lookup(%s) = %+v, %v", q.ID, got, ok)
		}
	}
	for _, a := range Ambiguities() {
		if a.Title == "" || a.Default == "" || a.Reason == "" || len(a.Options) < 2 {
			t.Errorf("%s: incomplete ambiguity %+v", a.ID, a)
		}
	}
}

// The wire package cites these IDs; their meaning is fixed by the brief.
func TestRequiredWireIDsExist(t *testing.T) {
	ids := []string{
		"WIRE-GEN-1", "WIRE-GEN-2", "WIRE-ENC-1", "WIRE-ENC-2", "WIRE-LEN-1",
		"WIRE-UDP-1", "WIRE-UDP-2", "WIRE-UDP-3",
		"WIRE-EV-1", "WIRE-EV-2", "WIRE-EV-3", "WIRE-EV-4", "WIRE-EV-5", "WIRE-EV-6",
		"WIRE-BTH-1", "WIRE-BTH-2", "WIRE-BTH-3", "WIRE-BTH-4", "WIRE-BTH-5", "WIRE-BTH-6",
		"WIRE-BTH-7", "WIRE-BTH-8", "WIRE-BTH-9",
		"WIRE-OP-1", "WIRE-METH-1", "WIRE-TSETH-1", "WIRE-RETH-1", "WIRE-RETH-2", "WIRE-IMM-1",
		"WIRE-AETH-1", "WIRE-AETH-2",
		"WIRE-SETH-1", "WIRE-SETH-2", "WIRE-SETH-3", "WIRE-SETH-4", "WIRE-SETH-5",
		"WIRE-NETH-1", "WIRE-NETH-2", "WIRE-PETH-1", "WIRE-ERTH-1", "WIRE-EETH-1", "WIRE-EP-1",
		"WIRE-ICRC-1", "WIRE-ICRC-2", "WIRE-ICRC-3", "WIRE-ICRC-4",
		"WIRE-DSCP-1", "WIRE-DSCP-2", "WIRE-PAY-1",
	}
	for _, id := range ids {
		if _, ok := Lookup(id); !ok {
			t.Errorf("required requirement %s is missing", id)
		}
	}
	for _, id := range []string{"WIRE-ICRC-3", "WIRE-ICRC-4"} {
		if q, _ := Lookup(id); q.Confidence != Decision {
			t.Errorf("%s: confidence %q, want decision", id, q.Confidence)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	files := map[string]string{
		"b.md": "# Second\n\n- **TST-B-1** (MAY; provenance: X; confidence: primary) Later file.\n",
		"a.md": "# Top\n\n## Sub section\n\nProse.\n\n" +
			"- **TST-A-1** (MUST NOT; provenance: EMU, MANI (Table 1); confidence:\n" +
			"  secondary) First line\n  second line.\n" +
			"- **TST-A-2** (SHOULD; provenance: project; confidence: decision) Chosen (AMB-1).\n\n" +
			"```\n- **NOT A REQUIREMENT\n# not a heading\n```\n\n" +
			"### AMB-1: Port\n- Options: 4791 (x | y is split) | 4971\n  | 1234\n- Default: 4791\n" +
			"- Reason: because\n  of this.\n- Profile: udp_dst_port, dscp.control\n",
	}
	r, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	reqs := r.Requirements()
	if len(reqs) != 3 {
		t.Fatalf("got %d requirements, want 3: %+v", len(reqs), reqs)
	}
	want := Requirement{ID: "TST-A-1", Level: MustNot, Section: "Sub section",
		Text: "First line second line.", Provenance: "EMU, MANI (Table 1)",
		Confidence: Secondary, File: "a.md", Line: 7}
	if reqs[0] != want {
		t.Errorf("got %+v\nwant %+v", reqs[0], want)
	}
	if reqs[1].ID != "TST-A-2" || reqs[2].ID != "TST-B-1" || reqs[2].Section != "Second" {
		t.Errorf("wrong order or sections: %+v", reqs)
	}
	a, ok := r.LookupAmbiguity("AMB-1")
	if !ok {
		t.Fatal("AMB-1 missing")
	}
	if !slices.Equal(a.Options, []string{"4791 (x", "y is split)", "4971", "1234"}) ||
		a.Reason != "because of this." || a.Default != "4791" || a.Title != "Port" ||
		!slices.Equal(a.ProfileFields, []string{"udp_dst_port", "dscp.control"}) {
		t.Errorf("ambiguity parsed as %+v", a)
	}
}

func TestParseRejects(t *testing.T) {
	const h = "# H\n\n"
	const amb1 = "\n### AMB-1: T\n- Options: a | b\n- Default: a\n- Reason: r\n- Profile: none\n"
	cases := []struct {
		name, md, want string
	}{
		{"malformed line", h + "- **TST-A-1** MUST; provenance: X; confidence: primary) T\n", "malformed requirement line"},
		{"missing text", h + "- **TST-A-1** (MUST; provenance: X; confidence: primary)\n", "malformed requirement line"},
		{"unknown level", h + "- **TST-A-1** (REQUIRED; provenance: X; confidence: primary) T\n", "unknown level"},
		{"lower-case level", h + "- **TST-A-1** (must; provenance: X; confidence: primary) T\n", "unknown level"},
		{"unknown confidence", h + "- **TST-A-1** (MUST; provenance: X; confidence: high) T\n", "unknown confidence"},
		{"empty provenance", h + "- **TST-A-1** (MUST; provenance:  ; confidence: primary) T\n", "empty provenance"},
		{"bad ID", h + "- **TST-1** (MUST; provenance: X; confidence: primary) T\n", "malformed requirement ID"},
		{"nested requirement", h + "- x\n  - **TST-A-1** (MUST; provenance: X; confidence: primary) T\n", "malformed requirement line"},
		{"duplicate ID", h + "- **TST-A-1** (MUST; provenance: X; confidence: primary) T\n" +
			"- **TST-A-1** (MAY; provenance: X; confidence: primary) U\n", "duplicate requirement"},
		{"before heading", "- **TST-A-1** (MUST; provenance: X; confidence: primary) T\n", "before any heading"},
		{"decision without AMB", h + "- **TST-A-1** (MUST; provenance: X; confidence: decision) T\n" + amb1, "names no AMB-n"},
		{"unknown AMB", h + "- **TST-A-1** (MUST; provenance: X; confidence: decision) T (AMB-2)\n" + amb1, "not in the ambiguity register"},
		{"missing field", "\n### AMB-1: T\n- Options: a | b\n- Default: a\n- Profile: none\n", "out of order"},
		{"missing last field", "\n### AMB-1: T\n- Options: a | b\n- Default: a\n- Reason: r\n", `missing "Profile"`},
		{"field out of order", "\n### AMB-1: T\n- Default: a\n- Options: a | b\n- Reason: r\n- Profile: none\n", "out of order"},
		{"duplicate field", "\n### AMB-1: T\n- Options: a | b\n- Options: a | b\n", "duplicate"},
		{"one option", "\n### AMB-1: T\n- Options: a\n- Default: a\n- Reason: r\n- Profile: none\n", "at least two options"},
		{"empty option", "\n### AMB-1: T\n- Options: a |  | b\n- Default: a\n- Reason: r\n- Profile: none\n", "empty option"},
		{"bad heading", "\n### AMB-1 T\n- Options: a | b\n", "malformed ambiguity heading"},
		{"heading level", "\n## AMB-1: T\n- Options: a | b\n", "malformed ambiguity heading"},
		{"duplicate ambiguity", amb1 + amb1, "duplicate ambiguity"},
		{"stray line", "\n### AMB-1: T\nSome prose.\n", "unexpected line"},
		{"bad profile field", "\n### AMB-1: T\n- Options: a | b\n- Default: a\n- Reason: r\n- Profile: Bad Name\n", "bad profile field"},
		{"none among fields", "\n### AMB-1: T\n- Options: a | b\n- Default: a\n- Reason: r\n- Profile: x, none\n", "bad profile field"},
		{"unterminated fence", h + "```\n- **TST-A-1** (MUST; provenance: X; confidence: primary) T\n", "unterminated code fence"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(map[string]string{"x.md": c.md})
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", c.md)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "spec: x.md:") {
				t.Errorf("error %q lacks file position", err)
			}
		})
	}
}

func TestEmbeddedRejectsUnknownPrefix(t *testing.T) {
	r, err := Parse(map[string]string{"x.md": "# H\n\n- **TST-A-1** (MUST; provenance: X; confidence: primary) T\n"})
	if err != nil || len(r.Requirements()) != 1 {
		t.Fatalf("Parse: %v", err)
	}
	// The embedded loader additionally insists on the known prefixes.
	for _, q := range Requirements() {
		p, _, _ := strings.Cut(q.ID, "-")
		if !slices.Contains(Prefixes, p) {
			t.Errorf("%s: prefix not in Prefixes", q.ID)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := FindModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestCitedIDsExist(t *testing.T) {
	cites, err := ScanCitations(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(cites))
	for id := range cites {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		var ok bool
		if strings.HasPrefix(id, "AMB-") {
			_, ok = LookupAmbiguity(id)
		} else {
			_, ok = Lookup(id)
		}
		if !ok {
			for _, c := range cites[id] {
				t.Errorf("%s:%d cites %s, which the specification does not define", c.File, c.Line, id)
			}
		}
	}
}

// testCited reports, per requirement ID, whether a _test.go file outside
// this package cites it. Citations inside spec/ are about the registry
// itself, not about the protocol.
func testCited(t *testing.T) map[string]bool {
	t.Helper()
	cites, err := ScanCitations(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for id, cs := range cites {
		for _, c := range cs {
			if c.Test && !strings.HasPrefix(c.File, "spec/") {
				out[id] = true
			}
		}
	}
	return out
}

func TestRequirementCoverage(t *testing.T) {
	cited := testCited(t)
	missing := map[string][]string{}
	total := 0
	for _, q := range Requirements() {
		if cited[q.ID] {
			continue
		}
		p, _, _ := strings.Cut(q.ID, "-")
		missing[p] = append(missing[p], q.ID)
		total++
	}
	for _, p := range Prefixes {
		if ids := missing[p]; len(ids) > 0 {
			t.Logf("%s: %d requirements without a test citation: %s", p, len(ids), strings.Join(ids, " "))
		}
	}
	t.Logf("%d of %d requirements have no test citation", total, len(Requirements()))
}

// wireMustUntested lists the WIRE MUST requirements no test cites yet,
// each with why. It only shrinks: a listed requirement that a test cites
// fails TestWireMustCoverage until its line goes.
var wireMustUntested = map[string]string{}

// TestWireMustCoverage: every WIRE MUST or MUST NOT requirement is cited
// by a test, or listed in wireMustUntested.
func TestWireMustCoverage(t *testing.T) {
	cited := testCited(t)
	for _, q := range Requirements() {
		if !strings.HasPrefix(q.ID, "WIRE-") || q.Level != Must && q.Level != MustNot {
			continue
		}
		_, listed := wireMustUntested[q.ID]
		switch {
		case !cited[q.ID] && !listed:
			t.Errorf("%s (%s, %s:%d) has no citation in any _test.go file", q.ID, q.Level, q.File, q.Line)
		case cited[q.ID] && listed:
			t.Errorf("%s is cited by a test now: remove it from wireMustUntested", q.ID)
		}
	}
}

// BenchmarkParseEmbedded parses the embedded specification, as every
// program that looks a requirement up does once at start-up.
func BenchmarkParseEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := loadEmbedded(mdFiles); err != nil {
			b.Fatal(err)
		}
	}
}

// The regular expressions the parser's matchers implement by hand
// (reqCandidate, splitRequirement, ambRefs).
var (
	reqCandidateRE = regexp.MustCompile(`^\s*[-*+]\s+\*\*[A-Z][A-Z0-9]*-`)
	reqLineRE      = regexp.MustCompile(`^- \*\*([^*]+)\*\* \(([^;()]+); provenance: ([^;]+); confidence: ([^)]+)\) (\S.*)$`)
	ambRefRE       = regexp.MustCompile(`\bAMB-[0-9]+\b`)
	headingRE      = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)
	ambFieldRE     = regexp.MustCompile(`^- (Options|Default|Reason|Profile): (\S.*)$`)
)

// TestMatchersAgreeWithRegexps checks the parser's hand-written matchers
// against the regular expressions they stand for, on every line of the
// embedded specification, every joined requirement item, and lines made
// to sit on each edge of the patterns.
func TestMatchersAgreeWithRegexps(t *testing.T) {
	lines := []string{
		"", "-", "- **", "- **A-", "-**A-1", "  * **ZZ9-X-1**", "\t+\t**Q9-", "- **a-1", "- **AB", "- **AB_-",
		"- **ID** (MUST; provenance: p; confidence: primary) text",
		"- **ID** (MUST; provenance: p; confidence: primary)  text",
		"- **ID** (MUST; provenance: p; confidence: primary) ",
		"- **ID** (MU(ST; provenance: p; confidence: primary) t",
		"- **ID** (MUST; provenance: p;q; confidence: primary) t",
		"- **ID** (MUST; provenance: p; confidence: prim)ary) t",
		"- **ID** (MUST; provenance: p; confidence: primary) t\nu",
		"- **I*D** (MUST; provenance: p; confidence: primary) t",
		"- **** (MUST; provenance: p; confidence: primary) t",
		"- **ID** (; provenance: p; confidence: primary) t",
		"- **ID** (MUST; provenance: ; confidence: primary) t",
		"- **ID** (MUST; provenance: p; confidence: ) t",
		"see AMB-1, AMB-22; xAMB-3 AMB-4x AMB- AMB-5_ (AMB-6) AMB-7AMB-8 AMB-9",
		"#", "# ", "#  ", "#\t\t", "# a", "#a", "####### a", "###### a", "## a ##", "## C#", "## a # #", "# ###", "# #",
		"##  title  # ", "#\ra", "# a\r", "#\v a",
		"- Options: a", "- Options:  a", "- Options: ", "- Default: x y", "-  Reason: r", "- Profile: p\nq", "- Other: o", "- Reason:r",
	}
	for _, name := range mustGlob(t) {
		b, err := mdFiles.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	for _, q := range Requirements() {
		lines = append(lines, fmt.Sprintf("- **%s** (%s; provenance: %s; confidence: %s) %s", q.ID, q.Level, q.Provenance, q.Confidence, q.Text))
	}
	for _, l := range lines {
		if got, want := reqCandidate(l), reqCandidateRE.MatchString(l); got != want {
			t.Errorf("reqCandidate(%q) = %v, regexp says %v", l, got, want)
		}
		m, ok := splitRequirement(l)
		want := reqLineRE.FindStringSubmatch(l)
		if ok != (want != nil) || ok && !slices.Equal(m[:], want) {
			t.Errorf("splitRequirement(%q) = %q %v, regexp says %q", l, m, ok, want)
		}
		wantH := headingRE.FindStringSubmatch(l)
		if title, ok := headingTitle(l); ok != (wantH != nil) || ok && title != wantH[2] {
			t.Errorf("headingTitle(%q) = %q %v, regexp says %q", l, title, ok, wantH)
		}
		wantF := ambFieldRE.FindStringSubmatch(l)
		if f, v, ok := ambField(l); ok != (wantF != nil) || ok && (f != wantF[1] || v != wantF[2]) {
			t.Errorf("ambField(%q) = %q %q %v, regexp says %q", l, f, v, ok, wantF)
		}
		if got, want := ambRefs(l), ambRefRE.FindAllString(l, -1); !slices.Equal(got, want) {
			t.Errorf("ambRefs(%q) = %q, regexp says %q", l, got, want)
		}
	}
}

func mustGlob(t *testing.T) []string {
	names, err := fs.Glob(mdFiles, "*.md")
	if err != nil || len(names) == 0 {
		t.Fatal(names, err)
	}
	return names
}
