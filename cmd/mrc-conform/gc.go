package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// judgeGCPercent is the garbage collector's target (GOGC) for a judge run,
// after its first collection, when the environment does not set GOGC. The
// judge allocates little garbage (nothing per frame; its memory is
// bounded tables that stay live), so a collection frees little. At 400
// against 100 (measured when 400 was also the first target): peak RSS of
// loss four times over 23 MB against 20-21 MB, one connection of 2 M
// frames 16 MB either way, the incast capture (7 QPs) 45 MB against
// 43-44 MB.
const judgeGCPercent = 400

// judgeFirstGCPercent is the target until the judge's first collection.
// The heap fills at start with tables that stay live (the engines', and
// a parallel judge's batches), and a collection then frees little: at
// 400 the first came at a 16 MB heap, 20-30 ms into the incast capture
// with --jobs 2, freed 5 of 18 MB, and its mark took 5-6 ms of a core the
// workers were using. At 1000 it comes at a 40 MB heap, and the loss and
// incast captures, loss four times over and one connection of 2 M frames
// are judged without one: on incast, 15 paired rounds each, --jobs 2 took
// 3.3 % less wall and CPU time, --jobs 1 1.8 % less; peak RSS rose by
// 2-4 MB (loss 25.5-27.6 MB, loss four times over 27.6-29.3 MB, 2 M frames
// 21.2-21.5 MB, incast 55.7-56.2 MB). After the first collection the
// target is judgeGCPercent, so that a long run's heap grows as before.
const judgeFirstGCPercent = 1000

// tuneGC sets the collector's target for a judge run, unless GOGC is set,
// and reports whether it did.
func tuneGC() bool {
	if _, set := os.LookupEnv("GOGC"); set {
		return false
	}
	debug.SetGCPercent(judgeFirstGCPercent)
	return true
}

// afterNextGC calls f once the next collection has run: f is the
// finalizer of an object nothing references.
func afterNextGC(f func()) {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { f() })
}

// gcSentinel holds a pointer, so that it is not one of the tiny objects
// the allocator packs together, whose finalizers may never run.
type gcSentinel struct{ _ *byte }

// judgeHeap is how much of the heap a judge run puts on transparent huge
// pages (hugeHeap): more than the incast capture's 7 connections need
// (its heap peaks at about 21 MB); mapped but untouched memory costs
// nothing.
const judgeHeap = 32 << 20

// smallCapture is the most capture bytes (all files together) a judge
// run puts on huge pages with hugeheap.Now rather than hugeHeap: its heap
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
