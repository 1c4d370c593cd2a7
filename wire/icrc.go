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
// The headers are folded in byte by byte with their variant bits forced to
// one; the rest goes through crc32.Update, which is vectorised. No scratch
// copy is handed to crc32, so nothing escapes to the heap.
func icrc(b []byte, ipOff, udpOff, bthOff, end int, v6, maskSrcPort bool) uint32 {
	var m [40 + 8 + BTHLen]byte
	if v6 {
		m[0], m[1], m[2], m[3], m[7] = 0x0f, 0xff, 0xff, 0xff, 0xff // TC, flow label, hop limit
	} else {
		m[1], m[8], m[10], m[11] = 0xff, 0xff, 0xff, 0xff // TOS, TTL, checksum
	}
	u := udpOff - ipOff
	m[u+6], m[u+7] = 0xff, 0xff // UDP checksum
	if maskSrcPort {
		m[u], m[u+1] = 0xff, 0xff // EV[15:0] as a variant field (WIRE-ICRC-4)
	}
	m[u+8+4] = 0xff // BTH byte 4: FECN, BECN, reserved
	tab := crc32.IEEETable
	c := ^crcAfterPrefix
	for i, v := range b[ipOff : bthOff+BTHLen] {
		c = tab[byte(c)^(v|m[i])] ^ c>>8
	}
	return crc32.Update(^c, tab, b[bthOff+BTHLen:end])
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
