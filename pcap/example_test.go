package pcap_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Read a capture (pcap or pcapng, gzip or not) frame by frame and decode
// each frame with the wire codec.
func ExampleDecoder_Each() {
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	d := &pcap.Decoder{}
	_ = d.Each(r, func(rec *pcap.Record) error {
		if rec.Number <= 3 {
			fmt.Println(rec.Number, rec.Iface.Name, rec.Packet.BTH.Opcode, rec.Packet.BTH.PSN, len(rec.Packet.Payload))
		}
		return nil
	})
	// Output:
	// 1 tx/plane0 RDMA_WRITE_FIRST 100 64
	// 2 tx/plane1 RDMA_WRITE_MIDDLE 101 64
	// 3 tx/plane2 RDMA_WRITE_LAST 102 30
}

// Print records the way mrc-conform decode does.
func ExamplePrinter() {
	r, err := pcap.Open("testdata/malformed.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	d := &pcap.Decoder{}
	p := pcap.NewPrinter(os.Stdout, pcap.OutputText, nil, d.EVMode)
	_ = d.Each(r, func(rec *pcap.Record) error {
		if rec.Number == 6 || rec.Number == 15 {
			return p.Print(rec)
		}
		return nil
	})
	_ = p.Flush()
	// Output:
	//     6 0.000005000 tx/plane1        10.0.0.1 → 10.0.0.2       48 MALFORMED BTH@42 truncated: need 12 bytes, have 6 [WIRE-BTH-1]
	//    15 0.000014000 tx/plane0        10.0.0.1 → 10.0.0.2       94 ev=0x0000c0de RDMA_WRITE_ONLY       qp=0x000011 psn=200 msn=1 va=0x00007f0000000000 len=16 dma_len=16 [A] !WIRE-BTH-7
}

// Write a pcapng file with one interface per plane and a verdict comment
// on a packet, then read it back.
func ExampleNewWriter() {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "nic-a", Plane: 0}, pcap.Interface{Point: "nic-a", Plane: 1})
	if err != nil {
		panic(err)
	}
	ts := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	_ = w.WritePacket(ts, 1, []byte{0xde, 0xad}, "verdict: WIRE-BTH-7 violated")
	_ = w.Flush()

	r, err := pcap.NewReader(&buf)
	if err != nil {
		panic(err)
	}
	var f pcap.Frame
	_ = r.Next(&f)
	in := r.Interface(f.Interface)
	fmt.Printf("%s plane %d: %d bytes, %q\n", in.Name, in.Plane, len(f.Data), f.Comments[0])
	// Output:
	// nic-a/plane1 plane 1: 2 bytes, "verdict: WIRE-BTH-7 violated"
}

// Register the MRC layers for the profile's UDP ports, then decode a
// frame with gopacket.
func ExampleRegister() {
	if _, err := pcap.Register(spec.DefaultProfile()); err != nil {
		panic(err)
	}
	p := &wire.Packet{}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, DestQP: 0x11, PSN: 42}
	p.IP4.FlagsFrag = 0x4000
	p.RETH.DMALength = 3
	p.Payload = []byte("abc")
	frame, err := wire.Default.Append(nil, p)
	if err != nil {
		panic(err)
	}
	pk := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	bth := pk.Layer(pcap.LayerTypeBTH).(*pcap.BTH)
	reth := pk.Layer(pcap.LayerTypeRETH).(*pcap.RETH)
	fmt.Println(bth.Opcode, bth.PSN, reth.DMALength, string(pk.ApplicationLayer().Payload()))
	// Output:
	// RDMA_WRITE_ONLY 42 3 abc
}

// Summarise a capture per QP and per EV.
func ExampleStats() {
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	st := pcap.NewStats()
	d := &pcap.Decoder{}
	_ = d.Each(r, func(rec *pcap.Record) error { st.Add(rec); return nil })
	q := st.QPs[0x22]
	fmt.Println(q.SACKs, q.SACKHoles, q.NACKs[wire.NACKTrimmed])
	for _, tr := range st.EVs[0xc002].Transitions {
		fmt.Println(tr.From, "->", tr.To, "by", tr.Cause)
	}
	// Output:
	// 4 5 1
	// GOOD -> ASSUMED_BAD by SACK m=ALWAYS_SKIP
	// ASSUMED_BAD -> GOOD by SACK m=NONE
}

// Count the holes a SACK reports.
func ExampleSACKGaps() {
	s := wire.SETH{CACKPSN: 100, SACKBitmap: 0b1011_0010} // base 100: 101, 104, 105, 107 received
	fmt.Println(pcap.SACKGaps(&s))
	// Output:
	// 3 4
}

// Generate the Wireshark dissector for a profile.
func ExampleWriteLua() {
	var buf bytes.Buffer
	if err := pcap.WriteLua(&buf, wire.Default); err != nil {
		panic(err)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "local PORTS") {
			fmt.Println(l)
		}
	}
	// Output:
	// local PORTS = {4791, 4971}
}

