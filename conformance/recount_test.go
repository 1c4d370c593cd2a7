package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// notCounted names the flow's containers that recount leaves out of
// MaxEntries, each with the bound that holds it instead. A container
// neither counted nor named here fails TestRecountCountsEveryContainer.
var notCounted = map[string]string{
	"planes":    "at most 64 planes (planeBits, addPlane)",
	"unaHist":   "trimmed to 128 of 256 events (sender.go)",
	"nackTrims": "the PSNs of nackPend's trimmed entries: no more than nackPend, which is counted",
	"dynMPR":    "trimmed to 32 of 64 events (sender.go)",
	"arrFree":   "free list of arrivals: at most the arrivals held, which arrived counts, plus one chunk of 64",
	"recent":    "a ring of recentArrivals",
	"ownP":      "the pointers of the states own holds, which recount counts",
	"recentIdx": "indexes recent's entries, at most recentArrivals",
	"rcumHist":  "trimmed by 512 events when full (compactRcum)",
	"preBase":   "the PSNs of one SACK bitmap, at most 64 plus one",
	"tl":        "a timeline ring of timelineEvents",
	"evSeen":    "a fixed array of evSeenSlots",
	"copies":    "one entry per interface the flow's writes were seen on, at most MaxInterfaces (countCopy)",
	"copyAt":    "a fixed array of MaxInterfaces, indexing copies",
}

// TestRecountCountsEveryContainer: every map, slice and table of a
// connection (flow) is counted by recount, which holds the connections'
// entries to MaxEntries, or is named in notCounted with its own bound, so
// that a container added to flow and left out of the count is caught.
func TestRecountCountsEveryContainer(t *testing.T) {
	counted := recountFields(t)
	tables := lenTypes(t)
	var missing, stale []string
	ft := reflect.TypeOf(flow{})
	for i := 0; i < ft.NumField(); i++ {
		f := ft.Field(i)
		if !isContainer(f.Type, tables) {
			continue
		}
		_, exempt := notCounted[f.Name]
		switch {
		case counted[f.Name] && exempt:
			stale = append(stale, f.Name)
		case !counted[f.Name] && !exempt:
			missing = append(missing, f.Name)
		}
	}
	for name := range notCounted {
		if f, ok := ft.FieldByName(name); !ok || !isContainer(f.Type, tables) {
			stale = append(stale, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("flow's containers %v are neither counted by recount (engine.go) nor named in notCounted with their bound", missing)
	}
	if len(stale) > 0 {
		t.Errorf("notCounted names %v, which recount counts or flow has no container of", stale)
	}
}

// recountFields returns the flow fields recount's body reads (f.X).
func recountFields(t *testing.T) map[string]bool {
	fs := token.NewFileSet()
	file, err := parser.ParseFile(fs, "engine.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "recount" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := s.X.(*ast.Ident); ok && id.Name == "f" {
					out[s.Sel.Name] = true
				}
			}
			return true
		})
	}
	if len(out) == 0 {
		t.Fatal("engine.go: no recount reading a flow f")
	}
	return out
}

// isContainer reports whether a field of type typ can hold a number of
// entries: a map, a slice, an array of more than one element, a pointer
// to something, or one of the package's tables (tables: the types with a
// len method).
func isContainer(typ reflect.Type, tables map[string]bool) bool {
	switch typ.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer:
		return true
	case reflect.Array:
		return typ.Len() > 1
	}
	name, _, _ := strings.Cut(typ.Name(), "[") // psnMap[V]'s instances
	return tables[name]
}

// lenTypes returns the names of the package's types with a len method,
// which reflect cannot see (it is not exported).
func lenTypes(t *testing.T) map[string]bool {
	out := map[string]bool{}
	_, srcs := packageSources(t)
	for _, src := range srcs {
		for _, d := range src.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "len" {
				continue
			}
			typ := fn.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if ix, ok := typ.(*ast.IndexExpr); ok {
				typ = ix.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				out[id.Name] = true
			}
		}
	}
	return out
}

// notCountedState names the containers of the checks' states (check.state)
// that their entries method leaves out of MaxEntries, as type.field, each
// with the bound that holds it instead.
var notCountedState = map[string]string{
	"claimTies.held": "at most maxClaimTies (holdOrJudge)",
	"dcidState.pend": "two dest_qp groups of at most pendSample frames each (qpPending, hold)",
}

// TestCheckStatesCountEveryContainer: every map, slice and table of a
// check's own state on a connection (check.state) is counted by the
// state's entries method, which recount adds to the connections' entries
// (flow.own), or is named in notCountedState with its own bound, so that a
// container added to a check's state and left out of the count is caught.
func TestCheckStatesCountEveryContainer(t *testing.T) {
	tables := lenTypes(t)
	counted := entriesFields(t)
	var missing []string
	n := 0
	for _, c := range order {
		if c.state == nil {
			continue
		}
		n++
		st := reflect.TypeOf(c.state.make())
		if st.Kind() != reflect.Pointer || st.Elem().Kind() != reflect.Struct {
			t.Errorf("%s: state %s is not a pointer to a struct", c.cs, st)
			continue
		}
		typ := st.Elem()
		if _, ok := counted[typ.Name()]; !ok {
			t.Errorf("%s: no entries method on *%s found in the checks files", c.cs, typ.Name())
			continue
		}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := typ.Name() + "." + f.Name
			if isContainer(f.Type, tables) && !counted[typ.Name()][f.Name] && notCountedState[name] == "" {
				missing = append(missing, name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("check states' containers %v are neither counted by their entries method nor named in notCountedState with their bound", missing)
	}
	if n < 2 {
		t.Fatalf("%d checks keep a state: the test checks nothing", n)
	}
}

// entriesFields returns, by state type, the fields its entries method
// reads (recv.X), from the checks files.
func entriesFields(t *testing.T) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	_, srcs := packageSources(t)
	for _, src := range srcs {
		if !src.checks {
			continue
		}
		for _, d := range src.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "entries" {
				continue
			}
			recv := fn.Recv.List[0]
			typ := recv.Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			id, ok := typ.(*ast.Ident)
			if !ok {
				continue
			}
			fields := map[string]bool{}
			out[id.Name] = fields
			if len(recv.Names) == 0 {
				continue // an unnamed receiver reads no field
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if s, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := s.X.(*ast.Ident); ok && x.Name == recv.Names[0].Name {
						fields[s.Sel.Name] = true
					}
				}
				return true
			})
		}
	}
	return out
}
