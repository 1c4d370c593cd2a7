package main

import (
	"bytes"
	"fmt"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tiny is a module with one mutated package and one suite package. Its
// tests leave two mutants alive on purpose: Over's n > limit made >=
// (Over(9) is never asked by tiny's own tests, but it is by use's, so
// stage 2 kills it) and Abs's n < 0 made <= (equivalent: -0 is 0, no test
// can kill it).
var tiny = map[string]string{
	"go.mod": "module example.com/tiny\n\ngo 1.22\n",
	"tiny/tiny.go": `package tiny

const limit = 10 - 1

func Over(n int) bool {
	return n > limit
}

func Abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func Sum(xs []int) int {
	s := 0
	for i := 0; i < len(xs); i++ {
		s += xs[i]
	}
	return s
}
`,
	"tiny/tiny_test.go": `package tiny

import "testing"

func TestTiny(t *testing.T) {
	if !Over(10) || Over(3) || Abs(-2) != 2 || Abs(3) != 3 || Sum([]int{1, 2, 3}) != 6 {
		t.Fatal("wrong")
	}
}
`,
	"use/use.go": "package use\n",
	"use/use_test.go": `package use

import (
	"testing"

	"example.com/tiny/tiny"
)

func TestOverAtLimit(t *testing.T) {
	if tiny.Over(9) {
		t.Fatal("9 is not over the limit")
	}
}
`,
}

func writeTiny(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, tiny)
	return dir
}

// writeTree writes files (path relative to dir: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantTiny is every mutant of tiny/tiny.go, as gremlins v0.6.0 lists them.
var wantTiny = []string{
	"tiny/tiny.go:3:18 ARITHMETIC_BASE", "tiny/tiny.go:3:18 INVERT_NEGATIVES",
	"tiny/tiny.go:6:11 CONDITIONALS_BOUNDARY", "tiny/tiny.go:6:11 CONDITIONALS_NEGATION",
	"tiny/tiny.go:10:7 CONDITIONALS_BOUNDARY", "tiny/tiny.go:10:7 CONDITIONALS_NEGATION",
	"tiny/tiny.go:11:10 ARITHMETIC_BASE", "tiny/tiny.go:11:10 INVERT_NEGATIVES",
	"tiny/tiny.go:18:16 CONDITIONALS_BOUNDARY", "tiny/tiny.go:18:16 CONDITIONALS_NEGATION",
	"tiny/tiny.go:18:28 INCREMENT_DECREMENT",
}

func TestListMutants(t *testing.T) {
	dir := writeTiny(t)
	ms, err := listMutants(dir, []string{"tiny/tiny.go"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, m := range ms {
		got = append(got, m.Key())
		if m.ID != i+1 {
			t.Errorf("%s: ID %d, want %d", m.Key(), m.ID, i+1)
		}
	}
	if strings.Join(got, "\n") != strings.Join(wantTiny, "\n") {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantTiny, "\n"))
	}
}

