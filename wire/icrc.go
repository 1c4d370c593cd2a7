package wire

import (
	"encoding/binary"
	"hash/crc32"
)

// The RoCEv2 ICRC is CRC-32 (IEEE) over 64 bits of ones standing in for the
// InfiniBand LRH, then the IP header, UDP header and BTH with their variant
// fields replaced by ones, then the rest of the packet up to the ICRC. It is
// carried least-significant byte first (WIRE-ICRC-1, WIRE-ICRC-2). For MRC
// the computation starts at the innermost IP header: the SRv6 outer header
// is rewritten hop by hop and is excluded (WIRE-ICRC-3).

var onesPrefix = [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// crcAfterPrefix is the CRC state after the 8-byte prefix, computed once.
var crcAfterPrefix = crc32.Update(0, crc32.IEEETable, onesPrefix[:])

// icrc computes the ICRC over b[ipOff:end] (end excludes the ICRC itself).
func icrc(b []byte, ipOff, udpOff, bthOff, end int, v6, maskSrcPort bool) uint32 {
	crc := crcAfterPrefix
	var ip [40]byte
	n := copy(ip[:udpOff-ipOff], b[ipOff:udpOff])
	if v6 {
		// Traffic class, flow label (WIRE-ICRC-2), hop limit.
		ip[0] |= 0x0f
		ip[1], ip[2], ip[3] = 0xff, 0xff, 0xff
		ip[7] = 0xff
	} else {
		ip[1] = 0xff                // TOS
		ip[8] = 0xff                // TTL
		ip[10], ip[11] = 0xff, 0xff // header checksum
	}
	crc = crc32.Update(crc, crc32.IEEETable, ip[:n])
	var uh [BTHLen + 8]byte
	copy(uh[:], b[udpOff:bthOff+BTHLen])
	uh[6], uh[7] = 0xff, 0xff // UDP checksum
	if maskSrcPort {
		uh[0], uh[1] = 0xff, 0xff // EV[15:0] as a variant field (WIRE-ICRC-4)
	}
	uh[8+4] = 0xff // BTH byte 4 (FECN, BECN, reserved)
	crc = crc32.Update(crc, crc32.IEEETable, uh[:])
	return crc32.Update(crc, crc32.IEEETable, b[bthOff+BTHLen:end])
}

// ComputeICRC returns the ICRC that p's frame b should carry. p must have
// been filled by Decode(b, p) without error, and must not be trimmed.
func (c *Codec) ComputeICRC(b []byte, p *Packet) uint32 {
	return icrc(b, p.ipOff, p.udpOff, p.bthOff, p.end-ICRCLen, p.IsIPv6, c.prof.ICRCMaskUDPSrcPort)
}

// VerifyICRC reports whether the ICRC carried by frame b (decoded into p)
// is correct. Trimmed packets carry no ICRC and report false.
func (c *Codec) VerifyICRC(b []byte, p *Packet) bool {
	if p.Trimmed || p.end < p.bthOff+BTHLen+ICRCLen {
		return false
	}
	return c.ComputeICRC(b, p) == binary.LittleEndian.Uint32(b[p.end-ICRCLen:])
}
