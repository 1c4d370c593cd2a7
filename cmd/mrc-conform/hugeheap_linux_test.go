//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/openmrc/mrc/internal/hugeheap"
	"github.com/openmrc/mrc/internal/testenv"
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

// collapseChild names the test TestHugeHeapCollapsesTouchedHeap runs in a
// fresh process: its heap is as the program starts, not as earlier tests
// left it, and in 4 KiB pages (MRC_HUGEHEAP=off: package hugeheap's init
// leaves it so).
const collapseChild = "MRC_TEST_HUGEHEAP_CHILD"

// TestHugeHeapCollapsesTouchedHeap: memory the heap held in 4 KiB pages
// before hugeHeap, or hugeheap.Now, (a live 64 KiB object) is in a huge
// page after it.
func TestHugeHeapCollapsesTouchedHeap(t *testing.T) {
	ways := map[string]func(){"hugeHeap": func() { hugeHeap(16 << 20) }, "hugeheap.Now": hugeheap.Now}
	way := os.Getenv(collapseChild)
	if way == "" {
		testenv.Root(t) // page frame numbers in /proc/self/pagemap
		if !hugeheap.Enabled() {
			testenv.Unavailable(t, "transparent huge pages are disabled ([never])")
		}
		for w := range ways {
			out, err := child(t, "TestHugeHeapCollapsesTouchedHeap", collapseChild+"="+w, "MRC_HUGEHEAP=off")
			if err != nil || !strings.Contains(out, "--- PASS") {
				t.Errorf("%s, in a fresh process: %v\n%s", w, err, out)
			}
		}
		return
	}
	x := make([]byte, 64<<10)
	for i := range x {
		x[i] = byte(i)
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	if inTHP(t, addr) {
		t.Fatalf("%#x was in a huge page before %s: nothing to show", addr, way)
	}
	ways[way]()
	if !inTHP(t, addr) {
		t.Errorf("%#x, touched before %s, is not in a huge page after it", addr, way)
	}
	for i := range x {
		if x[i] != byte(i) {
			t.Fatalf("byte %d changed: %d", i, x[i])
		}
	}
}

// inTHP reports whether the page holding addr is part of a transparent
// huge page (/proc/self/pagemap's frame number, /proc/kpageflags' KPF_THP).
func inTHP(t *testing.T, addr uintptr) bool {
	t.Helper()
	const pageSize, kpfTHP = 4096, 22
	e := read8(t, "/proc/self/pagemap", int64(addr/pageSize)*8)
	if e>>63 == 0 {
		t.Fatalf("%#x is not present", addr)
	}
	pfn := e & (1<<55 - 1)
	if pfn == 0 {
		t.Fatal("no page frame numbers in /proc/self/pagemap (needs CAP_SYS_ADMIN)")
	}
	return read8(t, "/proc/kpageflags", int64(pfn)*8)>>kpfTHP&1 == 1
}

// read8 reads the little-endian 64-bit word at off in file name.
func read8(t *testing.T, name string, off int64) uint64 {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(fmt.Errorf("%s at %d: %w", name, off, err))
	}
	return binary.LittleEndian.Uint64(b[:])
}

// child runs test name of this test binary in a fresh process, with env
// added to the environment, and returns its output.
func child(t *testing.T, name string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startupChild names the test TestStartupHeapAdvised runs in a fresh
// process: "on" or "off", what MRC_HUGEHEAP says.
const startupChild = "MRC_TEST_HUGEHEAP_STARTUP"

// TestStartupHeapAdvised: in mrc-conform, which imports package hugeheap,
// the heap the runtime mapped at start is advised for huge pages (VmFlags
// "hg") before main runs; with MRC_HUGEHEAP=off it is not.
func TestStartupHeapAdvised(t *testing.T) {
	mode := os.Getenv(startupChild)
	if mode == "" {
		if !hugeheap.Enabled() {
			testenv.Unavailable(t, "transparent huge pages are disabled ([never])")
		}
		for _, m := range []string{"on", "off"} {
			out, err := child(t, "TestStartupHeapAdvised", startupChild+"="+m, "MRC_HUGEHEAP="+m)
			if err != nil || !strings.Contains(out, "--- PASS") {
				t.Errorf("MRC_HUGEHEAP=%s, in a fresh process: %v\n%s", m, err, out)
			}
		}
		return
	}
	b := new([64]byte)
	flags, ok := vmFlags(t, uintptr(unsafe.Pointer(b)))
	if !ok {
		t.Fatal("no mapping in /proc/self/smaps holds a fresh object")
	}
	if got, want := strings.Contains(" "+flags+" ", " hg "), mode == "on"; got != want {
		t.Errorf("MRC_HUGEHEAP=%s: the start-up heap advised %v, want %v (VmFlags: %s)", mode, got, want, flags)
	}
	runtime.KeepAlive(b)
}
