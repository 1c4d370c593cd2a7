#!/usr/bin/env bash
# Fuzzes every Fuzz* target of the module (or of the packages given as
# arguments) for FUZZTIME each, one after the other, niced, then prints the
# executions per target. scripts/test.sh runs it when FUZZTIME is set.
#
#   FUZZTIME=3m scripts/fuzz.sh                 # every target, 3 minutes each
#   FUZZTIME=20s scripts/fuzz.sh ./control ./peer
#
# Minimisation is bounded (FUZZMINIMIZETIME, default 1x): Go's default of
# 60 s per new interesting input stalls FuzzJudge and FuzzReader for
# minutes. FUZZPARALLEL (default 1) is the number of fuzzing workers.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${FUZZTIME:?set FUZZTIME, e.g. FUZZTIME=3m}"
summary=$(mktemp)
log=$(mktemp)
trap 'rm -f "$summary" "$log"' EXIT
for pkg in $(go list "${@:-./...}"); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== fuzz $pkg $target for $FUZZTIME"
		if ! nice -n 10 go test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" \
			-fuzzminimizetime "${FUZZMINIMIZETIME:-1x}" -parallel "${FUZZPARALLEL:-1}" "$pkg" >"$log" 2>&1; then
			cat "$log"
			echo "fuzz.sh: $target in $pkg failed" >&2
			exit 1
		fi
		grep -v '^fuzz: elapsed' "$log" || true
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2 || true)
		printf '%-22s %-20s %12s execs in %s\n' "${pkg#github.com/openmrc/mrc/}" "$target" "${execs:-?}" "$FUZZTIME" >>"$summary"
	done
done
echo "== fuzz executions per target"
cat "$summary"
