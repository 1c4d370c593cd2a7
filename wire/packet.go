package wire

import (
	"fmt"
)

// EtherTypes and IP protocol numbers the codec understands.
const (
	EtherTypeIPv4 = 0x0800
	EtherTypeIPv6 = 0x86DD
	EtherTypeVLAN = 0x8100
	ProtoUDP      = 17
	ProtoIPv6     = 41 // IPv6-in-IPv6, the SRv6 encapsulation (WIRE-ENC-2)
	ProtoRouting  = 43 // IPv6 routing header (SRH)
	SRHType       = 4  // Segment Routing Header routing type

	// MaxSRHSegments bounds the SRH segment list the codec holds, so no
	// length field can make it allocate; RFC 9800 compressed segment
	// lists fit in a few segments.
	MaxSRHSegments = 8
)

// Ethernet is the Ethernet II header with an optional 802.1Q tag.
type Ethernet struct {
	Dst, Src  [6]byte
	HasVLAN   bool
	VLANTCI   uint16
	EtherType uint16
}

// IPv4 is an IPv4 header without options.
type IPv4 struct {
	TOS         uint8 // DSCP << 2 | ECN
	TotalLength uint16
	ID          uint16
	FlagsFrag   uint16
	TTL         uint8
	Protocol    uint8
	Checksum    uint16
	Src, Dst    [4]byte
}

// IPv6 is an IPv6 fixed header.
type IPv6 struct {
	TrafficClass  uint8 // DSCP << 2 | ECN
	FlowLabel     uint32
	PayloadLength uint16
	NextHeader    uint8
	HopLimit      uint8
	Src, Dst      [16]byte
}

// SRH is an IPv6 Segment Routing Header without TLVs.
type SRH struct {
	NextHeader   uint8
	HdrExtLen    uint8
	RoutingType  uint8
	SegmentsLeft uint8
	LastEntry    uint8
	Flags        uint8
	Tag          uint16
	Segments     [MaxSRHSegments][16]byte // Segments[0..LastEntry]
}

// UDP is the UDP header.
type UDP struct {
	SrcPort, DstPort, Length, Checksum uint16
}

// Packet is one decoded MRC frame. Decode fills it without allocating;
// Payload aliases the input.
type Packet struct {
	Eth    Ethernet
	SRv6   bool // an outer IPv6 (SRv6 path) wraps the inner IPv6 (WIRE-ENC-2)
	Outer  IPv6
	HasSRH bool
	SRH    SRH
	IsIPv6 bool // the inner IP header is IPv6 (else IPv4)
	IP4    IPv4
	IP6    IPv6
	UDP    UDP
	BTH    BTH
	METH   METH
	TSETH  TSETH
	RETH   RETH
	ImmDt  uint32
	AETH   AETH
	SETH   SETH
	NETH   NETH
	PETH   PETH
	ERTH   ERTH
	EETH   EETH
	// Payload is the write data, without pad bytes.
	Payload []byte
	// ICRC as carried on the wire (absent when Trimmed).
	ICRC uint32
	// Trimmed is set when the DSCP marks a trimmed packet: the payload and
	// ICRC were removed in the fabric (WIRE-DSCP-2).
	Trimmed bool
	// TrimmedLastHop is set when the trim happened at the last hop.
	TrimmedLastHop bool
	// Decoded lists the extension headers that were decoded.
	Decoded Stack

	ipOff, udpOff, bthOff, hdrEnd, padEnd, end int
	parts                                      uint16
	// errTo is where a DecodeInto in progress writes its error; nil
	// otherwise (Decode allocates each error).
	errTo *Error
}

// tos returns the traffic class of the outermost IP header: switches
// mark and trim the header they forward on, so receivers read DSCP and ECN
// there, before decapsulation (WIRE-DSCP-6).
func (p *Packet) tos() uint8 {
	switch {
	case p.SRv6:
		return p.Outer.TrafficClass
	case p.IsIPv6:
		return p.IP6.TrafficClass
	}
	return p.IP4.TOS
}

// DSCP returns the DSCP of the outermost IP header (WIRE-DSCP-6).
func (p *Packet) DSCP() uint8 { return p.tos() >> 2 }

// ECN returns the ECN bits of the outermost IP header (WIRE-DSCP-6).
func (p *Packet) ECN() uint8 { return p.tos() & 3 }

