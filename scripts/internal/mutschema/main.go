// Command mutschema is scripts/mutate.sh's mutant-schemata runner: it
// compiles every mutant of a package into one test binary and runs that
// binary once per mutant, instead of compiling the package once per mutant.
//
//	mutschema [flags] file.go ...   (from the module root)
//
// The mutants are gremlins v0.6.0's default ones (ARITHMETIC_BASE,
// CONDITIONALS_BOUNDARY, CONDITIONALS_NEGATION, INCREMENT_DECREMENT,
// INVERT_NEGATIVES), named file:line:col TYPE as gremlins and
// scripts/mutate-allow.txt name them. In a private copy of the tree each
// expression holding a mutated operator becomes a function literal, called
// in place, whose switch on the number in $MUTSCHEMA_ID takes the mutated
// form of the selected mutant and the original otherwise; x++ becomes
// x += a step that is -1 for its mutant. A mutant a closure cannot hold
// (in a constant declaration, an untyped constant, a type the file cannot
// name, or a closure that does not type-check) is compiled on its own in a
// second copy.
//
// Stage 1 runs the package's test binary per mutant (-test.failfast, the
// -timeout each); stage 2 runs each survivor against the test binaries of
// the -suite packages, built from the same rewritten tree so they hold
// every mutant too (-test.short, -suite-timeout per binary, cheapest
// first). A mutant that times out runs once more with -retry × the timeout
// and is reported apart; a timeout counts as killed. Every test binary is
// first run without a mutant and must pass. Every test binary run of a
// mutant has its resident memory watched (-mem): past the cap it is
// killed, so that a mutant that allocates without bound dies in seconds;
// it counts as killed and the report lists it apart. Its CPU time is
// watched too (-cpu, a multiple of the unmutated run's): past the cap it
// is killed and counts as timed out, without the second run a wall clock
// timeout gets, since its CPU time does not depend on the machine's load. The report gives per-file
// efficacy, killed / (killed + lived), leaving out the mutants the
// allowlist names as equivalent, then the mutants still alive.
//
// results.tsv in the work directory is rewritten after every verdict.
// -resume DIR re-runs only the survivors of the run in DIR (after adding
// tests) and the mutants it had not decided (a run stopped part way),
// carrying its other verdicts; it refuses if a mutated file changed since.
// DIR may be the work directory itself.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if err := cli(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutschema:", err)
		os.Exit(1)
	}
}

func cli(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("mutschema", flag.ContinueOnError)
	work := fs.String("work", "", "work directory (default: a new one under $TMPDIR)")
	suite := fs.String("suite", "./modelcheck/ ./fabric/... ./conformance/active/... ./peer/...", "stage 2 packages (\"\": stage 1 only)")
	jobs := fs.Int("jobs", 2, "mutants run at a time")
	timeout := fs.Duration("timeout", 60*time.Second, "stage 1 timeout per mutant")
	suiteTimeout := fs.Duration("suite-timeout", 300*time.Second, "stage 2 timeout per mutant and test binary")
	memCap := fs.Int("mem", 3072, "resident memory of each test binary run of a mutant, MiB (0: no cap)")
	retry := fs.Int("retry", 3, "a mutant timed out by the wall clock runs once more with this many times the timeout (1: not again)")
	cpuCap := fs.Int("cpu", 10, "CPU time of each test binary run of a mutant, as a multiple of the unmutated run's, at least 10 s (0: no cap)")
	allowPath := fs.String("allow", "scripts/mutate-allow.txt", "the equivalent mutants")
	resume := fs.String("resume", "", "an earlier run's work directory: re-run its survivors and undecided mutants only")
	list := fs.Bool("list", false, "list the mutants and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return fmt.Errorf("no files given")
	}
	if *list {
		ms, err := listMutants(".", files, 1)
		for _, m := range ms {
			fmt.Fprintf(w, "%d\t%s\t%s\n", m.ID, m.Key(), m.Text)
		}
		return err
	}
	allow, err := readAllow(*allowPath)
	if err != nil {
		return err
	}
	cfg := config{Files: files, Suite: strings.Fields(*suite), Jobs: *jobs, Timeout: *timeout,
		SuiteTimeout: *suiteTimeout, Retry: *retry, MemCap: uint64(max(0, *memCap)) << 20,
		CPUCap: *cpuCap, CPUMin: 10 * time.Second,
		Allow: allow, Log: w}
	if cfg.Work, err = workDir(*work); err != nil {
		return err
	}
	if *resume != "" {
		if cfg.Resume, err = resumeFrom(*resume, files); err != nil {
			return err
		}
	}
	if err := prepare(&cfg); err != nil {
		return err
	}
	fmt.Fprintf(w, "mutschema: work directory %s\n", cfg.Work)
	results := filepath.Join(cfg.Work, "results.tsv")
	cfg.Checkpoint = func(res []*Result) {
		if err := saveResults(results, res); err != nil {
			fmt.Fprintln(w, "mutschema: results not saved:", err)
		}
	}
	o, err := run(cfg)
	if err != nil {
		return err
	}
	if err := saveResults(results, o.Results); err != nil {
		return err
	}
	report(w, o, allow)
	return nil
}

// saveResults writes results.tsv, through a temporary file renamed over
// it so that a run stopped while writing leaves the last whole one (it is
// written after every verdict, so that a stopped run can be resumed).
func saveResults(path string, res []*Result) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := writeResults(f, res); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func workDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "mrc-mutschema.")
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// prepare copies the tree (git's files, tracked or not ignored) twice: src
// for the schemata, apply for the mutants compiled one at a time; and the
// mutated files as they are, for -resume.
func prepare(cfg *config) error {
	cfg.Src, cfg.Apply = filepath.Join(cfg.Work, "src"), filepath.Join(cfg.Work, "apply")
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	var names []string
	for _, n := range strings.Split(string(out), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	for _, dst := range []string{cfg.Src, cfg.Apply} {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if err := copyFiles(".", dst, names); err != nil {
			return err
		}
	}
	return copyFiles(".", filepath.Join(cfg.Work, "orig"), cfg.Files)
}

func copyFiles(from, to string, names []string) error {
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(from, n))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in git
		}
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			return err
		}
		dst := filepath.Join(to, n)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// resumeFrom reads the results of the run in dir, whose mutated files
// must be today's.
func resumeFrom(dir string, files []string) (map[string]*Result, error) {
	for _, f := range files {
		was, err := os.ReadFile(filepath.Join(dir, "orig", f))
		if err != nil {
			return nil, fmt.Errorf("-resume: %s was not mutated in %s", f, dir)
		}
		now, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if string(was) != string(now) {
			return nil, fmt.Errorf("-resume: %s changed since the run in %s", f, dir)
		}
	}
	return readResults(filepath.Join(dir, "results.tsv"))
}
