//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestHugeHeapAdvisesNextAllocations: after hugeHeap, the heap's next
// allocations land in memory advised for transparent huge pages (VmFlags
// "hg" in /proc/self/smaps), and the block hugeHeap allocated to get
// there is not kept.
func TestHugeHeapAdvisesNextAllocations(t *testing.T) {
	const n = 16 << 20
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	hugeHeap(n)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > n/4 {
		t.Errorf("the heap kept %d bytes after hugeHeap(%d): the block was not freed", grew, n)
	}
	// Allocations of several sizes, as the judge makes them; each must
	// come from advised memory.
	for _, size := range []int{64, 4 << 10, 256 << 10} {
		b := make([]byte, size)
		addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		flags, ok := vmFlags(t, addr)
		if !ok {
			t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
		}
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("a %d-byte allocation at %#x is in a mapping without MADV_HUGEPAGE (VmFlags: %s)", size, addr, flags)
		}
		runtime.KeepAlive(b)
	}
}

// vmFlags returns the VmFlags line of the mapping holding addr.
func vmFlags(t *testing.T, addr uintptr) (string, bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return "", false
}

// mappingRange parses a mapping's header line ("lo-hi perms ...").
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
