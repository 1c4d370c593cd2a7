package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// envID is the environment variable that selects the mutant a schemata
// test binary runs (unset or 0: none, the original code).
const envID = "MUTSCHEMA_ID"

// schemaFile is the file the rewriter adds to each rewritten package.
const schemaFile = "zz_mutschema.go"

// site is one mutated operator: the expression (or x++ statement) holding
// it becomes a closure that switches on the mutant ID.
type site struct {
	start, end int // byte offsets of the node
	opOff      int // byte offset of the operator
	op         token.Token
	incDec     bool
	typ        string // the Go type the closure returns (x's type for x++)
	muts       []*Mutant
	n          int // site number, for the markers
}

// rewriteResult says which mutants the schemata binary holds; the others
// (in constant expressions, or whose closure does not type-check) need a
// compile of their own, with why.
type rewriteResult struct {
	fallback map[int]string
}

// schemaPackage rewrites the package in dir (a private copy of the tree)
// so that each mutant of muts (all of files in dir) is taken when envID
// names it. It type-checks the result; a mutant whose closure does not
// type-check is left out and listed as a fallback, and the rewrite is
// made again without it.
func schemaPackage(root, dir string, muts []*Mutant) (*rewriteResult, error) {
	res := &rewriteResult{fallback: map[int]string{}}
	fset := token.NewFileSet()
	imp, err := exportImporter(fset, dir)
	if err != nil {
		return nil, err
	}
	orig, err := readPackage(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for n := range orig {
		names = append(names, n)
	}
	sort.Strings(names)
	for round := 0; ; round++ {
		if round == 50 {
			return nil, fmt.Errorf("%s: the schema still does not type-check after %d rounds", dir, round)
		}
		if err := writePackage(dir, orig); err != nil {
			return nil, err
		}
		files, info, pkg, errs := check(fset, imp, dir, names)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s does not type-check before the rewrite: %v", dir, errs[0])
		}
		var live []*Mutant
		for _, m := range muts {
			if _, ok := res.fallback[m.ID]; !ok {
				live = append(live, m)
			}
		}
		rewritten := map[string][]byte{}
		fileSites := map[string][]*site{}
		for _, af := range files {
			name := fset.File(af.Pos()).Name()
			rel, _ := filepath.Rel(root, name)
			var fm []*Mutant
			for _, m := range live {
				if m.File == filepath.ToSlash(rel) {
					fm = append(fm, m)
				}
			}
			if len(fm) == 0 {
				continue
			}
			sites := findSites(fset, af, info, pkg, fm, res.fallback)
			fileSites[name] = sites
			rewritten[name] = []byte(renderFile(orig[filepath.Base(name)], sites))
		}
		for name, b := range rewritten {
			if err := os.WriteFile(name, b, 0o644); err != nil {
				return nil, err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, schemaFile), []byte(schemaSupport(pkg.Name())), 0o644); err != nil {
			return nil, err
		}
		_, _, _, errs = check(fset, imp, dir, append(names, schemaFile))
		if len(errs) == 0 {
			return res, nil
		}
		for _, e := range errs {
			if err := blame(e, rewritten, fileSites, res.fallback); err != nil {
				return nil, err
			}
		}
	}
}

// exportImporter imports the packages dir's package and the schema's
// support file import from the compiler's export data, which go list
// -export builds (or finds in the build cache).
func exportImporter(fset *token.FileSet, dir string) (types.Importer, error) {
	cmd := exec.Command("go", "list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}", ".", "os", "strconv")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%v: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list -export in %s: %v", dir, err)
	}
	export := map[string]string{}
	for _, ln := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(ln, "\t"); ok && file != "" {
			export[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	}), nil
}

