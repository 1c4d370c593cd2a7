package netio_test

import (
	"fmt"

	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/wire"
)

// IsMRC is how the tester and the peer pick their frames out of an
// interface's traffic: IP/UDP to one of the profile's ports, with the node
// it is for.
func ExampleIsMRC() {
	p := wire.Packet{BTH: wire.BTH{Opcode: wire.OpWriteOnly, DestQP: 0x100}}
	p.IP4.Src, p.IP4.Dst, p.IP4.TTL = [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 64
	p.UDP.SrcPort, p.UDP.DstPort = 0xC0DE, 4791
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		fmt.Println(err)
		return
	}
	dst, ok := netio.IsMRC(frame, []uint16{4791, 4971})
	_, other := netio.IsMRC(frame, []uint16{4971})
	fmt.Println(dst, ok, other)
	// Output: 10.0.0.2 true false
}
