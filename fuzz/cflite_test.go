package fuzz

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzTarget is a Go native fuzz target: Function in the package whose
// directory is Dir (relative to the walked root), declared in a file of
// package Package.
type fuzzTarget struct{ Dir, Function, Package string }

func (t fuzzTarget) String() string { return t.Dir + " " + t.Function }

// testFiles parses the _test.go files under root, by directory relative
// to root.
func testFiles(root string) (map[string][]*ast.File, error) {
	out := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], f)
		return nil
	})
	return out, err
}

// fuzzFuncs calls fn for every Fuzz*(*testing.F) function of files.
func fuzzFuncs(files []*ast.File, fn func(*ast.File, *ast.FuncDecl)) {
	for _, f := range files {
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.FuncDecl)
			if !ok || d.Recv != nil || !strings.HasPrefix(d.Name.Name, "Fuzz") || len(d.Type.Params.List) != 1 {
				continue
			}
			if s, ok := d.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := s.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
					fn(f, d)
				}
			}
		}
	}
}

// fuzzTargets returns every fuzz target of the _test.go files under root,
// sorted.
func fuzzTargets(root string) ([]fuzzTarget, error) {
	dirs, err := testFiles(root)
	var out []fuzzTarget
	for dir, files := range dirs {
		fuzzFuncs(files, func(f *ast.File, d *ast.FuncDecl) {
			out = append(out, fuzzTarget{dir, d.Name.Name, f.Name.Name})
		})
	}
	slices.SortFunc(out, func(a, b fuzzTarget) int { return strings.Compare(a.String(), b.String()) })
	return out, err
}

// fTestingTB returns the calls, in the fuzz targets under root, that pass
// the target's *testing.F where a function of the same directory takes a
// testing.TB. The libFuzzer build replaces testing.F with one that does
// not implement testing.TB, so such a target does not compile there.
func fTestingTB(root string) ([]string, error) {
	dirs, err := testFiles(root)
	var out []string
	for dir, files := range dirs {
		tb := map[string][]int{} // function -> indexes of its testing.TB parameters
		for _, f := range files {
			for _, decl := range f.Decls {
				if d, ok := decl.(*ast.FuncDecl); ok && d.Recv == nil {
					i := 0
					for _, p := range d.Type.Params.List {
						sel, ok := p.Type.(*ast.SelectorExpr)
						isTB := ok && sel.Sel.Name == "TB" && fmt.Sprint(sel.X) == "testing"
						for range max(1, len(p.Names)) {
							if isTB {
								tb[d.Name.Name] = append(tb[d.Name.Name], i)
							}
							i++
						}
					}
				}
			}
		}
		fuzzFuncs(files, func(_ *ast.File, d *ast.FuncDecl) {
			if len(d.Type.Params.List[0].Names) == 0 {
				return
			}
			f := d.Type.Params.List[0].Names[0].Name
			ast.Inspect(d.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if id, ok := call.Fun.(*ast.Ident); ok {
					for _, i := range tb[id.Name] {
						if i >= len(call.Args) {
							continue
						}
						if a, ok := call.Args[i].(*ast.Ident); ok && a.Name == f {
							out = append(out, dir+" "+d.Name.Name+" calls "+id.Name)
						}
					}
				}
				return true
			})
		})
	}
	slices.Sort(out)
	return out, err
}

// externalTargets returns the targets declared in an external test
// package (package foo_test): go-118-fuzz-build, which builds the targets
// for libFuzzer in ClusterFuzzLite and OSS-Fuzz, finds a target only in
// the package itself (google/oss-fuzz#7923), so such a target never runs
// there.
func externalTargets(targets []fuzzTarget) []fuzzTarget {
	var out []fuzzTarget
	for _, t := range targets {
		if strings.HasSuffix(t.Package, "_test") {
			out = append(out, t)
		}
	}
	return out
}

var targetLine = regexp.MustCompile(`(?m)^[ \t]*target[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t]*$`)

// TestClusterFuzzLiteListsEveryTarget: .clusterfuzzlite/build.sh builds
// every Fuzz* function of the module, under a unique fuzzer name, and
// nothing else, so that a new target cannot be left out of continuous
// fuzzing; no target is in an external test package, which the libFuzzer
// build cannot build. The Dockerfile copies the build script and the
// project is Go.
func TestClusterFuzzLiteListsEveryTarget(t *testing.T) {
	targets, err := fuzzTargets("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 9 {
		t.Fatalf("found only %d fuzz targets: %v", len(targets), targets)
	}
	for _, x := range externalTargets(targets) {
		t.Errorf("%s is in the external test package %s: go-118-fuzz-build cannot build it; "+
			"declare it in package %s, or in a package of its own", x, x.Package, strings.TrimSuffix(x.Package, "_test"))
	}
	misuse, err := fTestingTB("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range misuse {
		t.Errorf("%s with its *testing.F as a testing.TB, which the libFuzzer build's testing.F does not implement: "+
			"give that parameter a narrower interface (fataler)", m)
	}
	var want []string
	for _, x := range targets {
		want = append(want, x.String())
	}
	b, err := os.ReadFile("../.clusterfuzzlite/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	names := map[string]bool{}
	for _, m := range targetLine.FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1]+" "+m[2])
		if names[m[3]] {
			t.Errorf("fuzzer name %s used twice", m[3])
		}
		names[m[3]] = true
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("build.sh does not build %s: add a line `target %s <name>`", w, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("build.sh builds %s, which is not a fuzz target of the module", g)
		}
	}
	for file, must := range map[string]string{
		"../.clusterfuzzlite/project.yaml":      "language: go",
		"../.clusterfuzzlite/Dockerfile":        "COPY .clusterfuzzlite/build.sh $SRC/",
		"../.github/workflows/cflite_pr.yml":    "google/clusterfuzzlite/actions/run_fuzzers@v1",
		"../.github/workflows/cflite_batch.yml": "mode: batch",
	} {
		b, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(b), must) {
			t.Errorf("%s: does not contain %q (%v)", file, must, err)
		}
	}
}

