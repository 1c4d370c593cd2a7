//go:build !amd64

package pcap

// prefetch does nothing: a hint, on amd64 only.
func prefetch(*byte, int) {}
