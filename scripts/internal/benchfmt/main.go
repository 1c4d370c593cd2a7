// Command benchfmt is scripts/bench.sh's helper: it counts a capture's
// frames and time span, and renders the README's Performance section from
// the raw outputs bench.sh collected in a directory, between markers and
// with a checksum, so that a test can tell the section was made by the
// script and not edited by hand.
//
//	benchfmt count FILE           frames and span (seconds) of a capture
//	benchfmt free FILE            how many --jobs rounds in FILE (bench.sh's
//	                              jobs.txt) have a pair that reached 1.7x
//	benchfmt render DIR           the section, on standard output
//	benchfmt write DIR README     replace the section in README
//	benchfmt time [-fifo PRIO] [-pin] OUT CMD... [:: CMD...]
//	                              run the commands at once (under
//	                              SCHED_FIFO at PRIO; -pin: each on a CPU
//	                              of its own); write the wall time until
//	                              the last exited, their user and system
//	                              time and the largest peak RSS (KiB) to
//	                              OUT; exit with the first non-zero status
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openmrc/mrc/pcap"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "time" {
		out, o, argvs, err := timeArgs(os.Args[2:])
		code := 0
		if err == nil {
			code, err = timeCmds(out, o, argvs)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchfmt:", err)
			os.Exit(125)
		}
		os.Exit(code)
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchfmt:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	switch {
	case len(args) == 2 && args[0] == "count":
		n, span, err := count(args[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%d %d\n", n, span)
		return err
	case len(args) == 2 && args[0] == "free":
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		rounds, _ := parseJobs(strings.Split(string(b), "\n"))
		_, err = fmt.Fprintf(w, "%d\n", len(freeRounds(rounds)))
		return err
	case len(args) == 2 && args[0] == "render":
		s, err := render(args[1])
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, Seal(s))
		return err
	case len(args) == 3 && args[0] == "write":
		s, err := render(args[1])
		if err != nil {
			return err
		}
		old, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		out, err := Replace(string(old), Seal(s))
		if err != nil {
			return fmt.Errorf("%s: %w", args[2], err)
		}
		return os.WriteFile(args[2], []byte(out), 0o644)
	}
	return errors.New("usage: benchfmt count FILE | free FILE | render DIR | write DIR README | time [-fifo PRIO] [-pin] OUT CMD [ARG] [:: CMD [ARG]]")
}

// count returns a capture's frames and its time span in whole seconds,
// rounded up.
func count(path string) (frames int, span int64, err error) {
	r, err := pcap.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	var f pcap.Frame
	var lo, hi int64
	for {
		if err := r.Next(&f); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return frames, 0, err
		}
		t := f.Timestamp.UnixNano()
		if frames == 0 || t < lo {
			lo = t
		}
		hi = max(hi, t)
		frames++
	}
	return frames, (hi - lo + 999_999_999) / 1_000_000_000, nil
}

// readLines returns a raw output file's lines; a missing file is none.
func readLines(dir, name string) []string {
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}
