package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var errNotConst = errors.New("not an integer constant expression")

// maxExpand bounds macro expansion, so a self-referring macro cannot loop.
const maxExpand = 64

// expand replaces macros and known enum constants in toks.
func (x *extractor) expand(toks []string, depth int) ([]string, error) {
	if depth > maxExpand {
		return nil, fmt.Errorf("macro expansion deeper than %d", maxExpand)
	}
	var out []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if v, ok := x.consts[t]; ok {
			out = append(out, strconv.FormatInt(v, 10))
			continue
		}
		m, ok := x.macros[t]
		if !ok {
			out = append(out, t)
			continue
		}
		body := m.body
		if m.fn {
			args, next, err := macroArgs(toks, i+1)
			if err != nil {
				return nil, err
			}
			if len(args) != len(m.params) {
				return nil, fmt.Errorf("%s takes %d arguments, given %d", t, len(m.params), len(args))
			}
			body = substitute(m.body, m.params, args)
			i = next - 1
		}
		e, err := x.expand(body, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, "(")
		out = append(out, e...)
		out = append(out, ")")
	}
	return out, nil
}

// macroArgs reads the parenthesised argument list starting at toks[i].
func macroArgs(toks []string, i int) (args [][]string, next int, err error) {
	if i >= len(toks) || toks[i] != "(" {
		return nil, 0, errors.New("function-like macro without arguments")
	}
	depth, cur := 0, []string{}
	for j := i; j < len(toks); j++ {
		switch t := toks[j]; {
		case t == "(":
			depth++
			if depth > 1 {
				cur = append(cur, t)
			}
		case t == ")":
			depth--
			if depth == 0 {
				return append(args, cur), j + 1, nil
			}
			cur = append(cur, t)
		case t == "," && depth == 1:
			args, cur = append(args, cur), []string{}
		default:
			cur = append(cur, t)
		}
	}
	return nil, 0, errors.New("unterminated macro arguments")
}

func substitute(body, params []string, args [][]string) []string {
	var out []string
	for _, t := range body {
		k := -1
		for i, p := range params {
			if p == t {
				k = i
			}
		}
		if k < 0 {
			out = append(out, t)
			continue
		}
		out = append(out, "(")
		out = append(out, args[k]...)
		out = append(out, ")")
	}
	return out
}

// eval evaluates an integer constant expression after macro expansion.
func (x *extractor) eval(toks []string) (int64, error) {
	e, err := x.expand(toks, 0)
	if err != nil {
		return 0, err
	}
	if len(e) == 0 {
		return 0, errNotConst
	}
	p := &exprParser{toks: e}
	v, err := p.binary(0)
	if err != nil {
		return 0, err
	}
	if p.pos != len(p.toks) {
		return 0, errNotConst
	}
	return v, nil
}

type exprParser struct {
	toks []string
	pos  int
}

// Binary operators by precedence, lowest first.
var binPrec = map[string]int{"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}

func (p *exprParser) binary(minPrec int) (int64, error) {
	l, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.pos < len(p.toks) {
		op := p.toks[p.pos]
		prec, ok := binPrec[op]
		if !ok || prec <= minPrec {
			break
		}
		p.pos++
		r, err := p.binary(prec)
		if err != nil {
			return 0, err
		}
		switch op {
		case "|":
			l |= r
		case "^":
			l ^= r
		case "&":
			l &= r
		case "<<", ">>":
			if r < 0 || r > 62 {
				return 0, fmt.Errorf("shift by %d", r)
			}
			if op == "<<" {
				l <<= r
			} else {
				l >>= r
			}
		case "+":
			l += r
		case "-":
			l -= r
		case "*":
			l *= r
		case "/", "%":
			if r == 0 {
				return 0, errors.New("division by zero")
			}
			if op == "/" {
				l /= r
			} else {
				l %= r
			}
		}
	}
	return l, nil
}

func (p *exprParser) unary() (int64, error) {
	if p.pos >= len(p.toks) {
		return 0, errNotConst
	}
	t := p.toks[p.pos]
	p.pos++
	switch t {
	case "-", "~", "+":
		v, err := p.unary()
		switch t {
		case "-":
			v = -v
		case "~":
			v = ^v
		}
		return v, err
	case "(":
		v, err := p.binary(0)
		if err != nil {
			return 0, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos] != ")" {
			return 0, errNotConst
		}
		p.pos++
		return v, nil
	}
	if !isDigit(t[0]) {
		return 0, errNotConst
	}
	v, err := strconv.ParseInt(strings.TrimRight(t, "uUlL"), 0, 64)
	if err != nil {
		return 0, errNotConst
	}
	return v, nil
}
