package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestCasesLists: cases lists every case of the catalog with its
// requirements, passive and active, and runs nothing (no progress, no
// RESULT line).
func TestCasesLists(t *testing.T) {
	out, errs, code := run(t, "cases")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	all := conformance.Catalog()
	if len(lines) != len(all)+3 || !strings.HasPrefix(lines[0], "CASE ") {
		t.Fatalf("%d lines for %d cases:\n%s", len(lines), len(all), out)
	}
	for i, c := range all {
		f := strings.Fields(lines[i+1])
		if f[0] != c.ID || f[1] != string(c.Mode) || f[3] != conformance.JoinRequirements(c.Requirements, ",") {
			t.Errorf("line %q: want %s %s %s", lines[i+1], c.ID, c.Mode, conformance.JoinRequirements(c.Requirements, ","))
		}
	}
	if strings.Contains(out, "RESULT") {
		t.Errorf("cases ran something:\n%s", out)
	}
	out, _, code = run(t, "cases", "--format", "json", "--mode", "active", "MRC-LR-RTX-101,MRC-EV-*")
	var list []caseJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 2 || list[0].Mode != "active" {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	for _, c := range list {
		if c.Mode != "active" || len(c.Requirements) == 0 || !(c.ID == "MRC-LR-RTX-101" || strings.HasPrefix(c.ID, "MRC-EV-")) {
			t.Errorf("selected %+v", c)
		}
	}
	for _, bad := range [][]string{{"cases", "MRC-NOPE-*"}, {"cases", "--mode", "both"}, {"cases", "[x"}} {
		if _, errs, code := run(t, bad...); code != 2 || !strings.HasSuffix(errs, "see 'mrc-conform cases -h'\n") {
			t.Errorf("%q: exit %d, stderr %q", bad, code, errs)
		}
	}
}

// TestRequirementsWarnsFirst: outside this project's sources (no module,
// or another module) requirements warns on stderr before any output, and
// shows TESTS as "-" instead of a misleading 0; inside, no warning.
func TestRequirementsWarnsFirst(t *testing.T) {
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ root, warning string }{
		{other, `is module "example.com/other", not this project's`},
		{t.TempDir(), "has no go.mod"},
	} {
		out, errs, code := run(t, "requirements", "--root", c.root, "--prefix", "WIRE-GEN-1")
		if code != 0 || !strings.HasPrefix(errs, "mrc-conform requirements: warning: ") || !strings.Contains(errs, c.warning) {
			t.Errorf("--root %s: exit %d, stderr %q; want the warning first", c.root, code, errs)
		}
		if !strings.Contains(out, "WIRE-GEN-1    MUST       yes      -  ") {
			t.Errorf("--root %s: TESTS not shown as -:\n%s", c.root, out)
		}
	}
	wd, _ := os.Getwd()
	t.Chdir(other)
	if _, errs, _ := run(t, "requirements"); !strings.Contains(errs, "not this project's") {
		t.Errorf("in another module: stderr %q", errs)
	}
	t.Chdir(wd)
	if out, errs, code := run(t, "requirements", "--prefix", "WIRE-GEN-1"); code != 0 || errs != "" || strings.Contains(out, "    -  ") {
		t.Errorf("inside the repository: exit %d, stderr %q\n%s", code, errs, out)
	}
}
