package main

import (
	"errors"
	"fmt"
	"github.com/openmrc/mrc/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReadmePerformanceIsScriptMade: the README's Performance section is
// exactly one sealed bench.sh section (no figure typed by hand around it)
// and its checksum matches, so it is what scripts/bench.sh wrote.
func TestReadmePerformanceIsScriptMade(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if err := Verify(readme); err != nil {
		t.Fatal(err)
	}
	const head = "\n## Performance\n"
	i := strings.Index(readme, head)
	if i < 0 {
		t.Fatal("README has no Performance section")
	}
	rest := readme[i+len(head):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j+1]
	}
	sealed, _, _, _ := Section(readme)
	if strings.TrimSpace(rest) != strings.TrimSpace(sealed) {
		t.Errorf("the Performance section holds text outside the bench.sh markers:\n%s", strings.Replace(rest, sealed, "[section]\n", 1))
	}
}

// TestVerifyCatchesEdits: a hand edit inside the section, a duplicated or
// missing marker, all fail Verify.
func TestVerifyCatchesEdits(t *testing.T) {
	readme := "# x\n\n## Performance\n\nold figures\n\n## Next\n"
	out, err := Replace(readme, Seal("- 7.5 M packets/s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(out); err != nil {
		t.Fatalf("fresh section: %v", err)
	}
	if strings.Contains(out, "old figures") || !strings.Contains(out, "## Next") {
		t.Errorf("Replace kept the old body or lost the next section:\n%s", out)
	}
	again, err := Replace(out, Seal("- 8.0 M packets/s\n"))
	if err != nil || strings.Contains(again, "7.5") || Verify(again) != nil {
		t.Errorf("second Replace: %v\n%s", err, again)
	}
	for name, bad := range map[string]string{
		"edited":    strings.Replace(out, "7.5", "9.5", 1),
		"no end":    strings.Replace(out, endPrefix, "<!-- ", 1),
		"no begin":  strings.Replace(out, Begin, "", 1),
		"two begin": out + Begin + "\n",
	} {
		if err := Verify(bad); err == nil {
			t.Errorf("%s: Verify accepted\n%s", name, bad)
		}
	}
}

// writeRenderFixture writes TestRender's raw outputs into dir: three
// rounds of each kind, some outputs missing.
func writeRenderFixture(t *testing.T, dir string) {
	write := func(name, s string) { writeFile(t, filepath.Join(dir, name), s) }
	write("meta.txt", "date: 2026-12-01 15:00 UTC\ncommit: abc1234\ngo: go1.26\ncpu: test cpu\ncores: 2\ncount: 3\nload_before: 1 2 3\nload_after: 4 5 6\njudge_pgo: cmd/mrc-conform/default.pgo\n")
	write("wire.txt", `BenchmarkDecode/mrc/data4096-2   	 200000	        10.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDecode/mrc/data4096-2   	 200000	        12.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDecode/mrc/data4096-2   	 200000	        50.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDecode/gopacket/eth-ipv6-udp-prefix-2   	 200000	        44.0 ns/op	       0 B/op	       0 allocs/op
`)
	write("sm.txt", `BenchmarkBackToBackLossless-2 300000 150 ns/op 128 active-EVs 8000000 pkts/s 0.0078 rotations/pkt 128 usable-EVs 16 B/op 0 allocs/op
BenchmarkBackToBackLoss1pct-2 300000 250 ns/op 128 active-EVs 4000000 pkts/s 0.12 rotations/pkt 8 usable-EVs 16 B/op 0 allocs/op
BenchmarkQPMemory-2 300000 10 ns/op 15120 bytes/QP 100 node-bytes
`)
	write("smprof.txt", `      flat  flat%   sum%        cum   cum%
         0     0%     0%      2.00s 80.00%  github.com/openmrc/mrc/statemachine.runBackToBack
     0.05s  2.00%  2.00%      0.60s 24.00%  github.com/openmrc/mrc/statemachine.(*QP).nextEV
     0.20s  8.00% 10.00%      450ms 18.00%  github.com/openmrc/mrc/statemachine.(*rng).shuffle
`)
	write("judge.txt", `BenchmarkJudge-2   	       3	 547266212 ns/op	    475000 frames/cpu-s	    171404 frames/s	      5834 ns/frame	 3184530 B/op	    4843 allocs/op
BenchmarkJudgeMapped-2   	       3	 647266212 ns/op	    400000 frames/cpu-s	    151404 frames/s	      6834 ns/frame	 3184530 B/op	    4843 allocs/op
BenchmarkJudgeJobs/jobs=1-2         	       3	2000000000 ns/op	       900.0 cpu-ms/op	    335621 frames/cpu-s	    136683 frames/s
BenchmarkJudgeJobs/jobs=2-2         	       3	1000000000 ns/op	       950.0 cpu-ms/op	    346395 frames/cpu-s	    277832 frames/s
BenchmarkJudgeJobs/threads=2-2      	       3	1600000000 ns/op	       960.0 cpu-ms/op	       450.0 crit-ms/op	    216395 frames/cpu-s	    177832 frames/s
`)
	write("wirecpu.txt", "decode-mrc_n 20000000\ndecode-gopacket_n 20000000\ndecode-mrc 0.22 0 5000 0\ndecode-gopacket 0.9 0 5000 0\n")
	write("smcpu.txt", "lossless_n 2000000\nloss_n 2000000\nlossless 0.36 0.02 9000 0\nloss 0.68 0.02 9000 0\nlossless 0.38 0.02 9000 0\nloss 0.70 0.02 9000 0\n")
	// Three rounds: the judge / tshark ratios are 17, 10 and 16, so their
	// median (16) differs from the ratio of the medians (2.0 / 0.15); the
	// filed / judge ratios are 12, 6 and 9, median 9 (the ratio of the
	// medians, 1.5 / 0.15, would be 10). Too few rounds for a verdict
	// (TestCLIVerdict).
	write("cpu.txt", "capture loss, 1000 frames, 2 MB\nframes 1000\nbuild without cgo\n"+
		"judge 0.09 0.01 50000 0\ndecode 0.05 0.02 9000 0\ntshark 1.6 0.1 90000 0\nfiled 1.1 0.1 60000 0\n"+
		"judge 0.19 0.01 50000 0\ndecode 0.05 0.02 9000 0\ntshark 1.9 0.1 90000 0\nfiled 1.1 0.1 60000 0\n"+
		"judge 0.14 0.01 50000 0\ndecode 0.05 0.02 9000 0\ntshark 2.3 0.1 90000 0\nfiled 1.3 0.05 60000 0\n"+
		"filed_commit 9c73972\n")
	write("jobs.txt", "frames 310208\nsched SCHED_FIFO\njobs1 3.0 2.9 0\njobs2 2.0 2.1 0\npair 3.4 6.5 0\njobs1 3.2 3.0 0\njobs2 1.6 2.0 0\npair 3.5 6.7 0\n"+
		"jobs1 2.8 2.8 0\njobs2 1.5 1.9 0\nerror pair: no timing (exit 124)\n")
	write("rss.txt", "loss1_frames 1000\nloss1 1 0 20480 0\nloss4 editcap or mergecap not installed\nlong_frames 2000000\nlong 20 1 104448 0\n")
}

// TestRender renders a directory of raw outputs: the figures come from
// the benchmark lines (medians), targets are judged, and what is missing
// is "not measured", never a number.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	writeRenderFixture(t, dir)
	got, err := render(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"on 2026-12-01 15:00 UTC at commit abc1234", "before the run 1 2 3, after it 4 5 6",
		"every figure is a median of repeated runs (of 3 for each Go benchmark; the commands' rounds each paragraph counts)",
		"| Full decode, data packet (every header, every check) | 12.0 | 0 |", "| ratio gopacket prefix / our full decode, wall time | 3.67× |", "(user + sys per op of a 20000000-op run each, median of the rounds) | 11.0 / 45.0: **4.09×** (target ≥ 3×: **met**) |",
		"wall time: lossless 8.00 M packets/s per core; 1% loss 4.00 M packets/s (50% of lossless)",
		"15120 bytes", "lossless 5.13 M packets per CPU second (195 ns), 1% loss 2.82 M (355 ns), **55% of lossless** (target ≥ 70%: **not met**)", "8 of the 128 active EVs are usable (lossless: 128)", "from 0.0078 to 0.1200 (15×)",
		"`nextEV` (the rotation) 30%, of which `shuffle` 22%",
		"**judge** (`go test -pgo=cmd/mrc-conform/default.pgo -bench Judge ./conformance`: compiled with mrc-conform's profile, as `go build` compiles mrc-conform)",
		"475 k frames per CPU second (2.11 µs of CPU per frame; wall time 171 k frames/s, 5.83 µs/frame; 4843 allocations per capture judged); target ≥ 1 M frames/s per core: **not met**",
		"reading the capture mapped (`BenchmarkJudgeMapped`; `judge --mmap`) rather than copied as by default: 400 k frames per CPU second, 1.19× the CPU of reading it copied on this host",
		"one worker 2000 ms, two workers 1000 ms of wall time per capture, 2.00×; from each thread's CPU time (the reader's, each shard's, in a run with each on a thread of its own), two free cores would take at least 450 ms, against 900 ms of CPU for one worker: 2.00× at best",
		"median of the runs: loss, 1000 frames, 2 MB. `mrc-conform` is built without cgo.",
		"| `mrc-conform judge --pics default --jobs 1` | 0.150 | 150.00 µs/frame | 1/16.0 |",
		"310208 frames, 3 rounds: `--jobs 1` 3.00 s (2.90 s CPU), `--jobs 2` 1.60 s (2.00 s CPU) (medians): **1.87×** faster with two workers (median of the rounds' ratios, 1.50× to 2.00×)",
		"**not judged:** the pair reached 1.7× in 2 of 3 rounds, fewer than the 6 the verdict is given on",
		"with two workers the judge ran on 1.25 cores on average (CPU / wall), with one on 0.97",
		"`--jobs 1` and `--jobs 2` ran under SCHED_FIFO, the timer starting them without chrt (whose own start is not timed): the machine's other sessions waited while they ran, so the ratio is that of two free cores; the two judges at once ran under the usual policy, each pinned to its core",
		"after `--jobs 2` in 2 of the rounds: both done in 3.45 s (6.60 s CPU, medians), **1.74×** one `--jobs 1` judge's work in its time (median of the rounds' 2·t̄1/tpair, 1.71× to 1.76×): what this machine's two cores gave the judge in these rounds, two judges sharing nothing; `--jobs 2` reached 97 % of it",
		"The judge: 7 k frames per CPU second (target ≥ 1 M: **not met**). Judge / tshark: 1/16.0 of tshark's CPU time in the median round of 3 (1/10.0 to 1/17.0; target ≤ 1/15, judged on the whole interval: **not judged**, fewer than 6 rounds)",
		"| `mrc-conform judge --pics default` at 9c73972, as issue 12 measured it | 1.200 | 1200.00 µs/frame | 1/1.7 |",
		"Against the judge issue 12 measured (9c73972, built from this repository's history), on this machine in the same rounds: 9.0× less CPU in the median round (6.0× to 12.0×; the issue's \"10× today\", read CLI against CLI, judged on the whole interval: **not judged**, fewer than 6 rounds).",
		"the `loss` capture: 20.0 MB; four-fold replay not measured (editcap or mergecap not installed)",
		"one connection of 2000000 frames, nine in ten of them 256-byte writes", "102.0 MB, 21.0 s CPU (target < 64 MB: **not met**)",
		"**pcap**", "not measured (the pcap benchmarks did not run)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("render lacks %q:\n%s", want, got)
		}
	}
	if _, err := render(t.TempDir()); err == nil {
		t.Error("render of an empty directory succeeded")
	}
	// The table at the top lists every target judged below, in order,
	// with its figure and verdict, and what the bars are.
	table := []string{
		"| full decode ≥ 3× faster than gopacket's Eth/IPv6/UDP prefix, in CPU time | the wire codec | 4.09×: **met** |",
		"| statemachine: 1 % loss ≥ 70 % of lossless in CPU time | issue 12 | 55 %: **not met**; the issue's alternative",
		"| `BenchmarkJudge`, one worker: ≥ 1 M frames per CPU second (\"10× today\") | issue 12 | 475 k: **not met** |",
		"| the judge CLI: ≥ 1 M frames per CPU second | issue 12, read as the whole CLI run (start-up included) | 7 k: **not met** |",
		"| the judge CLI: ≤ 1/15 of tshark's CPU time on the same capture | issue 12 | 1/16.0 in the median of 3 rounds, fewer than the 6 the verdict is given on: **not judged** |",
		"| the judge CLI: ≥ 10× less CPU than the judge issue 12 measured, CLI against CLI | issue 12, read as the whole CLI run (start-up included) | 9.0× in the median of 3 rounds, fewer than the 6 the verdict is given on: **not judged** |",
		"| `--jobs 2` ≥ 1.7× faster than `--jobs 1` in wall time, `incast` | issue 12 | the pair reached 1.7× in 2 of 3 rounds: **not judged** |",
		"| peak RSS of one connection of 2 M frames: < 64 MB | issue 12 | 102.0 MB: **not met** |",
	}
	at := strings.Index(got, "**Targets at a glance**")
	if at < 0 || at > strings.Index(got, "**wire**") {
		t.Fatalf("render has no table of targets before the first paragraph:\n%s", got)
	}
	for _, row := range table {
		i := strings.Index(got[at:], row)
		if i < 0 {
			t.Errorf("the table of targets lacks %q (or has it out of order):\n%s", row, got)
			continue
		}
		at += i
	}
	if n := strings.Count(got, "**met**") + strings.Count(got, "**not met**") + strings.Count(got, "**not judged"); n != 2*(len(table)) {
		t.Errorf("%d verdicts in the text and the table, want each of the %d targets twice", n, len(table))
	}
}

