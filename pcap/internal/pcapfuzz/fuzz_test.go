package pcapfuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/pcap/gopkt"
	"github.com/openmrc/mrc/pcap/internal/corpus"
	"github.com/openmrc/mrc/wire"
)

// FuzzDecodeFrame feeds arbitrary frames to every decode path of the
// package: the Decoder with strict checks, the three printers, the
// statistics, gopacket.NewPacket with the registered layers and a
// DecodingLayerParser. None may panic, and the JSON outputs must stay
// valid JSON. The seed corpus is every corpus frame, so plain go test
// runs it.
func FuzzDecodeFrame(f *testing.F) {
	for _, build := range []func(*wire.Codec) ([]corpus.Entry, error){corpus.Valid, corpus.Malformed} {
		entries, err := build(wire.Default)
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			f.Add(e.Frame)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var d pcap.Decoder
		var r pcap.Record
		d.Decode(&pcap.Frame{Number: 1, Data: frame, Length: len(frame)}, nil, &r)
		for _, format := range []pcap.OutputFormat{pcap.OutputText, pcap.OutputVerbose, pcap.OutputJSON} {
			var out bytes.Buffer
			p := pcap.NewPrinter(&out, format, nil, 0)
			if err := p.Print(&r); err != nil {
				t.Fatal(err)
			}
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			if format == pcap.OutputJSON && !json.Valid(out.Bytes()) {
				t.Fatalf("invalid JSON: %s", out.Bytes())
			}
		}
		st := pcap.NewStats()
		st.Add(&r)
		var js bytes.Buffer
		if err := st.WriteJSON(&js); err != nil || !json.Valid(js.Bytes()) {
			t.Fatalf("stats JSON: %v %s", err, js.Bytes())
		}
		_ = st.WriteText(io.Discard)

		pk := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
		_ = pk.Layers()
		l := gopkt.NewLayers(nil)
		var (
			eth     layers.Ethernet
			ip4     layers.IPv4
			ip6     layers.IPv6
			udp     layers.UDP
			payload gopacket.Payload
		)
		parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet,
			append([]gopacket.DecodingLayer{&eth, &ip4, &ip6, &udp, &payload}, l.DecodingLayers()...)...)
		parser.IgnorePanic = true // so that a panic would surface as the error below
		var decoded []gopacket.LayerType
		if err := parser.DecodeLayers(frame, &decoded); err != nil && bytes.Contains([]byte(err.Error()), []byte("panic")) {
			t.Fatalf("DecodingLayerParser: %v", err)
		}
		if r.Err == nil {
			cp := bytes.Clone(frame)
			if err := pcap.SetICRC(nil, cp); err != nil {
				t.Fatalf("SetICRC on a frame that decodes: %v", err)
			}
		}
	})
}

// FuzzFilter compiles display filters and evaluates them on arbitrary
// frames. Each input gives two expressions: expr as it is, and one that
// gen's bytes choose from the filter grammar and vocabulary (raw strings
// alone rarely mutate into valid filters). For both: compiling never
// panics and fails only with a *FilterError whose column lies in the
// expression (or just past it); a compiled filter's Match never panics and
// gives the same answer twice and from a second compilation; its normal
// form (String) compiles to a filter with the same normal form and the
// same answer, unless escaping string bytes makes it longer than
// MaxFilterLen.
func FuzzFilter(f *testing.F) {
	entries, err := corpus.Valid(wire.Default)
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{"mrc", "mrc.bth.psn == 5 && mrc.ev == 0x10001", "!(mrc.req == \"WIRE-LEN-1\") || ipv6.addr == fd00::/16",
		"mrc.seth.sack_offset < -1 or mrc.bth.opcode eq RELIABILITY_SACK", "eth.src == 02:00:00:00:00:0a && ip.dst == 10.0.0.2",
		"mrc.bth.psn >= mrc.seth.cack_psn", "(((mrc.icrc_ok == 1)))", "mrc.bth.psn = 5", "010 < frame.len", "udp.port != 4791",
		"mrc.bth.psn == 5 && (mrc.ev == 1 || mrc.seth)", "!(mrc || udp) || mrc.reth.va > 0x7f0000000000"}
	for i, s := range seeds {
		f.Add(s, []byte{byte(i), byte(3 * i), byte(7 * i)}, entries[i%len(entries)].Frame)
	}
	names := pcap.FilterFields(nil)
	f.Fuzz(func(t *testing.T, expr string, gen []byte, frame []byte) {
		var d pcap.Decoder
		var r pcap.Record
		d.Decode(&pcap.Frame{Number: 1, Data: frame, Length: len(frame)}, nil, &r)
		checkFilter(t, expr, &r)
		g := &filterGen{b: gen, names: names}
		checkFilter(t, g.expr(0), &r)
	})
}

