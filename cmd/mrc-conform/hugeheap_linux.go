//go:build linux && (amd64 || arm64)

package main

import (
	"runtime"
	"runtime/debug"
	"unsafe"

	"github.com/openmrc/mrc/internal/hugeheap"
)

// hugeHeap makes the Go heap, and the next n bytes it grows into,
// eligible for transparent huge pages where the kernel's THP setting is
// "madvise" (the default of most distributions) or "always".
//
// Why: the judge's tables are allocated as a capture is read, and every
// fresh 4 KiB page costs a page fault. On a virtual machine a fault costs
// 5-15 µs, about as much as judging 10 frames: the incast capture's run
// took 7,300 faults. Backed by 2 MiB pages, the same heap takes a few
// dozen.
//
// How: the runtime maps heap memory with a fresh mmap each time the heap
// grows, so advice given to today's heap does not reach tomorrow's. One
// allocation of n bytes makes the runtime map n more bytes now (fresh
// memory is known to be zero, so nothing is touched); the advice goes on
// the heap's arenas up to the end of that block; a collection frees the
// block, and the judge's allocations then go to advised memory (the
// runtime reuses the lowest free addresses first). The collection is
// cheap here: the heap is nearly empty and mrc-conform's globals are
// small.
//
// Those lowest addresses include the start-up heap, which package
// hugeheap's init put on huge pages before most inits ran. A 2 MiB range
// that start-up touched in 4 KiB pages after it gets more 4 KiB pages,
// advice or not, until hugeheap.Collapse moves it to a huge page at once
// (blackhole.pcapng, before that init: 946 -> 630 faults, 35.2 -> 31.4 ms
// CPU).
func hugeHeap(n int) {
	old := debug.SetGCPercent(-1)
	first := new([64]byte) // somewhere in the heap mapped so far
	b := make([]byte, n)   // the runtime maps n more bytes for it
	lo := uintptr(unsafe.Pointer(first)) &^ (hugeheap.HeapArena - 1)
	blo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	used := lo + hugeheap.HeapArena // the heap in use before the block
	if blo >= lo && blo-lo < 2*hugeheap.HeapArena {
		hugeheap.Advise(lo, blo+uintptr(n)) // one run of the runtime's arenas
		used = blo
	} else {
		hugeheap.Advise(lo, lo+hugeheap.HeapArena) // the block went to a distant arena
		hugeheap.Advise(blo, blo+uintptr(n))
	}
	runtime.KeepAlive(first)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	debug.SetGCPercent(old)
	hugeheap.Collapse(lo, used)
}
