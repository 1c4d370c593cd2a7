package gopkt_test

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/pcap/gopkt"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Register the MRC layers for the profile's UDP ports, then decode a
// frame with gopacket.
func ExampleRegister() {
	if _, err := gopkt.Register(spec.DefaultProfile()); err != nil {
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
	bth := pk.Layer(gopkt.LayerTypeBTH).(*gopkt.BTH)
	reth := pk.Layer(gopkt.LayerTypeRETH).(*gopkt.RETH)
	fmt.Println(bth.Opcode, bth.PSN, reth.DMALength, string(pk.ApplicationLayer().Payload()))
	// Output:
	// RDMA_WRITE_ONLY 42 3 abc
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
	l := gopkt.NewLayers(nil)
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

// Read a capture with gopacket: a Source over a pcap.Reader is a
// PacketDataSource, so gopacket.NewPacketSource decodes pcap, pcapng and
// gzip-compressed files through it, and the registered MRC layers decode
// each frame.
func ExampleSource_ReadPacketData() {
	if _, err := gopkt.Register(spec.DefaultProfile()); err != nil {
		panic(err)
	}
	r, err := pcap.Open("../testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	s := gopkt.NewSource(r)
	src := gopacket.NewPacketSource(s, layers.LinkTypeEthernet)
	n, naks := 0, 0
	for pk := range src.Packets() {
		n++
		if bth, ok := pk.Layer(gopkt.LayerTypeBTH).(*gopkt.BTH); ok && bth.Opcode == wire.OpNACK {
			naks++
		}
		if n == 1 {
			fmt.Println(pk.Metadata().Length, pk.Layer(gopkt.LayerTypeBTH).(*gopkt.BTH).Opcode)
		}
	}
	fmt.Println(n, "frames,", naks, "NACKs, link type", s.LinkType())
	// Output:
	// 142 RDMA_WRITE_FIRST
	// 32 frames, 7 NACKs, link type Ethernet
}
