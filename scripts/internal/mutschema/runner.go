package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Verdicts of one run of a mutant.
const (
	Killed    = "KILLED"
	Lived     = "LIVED"
	TimedOut  = "TIMED OUT"
	NotViable = "NOT VIABLE" // the mutated code does not compile
)

// config is one run.
type config struct {
	Src          string   // a private copy of the module, rewritten in place
	Apply        string   // another private copy, for mutants compiled one at a time ("" makes none)
	Work         string   // binaries and results
	Files        []string // the files to mutate, relative to Src
	Suite        []string // stage 2 package patterns (none: stage 1 only)
	Jobs         int
	Timeout      time.Duration // stage 1, per mutant
	SuiteTimeout time.Duration // stage 2, per mutant and package
	Retry        int           // a timed-out mutant runs once more with Retry × the timeout
	MemCap       uint64        // the resident memory of each run of a mutant's test binary, in bytes (0: no cap)
	CPUCap       int           // each run of a mutant's test binary may use this many times its unmutated run's CPU time (0: no cap) ...
	CPUMin       time.Duration // ... and at least this much
	Allow        map[string]string
	Resume       map[string]*Result // an earlier run's verdicts: only its survivors run again
	Log          io.Writer
	Checkpoint   func([]*Result) // called with the decided results each time a verdict is decided (nil: not)
}

// Result is what became of one mutant.
type Result struct {
	*Mutant
	Applied  string // why the mutant was compiled on its own ("": in the schemata binary)
	Stage    int    // 1: the package's tests decided, 2: the suite did, 0: carried from Resume
	Status   string
	Retried  string        // a timed-out mutant's first verdict, TimedOut, when it ran again
	Detail   string        // the first failing test, or why
	CPU      time.Duration // user + system time of its runs
	Allowed  string        // the allowlist's reason, for a survivor it lists
	Carried  bool
	Original string // the verdict Resume carried
}

// binary is a test binary and the directory it runs in.
type binary struct {
	pkg, path, dir string
	base           time.Duration // CPU time of the unmutated run
}

type runner struct {
	cfg      config
	mu       sync.Mutex
	applyMu  sync.Mutex
	cpu      time.Duration // the mutants' runs and compiles
	buildCPU time.Duration // the schemata test binaries' compiles

	ckMu sync.Mutex
	pos  map[*Result]int // each result's place in the run
	done []*Result       // copies of the decided results, by place (nil: undecided)
}

// track makes res the results decided copies to cfg.Checkpoint.
func (r *runner) track(res []*Result) {
	r.pos, r.done = make(map[*Result]int, len(res)), make([]*Result, len(res))
	for i, x := range res {
		r.pos[x] = i
		if x.Carried {
			c := *x
			r.done[i] = &c
		}
	}
}

// decided hands cfg.Checkpoint every verdict decided so far, x's the
// latest, so that a run stopped part way can be resumed from them. It
// copies x: other workers are still writing the results they run.
func (r *runner) decided(x *Result) {
	if r.cfg.Checkpoint == nil {
		return
	}
	r.ckMu.Lock()
	defer r.ckMu.Unlock()
	c := *x
	r.done[r.pos[x]] = &c
	var list []*Result
	for _, d := range r.done {
		if d != nil {
			list = append(list, d)
		}
	}
	r.cfg.Checkpoint(list)
}

func (r *runner) addCPU(d time.Duration) {
	r.mu.Lock()
	r.cpu += d
	r.mu.Unlock()
}

// outcome is a run's results, in mutant order, and its CPU time.
type outcome struct {
	Results          []*Result
	BuildCPU, RunCPU time.Duration
}

