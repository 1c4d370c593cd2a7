package fuzz

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// moduleTargets returns every Go native fuzz target of the module as
// "package-dir Function", read from the _test.go files.
func moduleTargets(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
				continue
			}
			if s, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := s.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
					rel, _ := filepath.Rel("..", filepath.Dir(path))
					out = append(out, filepath.ToSlash(rel)+" "+fn.Name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

var targetLine = regexp.MustCompile(`(?m)^target\s+(\S+)\s+(\S+)\s+(\S+)\s*$`)

// TestClusterFuzzLiteListsEveryTarget: .clusterfuzzlite/build.sh builds
// every Fuzz* function of the module, under a unique fuzzer name, and
// nothing else, so that a new target cannot be left out of continuous
// fuzzing. The Dockerfile copies the build script and the project is Go.
func TestClusterFuzzLiteListsEveryTarget(t *testing.T) {
	want := moduleTargets(t)
	if len(want) < 9 {
		t.Fatalf("found only %d fuzz targets: %v", len(want), want)
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
	sort.Strings(got)
	for _, w := range want {
		if _, ok := sort.Find(len(got), func(i int) int { return strings.Compare(w, got[i]) }); !ok {
			t.Errorf("build.sh does not build %s: add a line `target %s <name>`", w, w)
		}
	}
	for _, g := range got {
		if _, ok := sort.Find(len(want), func(i int) int { return strings.Compare(g, want[i]) }); !ok {
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
