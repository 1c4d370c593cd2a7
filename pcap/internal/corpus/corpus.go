// Package corpus builds the checked-in test captures of package pcap from
// the wire codec, and renders every file that `go generate ./pcap`
// writes: the captures, the golden decoder outputs and the Wireshark
// dissector. Tests call Files and compare with the checked-in copies, so
// a stale file fails the build rather than drifting.
package corpus

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Entry is one frame of a corpus capture. Name is written as the
// packet's comment, so the capture explains itself in Wireshark.
type Entry struct {
	Name  string
	Iface int
	Frame []byte
}

// Interfaces are the capture interfaces of the corpus files: a sender
// and a receiver capture point on each of four planes.
func Interfaces() []pcap.Interface {
	var in []pcap.Interface
	for _, pt := range []string{"tx", "rx"} {
		for pl := 0; pl < 4; pl++ {
			in = append(in, pcap.Interface{Point: pt, Plane: pl,
				Description: fmt.Sprintf("MRC %s capture point, plane %d", pt, pl)})
		}
	}
	return in
}

// Start is the timestamp of the first corpus frame; frames are 1 µs apart.
var Start = time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)

var (
	macA = [6]byte{0x02, 0, 0, 0, 0, 0x0a}
	macB = [6]byte{0x02, 0, 0, 0, 0, 0x0b}
	v4A  = [4]byte{10, 0, 0, 1}
	v4B  = [4]byte{10, 0, 0, 2}
	v6A  = [16]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a}
	v6B  = [16]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b}
)

// builder makes frames with c and remembers the first error.
type builder struct {
	c   *wire.Codec
	err error
	out []Entry
}

type netKind int

const (
	v4 netKind = iota
	v6
	srv6    // outer IPv6 without SRH
	srv6SRH // outer IPv6 with an SRH
	vlan4   // 802.1Q-tagged IPv4
)

// pkt returns a packet skeleton on the given network from A to B, or B
// to A when rev, with EV ev and DSCP dscp.
func (b *builder) pkt(n netKind, rev bool, ev uint32, dscp uint8) *wire.Packet {
	p := &wire.Packet{}
	p.Eth.Src, p.Eth.Dst = macA, macB
	if rev {
		p.Eth.Src, p.Eth.Dst = macB, macA
	}
	switch n {
	case v4, vlan4:
		p.IP4 = wire.IPv4{TOS: dscp << 2, TTL: 64, Src: v4A, Dst: v4B, FlagsFrag: 0x4000}
		if rev {
			p.IP4.Src, p.IP4.Dst = v4B, v4A
		}
		p.Eth.HasVLAN, p.Eth.VLANTCI = n == vlan4, 0x6064
	default:
		p.IsIPv6 = true
		p.IP6 = wire.IPv6{TrafficClass: dscp << 2, HopLimit: 64, Src: v6A, Dst: v6B}
		if rev {
			p.IP6.Src, p.IP6.Dst = v6B, v6A
		}
	}
	if n == srv6 || n == srv6SRH {
		p.SRv6 = true
		path, err := wire.NewUSIDAddr(0xfc000000, 0x0101, 0x0203, 0x0304)
		if err != nil && b.err == nil {
			b.err = err
		}
		p.Outer = wire.IPv6{HopLimit: 62, Src: p.IP6.Src, Dst: path}
		if n == srv6SRH {
			p.HasSRH = true
			p.SRH.SegmentsLeft, p.SRH.LastEntry = 1, 1
			p.SRH.Segments[0] = p.IP6.Dst
			p.SRH.Segments[1] = path
		}
	}
	mode := wire.EVModeSTEV
	p.SetEV(ev, mode)
	return p
}

// add encodes p and appends it as an entry.
func (b *builder) add(name string, iface int, p *wire.Packet) []byte {
	f, err := b.c.Append(nil, p)
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("corpus %q: %w", name, err)
	}
	b.out = append(b.out, Entry{Name: name, Iface: iface, Frame: f})
	return f
}

// raw appends a hand-made frame.
func (b *builder) raw(name string, iface int, f []byte) {
	b.out = append(b.out, Entry{Name: name, Iface: iface, Frame: f})
}

