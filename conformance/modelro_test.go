package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"
)

// checkOwned names the connection (flow) fields a check writes that code
// outside the checks files also reads, each with why: a check's own state
// kept in a model entry it shares. Any other field a check writes is read
// by checks alone.
var checkOwned = map[string]string{
	"nackPend": "pendingNACK.overtaken, set by retransmitFirst (putNACK), is the check's mark on the model's entry; the model adds and removes entries",
}

// TestChecksKeepModelReadOnly: the observed connection model is updated
// by the engine (flow.go, sender.go, receiver.go, planes.go, ...) and read
// by the checks (checks_*.go); a field a check writes is its own state,
// which no code outside the checks reads (checkOwned names the exceptions
// and why). A check writing what the engine reads, as payloadSize once
// set flow.mtu, which planes.go read, fails.
func TestChecksKeepModelReadOnly(t *testing.T) {
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	written, read := map[string]string{}, map[string]string{}
	for _, ent := range ents {
		n := ent.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(n, "checks_") {
			flowWrites(file, n, written)
		} else {
			flowReads(file, n, read)
		}
	}
	var bad []string
	for f, at := range written {
		if where, ok := read[f]; ok && checkOwned[f] == "" {
			bad = append(bad, f+" (written in "+at+", read in "+where+")")
		}
	}
	for f := range checkOwned {
		if _, ok := written[f]; !ok {
			bad = append(bad, f+" is in checkOwned but no check writes it")
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("checks write connection state the engine reads: %v", bad)
	}
	if len(written) == 0 || len(read) == 0 {
		t.Fatal("no flow field found written or read: the test checks nothing")
	}
}

// flowFields are the names of flow's fields and methods.
var flowFields = func() map[string]bool {
	m := map[string]bool{}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "flow.go", nil, 0)
	if err != nil {
		return m
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "flow" {
			for _, f := range ts.Type.(*ast.StructType).Fields.List {
				for _, id := range f.Names {
					m[id.Name] = true
				}
			}
		}
		return true
	})
	return m
}()

// mutators are the flow methods that change a field, by the field.
var mutators = map[string]string{"putNACK": "nackPend", "delNACK": "nackPend"}

// flowWrites records the flow fields file assigns to (fl.X = ...,
// fl.X[k] = ..., fl.X++, delete(fl.X, k)) or changes through a mutator.
func flowWrites(file *ast.File, name string, out map[string]string) {
	field := func(e ast.Expr) {
		if ix, ok := e.(*ast.IndexExpr); ok {
			e = ix.X
		}
		if s, ok := e.(*ast.SelectorExpr); ok && flowFields[s.Sel.Name] && isFlowVar(s.X) {
			out[s.Sel.Name] = name
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				field(l)
			}
		case *ast.IncDecStmt:
			field(n.X)
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "delete" && len(n.Args) > 0 {
				field(n.Args[0])
			}
			if s, ok := n.Fun.(*ast.SelectorExpr); ok && mutators[s.Sel.Name] != "" && isFlowVar(s.X) {
				out[mutators[s.Sel.Name]] = name
			}
		}
		return true
	})
}

// flowReads records the flow fields file names at all.
func flowReads(file *ast.File, name string, out map[string]string) {
	ast.Inspect(file, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok && flowFields[s.Sel.Name] && isFlowVar(s.X) {
			out[s.Sel.Name] = name
		}
		return true
	})
}

// isFlowVar reports whether e names a flow the way the checks do: fl,
// x.fl or c.fl.
func isFlowVar(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "fl"
	case *ast.SelectorExpr:
		return e.Sel.Name == "fl"
	}
	return false
}
