//go:build linux && (amd64 || arm64)

package main

import (
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// hugePageSize is the x86-64 and arm64 (4 KiB granule) transparent huge
// page size; advice on a range smaller than one is a no-op.
const hugePageSize = 2 << 20

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
func hugeHeap(n int) {
	old := debug.SetGCPercent(-1)
	first := new([64]byte) // somewhere in the heap mapped so far
	b := make([]byte, n)   // the runtime maps n more bytes for it
	lo := uintptr(unsafe.Pointer(first)) &^ (heapArena - 1)
	blo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if blo >= lo && blo-lo < 2*heapArena {
		adviseHuge(lo, blo+uintptr(n)) // one run of the runtime's arenas
	} else {
		adviseHuge(lo, lo+heapArena) // the block went to a distant arena
		adviseHuge(blo, blo+uintptr(n))
	}
	runtime.KeepAlive(first)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	debug.SetGCPercent(old)
}

// heapArena is the runtime's heap arena on 64-bit Linux (heapArenaBytes,
// 64 MiB): it reserves heap address space in aligned arenas of this size,
// so the arena holding a heap object is the runtime's alone.
const heapArena = 64 << 20

// adviseHuge advises the whole huge pages inside [lo, hi) for THP. The
// range is the runtime's heap arenas (mapped heap, free pages and
// reserved address space): the advice changes how the kernel backs
// memory, never its contents. An error (THP not built into the kernel)
// leaves 4 KiB pages.
func adviseHuge(lo, hi uintptr) {
	start := (lo + hugePageSize - 1) &^ (hugePageSize - 1)
	end := hi &^ (hugePageSize - 1)
	if end <= start {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_HUGEPAGE)
}
