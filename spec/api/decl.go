package api

import (
	"fmt"
	"strconv"
	"strings"
)

// declarations reads the top-level C declarations of file.
func (x *extractor) declarations(file string, toks []token) error {
	for i := 0; i < len(toks); {
		t := toks[i]
		switch {
		case t.s == "extern" && i+1 < len(toks) && strings.HasPrefix(toks[i+1].s, `"`):
			i += 2
			if i < len(toks) && toks[i].s == "{" {
				i++
			}
			continue
		case t.s == "}" || t.s == ";":
			i++
			continue
		}
		end, err := declEnd(file, toks, i)
		if err != nil {
			return err
		}
		if err := x.declaration(file, toks[i:end]); err != nil {
			return err
		}
		i = end + 1
	}
	return nil
}

// declEnd is the index of the ';' ending the declaration at toks[i].
func declEnd(file string, toks []token, i int) (int, error) {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].s {
		case "{", "(", "[":
			depth++
		case "}", ")", "]":
			depth--
		case ";":
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, &ExtractError{file, toks[i].line, "declaration without ';'"}
}

func strs(toks []token) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.s
	}
	return out
}

// declaration reads one declaration, without its ';'.
func (x *extractor) declaration(file string, d []token) error {
	s := strs(d)
	cond := d[0].cond
	switch {
	case s[0] == "enum" && len(s) > 2 && s[2] == "{":
		return x.enum(file, s[1], d[3:len(d)-1], cond)
	case (s[0] == "struct" || s[0] == "union") && len(s) == 2:
		x.add(KindOpaque, file, s[1], s[0], cond)
		return nil
	case (s[0] == "struct" || s[0] == "union") && len(s) > 2 && s[2] == "{":
		if s[len(s)-1] != "}" {
			return &ExtractError{file, d[0].line, "declarator after a struct body"}
		}
		x.add(KindStruct, file, s[1], s[0], cond)
		_, err := x.members(file, s[1], d[3:len(d)-1], 0)
		return err
	case s[0] == "typedef":
		name, typ, err := declarator(s[1:])
		if err != nil {
			return &ExtractError{file, d[0].line, err.Error()}
		}
		x.add(KindTypedef, file, name, typ, cond)
		return nil
	}
	open := indexOf(s, "(")
	if open < 1 || s[len(s)-1] != ")" {
		return &ExtractError{file, d[0].line, fmt.Sprintf("unrecognised declaration %q", join(s))}
	}
	name, ret, err := declarator(s[:open])
	if err != nil {
		return &ExtractError{file, d[0].line, err.Error()}
	}
	var params []string
	for _, p := range splitTop(s[open+1 : len(s)-1]) {
		if len(p) == 1 && p[0] == "void" {
			continue
		}
		pn, pt, err := declarator(p)
		if err != nil {
			return &ExtractError{file, d[0].line, name + ": " + err.Error()}
		}
		params = append(params, typed(pt, pn))
	}
	x.add(KindFunc, file, name, ret+" ("+strings.Join(params, ", ")+")", cond)
	return nil
}

// enum records an enum's constants, numbering the implicit ones.
func (x *extractor) enum(file, name string, body []token, cond string) error {
	x.add(KindEnum, file, name, "enum", cond)
	next := int64(0)
	for _, e := range splitTopTokens(body) {
		if len(e) == 0 {
			continue
		}
		c := e[0].s
		v := next
		if len(e) > 1 {
			if e[1].s != "=" {
				return &ExtractError{file, e[0].line, "enum constant " + c + " without '='"}
			}
			var err error
			if v, err = x.eval(strs(e[2:])); err != nil {
				return &ExtractError{file, e[0].line, c + ": " + err.Error()}
			}
		}
		x.consts[c] = v
		x.add(KindConst, file, name+"."+c, strconv.FormatInt(v, 10), e[0].cond)
		next = v + 1
	}
	return nil
}

// members records the fields of a struct or union body, flattening
// nested anonymous aggregates into dotted names; pos counts the fields
// of the outermost aggregate in order.
func (x *extractor) members(file, prefix string, body []token, pos int) (int, error) {
	for i := 0; i < len(body); {
		end, err := declEnd(file, body, i)
		if err != nil {
			return pos, err
		}
		m := body[i:end]
		s := strs(m)
		i = end + 1
		if (s[0] == "struct" || s[0] == "union") && len(s) > 1 && s[1] == "{" {
			close := len(s) - 1
			for close > 0 && s[close] != "}" {
				close--
			}
			name := prefix
			switch {
			case close == len(s)-1:
				// An anonymous member: its fields belong to the enclosing
				// aggregate, as in C; it is recorded by position.
				x.add(KindField, file, prefix+".anonymous"+strconv.Itoa(pos), strconv.Itoa(pos)+" "+s[0], m[0].cond)
			case close == len(s)-2:
				name += "." + s[len(s)-1]
				x.add(KindField, file, name, strconv.Itoa(pos)+" "+s[0], m[0].cond)
			default:
				return pos, &ExtractError{file, m[0].line, "nested aggregate with more than one declarator"}
			}
			pos++
			if pos, err = x.members(file, name, m[2:close], pos); err != nil {
				return pos, err
			}
			continue
		}
		for _, dcl := range splitTop(s) {
			name, typ, err := declarator(dcl)
			if err != nil {
				return pos, &ExtractError{file, m[0].line, prefix + ": " + err.Error()}
			}
			x.add(KindField, file, prefix+"."+name, strconv.Itoa(pos)+" "+typ, m[0].cond)
			pos++
		}
	}
	return pos, nil
}

// declarator splits "type name[dims]" into the name and the type, the
// array dimensions moved onto the type ("uint8_t[32]").
func declarator(s []string) (name, typ string, err error) {
	dims := len(s)
	for dims > 0 && s[dims-1] == "]" {
		open := dims - 1
		for open > 0 && s[open] != "[" {
			open--
		}
		dims = open
	}
	if dims < 2 || !isIdentStart(s[dims-1][0]) {
		return "", "", fmt.Errorf("declarator %q has no type and name", join(s))
	}
	for _, t := range s[:dims-1] {
		if t != "*" && !isIdentStart(t[0]) {
			return "", "", fmt.Errorf("declarator %q: %q in a type", join(s), t)
		}
	}
	base := join(s[:dims-1])
	arr := join(s[dims:])
	return s[dims-1], base + arr, nil
}

// typed renders a parameter as C writes it: "int n", "struct mrc_qp *qp".
func typed(typ, name string) string {
	if strings.HasSuffix(typ, "*") {
		return typ + name
	}
	return typ + " " + name
}

func indexOf(s []string, t string) int {
	for i, v := range s {
		if v == t {
			return i
		}
	}
	return -1
}

// splitTop splits tokens at commas outside brackets.
func splitTop(s []string) [][]string {
	var out [][]string
	depth, start := 0, 0
	for i, t := range s {
		switch t {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func splitTopTokens(s []token) [][]token {
	var out [][]token
	start := 0
	for _, part := range splitTop(strs(s)) {
		out = append(out, s[start:start+len(part)])
		start += len(part) + 1
	}
	return out
}