// Offsets returns the byte offsets of the inner IP header, UDP header and
// BTH in the decoded frame, for tools that annotate bytes; 0 for a header
// decoding did not reach. A frame rejected for its IP header's protocol or
// next header (an IPv6 fragment, say), or for a length beyond the frame,
// keeps that header's offset.
func (p *Packet) Offsets() (ip, udp, bth int) { return p.ipOff, p.udpOff, p.bthOff }

// Parts of a Packet that a decode may leave untouched; Decode zeroes the
// ones the previous decode wrote and this one did not, so reusing a Packet
// costs nothing when consecutive frames have the same shape.
const (
	partVLAN uint16 = 1 << iota
	partOuter
	partSRH
	partIP4
	partIP6
	partUDP
	partBTH
)

// clean zeroes the parts and extension headers that were written by the
// previous decode (prevParts, prevHdrs) but not by this one.
func (p *Packet) clean(prevParts uint16, prevHdrs Stack) {
	stale, hdrs := prevParts&^p.parts, prevHdrs&^p.Decoded
	if stale != 0 {
		if stale&partVLAN != 0 {
			p.Eth.HasVLAN, p.Eth.VLANTCI = false, 0
		}
		if stale&partOuter != 0 {
			p.Outer, p.SRv6 = IPv6{}, false
		}
		if stale&partSRH != 0 {
			p.SRH, p.HasSRH = SRH{}, false
		}
		if stale&partIP4 != 0 {
			p.IP4 = IPv4{}
		}
		if stale&partIP6 != 0 {
			p.IP6 = IPv6{}
		}
		if stale&partUDP != 0 {
			p.UDP = UDP{}
		}
		if stale&partBTH != 0 {
			p.BTH = BTH{}
		}
	}
	if hdrs == 0 {
		return
	}
	if hdrs&HasMETH != 0 {
		p.METH = METH{}
	}
	if hdrs&HasTSETH != 0 {
		p.TSETH = TSETH{}
	}
	if hdrs&HasRETH != 0 {
		p.RETH = RETH{}
	}
	if hdrs&HasImmDt != 0 {
		p.ImmDt = 0
	}
	if hdrs&HasAETH != 0 {
		p.AETH = AETH{}
	}
	if hdrs&HasSETH != 0 {
		p.SETH = SETH{}
	}
	if hdrs&HasNETH != 0 {
		p.NETH = NETH{}
	}
	if hdrs&HasPETH != 0 {
		p.PETH = PETH{}
	}
	if hdrs&HasERTH != 0 {
		p.ERTH = ERTH{}
	}
	if hdrs&HasEETH != 0 {
		p.EETH = EETH{}
	}
}

func errAt(kind error, hdr string, off int, field string, req ReqID, format string, args ...any) *Error {
	return &Error{Kind: kind, Header: hdr, Offset: off, Field: field, Req: req, Msg: fmt.Sprintf(format, args...)}
}

// errAt is the error p's decode stops at, its message format's operands
// in a: written into p.errTo with the message unformatted when a
// DecodeInto is in progress (no allocation), else a new Error.
func (p *Packet) errAt(kind error, hdr string, off int, field string, req ReqID, format string, a ...int) *Error {
	return p.errAtQ(kind, hdr, off, field, req, format, "", a...)
}

// errAtQ is errAt for a format whose last %q operand is q.
func (p *Packet) errAtQ(kind error, hdr string, off int, field string, req ReqID, format, q string, a ...int) *Error {
	m := lazyMsg{format: format, str: q}
	m.n = int8(copy(m.ints[:], a))
	e := p.errTo
	if e == nil {
		e = new(Error)
		*e = Error{Kind: kind, Header: hdr, Offset: off, Field: field, Req: req, Msg: string(m.append(nil))}
		return e
	}
	*e = Error{Kind: kind, Header: hdr, Offset: off, Field: field, Req: req, msg: m}
	return e
}

// truncated is the error of a header hdr at off that needs need bytes
// where have are left (errAt).
func (p *Packet) truncated(hdr string, off, need, have int, req ReqID) *Error {
	return p.errAt(ErrTruncated, hdr, off, "", req, "need %d bytes, have %d", need, have)
}

