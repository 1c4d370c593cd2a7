// Package fuzz holds the fuzz targets that need nothing but exported API
// (FuzzDecode and FuzzICRCBitFlip over the wire codec; FuzzQP over the
// statemachine, checked against internal/evtable) and the tests that keep
// the ClusterFuzzLite build (.clusterfuzzlite/build.sh) building every
// fuzz target of the module. Targets that need a package's internals stay
// in that package, always in its internal test package (package foo, not
// foo_test), which is the only place the libFuzzer build finds them:
//
//	fuzz                   FuzzQP           one QP under hostile packets, time and control calls
//	wire                   FuzzFastPath     fast-path decode agrees with the full decoder
//	modelcheck             FuzzWalk         random walks through the model, every invariant per step
//	pcap                   FuzzReader       capture reader; allocation bounded by the input
//	pcap/internal/pcapfuzz FuzzDecodeFrame  every decode and print path on arbitrary frames
//	pcap/internal/pcapfuzz FuzzFilter       decode filter expressions: typed errors, normal form
//	control                FuzzLine         control protocol lines: typed answers, round trips
//	peer                   FuzzAgent        the reference agent: typed errors, limits held
//	conformance            FuzzJudge        the passive judge on arbitrary captures
//
// Their seed corpora (f.Add calls and testdata/fuzz/<Target>) run in
// every plain go test. Long fuzzing is opt-in, with bounded minimisation:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzDecode$' -fuzztime 10m -fuzzminimizetime 1x
//	FUZZTIME=3m scripts/fuzz.sh     # every target in turn, executions per target
//
// A crash found by the fuzzer is written to testdata/fuzz/<Target>/ and
// from then on replays in every go test. README.md says what each target
// asserts, the bug planted to show it does, and how to fuzz at scale with
// ClusterFuzzLite.
package fuzz
