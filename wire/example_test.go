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