// filterGen builds an expression from bytes: each byte chooses the next
// production, field name or literal.
type filterGen struct {
	b     []byte
	names []string
}

func (g *filterGen) next() int {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return int(c)
}

var genLiterals = []string{"0", "1", "5", "200", "0x10", "010", "-1", "0xffffffffffffffff", "10.0.0.1", "10.0.0.0/8",
	"fd00::a", "fd00::/16", "02:00:00:00:00:0a", `"WIRE-LEN-1"`, `"a\x06b"`, "RDMA_WRITE_ONLY", "TRIMMED", "NONE"}
var genOps = []string{"==", "!=", "<", "<=", ">", ">=", "eq", "ne", "lt", "ge"}

func (g *filterGen) expr(depth int) string {
	c := g.next()
	if depth > 8 {
		c = 3 + c%3
	}
	switch c % 6 {
	case 0:
		return "!" + g.expr(depth+1)
	case 1:
		return "(" + g.expr(depth+1) + " && " + g.expr(depth+1) + ")"
	case 2:
		return g.expr(depth+1) + " || " + g.expr(depth+1)
	case 3:
		return g.names[g.next()%len(g.names)]
	case 4:
		return g.names[g.next()%len(g.names)] + " " + genOps[g.next()%len(genOps)] + " " + genLiterals[g.next()%len(genLiterals)]
	}
	return g.names[g.next()%len(g.names)] + " " + genOps[g.next()%len(genOps)] + " " + g.names[g.next()%len(g.names)]
}

// checkFilter asserts FuzzFilter's properties for expr on r.
func checkFilter(t *testing.T, expr string, r *pcap.Record) {
	t.Helper()
	flt, err := pcap.CompileFilter(expr, nil)
	if err != nil {
		var fe *pcap.FilterError
		if !errors.As(err, &fe) || fe.Col < 1 || fe.Col > len(expr)+1 {
			t.Fatalf("%.200q: error %v (%T) is not a *FilterError with a column in the expression", expr, err, err)
		}
		return
	}
	m := flt.Match(r)
	if flt.Match(r) != m {
		t.Fatalf("%.200q: Match is not deterministic", expr)
	}
	again, err := pcap.CompileFilter(expr, nil)
	if err != nil || again.Match(r) != m {
		t.Fatalf("%.200q: a second compilation answers differently (%v)", expr, err)
	}
	norm := flt.String()
	g, err := pcap.CompileFilter(norm, nil)
	if len(norm) > pcap.MaxFilterLen && errors.Is(err, pcap.ErrFilterLimit) {
		return // quoting can make a long expression's normal form too long
	}
	if err != nil {
		t.Fatalf("%.200q: normal form %.200q does not compile: %v", expr, norm, err)
	}
	if g.String() != norm {
		t.Fatalf("%.200q: normal form %.200q becomes %q", expr, norm, g.String())
	}
	if g.Match(r) != m {
		t.Fatalf("%.200q: normal form %.200q answers %v, the expression %v", expr, norm, !m, m)
	}
}
