//go:build tlc

package modelcheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The TLA+ side. These tests need TLC: set MRC_TLA2TOOLS to the path of
// tla2tools.jar (and have java on PATH). No package registry serves TLC, so
// CI cannot have it and these tests skip there; they deliberately do not
// use internal/testenv, whose MRC_REQUIRE_TOOLS=1 would turn the skip into
// a failure.

// tlaTools returns the tla2tools.jar to run. The TLC tests build only with
// -tags tlc (no package registry serves TLC, so CI cannot run them); asked
// for, they fail without it.
func tlaTools(t *testing.T) string {
	t.Helper()
	jar := os.Getenv("MRC_TLA2TOOLS")
	if jar == "" {
		t.Fatal("-tags tlc needs MRC_TLA2TOOLS set to a tla2tools.jar " +
			"(no package registry serves TLC; build it from github.com/tlaplus/tlaplus)")
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("MRC_TLA2TOOLS=%s: %v", jar, err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatalf("MRC_TLA2TOOLS is set but java is not on PATH: %v", err)
	}
	return jar
}

// tlaWorkdir copies tla/ (or the directory MRC_TLA_DIR names: modules,
// configurations, traces) and this package's traces (as
// traces/go_<name>.ndjson) into a temporary directory for TLC, so that
// TLC's own files never land in the repository.
func tlaWorkdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyGlob := func(pattern, dstDir, prefix string) {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dstDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dstDir, prefix+filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := "../tla"
	if d := os.Getenv("MRC_TLA_DIR"); d != "" {
		src = d // another copy of tla/, e.g. with a proposed model change
	}
	copyGlob(filepath.Join(src, "*.tla"), dir, "")
	copyGlob(filepath.Join(src, "*.cfg"), dir, "")
	copyGlob(filepath.Join(src, "traces/*.ndjson"), filepath.Join(dir, "traces"), "")
	copyGlob(filepath.Join(traceDir, "*.ndjson"), filepath.Join(dir, "traces"), "go_")
	return dir
}

// tlcOutcome is what one TLC run ended with.
type tlcOutcome struct {
	ok        bool   // "No error has been found"
	invariant string // an invariant or action property reported violated
	temporal  bool   // temporal properties violated
	deadlock  bool
	out       string
	elapsed   time.Duration
	cpu       time.Duration // user + system CPU time of the TLC process
}

func (o tlcOutcome) String() string {
	switch {
	case o.ok:
		return "no error"
	case o.deadlock:
		return "deadlock"
	case o.temporal:
		return "temporal property " + o.invariant + " violated"
	case o.invariant != "":
		return o.invariant + " violated"
	}
	return "TLC failed"
}

var (
	reInvariant = regexp.MustCompile(`Error: (?:Invariant|Action property) (\w+) is violated`)
	reTemporal  = regexp.MustCompile(`Error: Temporal propert(?:y (\w+) was|ies were) violated`)
	reExpected  = regexp.MustCompile(`Expected:\s*([^.]*)`)
	reStates    = regexp.MustCompile(`(\d+) states generated, (\d+) distinct states found`)
	reDepth     = regexp.MustCompile(`depth of the complete state graph search is (\d+)`)
)

// stats is TLC's closing count of states generated and distinct, and the
// search depth, for the README tables ("" when TLC printed none).
func (o tlcOutcome) stats() string {
	m := reStates.FindAllStringSubmatch(o.out, -1)
	if m == nil {
		return ""
	}
	last := m[len(m)-1]
	s := last[1] + " generated, " + last[2] + " distinct"
	if d := reDepth.FindStringSubmatch(o.out); d != nil {
		s += ", depth " + d[1]
	}
	return s
}

func tlcTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("MRC_TLC_TIMEOUT")); err == nil {
		return d
	}
	return 15 * time.Minute
}