// splice returns f with del bytes at offset at replaced by ins, and the IP
// and UDP lengths (and IPv4 checksum) adjusted. f must decode.
func (b *builder) splice(f []byte, at, del int, ins []byte) []byte {
	var q wire.Packet
	if err := b.c.Decode(f, &q); err != nil && b.err == nil {
		b.err = fmt.Errorf("corpus splice: %w", err)
	}
	ip, udp, _ := q.Offsets()
	g := append(append(bytes.Clone(f[:at]), ins...), f[at+del:]...)
	delta := len(ins) - del
	add := func(off int) {
		binary.BigEndian.PutUint16(g[off:], uint16(int(binary.BigEndian.Uint16(g[off:]))+delta))
	}
	if q.IsIPv6 {
		add(ip + 4)
	} else {
		add(ip + 2)
		binary.BigEndian.PutUint16(g[ip+10:], wire.IPv4Checksum(g[ip:]))
	}
	add(udp + 4)
	return g
}

// fix recomputes the ICRC of the last entry after an edit, so that the
// entry breaks only the rule it is about.
func (b *builder) fix() {
	f := b.out[len(b.out)-1].Frame
	if err := pcap.SetICRC(b.c, f); err != nil && b.err == nil {
		b.err = fmt.Errorf("corpus %q: %w", b.out[len(b.out)-1].Name, err)
	}
}

func payload(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = seed + byte(i)
	}
	return p
}

func write(p *wire.Packet, op wire.Opcode, qp, psn uint32, msn uint16, va uint64, dma uint32, data []byte) *wire.Packet {
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: qp, PSN: psn, AckReq: op.IsLast()}
	p.METH = wire.METH{MSN: msn}
	p.RETH = wire.RETH{VA: va, RKey: 0x00c0ffee, DMALength: dma}
	p.Payload = data
	return p
}

const (
	qpB = 0x000011 // the responder's QP (data goes here)
	qpA = 0x000022 // the requester's QP (feedback goes here)
)

// Valid returns well-formed frames: every opcode and header, IPv4, IPv6,
// SRv6 with and without SRH, VLAN, with and without TSETH, WriteIMM,
// retransmissions, trimmed packets and both accepted UDP ports.
func Valid(c *wire.Codec) ([]Entry, error) {
	b := &builder{c: c}
	b.validWrites()
	b.validFeedback()
	return b.out, b.err
}