// TestRunTiny rewrites tiny, checks that the environment selects one
// mutant by its number, and runs both stages: the planted equivalent
// mutant lives, the one only the suite pins dies in stage 2, the constant
// ones are compiled on their own.
func TestRunTiny(t *testing.T) {
	dir := writeTiny(t)
	apply := t.TempDir()
	if err := copyFiles(dir, apply, []string{"go.mod", "tiny/tiny.go", "tiny/tiny_test.go", "use/use.go", "use/use_test.go"}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	work := t.TempDir()
	o, err := run(config{Src: dir, Apply: apply, Work: work, Files: []string{"tiny/tiny.go"}, Suite: []string{"./use"},
		Jobs: 2, Timeout: 20 * time.Second, SuiteTimeout: 20 * time.Second, Retry: 1, Log: &log,
		Allow: map[string]string{"tiny/tiny.go:10:7 CONDITIONALS_BOUNDARY": "Abs(0) is 0 either way"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(log.String())
	want := map[string]string{
		"tiny/tiny.go:3:18 ARITHMETIC_BASE": "1 KILLED applied", "tiny/tiny.go:3:18 INVERT_NEGATIVES": "1 KILLED applied",
		"tiny/tiny.go:6:11 CONDITIONALS_BOUNDARY": "2 KILLED", "tiny/tiny.go:10:7 CONDITIONALS_BOUNDARY": "1 LIVED",
	}
	for _, x := range o.Results {
		got := fmtResult(x)
		w, ok := want[x.Key()]
		if !ok {
			w = "1 KILLED"
		}
		if got != w {
			t.Errorf("%s: %s, want %s (%s)", x.Key(), got, w, x.Detail)
		}
	}
	var rep bytes.Buffer
	report(&rep, o, nil)
	if !strings.Contains(rep.String(), "| `tiny/tiny.go` | 11 | 10 (0): 9 in stage 1, 1 in stage 2 | 0 | 1 | 0 | 100.0 % |") {
		t.Errorf("report:\n%s", rep.String())
	}
	// The schemata binary takes the mutated branch only for its number:
	// Over's n > limit negated (mutant 4) fails the package's tests, its
	// boundary (3, killed only by the suite) and Abs's (5) pass them.
	bin := filepath.Join(work, "bin", binName(dir, "./tiny"))
	for id, pass := range map[string]bool{"0": true, "3": true, "4": false, "5": true} {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), envID+"="+id)
		if err := cmd.Run(); (err == nil) != pass {
			t.Errorf("%s=%s: passes %v, want %v", envID, id, err == nil, pass)
		}
	}
}

func fmtResult(x *Result) string {
	s := x.Status
	if x.Stage != 0 {
		s = string(rune('0'+x.Stage)) + " " + s
	}
	if x.Applied != "" {
		s += " applied"
	}
	return s
}

// TestRenderNested: a mutant inside another's operand keeps its own
// switch in both branches of the outer one.
func TestRenderNested(t *testing.T) {
	src := []byte("x := a+b < c")
	inner := &site{start: 5, end: 8, opOff: 6, op: token.ADD, typ: "int", n: 2,
		muts: []*Mutant{{ID: 7, Repl: token.SUB}}}
	outer := &site{start: 5, end: 12, opOff: 9, op: token.LSS, typ: "bool", n: 1,
		muts: []*Mutant{{ID: 3, Repl: token.GEQ}}}
	got := renderFile(src, []*site{outer, inner})
	innerText := "/*site 2*/ func() int { switch mutschemaID { case 7: return /*mut 7*/ a-b /*end mut 7*/; }; return a+b }() /*end site 2*/"
	want := "x := /*site 1*/ func() bool { switch mutschemaID { case 3: return /*mut 3*/ " + innerText + " >= c /*end mut 3*/; }; return " +
		innerText + " < c }() /*end site 1*/"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestResumeCarries: results.tsv read back gives each mutant its verdict;
// a resumed run carries the killed ones and runs the survivors again; a
// mutated file that changed since refuses the resume.
func TestResumeCarries(t *testing.T) {
	dir := t.TempDir()
	ms := []*Mutant{{ID: 1, File: "p/a.go", Line: 3, Col: 7, Type: ConditionalsBoundary},
		{ID: 2, File: "p/a.go", Line: 3, Col: 7, Type: ConditionalsNegation}, {ID: 3, File: "p/a.go", Line: 9, Col: 2, Type: IncrementDecrement}}
	old := []*Result{{Mutant: ms[0], Stage: 1, Status: Lived}, {Mutant: ms[1], Stage: 1, Status: Killed, Detail: "--- FAIL: TestX (0.00s)"},
		{Mutant: ms[2], Stage: 2, Status: TimedOut, Retried: TimedOut, Detail: "after 3m0s"}}
	if err := saveResults(filepath.Join(dir, "results.tsv"), old); err != nil {
		t.Fatal(err)
	}
	prev, err := readResults(filepath.Join(dir, "results.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: config{Resume: prev}}
	var now []*Result
	for _, m := range ms {
		now = append(now, &Result{Mutant: &Mutant{File: m.File, Line: m.Line, Col: m.Col, Type: m.Type}})
	}
	r.carry(now)
	if now[0].Carried || !now[1].Carried || now[1].Status != Killed || now[1].Detail != old[1].Detail || !now[2].Carried || now[2].Status != TimedOut {
		t.Errorf("carried: %+v %+v %+v", *now[0], *now[1], *now[2])
	}
	if err := copyFiles(".", filepath.Join(dir, "orig"), []string{"mutants.go"}); err != nil {
		t.Fatal(err)
	}
	if _, err := resumeFrom(dir, []string{"mutants.go"}); err != nil {
		t.Errorf("unchanged file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "orig", "mutants.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := resumeFrom(dir, []string{"mutants.go"}); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("changed file: %v, want a refusal", err)
	}
}

// TestReadAllow: an entry needs its reason.
func TestReadAllow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "allow.txt")
	for text, ok := range map[string]bool{"# comment\n\na.go:1:2 CONDITIONALS_BOUNDARY # n == 0 never reaches it\n": true,
		"a.go:1:2 CONDITIONALS_BOUNDARY\n": false, "a.go:1:2 # why\n": false} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := readAllow(p)
		if (err == nil) != ok || (ok && m["a.go:1:2 CONDITIONALS_BOUNDARY"] != "n == 0 never reaches it") {
			t.Errorf("%q: %v %v", text, m, err)
		}
	}
}

// TestMemCapKillsRunaway plants a mutant that allocates without bound
// (Grow's i++ made i--: the loop never reaches n and keeps 64 MiB more
// each turn, each page touched) and shows the memory cap kill it within
// seconds, reported as such, while the unmutated binary passes under the
// same cap, an untouched 1 GiB slice not counting against it.
func TestMemCapKillsRunaway(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/grow\n\ngo 1.22\n",
		"grow/grow.go": `package grow

func Grow(n int) int {
	var keep [][]byte
	for i := 0; i != n; i++ {
		keep = append(keep, touched(64<<20))
	}
	return len(keep)
}
`,
		"grow/touch.go": `package grow

// touched is n bytes, one in each page written.
func touched(n int) []byte {
	b := make([]byte, n)
	for j := 0; j < n; j += 4096 {
		b[j] = 1
	}
	return b
}
`,
		"grow/grow_test.go": `package grow

import "testing"

var big []byte

func TestGrow(t *testing.T) {
	big = make([]byte, 1<<30)
	if Grow(2) != 2 || len(big) != 1<<30 {
		t.Fatal("wrong")
	}
}
`,
	}
	writeTree(t, dir, files)
	var log bytes.Buffer
	o, err := run(config{Src: dir, Work: t.TempDir(), Files: []string{"grow/grow.go"}, Jobs: 1,
		Timeout: 120 * time.Second, Retry: 1, MemCap: 512 << 20, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var runaway *Result
	for _, x := range o.Results {
		if x.Key() == "grow/grow.go:5:23 INCREMENT_DECREMENT" {
			runaway = x
		}
	}
	if runaway == nil {
		t.Fatalf("no mutant grow/grow.go:5:23 INCREMENT_DECREMENT:\n%s", log.String())
	}
	if runaway.Status != Killed || !strings.HasPrefix(runaway.Detail, oomPrefix) {
		t.Errorf("runaway mutant: %s [%s], want %s [%s ...]", runaway.Status, runaway.Detail, Killed, oomPrefix)
	}
	// Without the cap it would run for the whole timeout; under it, it
	// stops after some 8 allocations of 64 MiB.
	if runaway.CPU > 10*time.Second {
		t.Errorf("runaway mutant took %s CPU, want the cap to stop it in seconds", runaway.CPU)
	}
	var rep bytes.Buffer
	report(&rep, o, nil)
	if !strings.Contains(rep.String(), "Killed by the memory cap") || !strings.Contains(rep.String(), "grow/grow.go:5:23 INCREMENT_DECREMENT KILLED") {
		t.Errorf("report does not list the runaway mutant as killed by the cap:\n%s", rep.String())
	}
	t.Logf("runaway mutant: %s CPU, %s", runaway.CPU, runaway.Detail)
}

// TestCheckpointEachVerdict: every verdict reaches the checkpoint as soon
// as it is decided, a first timeout only after its second run; a run
// stopped there and resumed from the saved results.tsv carries what was
// decided and runs the survivor and the mutant never reached.
func TestCheckpointEachVerdict(t *testing.T) {
	var res []*Result
	for i := 1; i <= 4; i++ {
		res = append(res, &Result{Mutant: &Mutant{ID: i, File: "p/a.go", Line: i, Col: 1, Type: ConditionalsBoundary}})
	}
	path := filepath.Join(t.TempDir(), "results.tsv")
	var seen []string
	ck := func(l []*Result) {
		var s []string
		for _, x := range l {
			s = append(s, fmt.Sprintf("%d %s", x.ID, x.Status))
		}
		seen = append(seen, strings.Join(s, ", "))
		if err := saveResults(path, l); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{cfg: config{Jobs: 1, Retry: 3, Checkpoint: ck}}
	r.track(res)
	r.each(res, func(x *Result) bool { return x.ID != 4 }, func(x *Result, retry int) {
		switch {
		case x.ID == 2 && retry == 1:
			x.Status = TimedOut
		case x.ID == 3:
			x.Status = Lived
		default:
			x.Status = Killed
		}
	})
	want := []string{"1 KILLED", "1 KILLED, 3 LIVED", "1 KILLED, 2 KILLED, 3 LIVED"}
	if strings.Join(seen, "; ") != strings.Join(want, "; ") {
		t.Errorf("checkpoints %q, want %q", seen, want)
	}
	prev, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	var now []*Result
	for _, x := range res {
		now = append(now, &Result{Mutant: &Mutant{ID: x.ID, File: x.File, Line: x.Line, Col: x.Col, Type: x.Type}})
	}
	seen = nil
	r = &runner{cfg: config{Jobs: 1, Retry: 3, Resume: prev, Checkpoint: ck}}
	r.carry(now)
	r.track(now)
	var ran []int
	r.each(now, func(x *Result) bool { return !x.Carried }, func(x *Result, _ int) {
		ran = append(ran, x.ID)
		x.Status = Killed
	})
	if fmt.Sprint(ran) != "[3 4]" || strings.Join(seen, "; ") != "1 KILLED, 2 KILLED, 3 KILLED; 1 KILLED, 2 KILLED, 3 KILLED, 4 KILLED" {
		t.Errorf("resumed: ran %v, checkpoints %q", ran, seen)
	}
}

// TestCPUCapStopsSpin plants a mutant that loops for ever without
// allocating (i++ made i-- in a loop to n) and shows the CPU cap stop it
// once past the cap, long before the wall clock timeout: it counts as
// timed out, is listed with the cap in its detail and does not run a
// second time, its CPU time not depending on the machine's load.
func TestCPUCapStopsSpin(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/spin\n\ngo 1.22\n",
		"spin/spin.go": `package spin

func Count(n int) int {
	c := 0
	for i := 0; i != n; i++ {
		c++
	}
	return c
}
`,
		"spin/spin_test.go": `package spin

import "testing"

func TestCount(t *testing.T) {
	if Count(3) != 3 {
		t.Fatal("wrong")
	}
}
`,
	}
	writeTree(t, dir, files)
	var log bytes.Buffer
	o, err := run(config{Src: dir, Work: t.TempDir(), Files: []string{"spin/spin.go"}, Jobs: 1,
		Timeout: 300 * time.Second, Retry: 3, CPUCap: 10, CPUMin: time.Second, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var spin *Result
	for _, x := range o.Results {
		if x.Key() == "spin/spin.go:5:23 INCREMENT_DECREMENT" {
			spin = x
		}
	}
	if spin == nil {
		t.Fatalf("no mutant spin/spin.go:5:23 INCREMENT_DECREMENT:\n%s", log.String())
	}
	if spin.Status != TimedOut || !strings.HasPrefix(spin.Detail, cpuPrefix) || spin.Retried != "" {
		t.Errorf("spinning mutant: %s [%s], retried %q; want %s [%s ...], not run again", spin.Status, spin.Detail, spin.Retried, TimedOut, cpuPrefix)
	}
	if spin.CPU < time.Second || spin.CPU > 10*time.Second {
		t.Errorf("spinning mutant took %s CPU, want the cap of 1 s and at most a few polls more", spin.CPU)
	}
	var rep bytes.Buffer
	report(&rep, o, nil)
	if !strings.Contains(rep.String(), "spin/spin.go:5:23 INCREMENT_DECREMENT TIMED OUT") {
		t.Errorf("report does not list the spinning mutant as timed out:\n%s", rep.String())
	}
	t.Logf("spinning mutant: %s CPU, %s", spin.CPU, spin.Detail)
}
