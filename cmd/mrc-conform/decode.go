package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

func init() {
	register("decode", "decode MRC captures (pcap, pcapng, gzip): one line per packet, -V tree, JSON, --stats", runDecode)
}

const decodeUsage = `usage: mrc-conform decode [flags] FILE...
       mrc-conform decode [flags] -i IFACE...

Decodes each capture (pcap or pcapng, gzip-compressed or not; "-" is
standard input) with the MRC codec and prints, by default, one line per
frame: number, relative time, interface (capture point/plane), source
→ destination (IP, else Ethernet addresses), frame length, EV, opcode,
QP, PSN, the opcode's key fields and flags (A, RTX, TS, SE, M, TRIM,
CE). Malformed frames show their error and requirement ID; strict
violations follow "!". Exit status: 0 every file decoded to its end
(malformed packets do not change it); 1 a capture ends badly (truncated
or corrupt), after what was decoded is printed; 2 a usage error, or a
file that is not a capture at all (missing, a directory, another format),
as judge and tshark.

-i IFACE decodes live from an interface instead of files (root: AF_PACKET
raw sockets, both directions, MRC UDP ports only), each frame as it
arrives; repeat -i (or comma-separate) to capture several planes. It
stops after -c N frames, after -a duration:SEC, or on Ctrl-C, and says
"Capturing on" and "N packets captured" on stderr, as tshark does.
Times count from the capture's start; each interface has its own reader,
so frames of different interfaces may print out of time order.

  decode -i eth1 -i eth2 -a duration:10 -Y 'mrc.neth'

-Y EXPR shows only the frames a display filter selects (tshark's -Y),
with the field names of the generated Wireshark dissector
(pcap/wireshark/mrc.lua) and of Wireshark's frame, eth, ip, ipv6 and
udp; -G fields lists them. Comparisons: == != < <= > >= (or eq ne lt le
gt ge); combine with && || ! (and or not) and parentheses; a field alone
tests its presence. Numbers are decimal, 0x hex or 0-prefixed octal;
addresses as 10.0.0.1, fd00::/16, 02:00:00:00:00:0a; value names as in
the decode (RDMA_WRITE_ONLY). A comparison with an absent field is false
and != holds when every occurrence differs, as in tshark. --stats counts
the selected frames only; -c counts frames read, as tshark's does.

  decode -Y 'mrc.bth.psn == 5 && mrc.ev == 0x10001' x.pcapng
  decode -Y 'mrc.bth.opcode == RELIABILITY_NACK || mrc.trimmed != 0' x.pcapng
  decode -Y 'mrc.req == "WIRE-ICRC-1"' x.pcapng    # frames breaking a rule
  decode -Y 'ipv6.addr == fd00::/16 && !mrc.seth' x.pcapng

flags:
`

type decodeFlags struct {
	verbose bool
	format  string
	stats   bool
	evMode  string
	profile string
	count   int
	noCheck bool
	expr    string
	list    string
	filter  *pcap.Filter

	ifaces   ifaceList
	autostop autostop
}

func runDecode(args []string, stdout, stderr io.Writer) int {
	var fl decodeFlags
	cmd := cli.Command{Name: "mrc-conform decode", Stdout: stdout, Stderr: stderr}
	fs := newFlagSet("decode", decodeUsage)
	fs.BoolVar(&fl.verbose, "V", false, "print the full header tree, every field by its spec name")
	fs.StringVar(&fl.format, "format", "text", "output format: text or json (one object per line per frame)")
	fs.BoolVar(&fl.stats, "stats", false, "print per-QP and per-EV summaries instead of frames")
	fs.StringVar(&fl.evMode, "ev-mode", "stev", "how EVs are carried: stev, udp or srv6")
	fs.StringVar(&fl.profile, "profile", "", profileFlagUsage+" (default: "+spec.DefaultProfile().Name+")")
	fs.IntVar(&fl.count, "c", 0, "stop after this many frames per file (0: all)")
	fs.BoolVar(&fl.noCheck, "no-check", false, "skip the strict checks and the ICRC (faster)")
	fs.StringVar(&fl.expr, "Y", "", "display filter: show only the frames it selects (see above)")
	fs.StringVar(&fl.list, "G", "", "\"fields\": list the display filter's field names and exit")
	fs.Var(&fl.ifaces, "i", "capture live on this interface (repeat or comma-separate for planes; root)")
	fs.Var(&fl.autostop, "a", "live capture stops: duration:SEC or packets:N (tshark's -a)")
	files, done, code := cmd.Parse(fs, args, true)
	if done {
		return code
	}
	if fl.list != "" {
		if fl.list != "fields" {
			return cmd.Usagef("-G %q: only -G fields is known", fl.list)
		}
		for _, n := range pcap.FilterFields(nil) {
			fmt.Fprintln(stdout, n)
		}
		return 0
	}
	if len(files) == 0 && len(fl.ifaces) == 0 {
		return cmd.Usagef("no capture file given (or -i IFACE to capture live)")
	}
	if len(files) > 0 && len(fl.ifaces) > 0 {
		return cmd.Usagef("-i captures live: give no capture file with it")
	}
	if fl.autostop != (autostop{}) && len(fl.ifaces) == 0 {
		return cmd.Usagef("-a stops a live capture: use it with -i")
	}
	format, err := outputFormat(&fl)
	if err != nil {
		return cmd.Usagef("%v", err)
	}
	d := &pcap.Decoder{NoCheck: fl.noCheck, Cut: true}
	if d.EVMode, err = wire.ParseEVMode(fl.evMode); err != nil {
		return cmd.Usagef("unknown EV mode %q (want stev, udp or srv6)", fl.evMode)
	}
	if fl.profile != "" {
		p, err := loadProfileArg(fl.profile)
		if err != nil {
			fmt.Fprintf(stderr, "mrc-conform decode: %v\n", err)
			return 2
		}
		if d.Codec, err = wire.NewCodec(p); err != nil {
			fmt.Fprintf(stderr, "mrc-conform decode: %v\n", err)
			return 2
		}
	}
	if code, ok := compileFilter(cmd, &fl, d); !ok {
		return code
	}
	if len(fl.ifaces) > 0 {
		if err := decodeLive(d, format, &fl, stdout, stderr); err != nil {
			code := 1
			if _, ok := errors.AsType[captureError](err); ok {
				code = 2
			}
			return cmd.Errorf(code, "%v", err)
		}
		return 0
	}
	status := 0
	for _, name := range files {
		if err := decodeFile(name, d, format, &fl, stdout); err != nil {
			// Not a capture at all (missing, a directory, another
			// format) is 2, as in judge and tshark; a capture that
			// ends badly is 1.
			code := 1
			if _, ok := errors.AsType[openError](err); ok {
				code = 2
			}
			status = max(status, cmd.Errorf(code, "%v", err))
		}
	}
	return status
}

