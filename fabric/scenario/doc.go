// Package scenario reproduces the resilience experiments of the white paper
// (WP §3, §5) on the fabric simulator, each run with MRC and with the RC
// go-back-N baseline (fabric/rc) on the same fabric, from one seed.
//
// Every scenario is a pure function of its seed: the same seed gives the
// same numbers, bit for bit. Simulated times are short (about a
// millisecond of an 800 Gb/s NIC per run, tens of thousands of packets) so
// that the whole table runs in seconds; the claims are about steady states
// and reactions within microseconds, which that covers.
package scenario
