package scripts

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/internal/layers"
)

// module is the prefix of this module's functions' names in a profile.
const module = layers.Module + "/"

// defaultPGO is the profile go build compiles mrc-conform with, which
// pgo.sh writes; moduleRoot is the module's directory.
const (
	defaultPGO = "../cmd/mrc-conform/default.pgo"
	moduleRoot = ".."
)

// TestDefaultPGO: default.pgo, the profile go build compiles mrc-conform
// with, is a CPU profile whose hottest functions of this module include
// the judge's, the decoder's and the reader's, and each still exists: a profile left behind
// by a change that renamed or removed them no longer guides the build
// (regenerate it with scripts/pgo.sh).
func TestDefaultPGO(t *testing.T) {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=200", defaultPGO).Output()
	if err != nil {
		t.Fatalf("go tool pprof -top default.pgo: %v", err)
	}
	hot := profileFuncs(string(out), 25)
	pkgs := map[string]bool{}
	for _, f := range hot {
		pkgs[strings.SplitN(strings.TrimPrefix(f, module), ".", 2)[0]] = true
	}
	if !pkgs["conformance"] || !pkgs["wire"] || !pkgs["pcap"] {
		t.Errorf("default.pgo's hottest functions of the module come from %v, want the judge's (conformance), the decoder's (wire) and the reader's (pcap): %v", pkgs, hot)
	}
	if gone := missingFuncs(t, hot, moduleRoot); len(gone) > 0 {
		t.Errorf("default.pgo is stale: hot functions it names are gone from the tree (%s); run scripts/pgo.sh", strings.Join(gone, ", "))
	}
}

// TestPGOScriptParses: pgo.sh, which regenerates default.pgo, is valid
// bash.
func TestPGOScriptParses(t *testing.T) {
	if out, err := exec.Command("bash", "-n", "pgo.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n scripts/pgo.sh: %v\n%s", err, out)
	}
}

// TestMissingFuncs: missingFuncs finds functions and methods (of generic
// types too) by their names in a profile, and reports one that is not in
// the tree.
func TestMissingFuncs(t *testing.T) {
	names := []string{
		module + "conformance.(*engine).frame",
		module + "conformance.(*psnMap[go.shape.uint64]).del",
		module + "conformance.(*psnMap[go.shape.*github.com/openmrc/mrc/conformance.arrival]).get",
		module + "conformance.(*psnMap[go.shape.struct { github.com/openmrc/mrc/conformance.frame int; github.com/openmrc/mrc/conformance.ns int64 }]).del",
		module + "wire.(*Codec).Decode",
		module + "conformance.sackCurrent",
		module + "conformance.(*engine).frameGone",
		module + "wire.decodeGone",
	}
	got := missingFuncs(t, names, moduleRoot)
	if strings.Join(got, " ") != names[6]+" "+names[7] {
		t.Errorf("missingFuncs = %v, want the last two of %v", got, names)
	}
}

// profileFuncs returns the first n functions of this module in pprof -top
// output, closures and runtime-made wrappers left out.
func profileFuncs(top string, n int) []string {
	var out []string
	for _, l := range strings.Split(top, "\n") {
		// flat flat% sum% cum cum% name, and a generic function's name
		// may hold spaces.
		f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(l), " (inline)"))
		if len(f) < 6 || !strings.HasPrefix(f[5], module) {
			continue
		}
		name := strings.Join(f[5:], " ")
		if last := name[strings.LastIndexByte(name, '.')+1:]; strings.HasPrefix(last, "func") || strings.HasPrefix(last, "gowrap") {
			continue
		}
		if out = append(out, name); len(out) == n {
			break
		}
	}
	return out
}

// missingFuncs returns the names (as a profile writes them: path.func,
// path.(*T).method, path.T.method) of functions not declared in the
// non-test Go files of their package below root, the module's directory.
func missingFuncs(t *testing.T, names []string, root string) []string {
	t.Helper()
	decls := map[string]map[string]bool{} // package directory: "T.method" and "func"
	var gone []string
	for _, name := range names {
		// The module's package paths hold no dots: the first ends the
		// package's directory.
		dir, sym, _ := strings.Cut(strings.TrimPrefix(name, module), ".")
		if decls[dir] == nil {
			decls[dir] = packageDecls(t, filepath.Join(root, dir))
		}
		if !decls[dir][profileSym(sym)] {
			gone = append(gone, name)
		}
	}
	return gone
}

// profileSym turns a profile's "(*T[go.shape.int]).m", "T.m" or "f" into
// "T.m" or "f".
func profileSym(s string) string {
	recv, m, ok := strings.Cut(s, ").")
	if !ok {
		return s
	}
	recv = strings.TrimPrefix(strings.TrimPrefix(recv, "("), "*")
	if i := strings.IndexByte(recv, '['); i >= 0 {
		recv = recv[:i]
	}
	return recv + "." + m
}

// packageDecls returns the functions ("f") and methods ("T.m") declared in
// the non-test Go files of dir.
func packageDecls(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				out[layers.FuncName(fd)] = true
			}
		}
	}
	return out
}
