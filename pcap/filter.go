package pcap

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openmrc/mrc/wire"
)

// Display filter limits: an expression is typed by a user, but may come
// from a script or a fuzzer, so its size and nesting are bounded.
const (
	MaxFilterLen   = 4096 // bytes of expression
	MaxFilterDepth = 64   // nested parentheses and negations
)

// Filter errors, matched with errors.Is on a *FilterError.
var (
	ErrFilterSyntax = errors.New("syntax error")
	ErrFilterField  = errors.New("unknown field")
	ErrFilterValue  = errors.New("bad value")
	ErrFilterType   = errors.New("type mismatch")
	ErrFilterLimit  = errors.New("limit exceeded")
)

// FilterError reports a display filter that does not compile: what is
// wrong (Err, one of the ErrFilter values) and where (Col, the 1-based
// byte column of the offending token in Expr).
type FilterError struct {
	Expr string
	Col  int
	Err  error
	Msg  string
}

func (e *FilterError) Error() string {
	return fmt.Sprintf("filter column %d: %v: %s", e.Col, e.Err, e.Msg)
}

func (e *FilterError) Unwrap() error { return e.Err }

// Caret returns the expression with a caret under the column, for a
// terminal, as tshark shows it.
func (e *FilterError) Caret() string {
	return e.Expr + "\n" + strings.Repeat(" ", max(e.Col-1, 0)) + "^"
}

// Filter is a compiled display filter. It selects decoded Records with
// the field names of the generated Wireshark dissector (mrc.bth.psn,
// mrc.ev, mrc.req, ...; FilterFields lists them) and tshark's semantics:
// a comparison with an absent field is false, == and the orderings hold
// when any occurrence of the field satisfies them, != when every
// occurrence does. Match allocates nothing. A Filter is not safe for
// concurrent use: it holds per-frame scratch space.
type Filter struct {
	root  node
	env   fenv
	check bool
}

// CompileFilter compiles expr against codec c's field names (nil:
// wire.Default). Errors are *FilterError.
func CompileFilter(expr string, c *wire.Codec) (*Filter, error) {
	if c == nil {
		c = wire.Default
	}
	p := &parser{src: expr, fields: map[string]*filterField{}}
	if len(expr) > MaxFilterLen {
		return nil, p.errAt(MaxFilterLen, ErrFilterLimit, fmt.Sprintf("expression of %d bytes; at most %d", len(expr), MaxFilterLen))
	}
	voc := vocabulary(c)
	for i := range voc {
		p.fields[voc[i].name] = &voc[i]
	}
	p.voc = voc
	if err := p.lex(); err != nil {
		return nil, err
	}
	root, err := p.parse()
	if err != nil {
		return nil, err
	}
	f := &Filter{root: root, check: p.check}
	f.env.codec = c
	for _, h := range c.Headers() {
		f.env.names = append(f.env.names, h.Name)
	}
	f.env.offs = make([]int, len(f.env.names))
	f.env.loffs = make([]int, len(wire.LinkHeaders()))
	return f, nil
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *Record) bool {
	f.env.reset(r)
	return f.root.eval(&f.env)
}

// NeedsCheck reports whether the filter reads what only the strict checks
// find (mrc.req, mrc.icrc_ok): a Decoder with NoCheck would make them
// read as absent or wrong.
func (f *Filter) NeedsCheck() bool { return f.check }

// String returns the filter in normal form: parenthesized only where
// precedence needs it (an || under && or !, an && under !), with numbers
// in decimal and names resolved. It compiles to a filter that answers the
// same and has the same normal form; since it never nests deeper than the
// expression it came from, it stays within MaxFilterDepth.
func (f *Filter) String() string { return string(f.root.format(nil)) }

// node is one node of a compiled filter.
type node interface {
	eval(e *fenv) bool
	format(b []byte) []byte
}

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type notNode struct{ x node }
type hasNode struct{ f *filterField }

