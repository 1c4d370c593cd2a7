package main

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCoreSpeeds: one speed per CPU the process may use, each positive,
// and the calling thread's CPU mask as it was before the probe. Fails
// when the probe leaves the thread pinned to the last CPU it measured.
func TestCoreSpeeds(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after cpuSet
	if err := affinity(syscall.SYS_SCHED_GETAFFINITY, &before); err != nil {
		t.Fatal(err)
	}
	cpus, speeds, err := coreSpeeds(5 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := affinity(syscall.SYS_SCHED_GETAFFINITY, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("CPU mask %x after the probe, %x before", after[0], before[0])
	}
	if len(cpus) != runtime.NumCPU() || len(speeds) != len(cpus) {
		t.Fatalf("%d CPUs, %d speeds; want %d", len(cpus), len(speeds), runtime.NumCPU())
	}
	for i, v := range speeds {
		if v <= 0 {
			t.Errorf("CPU %d: speed %v", cpus[i], v)
		}
	}
	var b strings.Builder
	if err := writeCores(&b); err != nil || len(strings.Fields(b.String())) != 1+len(cpus) || !strings.HasPrefix(b.String(), "cores ") {
		t.Errorf("writeCores: %q, %v", b.String(), err)
	}
}