// validWrites adds the writes, A to B.
func (b *builder) validWrites() {
	d := b.c.Profile().DSCP
	const va = 0x00007f0000000000

	p := write(b.pkt(v4, false, 0xc001, d.Trimmable), wire.OpWriteFirst, qpB, 100, 7, va, 160, payload(64, 0))
	b.add("RDMA_WRITE_FIRST over IPv4", 0, p)
	p = write(b.pkt(v4, false, 0xc002, d.Trimmable), wire.OpWriteMiddle, qpB, 101, 7, va+64, 160, payload(64, 64))
	p.BTH.TSPresent, p.TSETH = true, wire.TSETH{TxTimestamp: 0x1234, FType: 1}
	b.add("RDMA_WRITE_MIDDLE with TSETH", 1, p)
	p = write(b.pkt(v4, false, 0xc003, d.Trimmable), wire.OpWriteLast, qpB, 102, 7, va+128, 160, payload(30, 128))
	b.add("RDMA_WRITE_LAST, 30 bytes so pad_count 2", 2, p)
	p = write(b.pkt(v6, false, 0x0001c004, d.Trimmable), wire.OpWriteOnly, qpB, 103, 8, va+4096, 48, payload(48, 1))
	b.add("RDMA_WRITE_ONLY over IPv6, 32-bit STEV EV", 3, p)
	p = write(b.pkt(v6, false, 0x0002c005, d.Trimmable), wire.OpWriteOnlyImm, qpB, 104, 9, va+8192, 16, payload(16, 2))
	p.METH.RQMSN, p.ImmDt = 3, 0xdeadbeef
	p.BTH.TSPresent, p.TSETH = true, wire.TSETH{TxTimestamp: 0xfff0, TSR: true, FType: 1}
	b.add("RDMA_WRITE_ONLY_IMM with TSETH", 0, p)
	p = write(b.pkt(srv6, false, 0x0003c006, d.Trimmable), wire.OpWriteFirst, qpB, 105, 10, va+12288, 80, payload(40, 3))
	b.add("RDMA_WRITE_FIRST over SRv6 without SRH", 1, p)
	p = write(b.pkt(srv6SRH, false, 0x0003c007, d.Trimmable), wire.OpWriteLastImm, qpB, 106, 10, va+12328, 80, payload(40, 4))
	p.METH.RQMSN, p.ImmDt = 4, 0x01020304
	b.add("RDMA_WRITE_LAST_IMM over SRv6 with SRH", 2, p)
	p = write(b.pkt(v6, false, 0x0004c008, d.TrimmableRetx), wire.OpWriteFirst, qpB, 100, 7, va, 160, payload(64, 0))
	p.BTH.Retransmit = true
	b.add("retransmitted RDMA_WRITE_FIRST (RTX)", 3, p)
	p = write(b.pkt(v6, false, 0x0001c009, d.Trimmed), wire.OpWriteMiddle, qpB, 107, 11, va+16384, 256, nil)
	p.Trimmed = true
	b.add("trimmed RDMA_WRITE_MIDDLE: headers only, no ICRC", 4, p)
	p = write(b.pkt(v4, false, 0xc00a, d.TrimmedLastHop), wire.OpWriteMiddle, qpB, 108, 11, va+16448, 256, nil)
	p.BTH.TSPresent, p.TSETH, p.Trimmed = true, wire.TSETH{TxTimestamp: 7, FType: 1}, true
	b.add("RDMA_WRITE_MIDDLE trimmed at the last hop", 5, p)
	{
		// A switch that trims may leave the IP and UDP lengths of the
		// original packet (WIRE-TRIM-2): cut a write after its headers.
		p = write(b.pkt(v4, false, 0xc00f, d.Trimmable), wire.OpWriteFirst, qpB, 114, 15, va, 256, payload(64, 8))
		f, _ := b.c.Append(nil, p)
		f = f[:len(f)-64-wire.ICRCLen]
		f[14+1] = d.Trimmed << 2
		binary.BigEndian.PutUint16(f[14+10:], wire.IPv4Checksum(f[14:]))
		b.raw("trimmed RDMA_WRITE_FIRST keeping the original IP and UDP lengths", 6, f)
		p = write(b.pkt(srv6SRH, false, 0x0009c010, d.Trimmable), wire.OpWriteLast, qpB, 115, 15, va+64, 256, payload(32, 9))
		p.Outer.TrafficClass = d.TrimmedLastHop << 2
		p.Trimmed, p.Payload = true, nil
		b.add("RDMA_WRITE_LAST trimmed at the last hop, marked in the SRv6 outer header", 7, p)
	}
	p = write(b.pkt(vlan4, false, 0xc00b, d.NoTrim), wire.OpWriteOnly, qpB, 109, 12, va+20480, 8, payload(8, 5))
	b.add("RDMA_WRITE_ONLY with an 802.1Q tag, NO_TRIM", 6, p)
	p = write(b.pkt(v6, false, 0x0005c00c, d.Trimmable), wire.OpWriteOnly, qpB, 110, 13, va, 0, nil)
	b.add("RDMA_WRITE_ONLY of zero bytes", 7, p)
	p = write(b.pkt(v6, false, 0x0006c00d, d.Trimmable), wire.OpWriteMiddle, qpB, 111, 13, va, 4096, payload(32, 6))
	p.IP6.TrafficClass |= 3 // ECN CE
	b.add("RDMA_WRITE_MIDDLE with ECN CE", 0, p)
	p = write(b.pkt(v4, false, 0xc00e, d.Trimmable), wire.OpWriteOnly, qpB, 112, 14, va, 4, payload(4, 7))
	f := b.add("RDMA_WRITE_ONLY to the alternate UDP port 4971", 1, p)
	if ip, udp, _ := p.Offsets(); ip != 0 {
		binary.BigEndian.PutUint16(f[udp+2:], 4971)
		b.fix()
	}
}