func (n *andNode) eval(e *fenv) bool { return n.l.eval(e) && n.r.eval(e) }
func (n *orNode) eval(e *fenv) bool  { return n.l.eval(e) || n.r.eval(e) }
func (n *notNode) eval(e *fenv) bool { return !n.x.eval(e) }
func (n *hasNode) eval(e *fenv) bool {
	_, ok := n.f.get(e, 0)
	return ok
}

// && and || are associative, so a run of one of them needs no
// parentheses inside: a long run written flat stays flat, and within
// MaxFilterDepth, in normal form.
func (n *andNode) format(b []byte) []byte {
	return operand(append(operand(b, n.l, true), " && "...), n.r, true)
}
func (n *orNode) format(b []byte) []byte {
	return n.r.format(append(n.l.format(b), " || "...))
}
func (n *notNode) format(b []byte) []byte { return operand(append(b, '!'), n.x, false) }

// operand formats x as an operand of && (inAnd) or of !: parenthesized
// when it binds less tightly than its operator.
func operand(b []byte, x node, inAnd bool) []byte {
	switch x.(type) {
	case *orNode:
	case *andNode:
		if inAnd {
			return x.format(b)
		}
	default:
		return x.format(b)
	}
	return append(x.format(append(b, '(')), ')')
}
func (n *hasNode) format(b []byte) []byte { return append(b, n.f.name...) }

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	opEQ cmpOp = iota
	opNE
	opLT
	opLE
	opGT
	opGE
)

var opText = [...]string{"==", "!=", "<", "<=", ">", ">="}

// mirror returns the operator with its operands swapped (5 < x is x > 5).
func (o cmpOp) mirror() cmpOp {
	return [...]cmpOp{opEQ, opNE, opGT, opGE, opLT, opLE}[o]
}

// holds applies o to the result of a three-way comparison.
func (o cmpOp) holds(c int) bool {
	switch o {
	case opEQ:
		return c == 0
	case opNE:
		return c != 0
	case opLT:
		return c < 0
	case opLE:
		return c <= 0
	case opGT:
		return c > 0
	}
	return c >= 0
}

// compare compares two values of kind k three-way; for kindAddr and
// kindMAC and kindString only equality is meaningful (0 or 1).
func compare(k fieldKind, a, b *fval) int {
	switch k {
	case kindUint:
		return cmp3(a.u < b.u, a.u > b.u)
	case kindInt:
		return cmp3(int64(a.u) < int64(b.u), int64(a.u) > int64(b.u))
	case kindAddr:
		return a.a.Compare(b.a)
	case kindMAC:
		return cmp3(false, a.m != b.m)
	case kindString:
		return cmp3(false, a.s != b.s)
	}
	return 0
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

// cmpNode compares a field with a literal, or with another field.
type cmpNode struct {
	f      *filterField
	op     cmpOp
	lit    fval
	prefix netip.Prefix // kindAddr: a literal a.b.c.d/n matches the prefix
	g      *filterField // the other field, or nil
}

// test reports whether occurrence v of the left field satisfies the
// comparison against the literal or some occurrence of the other field
// (for !=, every occurrence of it).
func (n *cmpNode) test(e *fenv, v *fval) bool {
	if n.g == nil {
		if n.prefix.IsValid() {
			return n.prefix.Contains(v.a) == (n.op == opEQ)
		}
		return n.op.holds(compare(n.f.kind, v, &n.lit))
	}
	seen := false
	for j := 0; ; j++ {
		w, ok := n.g.get(e, j)
		if !ok {
			break
		}
		seen = true
		h := n.op.holds(compare(n.f.kind, v, &w))
		if n.op == opNE && !h {
			return false
		}
		if n.op != opNE && h {
			return true
		}
	}
	return n.op == opNE && seen
}

func (n *cmpNode) eval(e *fenv) bool {
	seen := false
	for i := 0; ; i++ {
		v, ok := n.f.get(e, i)
		if !ok {
			break
		}
		seen = true
		h := n.test(e, &v)
		if n.op == opNE && !h {
			return false
		}
		if n.op != opNE && h {
			return true
		}
	}
	return n.op == opNE && seen
}

func (n *cmpNode) format(b []byte) []byte {
	b = append(b, n.f.name...)
	b = append(b, ' ')
	b = append(b, opText[n.op]...)
	b = append(b, ' ')
	switch {
	case n.g != nil:
		b = append(b, n.g.name...)
	case n.prefix.IsValid():
		b = n.prefix.AppendTo(b)
	default:
		b = appendLit(b, n.f.kind, &n.lit)
	}
	return b
}

func appendLit(b []byte, k fieldKind, v *fval) []byte {
	switch k {
	case kindUint:
		return strconv.AppendUint(b, v.u, 10)
	case kindInt:
		return strconv.AppendInt(b, int64(v.u), 10)
	case kindAddr:
		return v.a.AppendTo(b)
	case kindMAC:
		return appendMAC(b, v.m)
	}
	return strconv.AppendQuote(b, v.s)
}

// token is one lexical token of an expression.
type token struct {
	kind tokKind
	text string // the source text (a string literal's unquoted value)
	col  int    // 1-based byte column
}

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokWord
	tokString
	tokLParen
	tokRParen
	tokAnd
	tokOr
	tokNot
	tokCmp
)

