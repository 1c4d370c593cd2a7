package wire

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/openmrc/mrc/spec"
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

// slicing8 holds the eight tables of the slicing-by-8 CRC-32 (IEEE), used
// for the masked header bytes: crc32.Update would make a stack copy of
// them escape to the heap, and a byte-at-a-time loop is slow.
var slicing8 = makeSlicing8(crc32.IEEETable)

// makeSlicing8 returns the slicing-by-8 tables of a reflected CRC-32 table.
func makeSlicing8(tab *crc32.Table) *[8][256]uint32 {
	var t [8][256]uint32
	t[0] = *tab
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xFF] ^ c>>8
			t[k][i] = c
		}
	}
	return &t
}

// update8 folds p into the (non-inverted) CRC register c with the
// slicing-by-8 tables t, eight bytes at a time.
func update8(t *[8][256]uint32, c uint32, p []byte) uint32 {
	for ; len(p) >= 8; p = p[8:] {
		c ^= binary.LittleEndian.Uint32(p)
		c = t[0][p[7]] ^ t[1][p[6]] ^ t[2][p[5]] ^ t[3][p[4]] ^
			t[4][c>>24] ^ t[5][c>>16&0xFF] ^ t[6][c>>8&0xFF] ^ t[7][c&0xFF]
	}
	for _, v := range p {
		c = t[0][byte(c)^v] ^ c>>8
	}
	return c
}

// maxICRCHdr is the longest header run icrc masks: an IPv6 header, UDP
// and the BTH.
const maxICRCHdr = 40 + 8 + BTHLen

// maskVariant forces to one the variant bits of the headers m holds: the
// IP header at 0, UDP at u and the BTH after it.
func maskVariant(m []byte, u int, v6, maskSrcPort bool) {
	if v6 {
		m[0] |= 0x0f                                    // traffic class, high half
		m[1], m[2], m[3], m[7] = 0xff, 0xff, 0xff, 0xff // traffic class, flow label, hop limit
	} else {
		m[1], m[8], m[10], m[11] = 0xff, 0xff, 0xff, 0xff // TOS, TTL, checksum
	}
	m[u+6], m[u+7] = 0xff, 0xff // UDP checksum
	if maskSrcPort {
		m[u], m[u+1] = 0xff, 0xff // EV[15:0] as a variant field (WIRE-ICRC-4)
	}
	m[u+8+4] = 0xff // BTH byte 4: FECN, BECN, reserved
}

// icrc computes the ICRC over b[ipOff:end] (end excludes the ICRC itself).
// The headers are copied to the stack with their variant bits forced to
// one, followed by as many of the next bytes as leave the rest a whole
// number of 16-byte blocks, and go through a slicing-by-8 loop; the rest
// through updateIEEE, whose vectorised loops then take it all, with no
// byte-by-byte tail. A rest too short for that loop goes through the
// slicing-by-8 loop too. The stack copy is never handed to crc32, so
// nothing escapes.
func icrc(b []byte, ipOff, udpOff, bthOff, end int, v6, maskSrcPort bool) uint32 {
	var m [maxICRCHdr + 16]byte
	n := copy(m[:maxICRCHdr], b[ipOff:bthOff+BTHLen])
	maskVariant(m[:], udpOff-ipOff, v6, maskSrcPort)
	rest := b[bthOff+BTHLen : end]
	k := copy(m[n:n+len(rest)%16], rest)
	c := update8(slicing8, ^crcAfterPrefix, m[:n+k])
	if rest = rest[k:]; len(rest) < minCLMUL {
		return ^update8(slicing8, c, rest)
	}
	return updateIEEE(^c, rest)
}

// ICRCScratch is working space for ComputeICRCScratch. One must not be
// used by two computations at once.
type ICRCScratch struct {
	b [icrcZeros + icrcWindow]byte
}

// icrcZeros is the length of an ICRCScratch's leading bytes, which are
// never written and so stay zero; icrcWindow is the most bytes it copies
// from a frame: the headers (maxICRCHdr) and up to minCLMUL+15 more, as
// a fixed-size copy, which takes no call, when the frame has them.
const (
	icrcZeros  = 32
	icrcWindow = 144
)

// icrcBlocks is how many bytes copyBlocks copies: enough for an IPv4
// write's headers and the bytes before its rest's 16-byte blocks
// (at most 40+15), and for a whole IPv4 SACK after its IP header (76).
const icrcBlocks = 80

// copyBlocks copies src to the start of dst in 16-byte blocks, each one
// load and one store: a copy of a length the compiler does not know, or
// of a whole array (which may overlap its destination), is a call to
// memmove, several times the instructions.
func copyBlocks(dst *[icrcWindow]byte, src *[icrcBlocks]byte) {
	*(*[16]byte)(dst[0:]) = *(*[16]byte)(src[0:])
	*(*[16]byte)(dst[16:]) = *(*[16]byte)(src[16:])
	*(*[16]byte)(dst[32:]) = *(*[16]byte)(src[32:])
	*(*[16]byte)(dst[48:]) = *(*[16]byte)(src[48:])
	*(*[16]byte)(dst[64:]) = *(*[16]byte)(src[64:])
}

