// Command mrc-sim runs the white paper's resilience scenarios on the
// deterministic fabric simulator, with MRC and with the RC go-back-N
// baseline, and prints what happened.
//
//	mrc-sim table [-seed N]          all scenarios as a Markdown table
//	mrc-sim run -scenario NAME [-seed N] [-trace FILE] [-pcap FILE] [addressing]
//	                                 one scenario, its checks and numbers;
//	                                 the MRC run's NDJSON trace and pcapng
//	mrc-sim list                     the scenario names
//	mrc-sim version                  the version (also --version)
//	mrc-sim capture -dir DIR [-scenario NAME] [-seed N] [addressing]
//	                                 short runs with one impairment each,
//	                                 written as DIR/NAME.pcapng (the
//	                                 corpus in pcap/testdata/scenarios)
//
// The addressing flags change how nodes are addressed and where the
// capture is taken (for capture, they replace each scenario's own):
//
//	-plane-addresses        one IPv6 address per node and plane, fd00:P::N+1
//	                        (the white paper's deployment)
//	-capture-host N         capture on node N's ports, as dumpcap -i eth1
//	                        -i eth2 on that host would: interfaces named
//	                        eth1, eth2, … (or -capture-names a,b,…), runs
//	                        of -capture-run frames per interface (default
//	                        16; 1 writes in time order)
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
	"strings"
	"sync"

	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/fabric/scenario"
	"github.com/openmrc/mrc/internal/cli"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: mrc-sim <command> [flags]

commands:
  table [-seed N]          all scenarios as a Markdown table
  run -scenario NAME [-seed N] [-trace FILE] [-pcap FILE] [addressing]
                           one scenario, its checks and numbers; the MRC
                           run's NDJSON trace and pcapng
  list                     the scenario names
  capture -dir DIR [-scenario NAME] [-seed N] [addressing]
                           short runs with one impairment each, written
                           as DIR/NAME.pcapng

addressing: -plane-addresses (one IPv6 address per node and plane,
fd00:P::N+1); -capture-host N [-capture-names a,b] [-capture-run N]
(capture on node N's ports as dumpcap there would: eth1, eth2, …, runs
of frames per interface out of time order).
  version                  the version (also --version)