type parser struct {
	src    string
	toks   []token
	pos    int
	depth  int
	fields map[string]*filterField
	voc    []filterField
	check  bool
}

func (p *parser) errAt(off int, kind error, msg string) *FilterError {
	return &FilterError{Expr: p.src, Col: off + 1, Err: kind, Msg: msg}
}

func (p *parser) errTok(t token, kind error, msg string) *FilterError {
	return &FilterError{Expr: p.src, Col: t.col, Err: kind, Msg: msg}
}

// wordByte reports whether c may appear in a field name or a bare
// literal (numbers, addresses, value names).
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == ':' || c == '/' || c == '-'
}

var wordOps = map[string]tokKind{"and": tokAnd, "or": tokOr, "not": tokNot,
	"eq": tokCmp, "ne": tokCmp, "lt": tokCmp, "le": tokCmp, "gt": tokCmp, "ge": tokCmp}

var wordCmp = map[string]string{"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			k := tokLParen
			if c == ')' {
				k = tokRParen
			}
			p.toks = append(p.toks, token{kind: k, text: s[i : i+1], col: i + 1})
			i++
		case c == '&' || c == '|':
			if i+1 >= len(s) || s[i+1] != c {
				return p.errAt(i, ErrFilterSyntax, fmt.Sprintf("%q: write %c%c", c, c, c))
			}
			k := tokAnd
			if c == '|' {
				k = tokOr
			}
			p.toks = append(p.toks, token{kind: k, text: s[i : i+2], col: i + 1})
			i += 2
		case c == '!' || c == '=' || c == '<' || c == '>':
			n := 1
			if i+1 < len(s) && s[i+1] == '=' {
				n = 2
			}
			t := s[i : i+n]
			switch t {
			case "!":
				p.toks = append(p.toks, token{kind: tokNot, text: t, col: i + 1})
			case "=":
				return p.errAt(i, ErrFilterSyntax, `"=": write == to compare`)
			default:
				p.toks = append(p.toks, token{kind: tokCmp, text: t, col: i + 1})
			}
			i += n
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return p.errAt(i, ErrFilterSyntax, "unterminated string")
			}
			v, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return p.errAt(i, ErrFilterSyntax, "bad string literal "+s[i:j+1])
			}
			p.toks = append(p.toks, token{kind: tokString, text: v, col: i + 1})
			i = j + 1
		case wordByte(c):
			j := i
			for j < len(s) && wordByte(s[j]) {
				j++
			}
			w := s[i:j]
			t := token{kind: tokWord, text: w, col: i + 1}
			if k, ok := wordOps[w]; ok {
				t.kind = k
				if k == tokCmp {
					t.text = wordCmp[w]
				}
			}
			p.toks = append(p.toks, t)
			i = j
		default:
			return p.errAt(i, ErrFilterSyntax, fmt.Sprintf("unexpected character %q", rune(c)))
		}
	}
	p.toks = append(p.toks, token{kind: tokEOF, col: len(s) + 1})
	return nil
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) parse() (node, error) {
	if p.peek().kind == tokEOF {
		return nil, p.errTok(p.peek(), ErrFilterSyntax, "empty expression")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errTok(t, ErrFilterSyntax, fmt.Sprintf("unexpected %q", t.text))
	}
	return n, nil
}

