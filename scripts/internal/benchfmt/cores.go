package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// The --jobs rounds compare one core's work with two cores' on a virtual
// machine whose host runs other work beside it. bench.sh probes each
// core's speed before and after each round (benchfmt cores), and the
// Performance section shows the ratio in the rounds with the cores even
// and in the others, beside the verdict, which is on every round. Over 40
// rounds here, one core ran at least 10 % slower in 22: --jobs 2 was then
// 1.48x faster with 15 % more CPU than --jobs 1, against 1.68x with 4 %
// more in the 17 even rounds. The probe sees a core's speed, not what the
// host's other work costs in shared caches and memory: in the bench.sh
// run of 18:36 UTC on 2 December 2026 the 13 even rounds of 21 gave
// 1.55x and the others 1.74x.

// probeTime is how long the arithmetic loop runs on each core.
const probeTime = 60 * time.Millisecond

// evenTol is how much slower than the fastest another core may run for
// the cores to count as even.
const evenTol = 0.05

// spin runs an arithmetic loop (a 64-bit LCG) for d and returns its speed
// in millions of steps per second.
func spin(d time.Duration) float64 {
	x := uint64(1)
	n := 0
	t0 := time.Now()
	for time.Since(t0) < d {
		for k := 0; k < 10000; k++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		n += 10000
	}
	runtime.KeepAlive(x) // the loop's result is computed
	return float64(n) / time.Since(t0).Seconds() / 1e6
}

// writeCores probes the cores and writes "cores S0 S1 ..." (speeds in
// millions of steps per second, in CPU order).
func writeCores(w io.Writer) error {
	_, speeds, err := coreSpeeds(probeTime)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("cores")
	for _, s := range speeds {
		fmt.Fprintf(&b, " %.0f", s)
	}
	b.WriteString("\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// even reports whether a probe's speeds are within evenTol of the
// fastest.
func even(speeds []float64) bool {
	if len(speeds) == 0 {
		return false
	}
	hi := speeds[0]
	for _, s := range speeds {
		hi = max(hi, s)
	}
	for _, s := range speeds {
		if s < (1-evenTol)*hi {
			return false
		}
	}
	return true
}
