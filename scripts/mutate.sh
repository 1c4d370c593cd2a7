#!/usr/bin/env bash
# Opt-in mutation testing of statemachine/ and wire/ (not part of CI).
#
#   scripts/mutate.sh                       # every non-test file of statemachine/ and wire/
#   scripts/mutate.sh wire/psn.go           # one file, or several
#
# Run it with nice (nice -n 10 scripts/mutate.sh ...) on a shared machine.
#
# By default (MUTATE_SCHEMATA=1) the mutant-schemata runner
# scripts/internal/mutschema does the work: every mutant of a package is
# compiled into one test binary, each mutated expression a closure that
# takes its mutated branch when $MUTSCHEMA_ID names it, and each mutant is
# one run of that binary (one compile per package instead of one per
# mutant: see modelcheck/README.md for the CPU times measured). Stage 1 runs
# the package's own tests (MUTATE_STAGE1_TIMEOUT per mutant, default 60s);
# stage 2 runs each survivor against the test binaries of the rest of the
# killing suite (MUTATE_SUITE, -short, MUTATE_TIMEOUT per mutant and
# binary, default 300s), built from the same rewritten tree. A timed-out
# mutant runs once more with 3 × the timeout and is reported apart; it
# counts as killed. Each mutant's test binary runs with its resident
# memory watched (MUTATE_MEM MiB, default 3072; 0: no cap): past it the
# binary is killed (a mutant allocating without bound), counts as killed
# and is reported as such. Its CPU time is watched too (MUTATE_CPU × the
# unmutated run's, at least 10 s; default 10; 0: no cap): past it the
# binary is killed and counts as timed out, without the second run a wall
# clock timeout gets (its CPU time does not depend on the machine's load,
# the wall clock does). MUTATE_JOBS mutants run at a time (default 2). The
# report gives per-file efficacy, killed / (killed + lived), leaving out
# the mutants scripts/mutate-allow.txt lists as equivalent (each with its
# reason), and lists the mutants still alive; the work directory holds
# results.tsv, one row a mutant.
#
#   MUTATE_RESUME=/tmp/mrc-mutate.X scripts/mutate.sh statemachine/window.go
#
# re-runs only the survivors of an earlier run (its work directory), both
# stages, and the mutants it had not decided, carrying its other verdicts:
# after adding tests, a survivor check in minutes; after a run was stopped,
# the rest of it (results.tsv is rewritten after every verdict; MUTATE_DIR
# may name the same directory). It refuses if a mutated file changed since
# that run.
#
# MUTATE_SCHEMATA=0 uses gremlins v0.6.0 instead (one compile per mutant):
# stage 1 by gremlins with the package's own tests (a per-mutant timeout of
# MUTATE_COEFF × the package's test time, default 3), stage 2 by this
# script, which applies each mutant that lived to a copy of the tree and
# runs the package's tests and then the suite (a timed-out mutant counts as
# killed; MUTATE_RESUME tries them again). Stage 2 also re-runs the mutants
# gremlins calls NOT COVERED: its coverage misses switch case expressions,
# which the package's tests do reach. GREMLINS names the binary (default:
# gremlins on PATH, else installed from the Go proxy into $MUTATE_DIR/bin).
# --test-cpu is not used: gremlins v0.6.0 passes "-cpu N" as one argument,
# every test binary stops with "flag provided but not defined" and every
# mutant looks killed.
#
# Environment: MUTATE_DIR (work directory, default a fresh mktemp -d),
# MUTATE_SUITE (stage 2 packages, default ./modelcheck/ ./fabric/...
# ./conformance/active/... ./peer/...).
set -euo pipefail

root=$(git rev-parse --show-toplevel)
cd "$root"
dir=${MUTATE_DIR:-$(mktemp -d /tmp/mrc-mutate.XXXXXX)}
timeout_s=${MUTATE_TIMEOUT:-300}
coeff=${MUTATE_COEFF:-3}
suite=${MUTATE_SUITE:-./modelcheck/ ./fabric/... ./conformance/active/... ./peer/...}
allow="$root/scripts/mutate-allow.txt"
mkdir -p "$dir"

