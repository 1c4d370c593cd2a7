//go:build !linux || !(amd64 || arm64)

package hugeheap

// Now does nothing but on 64-bit Linux (x86-64, arm64), where transparent
// huge pages are a madvise hint and the heap arena is known.
func Now() {}

// Enabled reports false: no transparent huge pages on request here.
func Enabled() bool { return false }
