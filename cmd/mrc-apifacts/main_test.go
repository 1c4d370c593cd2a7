package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeHeaders writes a stand-in upstream checkout: mrc.h moves
// MRC_QP_TIMEOUT to bit 5 (where it was before upstream fixed its mask),
// the other headers are empty.
func writeHeaders(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"mrc.h":             "enum mrc_qp_attr_mask {\n\tMRC_QP_TIMEOUT = 1 << 5,\n};\n",
		"mrc_api_ver.h":     "",
		"mrc_ctl.h":         "",
		"mrc_ctl_api_ver.h": "",
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestExtractCommand(t *testing.T) {
	var b strings.Builder
	code, err := run([]string{"extract", writeHeaders(t)}, &b)
	if err != nil || code != 0 {
		t.Fatalf("extract: %d %v", code, err)
	}
	if !strings.Contains(b.String(), "const\tmrc.h\tmrc_qp_attr_mask.MRC_QP_TIMEOUT\t32\n") {
		t.Errorf("extract printed:\n%s", b.String())
	}
}

// TestDiffCommand: diff reports the changed value and the code and
// requirements that cite it, and exits 1.
func TestDiffCommand(t *testing.T) {
	var b strings.Builder
	code, err := run([]string{"diff", writeHeaders(t)}, &b)
	if err != nil || code != 1 {
		t.Fatalf("diff: %d %v", code, err)
	}
	out := b.String()
	i := strings.Index(out, "~ const\tmrc.h\tmrc_qp_attr_mask.MRC_QP_TIMEOUT: 16 -> 32\n")
	if i < 0 {
		t.Fatalf("no change of MRC_QP_TIMEOUT in:\n%s", out)
	}
	next := out[i:]
	if j := strings.Index(next[1:], "\n~ "); j > 0 {
		next = next[:j]
	}
	if !strings.Contains(next, "statemachine/attr.go:") || !strings.Contains(next, "statemachine/apifacts_test.go:") {
		t.Errorf("MRC_QP_TIMEOUT's citations miss attr.go or the mirror table:\n%s", next)
	}
	if !strings.Contains(out, "- const\tmrc_ctl.h\tmrc_ctl_ev_state.MRC_CTL_EV_DENIED\t4\n") {
		t.Error("a removed fact is not reported")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"extract"}, {"bogus", "."}, {"extract", "-nope", "."}, {"extract", t.TempDir()}} {
		var b strings.Builder
		if code, err := run(args, &b); err == nil || code != 2 {
			t.Errorf("%v: %d %v", args, code, err)
		}
	}
}
