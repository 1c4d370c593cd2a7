package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/spec"
)

func init() {
	register("requirements", "list the spec requirements with the cases and tests covering them, and the wire-observable MUST coverage", runRequirements)
}

const requirementsUsage = `usage: mrc-conform requirements [flags]

Lists every requirement of the specification registry with the catalog
cases covering it and the number of test citations (spec.ScanCitations
over the module's Go files), and summarises the share of wire-observable
MUST requirements that have a case. The rule deciding what is
wire-observable is documented in conformance/observable.go.

flags:
`

// requirementsJSON is the JSON output of the command.
type requirementsJSON struct {
	SchemaVersion string                            `json:"schema_version"`
	CitationsRoot string                            `json:"citations_root,omitempty"`
	Requirements  []conformance.RequirementCoverage `json:"requirements"`
	Summary       conformance.CoverageSummary       `json:"summary"`
}

func runRequirements(args []string, stdout, stderr io.Writer) int {
	cmd := cli.Command{Name: "mrc-conform requirements", Stdout: stdout, Stderr: stderr}
	fs := newFlagSet("requirements", requirementsUsage)
	uncovered := fs.Bool("uncovered", false, "list only the requirements no case covers")
	prefix := fs.String("prefix", "", "list only requirements whose ID starts with this (e.g. WIRE, RSP-SACK)")
	format := fs.String("format", "text", "output format: text or json")
	root := fs.String("root", "", "module root to scan for test citations (default: the module containing the working directory)")
	pos, done, code := cmd.Parse(fs, args, false)
	if done {
		return code
	}
	if len(pos) != 0 {
		return cmd.Usagef("unexpected argument %q", pos[0])
	}
	if *format != "text" && *format != "json" {
		return cmd.Usagef("unknown format %q (want text or json)", *format)
	}
	if err := conformance.CatalogErr(); err != nil {
		fmt.Fprintf(stderr, "mrc-conform requirements: %v\n", err)
		return 2
	}
	dir, warning := citationsRoot(*root)
	if warning != "" {
		// First, on stderr: the TESTS column means nothing without it.
		fmt.Fprintf(stderr, "mrc-conform requirements: warning: %s; test citations are not counted (TESTS -): run it inside a clone of %s, or give --root DIR\n", warning, thisModule)
	}
	var cites map[string][]spec.Citation
	if dir != "" {
		c, err := spec.ScanCitations(dir)
		if err != nil {
			fmt.Fprintf(stderr, "mrc-conform requirements: %v\n", err)
			return 2
		}
		cites = c
	}
	all, sum := conformance.Coverage(cites)
	var list []conformance.RequirementCoverage
	p := strings.ToUpper(*prefix)
	for _, rc := range all {
		if p != "" && !strings.HasPrefix(rc.ID, p) {
			continue
		}
		if *uncovered && len(rc.Cases) > 0 {
			continue
		}
		list = append(list, rc)
	}
	if list == nil {
		list = []conformance.RequirementCoverage{}
	}
	if *format == "json" {
		b, err := json.MarshalIndent(requirementsJSON{SchemaVersion: conformance.SchemaVersion, CitationsRoot: dir, Requirements: list, Summary: sum}, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "mrc-conform requirements: %v\n", err)
			return 2
		}
		stdout.Write(append(b, '\n'))
		return 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %-10s %-4s %5s  %s\n", "REQUIREMENT", "LEVEL", "OBS", "TESTS", "CASES")
	for _, rc := range list {
		obs := "no"
		if rc.Observable {
			obs = "yes"
		}
		cases := strings.Join(rc.Cases, " ")
		if cases == "" {
			cases = "-"
			if rc.Observable && (rc.Level == spec.Must || rc.Level == spec.MustNot) {
				cases = "- MISSING"
			}
		}
		tests := strconv.Itoa(rc.Tests)
		if dir == "" {
			tests = "-"
		}
		fmt.Fprintf(&b, "%-13s %-10s %-4s %5s  %s\n", rc.ID, rc.Level, obs, tests, cases)
	}
	fmt.Fprintf(&b, "\ncatalog: %d cases (%d passive, %d active)\n", sum.Cases, sum.PassiveCases, sum.ActiveCases)
	fmt.Fprintf(&b, "wire-observable requirements: %d of %d\n", sum.Observable, sum.Requirements)
	fmt.Fprintf(&b, "wire-observable MUST requirements with a case: %d of %d (%.1f%%)\n", sum.ObservableMustCase, sum.ObservableMust, sum.Percent)
	if len(sum.Missing) > 0 {
		fmt.Fprintf(&b, "missing a case: %s\n", strings.Join(sum.Missing, " "))
	}
	io.WriteString(stdout, b.String())
	return 0
}

// thisModule is the module whose sources carry the test citations.
const thisModule = "github.com/openmrc/mrc"

// citationsRoot is the directory whose Go files are scanned for test
// citations: root when given, else the module containing the working
// directory; either must be this project's module. warning says why
// there is none.
func citationsRoot(root string) (dir, warning string) {
	if root == "" {
		d, err := spec.FindModuleRoot(".")
		if err != nil {
			return "", "not inside a Go module"
		}
		root = d
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Sprintf("%s has no go.mod", root)
	}
	if m := modulePath(b); m != thisModule {
		return "", fmt.Sprintf("%s is module %q, not this project's", root, m)
	}
	return root, ""
}

// modulePath is the path on go.mod's module line.
func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
