package modelcheck

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// A small reader for the values TLC prints in state dumps (-dump) and
// error traces: integers, strings, booleans, model values, sets {..},
// sequences <<..>>, records [f |-> v, ..] and functions (k :> v @@ ..).

type tlaKind int

const (
	tlaInt tlaKind = iota
	tlaStr
	tlaBool
	tlaName // model value or other identifier
	tlaSet
	tlaSeq
	tlaRec // record or function: keys and values
)

type tlaValue struct {
	kind tlaKind
	i    int64
	s    string
	b    bool
	elem []tlaValue // set, seq
	keys []tlaValue // record/function keys (strings for records)
	vals []tlaValue
}

func (v tlaValue) String() string {
	switch v.kind {
	case tlaInt:
		return strconv.FormatInt(v.i, 10)
	case tlaStr:
		return strconv.Quote(v.s)
	case tlaBool:
		return strings.ToUpper(strconv.FormatBool(v.b))
	case tlaName:
		return v.s
	case tlaSet, tlaSeq:
		p := make([]string, len(v.elem))
		for i, e := range v.elem {
			p[i] = e.String()
		}
		if v.kind == tlaSet {
			return "{" + strings.Join(p, ", ") + "}"
		}
		return "<<" + strings.Join(p, ", ") + ">>"
	}
	p := make([]string, len(v.keys))
	for i := range v.keys {
		p[i] = v.keys[i].String() + " :> " + v.vals[i].String()
	}
	return "(" + strings.Join(p, " @@ ") + ")"
}

// field returns a record field or function value at key k (an int or a
// string key).
func (v tlaValue) get(k any) (tlaValue, bool) {
	if v.kind == tlaSeq {
		if i, ok := k.(int); ok && i >= 1 && i <= len(v.elem) {
			return v.elem[i-1], true
		}
		return tlaValue{}, false
	}
	for i, kk := range v.keys {
		switch x := k.(type) {
		case int:
			if kk.kind == tlaInt && kk.i == int64(x) {
				return v.vals[i], true
			}
		case string:
			if (kk.kind == tlaStr || kk.kind == tlaName) && kk.s == x {
				return v.vals[i], true
			}
		}
	}
	return tlaValue{}, false
}

type tlaParser struct {
	s   string
	pos int
}

func (p *tlaParser) ws() {
	for p.pos < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.pos])) {
		p.pos++
	}
}

func (p *tlaParser) eat(tok string) bool {
	p.ws()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *tlaParser) fail(what string) error {
	end := min(len(p.s), p.pos+40)
	return fmt.Errorf("tla value: %s at %q", what, p.s[p.pos:end])
}

func (p *tlaParser) value() (tlaValue, error) {
	p.ws()
	if p.pos >= len(p.s) {
		return tlaValue{}, p.fail("unexpected end")
	}
	switch c := p.s[p.pos]; {
	case c == '"':
		end := strings.IndexByte(p.s[p.pos+1:], '"')
		if end < 0 {
			return tlaValue{}, p.fail("unterminated string")
		}
		v := tlaValue{kind: tlaStr, s: p.s[p.pos+1 : p.pos+1+end]}
		p.pos += end + 2
		return v, nil
	case c == '{':
		p.pos++
		elems, err := p.list("}")
		return tlaValue{kind: tlaSet, elem: elems}, err
	case strings.HasPrefix(p.s[p.pos:], "<<"):
		p.pos += 2
		elems, err := p.list(">>")
		return tlaValue{kind: tlaSeq, elem: elems}, err
	case c == '[':
		p.pos++
		v := tlaValue{kind: tlaRec}
		if p.eat("]") {
			return v, nil
		}
		for {
			p.ws()
			start := p.pos
			for p.pos < len(p.s) && (isIdent(p.s[p.pos])) {
				p.pos++
			}
			name := p.s[start:p.pos]
			if name == "" || !p.eat("|->") {
				return v, p.fail("record field")
			}
			x, err := p.value()
			if err != nil {
				return v, err
			}
			v.keys, v.vals = append(v.keys, tlaValue{kind: tlaStr, s: name}), append(v.vals, x)
			if p.eat("]") {
				return v, nil
			}
			if !p.eat(",") {
				return v, p.fail("',' or ']' in record")
			}
		}
	case c == '(':
		p.pos++
		v := tlaValue{kind: tlaRec}
		for {
			k, err := p.value()
			if err != nil {
				return v, err
			}
			if !p.eat(":>") {
				return v, p.fail("':>' in function")
			}
			x, err := p.value()
			if err != nil {
				return v, err
			}
			v.keys, v.vals = append(v.keys, k), append(v.vals, x)
			if p.eat(")") {
				return v, nil
			}
			if !p.eat("@@") {
				return v, p.fail("'@@' or ')' in function")
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		p.pos++
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		i, err := strconv.ParseInt(p.s[start:p.pos], 10, 64)
		return tlaValue{kind: tlaInt, i: i}, err
	case isIdent(c):
		start := p.pos
		for p.pos < len(p.s) && isIdent(p.s[p.pos]) {
			p.pos++
		}
		switch name := p.s[start:p.pos]; name {
		case "TRUE", "FALSE":
			return tlaValue{kind: tlaBool, b: name == "TRUE"}, nil
		default:
			return tlaValue{kind: tlaName, s: name}, nil
		}
	}
	return tlaValue{}, p.fail("unexpected character")
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *tlaParser) list(end string) ([]tlaValue, error) {
	var out []tlaValue
	if p.eat(end) {
		return out, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return out, err
		}
		out = append(out, v)
		if p.eat(end) {
			return out, nil
		}
		if !p.eat(",") {
			return out, p.fail("',' in list")
		}
	}
}

func parseTLA(s string) (tlaValue, error) {
	p := &tlaParser{s: s}
	v, err := p.value()
	if err == nil {
		p.ws()
		if p.pos != len(p.s) {
			err = p.fail("trailing text")
		}
	}
	return v, err
}

func TestParseTLA(t *testing.T) {
	for _, s := range []string{
		`3`, `-1`, `"RTS"`, `TRUE`, `{}`, `{1, 2}`, `<<>>`, `<<1, "a">>`, `[a |-> 1, b |-> {2}]`,
		`(1 :> "GOOD" @@ 2 :> "SKIP")`, `([t |-> "D", psn |-> 0] :> 1)`, `m1`,
	} {
		v, err := parseTLA(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if _, err := parseTLA(v.String()); err != nil {
			t.Errorf("%s: reparse %s: %v", s, v, err)
		}
	}
	v, _ := parseTLA(`(1 :> "GOOD" @@ 2 :> "SKIP")`)
	if x, ok := v.get(2); !ok || x.s != "SKIP" {
		t.Errorf("function lookup: %v", x)
	}
	for _, bad := range []string{`{1,`, `[a 1]`, `(1 :> 2`, `"x`, `@`} {
		if _, err := parseTLA(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
