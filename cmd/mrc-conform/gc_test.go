package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestJudgeGCPercent: a judge run sets the collector's target to
// judgeGCPercent, unless GOGC is set in the environment.
func TestJudgeGCPercent(t *testing.T) {
	old, had := os.LookupEnv("GOGC")
	defer func() {
		if had {
			os.Setenv("GOGC", old)
		}
		debug.SetGCPercent(100)
	}()
	os.Unsetenv("GOGC")
	debug.SetGCPercent(100)
	dispatch([]string{"judge", "--pics", "default", "no-such-capture.pcapng"}, io.Discard, io.Discard)
	if got := debug.SetGCPercent(100); got != judgeGCPercent {
		t.Errorf("GOGC unset: the judge runs at %d, want %d", got, judgeGCPercent)
	}
	os.Setenv("GOGC", "100")
	dispatch([]string{"judge", "--pics", "default", "no-such-capture.pcapng"}, io.Discard, io.Discard)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100 set: the judge runs at %d, want 100", got)
	}
}

// TestCaptureBytes: the files' sizes add up; a compressed file or one
// that cannot be read counts as more than smallCapture.
func TestCaptureBytes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.pcapng", 1000), write("b.pcap", 234)
	if got := captureBytes([]string{a, b}); got != 1234 {
		t.Errorf("two files of 1000 and 234 bytes: %d", got)
	}
	for _, files := range [][]string{{a, write("c.pcapng.gz", 10)}, {a, filepath.Join(dir, "missing.pcapng")}} {
		if got := captureBytes(files); got <= smallCapture {
			t.Errorf("%q: %d, not more than smallCapture", files, got)
		}
	}
}
