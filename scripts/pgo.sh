#!/usr/bin/env bash
# Regenerates cmd/mrc-conform/default.pgo, the CPU profile with which
# go build and go install compile mrc-conform (profile-guided optimization,
# -pgo=auto): the judge on the loss capture with one worker, on the incast
# capture with one and two workers, and decode, as the benchmarks run them.
# Run it after changing the judge's or the decoder's hot paths; a stale
# profile only optimizes less (TestDefaultPGO fails when the functions it
# found hottest are gone). About two minutes.
#
#   scripts/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prof() { # prof NAME PKG BENCH BENCHTIME
	echo "pgo.sh: profiling $3 in $2" >&2
	# -pgo=off: the profile is of the code as written, not of an earlier
	# profile's build.
	go test -pgo=off -run '^$' -bench "$3" -benchtime "$4" -count 1 \
		-cpuprofile "$tmp/$1.prof" -o "$tmp/$1.test" "$2" >/dev/null
}
prof judge ./conformance 'BenchmarkJudge$' 40x
prof jobs ./conformance 'BenchmarkJudgeJobs' 6x
prof decode ./cmd/mrc-conform 'BenchmarkDecodeJSON' 20x
go tool pprof -proto "$tmp/judge.prof" "$tmp/jobs.prof" "$tmp/decode.prof" >"$tmp/default.pgo" 2>/dev/null
mv "$tmp/default.pgo" cmd/mrc-conform/default.pgo
echo "pgo.sh: wrote cmd/mrc-conform/default.pgo ($(wc -c <cmd/mrc-conform/default.pgo) bytes)" >&2
