package wire_test

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
)

// Build an RDMA WRITE_ONLY over IPv6 with its EV striped across the UDP
// source port and flow label, then decode it back.
func Example() {
	p := wire.Packet{IsIPv6: true}
	p.IP6.HopLimit = 64
	p.SetEV(0x00070101, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: 42, AckReq: true}
	p.METH = wire.METH{MSN: 1}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 7, DMALength: 5}
	p.Payload = []byte("hello")
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		panic(err)
	}

	var got wire.Packet
	if err := wire.Default.Decode(frame, &got); err != nil {
		panic(err)
	}
	fmt.Printf("%d bytes, %s, EV %#08x, pad %d, payload %q, ICRC ok %v\n", len(frame), got.String(),
		got.EV(wire.EVModeSTEV), got.BTH.PadCount, got.Payload, wire.Default.VerifyICRC(frame, &got))
	fmt.Println("violations:", len(wire.Default.Check(frame, &got, nil)))
	// Output:
	// 106 bytes, RDMA_WRITE_ONLY qp=0x000011 psn=42 len=5, EV 0x00070101, pad 3, payload "hello", ICRC ok true
	// violations: 0
}

// Decode errors name the header, offset, field and requirement.
func ExampleCodec_Decode_error() {
	var p wire.Packet
	err := wire.Default.Decode(make([]byte, 20), &p)
	fmt.Println(err)
	// Output:
	// wire: Ethernet at offset 12: field ether_type: unsupported: EtherType 0x0000 is neither IPv4 nor IPv6 (WIRE-ENC-1)
}

// The uN behaviour of an SRv6 uSID switch: consume the active uSID.
func ExampleUSIDAddr_Shift() {
	a, _ := wire.NewUSIDAddr(0xfcbb0000, 0x0100, 0x0200)
	fmt.Printf("%x -> %x\n", a.USIDs(), a.Shift().USIDs())
	// Output:
	// [100 200] -> [200]
}

// Print the headers below MRC's field by field, by their Wireshark names,
// from the link header table.
func ExamplePacket_WalkLink() {
	p := wire.Packet{Eth: wire.Ethernet{HasVLAN: true, VLANTCI: 100}}
	p.IP4 = wire.IPv4{TTL: 64, Src: [4]byte{10, 0, 0, 1}, Dst: [4]byte{10, 0, 0, 2}}
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: 0x11, PSN: 42}
	p.SetEV(0x10001, wire.EVModeSTEV)
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		panic(err)
	}
	var got wire.Packet
	if err := wire.Default.Decode(frame, &got); err != nil {
		panic(err)
	}
	got.WalkLink(frame, func(h *wire.Header, off int) {
		fmt.Printf("%s at %d:", h.Name, off)
		for _, f := range h.Fields {
			switch {
			case f.Wireshark == "":
			case f.Addr:
				fmt.Printf(" %s=%x", f.Wireshark, f.Bytes(frame[off:]))
			default:
				fmt.Printf(" %s=%d", f.Wireshark, f.Value(frame[off:]))
			}
		}
		fmt.Println()
	})
	// Output:
	// Ethernet802.1Q at 0: eth.dst=000000000000 eth.src=000000000000 eth.type=33024 vlan.etype=2048
	// IPv4 at 18: ip.version=4 ip.src=0a000001 ip.dst=0a000002 ip.dsfield.dscp=0 ip.dsfield.ecn=0 ip.len=48 ip.id=0 ip.ttl=64 ip.checksum=26299
	// UDP at 38: udp.srcport=1 udp.dstport=4791 udp.length=28 udp.checksum=0
}

// A write a capture's snap length cut after its headers (dumpcap -s 128)
// decodes from them: the frame rebuilt to its length on the wire, every
// length field holding, its payload's length known, its bytes not.
func ExampleCodec_DecodeCut() {
	p := wire.Packet{}
	p.IP4 = wire.IPv4{TTL: 64, FlagsFrag: 0x4000}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: 42}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 7, DMALength: 1024}
	p.Payload = make([]byte, 1024)
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		panic(err)
	}
	kept := frame[:128] // what the capture holds
	var got wire.Packet
	var e wire.Error
	var buf []byte
	data, cut, err := wire.Default.DecodeCut(kept, len(frame), &buf, &got, &e)
	fmt.Println(len(data), cut, err, got.String())
	// Output:
	// 1102 true <nil> RDMA_WRITE_ONLY qp=0x000011 psn=42 len=1024
}