// run measures every mutant of cfg.Files.
func run(cfg config) (*outcome, error) {
	r := &runner{cfg: cfg}
	muts, err := listMutants(cfg.Src, cfg.Files, 1)
	if err != nil {
		return nil, err
	}
	res := make([]*Result, len(muts))
	byPkg := map[string][]*Mutant{}
	for i, m := range muts {
		res[i] = &Result{Mutant: m}
		byPkg[filepath.Dir(filepath.FromSlash(m.File))] = append(byPkg[filepath.Dir(filepath.FromSlash(m.File))], m)
	}
	pkgBins := map[string]*binary{}
	for pkg, ms := range byPkg {
		rw, err := schemaPackage(cfg.Src, filepath.Join(cfg.Src, pkg), ms)
		if err != nil {
			return nil, err
		}
		for _, x := range res {
			if why, ok := rw.fallback[x.ID]; ok {
				x.Applied = why
			}
		}
		b, cpu, err := r.build(cfg.Src, "./"+filepath.ToSlash(pkg))
		r.buildCPU += cpu
		if err != nil {
			return nil, err
		}
		if err := r.baseline(b, false); err != nil {
			return nil, err
		}
		pkgBins[pkg] = b
	}
	r.carry(res)
	r.track(res)
	r.logf("== stage 1: %d mutants, the package's own tests (%s each)", len(res), cfg.Timeout)
	r.each(res, func(x *Result) bool { return !x.Carried }, func(x *Result, retry int) {
		r.stage1(x, pkgBins[filepath.Dir(filepath.FromSlash(x.File))], retry)
	})
	if len(cfg.Suite) > 0 {
		if err := r.stage2(res); err != nil {
			return nil, err
		}
	}
	for _, x := range res {
		if x.Status == Lived {
			x.Allowed = cfg.Allow[x.Key()]
		}
	}
	r.logf("CPU time: %s to build the schemata test binaries, %s to run the mutants (and compile those compiled on their own)",
		r.buildCPU.Round(time.Second), r.cpu.Round(time.Second))
	return &outcome{Results: res, BuildCPU: r.buildCPU, RunCPU: r.cpu}, nil
}

// carry takes the verdicts of an earlier run: its survivors, and the
// mutants it had not decided when it stopped, run again.
func (r *runner) carry(res []*Result) {
	for _, x := range res {
		old, ok := r.cfg.Resume[x.Key()]
		if ok && (old.Status == Killed || old.Status == TimedOut || old.Status == NotViable) {
			x.Carried, x.Status, x.Original, x.Detail, x.Stage = true, old.Status, old.Status, old.Detail, 0
		}
	}
}

// each runs fn over the results keep selects, cfg.Jobs at a time, then
// runs the timed-out ones again with the longer timeout. Each verdict is
// checkpointed once decided: a first timeout only after its second run.
func (r *runner) each(res []*Result, keep func(*Result) bool, fn func(*Result, int)) {
	var todo []*Result
	for _, x := range res {
		if keep(x) {
			todo = append(todo, x)
		}
	}
	r.parallel(todo, func(x *Result) {
		fn(x, 1)
		if !wallTimeout(x) || r.cfg.Retry <= 1 {
			r.decided(x)
		}
	})
	var again []*Result
	for _, x := range todo {
		if wallTimeout(x) {
			again = append(again, x)
		}
	}
	if len(again) > 0 && r.cfg.Retry > 1 {
		r.logf("   %d timed out: once more with %d × the timeout", len(again), r.cfg.Retry)
		r.parallel(again, func(x *Result) {
			x.Retried = TimedOut
			fn(x, r.cfg.Retry)
			r.decided(x)
		})
	}
}

// wallTimeout reports whether x timed out by the wall clock, which the
// machine's load can cause: it runs again with a longer timeout. A run
// stopped by the CPU cap is not run again: its CPU time does not depend on
// the load.
func wallTimeout(x *Result) bool {
	return x.Status == TimedOut && !strings.Contains(x.Detail, cpuPrefix)
}

// parallel runs fn over todo: the mutants compiled on their own one at a
// time (they share the Apply tree) beside cfg.Jobs - 1 workers (at least
// one) taking the others.
func (r *runner) parallel(todo []*Result, fn func(*Result)) {
	var applied, schema []*Result
	for _, x := range todo {
		if x.Applied != "" {
			applied = append(applied, x)
		} else {
			schema = append(schema, x)
		}
	}
	workers := r.cfg.Jobs
	if len(applied) > 0 {
		workers--
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, x := range applied {
			fn(x)
		}
	}()
	ch := make(chan *Result)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := range ch {
				fn(x)
			}
		}()
	}
	for _, x := range schema {
		ch <- x
	}
	close(ch)
	wg.Wait()
}

