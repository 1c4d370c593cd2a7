package api

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
)

// TestPinnedTable: facts.txt parses, is in canonical form (as the
// extractor writes it), was read at 662a150 or later, and holds the four
// headers.
func TestPinnedTable(t *testing.T) {
	tab, err := Pinned()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Format() != pinnedText {
		t.Error("facts.txt is not in the form Format writes: regenerate it with mrc-apifacts extract")
	}
	if tab.Date < "2026-05-19" || len(tab.Commit) != 40 {
		t.Errorf("pinned commit %s of %s: want a full hash at 662a150 (2026-05-19) or later", tab.Commit, tab.Date)
	}
	files := map[string]int{}
	for _, f := range tab.Facts {
		files[f.File]++
	}
	for _, h := range Headers {
		if files[h] == 0 {
			t.Errorf("no facts of %s", h)
		}
	}
	seen := map[string]bool{}
	for _, f := range tab.Facts {
		if seen[f.Key()] {
			t.Errorf("two facts with key %q", f.Key())
		}
		seen[f.Key()] = true
	}
}

// version renders an MRC_API_VER value as MAJOR.MINOR.SUBMINOR.
func version(v int64) string {
	return strconv.FormatInt(v>>24, 10) + "." + strconv.FormatInt(v>>16&0xff, 10) + "." + strconv.FormatInt(v&0xffff, 10)
}

// TestRegistryRecordsAPIVersion: spec.APIFollowed and 00-overview.md name
// the pinned commit and the versions its headers declare.
func TestRegistryRecordsAPIVersion(t *testing.T) {
	tab, err := Pinned()
	if err != nil {
		t.Fatal(err)
	}
	mrc, ok1 := tab.Const("MRC_API_CURRENT_VERSION")
	ctl, ok2 := tab.Const("MRC_CTL_API_CURRENT_VERSION")
	if !ok1 || !ok2 {
		t.Fatal("no current API versions in the facts")
	}
	want := spec.API{Commit: tab.Commit, Date: tab.Date, MRC: version(mrc), MRCCtl: version(ctl)}
	if spec.APIFollowed != want {
		t.Errorf("spec.APIFollowed = %+v, facts say %+v", spec.APIFollowed, want)
	}
	b, err := os.ReadFile(filepath.Join("..", "00-overview.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{tab.Commit[:12], tab.Date, "API version " + want.MRC, "control API version " + want.MRCCtl} {
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), s) {
			t.Errorf("00-overview.md does not say %q", s)
		}
	}
}

func TestDiff(t *testing.T) {
	old := &Table{Commit: "a", Facts: []Fact{
		{Kind: KindConst, File: "mrc.h", Name: "e.A", Value: "16"},
		{Kind: KindConst, File: "mrc.h", Name: "e.B", Value: "32"},
		{Kind: KindFunc, File: "mrc.h", Name: "f", Value: "int ()", Cond: "X"},
	}}
	new := &Table{Commit: "b", Facts: []Fact{
		{Kind: KindConst, File: "mrc.h", Name: "e.A", Value: "32"},
		{Kind: KindConst, File: "mrc.h", Name: "e.C", Value: "64"},
		{Kind: KindFunc, File: "mrc.h", Name: "f", Value: "int ()"},
	}}
	var got []string
	for _, c := range Diff(old, new) {
		got = append(got, c.String())
	}
	want := []string{
		"~ const\tmrc.h\te.A: 16 -> 32",
		"- const\tmrc.h\te.B\t32",
		"+ const\tmrc.h\te.C\t64",
		"+ func\tmrc.h\tf\tint ()",
		"- func\tmrc.h\tf\tint ()\tX",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := Diff(new, new); len(d) != 0 {
		t.Errorf("a table differs from itself: %v", d)
	}
}

func TestParseTableErrors(t *testing.T) {
	for _, s := range []string{"", "@commit x\n", "@commit x\nconst\tmrc.h\tA\n", "@bogus y\n", "@commit x\na\tb\tc\td\te\tf\n"} {
		if _, err := ParseTable(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// TestCitations: a changed fact is traced to the requirements and the Go
// lines that cite it; MRC_QP_TIMEOUT is mirrored by AttrTimeout.
func TestCitations(t *testing.T) {
	root, err := spec.FindModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCiter(root)
	if err != nil {
		t.Fatal(err)
	}
	reqs, code := c.Citations(Fact{Kind: KindConst, Name: "mrc_qp_cap.MRC_QP_CAP_DYNAMIC_MPR"})
	if !slices.Contains(reqs, "AMB-22") || !slices.Contains(reqs, "MPR-DYN-1") {
		t.Errorf("MRC_QP_CAP_DYNAMIC_MPR cited by %v; want AMB-22 and MPR-DYN-1 among them", reqs)
	}
	found := false
	for _, l := range code {
		found = found || strings.HasPrefix(l, "statemachine/attr.go:")
	}
	if !found {
		t.Errorf("MRC_QP_CAP_DYNAMIC_MPR cited in code at %v; want statemachine/attr.go", code)
	}
	if r, c := c.Citations(Fact{Kind: KindConst, Name: "e.MRC_NO_SUCH" + "_NAME"}); len(r)+len(c) != 0 {
		t.Errorf("an unknown name is cited: %v %v", r, c)
	}
	if got := Terms(Fact{Kind: KindField, Name: "mrc_qp_attr.cap"}); !slices.Equal(got, []string{"mrc_qp_attr.cap"}) {
		t.Errorf("terms of a short field: %v", got)
	}
}
