//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"os"
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
//
// Those lowest addresses are in the 2 MiB the program's start-up already
// touched in 4 KiB pages, and a range that has 4 KiB pages gets more 4 KiB
// pages, advice or not: the judge of a small capture took about 350 faults
// there. collapseHuge moves the heap's touched 2 MiB ranges to huge pages
// at once (blackhole.pcapng: 946 -> 630 faults, 35.2 -> 31.4 ms CPU).
func hugeHeap(n int) {
	old := debug.SetGCPercent(-1)
	first := new([64]byte) // somewhere in the heap mapped so far
	b := make([]byte, n)   // the runtime maps n more bytes for it
	lo := uintptr(unsafe.Pointer(first)) &^ (heapArena - 1)
	blo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	used := lo + heapArena // the heap in use before the block
	if blo >= lo && blo-lo < 2*heapArena {
		adviseHuge(lo, blo+uintptr(n)) // one run of the runtime's arenas
		used = blo
	} else {
		adviseHuge(lo, lo+heapArena) // the block went to a distant arena
		adviseHuge(blo, blo+uintptr(n))
	}
	runtime.KeepAlive(first)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	debug.SetGCPercent(old)
	if thpEnabled() {
		collapseHuge(lo, used)
	}
}

// hugeHeapNow puts the heap mapped so far on transparent huge pages:
// the arena holding it is advised and its touched 2 MiB ranges collapsed,
// without hugeHeap's block and collection. A small capture's judge fits
// in the heap the runtime mapped at start (4 MiB at a time); memory it
// maps later, a fresh mapping, is not advised. The collection, its sweep
// and the new span sets it fills are most of hugeHeap's cost there.
func hugeHeapNow() {
	first := new([64]byte)
	a := uintptr(unsafe.Pointer(first))
	lo := a &^ (heapArena - 1)
	adviseHuge(lo, lo+heapArena)
	if thpEnabled() {
		// The heap mapped so far (4 MiB, holding first) is within 4 MiB
		// of first.
		collapseHuge(max(lo, a-heapChunk), a+heapChunk)
	}
	runtime.KeepAlive(first)
}

// heapChunk is how much heap the runtime maps at a time (at least 512 of
// its 8 KiB pages).
const heapChunk = 4 << 20

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

// madvCollapse is MADV_COLLAPSE (Linux 6.1, include/uapi/asm-generic/
// mman-common.h; package syscall predates it): back a range that has
// 4 KiB pages with huge pages now, copying the pages it has.
const madvCollapse = 25

// collapseHuge collapses each 2 MiB range from lo up to the one holding
// hi into a huge page. The kernel skips a range nothing touched yet (its
// first touch takes a huge page under the advice) and refuses reserved
// address space and older kernels (EINVAL): errors leave 4 KiB pages.
// Ranges go one at a time because a refused range fails the whole call.
// Collapsing keeps memory's contents, and the runtime has mapped these
// ranges for good.
func collapseHuge(lo, hi uintptr) {
	for a := lo &^ (hugePageSize - 1); a < hi; a += hugePageSize {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a, hugePageSize, madvCollapse)
	}
}

// thpEnabled reports whether the system's THP setting is "always" or
// "madvise": MADV_COLLAPSE ignores the setting, and "never" is the
// administrator's choice to keep.
func thpEnabled() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !bytes.Contains(b, []byte("[never]"))
}
