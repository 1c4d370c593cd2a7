// Package emuclient builds frames as the MRC-Client emulator
// (anichol67/MRC-Client, core/packet_builder.py and core/mrc_headers.py,
// read at 986ded2) encodes them, from the facts of that code, so tests can
// hold the emu profile preset (spec.EmuProfile) to what the emulator
// really sends. It shares no code with package wire: every layout here is
// written from the emulator's encoders, byte by byte. One frame of each
// kind was compared with what the emulator's own builders return for the
// same arguments (run locally at 986ded2): all were identical.
//
// What the emulator does, and this package with it: UDP destination port
// 4971; BTH byte 1 with M in bit 7 and SE in bit 6; P_Key 0; the ack_req
// bit never set; traffic class DSCP << 2 (ECN 00), with the DSCP of its
// class (control 46 for SACK, NACK and port status; trimmable 4 for data
// and reliability probes; 0 for EV probes); in its structured-EV mode
// EV[31:16] in the UDP source port and EV[15:0] in the flow label; NETH
// cc_type 2; UDP checksum 0; no pad bytes; and an ICRC computed by a
// bitwise reflected loop with the constant 0x1EDC6F41, initial value and
// final XOR 0xFFFFFFFF, over the UDP payload (BTH to the end of the
// payload) without masks, appended most significant byte first.
package emuclient

import (
	"encoding/binary"
	"net/netip"
)

// Port is the emulator's UDP destination port.
const Port = 4971

// DSCP values of the emulator's DSCPConfig.
const (
	DSCPControl   = 46
	DSCPTrimmable = 4
	DSCPRetx      = 8
)

// Opcodes of the emulator's MrcOpcode.
const (
	OpWriteOnly    = 0xCA
	OpWriteOnlyImm = 0xCB
	OpEPRequest    = 0xD8
	OpEPResponse   = 0xD9
	OpSACK         = 0xDC
	OpNACK         = 0xDD
	OpProbe        = 0xDE
)

// Endpoint ops as the emulator numbers them.
const (
	EPPortStatusUpdate = 0
	EPEVProbe          = 1
)

// Addr is one side of a frame.
type Addr struct {
	MAC [6]byte
	IP  netip.Addr // IPv6
}

// Frame is what the emulator's builders take. Zero fields are what the
// builders leave at their defaults.
type Frame struct {
	Src, Dst Addr
	DSCP     uint8
	EV       uint32 // structured EV: EV[31:16] to the source port, EV[15:0] to the flow label
	Opcode   uint8
	SE, M    bool
	DestQP   uint32
	PSN      uint32
	RTX, TS  bool
	Ext      []byte // the headers after the BTH, as the emulator serializes them
	Payload  []byte
}

// ICRC is the emulator's ICRC of a UDP payload, bit by bit as its loop
// computes it.
func ICRC(udpPayload []byte) uint32 {
	crc := uint32(0xFFFFFFFF)
	for _, b := range udpPayload {
		crc ^= uint32(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x1EDC6F41
			} else {
				crc >>= 1
			}
		}
	}
	return crc ^ 0xFFFFFFFF
}

