package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// srcFile is one of the package's Go files, tests aside, parsed.
type srcFile struct {
	name   string
	file   *ast.File
	checks bool // a checks file (checks_*.go)
}

// packageSources parses the package's Go files but its tests, in name
// order, for the tests that read the code's structure, with the file set
// that places their nodes.
func packageSources(t testing.TB) (*token.FileSet, []srcFile) {
	t.Helper()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []srcFile
	for _, ent := range ents {
		n := ent.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, srcFile{n, file, strings.HasPrefix(n, "checks_")})
	}
	if len(out) == 0 {
		t.Fatal("no Go file found: the test reads nothing")
	}
	return fset, out
}
