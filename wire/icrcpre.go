package wire

import "encoding/binary"

// A PreICRC is a frame's ICRC computed before the frame is decoded
// (Codec.PreICRC), with the header offsets it was computed at. A pipeline
// computes it where the frame's bytes are still in cache, for instance
// the goroutine that read them, and decodes the frame elsewhere
// (ComputeICRCPre): the payload, which only the ICRC reads, then never
// has to reach the decoding core. The zero value holds no ICRC.
type PreICRC struct {
	icrc uint32
	end  uint32 // the UDP datagram's end: Packet.end
	udp  uint8  // the UDP header's offset: fastV4UDP or fastUDP; 0 holds no ICRC
}

// PreScratch is working space for Codec.PreICRC. One must not be used by
// two computations at once.
type PreScratch struct {
	p Packet // the offsets icrcScratch reads
	s ICRCScratch
}

// PreICRC computes the ICRC of frame b when it has one of the fast path's
// shapes (Ethernet without a VLAN tag, IPv4 without options or IPv6
// without extension headers, UDP to an MRC port, a BTH, a DSCP that does
// not mark a trimmed packet), from its headers alone; for any other frame
// it returns the zero PreICRC. Decode finds the same offsets for such a
// frame; ComputeICRCPre checks that it did before it uses the value.
func (c *Codec) PreICRC(b []byte, s *PreScratch) PreICRC {
	if len(b) < fastBTH {
		return PreICRC{}
	}
	h := (*[fastBTH]byte)(b)
	var udp, ipEnd int
	switch {
	case binary.LittleEndian.Uint32(h[12:])&0x00FFFFFF == 0x00450008: // IPv4, no options
		if h[fastIP+9] != ProtoUDP || c.trimDSCP>>(h[fastIP+1]>>2)&1 != 0 {
			return PreICRC{}
		}
		udp, ipEnd = fastV4UDP, fastIP+int(be.Uint16(h[fastIP+2:]))
	case binary.LittleEndian.Uint32(h[12:])&0x00F0FFFF == 0x0060DD86: // IPv6
		if h[fastIP+6] != ProtoUDP || c.trimDSCP>>(be.Uint16(h[fastIP:])>>6&63)&1 != 0 {
			return PreICRC{}
		}
		udp, ipEnd = fastUDP, fastUDP+int(be.Uint16(h[fastIP+4:]))
	default:
		return PreICRC{}
	}
	uEnd := udp + int(be.Uint16(b[udp+4:]))
	if ipEnd > len(b) || uEnd > ipEnd || uEnd < udp+8+BTHLen+ICRCLen {
		return PreICRC{}
	}
	if port := be.Uint16(b[udp+2:]); port != c.ports[0] && !c.AcceptsPort(port) {
		return PreICRC{}
	}
	p := &s.p
	p.ipOff, p.udpOff, p.bthOff, p.end, p.IsIPv6 = fastIP, udp, udp+8, uEnd, udp == fastUDP
	return PreICRC{icrc: c.icrcScratch(&s.s, b, p), end: uint32(uEnd), udp: uint8(udp)}
}

// ComputeICRCPre is ComputeICRCScratch for a frame whose ICRC may have
// been computed before it was decoded into p (pre, from PreICRC on the
// same bytes with this Codec): pre's value when it was computed at the
// offsets Decode found, else the ICRC computed now.
func (c *Codec) ComputeICRCPre(b []byte, p *Packet, pre PreICRC, s *ICRCScratch) uint32 {
	if pre.udp != 0 && p.udpOff == int(pre.udp) && p.end == int(pre.end) && p.ipOff == fastIP && p.bthOff == p.udpOff+8 {
		return pre.icrc
	}
	return c.icrcScratch(s, b, p)
}

// Computed reports whether pre holds an ICRC, which ComputeICRCPre may
// then use.
func (pre PreICRC) Computed() bool { return pre.udp != 0 }
