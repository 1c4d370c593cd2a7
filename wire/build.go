package wire

import (
	"encoding/binary"
	"fmt"
	"github.com/openmrc/mrc/spec"
)

// Append encodes p as a frame appended to dst. It fills the derived fields
// of p first, so that decoding the result gives back p exactly: the
// Ethernet type, IP lengths, protocol/next-header numbers and IPv4 checksum,
// the SRH's next header, type and length, the UDP length and destination
// port (the profile's, WIRE-UDP-1), the BTH pad count (WIRE-BTH-9) and
// the ICRC (WIRE-ICRC-1), and Trimmed from the DSCP. A packet whose DSCP
// marks it trimmed is written as the fabric leaves it: headers only, no
// payload and no ICRC (WIRE-DSCP-2).
func (c *Codec) Append(dst []byte, p *Packet) ([]byte, error) {
	st, err := c.derive(p)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = appendOuter(dst, p, start)
	dst = c.AppendBTH(dst, &p.BTH)
	dst = c.appendStack(p, dst, st)
	p.hdrEnd = len(dst) - start
	p.Decoded = st
	if st&HasPayload != 0 {
		if p.BTH.TSPresent {
			p.Decoded |= HasTSETH
		}
		dst = append(dst, p.Payload...)
		for i := uint8(0); i < p.BTH.PadCount; i++ {
			dst = append(dst, 0)
		}
	}
	p.padEnd = len(dst) - start
	p.end = p.padEnd
	p.ICRC = 0
	if !p.Trimmed {
		p.end += ICRCLen
		if c.prof.ICRC == spec.ICRCEmu {
			p.ICRC = emuICRC(dst[start:], p.bthOff, p.padEnd)
			dst = binary.BigEndian.AppendUint32(dst, p.ICRC)
		} else {
			p.ICRC = icrc(dst[start:], p.ipOff, p.udpOff, p.bthOff, p.padEnd, p.IsIPv6, c.prof.ICRCMaskUDPSrcPort)
			dst = binary.LittleEndian.AppendUint32(dst, p.ICRC)
		}
	}
	return dst, nil
}

// derive fills p's derived fields (Append's list) and returns its header
// stack, or the error that makes p unencodable.
func (c *Codec) derive(p *Packet) (Stack, error) {
	op := p.BTH.Opcode
	p.Trimmed, p.TrimmedLastHop = c.IsTrimmedDSCP(p.DSCP())
	if !op.Valid() {
		return 0, errAt(ErrInvalid, "BTH", 0, "opcode", ReqBTH2, "opcode 0x%02X is not an MRC opcode", uint8(op))
	}
	st := op.Stack()
	tlen := BTHLen + stackLen(st, p.BTH.TSPresent)
	p.BTH.PadCount = 0
	if st&HasPayload != 0 {
		if p.Trimmed && len(p.Payload) > 0 {
			return 0, errAt(ErrInvalid, "payload", 0, "", ReqDSCP2, "a trimmed packet carries no payload, got %d bytes", len(p.Payload))
		}
		p.BTH.PadCount = uint8(-len(p.Payload) & 3)
		tlen += len(p.Payload) + int(p.BTH.PadCount)
	} else if len(p.Payload) > 0 {
		return 0, errAt(ErrInvalid, "payload", 0, "", ReqOP1, "%s carries no payload, got %d bytes", op, len(p.Payload))
	}
	if !p.Trimmed {
		tlen += ICRCLen
	}
	p.UDP.Length = uint16(8 + tlen)
	p.UDP.DstPort = c.prof.UDPDstPort
	if 8+tlen > 0xFFFF-60 {
		return 0, errAt(ErrInvalid, "UDP", 0, "length", ReqLEN1, "datagram of %d bytes does not fit", 8+tlen)
	}
	if p.IsIPv6 {
		p.IP6.PayloadLength, p.IP6.NextHeader = p.UDP.Length, ProtoUDP
	} else {
		if p.SRv6 {
			return 0, errAt(ErrInvalid, "IPv4", 0, "", ReqENC2, "SRv6 encapsulation needs an inner IPv6 header")
		}
		p.IP4.TotalLength, p.IP4.Protocol = uint16(20)+p.UDP.Length, ProtoUDP
	}
	if p.SRv6 {
		srhLen := 0
		p.Outer.NextHeader = ProtoIPv6
		if p.HasSRH {
			if int(p.SRH.LastEntry) >= MaxSRHSegments {
				return 0, errAt(ErrInvalid, "SRH", 0, "last_entry", ReqENC2, "%d segments, at most %d", int(p.SRH.LastEntry)+1, MaxSRHSegments)
			}
			p.Outer.NextHeader = ProtoRouting
			p.SRH.NextHeader, p.SRH.RoutingType = ProtoIPv6, SRHType
			p.SRH.HdrExtLen = 2 * (p.SRH.LastEntry + 1)
			srhLen = 8 + 8*int(p.SRH.HdrExtLen)
		}
		p.Outer.PayloadLength = uint16(srhLen + 40 + int(p.UDP.Length))
	}
	p.Eth.EtherType = EtherTypeIPv4
	if p.IsIPv6 {
		p.Eth.EtherType = EtherTypeIPv6
	}
	return st, nil
}

