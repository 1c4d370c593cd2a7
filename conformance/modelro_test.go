package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"testing"
)

// TestChecksKeepModelReadOnly: the observed connection model is updated
// by the engine (flow.go, sender.go, receiver.go, planes.go, ...) and read
// by the checks (checks_*.go). A check keeps its own state in a type of
// its own (check.state, connState), never in the model: no checks file
// writes a connection (flow) field, as payloadSize once set flow.mtu,
// which planes.go read, and as the checks' states once lived in flow
// fields (pkey, probeNs, echo, exhaustedBad, pendingNACK.overtaken). And
// no code outside the checks files names a check's state, its type or
// its slot: the engine cannot read what a check keeps.
func TestChecksKeepModelReadOnly(t *testing.T) {
	written, read := map[string]string{}, map[string]string{}
	var others []*ast.File
	var otherNames []string
	states := map[string]bool{}
	fset, srcs := packageSources(t)
	for _, src := range srcs {
		if src.checks {
			flowWrites(src.file, src.name, written)
			checkStateNames(src.file, states)
		} else {
			flowReads(src.file, src.name, read)
			others, otherNames = append(others, src.file), append(otherNames, src.name)
		}
	}
	var bad []string
	for f, at := range written {
		bad = append(bad, f+" (written in "+at+")")
	}
	for i, file := range others {
		ast.Inspect(file, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && states[id.Name] {
				bad = append(bad, "check state "+id.Name+" named in "+otherNames[i])
			}
			return true
		})
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("checks write connection state, or the engine names a check's state: %v", bad)
	}
	if len(read) == 0 || len(states) < 2 {
		t.Fatalf("%d flow fields read, %d check state names found: the test checks nothing", len(read), len(states))
	}
	// The detection itself: a check writing the model is caught.
	probe, err := parser.ParseFile(fset, "checks_probe.go", "package conformance\nfunc f(fl *flow, x *sentCtx) { fl.mtu = 1; x.fl.una++; delete(fl.bad, 1); fl.putNACK(1, pendingNACK{}) }", 0)
	if err != nil {
		t.Fatal(err)
	}
	caught := map[string]string{}
	flowWrites(probe, "checks_probe.go", caught)
	if len(caught) != 4 {
		t.Errorf("flowWrites found %v in a check writing mtu, una, bad and nackPend", caught)
	}
}

// checkStateNames records the names a checks file gives its checks'
// states: the types with an entries method (checkState) and the
// variables made by newConnState.
func checkStateNames(file *ast.File, out map[string]bool) {
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && d.Name.Name == "entries" {
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					out[id.Name] = true
				}
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				vs, ok := sp.(*ast.ValueSpec)
				if !ok || len(vs.Values) != 1 {
					continue
				}
				if c, ok := vs.Values[0].(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "newConnState" {
						out[vs.Names[0].Name] = true
					}
				}
			}
		}
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
func flowWrites(file ast.Node, name string, out map[string]string) {
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

// modelWriters names the engine, flow and point methods a checks file may
// call although they change the connection model, each with why.
var modelWriters = map[string]string{
	"rcumAt":      "a read: the flow field it writes, rcumLast, is the lookup's cursor, which changes no answer",
	"adoptClaim":  "the claims check holds feedback to the end of its clock tick (claimTies) and, judging it, takes the responder's word for a claimed PSN seen only with a bad ICRC: the model's arrivals follow the check's decision",
	"adoptUnseen": "as adoptClaim, for a claimed PSN the capture did not show arriving, once the claim is judged (a finding) or undecidable (sent before the capture began): one frame missing from the capture is one finding, not one per later SACK",
	"resyncCum":   "as adoptUnseen, for the cumulative point: once a cumulative claim of PSNs not seen arriving is judged, the model's point follows the responder's cack_psn or ACK psn",
}

// TestChecksCallNoModelWriter: a check changes the model neither by
// writing a flow field (TestChecksKeepModelReadOnly) nor by calling an
// engine, flow or point method, defined outside the checks files, that
// writes one; modelWriters names the exceptions and why.
func TestChecksCallNoModelWriter(t *testing.T) {
	writers := map[string]string{} // method name -> the field it writes
	var checks []*ast.File
	var checkNames []string
	fset, srcs := packageSources(t)
	for _, src := range srcs {
		if src.checks {
			checks, checkNames = append(checks, src.file), append(checkNames, src.name)
			continue
		}
		modelWriterMethods(src.file, writers)
	}
	var bad []string
	for i, file := range checks {
		bad = append(bad, modelWriterCalls(file, checkNames[i], writers)...)
	}
	for m := range modelWriters {
		if writers[m] == "" {
			bad = append(bad, m+" is in modelWriters but writes no flow field")
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("checks change the model through the engine: %v", bad)
	}
	if len(writers) < 5 {
		t.Fatalf("%d model-writing methods found: the test checks nothing", len(writers))
	}
	// The detection itself: a check advancing the cumulative point is caught.
	probe, err := parser.ParseFile(fset, "checks_probe.go", "package conformance\nfunc f(e *engine, x *fbCtx) { e.advanceRcum(x.fl) }", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := modelWriterCalls(probe, "checks_probe.go", writers); len(got) != 1 {
		t.Errorf("a check calling advanceRcum: found %v, want one call", got)
	}
}

// modelWriterCalls returns the calls in a checks file of the methods in
// writers that modelWriters does not name.
func modelWriterCalls(file *ast.File, name string, writers map[string]string) []string {
	var bad []string
	ast.Inspect(file, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if s, ok := c.Fun.(*ast.SelectorExpr); ok && writers[s.Sel.Name] != "" && modelWriters[s.Sel.Name] == "" {
			bad = append(bad, name+" calls "+s.Sel.Name+", which writes flow."+writers[s.Sel.Name])
		}
		return true
	})
	return bad
}

// modelWriterMethods records the methods of engine, flow and point in file
// whose bodies write a flow field, by the field written.
func modelWriterMethods(file *ast.File, out map[string]string) {
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Body == nil {
			continue
		}
		st, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if id, ok := st.X.(*ast.Ident); !ok || id.Name != "engine" && id.Name != "flow" && id.Name != "point" {
			continue
		}
		w := map[string]string{}
		flowWrites(fd.Body, fd.Name.Name, w)
		for f := range w {
			out[fd.Name.Name] = f
			break
		}
	}
}