// readPackage returns the Go files of the package in dir (go list's
// GoFiles: the build's files, tests left out) by base name.
func readPackage(dir string) (map[string][]byte, error) {
	cmd := exec.Command("go", "list", "-f", "{{join .GoFiles \"\\n\"}}", ".")
	cmd.Dir = dir
	list, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, n := range strings.Fields(string(list)) {
		if n == schemaFile {
			continue
		}
		if out[n], err = os.ReadFile(filepath.Join(dir, n)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func writePackage(dir string, files map[string][]byte) error {
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return err
		}
	}
	if err := os.Remove(filepath.Join(dir, schemaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// check parses and type-checks the files of names in dir.
func check(fset *token.FileSet, imp types.Importer, dir string, names []string) ([]*ast.File, *types.Info, *types.Package, []types.Error) {
	var errs []types.Error
	var files []*ast.File
	for _, n := range names {
		af, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, nil, nil, []types.Error{{Fset: fset, Msg: err.Error()}}
		}
		files = append(files, af)
	}
	conf := types.Config{Importer: imp, Error: func(e error) {
		if te, ok := e.(types.Error); ok && !te.Soft {
			errs = append(errs, te)
		}
	}}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	pkg, _ := conf.Check(files[0].Name.Name, fset, files, info)
	return files, info, pkg, errs
}

var markerRE = regexp.MustCompile(`/\*(mut|site) (\d+)\*/|/\*end (mut|site) (\d+)\*/`)

// blame finds the innermost marked mutant case or site around a type
// error of the rewritten code and sends its mutants to the fallback.
func blame(e types.Error, rewritten map[string][]byte, fileSites map[string][]*site, fallback map[int]string) error {
	p := e.Fset.Position(e.Pos)
	src, ok := rewritten[p.Filename]
	if !ok {
		return fmt.Errorf("the rewritten package does not type-check outside the mutated files: %v", e)
	}
	type span struct {
		kind     string
		n        int
		from, to int
	}
	var open []span
	var best *span
	for _, ix := range markerRE.FindAllSubmatchIndex(src, -1) {
		if ix[2] >= 0 {
			n, _ := strconv.Atoi(string(src[ix[4]:ix[5]]))
			open = append(open, span{kind: string(src[ix[2]:ix[3]]), n: n, from: ix[0]})
			continue
		}
		s := open[len(open)-1]
		open = open[:len(open)-1]
		s.to = ix[1]
		if s.from <= p.Offset && p.Offset < s.to && (best == nil || s.to-s.from < best.to-best.from) {
			best = &s
		}
	}
	if best == nil {
		return fmt.Errorf("the rewritten package does not type-check outside any mutant: %v", e)
	}
	why := "its closure does not type-check: " + e.Msg
	if best.kind == "mut" {
		fallback[best.n] = why
		return nil
	}
	for _, m := range fileSites[p.Filename][best.n-1].muts {
		fallback[m.ID] = why
	}
	return nil
}

// findSites locates each mutant's node in af and decides whether a closure
// can hold it; those that cannot go to fallback with why.
func findSites(fset *token.FileSet, af *ast.File, info *types.Info, pkg *types.Package, muts []*Mutant, fallback map[int]string) []*site {
	at := map[[2]int][]*Mutant{}
	for _, m := range muts {
		k := [2]int{m.Line, m.Col}
		at[k] = append(at[k], m)
	}
	consts := constRanges(af)
	qual := qualifier(af, pkg)
	var sites []*site
	ast.Inspect(af, func(n ast.Node) bool {
		var opPos token.Pos
		var op token.Token
		switch e := n.(type) {
		case *ast.BinaryExpr:
			opPos, op = e.OpPos, e.Op
		case *ast.UnaryExpr:
			opPos, op = e.OpPos, e.Op
		case *ast.IncDecStmt:
			opPos, op = e.TokPos, e.Tok
		default:
			return true
		}
		p := fset.Position(opPos)
		ms := at[[2]int{p.Line, p.Column}]
		if len(ms) == 0 {
			return true
		}
		delete(at, [2]int{p.Line, p.Column})
		s := &site{start: fset.Position(n.Pos()).Offset, end: fset.Position(n.End()).Offset,
			opOff: p.Offset, op: op, muts: ms}
		typ, why := siteType(n, info, qual, consts)
		if why != "" {
			for _, m := range ms {
				fallback[m.ID] = why
			}
			return true
		}
		s.typ, s.incDec = typ, op == token.INC || op == token.DEC
		sites = append(sites, s)
		return true
	})
	for _, ms := range at {
		for _, m := range ms {
			fallback[m.ID] = "operator not found"
		}
	}
	sort.Slice(sites, func(i, j int) bool { return sites[i].start < sites[j].start })
	for i, s := range sites {
		s.n = i + 1
	}
	return sites
}

// constRanges are the spans where only constant expressions may stand.
func constRanges(af *ast.File) [][2]token.Pos {
	var out [][2]token.Pos
	ast.Inspect(af, func(n ast.Node) bool {
		switch d := n.(type) {
		case *ast.GenDecl:
			if d.Tok == token.CONST {
				out = append(out, [2]token.Pos{d.Pos(), d.End()})
			}
		case *ast.ArrayType:
			if d.Len != nil {
				out = append(out, [2]token.Pos{d.Len.Pos(), d.Len.End()})
			}
		}
		return true
	})
	return out
}

// qualifier names other packages as af imports them; a package af does
// not import by a usable name makes the type unnameable (marked "\x00").
func qualifier(af *ast.File, pkg *types.Package) types.Qualifier {
	names := map[string]string{}
	for _, is := range af.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		name := ""
		if is.Name != nil {
			name = is.Name.Name
		}
		names[path] = name
	}
	return func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		n, ok := names[p.Path()]
		switch {
		case !ok || n == "_" || n == ".":
			return "\x00"
		case n == "":
			return p.Name()
		}
		return n
	}
}

// siteType is the type a closure for node n returns, or why none can.
func siteType(n ast.Node, info *types.Info, qual types.Qualifier, consts [][2]token.Pos) (string, string) {
	for _, r := range consts {
		if n.Pos() >= r[0] && n.Pos() < r[1] {
			return "", "in a constant expression"
		}
	}
	var t types.Type
	if s, ok := n.(*ast.IncDecStmt); ok {
		t = info.TypeOf(s.X)
	} else {
		tv := info.Types[n.(ast.Expr)]
		t = tv.Type
		if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			if b.Kind() != types.UntypedBool {
				return "", "an untyped constant"
			}
			t = types.Typ[types.Bool]
		}
	}
	if t == nil {
		return "", "no type"
	}
	ts := types.TypeString(t, qual)
	if strings.Contains(ts, "\x00") {
		return "", "its type is not nameable in the file"
	}
	return ts, ""
}