// validFeedback adds the feedback B sends A (ACK, SACK, NACK), the probe
// and the endpoint operations.
func (b *builder) validFeedback() {
	d := b.c.Profile().DSCP
	p := b.pkt(v4, true, 0xa001, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpA, PSN: 102}
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit, MSN: 7}
	b.add("ACKNOWLEDGE with no-credit AETH", 4, p)
	sack := func(n netKind, ev, entropy uint32, m wire.Multipath, cack uint32, off int16, bitmap uint64) *wire.Packet {
		p := b.pkt(n, true, ev, d.Control)
		p.BTH = wire.BTH{Opcode: wire.OpSACK, PKey: 0xFFFF, DestQP: qpA, PSN: cack}
		p.SETH = wire.SETH{M: m, AckPSNOffset: 2, Entropy: entropy, SPDCID: 1, DPDCID: 2,
			CACKPSN: cack, SACKOffset: off, SACKBitmap: bitmap,
			CC: wire.CCState{TxTimestamp: 0x1234, OOOCount: 3, RcvCwndPen: 5, RcvdBytes: 40}}
		return p
	}
	b.add("RELIABILITY_SACK m=NONE, cumulative", 5, sack(v6, 0x0001a002, 0x0001c004, wire.MNone, 104, 0, 0))
	b.add("RELIABILITY_SACK m=SKIP_ONCE, two holes", 6, sack(v6, 0x0001a003, 0x0006c00d, wire.MSkipOnce, 100, 0, 0b1011_0010))
	p = sack(v4, 0xa004, 0xc002, wire.MAlwaysSkip, 100, 4, 0b101)
	p.SETH.PR, p.SETH.MPR = true, 8
	b.add("RELIABILITY_SACK m=ALWAYS_SKIP, pr, bitmap past a gap", 7, p)
	b.add("RELIABILITY_SACK m=NONE after the probe", 4, sack(v4, 0xa005, 0xc002, wire.MNone, 113, 0, 0))
	for i, r := range []wire.NACKReason{wire.NACKTrimmed, wire.NACKTrimmedLastHop, wire.NACKNoBitmap,
		wire.NACKNoPktBuffer, wire.NACKNoResource, wire.NACKPSNOutOfWindow, wire.NACKUnexpEvent} {
		p = b.pkt(v6, true, 0x0001a010+uint32(i), d.Control)
		p.BTH = wire.BTH{Opcode: wire.OpNACK, PKey: 0xFFFF, DestQP: qpA, PSN: 107}
		p.NETH = wire.NETH{Reason: r, Entropy: 0x0001c009, SPDCID: 1, DPDCID: 2, NACKPSN: 107, TxTimestamp: 0x4321}
		b.add("RELIABILITY_NACK "+r.String(), 4+i%4, p)
	}
	p = b.pkt(v4, false, 0xc002, d.Trimmable)
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: qpB}
	p.PETH = wire.PETH{ProbeID: 42, SPDCID: 2, DPDCID: 1, TxTimestamp: 0x0bad, FType: 1}
	b.add("RELIABILITY_PROBE_REQ on the bad path", 1, p)
	p = b.pkt(v6, false, 0x0007c010, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpEndpointReq, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: 0x0101}
	p.ERTH = wire.ERTH{Op: wire.EPPortStatusUpdate, PortStatusMask: 0b1101, TxTimestamp: 99}
	b.add("ENDPOINT_REQUEST PORT_STATUS_UPDATE", 2, p)
	p = b.pkt(srv6SRH, false, 0x0008c011, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpEndpointReq, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: 0x0102}
	p.ERTH = wire.ERTH{Op: wire.EPEVProbe, PortStatusMask: 0b1111, TxTimestamp: 100, FType: 1}
	b.add("ENDPOINT_REQUEST EV_PROBE over SRv6", 3, p)
	p = b.pkt(v6, true, 0x0008a011, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpEndpointResp, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: 0x0102}
	p.EETH = wire.EETH{Op: wire.EPEVProbe, TxTimestamp: 100}
	b.add("ENDPOINT_RESPONSE EV_PROBE", 7, p)
}

// Malformed returns frames that break one rule each: truncations at every
// layer, bad ICRCs, reserved bits, unknown opcodes, length mismatches,
// and frames that are not MRC at all. Each Name cites the requirement.
func Malformed(c *wire.Codec) ([]Entry, error) {
	m := newMalformed(c)
	m.outer()
	m.truncated()
	m.fields()
	m.frames()
	return m.b.out, m.b.err
}

// malformed builds Malformed's frames from one good RDMA_WRITE_ONLY over
// IPv4 (good, with its UDP and BTH offsets) and the packets around it.
type malformed struct {
	b          *builder
	d          spec.DSCPs
	good       []byte
	udp4, bth4 int
}

const malformedVA = 0x00007f0000000000

func newMalformed(c *wire.Codec) *malformed {
	m := &malformed{b: &builder{c: c}, d: c.Profile().DSCP}
	m.good, _ = c.Append(nil, m.base(v4))
	var q wire.Packet
	_ = c.Decode(m.good, &q)
	_, m.udp4, m.bth4 = q.Offsets()
	return m
}

