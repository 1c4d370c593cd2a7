//go:build tlc

package modelcheck

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestThroughputVsTLC measures, in one run on this machine, distinct
// states per second of CPU time of the Go checker and of TLC (one worker)
// on the shared configuration of the agreement check (sharedConfig, seed
// 0; tla/MRC_small.cfg with TransportACK and ReorderGuard as Go fixes
// them), and logs both and their ratio. CPU time, not wall time: the
// machine is shared. TLC's includes the JVM's start and the parsing of
// the model. Opt-in, as every TLC test: -tags tlc and MRC_TLA2TOOLS.
func TestThroughputVsTLC(t *testing.T) {
	jar := tlaTools(t)
	dir := tlaWorkdir(t)
	writeSharedCfg(t, dir)
	o := runTLC(t, jar, dir, "MRC.tla", "shared.cfg", "-workers", "1")
	if !o.ok {
		t.Fatalf("TLC on the shared configuration: %s\n%s", o, tail(o.out, 40))
	}
	m := reStates.FindAllStringSubmatch(o.out, -1)
	if m == nil {
		t.Fatalf("no state counts in TLC's output:\n%s", tail(o.out, 20))
	}
	tlcDistinct, _ := strconv.Atoi(m[len(m)-1][2])

	before := cpuTime(t)
	r, err := Check(sharedConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	goCPU := cpuTime(t) - before
	if r.Violation != nil {
		t.Fatalf("the shared configuration fails:\n%s", r.Violation)
	}
	goRate := float64(r.Distinct) / goCPU.Seconds()
	tlcRate := float64(tlcDistinct) / o.cpu.Seconds()
	t.Logf("Go checker: %d distinct states in %.1f s CPU (%.1f s wall): %.0f distinct/s CPU", r.Distinct, goCPU.Seconds(),
		r.Elapsed.Seconds(), goRate)
	t.Logf("TLC (1 worker): %d distinct states in %.1f s CPU (%.1f s wall): %.0f distinct/s CPU", tlcDistinct, o.cpu.Seconds(),
		o.elapsed.Seconds(), tlcRate)
	t.Logf("ratio Go/TLC: %.2f", goRate/tlcRate)
}

// cpuTime is the user + system CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
