//go:build !linux

package pcap

import "os"

// mapFile maps nothing here: the file is read as a stream.
func mapFile(*os.File, int64) ([]byte, func() error) { return nil, nil }

func releaseMapped(_ []byte, from, _ int) int { return from }