// writeFile writes s to path or fails the test.
func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBenchScriptParses: bench.sh is valid bash.
func TestBenchScriptParses(t *testing.T) {
	if out, err := exec.Command("bash", "-n", "../../bench.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n scripts/bench.sh: %v\n%s", err, out)
	}
}

// TestBenchScriptBounded: a run cut by BENCH_TIMEOUT stops with timeout's
// status and leaves README.md as it was (the section is written last).
func TestBenchScriptBounded(t *testing.T) {
	before, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("bash", "../../bench.sh")
	c.Env = append(os.Environ(), "BENCH_TIMEOUT=1", "BENCH_DIR="+t.TempDir())
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 124 {
		t.Fatalf("bench.sh under BENCH_TIMEOUT=1: %v, want exit status 124\n%s", err, out)
	}
	after, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("a run cut short changed README.md")
	}
}

// TestRenderJobsRoundRatios: the --jobs ratio is the median of the rounds'
// own ratios, a round being a jobs1 time and the jobs2 time after it; a
// round one of whose runs failed has none (nor its times a part in the
// medians), and one slow round moves it less than it moves the ratio of
// the medians.
func TestRenderJobsRoundRatios(t *testing.T) {
	var s section
	renderJobs(&s, strings.Split("frames 10\n"+
		"jobs1 0.60 0.6 0\njobs2 0.30 0.6 0\n"+ // 2.00
		"jobs1 0.60 0.6 0\nerror jobs2: no timing (exit 124)\n"+ // none
		"jobs1 0.90 0.9 0\njobs2 0.50 0.9 0\n"+ // 1.80
		"jobs1 0.62 0.6 0\njobs2 0.40 0.6 0\n"+ // 1.55
		"jobs1 0.58 0.6 0\njobs2 0.32 0.6 0", "\n")) // 1.81
	want := "10 frames, 4 rounds: `--jobs 1` 0.61 s (0.60 s CPU), `--jobs 2` 0.36 s (0.60 s CPU) (medians): **1.81×** faster"
	if got := s.String(); !strings.Contains(got, want) || !strings.Contains(got, "1.55× to 2.00×") {
		t.Errorf("renderJobs:\n%s\nlacks %q or the range 1.55× to 2.00×", got, want)
	}
}

