package main

import (
	"math"
	"os"
	"runtime/debug"
	"strings"
)

// judgeGCPercent is the garbage collector's target (GOGC) for a judge run
// when the environment does not set GOGC. The judge allocates little
// garbage (nothing per frame; its memory is bounded tables that stay
// live), so a collection frees little. At 400 the first collection comes
// at a 16 MB heap instead of 4 MB: the loss capture (93,683 frames) is
// judged without one (at 100, --jobs 1 collects once). Peak RSS, at 400
// against 100: loss four times over 23 MB against 20-21 MB, one
// connection of 2 M frames 16 MB either way, the incast capture (7 QPs)
// 45 MB against 43-44 MB.
const judgeGCPercent = 400

// tuneGC sets the collector's target for a judge run, unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(judgeGCPercent)
	}
}

// judgeHeap is how much of the heap a judge run puts on transparent huge
// pages (hugeHeap): more than the incast capture's 7 connections need
// (its heap peaks at about 21 MB); mapped but untouched memory costs
// nothing.
const judgeHeap = 32 << 20

// smallCapture is the most capture bytes (all files together) a judge
// run puts on huge pages with hugeHeapNow rather than hugeHeap: its heap
// fits in what the runtime mapped at start. Judge of blackhole.pcapng
// (161 KB), alternating rounds: 48.2 -> 38.7 ms CPU, 643 -> 522 faults;
// of the loss capture's first 2,000 frames (5.1 MB) it would save CPU
// but take more faults (654 -> 694), at 5,000 (11.8 MB) 664 -> 995.
const smallCapture = 4 << 20

// captureBytes is the size of the capture files together. A compressed
// file, or one it cannot stat (the judge reports why), counts as more
// than any limit.
func captureBytes(files []string) int64 {
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || strings.HasSuffix(f, ".gz") {
			return math.MaxInt64
		}
		n += st.Size()
	}
	return n
}
