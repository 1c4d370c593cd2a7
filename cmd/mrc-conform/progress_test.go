package main

import (
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
)

var progressLine = regexp.MustCompile(`^\[ *(\d+)/(\d+)\] (MRC-[A-Z0-9-]+) ([A-Z-]+) \d+\.\d\ds$`)

// withTerminal runs f as if standard error were a terminal (yes) or not.
func withTerminal(t *testing.T, yes bool) {
	t.Helper()
	old := runIsTerminal
	runIsTerminal = func(io.Writer) bool { return yes }
	t.Cleanup(func() { runIsTerminal = old })
}

// progressCases parses stderr's progress lines and checks their
// numbering: 1 to total, in order, each once.
func progressCases(t *testing.T, stderr string) []string {
	t.Helper()
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		m := progressLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if n != len(ids)+1 {
			t.Errorf("progress line %q: want position %d", l, len(ids)+1)
		}
		ids = append(ids, m[3])
	}
	return ids
}

// TestRunProgressOnTerminal: on a terminal, run prints one line per case
// as it ends, on standard error, "[n/total] ID VERDICT TIME", the wire
// case (whose verdict covers the run) last; the report on stdout is
// unchanged.
func TestRunProgressOnTerminal(t *testing.T) {
	withTerminal(t, true)
	out, errs, code := run(t, "run", "--cases", "MRC-LR-RTX-*,MRC-WIRE-IUT-101")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	ids := progressCases(t, errs)
	if len(ids) != 4 || ids[3] != "MRC-WIRE-IUT-101" || !strings.HasPrefix(ids[0], "MRC-LR-RTX-") {
		t.Errorf("progress cases %v; want the three MRC-LR-RTX cases then MRC-WIRE-IUT-101\nstderr:\n%s", ids, errs)
	}
	if !strings.Contains(errs, "[4/4] MRC-WIRE-IUT-101 PASS ") {
		t.Errorf("stderr lacks the final line:\n%s", errs)
	}
	if strings.Contains(out, "[1/4]") {
		t.Errorf("progress on stdout:\n%s", out)
	}
}

// TestRunQuietOffTerminal: off a terminal run prints no progress unless
// asked with --progress; --progress=false silences a terminal.
func TestRunQuietOffTerminal(t *testing.T) {
	for _, c := range []struct {
		terminal bool
		flag     string
		want     int
	}{
		{false, "", 0},
		{false, "--progress", 1},
		{true, "--progress=false", 0},
	} {
		withTerminal(t, c.terminal)
		args := []string{"run", "--cases", "MRC-LR-RTX-101"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		_, errs, code := run(t, args...)
		if got := len(progressCases(t, errs)); code != 0 || got != c.want {
			t.Errorf("terminal %v, %q: exit %d, %d progress lines, want %d\nstderr:\n%s", c.terminal, c.flag, code, got, c.want, errs)
		}
	}
}

// TestRunOutputFileSummaryOnly: with -o FILE, the file holds the whole
// report and standard output only the summary, as -h says.
func TestRunOutputFileSummaryOnly(t *testing.T) {
	file := t.TempDir() + "/report.txt"
	out, errs, code := run(t, "run", "--cases", "MRC-LR-RTX-*", "-o", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if strings.Contains(out, "CASE") || strings.Contains(out, "MRC-LR-RTX-102 ") || !strings.Contains(out, "RESULT PASS") ||
		!strings.HasSuffix(out, "report in "+file+"\n") {
		t.Errorf("stdout is not the summary alone:\n%s", out)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), "MRC-LR-RTX-102 ") || !strings.Contains(string(b), "RESULT PASS") {
		t.Errorf("report file (%v):\n%s", err, b)
	}
}

// TestRunVerboseMeansReasons: -v means what it means in judge (every
// case's reason); the step log is --log.
func TestRunVerboseMeansReasons(t *testing.T) {
	withTerminal(t, false)
	plain, _, _ := run(t, "run", "--cases", "MRC-LR-RTX-101")
	verbose, verrs, code := run(t, "run", "--cases", "MRC-LR-RTX-101", "-v")
	if code != 0 || verrs != "" || len(verbose) <= len(plain) {
		t.Errorf("-v: exit %d, stderr %q; stdout not longer than without -v:\n%s", code, verrs, verbose)
	}
	_, logged, code := run(t, "run", "--cases", "MRC-LR-RTX-101", "--log")
	if code != 0 || !strings.Contains(logged, "MRC-LR-RTX-101: ") {
		t.Errorf("--log: exit %d, stderr lacks the step log:\n%s", code, logged)
	}
	if _, errs, code := run(t, "run", "--all"); code != 2 || !strings.HasPrefix(errs, "mrc-conform run: flag provided but not defined: -all") {
		t.Errorf("--all (now -v): exit %d, stderr %q", code, errs)
	}
}

// TestRunProgressOnRealPTY: under a real pseudo-terminal (script(1))
// the mrc-conform process prints the progress lines; through a pipe it
// does not (TestRunQuietOffTerminal covers the pipe with the process's
// own detection replaced; this one checks the detection itself).
func TestRunProgressOnRealPTY(t *testing.T) {
	script := testenv.LookPath(t, "script")
	args := "run --cases MRC-LR-RTX-101,MRC-LR-RTX-102"
	cmd := exec.Command(script, "-qec", os.Args[0]+" "+args, "/dev/null")
	cmd.Env = append(os.Environ(), "MRC_CONFORM_AS_MAIN=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tty := strings.ReplaceAll(string(out), "\r\n", "\n")
	if !strings.Contains(tty, "[1/2] MRC-LR-RTX-101 PASS ") || !strings.Contains(tty, "[2/2] MRC-LR-RTX-102 PASS ") {
		t.Errorf("no progress on the terminal:\n%s", tty)
	}
	piped := mrcConform(t, time.Minute, strings.Fields(args)...)
	if piped.code != 0 || strings.Contains(piped.stderr, "[1/2]") {
		t.Errorf("through a pipe: exit %d, stderr %q", piped.code, piped.stderr)
	}
}

// TestIsTerminalNotDevNull: /dev/null, where scripts send standard error,
// is a character device but no terminal; a pipe and a file are neither.
// Progress goes to a terminal only.
func TestIsTerminalNotDevNull(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true; want false", os.DevNull)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("isTerminal(pipe) = true; want false")
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("isTerminal(file) = true; want false")
	}
}
