package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
)

// TestRunPICSProfile: with no --profile, run speaks the PICS's profile
// (the flag's documented default): the in-process peer speaks it too, so
// a case passes as it does under --profile naming the same preset.
func TestRunPICSProfile(t *testing.T) {
	emu, err := json.Marshal(spec.EmuProfile())
	if err != nil {
		t.Fatal(err)
	}
	pics := filepath.Join(t.TempDir(), "pics.json")
	if err := os.WriteFile(pics, []byte(`{"pics_version": 1, "features": {}, "profile": `+string(emu)+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--cases", "MRC-LR-RTX-101", "--profile", "emu"},
		{"run", "--cases", "MRC-LR-RTX-101", "--pics", pics},
	} {
		out, errs, status := run(t, args...)
		if status != 0 || !strings.Contains(out, "RESULT PASS") {
			t.Errorf("%v: exit status %d\n%s\n%s", args, status, out, errs)
		}
	}
}
