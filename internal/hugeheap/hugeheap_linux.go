//go:build linux && (amd64 || arm64)

package hugeheap

import (
	"runtime"
	"syscall"
	"unsafe"
)

// PageSize is the x86-64 and arm64 (4 KiB granule) transparent huge page
// size; advice on a range smaller than one is a no-op.
const PageSize = 2 << 20

// HeapArena is the runtime's heap arena on 64-bit Linux (heapArenaBytes,
// 64 MiB): it reserves heap address space in aligned arenas of this size,
// so the arena holding a heap object is the runtime's alone.
const HeapArena = 64 << 20

// heapChunk is how much heap the runtime maps at a time (at least 512 of
// its 8 KiB pages).
const heapChunk = 4 << 20

func init() {
	if v, _ := syscall.Getenv("MRC_HUGEHEAP"); v != "off" {
		Now()
	}
}

// Now puts the heap mapped so far on transparent huge pages: the arena
// holding it is advised and its touched 2 MiB ranges collapsed. Memory
// the runtime maps later, a fresh mapping, is not advised (see
// mrc-conform's hugeHeap).
func Now() {
	if !enabled {
		return
	}
	first := new([64]byte)
	a := uintptr(unsafe.Pointer(first))
	lo := a &^ (HeapArena - 1)
	Advise(lo, lo+HeapArena)
	// The heap mapped so far (4 MiB, holding first) is within 4 MiB of
	// first.
	Collapse(max(lo, a-heapChunk), a+heapChunk)
	runtime.KeepAlive(first)
}

// Advise advises the whole huge pages inside [lo, hi) for THP. The range
// is the runtime's heap arenas (mapped heap, free pages and reserved
// address space): the advice changes how the kernel backs memory, never
// its contents. An error (THP not built into the kernel) leaves 4 KiB
// pages.
func Advise(lo, hi uintptr) {
	start := (lo + PageSize - 1) &^ (PageSize - 1)
	end := hi &^ (PageSize - 1)
	if end <= start {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_HUGEPAGE)
}

// madvCollapse is MADV_COLLAPSE (Linux 6.1, include/uapi/asm-generic/
// mman-common.h; package syscall predates it): back a range that has
// 4 KiB pages with huge pages now, copying the pages it has.
const madvCollapse = 25

// Collapse collapses each 2 MiB range from lo up to the one holding hi
// into a huge page, where the system's THP setting allows (Enabled). The
// kernel skips a range nothing touched yet (its first touch takes a huge
// page under the advice) and refuses reserved address space and older
// kernels (EINVAL): errors leave 4 KiB pages. Ranges go one at a time
// because a refused range fails the whole call. Collapsing keeps
// memory's contents, and the runtime has mapped these ranges for good.
func Collapse(lo, hi uintptr) {
	if !enabled {
		return
	}
	for a := lo &^ (PageSize - 1); a < hi; a += PageSize {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a, PageSize, madvCollapse)
	}
}

// Enabled reports whether the system's THP setting is "always" or
// "madvise": MADV_COLLAPSE ignores the setting, and "never" is the
// administrator's choice to keep.
func Enabled() bool { return enabled }

var enabled = thpEnabled()

// thpEnabled reads the system's THP setting with system calls alone, so
// that the package imports no package whose init would run first.
func thpEnabled() bool {
	fd, err := syscall.Open("/sys/kernel/mm/transparent_hugepage/enabled", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var b [128]byte
	n, err := syscall.Read(fd, b[:])
	if err != nil || n <= 0 {
		return false
	}
	s := string(b[:n])
	for i := 0; i+len("[never]") <= len(s); i++ {
		if s[i:i+len("[never]")] == "[never]" {
			return false
		}
	}
	return true
}
