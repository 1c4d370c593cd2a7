package gopkt_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap/gopkt"
	"github.com/openmrc/mrc/pcap/internal/corpus"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

func init() {
	// The layers are registered explicitly, never by gopacket's default
	// port table (WIRE-UDP-1: the profile's ports).
	if _, err := gopkt.Register(spec.DefaultProfile()); err != nil {
		panic(err)
	}
}

// layerView is what a set of decoded MRC layers says about a frame, in
// wire's types, for comparison with wire.Codec.Decode.
type layerView struct {
	BTH     wire.BTH
	METH    *wire.METH
	TSETH   *wire.TSETH
	RETH    *wire.RETH
	ImmDt   *uint32
	AETH    *wire.AETH
	SETH    *wire.SETH
	NETH    *wire.NETH
	PETH    *wire.PETH
	ERTH    *wire.ERTH
	EETH    *wire.EETH
	Payload []byte
	ICRC    uint32
	Trimmed bool
}

func wireView(p *wire.Packet) layerView {
	v := layerView{BTH: p.BTH, ICRC: p.ICRC, Trimmed: p.Trimmed}
	d := p.Decoded
	if d&wire.HasMETH != 0 {
		v.METH = &p.METH
	}
	if d&wire.HasTSETH != 0 {
		v.TSETH = &p.TSETH
	}
	if d&wire.HasRETH != 0 {
		v.RETH = &p.RETH
	}
	if d&wire.HasImmDt != 0 {
		v.ImmDt = &p.ImmDt
	}
	if d&wire.HasAETH != 0 {
		v.AETH = &p.AETH
	}
	if d&wire.HasSETH != 0 {
		v.SETH = &p.SETH
	}
	if d&wire.HasNETH != 0 {
		v.NETH = &p.NETH
	}
	if d&wire.HasPETH != 0 {
		v.PETH = &p.PETH
	}
	if d&wire.HasERTH != 0 {
		v.ERTH = &p.ERTH
	}
	if d&wire.HasEETH != 0 {
		v.EETH = &p.EETH
	}
	if len(p.Payload) > 0 {
		v.Payload = p.Payload
	}
	return v
}

func packetView(pk gopacket.Packet) layerView {
	var v layerView
	for _, l := range pk.Layers() {
		switch x := l.(type) {
		case *gopkt.BTH:
			v.BTH, v.ICRC, v.Trimmed = x.BTH, x.ICRC, x.Trimmed
		case *gopkt.METH:
			v.METH = &x.METH
		case *gopkt.TSETH:
			v.TSETH = &x.TSETH
		case *gopkt.RETH:
			v.RETH = &x.RETH
		case *gopkt.ImmDt:
			v.ImmDt = &x.Imm
		case *gopkt.AETH:
			v.AETH = &x.AETH
		case *gopkt.SETH:
			v.SETH = &x.SETH
		case *gopkt.NETH:
			v.NETH = &x.NETH
		case *gopkt.PETH:
			v.PETH = &x.PETH
		case *gopkt.ERTH:
			v.ERTH = &x.ERTH
		case *gopkt.EETH:
			v.EETH = &x.EETH
		case *gopacket.Payload:
			v.Payload = x.Payload()
		}
	}
	return v
}

