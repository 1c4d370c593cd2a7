package pcap

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only, or returns nil (the
// file is then read as a stream). Frames alias the mapping: the kernel's
// copy into a read buffer is the one copy of the bytes a judgement
// avoids.
func mapFile(f *os.File, size int64) ([]byte, func() error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	_ = syscall.Madvise(m, syscall.MADV_SEQUENTIAL)
	return m, func() error { return syscall.Munmap(m) }
}

// releaseMapped gives the whole pages of m[from:to] back to the system
// (they stay in the page cache; the process's resident set shrinks) and
// returns the offset released up to.
func releaseMapped(m []byte, from, to int) int {
	page := os.Getpagesize()
	lo, hi := from&^(page-1), to&^(page-1)
	if hi <= lo {
		return from
	}
	_ = syscall.Madvise(m[lo:hi], syscall.MADV_DONTNEED)
	return hi
}