// base is the good write, over network n.
func (m *malformed) base(n netKind) *wire.Packet {
	return write(m.b.pkt(n, false, 0xc0de, m.d.Trimmable), wire.OpWriteOnly, qpB, 200, 1, malformedVA, 16, payload(16, 9))
}

// cut adds the good frame's first n bytes.
func (m *malformed) cut(name string, n int) {
	n = min(n, len(m.good))
	m.b.raw(name, 0, bytes.Clone(m.good[:n]))
}

// shrink adds p encoded, with its last drop bytes cut and the IP and UDP
// lengths (and IPv4 checksum) made to fit.
func (m *malformed) shrink(name string, iface int, p *wire.Packet, drop int) {
	b := m.b
	f, err := b.c.Append(nil, p)
	if err != nil && b.err == nil {
		b.err = err
	}
	var q wire.Packet
	_ = b.c.Decode(f, &q)
	ip, udp, _ := q.Offsets()
	f = f[:len(f)-drop]
	if q.IsIPv6 {
		binary.BigEndian.PutUint16(f[ip+4:], uint16(len(f)-ip-40))
	} else {
		binary.BigEndian.PutUint16(f[ip+2:], uint16(len(f)-ip))
		binary.BigEndian.PutUint16(f[ip+10:], 0)
		binary.BigEndian.PutUint16(f[ip+10:], wire.IPv4Checksum(f[ip:]))
	}
	binary.BigEndian.PutUint16(f[udp+4:], uint16(len(f)-udp))
	b.raw(name, iface, f)
}

// sackPkt is a SACK B sends A.
func (m *malformed) sackPkt() *wire.Packet {
	p := m.b.pkt(v6, true, 0x0001a0de, m.d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpSACK, PKey: 0xFFFF, DestQP: qpA, PSN: 201}
	p.SETH = wire.SETH{Entropy: 0xc0de, CACKPSN: 201}
	return p
}

// outer adds truncations and length mismatches below the BTH.
func (m *malformed) outer() {
	b := m.b
	var f []byte
	m.cut("truncated Ethernet header (WIRE-ENC-1)", 10)
	m.cut("truncated IPv4 header (WIRE-ENC-1)", 14+12)
	f = bytes.Clone(m.good)
	b.raw("IPv4 total_length beyond the frame (WIRE-LEN-1)", 0, f[:len(f)-8])
	f = bytes.Clone(m.good)
	binary.BigEndian.PutUint16(f[m.udp4+4:], binary.BigEndian.Uint16(f[m.udp4+4:])+8)
	b.raw("UDP length beyond the IP datagram (WIRE-LEN-1)", 0, f)
	f = append(bytes.Clone(m.good), 0, 0, 0, 0)
	binary.BigEndian.PutUint16(f[14+2:], binary.BigEndian.Uint16(f[14+2:])+4)
	binary.BigEndian.PutUint16(f[14+10:], 0)
	binary.BigEndian.PutUint16(f[14+10:], wire.IPv4Checksum(f[14:]))
	b.raw("UDP length shorter than the IP datagram (WIRE-LEN-1)", 0, f)
	b.fix()
	{
		// A BTH cut short: shrink the IP and UDP lengths to 6 bytes of
		// transport so the frame is consistent up to the BTH.
		f := bytes.Clone(m.good[:m.bth4+6])
		binary.BigEndian.PutUint16(f[14+2:], uint16(len(f)-14))
		binary.BigEndian.PutUint16(f[14+10:], 0)
		binary.BigEndian.PutUint16(f[14+10:], wire.IPv4Checksum(f[14:]))
		binary.BigEndian.PutUint16(f[m.udp4+4:], uint16(len(f)-m.udp4))
		b.raw("truncated BTH (WIRE-BTH-1)", 1, f)
	}
}