// or and and are left-associative; && binds tighter than ||, as in tshark.
func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.peek().kind == tokOr {
		p.next()
		var r node
		if r, err = p.and(); err == nil {
			l = &orNode{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.unary()
	for err == nil && p.peek().kind == tokAnd {
		p.next()
		var r node
		if r, err = p.unary(); err == nil {
			l = &andNode{l, r}
		}
	}
	return l, err
}

func (p *parser) unary() (node, error) {
	t := p.peek()
	if t.kind != tokNot && t.kind != tokLParen {
		return p.comparison()
	}
	if p.depth++; p.depth > MaxFilterDepth {
		return nil, p.errTok(t, ErrFilterLimit, fmt.Sprintf("nested deeper than %d", MaxFilterDepth))
	}
	defer func() { p.depth-- }()
	p.next()
	if t.kind == tokNot {
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &notNode{x}, nil
	}
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	if c := p.next(); c.kind != tokRParen {
		return nil, p.errTok(c, ErrFilterSyntax, fmt.Sprintf("missing ) for the ( at column %d", t.col))
	}
	return x, nil
}

// operand returns a field or literal token.
func (p *parser) operand() (token, error) {
	t := p.next()
	switch t.kind {
	case tokWord, tokString:
		return t, nil
	case tokEOF:
		return t, p.errTok(t, ErrFilterSyntax, "expression ends where a field or value belongs")
	}
	return t, p.errTok(t, ErrFilterSyntax, fmt.Sprintf("unexpected %q where a field or value belongs", t.text))
}

func (p *parser) comparison() (node, error) {
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokCmp {
		f, err := p.field(l)
		if err != nil {
			return nil, err
		}
		return &hasNode{f}, nil
	}
	opTok := p.next()
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	var op cmpOp
	for i, s := range opText {
		if s == opTok.text {
			op = cmpOp(i)
		}
	}
	lf, rf := p.lookup(l), p.lookup(r)
	switch {
	case lf == nil && rf == nil:
		_, err := p.field(l)
		return nil, err
	case lf == nil:
		l, r, lf, rf, op = r, l, rf, lf, op.mirror()
	}
	n := &cmpNode{f: lf, op: op}
	if rf != nil {
		if !sameKind(lf.kind, rf.kind) {
			return nil, p.errTok(r, ErrFilterType, fmt.Sprintf("%s and %s hold different kinds of value", lf.name, rf.name))
		}
		n.g = rf
	} else if err := p.literal(n, r); err != nil {
		return nil, err
	}
	if op > opNE && (lf.kind == kindAddr || lf.kind == kindMAC || lf.kind == kindString) {
		return nil, p.errTok(opTok, ErrFilterType, fmt.Sprintf("%s is not ordered: use == or !=", lf.name))
	}
	return n, nil
}

// sameKind reports whether fields of kinds a and b compare with each
// other: values of the same kind (a signed and an unsigned field do not,
// so that no comparison depends on how one converts to the other).
func sameKind(a, b fieldKind) bool { return a == b && a != kindPresence }

// lookup returns the field t names, or nil.
func (p *parser) lookup(t token) *filterField {
	if t.kind != tokWord {
		return nil
	}
	f := p.fields[t.text]
	if f != nil && f.check {
		p.check = true
	}
	return f
}

// field returns the field t names or an error naming the closest one.
func (p *parser) field(t token) (*filterField, error) {
	if f := p.lookup(t); f != nil {
		return f, nil
	}
	if t.kind != tokWord {
		return nil, p.errTok(t, ErrFilterSyntax, fmt.Sprintf("a string %q alone is no test", t.text))
	}
	msg := fmt.Sprintf("%q is not a field", t.text)
	best, bd := "", 4
	for i := range p.voc {
		if d := editDistance(t.text, p.voc[i].name, bd); d < bd {
			best, bd = p.voc[i].name, d
		}
	}
	if best != "" {
		msg += "; did you mean " + best + "?"
	}
	return nil, p.errTok(t, ErrFilterField, msg+"")
}

// literal parses t as a value of n.f's kind into n.
func (p *parser) literal(n *cmpNode, t token) error {
	f, s := n.f, t.text
	bad := func(why string) error {
		return p.errTok(t, ErrFilterValue, fmt.Sprintf("%q for %s: %s", s, f.name, why))
	}
	switch f.kind {
	case kindPresence:
		return p.errTok(t, ErrFilterType, f.name+" can only be tested for presence")
	case kindString:
		n.lit.s = s
		return nil
	case kindMAC:
		hw, err := net.ParseMAC(s)
		if t.kind != tokWord || err != nil || len(hw) != 6 {
			return bad("not an Ethernet address (02:00:00:00:00:0a)")
		}
		copy(n.lit.m[:], hw)
		return nil
	case kindAddr:
		if t.kind != tokWord {
			return bad("not an address")
		}
		if strings.Contains(s, "/") {
			pf, err := netip.ParsePrefix(s)
			if err != nil || pf.Addr().Is6() != f.v6 {
				return bad("not an " + family(f.v6) + " prefix")
			}
			if n.op != opEQ && n.op != opNE {
				return bad("a prefix takes == or !=")
			}
			n.prefix = pf.Masked()
			return nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Is6() != f.v6 || a.Zone() != "" {
			return bad("not an " + family(f.v6) + " address")
		}
		n.lit.a = a
		return nil
	}
	v, err := p.number(t, f)
	if err != nil {
		return err
	}
	n.lit.u = v
	return nil
}

func family(v6 bool) string {
	if v6 {
		return "IPv6"
	}
	return "IPv4"
}

// number parses a numeric literal for f: decimal, 0x hex or 0-prefixed
// octal as tshark reads them, negative for signed fields, or one of the
// field's value names (RDMA_WRITE_ONLY for mrc.bth.opcode). It must fit
// the field's width.
func (p *parser) number(t token, f *filterField) (uint64, error) {
	s := t.text
	bad := func(why string) (uint64, error) {
		return 0, p.errTok(t, ErrFilterValue, fmt.Sprintf("%q for %s: %s", s, f.name, why))
	}
	if t.kind == tokWord && s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '-') {
		if strings.ContainsAny(s, "_oObB") && !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
			return bad("not a number (decimal, 0x hex, 0 octal)")
		}
		if f.kind == kindInt {
			v, err := strconv.ParseInt(s, 0, 64)
			if err != nil {
				return bad("not a number (decimal, 0x hex, 0 octal)")
			}
			if f.width < 64 && (v < -1<<(f.width-1) || v >= 1<<(f.width-1)) {
				return bad(fmt.Sprintf("out of range for a %d-bit signed field", f.width))
			}
			return uint64(v), nil
		}
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return bad("not an unsigned number (decimal, 0x hex, 0 octal)")
		}
		if f.width < 64 && v>>f.width != 0 {
			return bad(fmt.Sprintf("does not fit a %d-bit field", f.width))
		}
		return v, nil
	}
	if f.note == nil || f.width > 8 {
		return bad("not a number, and the field has no value names")
	}
	found, v := 0, uint64(0)
	for x := uint64(0); x < 1<<f.width; x++ {
		if strings.EqualFold(f.note(x), s) {
			found, v = found+1, x
		}
	}
	if found != 1 {
		return bad("no such value name")
	}
	return v, nil
}

// editDistance returns the optimal string alignment distance of a and b
// (Levenshtein with adjacent transpositions: psn and pns are 1 apart), or
// limit if it is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		pp, prev, cur := rows[0], rows[1], rows[2]
		cur[0] = i
		lo := i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(prev[j-1], prev[j], cur[j-1])
				if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
					c = min(c, pp[j-2]+1)
				}
			}
			cur[j] = c
			lo = min(lo, c)
		}
		if lo >= limit {
			return limit
		}
		rows[0], rows[1], rows[2] = prev, cur, pp
	}
	return min(rows[1][len(b)], limit)
}