// TestTimeCmd: benchfmt time passes the command's exit status on and
// writes its wall, user and system time and peak RSS, to the microsecond
// (not /usr/bin/time's 10 ms steps).
func TestTimeCmd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t")
	code, err := timeCmds(out, timeOpts{}, [][]string{{"sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exit 3"}})
	if err != nil || code != 3 {
		t.Fatalf("timeCmds = %d, %v; want exit status 3", code, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 4 {
		t.Fatalf("line %q: want wall user sys maxrss", b)
	}
	var v [4]float64
	for i, s := range f {
		if v[i], err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("field %d of %q: %v", i, b, err)
		}
	}
	if v[0] <= 0 || v[1]+v[2] <= 0 || v[3] <= 0 || v[1]+v[2] > v[0]*4 {
		t.Errorf("line %q: want positive wall, CPU and RSS, CPU within the wall time's bounds", b)
	}
	if !strings.Contains(f[1], ".") || len(f[1][strings.Index(f[1], ".")+1:]) != 6 {
		t.Errorf("user time %q: want microseconds", f[1])
	}
	if _, err := timeCmds(out, timeOpts{}, [][]string{{filepath.Join(t.TempDir(), "absent")}}); err == nil {
		t.Error("timeCmds of a missing command: no error")
	}
}

