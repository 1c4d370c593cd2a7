package pcap

import "syscall"

// mapRegion maps n bytes of anonymous memory advised to use transparent
// huge pages, or returns nil when it cannot map them. The advice is a
// hint: refused (THP "never", or no kernel support), the region is used
// in 4 KiB pages.
func mapRegion(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b
}
