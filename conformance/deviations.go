package conformance

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Deviation is a named, time-limited acceptance of a case's failure, in
// the style of OpenConfig featureprofiles deviations: the case still runs
// and its verdict is reported unchanged, with the deviation printed beside
// it; a FAIL covered by an unexpired deviation does not make the run fail.
type Deviation struct {
	Name    string    `json:"name"`
	Cases   []string  `json:"cases"`   // case IDs, or prefixes ending in "*"
	Expires time.Time `json:"-"`       // last day the deviation is valid (UTC)
	Reason  string    `json:"reason"`  // free text
	Line    int       `json:"line"`    // 1-based line in the file
	Expired bool      `json:"expired"` // set by Deviations.Resolve
}

// ExpiresString is the expiry date as written, YYYY-MM-DD.
func (d *Deviation) ExpiresString() string { return d.Expires.Format(time.DateOnly) }

// Matches reports whether the deviation names the case.
func (d *Deviation) Matches(caseID string) bool {
	for _, c := range d.Cases {
		if c == caseID || (strings.HasSuffix(c, "*") && strings.HasPrefix(caseID, strings.TrimSuffix(c, "*"))) {
			return true
		}
	}
	return false
}

// Deviations is a parsed deviations file.
type Deviations struct {
	File string
	SHA  string
	List []Deviation
}

// DeviationError reports a bad deviations line.
type DeviationError struct {
	File string
	Line int
	Msg  string
}

func (e *DeviationError) Error() string {
	f := e.File
	if f == "" {
		f = "conformance: deviations"
	}
	if e.Line == 0 { // the file as a whole
		return fmt.Sprintf("%s: %s", f, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", f, e.Line, e.Msg)
}

var devNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })

// LoadDeviations reads a deviations file (format in formats.md).
func LoadDeviations(name string) (*Deviations, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, &DeviationError{File: name, Msg: readErr(err)}
	}
	d, err := ParseDeviations(b)
	if err != nil {
		if de, ok := err.(*DeviationError); ok {
			de.File = name
		}
		return nil, err
	}
	d.File = name
	return d, nil
}

// ParseDeviations parses the line format:
//
//	# comment
//	NAME  CASE[,CASE...]  YYYY-MM-DD  REASON...
//
// Fields are separated by white space; REASON is the rest of the line and
// is required. A CASE is a case ID or a prefix ending in "*" that matches
// at least one case. Names are unique.
func ParseDeviations(b []byte) (*Deviations, error) {
	sum := sha256.Sum256(b)
	d := &Deviations{SHA: hex.EncodeToString(sum[:])}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	seen := map[string]bool{}
	cat := Catalog()
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(f string, a ...any) error { return &DeviationError{Line: ln, Msg: fmt.Sprintf(f, a...)} }
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, bad("want NAME CASES EXPIRES REASON, got %d fields", len(f))
		}
		if !devNameRE().MatchString(f[0]) {
			return nil, bad("bad deviation name %q", f[0])
		}
		if seen[f[0]] {
			return nil, bad("deviation %q defined twice", f[0])
		}
		seen[f[0]] = true
		exp, err := time.Parse(time.DateOnly, f[2])
		if err != nil {
			return nil, bad("expiry %q is not a YYYY-MM-DD date", f[2])
		}
		dv := Deviation{Name: f[0], Expires: exp, Line: ln}
		for _, c := range strings.Split(f[1], ",") {
			if c == "" {
				return nil, bad("empty case ID in %q", f[1])
			}
			found := false
			for i := range cat {
				if c == cat[i].ID || (strings.HasSuffix(c, "*") && strings.HasPrefix(cat[i].ID, strings.TrimSuffix(c, "*"))) {
					found = true
					break
				}
			}
			if !found {
				return nil, bad("%q matches no case of the catalog", c)
			}
			dv.Cases = append(dv.Cases, c)
		}
		// The reason is the rest of the line after the third field.
		rest := line
		for i := 0; i < 3; i++ {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[strings.IndexAny(rest+" ", " \t"):]
		}
		dv.Reason = strings.TrimSpace(rest)
		d.List = append(d.List, dv)
	}
	if err := sc.Err(); err != nil {
		return nil, &DeviationError{Msg: err.Error()}
	}
	return d, nil
}

// Resolve marks the deviations that have expired on date today (a
// deviation is valid through its expiry date) and returns the active ones.
func (d *Deviations) Resolve(today time.Time) (active, expired []Deviation) {
	if d == nil {
		return nil, nil
	}
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	for i := range d.List {
		dv := &d.List[i]
		dv.Expired = day.After(dv.Expires)
		c := *dv
		c.Cases = slices.Clone(dv.Cases)
		if dv.Expired {
			expired = append(expired, c)
		} else {
			active = append(active, c)
		}
	}
	return active, expired
}