Every run is a function of its seed. Exit status: 0 done, 1 a run or a
file failed, 2 a usage error. Run 'mrc-sim <command> -h' for its flags.
`

// run runs the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	top := cli.Command{Name: "mrc-sim", Stdout: stdout, Stderr: stderr}
	if len(args) == 0 {
		return top.Usagef("no command given")
	}
	if top.HelpOrVersion(args[0], usage) {
		return 0
	}
	var sub func(fs *flag.FlagSet) func() error
	switch args[0] {
	case "list":
		sub = func(*flag.FlagSet) func() error { return func() error { list(stdout); return nil } }
	case "capture":
		sub = func(fs *flag.FlagSet) func() error {
			seed := fs.Uint64("seed", 1, "seed of the runs")
			name := fs.String("scenario", "", "one capture scenario (default: all)")
			dir := fs.String("dir", "", "directory for NAME.pcapng (required)")
			a := newAddressing(fs)
			return func() error {
				if *dir == "" {
					return usageError("-dir is required")
				}
				return captures(stdout, *dir, *name, *seed, a)
			}
		}
	case "table":
		sub = func(fs *flag.FlagSet) func() error {
			seed := fs.Uint64("seed", 1, "seed of every run")
			return func() error { return table(stdout, *seed) }
		}
	case "run":
		sub = func(fs *flag.FlagSet) func() error {
			seed := fs.Uint64("seed", 1, "seed of the run")
			name := fs.String("scenario", "", "scenario name (mrc-sim list)")
			trace := fs.String("trace", "", "write the MRC run's NDJSON trace here")
			pcapFile := fs.String("pcap", "", "write the MRC run's pcapng here")
			a := newAddressing(fs)
			return func() error {
				host, err := a.hostConfig()
				if err != nil {
					return err
				}
				if host != nil && *pcapFile == "" {
					return usageError("-capture-host needs -pcap")
				}
				return one(stdout, *name, *seed, *trace, *pcapFile, scenario.Options{PlaneAddresses: a.planeAddrs}, host)
			}
		}
	default:
		return top.Usagef("unknown command %q", args[0])
	}
	cmd := cli.Command{Name: "mrc-sim " + args[0], Stdout: stdout, Stderr: stderr}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mrc-sim %s [flags]\n\nflags:\n", args[0])
		fs.PrintDefaults()
	}
	exec := sub(fs)
	pos, done, code := cmd.Parse(fs, args[1:], false)
	if done {
		return code
	}
	if len(pos) > 0 {
		return cmd.Usagef("unexpected arguments %q", pos)
	}
	err := exec()
	if u, ok := errors.AsType[usageError](err); ok {
		return cmd.Usagef("%s", string(u))
	}
	if err != nil {
		return cmd.Errorf(1, "%v", err)
	}
	return 0
}

// addressing holds the flags that choose per-plane addresses and a host
// capture.
type addressing struct {
	fs         *flag.FlagSet
	planeAddrs bool
	host       int
	names      string
	run        int
}

func newAddressing(fs *flag.FlagSet) *addressing {
	a := &addressing{fs: fs}
	fs.BoolVar(&a.planeAddrs, "plane-addresses", false, "one IPv6 address per node and plane (fd00:P::N+1)")
	fs.IntVar(&a.host, "capture-host", -1, "capture on this node's ports (interfaces eth1, eth2, …), as dumpcap there would")
	fs.StringVar(&a.names, "capture-names", "", "comma-separated interface names by plane for -capture-host")
	fs.IntVar(&a.run, "capture-run", capture.DumpcapRun, "frames written together per interface for -capture-host (1: time order)")
	return a
}

// set reports whether any addressing flag was given.
func (a *addressing) set() bool {
	set := false
	a.fs.Visit(func(f *flag.Flag) { set = set || strings.HasPrefix(f.Name, "capture-") || f.Name == "plane-addresses" })
	return set
}

// hostConfig returns the host capture the flags ask for, or nil.
func (a *addressing) hostConfig() (*capture.HostConfig, error) {
	if a.host < 0 {
		if a.names != "" || a.run != capture.DumpcapRun {
			return nil, usageError("-capture-names and -capture-run need -capture-host")
		}
		return nil, nil
	}
	h := &capture.HostConfig{Node: a.host, Run: a.run}
	if a.names != "" {
		h.Names = strings.Split(a.names, ",")
	}
	return h, nil
}

// usageError is a command line mrc-sim cannot run (exit status 2).
type usageError string

func (e usageError) Error() string { return string(e) }

func list(w io.Writer) {
	for _, s := range scenario.All() {
		fmt.Fprintf(w, "%-11s %s\n", s.Name, s.Title)
	}
	fmt.Fprintln(w, "\ncapture scenarios (mrc-sim capture):")
	for _, c := range capture.Scenarios() {
		fmt.Fprintf(w, "%-13s %s\n", c.Name, c.Title)
	}
}

// captures writes the capture scenarios' pcapngs into dir, after checking
// that each shows its impairment. Addressing flags, when given, replace
// every scenario's own addressing and capture point.
func captures(w io.Writer, dir, name string, seed uint64, a *addressing) error {
	cs := capture.Scenarios()
	if name != "" {
		c, ok := capture.Lookup(name)
		if !ok {
			return usageError(fmt.Sprintf("unknown capture scenario %q (mrc-sim list)", name))
		}
		cs = []capture.Scenario{c}
	}
	host, err := a.hostConfig()
	if err != nil {
		return err
	}
	for _, c := range cs {
		if a.set() {
			c.Addressing.PlaneAddresses, c.Addressing.Host = a.planeAddrs, host
		}
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

func one(w io.Writer, name string, seed uint64, trace, pcapng string, o scenario.Options, host *capture.HostConfig) error {
	s, ok := scenario.Lookup(name)
	if !ok {
		return usageError(fmt.Sprintf("unknown scenario %q (mrc-sim list)", name))
	}
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
		if host != nil {
			o.Frames = capture.NewHost(f, *host)
		}
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