// stage1 runs the package's tests on one mutant.
func (r *runner) stage1(x *Result, b *binary, retry int) {
	x.Stage = 1
	if x.Applied != "" {
		r.applied(x, retry, b.base)
		return
	}
	st, detail, cpu := r.exec(b, x.ID, false, r.cfg.Timeout*time.Duration(retry))
	x.Status, x.Detail, x.CPU = st, detail, x.CPU+cpu
	r.addCPU(cpu)
	r.logf("   %s %s %s", st, x, detail)
}

// applied compiles a mutant the schemata binary does not hold on its own:
// the mutated operator written into the Apply tree, the package's test
// binary built and run (its CPU cap from base, the CPU time of the
// package's unmutated tests), the file restored.
func (r *runner) applied(x *Result, retry int, base time.Duration) {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	if r.cfg.Apply == "" {
		x.Status, x.Detail = NotViable, "not in the schemata binary ("+x.Applied+") and no tree to compile it in"
		return
	}
	restore, err := applyMutant(r.cfg.Apply, x.Mutant)
	if err != nil {
		x.Status, x.Detail = NotViable, err.Error()
		return
	}
	defer restore()
	b, cpu, err := r.build(r.cfg.Apply, "./"+filepath.Dir(x.File))
	r.addCPU(cpu)
	x.CPU += cpu
	if err != nil {
		x.Status, x.Detail = NotViable, firstLine(err.Error())
		r.logf("   %s %s (compiled on its own: %s)", x.Status, x, x.Detail)
		return
	}
	b.base = base
	st, detail, cpu := r.exec(b, 0, false, r.cfg.Timeout*time.Duration(retry))
	x.Status, x.Detail, x.CPU = st, detail, x.CPU+cpu
	r.addCPU(cpu)
	r.logf("   %s %s %s (compiled on its own: %s)", st, x, detail, x.Applied)
}

// applyMutant writes m's replacement operator into its file under tree
// and returns how to undo it.
func applyMutant(tree string, m *Mutant) (func(), error) {
	path := filepath.Join(tree, filepath.FromSlash(m.File))
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	if m.Line > len(lines) {
		return nil, fmt.Errorf("%s has no line %d", m.File, m.Line)
	}
	ln := lines[m.Line-1]
	op := m.Op.String()
	if c := m.Col - 1; c+len(op) > len(ln) || string(ln[c:c+len(op)]) != op {
		return nil, fmt.Errorf("%s: no %s at column %d", m.File, op, m.Col)
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i == m.Line-1 {
			out.Write(l[:m.Col-1])
			out.WriteString(m.Repl.String())
			out.Write(l[m.Col-1+len(op):])
			continue
		}
		out.Write(l)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return func() { _ = os.WriteFile(path, src, 0o644) }, nil
}

// binName names the test binary of pkg (./path) built in tree.
func binName(tree, pkg string) string {
	return filepath.Base(tree) + "-" + strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(pkg, "./")) + ".test"
}

// build compiles the test binary of pkg in tree (nil: pkg has no tests)
// and returns the CPU time the compile took.
func (r *runner) build(tree, pkg string) (*binary, time.Duration, error) {
	bin := filepath.Join(r.cfg.Work, "bin", binName(tree, pkg))
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-o", bin, pkg)
	cmd.Dir = tree
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return nil, cpu, fmt.Errorf("go test -c %s: %v\n%s", pkg, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, cpu, nil // no test files
	}
	return &binary{pkg: pkg, path: bin, dir: filepath.Join(tree, filepath.FromSlash(strings.TrimPrefix(pkg, "./")))}, cpu, nil
}

// baseline runs b without a mutant: it must pass, or every mutant would
// look killed.
func (r *runner) baseline(b *binary, short bool) error {
	if b == nil {
		return nil
	}
	st, detail, cpu := r.exec(b, 0, short, 4*max(r.cfg.Timeout, r.cfg.SuiteTimeout))
	if st != Lived {
		return fmt.Errorf("%s fails without a mutant (%s): %s", b.pkg, st, detail)
	}
	b.base = cpu
	r.logf("   %s passes without a mutant (%s CPU)", b.pkg, cpu.Round(10*time.Millisecond))
	return nil
}