// appendOuter appends p's Ethernet, SRv6 outer IPv6 and SRH, IP and UDP
// headers, and records where the IP, UDP and BTH headers start (offsets
// from start, where the frame begins in dst).
func appendOuter(dst []byte, p *Packet, start int) []byte {
	dst = append(dst, p.Eth.Dst[:]...)
	dst = append(dst, p.Eth.Src[:]...)
	if p.Eth.HasVLAN {
		dst = be.AppendUint16(dst, EtherTypeVLAN)
		dst = be.AppendUint16(dst, p.Eth.VLANTCI)
	}
	dst = be.AppendUint16(dst, p.Eth.EtherType)
	if p.SRv6 {
		dst = appendIPv6(dst, &p.Outer)
		if p.HasSRH {
			s := &p.SRH
			dst = append(dst, s.NextHeader, s.HdrExtLen, s.RoutingType, s.SegmentsLeft, s.LastEntry, s.Flags)
			dst = be.AppendUint16(dst, s.Tag)
			for i := 0; i <= int(s.LastEntry); i++ {
				dst = append(dst, s.Segments[i][:]...)
			}
		}
	}
	p.ipOff = len(dst) - start
	if p.IsIPv6 {
		dst = appendIPv6(dst, &p.IP6)
	} else {
		ip := &p.IP4
		ip.Checksum = 0
		dst = append(dst, 0x45, ip.TOS)
		dst = be.AppendUint16(dst, ip.TotalLength)
		dst = be.AppendUint16(dst, ip.ID)
		dst = be.AppendUint16(dst, ip.FlagsFrag)
		dst = append(dst, ip.TTL, ip.Protocol, 0, 0)
		dst = append(dst, ip.Src[:]...)
		dst = append(dst, ip.Dst[:]...)
		ip.Checksum = IPv4Checksum(dst[start+p.ipOff:])
		be.PutUint16(dst[start+p.ipOff+10:], ip.Checksum)
	}
	p.udpOff = p.ipOff + 20
	if p.IsIPv6 {
		p.udpOff = p.ipOff + 40
	}
	dst = be.AppendUint16(dst, p.UDP.SrcPort)
	dst = be.AppendUint16(dst, p.UDP.DstPort)
	dst = be.AppendUint16(dst, p.UDP.Length)
	dst = be.AppendUint16(dst, p.UDP.Checksum)
	p.bthOff = p.udpOff + 8
	return dst
}

func stackLen(st Stack, ts bool) int {
	n := 0
	if st&HasMETH != 0 {
		n += METHLen + RETHLen
		if ts {
			n += TSETHLen
		}
	}
	if st&HasImmDt != 0 {
		n += ImmDtLen
	}
	switch {
	case st&HasAETH != 0:
		n += AETHLen
	case st&HasSETH != 0:
		n += SETHLen + CCStateLen
	case st&HasNETH != 0:
		n += NETHLen
	case st&HasPETH != 0:
		n += PETHLen
	case st&HasERTH != 0:
		n += ERTHLen
	case st&HasEETH != 0:
		n += EETHLen
	}
	return n
}

func (c *Codec) appendStack(p *Packet, b []byte, st Stack) []byte {
	if st&HasMETH != 0 {
		b = p.METH.Append(b)
		if p.BTH.TSPresent {
			b = p.TSETH.Append(b)
		}
		b = p.RETH.Append(b)
		if st&HasImmDt != 0 {
			b = be.AppendUint32(b, p.ImmDt)
		}
		return b
	}
	switch {
	case st&HasAETH != 0:
		return p.AETH.Append(b)
	case st&HasSETH != 0:
		return p.SETH.Append(b)
	case st&HasNETH != 0:
		return p.NETH.Append(b)
	case st&HasPETH != 0:
		return p.PETH.Append(b)
	case st&HasERTH != 0:
		h := p.ERTH
		h.Op = c.epOp(h.Op)
		return h.Append(b)
	case st&HasEETH != 0:
		h := p.EETH
		h.Op = c.epOp(h.Op)
		return h.Append(b)
	}
	return b
}

func appendIPv6(b []byte, ip *IPv6) []byte {
	w := uint32(6)<<28 | uint32(ip.TrafficClass)<<20 | ip.FlowLabel&0xFFFFF
	b = be.AppendUint32(b, w)
	b = be.AppendUint16(b, ip.PayloadLength)
	b = append(b, ip.NextHeader, ip.HopLimit)
	b = append(b, ip.Src[:]...)
	return append(b, ip.Dst[:]...)
}

// IPv4Checksum returns the header checksum of the 20-byte IPv4 header h,
// computed with h's checksum field taken as zero. The one's complement sum
// does not depend on byte order (RFC 1071): it sums the header's words as
// read little-endian, 32 bits at a time, and swaps the result's bytes.
func IPv4Checksum(h []byte) uint16 {
	h = h[:20]
	le := binary.LittleEndian
	s := uint64(le.Uint32(h[0:])) + uint64(le.Uint32(h[4:])) + uint64(le.Uint16(h[8:])) +
		uint64(le.Uint32(h[12:])) + uint64(le.Uint32(h[16:]))
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	x := uint16(s)
	return ^(x<<8 | x>>8)
}

// String gives a one-line summary of the packet, for logs and test failures.
func (p *Packet) String() string {
	return fmt.Sprintf("%s qp=0x%06x psn=%d len=%d", p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN, len(p.Payload))
}