// DecodeInto is Decode writing the error that stops it, if any, into *e
// rather than into a new Error, with Msg left empty for Message and Error
// to format when asked: decoding malformed frames allocates nothing. The
// error returned is then e itself, so it holds only until e is written
// again.
func (c *Codec) DecodeInto(b []byte, p *Packet, e *Error) error {
	p.errTo = e
	err := c.Decode(b, p)
	p.errTo = nil
	return err
}

// decodeGeneral is Decode for every frame shape; Decode handles the common
// one itself (fastpath.go).
func (c *Codec) decodeGeneral(b []byte, p *Packet) error {
	prevParts, prevHdrs := p.parts, p.Decoded
	p.parts, p.Decoded = 0, 0
	p.SRv6, p.HasSRH, p.IsIPv6 = false, false, false
	p.Payload, p.ICRC, p.Trimmed, p.TrimmedLastHop = nil, 0, false, false
	p.ipOff, p.udpOff, p.bthOff, p.hdrEnd, p.padEnd, p.end = 0, 0, 0, 0, 0, 0
	err := c.decode(b, p)
	if prevParts&^p.parts != 0 || prevHdrs&^p.Decoded != 0 {
		p.clean(prevParts, prevHdrs)
	}
	return err
}

func (c *Codec) decode(b []byte, p *Packet) error {
	if len(b) < 14 {
		return p.truncated("Ethernet", 0, 14, len(b), ReqENC1)
	}
	p.Eth.EtherType = 0
	copy(p.Eth.Dst[:], b[0:6])
	copy(p.Eth.Src[:], b[6:12])
	off, et := 14, be.Uint16(b[12:])
	if et == EtherTypeVLAN {
		if len(b) < 18 {
			return p.truncated("Ethernet", 12, 18, len(b), ReqENC1)
		}
		p.Eth.HasVLAN, p.Eth.VLANTCI, et, off = true, be.Uint16(b[14:]), be.Uint16(b[16:]), 18
		p.parts |= partVLAN
	}
	p.Eth.EtherType = et
	var end int
	var err error
	switch et {
	case EtherTypeIPv4:
		end, err = p.decodeIPv4(c, b, off)
	case EtherTypeIPv6:
		end, err = p.decodeIPv6Stack(c, b, off)
	default:
		return p.errAt(ErrUnsupported, "Ethernet", 12, "ether_type", ReqENC1, "EtherType 0x%04x is neither IPv4 nor IPv6", int(et))
	}
	if err != nil {
		return err
	}
	return c.decodeUDP(b, p.udpOff, end, p)
}

func (p *Packet) decodeIPv4(c *Codec, b []byte, off int) (end int, err error) {
	if len(b) < off+20 {
		return 0, p.truncated("IPv4", off, 20, len(b)-off, ReqENC1)
	}
	h := b[off:]
	p.parts |= partIP4
	if h[0]>>4 != 4 {
		return 0, p.errAt(ErrInvalid, "IPv4", off, "version", ReqENC1, "version %d, want 4", int(h[0]>>4))
	}
	if h[0]&0xF != 5 {
		return 0, p.errAt(ErrUnsupported, "IPv4", off, "ihl", ReqENC1, "IHL %d: IPv4 options are not used by MRC", int(h[0]&0xF))
	}
	ip := &p.IP4
	*ip = IPv4{}
	ip.TOS, ip.TotalLength, ip.ID, ip.FlagsFrag = h[1], be.Uint16(h[2:]), be.Uint16(h[4:]), be.Uint16(h[6:])
	ip.TTL, ip.Protocol, ip.Checksum = h[8], h[9], be.Uint16(h[10:])
	copy(ip.Src[:], h[12:16])
	copy(ip.Dst[:], h[16:20])
	p.ipOff = off
	end = off + int(ip.TotalLength)
	if int(ip.TotalLength) < 20 || end > len(b) {
		if trimmed, _ := c.IsTrimmedDSCP(ip.TOS >> 2); !trimmed || int(ip.TotalLength) < 20 {
			return 0, p.errAt(ErrTruncated, "IPv4", off, "total_length", ReqLEN1,
				"total length %d, frame has %d bytes from the IP header", int(ip.TotalLength), len(b)-off)
		}
		end = len(b) // a trim may keep the original length (WIRE-TRIM-2)
	}
	if ip.Protocol != ProtoUDP {
		return 0, p.errAt(ErrUnsupported, "IPv4", off, "protocol", ReqENC1, "protocol %d, want UDP (17)", int(ip.Protocol))
	}
	p.udpOff = off + 20
	return end, nil
}

