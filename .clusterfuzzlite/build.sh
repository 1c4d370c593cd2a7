#!/bin/bash -eu
# Builds every Go native fuzz target of the module for libFuzzer
# (ClusterFuzzLite, OSS-Fuzz). One line per target: package, function,
# fuzzer name. fuzz/cflite_test.go fails when a Fuzz* function of the
# module is missing here, or a line names one that does not exist.
# Each target's seed corpus (testdata/fuzz/<Target>) is zipped next to it.

target() {
	pkg=$1 fn=$2 name=$3
	compile_native_go_fuzzer_v2 "github.com/openmrc/mrc/$pkg" "$fn" "$name"
	dir="$SRC/mrc/$pkg/testdata/fuzz/$fn"
	if [ -d "$dir" ]; then
		zip -jqr "$OUT/${name}_seed_corpus.zip" "$dir"
	fi
}

target conformance  FuzzJudge        judge
target control      FuzzLine         control_line
target fuzz         FuzzDecode       wire_decode
target fuzz         FuzzICRCBitFlip  wire_icrc_bitflip
target modelcheck   FuzzWalk         modelcheck_walk
target pcap         FuzzDecodeFrame  pcap_decode_frame
target pcap         FuzzFilter       pcap_filter
target pcap         FuzzReader       pcap_reader
target peer         FuzzAgent        peer_agent
target statemachine FuzzQP           statemachine_qp
target wire         FuzzFastPath     wire_fastpath
