//go:build !amd64

package pcap

// prefetchLines is prefetch_amd64.s's where it has no counterpart: a
// hint, so doing nothing is correct, only slower.
func prefetchLines(*byte, int) {}