// TestTimeCmdFIFO: with -fifo the command, and it alone, runs under
// SCHED_FIFO at that priority: the timer's threads keep their policy.
// Fails (reverted) when timeCmds ignores fifo, or leaves its thread under
// SCHED_FIFO.
func TestTimeCmdFIFO(t *testing.T) {
	testenv.Root(t)
	dir := t.TempDir()
	stat := filepath.Join(dir, "stat")
	code, err := timeCmds(filepath.Join(dir, "t"), timeOpts{fifo: 7}, [][]string{{"sh", "-c", "cat /proc/$$/stat >" + stat}})
	if err != nil || code != 0 {
		t.Fatalf("timeCmds = %d, %v", code, err)
	}
	b, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	if prio, policy := schedOf(t, string(b)); prio != "7" || policy != "1" {
		t.Errorf("the command ran with rt_priority %s, policy %s; want 7 and 1 (SCHED_FIFO)", prio, policy)
	}
	tasks, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads: %v %v", tasks, err)
	}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread has exited
		}
		if _, policy := schedOf(t, string(b)); policy != "0" {
			t.Errorf("%s: policy %s after timeCmds; want 0 (SCHED_OTHER)", p, policy)
		}
	}
}

// TestTimeArgs: benchfmt time's options come before OUT, and "::"
// separates its commands. Fails when a flag is taken for OUT, or an empty
// command is accepted.
func TestTimeArgs(t *testing.T) {
	for _, args := range [][]string{{"-fifo", "0", "out", "true"}, {"-fifo", "x", "out", "true"}, {"-fifo", "5", "out"}, {"out"},
		{"out", "::", "true"}, {"out", "true", "::"}, {"out", "true", "::", "::", "true"}} {
		if _, _, _, err := timeArgs(args); err == nil {
			t.Errorf("timeArgs(%q): no error", args)
		}
	}
	out, o, argvs, err := timeArgs([]string{"-fifo", "10", "-pin", "o", "a", "b", "::", "c"})
	if err != nil || out != "o" || o != (timeOpts{fifo: 10, pin: true}) || len(argvs) != 2 || strings.Join(argvs[0], " ") != "a b" || strings.Join(argvs[1], " ") != "c" {
		t.Errorf("timeArgs: %q %+v %q %v", out, o, argvs, err)
	}
}

