package main

import (
	"os"
	"runtime/debug"
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
