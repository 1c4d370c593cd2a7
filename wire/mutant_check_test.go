package wire

// Tests written against mutants of check.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
)

// TestMutantSameICRC (WIRE-ICRC-1, WIRE-ICRC-4): two codecs share an ICRC
// verdict only when both the algorithm and the masking of the UDP source
// port agree; a difference in either makes them differ.
func TestMutantSameICRC(t *testing.T) {
	mk := func(edit func(*spec.Profile)) *Codec {
		p := spec.DefaultProfile()
		edit(&p)
		c, err := NewCodec(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := mk(func(*spec.Profile) {})
	if !base.SameICRC(mk(func(*spec.Profile) {})) {
		t.Error("two default codecs: SameICRC false")
	}
	alg := mk(func(p *spec.Profile) { p.ICRC = spec.ICRCEmu })
	mask := mk(func(p *spec.Profile) { p.ICRCMaskUDPSrcPort = !p.ICRCMaskUDPSrcPort })
	if base.SameICRC(alg) || alg.SameICRC(base) {
		t.Error("another ICRC algorithm: SameICRC true")
	}
	if base.SameICRC(mask) || mask.SameICRC(base) {
		t.Error("the UDP source port masked in one only: SameICRC true")
	}
}

// TestMutantIPv4ViolationOffsets (WIRE-ENC-1): a wrong IPv4 header
// checksum is reported at the checksum field, 10 bytes into the header,
// and a fragment offset at the flags field, 6 bytes in: frame offsets 24
// and 20 behind a 14-byte Ethernet header.
func TestMutantIPv4ViolationOffsets(t *testing.T) {
	var p Packet
	for _, s := range samplePackets() {
		if s.BTH.Opcode == OpWriteOnly && !s.IsIPv6 && !s.Eth.HasVLAN {
			p = s
		}
	}
	for _, tc := range []struct {
		field string
		off   int
		edit  func(b []byte)
	}{
		{"checksum", 24, func(b []byte) { b[24] ^= 1 }},
		{"flags", 20, func(b []byte) { b[21] = 1 }}, // fragment offset 1, DF still set
	} {
		q := p
		b, d := frameOf(t, &q, func(b []byte) []byte { tc.edit(b); return b })
		found := false
		for _, v := range Default.CheckHeaders(b, d, nil) {
			if v.Req == ReqENC1 && v.Field == tc.field {
				found = true
				if v.Header != "IPv4" || v.Offset != tc.off {
					t.Errorf("%s: %s at offset %d, want IPv4 at %d", tc.field, v.Header, v.Offset, tc.off)
				}
			}
		}
		if !found {
			t.Errorf("%s: no WIRE-ENC-1 violation of the %s field", tc.field, tc.field)
		}
	}
}

// violationCase is a header rule broken on purpose (op 0: the SRv6 sample)
// and the violation expected.
type violationCase struct {
	name  string
	op    Opcode
	edit  func(p *Packet)
	raw   func(b []byte) []byte
	req   ReqID
	hdr   string
	off   int
	field string
	msg   string
}

// TestMutantViolationOffsets: each header rule's violation names the
// header and points at the field it judges, as a frame offset (an IPv4
// frame without VLAN tags: IPv4 at 14, UDP at 34, BTH at 42), so that a
// report leads to the byte at fault; the length rules name by how much
// the lengths disagree.
func TestMutantViolationOffsets(t *testing.T) {
	find := func(op Opcode) Packet {
		for _, s := range samplePackets() {
			if s.BTH.Opcode == op && !s.IsIPv6 && !s.Eth.HasVLAN {
				return s
			}
		}
		t.Fatalf("no IPv4 sample of %s", op)
		return Packet{}
	}
	grow := func(b []byte) []byte { // 4 more bytes in the IPv4 datagram than UDP says
		binary.BigEndian.PutUint16(b[16:], binary.BigEndian.Uint16(b[16:])+4)
		return append(b, 0, 0, 0, 0)
	}
	cases := []violationCase{
		{"DF clear", OpWriteOnly, func(p *Packet) { p.IP4.FlagsFrag = 0 }, nil, ReqENC5, "IPv4", 20, "flags", ""},
		{"UDP length short", OpWriteOnly, nil, grow, ReqLEN1, "UDP", 38, "length", "leaves 4 bytes"},
		{"UDP checksum", OpWriteOnly, func(p *Packet) { p.UDP.Checksum = 0x1234 }, nil, ReqUDP3, "UDP", 40, "checksum", ""},
		{"tver", OpWriteOnly, func(p *Packet) { p.BTH.TVer = 1 }, nil, ReqBTH3, "BTH", 43, "tver", ""},
		{"BTH reserved", OpWriteOnly, func(p *Packet) { p.BTH.Rsvd = 1 }, nil, ReqBTH7, "BTH", 50, "reserved", ""},
		{"QPN 2 for data", OpWriteOnly, func(p *Packet) { p.BTH.DestQP = EndpointQPN }, nil, ReqBTH8, "BTH", 47, "dest_qp", ""},
		{"endpoint PSN high bits", OpEndpointReq, func(p *Packet) { p.BTH.PSN = 0x010000 }, nil, ReqEP1, "BTH", 51, "psn", ""},
		{"trimmed SACK", OpSACK, func(p *Packet) { p.IP4.TOS = Default.Profile().DSCP.Trimmed << 2 }, nil, ReqTRIM1, OpSACK.String(), 15, "dscp", ""},
		{"SACK PSN not cack", OpSACK, func(p *Packet) { p.BTH.PSN = 1 }, nil, ReqSETH10, "BTH", 50, "psn", ""},
		{"NACK PSN not nack_psn", OpNACK, func(p *Packet) { p.BTH.PSN = 1 }, nil, ReqNETH4, "BTH", 51, "psn", ""},
		{"probe PSN", OpProbe, func(p *Packet) { p.BTH.PSN = 9 }, nil, ReqPETH2, "BTH", 51, "psn", ""},
		{"TS on SACK", OpSACK, func(p *Packet) { p.BTH.TSPresent = true }, nil, ReqBTH6, "BTH", 50, "ts", ""},
		{"RTX on ACK", OpAcknowledge, func(p *Packet) { p.BTH.Retransmit = true }, nil, ReqBTH5, "BTH", 50, "rtx", ""},
		{"pad count on ACK", OpAcknowledge, nil, func(b []byte) []byte { b[43] |= 0x30; return b }, ReqBTH9, "BTH", 43, "pad_cnt", ""},
		{"bytes after the ACK's headers", OpAcknowledge, nil, func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[16:], binary.BigEndian.Uint16(b[16:])+4) // IPv4 total length
			binary.BigEndian.PutUint16(b[38:], binary.BigEndian.Uint16(b[38:])+4) // UDP length
			n := len(b) - ICRCLen
			return append(b[:n:n], append([]byte{0, 0, 0, 0}, b[n:]...)...)
		}, ReqOP2, OpAcknowledge.String(), 58, "", "4 bytes follow"},
		{"write pad count", OpWriteOnly, nil, func(b []byte) []byte { // pad_cnt 0, one byte more before the ICRC
			b[43] &^= 0x30
			binary.BigEndian.PutUint16(b[16:], binary.BigEndian.Uint16(b[16:])+1)
			binary.BigEndian.PutUint16(b[38:], binary.BigEndian.Uint16(b[38:])+1)
			n := len(b) - ICRCLen
			return append(b[:n:n], append([]byte{0}, b[n:]...)...)
		}, ReqBTH9, "BTH", 43, "pad_cnt", "pad count 0 with 1025 payload bytes, want 3"},
		{"empty middle", OpWriteMiddle, func(p *Packet) { p.Payload = nil }, nil, ReqPAY1, "payload", 74, "", ""},
		{"dma_length of an only", OpWriteOnly, func(p *Packet) { p.RETH.DMALength = 5000 }, nil, ReqPAY2, "RETH", 58, "dma_length", "dma_length 5000, payload 1021"},
		{"payload past dma_length", OpWriteFirst, func(p *Packet) { p.RETH.DMALength = 1000 }, nil, ReqPAY2, "RETH", 58, "dma_length", "exceeds"},
		{"TSETH reserved", OpWriteMiddle, func(p *Packet) { p.BTH.TSPresent, p.TSETH.Rsvd = true, 1 }, nil, ReqGEN2, "TSETH", 58, "reserved", ""},
		{"AETH bit 7", OpAcknowledge, func(p *Packet) { p.AETH.Syndrome = 0x9F }, nil, ReqAETH1, "AETH", 54, "syndrome", ""},
		{"SACK m = 3", OpSACK, func(p *Packet) { p.SETH.M = 3 }, nil, ReqSETH3, "SETH", 55, "m", ""},
		{"NACK reason", OpNACK, func(p *Packet) { p.NETH.Reason = 0x55 }, nil, ReqNETH2, "NETH", 56, "nack_reason", ""},
		{"ERTH op", OpEndpointReq, func(p *Packet) { p.ERTH.Op = 3 }, nil, ReqERTH1, "ERTH", 55, "op", ""},
		{"EETH op", OpEndpointResp, func(p *Packet) { p.EETH.Op = 3 }, nil, ReqEETH1, "EETH", 55, "op", ""},
	}
	var srv6 Packet // SRv6 without an SRH: the outer IPv6 header at 14, the inner at 54
	for _, s := range samplePackets() {
		if s.SRv6 && !s.HasSRH {
			srv6 = s
		}
	}
	cases = append(cases, violationCase{"outer payload length long", 0, nil, func(b []byte) []byte {
		binary.BigEndian.PutUint16(b[18:], binary.BigEndian.Uint16(b[18:])+4)
		return append(b, 0, 0, 0, 0)
	}, ReqLEN1, "IPv6", 18, "payload_length", "leaves 4 bytes after"})
	for _, tc := range cases {
		p := srv6
		if tc.op != 0 {
			p = find(tc.op)
		}
		if tc.edit != nil {
			tc.edit(&p)
		}
		t.Logf("case %s", tc.name)
		b, d := frameOf(t, &p, tc.raw)
		var got []Violation
		for _, v := range Default.CheckHeaders(b, d, nil) {
			if v.Req == tc.req {
				got = append(got, v)
			}
		}
		if len(got) != 1 || got[0].Header != tc.hdr || got[0].Offset != tc.off || got[0].Field != tc.field || !strings.Contains(got[0].Message(), tc.msg) {
			t.Errorf("%s: %v; want one %s violation of %s.%s at offset %d saying %q", tc.name, got, tc.req, tc.hdr, tc.field, tc.off, tc.msg)
		}
	}
}