// TestTimeCmdsPinned: with two commands they run at once, pinned to two
// different CPUs of the timer's mask, which the timer keeps; the wall
// time is until the later one exited and the CPU time is both's. Fails
// when the commands run one after the other, share a CPU, or the timer's
// thread stays pinned.
func TestTimeCmdsPinned(t *testing.T) {
	pn, err := newPinner()
	if err != nil {
		t.Fatal(err)
	}
	if len(pn.cpus) < 2 {
		testenv.Unavailable(t, "this test needs two CPUs")
	}
	dir := t.TempDir()
	// Each command marks that it started, waits for the other's mark (at
	// most 3 s: they overlap), spins a little and records its CPU mask.
	cmd := func(me, other string) []string {
		return []string{"sh", "-c", "touch " + filepath.Join(dir, me) + "; n=0; until [ -e " + filepath.Join(dir, other) +
			" ] || [ $n -gt 300 ]; do sleep 0.01; n=$((n+1)); done; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; " +
			"grep Cpus_allowed_list /proc/$$/status >" + filepath.Join(dir, me+".cpus") + "; [ $n -le 300 ]"}
	}
	code, err := timeCmds(filepath.Join(dir, "t"), timeOpts{pin: true}, [][]string{cmd("a", "b"), cmd("b", "a")})
	if err != nil || code != 0 {
		t.Fatalf("timeCmds = %d, %v (non-zero: a command did not see the other start)", code, err)
	}
	a, errA := os.ReadFile(filepath.Join(dir, "a.cpus"))
	b, errB := os.ReadFile(filepath.Join(dir, "b.cpus"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	want := func(c int) string { return "Cpus_allowed_list:\t" + strconv.Itoa(c) + "\n" }
	if string(a) != want(pn.cpus[0]) || string(b) != want(pn.cpus[1]) {
		t.Errorf("masks %q and %q; want CPUs %d and %d", a, b, pn.cpus[0], pn.cpus[1])
	}
	after, err := newPinner()
	if err != nil || !slices.Equal(after.cpus, pn.cpus) {
		t.Errorf("the timer's CPUs %v after, %v before (%v)", after.cpus, pn.cpus, err)
	}
	line, err := os.ReadFile(filepath.Join(dir, "t"))
	if f := strings.Fields(string(line)); err != nil || len(f) != 4 {
		t.Fatalf("line %q: %v", line, err)
	}
}

// schedOf returns the rt_priority and policy fields of a /proc stat line.
func schedOf(t *testing.T, stat string) (prio, policy string) {
	t.Helper()
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	// Fields from the state (field 3 of proc(5)): rt_priority is 40,
	// policy 41.
	if len(f) < 39 {
		t.Fatalf("stat %q: too few fields", stat)
	}
	return f[40-3], f[41-3]
}

// TestRenderJobsPairs: a pair line belongs to the round just before it,
// and to none when that round failed or has its pair already; each
// window shows its own rounds' pairs. Fails when a pair goes to the wrong
// round (here, the stray pairs would give 3.00× and 2.00×), or the
// share is --jobs 2's ratio over the pair's the wrong way round.
func TestRenderJobsPairs(t *testing.T) {
	var s section
	renderJobs(&s, strings.Split("frames 10\npair 0.40 0.8 0\nwindow 0\n"+
		"jobs1 0.60 0.6 0\njobs2 0.30 0.6 0\npair 0.80 1.2 0\npair 0.40 0.8 0\n"+ // 1.50x, share 1.33 (2.00x / 1.50x)
		"jobs1 0.60 0.6 0\nerror jobs2: no timing (exit 124)\npair 0.60 1.2 0\n"+
		"window 1\njobs1 0.60 0.6 0\njobs2 0.40 0.6 0\npair 0.75 1.2 0\n"+ // 1.60x, share 0.94
		"jobs1 0.60 0.6 0\njobs2 0.40 0.6 0\n", "\n"))
	got := s.String()
	for _, want := range []string{
		"after `--jobs 2` in 2 of the rounds: both done in 0.78 s (1.20 s CPU, medians), **1.55×** one `--jobs 1` judge's work in its time (median of the rounds' 2·t̄1/tpair, 1.50× to 1.60×)",
		"`--jobs 2` reached 114 % of it",
		"2.00× (1 round, `--jobs 2` taking 1.00× the CPU of `--jobs 1`; two judges at once 1.50×); 1.50× (2 rounds, `--jobs 2` taking 1.00× the CPU of `--jobs 1`; two judges at once 1.60×)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("renderJobs:\n%s\nlacks %q", got, want)
		}
	}
}

// TestPercent: a percentage is whole, but for one that would round onto
// the target's from either side. Fails with a plain %.0f (69.6 -> "70").
func TestPercent(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0.55, "55"}, {0.696, "69.6"}, {0.7, "70"}, {0.703, "70.3"}, {0.74, "74"}} {
		if got := percent(c.v, 0.7); got != c.want {
			t.Errorf("percent(%v, 0.7) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestRatio: a ratio has two decimals, and more where two would round it
// onto the target from either side. Fails with a plain %.2f (1.6996 ->
// "1.70").
func TestRatio(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{1.76, "1.76"}, {1.7, "1.70"}, {1.6996, "1.6996"}, {1.7004, "1.7004"}, {1.69, "1.69"}, {1.7000001, "1.700000"}} {
		if got := ratio(c.v, 1.7); got != c.want {
			t.Errorf("ratio(%v, 1.7) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestRenderJobsWindows: rounds in several windows show each window's
// ratio in the order they ran; one window shows none. Fails when rounds
// are given the wrong window.
func TestRenderJobsWindows(t *testing.T) {
	round := func(w2 string) string { return "jobs1 0.60 0.60 0\njobs2 " + w2 + " 0.66 0\n" }
	var s section
	renderJobs(&s, strings.Split("frames 10\nwindow 0\n"+round("0.30")+round("0.32")+"window 1\n"+round("0.40")+round("0.40")+round("0.38"), "\n"))
	want := "- by window of rounds (bench.sh runs them half a minute apart: the host's state drifts over minutes): 1.94× (2 rounds, `--jobs 2` taking 1.10× the CPU of `--jobs 1`); 1.50× (3 rounds,"
	if got := s.String(); !strings.Contains(got, want) {
		t.Errorf("renderJobs:\n%s\nlacks %q", got, want)
	}
	s = section{}
	renderJobs(&s, strings.Split("frames 10\nwindow 0\n"+round("0.30"), "\n"))
	if strings.Contains(s.String(), "by window") {
		t.Errorf("one window: want no windows line:\n%s", s.String())
	}
}

// jobsRounds writes rounds of --jobs 1 at 0.60 s: each a --jobs 2 time and
// the pair's time after it ("" for no pair line).
func jobsRounds(rounds ...[2]string) []string {
	out := []string{"frames 10"}
	for _, r := range rounds {
		out = append(out, "jobs1 0.60 0.6 0", "jobs2 "+r[0]+" 0.6 0")
		if r[1] != "" {
			out = append(out, "pair "+r[1]+" 1.2 0")
		}
	}
	return out
}

// judgeJobs renders jobs.txt lines and returns the text and the table of
// targets.
func judgeJobs(lines []string) string {
	var s section
	renderJobs(&s, lines)
	return s.String() + targetTable(s.targets)
}

// TestRenderJobsVerdict: the --jobs verdict is on the rounds whose pair
// reached 1.7× (two judges that share nothing did 1.7 times one judge's
// work in the window's median --jobs 1 time), whatever --jobs 2 did in
// them: met when the 95 % interval of their median ratio is at or above
// 1.7×, not met when below, not judged when it holds 1.7×. Rounds whose
// pair fell short neither sink nor lift it. Fails when rounds are chosen
// by --jobs 2's ratio, or not chosen, or the verdict is on the median
// alone.
func TestRenderJobsVerdict(t *testing.T) {
	free, held := "0.65", "0.80" // the pair: 1.85x, 1.50x
	rounds := func(freeT2 []string, heldT2 string) [][2]string {
		var r [][2]string
		for _, t2 := range freeT2 {
			r = append(r, [2]string{t2, free}, [2]string{heldT2, held})
		}
		return r
	}
	for _, c := range []struct {
		name string
		in   [][2]string
		want []string
	}{
		{"met", rounds([]string{"0.34", "0.33", "0.345", "0.34", "0.335", "0.34"}, "0.42"), []string{ // 1.74x to 1.82x; held 1.43x
			"the verdict** is on the 6 of the 12 rounds whose pair reached 1.7×",
			"**1.76×** faster (median of those rounds' ratios, 1.74× to 1.82×; 95 % interval of the median from the rounds' order statistics 1.74× to 1.82×; target ≥ 1.7× on this 2-core machine, judged on the whole interval: **met**)",
			"| `--jobs 2` ≥ 1.7× faster than `--jobs 1` in wall time, `incast` | issue 12 | 1.76× (95 % interval 1.74× to 1.82×) in the 6 of 12 rounds whose pair reached 1.7× (all rounds: 1.58×): **met** |"}},
		{"not met", rounds([]string{"0.37", "0.36", "0.37", "0.38", "0.37", "0.365"}, "0.30"), []string{ // 1.58x to 1.67x; held 2.00x
			"judged on the whole interval: **not met**)", "1.62× (95 % interval 1.58× to 1.67×) in the 6 of 12 rounds whose pair reached 1.7× (all rounds: 1.83×): **not met** |"}},
		{"too close", rounds([]string{"0.33", "0.36", "0.345", "0.37", "0.35", "0.34"}, "0.30"), []string{ // 1.62x to 1.82x
			"judged on the whole interval: **not judged**, the interval holds 1.7×)",
			"1.73× (95 % interval 1.62× to 1.82×) in the 6 of 12 rounds whose pair reached 1.7× (all rounds: 1.91×): the interval holds 1.7×: **not judged** |"}},
	} {
		got := judgeJobs(jobsRounds(c.in...))
		for _, want := range c.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s:\n%s\nlacks %q", c.name, got, want)
			}
		}
	}
}

// TestRenderJobsPairGainWindowT1: a round's pair is judged against its
// window's median --jobs 1 time, not the round's own, which the ratio
// also divides: a slow --jobs 1 run (0.70 s, where the window's median is
// 0.60 s) lifts the round's ratio and, against its own time, its pair
// (2·0.70/0.80 = 1.75×) as well; against the median the pair did 1.50×,
// and the round is not chosen. A pair at exactly 1.7× (2·0.85/1.00) is
// chosen; the pair's CPU time plays no part; a round whose --jobs 2 run
// failed (EXIT 1) has no ratio, however fast it was, and one whose pair
// failed is not chosen. Fails with the round's own --jobs 1 time, with >
// for ≥, with the pair's CPU / wall time as the choice, or with failed
// runs counted.
func TestRenderJobsPairGainWindowT1(t *testing.T) {
	var lines []string
	lines = append(lines, "frames 10", "window 0")
	for range 6 {
		lines = append(lines, "jobs1 0.60 0.6 0", "jobs2 0.34 0.6 0", "pair 0.65 1.0 0") // chosen (CPU/wall 1.54)
		lines = append(lines, "jobs1 0.70 0.7 0", "jobs2 0.30 0.6 0", "pair 0.80 1.6 0") // not chosen (CPU/wall 2.0)
	}
	lines = append(lines, "jobs1 0.60 0.6 0", "jobs2 0.10 0.6 1", "pair 0.65 1.2 0") // failed run
	lines = append(lines, "jobs1 0.60 0.6 0", "jobs2 0.34 0.6 0", "pair 0.65 1.2 1") // failed pair: a round, not chosen
	lines = append(lines, "window 1")
	for range 6 {
		lines = append(lines, "jobs1 0.85 0.85 0", "jobs2 0.50 0.9 0", "pair 1.00 1.7 0") // exactly 1.7x: chosen
	}
	got := judgeJobs(lines)
	for _, want := range []string{
		"the verdict** is on the 12 of the 19 rounds whose pair reached 1.7×",
		"**1.73×** faster (median of those rounds' ratios, 1.70× to 1.76×; 95 % interval of the median from the rounds' order statistics 1.70× to 1.76×; target ≥ 1.7× on this 2-core machine, judged on the whole interval: **met**)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("renderJobs:\n%s\nlacks %q", got, want)
		}
	}
}

// TestRenderJobsVerdictTooFewFreeRounds: with fewer than minFreeRounds
// rounds whose pair reached 1.7×, the --jobs target is not judged (neither
// met nor not met), and says why; with no pair timed at all, the verdict
// is on every round, by the same rule. Fails when a verdict is given on
// five such rounds, on three rounds without pairs, or none on six.
func TestRenderJobsVerdictTooFewFreeRounds(t *testing.T) {
	in := [][2]string{{"0.30", "0.80"}, {"0.30", ""}}
	for range 5 {
		in = append(in, [2]string{"0.30", "0.65"})
	}
	got := judgeJobs(jobsRounds(in...))
	for _, want := range []string{
		"**not judged:** the pair reached 1.7× in 5 of 7 rounds, fewer than the 6 the verdict is given on",
		"| the pair reached 1.7× in 5 of 7 rounds: **not judged** |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("five free rounds:\n%s\nlacks %q", got, want)
		}
	}
	if strings.Contains(got, "**met**") || strings.Contains(got, "**not met**") {
		t.Errorf("five free rounds: a verdict was given:\n%s", got)
	}
	var none [][2]string
	for _, t2 := range []string{"0.34", "0.33", "0.345", "0.34", "0.335", "0.34"} {
		none = append(none, [2]string{t2, ""})
	}
	for in, want := range map[int]string{
		3: "**not judged:** 3 rounds, none with a pair, fewer than the 6 the verdict is given on",
		6: "**the verdict** is on every round: none timed two judges at once. There `--jobs 2` was **1.76×** faster (median of those rounds' ratios, 1.74× to 1.82×; 95 % interval of the median from the rounds' order statistics 1.74× to 1.82×; target ≥ 1.7× on this 2-core machine, judged on the whole interval: **met**)",
	} {
		if got := judgeJobs(jobsRounds(none[:in]...)); !strings.Contains(got, want) {
			t.Errorf("no pairs, %d rounds:\n%s\nlacks %q", in, got, want)
		}
	}
}

// TestMedianInterval: the 95 % interval of a median from order
// statistics is the k-th smallest and k-th largest value, k from the
// binomial distribution (n = 6: 1, 10: 2, 15: 4, 18: 5, 35: 12), for any
// number of rounds (2,001: no factor overflows).
func TestMedianInterval(t *testing.T) {
	for n, k := range map[int]int{6: 1, 7: 1, 10: 2, 15: 4, 18: 5, 21: 6, 35: 12, 100: 40, 2001: 957} {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = float64((i*11)%n + 1) // 1..n, shuffled
		}
		if lo, hi := medianInterval(vs); lo != float64(k) || hi != float64(n-k+1) {
			t.Errorf("n=%d: interval %v to %v, want %d to %d", n, lo, hi, k, n-k+1)
		}
	}
}

// TestRunFree: benchfmt free counts the rounds of a jobs.txt whose pair
// reached 1.7×, as the verdict takes them (freeRounds), for bench.sh to decide
// whether to run another window: here the rounds whose pair gave 1.85×
// and 1.71×, not the one at 1.50×, nor the one without a pair.
func TestRunFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.txt")
	data := strings.Join(jobsRounds([2]string{"0.30", "0.65"}, [2]string{"0.30", "0.80"}, [2]string{"0.50", "0.70"}, [2]string{"0.30", ""}), "\n")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := run([]string{"free", path}, &b); err != nil || b.String() != "2\n" {
		t.Errorf("benchfmt free: %q, %v; want \"2\\n\"", b.String(), err)
	}
	if err := run([]string{"free", path + ".none"}, &b); err == nil {
		t.Error("benchfmt free of a missing file: no error")
	}
}

