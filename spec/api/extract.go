package api

import (
	"fmt"
	"strconv"
	"strings"
)

// Headers are the upstream files the facts table covers, in table order.
var Headers = []string{"mrc_api_ver.h", "mrc.h", "mrc_ctl_api_ver.h", "mrc_ctl.h"}

// ExtractError is a header construct Extract cannot read.
type ExtractError struct {
	File string
	Line int
	Msg  string
}

func (e *ExtractError) Error() string { return fmt.Sprintf("api: %s:%d: %s", e.File, e.Line, e.Msg) }

// token is one C token with the preprocessor condition it sits under.
type token struct {
	s    string
	line int
	cond string
}

// macro is a #define as the evaluator needs it.
type macro struct {
	params []string // nil for an object-like macro
	fn     bool
	body   []string
}

// extractor reads headers in order; later headers may use earlier
// headers' defines and enum constants in their expressions.
type extractor struct {
	macros map[string]macro
	consts map[string]int64
	facts  []Fact
}

// Extract reads the named headers (file name to content) in the order of
// names and returns their facts: every #include, #define, enum constant,
// struct or union field, typedef and function prototype. Comments and
// the include guard are dropped; a declaration inside #if carries the
// condition; declarations inside #ifdef __cplusplus are skipped.
func Extract(names []string, files map[string][]byte) ([]Fact, error) {
	x := &extractor{macros: map[string]macro{}, consts: map[string]int64{}}
	for _, n := range names {
		src, ok := files[n]
		if !ok {
			return nil, &ExtractError{n, 0, "missing"}
		}
		toks, err := x.preprocess(n, string(src))
		if err != nil {
			return nil, err
		}
		if err := x.declarations(n, toks); err != nil {
			return nil, err
		}
	}
	return x.facts, nil
}

func (x *extractor) add(kind Kind, file, name, value, cond string) {
	x.facts = append(x.facts, Fact{Kind: kind, File: file, Name: name, Value: value, Cond: cond})
}

// stripComments removes /* */ and // comments, keeping newlines so line
// numbers stay right, and joins backslash-continued lines.
func stripComments(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			b.WriteString(strings.Repeat("\n", strings.Count(src[i:i+2+end], "\n")))
			b.WriteByte(' ')
			i += end + 3
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case src[i] == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				j++
			}
			b.WriteString(src[i:min(j+1, len(src))])
			i = j
		default:
			b.WriteByte(src[i])
		}
	}
	// A continued line is joined to its successors; empty lines take their
	// places so that line numbers stay right.
	lines := strings.Split(b.String(), "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		l, n := lines[i], 0
		for t := strings.TrimRight(l, " \t"); strings.HasSuffix(t, "\\") && i+1 < len(lines); t = strings.TrimRight(l, " \t") {
			i++
			n++
			l = t[:len(t)-1] + " " + lines[i]
		}
		out = append(out, l)
		for ; n > 0; n-- {
			out = append(out, "")
		}
	}
	lines = out
	return strings.Join(lines, "\n")
}

// tokenize splits one line into C tokens.
func tokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case isIdentStart(c) || isDigit(c):
			j := i
			for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				j++
			}
			out = append(out, s[i:min(j+1, len(s))])
			i = j + 1
		default:
			n := 1
			for _, op := range []string{"...", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "->"} {
				if strings.HasPrefix(s[i:], op) {
					n = len(op)
					break
				}
			}
			out = append(out, s[i:i+n])
			i += n
		}
	}
	return out
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// condFrame is one open #if group.
type condFrame struct {
	shown []string // the conditions of earlier branches, negated in later ones
	cur   string   // this branch's condition; "" for the include guard
	skip  bool     // #ifdef __cplusplus: the group is not C
	guard bool
}