// TestMutantSACKAlwaysSkipValid (WIRE-SETH-3): m = 2 (ALWAYS_SKIP) is a
// valid SACK m; only 3 is reserved.
func TestMutantSACKAlwaysSkipValid(t *testing.T) {
	for _, p := range samplePackets() {
		if p.BTH.Opcode != OpSACK {
			continue
		}
		p.SETH.M = MAlwaysSkip
		b, d := frameOf(t, &p, nil)
		if v := Default.Check(b, d, nil); len(v) != 0 {
			t.Errorf("SACK with m = ALWAYS_SKIP: %v, want no violation", v)
		}
	}
}

// TestMutantICRCViolationOffset (WIRE-ICRC-1): a wrong ICRC is reported at
// the ICRC, the frame's last 4 bytes.
func TestMutantICRCViolationOffset(t *testing.T) {
	p := samplePackets()[0]
	b, d := frameOf(t, &p, func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
	v := Default.Check(b, d, nil)
	if len(v) != 1 || v[0].Req != ReqICRC1 || v[0].Offset != len(b)-ICRCLen {
		t.Errorf("%v; want one WIRE-ICRC-1 violation at offset %d", v, len(b)-ICRCLen)
	}
}

// TestMutantAcceptPortsLimit (WIRE-UDP-1): a codec holds up to 8 accepted
// UDP destination ports, the 8th decoded as MRC; a profile with 9 is
// refused.
func TestMutantAcceptPortsLimit(t *testing.T) {
	p := spec.DefaultProfile()
	p.AcceptUDPDstPorts = []uint16{4791, 4971, 5001, 5002, 5003, 5004, 5005, 5006}
	c, err := NewCodec(p)
	if err != nil {
		t.Fatalf("8 accepted ports: %v", err)
	}
	if !c.AcceptsPort(5006) {
		t.Error("the 8th accepted port is not accepted")
	}
	p.AcceptUDPDstPorts = append(p.AcceptUDPDstPorts, 5007)
	if _, err := NewCodec(p); err == nil {
		t.Error("9 accepted ports: no error")
	}
}

// frameOf encodes p with Default, passes the bytes through edit when it is
// not nil, and decodes the result: the frame and packet a check is given.
func frameOf(t *testing.T, p *Packet, edit func([]byte) []byte) ([]byte, *Packet) {
	t.Helper()
	b, err := Default.Append(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b = edit(b)
	}
	var d Packet
	if err := Default.Decode(b, &d); err != nil {
		t.Fatal(err)
	}
	return b, &d
}
