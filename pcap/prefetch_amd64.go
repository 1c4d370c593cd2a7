package pcap

// prefetchLines asks the CPU to bring lines cache lines of 64 bytes, from
// the one holding p on, into its caches. It neither waits for them nor
// faults: an address that is not mapped is skipped.
//
//go:noescape
func prefetchLines(p *byte, lines int)
