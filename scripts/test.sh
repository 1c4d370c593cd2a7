#!/usr/bin/env bash
# The whole test suite, with its own set-up. This is the README's test
# command and what CI runs. It installs what the tests need when it is
# missing (apt, as root), then sets MRC_REQUIRE_TOOLS=1 so that no test may
# skip for want of a tool: a missing tool is a failure here.
#
#   scripts/test.sh            # everything CI runs (about 5 minutes on 2 cores)
#   FUZZTIME=3m scripts/test.sh    # plus fuzzing of every Fuzz* target, 3 min each (about 40 min
#                                  # for 11 targets on 2 cores), printing executions per target
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/aptlock.sh
. scripts/aptlock.sh

need=()
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
command -v nft >/dev/null 2>&1 || need+=(nftables)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
if ((${#need[@]})); then
	if [ "$(id -u)" != 0 ]; then
		echo "test.sh: ${need[*]} missing and not root: run as root, or install them" >&2
		exit 2
	fi
	echo "test.sh: installing ${need[*]}"
	apt_locked apt-get update -qq
	apt_locked env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
export MRC_REQUIRE_TOOLS=1

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$bad" ]; then
	echo "gofmt would change:"; echo "$bad"; exit 1
fi
echo "== go mod tidy"
if ! go mod tidy -diff; then
	echo "go mod tidy would change go.mod or go.sum (diff above): run go mod tidy"; exit 1
fi
echo "== go vet"
go vet ./...
echo "== staticcheck"
go tool staticcheck ./...
echo "== go test"
# -pgo=off: the tests check behaviour, which profile-guided optimization
# does not change; built with mrc-conform's profile (default.pgo), its
# test binary would compile every package it imports, the standard
# library's included, a second time (80 s more on 2 cores from an empty
# build cache). TestDefaultPGO checks the profile itself.
go test -pgo=off -count=1 -timeout 20m ./...
echo "== go test -race (the parallel judge)"
# The parallel judge's shards share batches with the reader and its
# merger: a data race there makes a report depend on timing. The tests
# that judge with several workers run under the race detector (about 40 s
# from an empty build cache on 2 cores); TestJobsIdentical, which judges
# every repository capture, stays out (30 s more).
go test -race -pgo=off -count=1 -run 'TestJobsIdenticalAtBounds|SameNamed|Section|FeedbackQPJobs|JobsBounded|TimersIdentical|Several|Parallel' ./conformance/

if [ -n "${FUZZTIME:-}" ]; then
	scripts/fuzz.sh
fi
