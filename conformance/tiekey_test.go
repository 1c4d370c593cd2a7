package conformance

import (
	"math/rand"
	"net/netip"
	"slices"
	"testing"
	"time"

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

// TestPlainBTHFastAsAny: plainBTH's answer for untagged IPv4 and IPv6
// frames, taken without ipHeader, is plainBTHAny's, for frames with a
// byte of their headers changed at random (EtherType, IHL, protocol,
// fragment fields, ports) and cut at random.
func TestPlainBTHFastAsAny(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	e := newEngine(DefaultPICS())
	var frames [][]byte
	for _, v6 := range []bool{false, true} {
		p := wire.Packet{IsIPv6: v6}
		p.IP4 = wire.IPv4{TTL: 64, Src: [4]byte{10, 0, 0, 1}, Dst: [4]byte{10, 0, 0, 2}}
		p.IP6 = wire.IPv6{HopLimit: 64, Src: [16]byte{0xfd, 15: 1}, Dst: [16]byte{0xfd, 15: 2}}
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, DestQP: 0x101, PSN: 7}
		p.RETH, p.Payload = wire.RETH{DMALength: 4}, []byte{1, 2, 3, 4}
		b, err := wire.Default.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	values := []byte{0, 0x05, 0x08, 0x11, 0x12, 0x20, 0x3F, 0x40, 0x45, 0x46, 0x81, 0x86, 0xdd, 0xFF}
	for i := range 50000 {
		b := slices.Clone(frames[rng.Intn(len(frames))])
		for range rng.Intn(3) {
			off := 12 + rng.Intn(50)
			b[off] = values[rng.Intn(len(values))]
			if rng.Intn(4) == 0 {
				b[off] = byte(rng.Intn(256))
			}
		}
		if rng.Intn(4) == 0 {
			b = b[:rng.Intn(len(b)+1)]
		}
		ip, bth, ok := e.plainBTH(b)
		ip2, bth2, ok2 := e.plainBTHAny(b)
		if ip != ip2 || bth != bth2 || ok != ok2 {
			t.Fatalf("seed %d, frame %d % x: plainBTH %d, %d, %v; plainBTHAny %d, %d, %v", seed, i, b[:min(len(b), 64)], ip, bth, ok, ip2, bth2, ok2)
		}
	}
}
