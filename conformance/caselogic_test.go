package conformance

import (
	"go/ast"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// caseNamers are the non-checks files that may name a case or requirement
// value, each with why: the registration machinery.
var caseNamers = map[string]string{
	"check.go":   "declares caseID and caseReq and registers the checks",
	"catalog.go": "checks the catalog the checks declare",
}

// TestCaseLogicInChecksFiles: every decision of a passive case (a pass, a
// failure, an undecided observation) is made by its check, in the checks
// file of its area (checks_*.go). The engine's files keep the model and
// call hooks: none names a case (a caseID made by passiveCase) or a
// requirement a check cites (a caseReq made by caseID.req), but the
// registration machinery (caseNamers). A file that records a finding of
// its own, as badicrc.go once recorded MRC-WIRE-ICRC-001's, fails.
func TestCaseLogicInChecksFiles(t *testing.T) {
	files := map[string]*ast.File{}
	named := map[string]bool{} // the case and requirement values
	fset, srcs := packageSources(t)
	for _, src := range srcs {
		files[src.name] = src.file
		caseValues(src.file, named)
	}
	if len(named) < 2 {
		t.Fatal("no case or requirement value found: the test checks nothing")
	}
	var bad []string
	for n, file := range files {
		if strings.HasPrefix(n, "checks_") || caseNamers[n] != "" {
			continue
		}
		ast.Inspect(file, func(x ast.Node) bool {
			if id, ok := x.(*ast.Ident); ok && named[id.Name] {
				bad = append(bad, fset.Position(id.Pos()).String()+" names "+id.Name)
			}
			return true
		})
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("case logic outside the checks files (%d):\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// caseValues records the package variables file makes with passiveCase
// (caseIDs) or caseID.req (caseReqs).
func caseValues(file *ast.File, out map[string]bool) {
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, v := range vs.Values {
				call, ok := v.(*ast.CallExpr)
				if !ok || i >= len(vs.Names) {
					continue
				}
				switch f := call.Fun.(type) {
				case *ast.Ident:
					if f.Name == "passiveCase" {
						out[vs.Names[i].Name] = true
					}
				case *ast.SelectorExpr:
					if f.Sel.Name == "req" {
						out[vs.Names[i].Name] = true
					}
				}
			}
		}
	}
}
