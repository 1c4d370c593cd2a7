package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/internal/cli"
)

func init() {
	register("cases", "list the conformance cases with the requirements each checks, without running anything", runCases)
}

const casesUsage = `usage: mrc-conform cases [flags] [PATTERN...]

Lists the cases of the conformance catalog, passive (judge) and active
(run), with the requirement IDs each checks, and runs nothing. PATTERNs
select case IDs as run --cases does (glob patterns, comma-separated or
not: 'MRC-LR-*' MRC-EV-BAD-101). Exit status: 0 listed, 2 a usage error
or a pattern that matches no case.

flags:
`

// caseJSON is one case in the JSON output.
type caseJSON struct {
	ID           string                      `json:"id"`
	Mode         string                      `json:"mode"`
	Level        string                      `json:"level"`
	Requirements []conformance.RequirementID `json:"requirements"`
	Title        string                      `json:"title"`
}

func runCases(args []string, stdout, stderr io.Writer) int {
	cmd := cli.Command{Name: "mrc-conform cases", Stdout: stdout, Stderr: stderr}
	fs := newFlagSet("cases", casesUsage)
	mode := fs.String("mode", "", "list only passive or active cases")
	format := fs.String("format", "text", "output format: text or json")
	pos, done, code := cmd.Parse(fs, args, true)
	if done {
		return code
	}
	if *format != "text" && *format != "json" {
		return cmd.Usagef("unknown format %q (want text or json)", *format)
	}
	if *mode != "" && *mode != string(conformance.Passive) && *mode != string(conformance.Active) {
		return cmd.Usagef("unknown mode %q (want passive or active)", *mode)
	}
	if err := conformance.CatalogErr(); err != nil {
		return cmd.Errorf(2, "%v", err)
	}
	var pats []string
	for _, p := range pos {
		for _, q := range strings.Split(p, ",") {
			if q = strings.TrimSpace(q); q != "" {
				if _, err := path.Match(q, ""); err != nil {
					return cmd.Usagef("pattern %q: %v", q, err)
				}
				pats = append(pats, q)
			}
		}
	}
	list, unmatched := selectCases(conformance.Catalog(), pats, conformance.Mode(*mode))
	if len(unmatched) > 0 {
		return cmd.Usagef("no case matches %s", strings.Join(unmatched, ", "))
	}
	if *format == "json" {
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return cmd.Errorf(2, "%v", err)
		}
		stdout.Write(append(b, '\n'))
		return 0
	}
	// One line per case, one whitespace-free field per column (the
	// requirements comma-separated), so that awk and cut work.
	reqs := make([]string, len(list))
	width := len("REQUIREMENTS")
	for i, c := range list {
		reqs[i] = conformance.JoinRequirements(c.Requirements, ",")
		if len(reqs[i]) <= 60 { // a longer list pushes its title right
			width = max(width, len(reqs[i]))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %-7s %-8s %-*s %s\n", "CASE", "MODE", "LEVEL", width, "REQUIREMENTS", "TITLE")
	counts := map[string]int{}
	for i, c := range list {
		level := strings.ReplaceAll(c.Level, " ", "-") // MUST-NOT: one field
		fmt.Fprintf(&b, "%-18s %-7s %-8s %-*s %s\n", c.ID, c.Mode, level, width, reqs[i], c.Title)
		counts[c.Mode]++
	}
	fmt.Fprintf(&b, "\n%d cases (%d passive, %d active)\n", len(list), counts[string(conformance.Passive)], counts[string(conformance.Active)])
	io.WriteString(stdout, b.String())
	return 0
}

// selectCases returns the cases matching any of pats (all when none) and
// of mode (any when empty), and the patterns that matched no case.
func selectCases(all []conformance.Case, pats []string, mode conformance.Mode) (list []caseJSON, unmatched []string) {
	hit := make([]bool, len(pats))
	list = []caseJSON{}
	for _, c := range all {
		if mode != "" && c.Mode != mode {
			continue
		}
		ok := len(pats) == 0
		for i, p := range pats {
			if m, _ := path.Match(p, c.ID); m {
				ok, hit[i] = true, true
			}
		}
		if ok {
			list = append(list, caseJSON{ID: c.ID, Mode: string(c.Mode), Level: string(c.Level), Requirements: c.Requirements, Title: c.Title})
		}
	}
	for i, p := range pats {
		if !hit[i] {
			unmatched = append(unmatched, p)
		}
	}
	return list, unmatched
}
