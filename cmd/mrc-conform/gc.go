package main

import (
	"os"
	"runtime/debug"
)

// judgeGCPercent is the garbage collector's target (GOGC) for a judge run
// when the environment does not set GOGC. The judge allocates little
// garbage (nothing per frame; its memory is bounded tables that stay
// live), so a collection frees little, and every collection scans the
// program's pointer-holding globals: gopacket's layers.EthernetTypeMetadata
// and PPPTypeMetadata alone are 5 MB, mostly pages the program never
// touches otherwise. The first collection costs about 1,340 page faults
// (5.2 MB) on its own. At 400 the first collection comes at a 16 MB heap
// instead of 4 MB: the loss capture (93,683 frames) is judged without one.
// Peak RSS, at 400 against 100: loss four times over 27 MB against 32 MB,
// one connection of 2 M frames 22 MB against 27 MB, the incast capture
// (7 QPs, a 19 MB live heap) 52 MB against 49 MB.
const judgeGCPercent = 400

// tuneGC sets the collector's target for a judge run, unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(judgeGCPercent)
	}
}
