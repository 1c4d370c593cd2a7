package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

func init() {
	register("decode", "decode MRC captures (pcap, pcapng, gzip): one line per packet, -V tree, JSON, --stats", runDecode)
}

const decodeUsage = `usage: mrc-conform decode [flags] FILE...

Decodes each capture (pcap or pcapng, gzip-compressed or not; "-" is
standard input) with the MRC codec and prints, by default, one line per
frame: number, relative time, interface (capture point/plane), EV,
opcode, QP, PSN, the opcode's key fields and flags (A, RTX, TS, SE, M,
TRIM, CE). Malformed frames show their error and requirement ID; strict
violations follow "!". Exit status: 0 every file decoded to its end
(malformed packets do not change it); 1 a capture ends badly (truncated
or corrupt), after what was decoded is printed; 2 a usage error, or a
file that is not a capture at all (missing, a directory, another format),
as judge and tshark.

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
}

func runDecode(args []string, stdout, stderr io.Writer) int {
	var fl decodeFlags
	cmd := cli.Command{Name: "mrc-conform decode", Stdout: stdout, Stderr: stderr}
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), decodeUsage)
		fs.PrintDefaults()
	}
	fs.BoolVar(&fl.verbose, "V", false, "print the full header tree, every field by its spec name")
	fs.StringVar(&fl.format, "format", "text", "output format: text or json (one object per line per frame)")
	fs.BoolVar(&fl.stats, "stats", false, "print per-QP and per-EV summaries instead of frames")
	fs.StringVar(&fl.evMode, "ev-mode", "stev", "how EVs are carried: stev, udp or srv6")
	fs.StringVar(&fl.profile, "profile", "", "JSON file with the wire profile (default: "+spec.DefaultProfile().Name+")")
	fs.IntVar(&fl.count, "c", 0, "stop after this many frames per file (0: all)")
	fs.BoolVar(&fl.noCheck, "no-check", false, "skip the strict checks and the ICRC (faster)")
	files, done, code := cmd.Parse(fs, args, true)
	if done {
		return code
	}
	if len(files) == 0 {
		return cmd.Usagef("no capture file given")
	}
	format := pcap.OutputText
	switch fl.format {
	case "text":
		if fl.verbose {
			format = pcap.OutputVerbose
		}
	case "json":
		if fl.verbose {
			return cmd.Usagef("-V and --format json exclude each other (JSON has every field)")
		}
		format = pcap.OutputJSON
	default:
		return cmd.Usagef("unknown format %q (want text or json)", fl.format)
	}
	d := &pcap.Decoder{NoCheck: fl.noCheck}
	switch strings.ToLower(fl.evMode) {
	case "stev":
		d.EVMode = wire.EVModeSTEV
	case "udp":
		d.EVMode = wire.EVModeUDP
	case "srv6":
		d.EVMode = wire.EVModeSRv6
	default:
		return cmd.Usagef("unknown EV mode %q (want stev, udp or srv6)", fl.evMode)
	}
	if fl.profile != "" {
		c, err := loadProfile(fl.profile)
		if err != nil {
			fmt.Fprintf(stderr, "mrc-conform decode: %v\n", err)
			return 2
		}
		d.Codec = c
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

func loadProfile(name string) (*wire.Codec, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	p := spec.DefaultProfile()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return wire.NewCodec(p)
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
	if fl.stats {
		st = pcap.NewStats()
	}
	errStop := errors.New("count reached")
	err = d.Each(r, func(rec *pcap.Record) error {
		if st != nil {
			st.Add(rec)
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
		var werr error
		if format == pcap.OutputJSON {
			werr = st.WriteJSON(stdout)
		} else {
			werr = st.WriteText(stdout)
		}
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
