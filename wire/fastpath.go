package wire

import "encoding/binary"

// The fast path decodes the common frame, Ethernet (no VLAN tag) / IPv6 /
// UDP / BTH / write stack, in one straight-line function: all the checks
// first, from a few wide loads, then the stores. An IPv4 frame without
// options has its prefix checked and stored the same way (decodeV4), and
// continues in decodeTransport. Anything else (VLAN, SRv6, trimmed DSCP,
// malformed prefix) goes to the general decoder before p is touched. A non-write opcode, or a write whose header stack
// does not check out, has its prefix stored here exactly as the general
// decoder would store it and continues in decodeTransport, which is shared
// code. So both paths give the same Packet and the same error for every
// input; TestFastPathMatchesGeneral and FuzzFastPath check that.

// Fixed offsets of the fast path's frame.
const (
	fastIP  = 14                                                // IPv6 header
	fastUDP = fastIP + 40                                       // 54
	fastBTH = fastUDP + 8                                       // 62
	fastStk = fastBTH + BTHLen                                  // 74: METH
	fastMin = fastStk + METHLen + RETHLen                       // 94: end of RETH without TSETH/ImmDt
	fastMax = fastStk + METHLen + TSETHLen + RETHLen + ImmDtLen // 102: end of the largest write stack
)

// Fixed offsets of an IPv4 frame's UDP header and BTH (decodeV4).
const (
	fastV4UDP = fastIP + 20   // 34
	fastV4BTH = fastV4UDP + 8 // 42
)