// truncated adds transport headers cut short, with consistent IP and UDP lengths.
func (m *malformed) truncated() {
	b := m.b
	d := m.d
	var p *wire.Packet
	p = b.pkt(v4, true, 0xa0dd, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpA, PSN: 5}
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit, MSN: 1}
	m.shrink("ACK cut to 2 bytes after the BTH: no room for the ICRC (WIRE-ICRC-1)", 6, p, 6)
	m.shrink("SACK without its ICRC: the last CC_STATE bytes are taken as ICRC (WIRE-SETH-1)", 4, m.sackPkt(), 4)
	m.shrink("truncated SETH (WIRE-SETH-1)", 4, m.sackPkt(), 4+10)
	p = m.base(v6)
	m.shrink("truncated RETH (WIRE-RETH-1)", 1, p, 4+16+5)
	p = b.pkt(v4, true, 0xa0de, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpNACK, PKey: 0xFFFF, DestQP: qpA, PSN: 200}
	p.NETH = wire.NETH{Reason: wire.NACKTrimmed, Entropy: 0xc0de, NACKPSN: 200}
	m.shrink("truncated NETH (WIRE-NETH-1)", 5, p, 4+3)
	p = m.base(v6)
	p.BTH.TSPresent = true
	m.shrink("truncated TSETH (WIRE-TSETH-1)", 1, p, 34)
}

// fields adds bad ICRCs, reserved bits and field values that break one rule each.
func (m *malformed) fields() {
	b := m.b
	d := m.d
	var p *wire.Packet
	var f []byte
	f = b.add("ICRC corrupted (WIRE-ICRC-1)", 0, m.base(v4))
	f[len(f)-1] ^= 0xff
	f = b.add("payload bit flip caught by the ICRC (WIRE-ICRC-1)", 2, m.base(srv6SRH))
	f[len(f)-10] ^= 0x01
	f = b.add("BTH reserved bit 0x40 of byte 8 set (WIRE-BTH-7)", 0, m.base(v4))
	f[m.bth4+8] |= 0x40
	b.fix()
	f = b.add("BTH tver 1 (WIRE-BTH-3)", 0, m.base(v4))
	f[m.bth4+1] |= 0x01
	b.fix()
	p = m.base(v6)
	p.BTH.TSPresent, p.TSETH = true, wire.TSETH{TxTimestamp: 1, Rsvd: 0x400, FType: 1}
	b.add("TSETH reserved bits set (WIRE-GEN-2)", 1, p)
	p = m.sackPkt()
	p.SETH.Rsvd1, p.SETH.Rsvd2 = 0x04, 0x80
	b.add("SETH reserved bits set (WIRE-GEN-2)", 4, p)
	p = m.sackPkt()
	p.SETH.M = 3
	b.add("SETH m = 3, reserved (WIRE-SETH-3)", 4, p)
	p = b.pkt(v4, true, 0xa0df, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpNACK, PKey: 0xFFFF, DestQP: qpA, PSN: 200}
	p.NETH = wire.NETH{Reason: 0x55, Entropy: 0xc0de, NACKPSN: 200}
	b.add("NACK with unknown reason 0x55 (WIRE-NETH-2)", 5, p)
	p = b.pkt(v4, true, 0xa0e0, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpA, PSN: 5}
	p.AETH = wire.AETH{Syndrome: 0x05, MSN: 1}
	b.add("ACK with credit 5, not 0x1F (WIRE-AETH-2)", 6, p)
	p = b.pkt(v4, true, 0xa0e1, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpA, PSN: 5, TSPresent: true}
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit, MSN: 1}
	b.add("TS flag on an ACK (WIRE-BTH-6)", 6, p)
	p = b.pkt(v4, true, 0xa0e5, d.Trimmed)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpA, PSN: 5}
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit, MSN: 1}
	p.Trimmed = true
	b.add("ACK with a trimmed DSCP (WIRE-TRIM-1)", 6, p)
	f = b.add("IPv4 without DF (WIRE-ENC-5)", 0, m.base(v4))
	f[14+6] &^= 0x40
	binary.BigEndian.PutUint16(f[14+10:], wire.IPv4Checksum(f[14:]))
	b.fix()
	p = b.pkt(v6, false, 0xc0e6, d.Trimmable)
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: qpB, PSN: 7}
	p.PETH = wire.PETH{ProbeID: 1}
	b.add("probe with PSN 7 (WIRE-PETH-2)", 1, p)
	p = b.pkt(v6, true, 0xa0e7, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpNACK, PKey: 0xFFFF, DestQP: qpA, PSN: 199}
	p.NETH = wire.NETH{Reason: wire.NACKNoBitmap, Entropy: 0xc0de, NACKPSN: 200}
	b.add("NACK whose BTH psn is not its nack_psn (WIRE-NETH-4)", 5, p)
	p = m.sackPkt()
	p.BTH.Retransmit = true
	b.add("RTX flag on a SACK (WIRE-BTH-5, WIRE-SETH-10)", 4, p)
	p = b.pkt(v6, false, 0xc0e2, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpEndpointReq, PKey: 0xFFFF, DestQP: 0x000033, PSN: 0x0101}
	p.ERTH = wire.ERTH{Op: 3, PortStatusMask: 1}
	b.add("ENDPOINT_REQUEST to QPN 0x33 with op 3 (WIRE-BTH-8, WIRE-ERTH-1)", 2, p)
	p = b.pkt(v6, true, 0xa0e3, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpEndpointResp, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: 0x10000}
	p.EETH = wire.EETH{Op: wire.EPEVProbe}
	p.EETH.Rsvd4[5] = 1
	b.add("ENDPOINT_RESPONSE with PSN bit 16 and reserved bits (WIRE-EP-1, WIRE-GEN-2)", 7, p)
}