// renderFile is src with every site made a closure.
func renderFile(src []byte, sites []*site) string {
	r := renderer{src: src, sites: sites}
	return r.span(0, len(src), nil, token.ILLEGAL)
}

type renderer struct {
	src   []byte
	sites []*site
}

// span renders src[lo:hi], each outermost site in it (other than self) as
// its closure, and self's operator as repl when repl is not ILLEGAL.
func (r *renderer) span(lo, hi int, self *site, repl token.Token) string {
	var b strings.Builder
	pos := lo
	for _, s := range r.sites {
		if s == self || s.start < pos || s.end > hi {
			continue
		}
		b.WriteString(r.text(pos, s.start, self, repl))
		b.WriteString(r.closure(s))
		pos = s.end
	}
	b.WriteString(r.text(pos, hi, self, repl))
	return b.String()
}

// text is src[lo:hi] with self's operator replaced if it lies there.
func (r *renderer) text(lo, hi int, self *site, repl token.Token) string {
	if self == nil || repl == token.ILLEGAL || self.opOff < lo || self.opOff >= hi {
		return string(r.src[lo:hi])
	}
	old := len(self.op.String())
	return string(r.src[lo:self.opOff]) + repl.String() + string(r.src[self.opOff+old:hi])
}

// closure renders site s: an expression becomes a function literal called
// in place whose switch takes the mutated form of the selected mutant;
// x++ becomes x += step, step being -1 when the mutant is selected.
func (r *renderer) closure(s *site) string {
	if s.incDec {
		x := strings.TrimSpace(r.span(s.start, s.opOff, s, token.ILLEGAL))
		op := "+="
		if s.op == token.DEC {
			op = "-="
		}
		return fmt.Sprintf("/*site %d*/ %s %s /*mut %d*/ mutschemaStep[%s](%d) /*end mut %d*/ /*end site %d*/",
			s.n, x, op, s.muts[0].ID, s.typ, s.muts[0].ID, s.muts[0].ID, s.n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "/*site %d*/ func() %s { switch mutschemaID {", s.n, s.typ)
	for _, m := range s.muts {
		fmt.Fprintf(&b, " case %d: return /*mut %d*/ %s /*end mut %d*/;", m.ID, m.ID, r.span(s.start, s.end, s, m.Repl), m.ID)
	}
	fmt.Fprintf(&b, " }; return %s }() /*end site %d*/", r.span(s.start, s.end, s, token.ILLEGAL), s.n)
	return b.String()
}

// schemaSupport is the file added to a rewritten package: the selected
// mutant, and the step of a mutated x++ or x--.
func schemaSupport(pkg string) string {
	return fmt.Sprintf(`package %s

import (
	"os"
	"strconv"
)

var mutschemaID, _ = strconv.Atoi(os.Getenv(%q))

type mutschemaNumber interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64
}

// mutschemaStep is 1, or -1 (wrapping for unsigned types) when mutant k is selected.
func mutschemaStep[T mutschemaNumber](k int) T {
	var one T = 1
	if mutschemaID == k {
		return 0 - one
	}
	return one
}
`, pkg, envID)
}
