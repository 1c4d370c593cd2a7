// Package pcapfuzz holds the fuzz targets of package pcap that take their
// seeds from pcap/internal/corpus: FuzzDecodeFrame (every decode and print
// path on arbitrary frames) and FuzzFilter (display filters: typed errors,
// deterministic matches, a normal form that compiles to itself). They
// cannot be internal tests of pcap, since the corpus imports pcap, nor
// external ones (package pcap_test), which the libFuzzer build of
// ClusterFuzzLite and OSS-Fuzz (go-118-fuzz-build) cannot build. The
// package has no code of its own; fuzz/README.md says what each target
// asserts.
//
//	go test ./pcap/internal/pcapfuzz -run '^$' -fuzz '^FuzzFilter$' -fuzztime 10m -fuzzminimizetime 1x
package pcapfuzz