// Decode parses frame b (starting at the Ethernet header) into p. It is
// lenient: it returns the first error that stops it, with p filled up to
// that point. It does not verify the ICRC (see VerifyICRC and Check).
//
// Decode itself is the fast path; frames of another shape go to
// decodeGeneral before p is touched.
func (c *Codec) Decode(b []byte, p *Packet) error {
	if len(b) >= fastV4BTH && binary.LittleEndian.Uint32(b[12:])&0x00FFFFFF == 0x00450008 { // IPv4, no options
		return c.decodeV4(b, p)
	}
	if len(b) < fastStk {
		return c.decodeGeneral(b, p)
	}
	h := (*[fastStk]byte)(b)
	// EtherType 0x86DD and IP version 6, read little-endian in one load.
	if binary.LittleEndian.Uint32(h[12:])&0x00F0FFFF != 0x0060DD86 || h[fastIP+6] != ProtoUDP {
		return c.decodeGeneral(b, p)
	}
	ipEnd := fastUDP + int(be.Uint16(h[fastIP+4:]))
	uEnd := fastUDP + int(be.Uint16(h[fastUDP+4:]))
	if c.trimDSCP>>(be.Uint16(h[fastIP:])>>6&63)&1 != 0 || ipEnd > len(b) || uEnd < fastBTH || uEnd > ipEnd {
		return c.decodeGeneral(b, p)
	}
	if port := be.Uint16(h[fastUDP+2:]); port != c.ports[0] && !c.AcceptsPort(port) {
		return c.decodeGeneral(b, p)
	}
	op := Opcode(h[fastBTH])
	ts, imm := h[fastBTH+8]&c.tsMask != 0, op|2 == OpWriteOnlyImm // 0xC9 or 0xCB among the writes
	need := fastMin
	if ts {
		need += TSETHLen
	}
	if imm {
		need += ImmDtLen
	}
	end := uEnd - ICRCLen
	payEnd := end - int(h[fastBTH+1]>>4&3)
	if !op.IsWrite() || payEnd < need || len(b) < fastMax+ICRCLen {
		return c.decodeV6Prefix(b, p)
	}

	// Everything is checked: store. Each field is loaded on its own,
	// after the stores before it: values kept in registers across the
	// stores would be spilled.
	p.Payload = b[need:payEnd:payEnd]
	p.ICRC = c.carriedICRC(b[end:uEnd])
	p.ipOff, p.udpOff, p.bthOff, p.hdrEnd, p.padEnd, p.end = fastIP, fastUDP, fastBTH, need, end, uEnd
	// storeV6Prefix, inlined by hand: it is over the inlining budget, and
	// a call would spill every live register.
	p.Eth.Dst = [6]byte(h[0:6])
	p.Eth.Src = [6]byte(h[6:12])
	p.Eth.EtherType = EtherTypeIPv6
	p.SRv6, p.HasSRH, p.IsIPv6, p.Trimmed, p.TrimmedLastHop = false, false, true, false, false
	ip := &p.IP6
	ip.TrafficClass = uint8(be.Uint16(h[fastIP:]) >> 4)
	ip.FlowLabel = be.Uint32(h[fastIP:]) & 0xFFFFF
	ip.PayloadLength = be.Uint16(h[fastIP+4:])
	ip.NextHeader = ProtoUDP
	ip.HopLimit = h[fastIP+7]
	ip.Src = [16]byte(h[fastIP+8 : fastIP+24])
	ip.Dst = [16]byte(h[fastIP+24 : fastIP+40])
	u := &p.UDP
	u.SrcPort = be.Uint16(h[fastUDP:])
	u.DstPort = be.Uint16(h[fastUDP+2:])
	u.Length = be.Uint16(h[fastUDP+4:])
	u.Checksum = be.Uint16(h[fastUDP+6:])

	bt := &p.BTH
	bt.Opcode = Opcode(h[fastBTH])
	bt.SE = h[fastBTH+1]&c.seMask != 0
	bt.M = h[fastBTH+1]&c.mMask != 0
	bt.PadCount = h[fastBTH+1] >> 4 & 3
	bt.TVer = h[fastBTH+1] & 0xF
	bt.PKey = be.Uint16(h[fastBTH+2:])
	bt.Variant = h[fastBTH+4]
	bt.DestQP = be.Uint32(h[fastBTH+4:]) & 0xFFFFFF
	bt.AckReq = h[fastBTH+8]&0x80 != 0
	bt.Retransmit = h[fastBTH+8]&c.rtxMask != 0
	bt.TSPresent = ts
	bt.Rsvd = h[fastBTH+8] & c.rsvdMask
	bt.PSN = be.Uint32(h[fastBTH+8:]) & 0xFFFFFF

	s := (*[fastMax - fastStk]byte)(b[fastStk:])
	hdrs := HasMETH | HasRETH | HasPayload
	m := be.Uint32(s[:])
	p.METH = METH{RQMSN: uint16(m >> 16), MSN: uint16(m)}
	r := (*[RETHLen + ImmDtLen]byte)(s[METHLen:])
	if ts {
		t := be.Uint16(s[METHLen+2:])
		p.TSETH.TxTimestamp = be.Uint16(s[METHLen:])
		p.TSETH.TSR, p.TSETH.Rsvd, p.TSETH.FType = decodeTSWord(t)
		r = (*[RETHLen + ImmDtLen]byte)(s[METHLen+TSETHLen:])
		hdrs |= HasTSETH
	}
	p.RETH = RETH{VA: be.Uint64(r[:]), RKey: be.Uint32(r[8:]), DMALength: be.Uint32(r[12:])}
	if imm {
		p.ImmDt = be.Uint32(r[RETHLen:])
		hdrs |= HasImmDt
	}
	prevParts, prevHdrs := p.parts, p.Decoded
	p.parts, p.Decoded = partIP6|partUDP|partBTH, hdrs
	if prevParts&^(partIP6|partUDP|partBTH) != 0 || prevHdrs&^hdrs != 0 {
		p.clean(prevParts, prevHdrs)
	}
	return nil
}

// storeV6Prefix stores the Ethernet, IPv6 and UDP headers that Decode
// checked, as the general decoder would, and the flags they imply.
func (p *Packet) storeV6Prefix(h *[fastStk]byte) {
	p.Eth.Dst = [6]byte(h[0:6])
	p.Eth.Src = [6]byte(h[6:12])
	p.Eth.EtherType = EtherTypeIPv6
	p.SRv6, p.HasSRH, p.IsIPv6, p.Trimmed, p.TrimmedLastHop = false, false, true, false, false
	ip := &p.IP6
	ip.TrafficClass = uint8(be.Uint16(h[fastIP:]) >> 4)
	ip.FlowLabel = be.Uint32(h[fastIP:]) & 0xFFFFF
	ip.PayloadLength = be.Uint16(h[fastIP+4:])
	ip.NextHeader = ProtoUDP
	ip.HopLimit = h[fastIP+7]
	ip.Src = [16]byte(h[fastIP+8 : fastIP+24])
	ip.Dst = [16]byte(h[fastIP+24 : fastIP+40])
	u := &p.UDP
	u.SrcPort = be.Uint16(h[fastUDP:])
	u.DstPort = be.Uint16(h[fastUDP+2:])
	u.Length = be.Uint16(h[fastUDP+4:])
	u.Checksum = be.Uint16(h[fastUDP+6:])
}

