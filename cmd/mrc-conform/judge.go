package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/internal/hugeheap"
)

func init() {
	register("judge", "judge a capture against the conformance catalog (passive mode): text, JSON, JUnit, HTML, annotated pcapng", runJudge)
}

const judgeUsage = `usage: mrc-conform judge [flags] CAPTURE|DIR...

Judges a capture (pcap or pcapng, gzip-compressed or not) against every
passive case of the conformance catalog, from the packets alone: it
reconstructs each connection (both directions, every plane), judges each
node at the capture point nearest it, and reports one verdict per case:
PASS, FAIL, NON-STRICT, INCONCLUSIVE, NOT-APPLICABLE, NOT-SUPPORTED or
ERROR. The PICS (--pics) declares the implementation's features,
parameters and capture points; "--pics default" uses an empty PICS, under
which most behaviour cases are INCONCLUSIVE or NOT-APPLICABLE. Formats
are in conformance/formats.md and conformance/report-schema.md.

Several captures, or a directory of them, are judged in parallel (--jobs)
into one report, text or json: a section per capture, in argument order,
each written as soon as it and those before it are judged, then a summary:
a line per capture and a line per case over them all (its worst verdict,
captures per verdict, observations and findings); the exit status is the
worst of theirs. Memory does not grow with the number of captures.

Exit status (the README's table "Results and exit status"): 0 PASS, at
least one MUST case PASSed and none FAILed; 1 FAIL, a MUST case FAILed
outside an unexpired deviation; 2 a usage error, an unreadable capture,
PICS or deviations file, a case in ERROR, or no MUST case could be
judged (INCONCLUSIVE); 127 no MUST case applies to what the PICS
declares (every one NOT-SUPPORTED or NOT-APPLICABLE).

flags:
`

func runJudge(args []string, stdout, stderr io.Writer) int {
	tuned := tuneGC()
	cmd := cli.Command{Name: "mrc-conform judge", Stdout: stdout, Stderr: stderr}
	var fl judgeFlags
	fs := judgeFlagSet(&fl)
	files, done, code := cmd.Parse(fs, args, true)
	if done {
		return code
	}
	fail := func(f string, a ...any) int { return cmd.Errorf(2, f, a...) }
	if err := checksErr(); err != nil {
		return fail("%v", err) // a broken check table: no capture is judged
	}
	if len(files) == 0 {
		return cmd.Usagef("want a capture file, several, or a directory of them")
	}
	files, err := captureFiles(files)
	if err != nil {
		return fail("%v", err)
	}
	if slices.Contains(files, "-") {
		return cmd.Usagef("the capture must be a file: it is read twice")
	}
	if fl.pics == "" {
		return cmd.Usagef("--pics is required (use --pics default for an empty PICS)")
	}
	f := conformance.Format(fl.format)
	if !validFormat(f) {
		return cmd.Usagef("unknown format %q (want text, json, junit or html)", fl.format)
	}
	opts, code := judgeOptions(cmd, &fl)
	if code != 0 {
		return code
	}
	if captureBytes(files) <= smallCapture {
		hugeheap.Now()
	} else {
		hugeHeap(judgeHeap)
	}
	if tuned {
		// hugeHeap's collection, if it made one, is behind: the next
		// is the judge's first.
		afterNextGC(func() { debug.SetGCPercent(judgeGCPercent) })
	}
	if len(files) > 1 {
		return judgeSeveral(cmd, files, opts, &fl, f)
	}
	return judgeOne(cmd, files[0], opts, &fl, f)
}

// checksErr is conformance.ChecksErr, which judge runs at start; a test
// replaces it with a broken table's error.
var checksErr = conformance.ChecksErr

// judgeFlags are judge's flags.
type judgeFlags struct {
	pics, format, out, annotate, profile, at string
	devs                                     deviationFlags
	all, sha, mmap                           bool
	jobs, reorder                            int
}

// judgeFlagSet defines judge's flags into fl.
func judgeFlagSet(fl *judgeFlags) *flag.FlagSet {
	fs := newFlagSet("judge", judgeUsage)
	fs.StringVar(&fl.pics, "pics", "", `PICS file (JSON), or "default" (required)`)
	fl.devs.define(fs)
	fs.StringVar(&fl.format, "format", "text", "report format: text, json, junit or html")
	fs.StringVar(&fl.out, "o", "", "write the report to this file instead of standard output")
	fs.StringVar(&fl.annotate, "annotate", "", "write a pcapng copy of the capture with the verdicts as packet comments")
	fs.StringVar(&fl.profile, "profile", "", profileFlagUsage+" (default: the PICS's profile)")
	fs.BoolVar(&fl.all, "v", false, "text format: list every case's reason and more findings")
	fs.StringVar(&fl.at, "capture-at", "", `where the capture was taken: "dut" (the DUT's own interface) or "remote" (a tap on the path, the peer's side); overrides the PICS's capture.location. Away from the DUT a packet not seen proves nothing: such findings are INCONCLUSIVE`)
	fs.BoolVar(&fl.sha, "sha256", false, "put the capture file's SHA-256 in the report (reading the file once more: about as much CPU as judging it)")
	fs.BoolVar(&fl.mmap, "mmap", false, "read the capture file mapped rather than copied: a little less CPU on some hosts, much more on a virtual machine with shadow paging (go test -bench 'Judge$|JudgeMapped' ./conformance compares the two); the report is the same")
	fs.IntVar(&fl.jobs, "jobs", runtime.GOMAXPROCS(0), "workers judging the capture's connections in parallel (sharded by node pair); the report is the same for any number")
	fs.IntVar(&fl.reorder, "reorder", 0, fmt.Sprintf("frames held back to put several interfaces' frames in timestamp order, up to %d; memory grows with it (default %d, and a capture file with later frames is judged again with a window that fits them)", conformance.MaxReorderLimit, conformance.MaxReorder))
	return fs
}

