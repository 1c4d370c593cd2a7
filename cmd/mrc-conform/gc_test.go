package main

import (
	"io"
	"os"
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
