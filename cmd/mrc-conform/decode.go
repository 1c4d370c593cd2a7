package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

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
violations follow "!". The exit status is 1 if a file cannot be read to
its end, 2 on a usage error, else 0 (malformed packets do not change it).

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
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "mrc-conform decode: no capture file given")
		fs.Usage()
		return 2
	}
	format := pcap.OutputText
	switch fl.format {
	case "text":
		if fl.verbose {
			format = pcap.OutputVerbose
		}
	case "json":
		if fl.verbose {
			fmt.Fprintln(stderr, "mrc-conform decode: -V and --format json exclude each other (JSON has every field)")
			return 2
		}
		format = pcap.OutputJSON
	default:
		fmt.Fprintf(stderr, "mrc-conform decode: unknown format %q (want text or json)\n", fl.format)
		return 2
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
		fmt.Fprintf(stderr, "mrc-conform decode: unknown EV mode %q (want stev, udp or srv6)\n", fl.evMode)
		return 2
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
			fmt.Fprintf(stderr, "mrc-conform decode: %v\n", err)
			status = 1
		}
	}
	return status
}

// parseInterspersed parses flags that may follow the file names, as
// tshark users expect (decode x.pcapng -V).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
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

func decodeFile(name string, d *pcap.Decoder, format pcap.OutputFormat, fl *decodeFlags, stdout io.Writer) error {
	r, err := pcap.Open(name) // its errors name the file
	if err != nil {
		return err
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
