package pcap_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/pcap/internal/corpus"
)

// TestTextLineEndsAgreeWithTshark checks the source → destination and
// length of every text line against tshark's Source, Destination and
// frame.len columns, on the corpus and a simulator capture. Frame 42 of
// malformed.pcapng is the one exception: its SRv6 routing header is no
// SRH, so wire stops at the outer IPv6 header, while Wireshark dissects
// the routing header and shows the inner IPv6 addresses.
func TestTextLineEndsAgreeWithTshark(t *testing.T) {
	tshark := testenv.LookPath(t, "tshark")
	for _, c := range []string{filepath.Join("testdata", "valid.pcapng"), filepath.Join("testdata", "malformed.pcapng"),
		filepath.Join(corpus.ScenarioDir, "plane-down.pcapng")} {
		out, err := exec.Command(tshark, "-n", "-X", "lua_script:"+corpus.LuaPath, "-r", c, "-T", "fields",
			"-E", "separator=/t", "-e", "_ws.col.Source", "-e", "_ws.col.Destination", "-e", "frame.len").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		want := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		var text bytes.Buffer
		rd, err := pcap.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		p := pcap.NewPrinter(&text, pcap.OutputText, nil, 0)
		var d pcap.Decoder
		if err := d.Each(rd, p.Print); err != nil {
			t.Fatal(err)
		}
		rd.Close()
		p.Flush()
		lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
		if len(lines) != len(want) {
			t.Fatalf("%s: %d lines, tshark %d", c, len(lines), len(want))
		}
		for i, l := range lines {
			if filepath.Base(c) == "malformed.pcapng" && i+1 == 42 {
				continue
			}
			// number, time, interface, [src] → dst, length
			src, rest, ok := strings.Cut(l[31:], " → ")
			f := strings.Fields(rest)
			if !ok || len(f) < 2 {
				t.Fatalf("%s line %d: no source → destination: %q", c, i+1, l)
			}
			if got, w := strings.TrimSpace(src)+"\t"+f[0]+"\t"+f[1], want[i]; got != w {
				t.Errorf("%s frame %d: %q, tshark %q", filepath.Base(c), i+1, got, w)
			}
		}
	}
}

// TestPrinterAppendAsPrint: Append gives, record by record, the bytes
// Print writes, in every output format, on the valid and malformed
// corpus captures.
func TestPrinterAppendAsPrint(t *testing.T) {
	for _, c := range []string{filepath.Join("testdata", "valid.pcapng"), filepath.Join("testdata", "malformed.pcapng")} {
		for _, format := range []pcap.OutputFormat{pcap.OutputText, pcap.OutputVerbose, pcap.OutputJSON} {
			rd, err := pcap.Open(c)
			if err != nil {
				t.Fatal(err)
			}
			var printed, appended bytes.Buffer
			p := pcap.NewPrinter(&printed, format, nil, 0)
			a := pcap.NewPrinter(nil, format, nil, 0)
			var b []byte
			n := 0
			var d pcap.Decoder
			err = d.Each(rd, func(r *pcap.Record) error {
				n++
				b = a.Append(b[:0], r)
				appended.Write(b)
				return p.Print(r)
			})
			rd.Close()
			if err != nil || p.Flush() != nil || a.Flush() != nil {
				t.Fatalf("%s: %v", c, err)
			}
			if n < 10 || printed.Len() == 0 || !bytes.Equal(printed.Bytes(), appended.Bytes()) {
				t.Errorf("%s, format %d: %d records, Print wrote %d bytes, Append gave %d, not the same", c, format, n, printed.Len(), appended.Len())
			}
		}
	}
}
