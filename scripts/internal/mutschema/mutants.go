package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
)

// Type is a mutation type, named as gremlins v0.6.0 names it so that rows
// of either tool compare.
type Type string

// The mutation types gremlins v0.6.0 enables by default.
const (
	ArithmeticBase       Type = "ARITHMETIC_BASE"
	ConditionalsBoundary Type = "CONDITIONALS_BOUNDARY"
	ConditionalsNegation Type = "CONDITIONALS_NEGATION"
	IncrementDecrement   Type = "INCREMENT_DECREMENT"
	InvertNegatives      Type = "INVERT_NEGATIVES"
)

// replacement gives, per mutation type, the operator each operator becomes.
var replacement = map[Type]map[token.Token]token.Token{
	ArithmeticBase: {token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO,
		token.QUO: token.MUL, token.REM: token.MUL},
	ConditionalsBoundary: {token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ,
		token.GEQ: token.GTR},
	ConditionalsNegation: {token.EQL: token.NEQ, token.NEQ: token.EQL, token.LEQ: token.GTR,
		token.GTR: token.LEQ, token.LSS: token.GEQ, token.GEQ: token.LSS},
	IncrementDecrement: {token.INC: token.DEC, token.DEC: token.INC},
	InvertNegatives:    {token.SUB: token.ADD},
}

// typesOf lists the mutation types of an operator in gremlins' order. A
// '-', unary or binary, has both INVERT_NEGATIVES and ARITHMETIC_BASE
// (gremlins lists both; each makes it '+').
var typesOf = map[token.Token][]Type{
	token.ADD: {ArithmeticBase}, token.SUB: {InvertNegatives, ArithmeticBase},
	token.MUL: {ArithmeticBase}, token.QUO: {ArithmeticBase}, token.REM: {ArithmeticBase},
	token.LSS: {ConditionalsBoundary, ConditionalsNegation}, token.LEQ: {ConditionalsBoundary, ConditionalsNegation},
	token.GTR: {ConditionalsBoundary, ConditionalsNegation}, token.GEQ: {ConditionalsBoundary, ConditionalsNegation},
	token.EQL: {ConditionalsNegation}, token.NEQ: {ConditionalsNegation},
	token.INC: {IncrementDecrement}, token.DEC: {IncrementDecrement},
}

// Mutant is one mutation of one operator. ID numbers the mutants of a
// run from 1; the test binaries take the mutated branch of the mutant
// whose ID the environment variable envID names.
type Mutant struct {
	ID   int
	File string // slash path relative to the module root
	Line int
	Col  int // byte column of the operator, from 1
	Type Type
	Op   token.Token // the operator
	Repl token.Token // what it becomes
	Text string      // the source line, trimmed
}

// Key names a mutant as scripts/mutate-allow.txt and gremlins do.
func (m *Mutant) Key() string { return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Col, m.Type) }

// String is the key and the mutated operator.
func (m *Mutant) String() string { return fmt.Sprintf("%s (%s → %s)", m.Key(), m.Op, m.Repl) }

// listMutants returns the mutants of the given files (relative to root),
// ordered by file, position and type, numbered from first.
func listMutants(root string, files []string, first int) ([]*Mutant, error) {
	var out []*Mutant
	for _, f := range files {
		ms, err := fileMutants(root, f)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	for i, m := range out {
		m.ID = first + i
	}
	return out, nil
}

func fileMutants(root, file string) ([]*Mutant, error) {
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []*Mutant
	add := func(pos token.Pos, op token.Token) {
		p := fset.Position(pos)
		for _, t := range typesOf[op] {
			out = append(out, &Mutant{File: filepath.ToSlash(file), Line: p.Line, Col: p.Column, Type: t,
				Op: op, Repl: replacement[t][op], Text: lineText(src, p.Offset)})
		}
	}
	ast.Inspect(af, func(n ast.Node) bool {
		switch e := n.(type) {
		case *ast.BinaryExpr:
			add(e.OpPos, e.Op)
		case *ast.UnaryExpr:
			add(e.OpPos, e.Op)
		case *ast.IncDecStmt:
			add(e.TokPos, e.Tok)
		}
		return true
	})
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Type < b.Type
	})
	return out, nil
}

// lineText is the trimmed source line holding offset off.
func lineText(src []byte, off int) string {
	lo, hi := off, off
	for lo > 0 && src[lo-1] != '\n' {
		lo--
	}
	for hi < len(src) && src[hi] != '\n' {
		hi++
	}
	s := string(src[lo:hi])
	for len(s) > 0 && (s[0] == '\t' || s[0] == ' ') {
		s = s[1:]
	}
	return s
}