// TestCLIVerdict: the CLI ratio targets (judge / tshark ≤ 1/15, ≥ 10× the
// judge issue 12 measured) are judged on the 95 % interval of the median
// of the rounds' ratios, as the --jobs target: met when the whole interval
// reaches the bar, not met when it lies below, not judged when it holds
// the bar. 15 rounds: the interval runs from the 4th smallest ratio to the
// 4th largest.
func TestCLIVerdict(t *testing.T) {
	for _, c := range []struct {
		name          string
		tshark, filed func(i int) float64 // round i's ratio to the judge
		want          []string
	}{
		{"met", func(i int) float64 { return 15.5 + float64(i)/10 }, func(i int) float64 { return 10.2 + float64(i)/10 },
			[]string{"1/16.2 (95 % interval 1/15.8 to 1/16.6): **met**", "10.9× (95 % interval 10.5× to 11.3×): **met**"}},
		{"not met", func(i int) float64 { return 13 + float64(i)/10 }, func(i int) float64 { return 8 + float64(i)/10 },
			[]string{"1/13.7 (95 % interval 1/13.3 to 1/14.1): **not met**", "8.7× (95 % interval 8.3× to 9.1×): **not met**"}},
		{"interval holds the bar", func(i int) float64 { return 12 + float64(i)/2 }, func(i int) float64 { return 7 + float64(i)/2 },
			[]string{"1/15.5 (95 % interval 1/13.5 to 1/17.5): the interval holds 1/15.0: **not judged**",
				"10.5× (95 % interval 8.5× to 12.5×): the interval holds 10.0×: **not judged**"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := []string{"frames 1000"}
			for i := range 15 {
				lines = append(lines, "judge 0.1 0 1000 0", "decode 0.05 0 1000 0",
					fmt.Sprintf("tshark %g 0 1000 0", 0.1*c.tshark(i)), fmt.Sprintf("filed %g 0 1000 0", 0.1*c.filed(i)))
			}
			lines = append(lines, "filed_commit 9c73972")
			var s section
			renderCPU(&s, lines)
			var got []string
			for _, tg := range s.targets {
				if strings.HasPrefix(tg.what, "the judge CLI: ≤ 1/15") || strings.HasPrefix(tg.what, "the judge CLI: ≥ 10×") {
					got = append(got, tg.got)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("targets %q, want %q", got, c.want)
			}
		})
	}
}
