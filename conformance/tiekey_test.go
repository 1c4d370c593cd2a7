package conformance

import (
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestTieKeyPlainFields: the key of a plain frame (tieKey reads its BTH
// and cack_psn in place) holds the destination QP, the PSN (a SACK's
// cack_psn), the kind and the node pair the decoded frame holds, for a
// write and a SACK over IPv4 and IPv6 whose bytes around those fields are
// all set, so that a field read at the wrong offset or with the wrong
// mask differs.
func TestTieKeyPlainFields(t *testing.T) {
	e := newEngine(DefaultPICS())
	in := &pcap.Interface{LinkType: pcap.LinkTypeEthernet}
	for _, v6 := range []bool{false, true} {
		for _, op := range []wire.Opcode{wire.OpWriteOnly, wire.OpSACK} {
			p := wire.Packet{IsIPv6: v6}
			p.IP4 = wire.IPv4{TTL: 64, Src: [4]byte{10, 0, 0, 1}, Dst: [4]byte{10, 0, 0, 2}}
			p.IP6 = wire.IPv6{HopLimit: 64, Src: [16]byte{0xfd, 15: 1}, Dst: [16]byte{0xfd, 15: 2}}
			p.BTH = wire.BTH{Opcode: op, PKey: 0xF1F2, Variant: 0xE3, DestQP: 0xABCDEF, AckReq: true, PSN: 0x123456}
			if op == wire.OpSACK {
				p.SETH = wire.SETH{Type: 0xF, Entropy: 0xFFFFFFFF, SPDCID: 0xFFFF, DPDCID: 0xFFFF, Rsvd2: 0xFF,
					CACKPSN: 0x654321, CCType: 0xF, CCFlags: 0xF, MPR: 0xFF}
			} else {
				p.RETH, p.Payload = wire.RETH{VA: ^uint64(0), RKey: ^uint32(0), DMALength: 4}, []byte{1, 2, 3, 4}
			}
			b, err := wire.Default.Append(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			var d wire.Packet
			if err := wire.Default.Decode(b, &d); err != nil {
				t.Fatal(err)
			}
			want := tieKey{rank: 1, mrc: true, kind: seqWrite, qp: d.BTH.DestQP, pos: d.BTH.PSN}
			src, dst := netip.AddrFrom4(d.IP4.Src), netip.AddrFrom4(d.IP4.Dst)
			if v6 {
				src, dst = netip.AddrFrom16(d.IP6.Src), netip.AddrFrom16(d.IP6.Dst)
			}
			want.pair = e.nodeHash(src)*31 ^ e.nodeHash(dst)
			if op == wire.OpSACK {
				want.kind, want.pos = seqCum, d.SETH.CACKPSN
			}
			var k tieKey
			e.tieKey(&pcap.Frame{Data: b, Length: len(b)}, in, &k)
			if k != want {
				t.Errorf("IPv6 %v, %v: key %+v, want %+v", v6, op, k, want)
			}
		}
	}
}
