//go:build !linux

package pcap

// mapRegion returns nil: chunks come from the Go heap.
func mapRegion(int) []byte { return nil }