// preprocess handles directives and returns the C tokens of file.
func (x *extractor) preprocess(file, src string) ([]token, error) {
	var toks []token
	var stack []condFrame
	guard := ""
	sawCode := false
	for i, line := range strings.Split(stripComments(src), "\n") {
		ln := i + 1
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "#") {
			if t == "" || skipping(stack) {
				continue
			}
			sawCode = true
			cond := condOf(stack)
			for _, s := range tokenize(t) {
				toks = append(toks, token{s, ln, cond})
			}
			continue
		}
		d := tokenize(strings.TrimSpace(t[1:]))
		if len(d) == 0 {
			continue
		}
		rest := d[1:]
		switch d[0] {
		case "ifndef", "ifdef", "if":
			f := condFrame{}
			switch {
			case d[0] == "ifndef" && guard == "" && !sawCode && len(stack) == 0 && len(rest) == 1:
				guard, f.guard = rest[0], true
			case d[0] == "ifdef" && len(rest) == 1 && rest[0] == "__cplusplus":
				f.skip = true
			case d[0] == "ifdef":
				f.cur = "defined(" + join(rest) + ")"
			case d[0] == "ifndef":
				f.cur = "!defined(" + join(rest) + ")"
			default:
				f.cur = join(rest)
			}
			stack = append(stack, f)
		case "elif", "else":
			if len(stack) == 0 {
				return nil, &ExtractError{file, ln, "#" + d[0] + " without #if"}
			}
			f := &stack[len(stack)-1]
			f.shown = append(f.shown, f.cur)
			f.cur = join(rest)
			if d[0] == "else" {
				f.cur = ""
			}
			f.skip = false
		case "endif":
			if len(stack) == 0 {
				return nil, &ExtractError{file, ln, "#endif without #if"}
			}
			stack = stack[:len(stack)-1]
		case "define":
			if skipping(stack) {
				continue
			}
			if err := x.define(file, ln, strings.TrimSpace(t[1:]), guard, condOf(stack)); err != nil {
				return nil, err
			}
		case "include":
			if !skipping(stack) {
				x.add(KindInclude, file, strings.Trim(strings.Join(rest, ""), "<>\" "), "", condOf(stack))
			}
		case "error", "warning", "undef", "pragma":
			// Checks and diagnostics, not facts of the interface.
		default:
			return nil, &ExtractError{file, ln, "unknown directive #" + d[0]}
		}
	}
	if len(stack) != 0 {
		return nil, &ExtractError{file, 0, "unterminated #if"}
	}
	return toks, nil
}

func skipping(stack []condFrame) bool {
	for _, f := range stack {
		if f.skip {
			return true
		}
	}
	return false
}

// condOf is the condition under which a line of the current group is seen.
func condOf(stack []condFrame) string {
	var parts []string
	for _, f := range stack {
		if f.guard {
			continue
		}
		for _, s := range f.shown {
			parts = append(parts, "!("+s+")")
		}
		if f.cur != "" {
			parts = append(parts, f.cur)
		}
	}
	return strings.Join(parts, " && ")
}

// define records a #define: its value when it evaluates to an integer,
// else its body; a function-like macro as its parameter list.
func (x *extractor) define(file string, ln int, text, guard, cond string) error {
	text = strings.TrimSpace(strings.TrimPrefix(text, "define"))
	end := 0
	for end < len(text) && (isIdentStart(text[end]) || isDigit(text[end])) {
		end++
	}
	name := text[:end]
	if name == "" {
		return &ExtractError{file, ln, "#define without a name"}
	}
	if name == guard {
		return nil
	}
	m := macro{}
	body := text[end:]
	if strings.HasPrefix(body, "(") {
		close := strings.Index(body, ")")
		if close < 0 {
			return &ExtractError{file, ln, "unterminated macro parameter list"}
		}
		m.fn = true
		for _, p := range strings.Split(body[1:close], ",") {
			if p = strings.TrimSpace(p); p != "" {
				m.params = append(m.params, p)
			}
		}
		body = body[close+1:]
	}
	m.body = tokenize(body)
	x.macros[name] = m
	if m.fn {
		x.add(KindMacro, file, name, "("+strings.Join(m.params, ", ")+")", cond)
		return nil
	}
	if v, err := x.eval(m.body); err == nil {
		x.add(KindDefine, file, name, strconv.FormatInt(v, 10), cond)
	} else {
		x.add(KindDefine, file, name, join(m.body), cond)
	}
	return nil
}

// join renders tokens in one canonical spacing.
func join(toks []string) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			prev := toks[i-1]
			tight := prev == "(" || prev == "[" || prev == "." || prev == "!" || prev == "~" ||
				t == ")" || t == "]" || t == "," || t == "[" ||
				t == "." && (isIdentStart(prev[0]) || prev == ")" || prev == "]") ||
				t == "(" && (isIdentStart(prev[0]) || prev == ")") ||
				t == "*" && prev == "*"
			if !tight {
				b.WriteByte(' ')
			}
		}
		b.WriteString(t)
	}
	return b.String()
}