// icrcScratch is ComputeICRC with the masked headers in s, so that they go
// through crc32.Update's vectorised loop as well (a stack copy handed to
// crc32 would escape to the heap). The CRC register after the ones
// prefix is folded into the headers' first four bytes, as the CRC step
// itself XORs them into the register, and zero bytes led in from a
// register of zero leave it zero: so s holds, from register zero, zero
// bytes, then the folded headers, then the first bytes of the rest, a
// block of at least minCLMUL bytes in whole 16-byte blocks whose end
// leaves the rest whole 16-byte blocks too, minCLMUL of them or none,
// which go through updateIEEE.
func (c *Codec) icrcScratch(s *ICRCScratch, b []byte, p *Packet) uint32 {
	if c.prof.ICRC == spec.ICRCEmu {
		return emuICRC(b, p.bthOff, p.end-ICRCLen)
	}
	ipOff, restOff, end := p.ipOff, p.bthOff+BTHLen, p.end-ICRCLen
	k := (end - restOff) & 15
	if end-restOff-k < minCLMUL {
		k = end - restOff
	}
	n := restOff - ipOff + k // bytes copied: the headers and k more
	m := s.b[icrcZeros:]
	if src := b[ipOff:]; n <= icrcBlocks && len(src) >= icrcBlocks {
		copyBlocks((*[icrcWindow]byte)(m), (*[icrcBlocks]byte)(src))
	} else if len(src) >= icrcWindow {
		*(*[icrcWindow]byte)(m) = [icrcWindow]byte(src)
	} else {
		copy(m, b[ipOff:ipOff+n])
	}
	maskVariant(m, p.udpOff-ipOff, p.IsIPv6, c.prof.ICRCMaskUDPSrcPort)
	binary.LittleEndian.PutUint32(m, binary.LittleEndian.Uint32(m)^^crcAfterPrefix)
	size := max(minCLMUL, (n+15)&^15)
	crc := crc32.Update(^uint32(0), crc32.IEEETable, s.b[icrcZeros+n-size:icrcZeros+n])
	if restOff+k == end {
		return crc
	}
	return updateIEEE(crc, b[restOff+k:end])
}

// minCLMUL is the shortest input crc32.Update runs through its vectorised
// loop on amd64; a shorter one goes through its own table loop, which
// update8 is.
const minCLMUL = 64

// emuTable is the table of EMU's ICRC (AMB-90): the bitwise reflected
// loop run with 0x1EDC6F41, CRC-32C's polynomial in its non-reflected
// form, which makes it neither CRC-32C nor CRC-32. crc32.Update runs a
// table of its own byte by byte; emuSlicing8 runs it eight bytes at a time.
var (
	emuTable    = crc32.MakeTable(0x1EDC6F41)
	emuSlicing8 = makeSlicing8(emuTable)
)

// emuICRC is EMU's ICRC over the UDP payload b[bthOff:end], unmasked.
func emuICRC(b []byte, bthOff, end int) uint32 {
	return ^update8(emuSlicing8, ^uint32(0), b[bthOff:end])
}

// ComputeICRC returns the ICRC that p's frame b should carry under the
// profile's algorithm. p must have been filled by Decode(b, p) without
// error, and must not be trimmed.
func (c *Codec) ComputeICRC(b []byte, p *Packet) uint32 {
	if c.prof.ICRC == spec.ICRCEmu {
		return emuICRC(b, p.bthOff, p.end-ICRCLen)
	}
	return icrc(b, p.ipOff, p.udpOff, p.bthOff, p.end-ICRCLen, p.IsIPv6, c.prof.ICRCMaskUDPSrcPort)
}

// ComputeICRCScratch is ComputeICRC with working space s, in which it
// takes fewer steps (icrcScratch). s must not be in use by another
// goroutine. Small enough to inline.
func (c *Codec) ComputeICRCScratch(b []byte, p *Packet, s *ICRCScratch) uint32 {
	return c.icrcScratch(s, b, p)
}

// VerifyICRC reports whether the ICRC carried by frame b (decoded into p)
// is correct. Trimmed packets carry no ICRC and report false.
func (c *Codec) VerifyICRC(b []byte, p *Packet) bool {
	if p.Trimmed || p.end < p.bthOff+BTHLen+ICRCLen {
		return false
	}
	return c.ComputeICRC(b, p) == c.carriedICRC(b[p.end-ICRCLen:])
}

// carriedICRC reads the 4 ICRC bytes in the profile's byte order: least
// significant first (WIRE-ICRC-1), or most significant first for EMU's.
func (c *Codec) carriedICRC(b []byte) uint32 {
	if c.prof.ICRC == spec.ICRCEmu {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}
