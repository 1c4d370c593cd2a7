package api

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Kind is what a fact describes.
type Kind string

// The kinds of fact.
const (
	KindInclude Kind = "include" // Name: the included header
	KindDefine  Kind = "define"  // Value: the integer, or the body if it is not one
	KindMacro   Kind = "macro"   // function-like define; Value: its parameters
	KindEnum    Kind = "enum"    // an enum type
	KindConst   Kind = "const"   // Name: enum.CONSTANT; Value: the integer
	KindOpaque  Kind = "opaque"  // a struct or union declared without a body
	KindStruct  Kind = "struct"  // Value: struct or union
	KindField   Kind = "field"   // Name: struct.field[.field]; Value: position and type
	KindTypedef Kind = "typedef" // Value: the type
	KindFunc    Kind = "func"    // Value: return type and parameters
)

// Fact is one element of the upstream API.
type Fact struct {
	Kind  Kind
	File  string // header file name
	Name  string
	Value string
	Cond  string // the #if condition it is declared under, or ""
}

// Key identifies a fact across versions: its kind, name and condition
// (and, for an include, the including file).
func (f Fact) Key() string {
	k := string(f.Kind) + " " + f.Name
	if f.Kind == KindInclude {
		k = string(f.Kind) + " " + f.File + " " + f.Name
	}
	if f.Cond != "" {
		k += " [" + f.Cond + "]"
	}
	return k
}

// Leaf is the last component of the fact's name: the constant, field or
// function name a citation would use.
func (f Fact) Leaf() string {
	if i := strings.LastIndexByte(f.Name, '.'); i >= 0 {
		return f.Name[i+1:]
	}
	return f.Name
}

// Int is the fact's value as an integer, for defines and enum constants.
func (f Fact) Int() (int64, bool) {
	v, err := strconv.ParseInt(f.Value, 10, 64)
	return v, err == nil
}

func (f Fact) String() string {
	s := string(f.Kind) + "\t" + f.File + "\t" + f.Name + "\t" + f.Value
	if f.Cond != "" {
		s += "\t" + f.Cond
	}
	return s
}

// Table is a facts table: the facts of one upstream commit.
type Table struct {
	Repo   string // owner/name
	Commit string // full hash
	Date   string // commit date, YYYY-MM-DD
	Facts  []Fact
}

// Format renders t as the text of facts.txt: three header lines, then one
// tab-separated fact a line (kind, file, name, value, condition).
func (t *Table) Format() string {
	var b strings.Builder
	b.WriteString("# Facts of the OCP MRC API headers, extracted by cmd/mrc-apifacts. Do not edit by hand.\n")
	fmt.Fprintf(&b, "@repo %s\n@commit %s\n@date %s\n", t.Repo, t.Commit, t.Date)
	for _, f := range t.Facts {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseTable reads the format Format writes.
func ParseTable(text string) (*Table, error) {
	t := &Table{}
	for i, line := range strings.Split(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "@"):
			k, v, _ := strings.Cut(line[1:], " ")
			switch k {
			case "repo":
				t.Repo = v
			case "commit":
				t.Commit = v
			case "date":
				t.Date = v
			default:
				return nil, fmt.Errorf("api: facts line %d: unknown header %q", i+1, k)
			}
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) < 4 || len(p) > 5 {
			return nil, fmt.Errorf("api: facts line %d: want 4 or 5 tab-separated columns, have %d", i+1, len(p))
		}
		f := Fact{Kind: Kind(p[0]), File: p[1], Name: p[2], Value: p[3]}
		if len(p) == 5 {
			f.Cond = p[4]
		}
		t.Facts = append(t.Facts, f)
	}
	if t.Commit == "" || len(t.Facts) == 0 {
		return nil, fmt.Errorf("api: facts table without @commit or facts")
	}
	return t, nil
}

// Lookup returns the facts whose name is name (any condition).
func (t *Table) Lookup(name string) []Fact {
	var out []Fact
	for _, f := range t.Facts {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// Const returns the integer of the define or enum constant named name
// ("MRC_MAX_VENDOR_CFG_SIZE" or "mrc_qp_attr_mask.MRC_QP_TIMEOUT") declared
// without a condition.
func (t *Table) Const(name string) (int64, bool) {
	for _, f := range t.Lookup(name) {
		if f.Cond == "" && (f.Kind == KindConst || f.Kind == KindDefine) {
			return f.Int()
		}
	}
	return 0, false
}

//go:embed facts.txt
var pinnedText string

var (
	pinnedOnce sync.Once
	pinned     *Table
	pinnedErr  error
)

// Pinned returns the facts table this project follows.
func Pinned() (*Table, error) {
	pinnedOnce.Do(func() { pinned, pinnedErr = ParseTable(pinnedText) })
	return pinned, pinnedErr
}

// Change is one difference between two tables.
type Change struct {
	Old, New *Fact // Old nil: added; New nil: removed
}

func (c Change) String() string {
	switch {
	case c.Old == nil:
		return "+ " + c.New.String()
	case c.New == nil:
		return "- " + c.Old.String()
	}
	return fmt.Sprintf("~ %s\t%s\t%s: %s -> %s", c.New.Kind, c.New.File, c.New.Name, c.Old.Value, c.New.Value)
}

// Fact is the changed fact (the new one when there is one).
func (c Change) Fact() Fact {
	if c.New != nil {
		return *c.New
	}
	return *c.Old
}

// Diff lists the facts added, removed or changed from old to new, by key.
func Diff(old, new *Table) []Change {
	om, nm := map[string]*Fact{}, map[string]*Fact{}
	for i := range old.Facts {
		om[old.Facts[i].Key()] = &old.Facts[i]
	}
	for i := range new.Facts {
		nm[new.Facts[i].Key()] = &new.Facts[i]
	}
	var out []Change
	for k, o := range om {
		n := nm[k]
		if n == nil || n.Value != o.Value || n.File != o.File {
			out = append(out, Change{Old: o, New: n})
		}
	}
	for k, n := range nm {
		if om[k] == nil {
			out = append(out, Change{New: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fact().Key() < out[j].Fact().Key() })
	return out
}
