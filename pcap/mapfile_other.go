//go:build !linux

package pcap

import "os"

// mapFile returns nil: OpenMapped reads as Open does.
func mapFile(*os.File, int64) []byte { return nil }

func dropPages([]byte) {}

func unmapFile([]byte) {}
