package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// readAllow reads scripts/mutate-allow.txt: "file:line:col TYPE # why",
// one equivalent mutant a line.
func readAllow(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		ln := strings.TrimSpace(sc.Text())
		if ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		key, why, _ := strings.Cut(ln, "#")
		if len(strings.Fields(key)) != 2 || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s:%d: want \"file:line:col TYPE # why\"", path, n)
		}
		out[strings.Join(strings.Fields(key), " ")] = strings.TrimSpace(why)
	}
	return out, sc.Err()
}

// tsvHeader names the columns of results.tsv.
const tsvHeader = "id\tfile\tline\tcol\ttype\tstage\tstatus\tretried\tcpu_s\tapplied\tdetail"

// writeResults writes one row a mutant.
func writeResults(w io.Writer, res []*Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, tsvHeader)
	clean := strings.NewReplacer("\t", " ", "\n", " ")
	for _, x := range res {
		fmt.Fprintf(bw, "%d\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%.2f\t%s\t%s\n", x.ID, x.File, x.Line, x.Col, x.Type,
			x.Stage, x.Status, x.Retried, x.CPU.Seconds(), clean.Replace(x.Applied), clean.Replace(x.Detail))
	}
	return bw.Flush()
}

// readResults reads an earlier run's results.tsv by mutant key.
func readResults(path string) (map[string]*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*Result{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		if len(p) != len(strings.Split(tsvHeader, "\t")) || p[0] == "id" {
			continue
		}
		line, _ := strconv.Atoi(p[2])
		col, _ := strconv.Atoi(p[3])
		m := &Mutant{File: p[1], Line: line, Col: col, Type: Type(p[4])}
		out[m.Key()] = &Result{Mutant: m, Status: p[6], Detail: p[10]}
	}
	return out, sc.Err()
}

// tally is one file's counts.
type tally struct {
	mutants, killed, timedOut, lived, allowed, notViable, applied int
	stage                                                         [3]int // killed by stage: 0 carried, 1, 2
}

func (t *tally) efficacy() string {
	if t.killed+t.lived == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(t.killed)/float64(t.killed+t.lived))
}

// report prints the per-file table, the timed-out mutants, the mutants
// still alive and the allowlist entries that no longer hold.
func report(w io.Writer, o *outcome, allow map[string]string) {
	per := map[string]*tally{}
	var files []string
	for _, x := range o.Results {
		t := per[x.File]
		if t == nil {
			t = &tally{}
			per[x.File] = t
			files = append(files, x.File)
		}
		t.count(x)
	}
	fmt.Fprintln(w, "\n| file | mutants | killed (of them timed out) | lived | allowlisted | not viable | efficacy |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, f := range files {
		t := per[f]
		how := fmt.Sprintf("%d in stage 1, %d in stage 2", t.stage[1], t.stage[2])
		if t.stage[0] > 0 {
			how += fmt.Sprintf(", %d carried", t.stage[0])
		}
		fmt.Fprintf(w, "| `%s` | %d | %d (%d): %s | %d | %d | %d | %s |\n", f, t.mutants, t.killed, t.timedOut, how,
			t.lived, t.allowed, t.notViable, t.efficacy())
	}
	fmt.Fprintf(w, "\nCPU time: %s building the schemata test binaries, %s running the mutants.\n",
		o.BuildCPU.Round(time.Second), o.RunCPU.Round(time.Second))
	section(w, "Timed out (counted as killed: past the CPU cap, or past the wall clock timeout twice, the second time with the longer timeout):", o.Results,
		func(x *Result) bool { return x.Status == TimedOut })
	section(w, "Timed out once, then decided with the longer timeout:", o.Results,
		func(x *Result) bool { return x.Retried == TimedOut && x.Status != TimedOut })
	section(w, "Killed by the memory cap (resident memory past -mem):", o.Results,
		func(x *Result) bool { return x.Status == Killed && strings.HasPrefix(x.Detail, oomPrefix) })
	section(w, "Still alive (kill each with a test citing its requirement, or allowlist it with why it is equivalent):",
		o.Results, func(x *Result) bool { return x.Status == Lived && x.Allowed == "" })
	for _, x := range o.Results {
		if why, ok := allow[x.Key()]; ok && (x.Status == Killed || x.Status == TimedOut) {
			fmt.Fprintf(w, "\nallowlisted but %s (remove the entry): %s # %s\n", x.Status, x.Key(), why)
		}
	}
}

func (t *tally) count(x *Result) {
	t.mutants++
	if x.Applied != "" {
		t.applied++
	}
	switch {
	case x.Status == Killed || x.Status == TimedOut:
		t.killed++
		t.stage[x.Stage]++
		if x.Status == TimedOut {
			t.timedOut++
		}
	case x.Status == Lived && x.Allowed != "":
		t.allowed++
	case x.Status == Lived:
		t.lived++
	default:
		t.notViable++
	}
}

func section(w io.Writer, title string, res []*Result, keep func(*Result) bool) {
	first := true
	for _, x := range res {
		if !keep(x) {
			continue
		}
		if first {
			fmt.Fprintln(w, "\n"+title)
			first = false
		}
		fmt.Fprintf(w, "  %s %s  %s  [%s]\n", x.Key(), x.Status, x.Text, x.Detail)
	}
}