// decodeIPv6 decodes an IPv6 header. When trimmed reports the packet
// trimmed, given the header's traffic class, a payload length beyond the
// frame is taken as the original packet's and clamped (WIRE-TRIM-2).
func decodeIPv6(p *Packet, b []byte, off int, ip *IPv6, trimmed func(tc uint8) bool) (end int, err error) {
	if len(b) < off+40 {
		*ip = IPv6{}
		return 0, p.truncated("IPv6", off, 40, len(b)-off, ReqENC1)
	}
	h := b[off:]
	w := be.Uint32(h)
	if w>>28 != 6 {
		*ip = IPv6{}
		return 0, p.errAt(ErrInvalid, "IPv6", off, "version", ReqENC1, "version %d, want 6", int(w>>28))
	}
	ip.TrafficClass, ip.FlowLabel = uint8(w>>20), w&0xFFFFF
	ip.PayloadLength, ip.NextHeader, ip.HopLimit = be.Uint16(h[4:]), h[6], h[7]
	copy(ip.Src[:], h[8:24])
	copy(ip.Dst[:], h[24:40])
	end = off + 40 + int(ip.PayloadLength)
	if end > len(b) && trimmed(ip.TrafficClass) {
		end = len(b)
	}
	if end > len(b) {
		// The header is whole, as an IPv4 header whose total length
		// overruns the frame: its offset lets a judge name the sender.
		p.ipOff = off
		return 0, p.errAt(ErrTruncated, "IPv6", off, "payload_length", ReqLEN1,
			"payload length %d, frame has %d bytes after the IPv6 header", int(ip.PayloadLength), len(b)-off-40)
	}
	return end, nil
}

// decodeIPv6Stack decodes an IPv6 header, and when it is an SRv6 outer
// header (next header 41, or 43 with an SRH), the inner IPv6 (WIRE-ENC-2).
func (p *Packet) decodeIPv6Stack(c *Codec, b []byte, off int) (end int, err error) {
	p.IsIPv6 = true
	p.parts |= partIP6
	// The outermost traffic class decides trimming (WIRE-DSCP-6): the
	// outer header's own, and the outer's for the inner header.
	trimmed := func(tc uint8) bool {
		t, _ := c.IsTrimmedDSCP(tc >> 2)
		return t
	}
	if end, err = decodeIPv6(p, b, off, &p.IP6, trimmed); err != nil {
		return 0, err
	}
	switch p.IP6.NextHeader {
	case ProtoUDP:
		p.ipOff, p.udpOff = off, off+40
		return end, nil
	case ProtoIPv6, ProtoRouting:
	default:
		// Read whole, as an IPv4 header whose protocol is not UDP: its
		// offset lets a judge discard a fragment (next header 44) and
		// tools show the header.
		p.ipOff = off
		return 0, p.errAt(ErrUnsupported, "IPv6", off, "next_header", ReqENC1,
			"next header %d, want UDP (17), IPv6 (41) or routing (43)", int(p.IP6.NextHeader))
	}
	p.SRv6, p.Outer, p.IP6 = true, p.IP6, IPv6{}
	p.parts |= partOuter
	outerEnd, inner := end, off+40
	if p.Outer.NextHeader == ProtoRouting {
		n, err := p.decodeSRH(b[:outerEnd], inner)
		if err != nil {
			return 0, err
		}
		inner += n
	}
	outerTrimmed := trimmed(p.Outer.TrafficClass)
	if end, err = decodeIPv6(p, b[:outerEnd], inner, &p.IP6, func(uint8) bool { return outerTrimmed }); err != nil {
		return 0, err
	}
	if p.IP6.NextHeader != ProtoUDP {
		p.ipOff = inner
		return 0, p.errAt(ErrUnsupported, "IPv6", inner, "next_header", ReqENC2,
			"inner next header %d, want UDP (17)", int(p.IP6.NextHeader))
	}
	p.ipOff, p.udpOff = inner, inner+40
	return end, nil
}