// frames adds unknown opcodes, pad and length mismatches, and frames that are not MRC.
func (m *malformed) frames() {
	b := m.b
	d := m.d
	var p *wire.Packet
	var f []byte
	for _, op := range []byte{0xC0, 0xDF, 0xE5, 0x0A} {
		f = b.add("", 3, m.base(v4))
		f[m.bth4] = op
		b.out[len(b.out)-1].Name = fmt.Sprintf("opcode 0x%02X is not an MRC opcode (WIRE-BTH-2)", op)
		if op == 0x0A {
			b.out[len(b.out)-1].Name = "RoCEv2 RC RDMA_WRITE_ONLY (0x0A) on 4791: not MRC (WIRE-BTH-2)"
		}
	}
	p = m.base(v4)
	p.Payload = payload(5, 1)
	p.RETH.DMALength = 5
	f, _ = b.c.Append(nil, p)
	f = b.splice(f, len(f)-4-3, 3, nil) // drop the pad bytes
	f[m.bth4+1] &^= 0x30                // and the pad count
	b.raw("pad_count 0 with a 5-byte payload (WIRE-BTH-9)", 0, f)
	b.fix()
	p = m.base(v4)
	p.Payload = nil
	p.RETH.DMALength = 0
	f = b.add("pad_count 3 with no payload bytes (WIRE-BTH-9)", 0, p)
	f[m.bth4+1] |= 0x30
	p = m.base(v4)
	p.RETH.DMALength = 4096
	b.add("RDMA_WRITE_ONLY dma_length 4096 with 16 payload bytes (WIRE-PAY-2)", 0, p)
	p = b.pkt(v4, true, 0xa0e4, d.Control)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpA, PSN: 5}
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit, MSN: 1}
	f, _ = b.c.Append(nil, p)
	b.raw("ACK with four bytes after the AETH (WIRE-OP-2)", 6, b.splice(f, len(f)-4, 0, []byte{0xAA, 0xBB, 0xCC, 0xDD}))
	b.fix()
	f = b.add("UDP checksum not zero (WIRE-UDP-3)", 0, m.base(v4))
	f[m.udp4+6], f[m.udp4+7] = 0x12, 0x34
	f = b.add("IPv4 header checksum wrong (WIRE-ENC-1)", 0, m.base(v4))
	f[14+10] ^= 0xff
	f = b.add("UDP destination port 53: not MRC (WIRE-UDP-1)", 0, m.base(v4))
	binary.BigEndian.PutUint16(f[m.udp4+2:], 53)
	arp := append(append(append([]byte{}, macB[:]...), macA[:]...), 0x08, 0x06)
	arp = append(arp, make([]byte, 28)...)
	b.raw("ARP: not IP (WIRE-ENC-1)", 0, arp)
	p = m.base(srv6SRH)
	f = b.add("SRH routing type 3 (WIRE-ENC-2)", 2, p)
	f[14+40+2] = 3
	p = m.base(v6)
	f = b.add("IPv6 payload_length beyond the frame (WIRE-LEN-1)", 3, p)
	binary.BigEndian.PutUint16(f[14+4:], binary.BigEndian.Uint16(f[14+4:])+100)
}

// WriteCapture writes entries as a pcapng file with Interfaces, frame i
// at Start + i µs, each commented with its Name.
func WriteCapture(entries []Entry) ([]byte, error) {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, Interfaces()...)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if err := w.WritePacket(Start.Add(time.Duration(i)*time.Microsecond), e.Iface, e.Frame, e.Name); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