// judgeOptions turns the flags into the judge's options; a non-zero code
// is the exit status of a flag or file it refused (already reported).
func judgeOptions(cmd cli.Command, fl *judgeFlags) (conformance.Options, int) {
	fail := func(f string, a ...any) int { return cmd.Errorf(2, f, a...) }
	var opts conformance.Options
	if fl.pics != "default" {
		p, err := conformance.LoadPICS(fl.pics)
		if err != nil {
			return opts, fail("%v", err)
		}
		opts.PICS = p
	}
	if fl.profile != "" {
		prof, err := loadProfileArg(fl.profile)
		if err != nil {
			return opts, fail("%v", err)
		}
		p := opts.PICS
		if p == nil {
			p = conformance.DefaultPICS()
		}
		if opts.PICS, err = p.WithProfile(prof); err != nil {
			return opts, fail("%v", err)
		}
	}
	var code int
	if opts.Deviations, opts.Today, code = fl.devs.load(cmd); code != 0 {
		return opts, code
	}
	if fl.jobs < 1 || fl.jobs > conformance.MaxJobs {
		return opts, cmd.Usagef("--jobs %d (want 1 to %d)", fl.jobs, conformance.MaxJobs)
	}
	opts.Jobs = fl.jobs
	if fl.reorder < 0 || fl.reorder > conformance.MaxReorderLimit {
		return opts, cmd.Usagef("--reorder %d (want 0 to %d)", fl.reorder, conformance.MaxReorderLimit)
	}
	opts.Reorder = fl.reorder
	opts.CaptureSHA256 = fl.sha
	opts.Mapped = fl.mmap
	opts.CaptureLocation = conformance.CaptureLocation(fl.at)
	if !opts.CaptureLocation.Valid() {
		return opts, cmd.Usagef("--capture-at %q (want dut or remote)", fl.at)
	}
	return opts, 0
}

// judgeSeveral judges several captures into one report.
func judgeSeveral(cmd cli.Command, files []string, opts conformance.Options, fl *judgeFlags, f conformance.Format) int {
	stdout, stderr := cmd.Stdout, cmd.Stderr
	fail := func(f string, a ...any) int { return cmd.Errorf(2, f, a...) }
	if fl.annotate != "" {
		return cmd.Usagef("--annotate takes one capture")
	}
	if f != conformance.FormatText && f != conformance.FormatJSON {
		return cmd.Usagef("several captures are reported as text or json, not %s", f)
	}
	// The report streams to its destination section by section, so it
	// is never held whole in memory.
	w := io.Writer(stdout)
	var file *os.File
	if fl.out != "" {
		var err error
		if file, err = os.Create(fl.out); err != nil {
			return fail("%v", err)
		}
		defer file.Close()
		w = file
	}
	var progress io.Writer
	if isTerminal(stderr) {
		progress = stderr
	}
	exit, err := judgeMany(files, opts, fl.jobs, f, conformance.TextOptions{All: fl.all, Findings: map[bool]int{true: 20, false: 3}[fl.all]}, w, progress)
	if err != nil {
		return fail("%v", err)
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return fail("%v", err)
		}
	}
	return exit
}

// judgeOne judges one capture, writes the annotated copy and the report
// the flags ask for, and returns the report's exit status.
func judgeOne(cmd cli.Command, file string, opts conformance.Options, fl *judgeFlags, f conformance.Format) int {
	stdout, stderr := cmd.Stdout, cmd.Stderr
	fail := func(f string, a ...any) int { return cmd.Errorf(2, f, a...) }
	var ann bytes.Buffer
	if fl.annotate != "" {
		opts.Annotate = &ann
	}
	if isTerminal(stderr) {
		opts.Progress = func(n int) { fmt.Fprintf(stderr, "\rjudging: %d frames", n) }
	}
	advice := startAdvice(file, opts.PICS)
	rep, err := conformance.JudgeFile(file, opts)
	if opts.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return fail("%v", err)
	}
	if fl.annotate != "" {
		if err := os.WriteFile(fl.annotate, ann.Bytes(), 0o644); err != nil {
			return fail("%v", err)
		}
	}
	w := stdout
	var buf bytes.Buffer
	if fl.out != "" {
		w = &buf
	}
	if f == conformance.FormatText {
		err = rep.WriteTextOpts(w, conformance.TextOptions{All: fl.all, Findings: map[bool]int{true: 20, false: 3}[fl.all]})
	} else {
		err = rep.Write(w, f)
	}
	if err != nil {
		return fail("%v", err)
	}
	writeProfileAdvice(<-advice, map[bool]io.Writer{true: w, false: stderr}[f == conformance.FormatText])
	if fl.out != "" {
		if err := os.WriteFile(fl.out, buf.Bytes(), 0o644); err != nil {
			return fail("%v", err)
		}
		if f != conformance.FormatText {
			// Keep the one-line result on the terminal.
			fmt.Fprintf(stdout, "%s: %s (exit status %d), report in %s\n", file, rep.Summary.Result, rep.ExitCode(), fl.out)
		}
	}
	return rep.ExitCode()
}

func validFormat(f conformance.Format) bool {
	for _, g := range conformance.Formats {
		if f == g {
			return true
		}
	}
	return false
}

// isTerminal reports whether w is a terminal (progress goes there only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTTY(f)
}
