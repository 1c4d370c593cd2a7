//go:build !linux || !(amd64 || arm64)

package main

// hugeHeap does nothing but on 64-bit Linux (x86-64, arm64), where
// transparent huge pages are a madvise hint and the heap arena is known.
func hugeHeap(int) {}