// Bytes encodes f as the emulator's MRCPacket.to_bytes does.
func (f Frame) Bytes() []byte {
	bth := make([]byte, 12)
	bth[0] = f.Opcode
	bth[1] = b2u(f.M)<<7 | b2u(f.SE)<<6 // pad 0, tver 0
	// bytes 2-3: P_Key 0; byte 4: reserved 0
	put24(bth[5:], f.DestQP)
	bth[8] = b2u(f.RTX)<<5 | b2u(f.TS)<<4 // a (ack_req) and r never set
	put24(bth[9:], f.PSN)
	udpPayload := append(append(bth, f.Ext...), f.Payload...)
	udpPayload = binary.BigEndian.AppendUint32(udpPayload, ICRC(udpPayload))

	udp := make([]byte, 8, 8+len(udpPayload))
	binary.BigEndian.PutUint16(udp[0:], uint16(f.EV>>16))
	binary.BigEndian.PutUint16(udp[2:], Port)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(udpPayload)))
	udp = append(udp, udpPayload...)

	ip := make([]byte, 40, 40+len(udp))
	binary.BigEndian.PutUint32(ip[0:], 6<<28|uint32(f.DSCP)<<2<<20|f.EV&0xFFFF)
	binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
	ip[6], ip[7] = 17, 64
	s, d := f.Src.IP.As16(), f.Dst.IP.As16()
	copy(ip[8:], s[:])
	copy(ip[24:], d[:])
	ip = append(ip, udp...)

	eth := make([]byte, 0, 14+len(ip))
	eth = append(eth, f.Dst.MAC[:]...)
	eth = append(eth, f.Src.MAC[:]...)
	eth = append(eth, 0x86, 0xDD)
	return append(eth, ip...)
}

// Write is build_write for a single-packet write (RDMA WRITE ONLY, or
// ONLY with immediate): METH (rqmsn, msn), [TSETH], RETH, [ImmDt].
func Write(src, dst Addr, destQP, psn uint32, ev uint32, va uint64, rkey uint32, payload []byte, msn, rqmsn uint16, imm *uint32, retransmit bool) Frame {
	ext := binary.BigEndian.AppendUint16(nil, rqmsn)
	ext = binary.BigEndian.AppendUint16(ext, msn)
	ext = binary.BigEndian.AppendUint64(ext, va)
	ext = binary.BigEndian.AppendUint32(ext, rkey)
	ext = binary.BigEndian.AppendUint32(ext, uint32(len(payload)))
	op, dscp := uint8(OpWriteOnly), uint8(DSCPTrimmable)
	if imm != nil {
		op = OpWriteOnlyImm
		ext = binary.BigEndian.AppendUint32(ext, *imm)
	}
	if retransmit {
		dscp = DSCPRetx
	}
	return Frame{Src: src, Dst: dst, DSCP: dscp, EV: ev, Opcode: op, DestQP: destQP, PSN: psn, RTX: retransmit, Ext: ext, Payload: payload}
}

// SACK is build_sack: BTH psn = cack_psn, SETH with spdcid and dpdcid the
// low 16 bits of the QPNs, then an all-zero CC_STATE; entropy is the EV
// it echoes, and the SACK travels on that EV.
func SACK(src, dst Addr, srcQP, destQP, cack uint32, ackOff, sackOff int16, bitmap uint64, mpr uint8, m uint8, entropy uint32) Frame {
	s := make([]byte, 28+8)
	s[1] = (m & 3) << 5
	binary.BigEndian.PutUint16(s[2:], uint16(ackOff))
	binary.BigEndian.PutUint32(s[4:], entropy)
	binary.BigEndian.PutUint16(s[8:], uint16(srcQP))
	binary.BigEndian.PutUint16(s[10:], uint16(destQP))
	put24(s[13:], cack)
	s[17] = mpr
	binary.BigEndian.PutUint16(s[18:], uint16(sackOff))
	binary.BigEndian.PutUint64(s[20:], bitmap)
	return Frame{Src: src, Dst: dst, DSCP: DSCPControl, EV: entropy, Opcode: OpSACK, DestQP: destQP, PSN: cack, Ext: s}
}

// NACK is build_nack: BTH psn = nack_psn and NETH with cc_type 2.
func NACK(src, dst Addr, srcQP, destQP, psn uint32, reason uint8, entropy uint32) Frame {
	n := make([]byte, 20)
	n[2] = reason
	binary.BigEndian.PutUint32(n[4:], entropy)
	binary.BigEndian.PutUint16(n[8:], uint16(srcQP))
	binary.BigEndian.PutUint16(n[10:], uint16(destQP))
	put24(n[13:], psn)
	n[16] = 0x2 << 4
	return Frame{Src: src, Dst: dst, DSCP: DSCPControl, EV: entropy, Opcode: OpNACK, DestQP: destQP, PSN: psn, Ext: n}
}

