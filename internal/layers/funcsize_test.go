package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// MaxFuncLines is the house limit on a function's length, from its func
// line to its closing brace (DEVELOPERS.md: small functions).
const MaxFuncLines = 100

// longFuncAllowed lists the functions over MaxFuncLines that may stay for
// now, by file and name ("file:Func" or "file:Recv.Func"), or whole files
// ("file:*") while another change rewrites them. It only shrinks: an entry
// that no longer names a long function fails the test, so a split removes
// its line.
var longFuncAllowed = map[string]string{}

// longFunc is one function over MaxFuncLines.
type longFunc struct {
	file, name string
	lines      int
}

func (f longFunc) key() string { return f.file + ":" + f.name }

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// longFuncs lists the functions over max lines in the Go files under root,
// except in generated files and functions whose body is one table literal.
func longFuncs(root string, max int) ([]longFunc, error) {
	var out []longFunc
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(src) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n <= max || oneTable(fd.Body) {
				continue
			}
			out = append(out, longFunc{rel, FuncName(fd), n})
		}
		return nil
	})
	return out, err
}

// oneTable reports whether body is a single statement whose value is one
// composite literal: returned, assigned, or passed as a call's argument
// (a case registration).
func oneTable(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	var exprs []ast.Expr
	switch s := body.List[0].(type) {
	case *ast.ReturnStmt:
		exprs = s.Results
	case *ast.AssignStmt:
		exprs = s.Rhs
	case *ast.ExprStmt:
		exprs = []ast.Expr{s.X}
	case *ast.DeclStmt:
		if g, ok := s.Decl.(*ast.GenDecl); ok && len(g.Specs) == 1 {
			if v, ok := g.Specs[0].(*ast.ValueSpec); ok {
				exprs = v.Values
			}
		}
	}
	if len(exprs) != 1 {
		return false
	}
	e := exprs[0]
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 {
		e = c.Args[0]
	}
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	_, ok := e.(*ast.CompositeLit)
	return ok
}

func allowed(f longFunc) bool {
	_, one := longFuncAllowed[f.key()]
	_, file := longFuncAllowed[f.file+":*"]
	return one || file
}

func TestFunctionSize(t *testing.T) {
	long, err := longFuncs(filepath.Join("..", ".."), MaxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range long {
		seen[f.key()], seen[f.file+":*"] = true, true
		if !allowed(f) {
			t.Errorf("%s: %s is %d lines (limit %d): split it along the protocol's structure", f.file, f.name, f.lines, MaxFuncLines)
		}
	}
	var stale []string
	for k := range longFuncAllowed {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	for _, k := range stale {
		t.Errorf("longFuncAllowed lists %s, which has no function over %d lines: remove the entry", k, MaxFuncLines)
	}
}

// TestFunctionSizeCatchesLongFunc plants a long function and a long table
// and checks that only the function is reported.
func TestFunctionSizeCatchesLongFunc(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("package p\n\nfunc long() int {\n\tx := 0\n")
	for i := 0; i < MaxFuncLines; i++ {
		b.WriteString("\tx++\n")
	}
	b.WriteString("\treturn x\n}\n\nfunc table() []int {\n\treturn []int{\n")
	for i := 0; i < MaxFuncLines; i++ {
		fmt.Fprintf(&b, "\t\t%d,\n", i)
	}
	b.WriteString("\t}\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	long, err := longFuncs(dir, MaxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) != 1 || long[0].name != "long" || long[0].lines != MaxFuncLines+4 {
		t.Fatalf("got %+v, want only long (%d lines)", long, MaxFuncLines+4)
	}
}
