package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestJudgeGCPercent: a judge run sets the collector's target to
// judgeFirstGCPercent, unless GOGC is set in the environment, and to
// judgeGCPercent once a collection has run after start-up.
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
	// Refused before start-up ends: the first target stays.
	dispatch([]string{"judge", "--pics", "default", "no-such-capture.pcapng"}, io.Discard, io.Discard)
	if got := gogc(); got != judgeFirstGCPercent {
		t.Errorf("GOGC unset: the judge starts at %d, want %d", got, judgeFirstGCPercent)
	}
	dispatch([]string{"judge", "--pics", "default", ctd + "good.pcapng"}, io.Discard, io.Discard)
	runtime.GC()
	if got := waitGOGC(judgeGCPercent, 5*time.Second); got != judgeGCPercent {
		t.Errorf("GOGC unset: after a collection the judge runs at %d, want %d", got, judgeGCPercent)
	}
	os.Setenv("GOGC", "100")
	debug.SetGCPercent(100)
	dispatch([]string{"judge", "--pics", "default", ctd + "good.pcapng"}, io.Discard, io.Discard)
	runtime.GC()
	if got := waitGOGC(judgeGCPercent, 200*time.Millisecond); got != 100 {
		t.Errorf("GOGC=100 set: the judge runs at %d, want 100", got)
	}
}

// TestAfterNextGC: the function runs once a collection has run.
func TestAfterNextGC(t *testing.T) {
	done := make(chan struct{})
	afterNextGC(func() { close(done) })
	runtime.GC()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("afterNextGC: the function did not run within 10 s of a collection")
	}
}

// gogc is the collector's target, read without changing it.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// waitGOGC waits up to d for the target to become want (a finalizer sets
// it after a collection) and returns the target.
func waitGOGC(want int, d time.Duration) int {
	for end := time.Now().Add(d); gogc() != want && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	return gogc()
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