// compileFilter compiles -Y for d's codec into fl.filter. A bad
// expression is a usage error shown as tshark shows it: the message,
// then the expression with a caret under the column.
func compileFilter(cmd cli.Command, fl *decodeFlags, d *pcap.Decoder) (int, bool) {
	if fl.expr == "" {
		return 0, true
	}
	f, err := pcap.CompileFilter(fl.expr, d.Codec)
	if fe, ok := errors.AsType[*pcap.FilterError](err); ok {
		return cmd.Usagef("-Y: %v\n%s", fe, fe.Caret()), false
	}
	if err != nil {
		return cmd.Usagef("-Y: %v", err), false
	}
	if f.NeedsCheck() && d.NoCheck {
		return cmd.Usagef("-Y %q reads what only the strict checks find (mrc.req, mrc.icrc_ok): drop --no-check", fl.expr), false
	}
	fl.filter = f
	return 0, true
}

// openError is a file decode cannot read as a capture at all.
type openError struct{ error }

func decodeFile(name string, d *pcap.Decoder, format pcap.OutputFormat, fl *decodeFlags, stdout io.Writer) error {
	r, err := pcap.Open(name) // its errors name the file
	if err != nil {
		return openError{err}
	}
	defer r.Close()
	p := pcap.NewPrinter(stdout, format, d.Codec, d.EVMode)
	var st *pcap.Stats
	var fit *pcap.Fit
	if fl.stats {
		st = pcap.NewStats()
		fit = pcap.NewFit(d.Codec, d.EVMode)
	}
	errStop := errors.New("count reached")
	err = d.Each(r, func(rec *pcap.Record) error {
		if fl.filter != nil && !fl.filter.Match(rec) {
			// Not shown, but read: -c counts it, as tshark's does.
		} else if st != nil {
			st.Add(rec)
			fit.Add(rec)
		} else if err := p.Print(rec); err != nil {
			return err
		}
		if fl.count > 0 && rec.Number >= fl.count {
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	// Print what was decoded even when the file ends badly.
	if st != nil {
		werr := writeStats(st, format, stdout)
		writeAdvice(fit, format, stdout)
		if err == nil {
			err = werr
		}
	}
	if ferr := p.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// writeStats writes the --stats summary in format.
func writeStats(st *pcap.Stats, format pcap.OutputFormat, w io.Writer) error {
	if format == pcap.OutputJSON {
		return st.WriteJSON(w)
	}
	return st.WriteText(w)
}

// writeAdvice notes, after text stats, a preset the capture fits better
// than the profile it was decoded with (pcap.Fit).
func writeAdvice(fit *pcap.Fit, format pcap.OutputFormat, w io.Writer) {
	if format == pcap.OutputJSON {
		return
	}
	for _, a := range fit.Advice() {
		fmt.Fprintln(w, "note: "+a)
	}
}

// outputFormat is the printer --format and -V ask for.
func outputFormat(fl *decodeFlags) (pcap.OutputFormat, error) {
	switch fl.format {
	case "text":
		if fl.verbose {
			return pcap.OutputVerbose, nil
		}
		return pcap.OutputText, nil
	case "json":
		if fl.verbose {
			return 0, errors.New("-V and --format json exclude each other (JSON has every field)")
		}
		return pcap.OutputJSON, nil
	}
	return 0, fmt.Errorf("unknown format %q (want text or json)", fl.format)
}