// Decode frames with a reusable DecodingLayerParser: Layers links the MRC
// layers to their BTH, and its SRH layer crosses SRv6 outer headers.
func ExampleNewLayers() {
	var (
		eth     layers.Ethernet
		ip4     layers.IPv4
		ip6     layers.IPv6
		udp     layers.UDP
		payload gopacket.Payload
	)
	l := pcap.NewLayers(nil)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet,
		append([]gopacket.DecodingLayer{&eth, &ip4, &ip6, &udp, &payload}, l.DecodingLayers()...)...)

	p := &wire.Packet{IsIPv6: true, SRv6: true, HasSRH: true}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnlyImm, TSPresent: true, DestQP: 0x11, PSN: 7}
	p.METH.RQMSN, p.ImmDt, p.RETH.DMALength, p.Payload = 1, 0xfeed, 2, []byte("hi")
	frame, err := wire.Default.Append(nil, p)
	if err != nil {
		panic(err)
	}
	var decoded []gopacket.LayerType
	if err := parser.DecodeLayers(frame, &decoded); err != nil {
		panic(err)
	}
	fmt.Println(decoded)
	fmt.Printf("psn %d imm %#x payload %q\n", l.BTH.PSN, l.ImmDt.Imm, payload.Payload())
	// Output:
	// [Ethernet IPv6 IPv6Routing IPv6 UDP MRC-BTH MRC-METH MRC-TSETH MRC-RETH MRC-ImmDt Payload]
	// psn 7 imm 0xfeed payload "hi"
}

// Read a capture with gopacket: the Reader is a PacketDataSource, so
// gopacket.NewPacketSource decodes pcap, pcapng and gzip-compressed
// files through it, and the registered MRC layers decode each frame.
func ExampleReader_ReadPacketData() {
	if _, err := pcap.Register(spec.DefaultProfile()); err != nil {
		panic(err)
	}
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	src := gopacket.NewPacketSource(r, layers.LinkTypeEthernet)
	n, naks := 0, 0
	for pk := range src.Packets() {
		n++
		if bth, ok := pk.Layer(pcap.LayerTypeBTH).(*pcap.BTH); ok && bth.Opcode == wire.OpNACK {
			naks++
		}
		if n == 1 {
			fmt.Println(pk.Metadata().Length, pk.Layer(pcap.LayerTypeBTH).(*pcap.BTH).Opcode)
		}
	}
	fmt.Println(n, "frames,", naks, "NACKs, link type", r.LinkType())
	// Output:
	// 142 RDMA_WRITE_FIRST
	// 32 frames, 7 NACKs, link type Ethernet
}

// Select frames with a display filter, as tshark -Y does, and show a bad
// expression's error.
func ExampleCompileFilter() {
	f, err := pcap.CompileFilter("mrc.bth.opcode == RELIABILITY_NACK && mrc.neth.nack_reason <= 2", nil)
	if err != nil {
		panic(err)
	}
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	var d pcap.Decoder
	var frames []int
	if err := d.Each(r, func(rec *pcap.Record) error {
		if f.Match(rec) {
			frames = append(frames, rec.Number)
		}
		return nil
	}); err != nil {
		panic(err)
	}
	fmt.Println(frames, f)
	_, err = pcap.CompileFilter("mrc.bth.pns == 5", nil)
	fmt.Println(err)
	fmt.Println(err.(*pcap.FilterError).Caret())
	// Output:
	// [22 23] mrc.bth.opcode == 221 && mrc.neth.nack_reason <= 2
	// filter column 1: unknown field: "mrc.bth.pns" is not a field; did you mean mrc.bth.psn?
	// mrc.bth.pns == 5
	// ^
}

// Keep frames without copying them, and come back to one later: a file
// Open opens retains its frames until they are released, and
// a Mark taken before a frame brings a Reader back to it.
func ExampleReader_Retain() {
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	fmt.Println("retains:", r.Retain())
	var kept []pcap.Frame // held by reference
	var third pcap.Mark
	var f pcap.Frame
	for r.Next(&f) == nil {
		if f.Number == 2 {
			third = r.Mark()
		}
		if f.Number <= 4 {
			kept = append(kept, f)
		}
	}
	fmt.Println("kept", len(kept), "frames; frame 1 still holds", len(kept[0].Data), "bytes")
	r.Release(kept[len(kept)-1].Offset) // frames before the last kept one are no longer used
	if r.Seek(third) && r.Next(&f) == nil {
		fmt.Println("back at frame", f.Number, "of", len(f.Data), "bytes")
	}
	// Output:
	// retains: true
	// kept 4 frames; frame 1 still holds 142 bytes
	// back at frame 3 of 110 bytes
}