// runTLC model-checks module under cfg in dir.
func runTLC(t *testing.T, jar, dir, module, cfg string, args ...string) tlcOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tlcTimeout())
	defer cancel()
	argv := append([]string{"-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-metadir", t.TempDir(), "-config", cfg}, args...)
	argv = append(argv, module)
	cmd := exec.CommandContext(ctx, "java", argv...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	_ = cmd.Run() // TLC exits non-zero on a violation; the output says which
	o := tlcOutcome{out: buf.String(), elapsed: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		o.cpu = ps.UserTime() + ps.SystemTime()
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: TLC did not finish in %v (MRC_TLC_TIMEOUT)", cfg, tlcTimeout())
	}
	switch {
	case strings.Contains(o.out, "No error has been found"):
		o.ok = true
	case strings.Contains(o.out, "Error: Deadlock reached"):
		o.deadlock = true
	case reTemporal.MatchString(o.out):
		o.temporal = true
		o.invariant = reTemporal.FindStringSubmatch(o.out)[1]
	default:
		if m := reInvariant.FindStringSubmatch(o.out); m != nil {
			o.invariant = m[1]
		}
	}
	return o
}

// expectation reads the "Expected: ..." sentence of a .cfg header.
func expectation(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var head []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, `\*`) {
			break
		}
		head = append(head, strings.TrimSpace(strings.TrimPrefix(l, `\*`)))
	}
	m := reExpected.FindStringSubmatch(strings.Join(head, " "))
	if m == nil {
		t.Fatalf("%s has no \"Expected:\" line", path)
	}
	return strings.TrimSpace(m[1])
}

// TestTLCModels model-checks every tla/MRC_*.cfg with TLC and compares the
// outcome with the configuration's "Expected:" line (MRC_medium.cfg and
// MRC_large.cfg only with MRC_MC_LARGE=1).
func TestTLCModels(t *testing.T) {
	jar := tlaTools(t)
	dir := tlaWorkdir(t)
	cfgs, _ := filepath.Glob(filepath.Join(dir, "MRC_*.cfg"))
	sort.Strings(cfgs)
	for _, cfg := range cfgs {
		name := filepath.Base(cfg)
		if (strings.Contains(name, "large") || strings.Contains(name, "medium") || strings.Contains(name, "big")) && !largeRun() {
			t.Logf("%s not run: MRC_medium, MRC_big and MRC_large take TLC tens of minutes; set MRC_MC_LARGE=1", name)
			continue
		}
		t.Run(strings.TrimSuffix(name, ".cfg"), func(t *testing.T) {
			want := expectation(t, cfg)
			o := runTLC(t, jar, dir, "MRC.tla", name, "-workers", "2")
			t.Logf("%s: expected %q, TLC: %s (%v; %s)", name, want, o, o.elapsed.Round(time.Second), o.stats())
			lw := strings.ToLower(want)
			var good bool
			switch {
			case strings.HasPrefix(lw, "no error"):
				good = o.ok
			case strings.HasPrefix(lw, "deadlock"):
				good = o.deadlock
			case strings.HasSuffix(lw, "violated"):
				prop := strings.Fields(want)[0]
				good = o.invariant == prop || (o.temporal && o.invariant == "")
			default:
				t.Fatalf("cannot read the expectation %q", want)
			}
			if !good {
				t.Errorf("%s: expected %s, TLC reported %s:\n%s", name, want, o, tail(o.out, 40))
			}
		})
	}
}

// traceCfg writes a trace-validation configuration for trace (a file under
// traces/) from template, with the constants in set replaced, and with the
// acceptance check as INVARIANT TraceNotComplete: TLC reports that
// invariant violated exactly when some behaviour of the trace spec matches
// the whole trace (this works with any TLC, unlike _POSSIBLE).
func traceCfg(t *testing.T, dir, template, name, trace string, set map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, template))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, `\*`):
			continue
		case len(f) > 0 && (f[0] == "_POSSIBLE" || f[0] == "PROPERTY" || f[0] == "PROPERTIES" || f[0] == "INVARIANT"):
			continue
		case len(f) >= 3 && f[1] == "=" && f[0] == "TraceFile":
			l = fmt.Sprintf("    TraceFile = %q", "traces/"+trace)
		case len(f) >= 3 && f[1] == "=" && set[f[0]] != "":
			l = fmt.Sprintf("    %s = %s", f[0], set[f[0]])
		}
		out = append(out, l)
	}
	out = append(out, "INVARIANT TraceNotComplete")
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// accepted runs a trace validation configuration made by traceCfg.
func accepted(t *testing.T, jar, dir, cfg string) (bool, tlcOutcome) {
	t.Helper()
	o := runTLC(t, jar, dir, "MRCTrace.tla", cfg, "-workers", "1")
	switch {
	case o.invariant == "TraceNotComplete":
		return true, o
	case o.ok:
		return false, o
	}
	t.Fatalf("%s: TLC neither matched nor exhausted the trace (%s):\n%s", cfg, o, tail(o.out, 40))
	return false, o
}