// exec runs test binary b with mutant id selected: Lived if it passes.
// The test binary's own timeout is timeout; it is killed 30 s later, or
// once past the CPU cap (cpuCap) or the memory cap.
func (r *runner) exec(b *binary, id int, short bool, timeout time.Duration) (string, string, time.Duration) {
	args := []string{"-test.failfast", "-test.timeout=" + timeout.String()}
	if short {
		args = append(args, "-test.short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.path, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", envID, id))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	cpuCap := r.cpuCap(b)
	over, err := r.runCapped(cmd, cpuCap)
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	switch over {
	case overMem:
		return Killed, r.oomDetail(), cpu
	case overCPU:
		return TimedOut, fmt.Sprintf("%s of %s (%d × the unmutated run's %s)", cpuPrefix, cpuCap.Round(10*time.Millisecond),
			r.cfg.CPUCap, b.base.Round(10*time.Millisecond)), cpu
	}
	switch {
	case err == nil:
		return Lived, "", cpu
	case ctx.Err() != nil || bytes.Contains(out.b, []byte("panic: test timed out")):
		return TimedOut, "after " + timeout.String(), cpu
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return Killed, err.Error(), cpu
	}
	return Killed, failure(out.b), cpu
}

// cpuCap is the CPU time a mutant's run of b may use (0: no cap): cfg.CPUCap
// times b's unmutated run's, at least cfg.CPUMin. The unmutated runs
// themselves (b.base still 0) have none.
func (r *runner) cpuCap(b *binary) time.Duration {
	if r.cfg.CPUCap <= 0 || b.base == 0 {
		return 0
	}
	return max(r.cfg.CPUMin, time.Duration(r.cfg.CPUCap)*b.base)
}

// Which cap stopped a run.
const (
	overNone = iota
	overMem
	overCPU
)

