package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testHarness lists the test imports that run against the flow on purpose:
// a test that uses a higher layer as its harness. Every entry must still
// exist (a stale entry fails), and any other test import against the flow
// fails.
var testHarness = map[Edge]string{
	{"linearize", "fabric"}:          "linearize's tests check histories recorded by the fabric harness",
	{"linearize", "fabric/workload"}: "linearize's tests check histories recorded by the fabric harness",
}

type pkg struct {
	path           string
	imports, tests []string
}

// graph reads the module's import graph with go list.
func graph(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	own := func(list string) []string {
		var r []string
		for _, p := range strings.Fields(list) {
			if rel, ok := strings.CutPrefix(p, Module+"/"); ok {
				r = append(r, rel)
			}
		}
		return r
	}
	var ps []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		rel, ok := strings.CutPrefix(f[0], Module+"/")
		if !ok {
			t.Fatalf("package %s outside the module", f[0])
		}
		ps = append(ps, pkg{rel, own(f[1]), own(f[2])})
	}
	if len(ps) < 20 {
		t.Fatalf("go list found %d packages", len(ps))
	}
	return ps
}

// TestImportFlow: no production import runs against the flow, and every
// package has a layer.
func TestImportFlow(t *testing.T) {
	var edges []Edge
	for _, p := range graph(t) {
		edges = append(edges, Edge{p.path, p.path})
		for _, i := range p.imports {
			edges = append(edges, Edge{p.path, i})
		}
	}
	against, unplaced := Check(edges)
	for _, u := range unplaced {
		t.Errorf("package %s has no layer: add it to Flow", u)
	}
	for _, e := range against {
		f, _ := Of(e.From)
		to, _ := Of(e.To)
		t.Errorf("%s (%s) imports %s (%s): against the flow %s", e.From, f.Name, e.To, to.Name, Line())
	}
}

// TestTestImports: a test import against the flow is listed in testHarness
// with its reason, and every listed one still exists.
func TestTestImports(t *testing.T) {
	var edges []Edge
	for _, p := range graph(t) {
		for _, i := range p.tests {
			if i != p.path && !slices.Contains(p.imports, i) {
				edges = append(edges, Edge{p.path, i})
			}
		}
	}
	against, _ := Check(edges)
	for _, e := range against {
		if _, ok := testHarness[e]; !ok {
			t.Errorf("a test of %s imports %s, against the flow: list it in testHarness with why, or move the test", e.From, e.To)
		}
	}
	for e := range testHarness {
		if !slices.Contains(against, e) {
			t.Errorf("testHarness lists %s → %s, which no test imports against the flow any more: remove it", e.From, e.To)
		}
	}
}

// TestCheckCatchesBackEdges: planted imports against the flow, upwards and
// between parallel layers, are reported, and so is an unplaced package.
func TestCheckCatchesBackEdges(t *testing.T) {
	planted := []Edge{{"wire", "statemachine"}, {"fabric", "pcap"}, {"fabric/workload", "peer"},
		{"pcap", "conformance/active"}, {"statemachine", "internal/evtable"}}
	ok := []Edge{{"conformance/active", "peer"}, {"fabric/capture", "pcap"}, {"fabric/capture", "fabric"},
		{"modelcheck", "internal/evtable"}, {"fabric/rc", "fabric"}, {"cmd/mrc-sim", "fabric/capture"}}
	against, unplaced := Check(append(slices.Clone(ok), planted...))
	if !slices.Equal(sortEdges(against), sortEdges(planted)) {
		t.Errorf("Check found %v, want exactly the planted %v", against, planted)
	}
	if len(unplaced) != 0 {
		t.Errorf("unplaced %v", unplaced)
	}
	if _, u := Check([]Edge{{"newpkg", "wire"}}); !slices.Equal(u, []string{"newpkg"}) {
		t.Errorf("an unknown package was not reported: %v", u)
	}
}

func sortEdges(es []Edge) []Edge {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b Edge) int { return strings.Compare(a.From+" "+a.To, b.From+" "+b.To) })
	return es
}

// TestReadmeFlow: the README states the data flow as Line gives it, and its
// layout table names only packages that exist and covers every package
// (by itself or a folder above it).
func TestReadmeFlow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if !strings.Contains(readme, Line()) {
		t.Errorf("README.md lacks the data-flow line %q", Line())
	}
	i := strings.Index(readme, "## Layout")
	if i < 0 {
		t.Fatal("README.md has no ## Layout section")
	}
	section := readme[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	cell := regexp.MustCompile(`(?m)^\| ([^|]+) \|`)
	name := regexp.MustCompile("`([a-z0-9_/.-]+)/?`")
	var rows []string
	for _, m := range cell.FindAllStringSubmatch(section, -1) {
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			rows = append(rows, strings.TrimSuffix(n[1], "/"))
		}
	}
	ps := graph(t)
	exists := func(path string) bool {
		return slices.ContainsFunc(ps, func(p pkg) bool { return p.path == path || strings.HasPrefix(p.path, path+"/") })
	}
	for _, r := range rows {
		if !exists(r) {
			t.Errorf("README layout table names %s, which is no package", r)
		}
	}
	for _, p := range ps {
		covered := slices.ContainsFunc(rows, func(r string) bool { return p.path == r || strings.HasPrefix(p.path, r+"/") })
		if !covered {
			t.Errorf("README layout table does not cover package %s", p.path)
		}
	}
}