func (p *Packet) decodeSRH(b []byte, off int) (int, error) {
	if len(b) < off+8 {
		return 0, p.truncated("SRH", off, 8, len(b)-off, ReqENC2)
	}
	h, s := b[off:], &p.SRH
	*s = SRH{}
	p.HasSRH = true
	p.parts |= partSRH
	s.NextHeader, s.HdrExtLen, s.RoutingType, s.SegmentsLeft = h[0], h[1], h[2], h[3]
	s.LastEntry, s.Flags, s.Tag = h[4], h[5], be.Uint16(h[6:])
	n := 8 + 8*int(s.HdrExtLen)
	if s.RoutingType != SRHType {
		return 0, p.errAt(ErrUnsupported, "SRH", off, "routing_type", ReqENC2, "routing type %d, want 4 (SRH)", int(s.RoutingType))
	}
	if int(s.LastEntry) >= MaxSRHSegments {
		return 0, p.errAt(ErrUnsupported, "SRH", off, "last_entry", ReqENC2, "%d segments, at most %d", int(s.LastEntry)+1, MaxSRHSegments)
	}
	if want := 2 * (int(s.LastEntry) + 1); int(s.HdrExtLen) != want {
		return 0, p.errAt(ErrInvalid, "SRH", off, "hdr_ext_len", ReqENC2,
			"hdr ext len %d, want %d for %d segments and no TLVs", int(s.HdrExtLen), want, int(s.LastEntry)+1)
	}
	if len(b) < off+n {
		return 0, p.truncated("SRH", off, n, len(b)-off, ReqENC2)
	}
	if s.NextHeader != ProtoIPv6 {
		return 0, p.errAt(ErrUnsupported, "SRH", off, "next_header", ReqENC2, "next header %d, want IPv6 (41)", int(s.NextHeader))
	}
	for i := 0; i <= int(s.LastEntry); i++ {
		copy(s.Segments[i][:], h[8+16*i:])
	}
	return n, nil
}

func (c *Codec) decodeUDP(b []byte, off, ipEnd int, p *Packet) error {
	if ipEnd < off+8 {
		return p.truncated("UDP", off, 8, ipEnd-off, ReqENC1)
	}
	h := b[off:]
	p.parts |= partUDP
	u := &p.UDP
	u.SrcPort, u.DstPort, u.Length, u.Checksum = be.Uint16(h), be.Uint16(h[2:]), be.Uint16(h[4:]), be.Uint16(h[6:])
	p.Trimmed, p.TrimmedLastHop = c.IsTrimmedDSCP(p.DSCP())
	p.end = off + int(u.Length)
	if int(u.Length) < 8 || p.end > ipEnd {
		if !p.Trimmed || int(u.Length) < 8 {
			return p.errAt(ErrTruncated, "UDP", off, "length", ReqLEN1, "length %d, IP datagram leaves %d bytes", int(u.Length), ipEnd-off)
		}
		p.end = ipEnd // the original length, kept by the trim (WIRE-TRIM-2)
	}
	if !c.AcceptsPort(u.DstPort) {
		return p.errAtQ(ErrUnsupported, "UDP", off, "dst_port", ReqUDP1, "destination port %d is not MRC under profile %q", c.prof.Name, int(u.DstPort))
	}
	return c.decodeTransport(b[:p.end], off+8, p)
}

// decodeTransport decodes the BTH, the opcode's header stack, payload and
// ICRC from b[off:]. It is straight-line code: this is the hot path.
func (c *Codec) decodeTransport(b []byte, off int, p *Packet) error {
	p.bthOff = off
	if len(b) < off+BTHLen {
		return p.truncated("BTH", off, BTHLen, len(b)-off, ReqBTH1)
	}
	c.decodeBTH(b[off:], &p.BTH)
	p.parts |= partBTH
	op := p.BTH.Opcode
	if !op.Valid() {
		return p.errAt(ErrInvalid, "BTH", off, "opcode", ReqBTH2, "opcode 0x%02X is not an MRC opcode", int(uint8(op)))
	}
	end := len(b)
	if !p.Trimmed {
		if end-off-BTHLen < ICRCLen {
			return p.truncated("ICRC", end, ICRCLen, end-off-BTHLen, ReqICRC1)
		}
		end -= ICRCLen
		p.ICRC = c.carriedICRC(b[end:])
	}
	off += BTHLen
	if op.IsWrite() {
		return c.decodeWrite(b[:end], off, p)
	}
	var n int
	var hdr string
	var req ReqID
	switch op {
	case OpAcknowledge:
		n, hdr, req = AETHLen, "AETH", ReqAETH1
	case OpSACK:
		n, hdr, req = SETHLen+CCStateLen, "SETH", ReqSETH1
	case OpNACK:
		n, hdr, req = NETHLen, "NETH", ReqNETH1
	case OpProbe:
		n, hdr, req = PETHLen, "PETH", ReqPETH1
	case OpEndpointReq:
		n, hdr, req = ERTHLen, "ERTH", ReqERTH1
	default: // OpEndpointResp
		n, hdr, req = EETHLen, "EETH", ReqEETH1
	}
	if end-off < n {
		return p.truncated(hdr, off, n, end-off, req)
	}
	h := b[off:]
	switch op {
	case OpAcknowledge:
		p.AETH.Syndrome, p.AETH.MSN = h[0], u24(h[1:])
	case OpSACK:
		p.SETH.decode(h)
	case OpNACK:
		p.NETH.decode(h)
	case OpProbe:
		p.PETH.decode(h)
	case OpEndpointReq:
		p.ERTH.decode(h)
		p.ERTH.Op = c.epOp(p.ERTH.Op)
	default:
		p.EETH.decode(h)
		p.EETH.Op = c.epOp(p.EETH.Op)
	}
	p.Decoded |= op.Stack()
	p.hdrEnd, p.padEnd = off+n, end
	return nil
}