// traceConsts are the MRC constants of a Go run for the trace spec.
func traceConsts(c Config, bugs string) map[string]string {
	return map[string]string{
		"MPR": fmt.Sprint(c.MPR), "RetryLimit": fmt.Sprint(c.retryLimit()), "MaxWIMM": fmt.Sprint(c.MaxWIMM),
		"MaxWIMMDest": fmt.Sprint(c.MaxWIMMDest), "MinActive": fmt.Sprint(c.MinActive),
		"ProbeSuccesses": fmt.Sprint(c.ProbeSuccesses), "AlwaysSkipAfter": fmt.Sprint(c.AlwaysSkipAfter),
		"ReorderGuard": fmt.Sprint(c.reorderGuard()),
		"Bugs":         bugs,
	}
}

// TestTLCTraces validates traces with tla/MRCTrace.tla: the scenario
// traces of testdata/traces must be accepted by the correct model; each
// seeded-bug counterexample must be rejected by it and accepted by the
// model with the same bug. It also runs tla/MRCTrace_*.cfg against their
// "Expected:" lines.
func TestTLCTraces(t *testing.T) {
	jar := tlaTools(t)
	dir := tlaWorkdir(t)
	const template = "MRCTrace_basic.cfg"
	if _, err := os.Stat(filepath.Join(dir, template)); err != nil {
		t.Fatalf("tla/%s is the template of the generated trace configurations: %v", template, err)
	}
	for _, s := range Scenarios() {
		t.Run("go/"+s.Name, func(t *testing.T) {
			cfg := traceCfg(t, dir, template, "go_"+s.Name+".cfg", "go_"+s.Name+".ndjson", traceConsts(s.Config, "{}"))
			ok, o := accepted(t, jar, dir, cfg)
			t.Logf("%s: accepted=%v (%v)", s.Name, ok, o.elapsed.Round(time.Millisecond))
			if !ok {
				t.Errorf("the correct model rejects the trace of scenario %s (%s)", s.Name, s.Doc)
			}
		})
	}
	for _, b := range seededBugs {
		t.Run("go/bug_"+b.file, func(t *testing.T) {
			c := faultHunt(b.fault)
			trace := "go_bug_" + b.file + ".ndjson"
			rej := traceCfg(t, dir, template, "go_bug_"+b.file+".cfg", trace, traceConsts(c, "{}"))
			acc := traceCfg(t, dir, template, "go_bug_"+b.file+"_bug.cfg", trace, traceConsts(c, fmt.Sprintf("{%q}", b.tla)))
			if ok, _ := accepted(t, jar, dir, rej); ok {
				t.Errorf("the correct model accepts the counterexample of seeded bug %s", b.tla)
			}
			if ok, _ := accepted(t, jar, dir, acc); !ok {
				t.Errorf("the model with Bugs = {%q} rejects the counterexample of that bug", b.tla)
			}
		})
	}
	cfgs, _ := filepath.Glob(filepath.Join(dir, "MRCTrace_*.cfg"))
	sort.Strings(cfgs)
	for _, cfg := range cfgs {
		name := filepath.Base(cfg)
		t.Run("tla/"+strings.TrimSuffix(name, ".cfg"), func(t *testing.T) {
			want := strings.ToLower(expectation(t, cfg))
			b, _ := os.ReadFile(cfg)
			var trace string
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) >= 3 && f[0] == "TraceFile" {
					trace = strings.TrimPrefix(strings.Trim(f[2], `"`), "traces/")
				}
			}
			gen := traceCfg(t, dir, name, "gen_"+name, trace, nil)
			ok, _ := accepted(t, jar, dir, gen)
			if ok != strings.HasPrefix(want, "accepted") {
				t.Errorf("%s: expected %q, accepted=%v", name, want, ok)
			}
		})
	}
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// reorderGuard is reorder_guard in packets: the configured one, else Go's
// default without congestion control, the MPR window (LR-RTX-4, LR-SM-1).
func (c *Config) reorderGuard() int {
	if c.ReorderThreshold > 0 {
		return c.ReorderThreshold
	}
	return c.MPR
}
