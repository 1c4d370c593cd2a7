#!/bin/bash -eu
# Builds every Go native fuzz target of the module for libFuzzer
# (ClusterFuzzLite, OSS-Fuzz) with the base image's
# compile_native_go_fuzzer_v2 (go-118-fuzz-build, branch v2). One line per
# target in build_targets: package directory, function, fuzzer name.
# fuzz/cflite_test.go fails when a Fuzz* function of the module is missing
# there, when a line names one that does not exist, and when a target is
# in an external test package (package foo_test), which go-118-fuzz-build
# cannot build (google/oss-fuzz#7923). It also runs this script on a small
# module with a stand-in for compile_native_go_fuzzer_v2, to check that
# the external test files are hidden while a target builds.
#
# What go-118-fuzz-build v2 does, and what this script does about it:
#  - It overlays every _test.go file of the target's directory onto a
#    non-test name, so that they build as part of the package. A file of
#    the external test package (package foo_test, e.g. example_test.go)
#    then collides with package foo ("found packages foo and foo_test"):
#    target() hides the package's XTestGoFiles while the target builds and
#    puts them back after (and on any exit).
#  - It overlays testing/fuzz.go and testing/testing.go in GOROOT. When
#    go.mod asks for a newer Go than the image's, GOTOOLCHAIN=auto runs a
#    toolchain from the module cache, whose files go build refuses to
#    overlay: toolchain() copies it to a writable directory and pins it.
#  - It type-checks the packages with the go/types it was built with: when
#    that is not the active Go, toolchain() rebuilds it with the active one.
#
# Locally (see fuzz/README.md): SRC is the directory holding this
# repository as mrc, OUT the output directory, and the base image's
# helpers and a libFuzzer-capable clang on PATH.
set -o pipefail
cd "${SRC:?}/mrc"
: "${OUT:?}"
work=$(mktemp -d)
hidden=()

restore() {
	local f
	for f in "${hidden[@]+"${hidden[@]}"}"; do
		mv "$f.cflite-hidden" "$f"
	done
	hidden=()
}
trap 'restore; rm -rf "$work"' EXIT

toolchain() {
	local goroot want have src
	goroot=$(go env GOROOT)
	if [[ "$goroot" == "$(go env GOMODCACHE)"/* ]]; then
		cp -r "$goroot" "$work/go"
		chmod -R u+w "$work/go"
		export GOROOT="$work/go" PATH="$work/go/bin:$PATH" GOTOOLCHAIN=local
	fi
	want=$(go env GOVERSION)
	have=$(go version "$(command -v go-118-fuzz-build_v2)" | awk '{print $NF}')
	if [ "$want" != "$have" ]; then
		echo "build.sh: go-118-fuzz-build_v2 was built with $have, the module builds with $want: rebuilding it"
		src=${GO118_FUZZ_BUILD_SRC:-/tmp/go-118-fuzz-build}
		if [ ! -f "$src/go.mod" ]; then
			src=$work/go-118-fuzz-build
			git clone --quiet --depth 1 --branch v2 https://github.com/AdamKorcz/go-118-fuzz-build "$src"
		fi
		(cd "$src" && GOFLAGS=-mod=mod go build -o "$work/bin/go-118-fuzz-build_v2" .)
		export PATH="$work/bin:$PATH"
	fi
}

# target DIR FUNC NAME builds FUNC of package ./DIR as $OUT/NAME, and its
# seed corpus DIR/testdata/fuzz/FUNC (Go's corpus format, converted by the
# image's addStdLibCorpusToFuzzer) as $OUT/NAME_seed_corpus.zip.
target() {
	local pkg=$1 fn=$2 name=$3 path dir f
	path=$(go list -m)/$pkg
	dir=$(go list -tags gofuzz -f '{{.Dir}}' "$path")
	for f in $(go list -tags gofuzz -f '{{join .XTestGoFiles " "}}' "$path"); do
		mv "$dir/$f" "$dir/$f.cflite-hidden"
		hidden+=("$dir/$f")
	done
	# From the package's directory: go-118-fuzz-build writes the main
	# package that imports the target into the current directory, and
	# only from there may it import a package under internal/.
	(cd "$dir" && compile_native_go_fuzzer_v2 "$path" "$fn" "$name")
	restore
	if [ ! -f "$OUT/$name" ]; then
		echo "build.sh: $pkg $fn was not built ($OUT/$name is missing)" >&2
		exit 1
	fi
	if [ -d "$dir/testdata/fuzz/$fn" ]; then
		addStdLibCorpusToFuzzer -dir "$dir/testdata/fuzz/$fn" -fuzzer_name "$name"
	fi
}

build_targets() {
	target conformance              FuzzJudge        judge
	target control                  FuzzLine         control_line
	target fuzz                     FuzzDecode       wire_decode
	target fuzz                     FuzzICRCBitFlip  wire_icrc_bitflip
	target fuzz                     FuzzQP           statemachine_qp
	target modelcheck               FuzzWalk         modelcheck_walk
	target pcap                     FuzzReader       pcap_reader
	target pcap/internal/pcapfuzz   FuzzDecodeFrame  pcap_decode_frame
	target pcap/internal/pcapfuzz   FuzzFilter       pcap_filter
	target peer                     FuzzAgent        peer_agent
	target wire                     FuzzFastPath     wire_fastpath
	target wire                     FuzzUpdateIEEE   wire_update_ieee
}

if [ -n "${CFLITE_ONLY:-}" ]; then
	# CFLITE_ONLY="DIR FUNC NAME": build that one target (fuzz/cflite_test.go).
	# shellcheck disable=SC2086
	target $CFLITE_ONLY
else
	toolchain
	build_targets
fi