// TestExternalTargetReported: the check above reports a target planted in
// an external test package, and not one in the package itself.
func TestExternalTargetReported(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/a_test.go", "package a\n\nimport \"testing\"\n\nfunc FuzzIn(f *testing.F) {}\n")
	write(t, root, "a/x_test.go", "package a_test\n\nimport \"testing\"\n\nfunc FuzzOut(f *testing.F) {}\n")
	targets, err := fuzzTargets(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := externalTargets(targets); len(targets) != 2 || len(got) != 1 || got[0].String() != "a FuzzOut" {
		t.Fatalf("targets %v, external %v; want a FuzzOut alone reported", targets, got)
	}
}

// TestFTestingTBReported: the check above reports a target that passes
// its *testing.F to a helper taking testing.TB, and not one whose helper
// takes a narrower interface.
func TestFTestingTBReported(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/a_test.go", `package a

import "testing"

func seed(n int, t testing.TB) []byte { return nil }
func seed2(t interface{ Fatal(...any) }) []byte { return nil }

func FuzzTB(f *testing.F)     { f.Add(seed(1, f)) }
func FuzzNarrow(f *testing.F) { f.Add(seed2(f)) }
`)
	got, err := fTestingTB(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a FuzzTB calls seed"}) {
		t.Fatalf("reported %q; want FuzzTB's call of seed alone", got)
	}
}

// fakeCompile stands in for the base image's compile_native_go_fuzzer_v2
// with what it does that matters here, all of it read from its source and
// go-118-fuzz-build v2's: it looks for the target with a recursive grep
// of the package directory's .go files, and when none has it, prints so
// and exits 0 without building; go-118-fuzz-build overlays every _test.go
// file of the directory onto a non-test name, so any of another package
// (foo_test) fails the build with "found packages".
const fakeCompile = `#!/bin/bash -eu
dir=$(go list -tags gofuzz -f '{{.Dir}}' "$1")
if ! grep -r -l --include='*.go' "func $2(.*testing\.F" "$dir" >/dev/null; then
	echo "Could not find the function: func $2(f *testing.F)"
	exit 0
fi
pkg=$(go list -tags gofuzz -f '{{.Name}}' "$1")
for f in "$dir"/*_test.go; do
	p=$(sed -n 's/^package \([a-z_0-9]*\).*/\1/p' "$f" | head -n 1)
	if [ "$p" != "$pkg" ]; then
		echo "found packages $pkg and $p ($(basename "$f")) in $dir" >&2
		exit 1
	fi
done
touch "$OUT/$3"
`

// TestBuildScriptHidesExternalTests runs build.sh's target function on a
// small module whose package has an external test file (example_test.go,
// package a_test), with fakeCompile as the builder: the build succeeds,
// so the file was hidden, and the file is back afterwards. Without
// build.sh, the same builder fails on the same package (the planted
// case), and build.sh fails on a target that the builder silently skips.
func TestBuildScriptHidesExternalTests(t *testing.T) {
	script, err := filepath.Abs("../.clusterfuzzlite/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	src, out, bin := t.TempDir(), t.TempDir(), t.TempDir()
	mod := filepath.Join(src, "mrc")
	write(t, mod, "go.mod", "module example.com/m\n\ngo 1.22\n")
	write(t, mod, "a/a.go", "package a\n\nfunc A() int { return 1 }\n")
	write(t, mod, "a/fuzz_test.go", "package a\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) { A() }) }\n")
	write(t, mod, "a/example_test.go", "package a_test\n\nimport \"fmt\"\n\nfunc Example() { fmt.Println(1) }\n")
	write(t, mod, "b/b.go", "package b\n")
	write(t, mod, "b/b_test.go", "package b_test\n\nimport \"testing\"\n\nfunc FuzzB(f *testing.F) {}\n")
	write(t, bin, "compile_native_go_fuzzer_v2", fakeCompile)
	if err := os.Chmod(filepath.Join(bin, "compile_native_go_fuzzer_v2"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env string, args ...string) (string, error) {
		cmd := exec.Command("bash", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "SRC="+src, "OUT="+out, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"GOFLAGS=-mod=mod", "GOWORK=off", env)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if b, err := run("CFLITE_ONLY=a FuzzA a_fuzz", script); err != nil {
		t.Fatalf("build.sh on a package with an external test file: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "a_fuzz")); err != nil {
		t.Errorf("build.sh succeeded without building a_fuzz: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mod, "a/example_test.go")); err != nil {
		t.Errorf("build.sh did not put example_test.go back: %v", err)
	}
	if b, err := run("", filepath.Join(bin, "compile_native_go_fuzzer_v2"), "example.com/m/a", "FuzzA", "a_plain"); err == nil ||
		!strings.Contains(b, "found packages a and a_test") {
		t.Errorf("the stand-in builder did not fail on the external test file: %v\n%s", err, b)
	}
	if b, err := run("CFLITE_ONLY=b FuzzB b_fuzz", script); err == nil || !strings.Contains(b, "was not built") {
		t.Errorf("build.sh did not fail on a target the builder cannot find (an external one): %v\n%s", err, b)
	}
}

func write(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