// TestGopacketNewPacket decodes every valid corpus frame (IPv4, IPv6,
// SRv6 with and without SRH, VLAN, trimmed) with gopacket.NewPacket and
// compares each MRC layer with wire.Codec.Decode.
func TestGopacketNewPacket(t *testing.T) {
	valid, err := corpus.Valid(wire.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range valid {
		var p wire.Packet
		if err := wire.Default.Decode(e.Frame, &p); err != nil {
			t.Fatal(err)
		}
		pk := gopacket.NewPacket(e.Frame, layers.LayerTypeEthernet, gopacket.Default)
		if el := pk.ErrorLayer(); el != nil {
			t.Errorf("%s: %v", e.Name, el.Error())
			continue
		}
		if pk.Layer(gopkt.LayerTypeBTH) == nil {
			t.Errorf("%s: no BTH layer; layers %v", e.Name, pk.Layers())
			continue
		}
		if diff := cmp.Diff(wireView(&p), packetView(pk)); diff != "" {
			t.Errorf("%s: (-wire +gopacket)\n%s", e.Name, diff)
		}
	}
}

// TestDecodingLayerParser decodes every valid corpus frame with a
// DecodingLayerParser holding Layers and compares with wire.
func TestDecodingLayerParser(t *testing.T) {
	valid, err := corpus.Valid(wire.Default)
	if err != nil {
		t.Fatal(err)
	}
	var (
		eth     layers.Ethernet
		dot1q   layers.Dot1Q
		ip4     layers.IPv4
		ip6     layers.IPv6
		udp     layers.UDP
		payload gopacket.Payload
	)
	l := gopkt.NewLayers(nil)
	dl := append([]gopacket.DecodingLayer{&eth, &dot1q, &ip4, &ip6, &udp, &payload}, l.DecodingLayers()...)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, dl...)
	var decoded []gopacket.LayerType
	for _, e := range valid {
		var p wire.Packet
		if err := wire.Default.Decode(e.Frame, &p); err != nil {
			t.Fatal(err)
		}
		if err := parser.DecodeLayers(e.Frame, &decoded); err != nil {
			t.Errorf("%s: %v (decoded %v)", e.Name, err, decoded)
			continue
		}
		v := layerView{BTH: l.BTH.BTH, ICRC: l.BTH.ICRC, Trimmed: l.BTH.Trimmed}
		for _, typ := range decoded {
			switch typ {
			case gopkt.LayerTypeMETH:
				v.METH = &l.METH.METH
			case gopkt.LayerTypeTSETH:
				v.TSETH = &l.TSETH.TSETH
			case gopkt.LayerTypeRETH:
				v.RETH = &l.RETH.RETH
			case gopkt.LayerTypeImmDt:
				v.ImmDt = &l.ImmDt.Imm
			case gopkt.LayerTypeAETH:
				v.AETH = &l.AETH.AETH
			case gopkt.LayerTypeSETH:
				v.SETH = &l.SETH.SETH
			case gopkt.LayerTypeNETH:
				v.NETH = &l.NETH.NETH
			case gopkt.LayerTypePETH:
				v.PETH = &l.PETH.PETH
			case gopkt.LayerTypeERTH:
				v.ERTH = &l.ERTH.ERTH
			case gopkt.LayerTypeEETH:
				v.EETH = &l.EETH.EETH
			case gopacket.LayerTypePayload:
				v.Payload = payload.Payload()
			}
		}
		if diff := cmp.Diff(wireView(&p), v); diff != "" {
			t.Errorf("%s: (-wire +parser)\n%s", e.Name, diff)
		}
		if p.SRv6 && p.HasSRH && l.SRH.NSegments != int(p.SRH.LastEntry)+1 {
			t.Errorf("%s: SRH layer has %d segments, wire %d", e.Name, l.SRH.NSegments, p.SRH.LastEntry+1)
		}
		if p.SRv6 && ip6.DstIP.String() != "fd00::b" {
			t.Errorf("%s: the parser did not reach the inner IPv6 header (dst %v)", e.Name, ip6.DstIP)
		}
	}
}

// TestSerializeFrame rebuilds every valid frame from its
// gopacket layers and checks the bytes equal the wire encoder's: the
// layers serialize with wire's Append methods, and SerializeFrame
// computes the ICRC (WIRE-ICRC-1) and zeroes the UDP checksum (WIRE-UDP-3).
func TestSerializeFrame(t *testing.T) {
	valid, err := corpus.Valid(wire.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range valid {
		var p wire.Packet
		_ = wire.Default.Decode(e.Frame, &p)
		if _, udp, _ := p.Offsets(); udp+int(p.UDP.Length) != len(e.Frame) {
			continue // a trim that kept the original lengths: FixLengths would fix them
		}
		pk := gopacket.NewPacket(e.Frame, layers.LayerTypeEthernet, gopacket.Default)
		var sl []gopacket.SerializableLayer
		var net gopacket.NetworkLayer
		for _, l := range pk.Layers() {
			switch x := l.(type) {
			case *layers.IPv4:
				net = x
			case *layers.IPv6:
				net = x
			case *layers.IPv6Routing:
				// gopacket's routing layer cannot rebuild an SRH; ours can.
				var s gopkt.SRH
				if err := s.DecodeFromBytes(x.Contents, gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				sl = append(sl, &s)
				continue
			case *layers.UDP:
				if err := x.SetNetworkLayerForChecksum(net); err != nil {
					t.Fatal(err)
				}
			}
			s, ok := l.(gopacket.SerializableLayer)
			if !ok {
				t.Fatalf("%s: %T is not serializable", e.Name, l)
			}
			sl = append(sl, s)
		}
		buf := gopacket.NewSerializeBuffer()
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopkt.SerializeFrame(nil, buf, opts, sl...); err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if got := buf.Bytes(); !bytes.Equal(got, e.Frame) {
			t.Errorf("%s: serialized\n% x\nwant\n% x", e.Name, got, e.Frame)
		}
	}
}

// TestLayersOnMalformed decodes every malformed frame both ways: errors,
// never panics, and no MRC layer beyond the point wire stopped at.
func TestLayersOnMalformed(t *testing.T) {
	bad, err := corpus.Malformed(wire.Default)
	if err != nil {
		t.Fatal(err)
	}
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
	parser.IgnoreUnsupported = true
	var decoded []gopacket.LayerType
	for _, e := range bad {
		pk := gopacket.NewPacket(e.Frame, layers.LayerTypeEthernet, gopacket.Default)
		_ = pk.Layers()
		_ = parser.DecodeLayers(e.Frame, &decoded)
	}
}

// TestUnlinkedLayersStop checks that METH declared on its own (outside
// Layers) stops the parser rather than guessing what follows it.
func TestUnlinkedLayersStop(t *testing.T) {
	var m gopkt.METH
	if err := m.DecodeFromBytes(make([]byte, 40), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if m.NextLayerType() != gopacket.LayerTypeZero {
		t.Errorf("unlinked METH continues with %v", m.NextLayerType())
	}
}