// decodeV6Prefix finishes Decode for a frame whose Ethernet, IPv6 and UDP
// headers passed the fast path's checks but whose transport headers are
// not a write the fast path takes: it stores the prefix and leaves p as
// the general decoder would have at that point, then runs the general
// transport decoder.
func (c *Codec) decodeV6Prefix(b []byte, p *Packet) error {
	h := (*[fastStk]byte)(b)
	uEnd := fastUDP + int(be.Uint16(h[fastUDP+4:]))
	p.storeV6Prefix(h)
	p.Payload, p.ICRC = nil, 0
	p.ipOff, p.udpOff, p.bthOff, p.hdrEnd, p.padEnd, p.end = fastIP, fastUDP, 0, 0, 0, uEnd
	prevParts, prevHdrs := p.parts, p.Decoded
	p.parts, p.Decoded = partIP6|partUDP, 0
	err := c.decodeTransport(b[:uEnd], fastBTH, p)
	if prevParts&^p.parts != 0 || prevHdrs&^p.Decoded != 0 {
		p.clean(prevParts, prevHdrs)
	}
	return err
}

// decodeV4 decodes an Ethernet (no VLAN tag) / IPv4 (no options) / UDP
// frame. When the IPv4 and UDP headers check out (UDP, lengths inside the
// frame, a DSCP that is not trimmed, an MRC port) it stores them as the
// general decoder would and runs the general transport decoder;
// otherwise the general decoder takes the frame before p is touched.
func (c *Codec) decodeV4(b []byte, p *Packet) error {
	h := (*[fastV4BTH]byte)(b)
	tl := int(be.Uint16(h[fastIP+2:]))
	ipEnd := fastIP + tl
	uEnd := fastV4UDP + int(be.Uint16(h[fastV4UDP+4:]))
	// uEnd > ipEnd also catches a total length under 20.
	if h[fastIP+9] != ProtoUDP || ipEnd > len(b) || c.trimDSCP>>(h[fastIP+1]>>2)&1 != 0 || uEnd < fastV4BTH || uEnd > ipEnd {
		return c.decodeGeneral(b, p)
	}
	if port := be.Uint16(h[fastV4UDP+2:]); port != c.ports[0] && !c.AcceptsPort(port) {
		return c.decodeGeneral(b, p)
	}
	prevParts, prevHdrs := p.parts, p.Decoded
	p.SRv6, p.HasSRH, p.IsIPv6 = false, false, false
	p.Payload, p.ICRC, p.Trimmed, p.TrimmedLastHop = nil, 0, false, false
	p.Eth.Dst = [6]byte(h[0:6])
	p.Eth.Src = [6]byte(h[6:12])
	p.Eth.EtherType = EtherTypeIPv4
	p.IP4 = IPv4{
		TOS: h[fastIP+1], TotalLength: uint16(tl), ID: be.Uint16(h[fastIP+4:]), FlagsFrag: be.Uint16(h[fastIP+6:]),
		TTL: h[fastIP+8], Protocol: ProtoUDP, Checksum: be.Uint16(h[fastIP+10:]),
		Src: [4]byte(h[fastIP+12 : fastIP+16]), Dst: [4]byte(h[fastIP+16 : fastIP+20]),
	}
	p.UDP = UDP{SrcPort: be.Uint16(h[fastV4UDP:]), DstPort: be.Uint16(h[fastV4UDP+2:]),
		Length: be.Uint16(h[fastV4UDP+4:]), Checksum: be.Uint16(h[fastV4UDP+6:])}
	p.ipOff, p.udpOff, p.bthOff, p.hdrEnd, p.padEnd, p.end = fastIP, fastV4UDP, 0, 0, 0, uEnd
	p.parts, p.Decoded = partIP4|partUDP, 0
	err := c.decodeTransport(b[:uEnd], fastV4BTH, p)
	if prevParts&^p.parts != 0 || prevHdrs&^p.Decoded != 0 {
		p.clean(prevParts, prevHdrs)
	}
	return err
}