if [ "${MUTATE_SCHEMATA:-1}" != 0 ]; then
	go build -o "$dir/mutschema" ./scripts/internal/mutschema
	if [ $# -gt 0 ]; then
		files=("$@")
	else
		mapfile -t files < <(ls statemachine/*.go wire/*.go | grep -v '_test\.go$')
	fi
	resume=()
	[ -z "${MUTATE_RESUME:-}" ] || resume=(-resume "$MUTATE_RESUME")
	exec "$dir/mutschema" -work "$dir" -allow "$allow" -suite "$suite" -suite-timeout "${timeout_s%s}s" \
		-timeout "${MUTATE_STAGE1_TIMEOUT:-60s}" -mem "${MUTATE_MEM:-3072}" -cpu "${MUTATE_CPU:-10}" -jobs "${MUTATE_JOBS:-2}" "${resume[@]}" "${files[@]}"
fi

gremlins=${GREMLINS:-$(command -v gremlins || true)}
if [ -z "$gremlins" ]; then
	GOBIN="$dir/bin" GOFLAGS=-mod=mod go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
	gremlins="$dir/bin/gremlins"
fi

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(ls statemachine/*.go wire/*.go | grep -v '_test\.go$')
fi
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "mutate.sh: no file $f" >&2; exit 2; }
done

# A pristine copy of the working tree: gremlins and stage 2 mutate it.
src="$dir/src"
rm -rf "$src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - | tar -xf - -C "$src"

results="$dir/results.tsv" # file line col type status stage
resume=${MUTATE_RESUME:-}
if [ -n "$resume" ]; then
	for f in "${files[@]}"; do
		cmp -s "$f" "$resume/src/$f" || { echo "mutate.sh: $f changed since the run in $resume" >&2; exit 2; }
	done
	printf '%s\n' "${files[@]}" >"$dir/files.txt"
	touch "$resume/stage2.tsv"
	# Stage 1's rows, each with its stage 2 verdict when the earlier run has one.
	awk -F'\t' -v OFS='\t' 'FILENAME == ARGV[1] { want[$1] = 1; next }
		FILENAME == ARGV[2] { s2[$1 FS $2 FS $3 FS $4] = $5; next }
		want[$1] { k = $1 FS $2 FS $3 FS $4; if (k in s2) { $5 = s2[k]; $6 = 2 } print }' \
		"$dir/files.txt" "$resume/stage2.tsv" "$resume/results.tsv" >"$dir/results.resumed"
	mv "$dir/results.resumed" "$results"
	echo "== stage 1: taken from $resume ($(wc -l <"$results") mutant(s))"
else
	: >"$results"
fi
for pkg in $(printf '%s\n' "${files[@]}" | xargs -n1 dirname | sort -u); do
	[ -z "$resume" ] || break
	ex=()
	for f in "$pkg"/*.go; do
		case " ${files[*]} " in *" $f "*) continue ;; esac
		ex+=(-E "^$(basename "$f")\$" -E "(^|/)$f\$")
	done
	echo "== stage 1: gremlins over $pkg ($(printf '%s\n' "${files[@]}" | grep -c "^$pkg/") file(s)), the package's own tests"
	(cd "$src" && "$gremlins" unleash "./$pkg" "${ex[@]}" --workers 1 --timeout-coefficient "$coeff" \
		-o "$dir/stage1-${pkg//\//_}.json") | grep --line-buffered -E 'KILLED|LIVED|TIMED OUT|NOT COVERED|NOT VIABLE|efficacy' || true
	python3 - "$dir/stage1-${pkg//\//_}.json" "$pkg" >>"$results" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d.get("files") or []:
    name = f["file_name"] if "/" in f["file_name"] else sys.argv[2] + "/" + f["file_name"]
    for m in f.get("mutations") or []:
        print("\t".join([name, str(m["line"]), str(m["column"]), m["type"], m["status"], "1"]))
PY
done

# Stage 2: the survivors against the rest of the suite.
# On a resumed run the timed-out mutants are tried again too: a loaded
# machine times out a slow suite as readily as a hanging mutant.
mapfile -t lived < <(awk -F'\t' -v resume="$resume" '$5 == "LIVED" || $5 == "NOT COVERED" || (resume != "" && $5 == "TIMED OUT")' "$results")
# A mutant the allowlist names is not run again: it is counted as allowed.
echo "== stage 2: ${#lived[@]} survivor(s) or uncovered: the package's tests, then $suite (-short, ${timeout_s}s each)"
: >"$dir/stage2.tsv"
for row in "${lived[@]}"; do
	IFS=$'\t' read -r file line col type st1 _ <<<"$row"
	if grep -q "^$file:$line:$col $type " "$allow" 2>/dev/null; then
		printf '%s\t%s\t%s\t%s\tLIVED\t2\n' "$file" "$line" "$col" "$type" >>"$dir/stage2.tsv"
		continue # equivalent: no test can kill it
	fi
	cp "$root/$file" "$src/$file"
	if ! python3 - "$src/$file" "$line" "$col" "$type" <<'PY'
import sys
path, line, col, typ = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) - 1, sys.argv[4]
maps = {
    "CONDITIONALS_BOUNDARY": {"<=": "<", ">=": ">", "<": "<=", ">": ">="},
    "CONDITIONALS_NEGATION": {"==": "!=", "!=": "==", "<=": ">", ">=": "<", "<": ">=", ">": "<="},
    "ARITHMETIC_BASE": {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
    "INCREMENT_DECREMENT": {"++": "--", "--": "++"},
    "INVERT_NEGATIVES": {"-": "+"},
}
lines = open(path, encoding="utf-8").read().split("\n")
b = lines[line - 1].encode()
for tok, rep in maps.get(typ, {}).items():
    if b[col:col + len(tok)] == tok.encode():
        lines[line - 1] = (b[:col] + rep.encode() + b[col + len(tok):]).decode()
        open(path, "w", encoding="utf-8").write("\n".join(lines))
        sys.exit(0)
sys.exit(1)
PY
	then
		echo "  cannot apply $type at $file:$line:$col (kept as $st1)"
		printf '%s\t%s\t%s\t%s\t%s\t2\n' "$file" "$line" "$col" "$type" "$st1" >>"$dir/stage2.tsv"
		continue
	fi
	set +e
	# The package's own tests first (cheap); the rest only if they pass.
	(cd "$src" && timeout "$timeout_s" go test -count=1 "./$(dirname "$file")/" >"$dir/last.log" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		(cd "$src" && timeout "$timeout_s" go test -short -count=1 $suite >"$dir/last.log" 2>&1)
		rc=$?
	fi
	set -e
	case $rc in
	0) st=LIVED ;;
	124) st="TIMED OUT" ;;
	*) if grep -q '\[build failed\]\|setup failed' "$dir/last.log"; then st="NOT VIABLE"; else st=KILLED; fi ;;
	esac
	echo "  $st $type at $file:$line:$col"
	printf '%s\t%s\t%s\t%s\t%s\t2\n' "$file" "$line" "$col" "$type" "$st" >>"$dir/stage2.tsv"
	cp "$root/$file" "$src/$file"
done

python3 - "$results" "$dir/stage2.tsv" "$allow" <<'PY'
import sys, collections
rows = {}
for path in sys.argv[1:3]:
    for ln in open(path):
        f, l, c, t, st, stage = ln.rstrip("\n").split("\t")
        rows[(f, l, c, t)] = (st, stage)
allowed = {}
try:
    for ln in open(sys.argv[3]):
        ln = ln.strip()
        if ln and not ln.startswith("#"):
            key, _, why = ln.partition("#")
            f, t = key.split()
            allowed[(f, t)] = why.strip()
except FileNotFoundError:
    pass
per = collections.defaultdict(lambda: collections.Counter())
alive = []
for (f, l, c, t), (st, stage) in sorted(rows.items()):
    k = per[f]
    if st == "LIVED" and (f"{f}:{l}:{c}", t) in allowed:
        k["allowed"] += 1
    elif st in ("KILLED", "TIMED OUT"):
        k["killed"] += 1
        k["killed%s" % stage] += 1
        if st == "TIMED OUT":
            k["timed_out"] += 1
    elif st == "LIVED":
        k["lived"] += 1
        alive.append(f"{f}:{l}:{c} {t}")
    else:
        k[st.lower().replace(" ", "_")] += 1
print("\n| file | killed (stage 1 + 2) | of them timed out | lived | allowlisted | not covered | efficacy |")
print("|---|---|---|---|---|---|---|")
for f, k in sorted(per.items()):
    n = k["killed"] + k["lived"]
    eff = f"{100 * k['killed'] / n:.1f} %" if n else "n/a"
    print(f"| {f} | {k['killed']} ({k['killed1']} + {k['killed2']}) | {k['timed_out']} | {k['lived']} | {k['allowed']} | {k['not_covered']} | {eff} |")
if any(k["timed_out"] for k in per.values()):
    print("\nTimed-out mutants count as killed (a mutant that hangs the suite is caught), but on a loaded")
    print("machine a slow suite times out too: re-check them with MUTATE_RESUME on a quiet machine.")
if alive:
    print("\nStill alive (kill with a test citing the requirement, or allowlist with the reason it is equivalent):")
    for a in alive:
        print("  " + a)
PY
echo "(work directory: $dir)"