// decodeWrite decodes METH, [TSETH], RETH, [ImmDt] and the payload from
// b[off:], where b ends before the ICRC.
func (c *Codec) decodeWrite(b []byte, off int, p *Packet) error {
	ts, imm := p.BTH.TSPresent, p.BTH.Opcode.HasImm()
	need := METHLen + RETHLen
	if ts {
		need += TSETHLen
	}
	if imm {
		need += ImmDtLen
	}
	if len(b)-off < need {
		return c.truncatedWrite(b, off, p)
	}
	// Each header is read as an array, its length checked once: need
	// bytes are there.
	h := b[off:]
	m := (*[METHLen + RETHLen]byte)(h)
	p.METH.RQMSN, p.METH.MSN = be.Uint16(m[:]), be.Uint16(m[2:])
	r := (*[RETHLen]byte)(m[METHLen:])
	p.Decoded |= HasMETH | HasRETH | HasPayload
	if ts {
		t := (*[TSETHLen + RETHLen]byte)(h[METHLen:])
		p.TSETH.decode(t[:])
		r = (*[RETHLen]byte)(t[TSETHLen:])
		p.Decoded |= HasTSETH
	}
	p.RETH.VA, p.RETH.RKey, p.RETH.DMALength = be.Uint64(r[:]), be.Uint32(r[8:]), be.Uint32(r[12:])
	if imm {
		p.ImmDt = be.Uint32(h[need-ImmDtLen:])
		p.Decoded |= HasImmDt
	}
	off += need
	p.hdrEnd = off
	if p.Trimmed { // whatever follows the headers of a trim is ignored (WIRE-TRIM-2)
		p.Payload, p.padEnd = b[off:off:off], off
		return nil
	}
	pad := int(p.BTH.PadCount)
	if len(b)-off < pad {
		return p.errAt(ErrInvalid, "BTH", p.bthOff+1, "pad_cnt", ReqBTH9, "pad count %d exceeds the %d payload bytes", pad, len(b)-off)
	}
	p.Payload = b[off : len(b)-pad : len(b)-pad]
	p.padEnd = len(b)
	return nil
}

// truncatedWrite decodes what fits of a write's header stack and names the
// first header that does not.
func (c *Codec) truncatedWrite(b []byte, off int, p *Packet) error {
	if len(b)-off < METHLen {
		return p.truncated("METH", off, METHLen, len(b)-off, ReqMETH1)
	}
	_ = p.METH.Decode(b[off:])
	p.Decoded |= HasMETH
	off += METHLen
	if p.BTH.TSPresent {
		if len(b)-off < TSETHLen {
			return p.truncated("TSETH", off, TSETHLen, len(b)-off, ReqTSETH1)
		}
		p.TSETH.decode(b[off:])
		p.Decoded |= HasTSETH
		off += TSETHLen
	}
	if len(b)-off < RETHLen {
		return p.truncated("RETH", off, RETHLen, len(b)-off, ReqRETH1)
	}
	_ = p.RETH.Decode(b[off:])
	p.Decoded |= HasRETH
	off += RETHLen
	return p.truncated("ImmDt", off, ImmDtLen, len(b)-off, ReqIMM1)
}