// runCapped runs cmd (the leader of its process group) and watches its
// resident memory and CPU time every memPoll: past cfg.MemCap or cpuCap
// the group is killed, so that a mutant allocating without bound dies in
// seconds instead of taking the machine's memory, and one looping for ever
// after the CPU time its tests need, however loaded the machine (a wall
// clock timeout comes later the more loaded it is). It reports which cap
// killed it. The resident set, not the address space, is watched:
// statemachine's tests allocate 2 GiB slices they never touch
// (TestMutantLongestMessage).
func (r *runner) runCapped(cmd *exec.Cmd, cpuCap time.Duration) (int, error) {
	if err := cmd.Start(); err != nil {
		return overNone, err
	}
	if r.cfg.MemCap == 0 && cpuCap == 0 {
		return overNone, cmd.Wait()
	}
	done := make(chan struct{})
	over := make(chan int, 1)
	go func() {
		t := time.NewTicker(memPoll)
		defer t.Stop()
		pid := cmd.Process.Pid
		for {
			select {
			case <-done:
				over <- overNone
				return
			case <-t.C:
				why := overNone
				if n, err := residentBytes(pid); err == nil && r.cfg.MemCap != 0 && n > r.cfg.MemCap {
					why = overMem
				} else if c, err := cpuTime(pid); err == nil && cpuCap != 0 && c > cpuCap {
					why = overCPU
				}
				if why != overNone {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
					over <- why
					return
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return <-over, err
}

// memPoll is how often runCapped reads a test binary's resident memory:
// at ~15 us per fresh 4 KiB page a runaway grows at most ~30 MB between
// two looks.
const memPoll = 100 * time.Millisecond

// oomDetail is the Detail of a mutant the memory cap killed.
func (r *runner) oomDetail() string {
	return fmt.Sprintf("%s (%d MiB resident)", oomPrefix, r.cfg.MemCap>>20)
}

// oomPrefix begins the Detail of every mutant the memory cap killed.
const oomPrefix = "out of memory: killed over the cap"

// cpuPrefix is in the Detail of every mutant the CPU cap stopped.
const cpuPrefix = "past the CPU cap"

// failure is the first failing test's line, else the output's last line.
func failure(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL") {
			return strings.TrimSpace(l)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[len(lines)-1]
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, ".go:") {
			return strings.TrimSpace(l)
		}
	}
	return strings.SplitN(s, "\n", 2)[0]
}

// capped keeps the first 1 MiB of a test binary's output.
type capped struct{ b []byte }

func (c *capped) Write(p []byte) (int, error) {
	if room := 1<<20 - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (r *runner) logf(format string, a ...any) {
	if r.cfg.Log == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.cfg.Log, format+"\n", a...)
}

// stage2 runs the rest of the suite (-short) on each survivor of stage 1
// that the allowlist does not name: the suite's test binaries are built
// once from the rewritten tree, so they hold every mutant too.
func (r *runner) stage2(res []*Result) error {
	keep := func(x *Result) bool {
		_, allowed := r.cfg.Allow[x.Key()]
		return !x.Carried && x.Status == Lived && !allowed
	}
	n := 0
	for _, x := range res {
		if keep(x) {
			n++
		}
	}
	if n == 0 {
		r.logf("== stage 2: no survivor left for %s", strings.Join(r.cfg.Suite, " "))
		return nil
	}
	bins, err := r.suiteBinaries()
	if err != nil {
		return err
	}
	r.logf("== stage 2: %d survivors, %d test binaries of %s (-short, %s each)", n, len(bins), strings.Join(r.cfg.Suite, " "), r.cfg.SuiteTimeout)
	r.each(res, keep, func(x *Result, retry int) {
		x.Stage = 2
		if x.Applied != "" {
			r.appliedSuite(x, retry)
			return
		}
		x.Status, x.Detail = Lived, ""
		for _, b := range bins {
			st, detail, cpu := r.exec(b, x.ID, true, r.cfg.SuiteTimeout*time.Duration(retry))
			x.CPU += cpu
			r.addCPU(cpu)
			if st != Lived {
				x.Status, x.Detail = st, b.pkg+": "+detail
				break
			}
		}
		r.logf("   %s %s %s", x.Status, x, x.Detail)
	})
	return nil
}

// suiteBinaries builds and checks the suite's test binaries, cheapest
// first.
func (r *runner) suiteBinaries() ([]*binary, error) {
	cmd := exec.Command("go", append([]string{"list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}"}, r.cfg.Suite...)...)
	cmd.Dir = r.cfg.Src
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %v: %v", r.cfg.Suite, err)
	}
	mod, err := exec.Command("go", "-C", r.cfg.Src, "list", "-m").Output()
	if err != nil {
		return nil, err
	}
	var bins []*binary
	for _, p := range strings.Fields(string(out)) {
		rel := "." + strings.TrimPrefix(p, strings.TrimSpace(string(mod)))
		b, cpu, err := r.build(r.cfg.Src, rel)
		r.buildCPU += cpu
		if err != nil {
			return nil, err
		}
		if err := r.baseline(b, true); err != nil {
			return nil, err
		}
		if b != nil {
			bins = append(bins, b)
		}
	}
	sort.SliceStable(bins, func(i, j int) bool { return bins[i].base < bins[j].base })
	return bins, nil
}

// appliedSuite runs the suite on a mutant compiled on its own, with go
// test in the Apply tree.
func (r *runner) appliedSuite(x *Result, retry int) {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	restore, err := applyMutant(r.cfg.Apply, x.Mutant)
	if err != nil {
		x.Status, x.Detail = NotViable, err.Error()
		return
	}
	defer restore()
	timeout := r.cfg.SuiteTimeout * time.Duration(retry)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Not under the memory cap: runCapped watches one process, here the
	// go command, not the test binaries it starts.
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-short", "-count=1", "-failfast", "-vet=off"}, r.cfg.Suite...)...)
	cmd.Dir = r.cfg.Apply
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	switch {
	case err == nil:
		x.Status, x.Detail = Lived, ""
	case ctx.Err() != nil:
		x.Status, x.Detail = TimedOut, "after "+timeout.String()
	default:
		x.Status, x.Detail = Killed, failure(out.b)
	}
	r.logf("   %s %s %s (compiled on its own)", x.Status, x, x.Detail)
}
