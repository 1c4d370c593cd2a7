// Command mrc-sim runs the white paper's resilience scenarios on the
// deterministic fabric simulator, with MRC and with the RC go-back-N
// baseline, and prints what happened.
//
//	mrc-sim table [-seed N]          all scenarios as a Markdown table
//	mrc-sim run -scenario NAME [-seed N] [-trace FILE] [-pcap FILE]
//	                                 one scenario, its checks and numbers;
//	                                 the MRC run's NDJSON trace and pcapng
//	mrc-sim list                     the scenario names
//	mrc-sim capture -dir DIR [-scenario NAME] [-seed N]
//	                                 short runs with one impairment each,
//	                                 written as DIR/NAME.pcapng (the
//	                                 corpus in pcap/testdata/scenarios)
//
// Every run is a function of its seed: the same seed prints the same
// numbers and writes the same trace and capture, byte for byte.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/fabric/scenario"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mrc-sim:", err)
		os.Exit(2)
	}
}

var errUsage = errors.New("usage: mrc-sim table [-seed N] | run -scenario NAME [-seed N] [-trace FILE] [-pcap FILE] | list | capture -dir DIR [-scenario NAME] [-seed N]")

func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "list":
		for _, s := range scenario.All() {
			fmt.Fprintf(w, "%-11s %s\n", s.Name, s.Title)
		}
		fmt.Fprintln(w, "\ncapture scenarios (mrc-sim capture):")
		for _, c := range capture.Scenarios() {
			fmt.Fprintf(w, "%-13s %s\n", c.Name, c.Title)
		}
		return nil
	case "capture":
		fs := flag.NewFlagSet("capture", flag.ContinueOnError)
		seed := fs.Uint64("seed", 1, "seed of the runs")
		name := fs.String("scenario", "", "one capture scenario (default: all)")
		dir := fs.String("dir", "", "directory for NAME.pcapng")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *dir == "" {
			return errors.New("capture: -dir is required")
		}
		return captures(w, *dir, *name, *seed)
	case "table":
		fs := flag.NewFlagSet("table", flag.ContinueOnError)
		seed := fs.Uint64("seed", 1, "seed of every run")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return table(w, *seed)
	case "run":
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		seed := fs.Uint64("seed", 1, "seed of the run")
		name := fs.String("scenario", "", "scenario name (mrc-sim list)")
		trace := fs.String("trace", "", "write the MRC run's NDJSON trace here")
		pcapFile := fs.String("pcap", "", "write the MRC run's pcapng here")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return one(w, *name, *seed, *trace, *pcapFile)
	}
	return errUsage
}

// captures writes the capture scenarios' pcapngs into dir, after checking
// that each shows its impairment.
func captures(w io.Writer, dir, name string, seed uint64) error {
	cs := capture.Scenarios()
	if name != "" {
		c, ok := capture.Lookup(name)
		if !ok {
			return fmt.Errorf("unknown capture scenario %q (mrc-sim list)", name)
		}
		cs = []capture.Scenario{c}
	}
	for _, c := range cs {
		var b bytes.Buffer
		if err := c.Write(seed, &b); err != nil {
			return err
		}
		e, err := c.Check(b.Bytes())
		if err != nil {
			return fmt.Errorf("%s (seed %d): %w", c.Name, seed, err)
		}
		path := filepath.Join(dir, c.Name+".pcapng")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %d frames (%s)\n", path, e.Frames, c.Title)
	}
	return nil
}

// table runs every scenario, in parallel (each has its own simulator), and
// prints them in order with the findings their failed checks cite.
func table(w io.Writer, seed uint64) error {
	all := scenario.All()
	rs := make([]*scenario.Result, len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i], errs[i] = s.Run(seed, scenario.Options{})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := scenario.Table(w, rs); err != nil {
		return err
	}
	return findings(w, rs)
}

func findings(w io.Writer, rs []*scenario.Result) error {
	cited := map[string]bool{}
	for _, r := range rs {
		for _, c := range r.Checks {
			if !c.OK && c.Finding != "" {
				cited[c.Finding] = true
			}
		}
	}
	ids := make([]string, 0, len(cited))
	for id := range cited {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) > 0 {
		fmt.Fprintln(w)
	}
	for _, id := range ids {
		if _, err := fmt.Fprintf(w, "- **%s**: %s\n", id, scenario.Findings[id]); err != nil {
			return err
		}
	}
	return nil
}

func one(w io.Writer, name string, seed uint64, trace, pcapng string) error {
	s, ok := scenario.Lookup(name)
	if !ok {
		return fmt.Errorf("unknown scenario %q (mrc-sim list)", name)
	}
	var o scenario.Options
	var closers []func() error
	open := func(path string) (io.Writer, error) {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		b := bufio.NewWriterSize(f, 1<<20)
		closers = append(closers, func() error {
			if err := b.Flush(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		})
		return b, nil
	}
	var err error
	if trace != "" {
		if o.Trace, err = open(trace); err != nil {
			return err
		}
	}
	if pcapng != "" {
		f, err := open(pcapng)
		if err != nil {
			return err
		}
		o.Frames = capture.NewPcapng(f)
	}
	r, err := s.Run(seed, o)
	for _, c := range closers {
		err = errors.Join(err, c())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s (seed %d)\n  MRC: %s\n  RC:  %s\n  paper: %s\n", r.Title, seed, r.MRC, r.RC, r.Claim)
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		if c.Finding != "" && !c.OK {
			mark += " (finding " + c.Finding + ")"
		}
		fmt.Fprintf(w, "  %s %s\n", mark, c.What)
	}
	keys := make([]string, 0, len(r.Values))
	for k := range r.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s = %.4g\n", k, r.Values[k])
	}
	return findings(w, []*scenario.Result{r})
}
