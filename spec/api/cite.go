package api

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/openmrc/mrc/spec"
)

// Citer finds where this project cites an upstream fact: requirements and
// ambiguity entries of the spec Markdown, and lines of Go code.
type Citer struct {
	reg   *spec.Registry
	lines []srcLine
	index map[string][]int // identifier to the lines holding it
}

type srcLine struct {
	file string // relative to the module root
	line int
	text string
}

var identRE = regexp.MustCompile(`[A-Za-z0-9_]+`)

// maxCiterFile bounds the Go source a Citer reads per file.
const maxCiterFile = 4 << 20

// NewCiter reads the spec Markdown and the Go files under the module root.
func NewCiter(root string) (*Citer, error) {
	mds, err := filepath.Glob(filepath.Join(root, "spec", "*.md"))
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, m := range mds {
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		files[filepath.Base(m)] = string(b)
	}
	reg, err := spec.Parse(files)
	if err != nil {
		return nil, err
	}
	c := &Citer{reg: reg, index: map[string][]int{}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if d.IsDir() {
			if path != root && (n == "vendor" || n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(n, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, maxCiterFile)
		for ln := 1; sc.Scan(); ln++ {
			for _, id := range identRE.FindAllString(sc.Text(), -1) {
				if ls := c.index[id]; len(ls) == 0 || ls[len(ls)-1] != len(c.lines) {
					c.index[id] = append(ls, len(c.lines))
				}
			}
			c.lines = append(c.lines, srcLine{filepath.ToSlash(rel), ln, sc.Text()})
		}
		return sc.Err()
	})
	return c, err
}

// Terms are the identifiers a citation of f would use: a constant's,
// define's, type's or function's name, and a field's own name when it is
// distinctive (has an underscore and six or more letters), else its
// dotted name.
func Terms(f Fact) []string {
	switch f.Kind {
	case KindInclude:
		return nil
	case KindConst:
		return []string{f.Leaf()}
	case KindField:
		if l := f.Leaf(); strings.Contains(l, "_") && len(l) >= 6 {
			return []string{l}
		}
	}
	return []string{f.Name}
}

// Citations are the places that mention f: requirement and AMB IDs, and
// "file:line" of Go code, each sorted.
func (c *Citer) Citations(f Fact) (reqs, code []string) {
	for _, term := range Terms(f) {
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(term) + `($|[^A-Za-z0-9_])`)
		for _, q := range c.reg.Requirements() {
			if re.MatchString(q.Text) {
				reqs = append(reqs, q.ID)
			}
		}
		for _, a := range c.reg.Ambiguities() {
			if re.MatchString(strings.Join(a.Options, " ") + " " + a.Default + " " + a.Reason) {
				reqs = append(reqs, a.ID)
			}
		}
		first := identRE.FindString(term)
		for _, i := range c.index[first] {
			if l := c.lines[i]; re.MatchString(l.text) {
				code = append(code, l.file+":"+strconv.Itoa(l.line))
			}
		}
	}
	sort.Strings(reqs)
	return reqs, code
}
