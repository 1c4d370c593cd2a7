package pcap

// prefetch asks the CPU to bring the n bytes at p into its caches, a
// cache line at a time, without waiting for them (PREFETCHT0, which
// neither faults nor stalls).
//
//go:noescape
func prefetch(p *byte, n int)