// Probe is build_reliability_probe: BTH psn 0, trimmable DSCP, PETH with
// ftype 1.
func Probe(src, dst Addr, srcQP, destQP uint32, probeID uint16, ev uint32) Frame {
	p := make([]byte, 16)
	binary.BigEndian.PutUint16(p[4:], probeID)
	binary.BigEndian.PutUint16(p[8:], uint16(srcQP))
	binary.BigEndian.PutUint16(p[10:], uint16(destQP))
	p[15] = 0x1
	return Frame{Src: src, Dst: dst, DSCP: DSCPTrimmable, EV: ev, Opcode: OpProbe, DestQP: destQP, Ext: p}
}

// EVProbe is build_ev_probe: an endpoint request to QPN 2, op EV_PROBE,
// BTH psn the probe id, traffic class 0.
func EVProbe(src, dst Addr, probeID uint16, ev uint32) Frame {
	e := make([]byte, 16)
	e[1] = EPEVProbe
	e[15] = 0x1
	return Frame{Src: src, Dst: dst, EV: ev, Opcode: OpEPRequest, DestQP: 2, PSN: uint32(probeID), Ext: e}
}

// PortStatus is build_port_status_update: op PORT_STATUS_UPDATE with the
// mask, control DSCP, source port 0 (no EV applied).
func PortStatus(src, dst Addr, probeID uint16, mask uint32) Frame {
	e := make([]byte, 16)
	e[1] = EPPortStatusUpdate
	binary.BigEndian.PutUint32(e[4:], mask)
	e[15] = 0x1
	return Frame{Src: src, Dst: dst, DSCP: DSCPControl, Opcode: OpEPRequest, DestQP: 2, PSN: uint32(probeID), Ext: e}
}

// EPResponse is build_endpoint_response: EETH with op in bits 5:4 of
// byte 1, control DSCP.
func EPResponse(src, dst Addr, probeID uint16, op uint8, ev uint32) Frame {
	e := make([]byte, 36)
	e[1] = (op & 3) << 4
	return Frame{Src: src, Dst: dst, DSCP: DSCPControl, EV: ev, Opcode: OpEPResponse, DestQP: 2, PSN: uint32(probeID), Ext: e}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// Session is a small exchange as the emulator sends it between a and b:
// n single-packet writes from QP 0x11 to QP 0x22 spread over four EVs,
// each answered by a SACK on the EV it echoes, then a NACK, a reliability
// probe, an EV probe and its response, and a port status update.
func Session(a, b Addr, n int) [][]byte {
	evs := []uint32{0x00010102, 0x00020203, 0x00030304, 0x00040405}
	var out [][]byte
	for i := range n {
		ev := evs[i%len(evs)]
		out = append(out, Write(a, b, 0x22, uint32(i), ev, uint64(i)*64, 0x77, make([]byte, 64), uint16(i+1), 0, nil, false).Bytes())
		out = append(out, SACK(b, a, 0x22, 0x11, uint32(i), 0, 0, 0, 0, 0, ev).Bytes())
	}
	out = append(out,
		NACK(b, a, 0x22, 0x11, uint32(n), 0x01, evs[0]).Bytes(),
		Probe(a, b, 0x11, 0x22, 1, evs[1]).Bytes(),
		EVProbe(a, b, 2, evs[2]).Bytes(),
		EPResponse(b, a, 2, EPEVProbe, evs[2]).Bytes(),
		PortStatus(a, b, 3, 0b110).Bytes(),
	)
	return out
}

// HostA and HostB are two IPv6 end points for tests.
var (
	HostA = Addr{MAC: [6]byte{2, 0, 0, 0, 0, 1}, IP: netip.MustParseAddr("fd00::1")}
	HostB = Addr{MAC: [6]byte{2, 0, 0, 0, 0, 2}, IP: netip.MustParseAddr("fd00::2")}
)
