package pcap_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/pcap/internal/corpus"
	"github.com/openmrc/mrc/wire"
)

// TestGeneratedFilesAreFresh fails when a checked-in generated file (the
// corpus captures, their golden decoder outputs, the Wireshark
// dissector) differs from what `go generate ./pcap` would write now, so
// a change in wire or in the printers cannot leave them stale.
func TestGeneratedFilesAreFresh(t *testing.T) {
	files, err := corpus.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v (run go generate ./pcap)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./pcap and review the diff\n%s", name, firstDiff(got, want))
		}
	}
	// No stray generated files either.
	on, _ := filepath.Glob("testdata/*")
	more, _ := filepath.Glob(corpus.ScenarioDir + "/*")
	for _, f := range append(on, more...) {
		if f == filepath.Join("testdata", "fuzz") || f == corpus.ScenarioDir {
			continue // go test -fuzz keeps its findings there
		}
		if filepath.Dir(f) == corpus.ScenarioDir && strings.HasSuffix(f, ".pcapng") {
			continue // recorded by mrc-sim capture (TestScenarioCorpus)
		}
		if _, ok := files[f]; !ok {
			t.Errorf("%s is not produced by the generator; delete it or generate it", f)
		}
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			if len(a) > 300 {
				a = a[:300] + "..."
			}
			if len(b) > 300 {
				b = b[:300] + "..."
			}
			return "line " + strconv.Itoa(i+1) + ":\n  have: " + a + "\n  want: " + b
		}
	}
	return "(binary difference)"
}

var reqRE = regexp.MustCompile(`WIRE-[A-Z0-9]+-[0-9]+`)

// decodeReqs returns the requirement IDs wire reports for frame: its
// decode error, or its strict-check violations.
func decodeReqs(c *wire.Codec, frame []byte) []string {
	var d pcap.Decoder
	d.Codec = c
	var r pcap.Record
	d.Decode(&pcap.Frame{Data: frame, Length: len(frame)}, nil, &r)
	var ids []string
	if r.Err != nil {
		ids = append(ids, reqRE.FindString(r.Err.Error()))
	}
	for _, v := range r.Violations {
		ids = append(ids, v.Req.String())
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// TestCorpusBreaksWhatItSays decodes every corpus frame and checks that
// wire reports exactly the requirement IDs its name cites: none for the
// valid capture, the cited ones for each malformed frame (WIRE-ENC-1,
// WIRE-ENC-2, WIRE-LEN-1, WIRE-UDP-1, WIRE-UDP-3, WIRE-BTH-1..9,
// WIRE-METH-1, WIRE-TSETH-1, WIRE-RETH-1, WIRE-PAY-2, WIRE-SETH-1,
// WIRE-SETH-3, WIRE-NETH-1, WIRE-NETH-2, WIRE-AETH-2, WIRE-ERTH-1,
// WIRE-EP-1, WIRE-GEN-2, WIRE-OP-2, WIRE-ICRC-1).
func TestCorpusBreaksWhatItSays(t *testing.T) {
	c := wire.Default
	valid, err := corpus.Valid(c)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := corpus.Malformed(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(valid, bad...) {
		want := reqRE.FindAllString(e.Name, -1)
		slices.Sort(want)
		if got := decodeReqs(c, e.Frame); !slices.Equal(got, want) {
			t.Errorf("%q: wire reports %v, the corpus says %v", e.Name, got, want)
		}
	}
}

// TestCorpusCoversEveryOpcode checks the valid capture has every MRC
// opcode, with and without TSETH where it applies, and every network
// variant (WIRE-OP-1, WIRE-ENC-1, WIRE-ENC-2, WIRE-BTH-6, WIRE-IMM-1).
func TestCorpusCoversEveryOpcode(t *testing.T) {
	valid, err := corpus.Valid(wire.Default)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[wire.Opcode]bool{}
	var ts, v4, v6, srv6, srh, vlan, trimmed, imm bool
	for _, e := range valid {
		var p wire.Packet
		if err := wire.Default.Decode(e.Frame, &p); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		seen[p.BTH.Opcode] = true
		ts = ts || p.Decoded&wire.HasTSETH != 0
		imm = imm || p.Decoded&wire.HasImmDt != 0
		v4, v6 = v4 || !p.IsIPv6, v6 || p.IsIPv6 && !p.SRv6
		srv6, srh = srv6 || p.SRv6 && !p.HasSRH, srh || p.HasSRH
		vlan, trimmed = vlan || p.Eth.HasVLAN, trimmed || p.Trimmed
	}
	for op := 0; op < 256; op++ {
		if o := wire.Opcode(op); o.Valid() && !seen[o] {
			t.Errorf("no %s in the valid corpus", o)
		}
	}
	for name, ok := range map[string]bool{"TSETH": ts, "ImmDt": imm, "IPv4": v4, "IPv6": v6, "SRv6": srv6,
		"SRv6+SRH": srh, "VLAN": vlan, "trimmed": trimmed} {
		if !ok {
			t.Errorf("no %s frame in the valid corpus", name)
		}
	}
}
