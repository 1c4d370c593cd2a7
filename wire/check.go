package wire

// Check applies the strict rules to a packet that Decode(b, p) filled
// without error and appends one Violation per broken rule to dst. It never
// allocates when there is nothing to report.
func (c *Codec) Check(b []byte, p *Packet, dst []Violation) []Violation {
	return c.check(b, p, dst, true, false, 0)
}

// CheckComputed is Check for a caller that computed the frame's ICRC
// already (ComputeICRC of a codec with the same ICRC settings, SameICRC;
// a parallel judge computes it in another goroutine): icrc is that value,
// compared with the one the frame carries.
func (c *Codec) CheckComputed(b []byte, p *Packet, dst []Violation, icrc uint32) []Violation {
	return c.check(b, p, dst, true, true, icrc)
}

// CheckHeaders is Check without the ICRC, for a caller that knows the
// ICRC's verdict already (another codec with the same ICRC settings
// computed it) or does not need it.
func (c *Codec) CheckHeaders(b []byte, p *Packet, dst []Violation) []Violation {
	return c.check(b, p, dst, false, false, 0)
}

// SameICRC reports whether c and d compute the same ICRC (algorithm and
// masked fields), so that one's verdict on a frame is the other's.
func (c *Codec) SameICRC(d *Codec) bool {
	return c.prof.ICRC == d.prof.ICRC && c.prof.ICRCMaskUDPSrcPort == d.prof.ICRCMaskUDPSrcPort
}

func (c *Codec) check(b []byte, p *Packet, dst []Violation, withICRC, computed bool, icrc uint32) []Violation {
	vs := violations(dst)
	ipEnd := p.ipOff + int(p.IP4.TotalLength)
	if p.IsIPv6 {
		ipEnd = p.ipOff + 40 + int(p.IP6.PayloadLength)
	} else {
		if got := IPv4Checksum(b[p.ipOff:]); got != p.IP4.Checksum {
			vs.add(ReqENC1, "IPv4", p.ipOff+10, "checksum", "header checksum 0x%04x, want 0x%04x", int(p.IP4.Checksum), int(got))
		}
		if p.IP4.FlagsFrag&0x3FFF != 0 {
			vs.add(ReqENC1, "IPv4", p.ipOff+6, "flags", "fragmented datagram (flags/offset 0x%04x)", int(p.IP4.FlagsFrag))
		}
		if p.IP4.FlagsFrag&0x4000 == 0 {
			vs.add(ReqENC5, "IPv4", p.ipOff+6, "flags", "DF is clear; MRC sends IPv4 with DF set")
		}
	}
	if p.end != ipEnd && !p.Trimmed {
		vs.add(ReqLEN1, "UDP", p.udpOff+4, "length", "UDP length %d leaves %d bytes of the IP datagram unused", int(p.UDP.Length), ipEnd-p.end)
	}
	if p.SRv6 && !p.Trimmed {
		outer := p.ipOff - 40
		if p.HasSRH {
			outer -= 8 + 8*int(p.SRH.HdrExtLen)
		}
		if outerEnd := outer + 40 + int(p.Outer.PayloadLength); outerEnd != ipEnd {
			vs.add(ReqLEN1, "IPv6", outer+4, "payload_length", "outer payload length %d leaves %d bytes after the inner datagram",
				int(p.Outer.PayloadLength), outerEnd-ipEnd)
		}
	}
	if p.UDP.Checksum != 0 {
		vs.add(ReqUDP3, "UDP", p.udpOff+6, "checksum", "checksum 0x%04x, MRC sends 0", int(p.UDP.Checksum))
	}
	h := &p.BTH
	op := h.Opcode
	if h.TVer != 0 {
		vs.add(ReqBTH3, "BTH", p.bthOff+1, "tver", "transport version %d, want 0", int(h.TVer))
	}
	if h.Rsvd != 0 {
		vs.add(ReqBTH7, "BTH", p.bthOff+8, "reserved", "reserved bits 0x%02x set in byte 8", int(h.Rsvd))
	}
	ep := op == OpEndpointReq || op == OpEndpointResp
	if ep != (h.DestQP == EndpointQPN) && (ep || h.DestQP == EndpointQPN) {
		vs.add(ReqBTH8, "BTH", p.bthOff+5, "dest_qp", "%s to QPN 0x%06x: QPN 0x2 is for endpoint operations only", int(op), int(h.DestQP))
	}
	if ep && h.PSN>>16 != 0 {
		vs.add(ReqEP1, "BTH", p.bthOff+9, "psn", "endpoint operation PSN 0x%06x: bits 23-16 must be 0", int(h.PSN))
	}
	if p.Trimmed && !op.IsWrite() {
		vs.add(ReqTRIM1, op.String(), p.ipOff+1, "dscp", "a %s carries a trimmed DSCP; only write packets are trimmed", int(op))
	}
	switch op {
	case OpSACK:
		if h.PSN != p.SETH.CACKPSN || h.AckReq || h.Retransmit || h.TSPresent {
			vs.add(ReqSETH10, "BTH", p.bthOff+8, "psn", "SACK BTH psn %d (cack_psn %d), ack_req/rtx/ts %v/%v/%v: want psn = cack_psn and flags clear",
				int(h.PSN), int(p.SETH.CACKPSN), b2i(h.AckReq), b2i(h.Retransmit), b2i(h.TSPresent))
		}
	case OpNACK:
		if h.PSN != p.NETH.NACKPSN {
			vs.add(ReqNETH4, "BTH", p.bthOff+9, "psn", "NACK BTH psn %d, nack_psn %d: want them equal", int(h.PSN), int(p.NETH.NACKPSN))
		}
	case OpProbe:
		if h.PSN != 0 {
			vs.add(ReqPETH2, "BTH", p.bthOff+9, "psn", "probe BTH psn %d, want 0: probes consume no PSN", int(h.PSN))
		}
	}
	if h.TSPresent && !op.IsWrite() {
		vs.add(ReqBTH6, "BTH", p.bthOff+8, "ts", "TS flag on %s, which carries no TSETH", int(op))
	}
	if h.Retransmit && !op.IsWrite() {
		vs.add(ReqBTH5, "BTH", p.bthOff+8, "rtx", "RTX flag on %s, which is never retransmitted", int(op))
	}
	if op.IsWrite() {
		c.checkWrite(b, p, &vs)
	} else if p.padEnd != p.hdrEnd && !p.Trimmed {
		vs.add(ReqOP2, op.String(), p.hdrEnd, "", "%d bytes follow the last header", p.padEnd-p.hdrEnd)
	}
	if h.PadCount != 0 && !op.IsWrite() {
		vs.add(ReqBTH9, "BTH", p.bthOff+1, "pad_cnt", "pad count %d on %s, which has no payload", int(h.PadCount), int(op))
	}
	c.checkExt(p, &vs)
	if withICRC && !p.Trimmed {
		want := icrc
		if !computed {
			want = c.ComputeICRC(b, p)
		}
		if want != p.ICRC {
			vs.add(ReqICRC1, "ICRC", p.end-ICRCLen, "icrc", "ICRC 0x%08x, computed 0x%08x", int(p.ICRC), int(want))
		}
	}
	return vs
}

// violations is the list Check appends to.
type violations []Violation

// add appends a Violation whose message is format with the operands a,
// unformatted (Violation.Message formats it): a judge of frames that
// break a rule formats only the ones it shows. It returns the Violation.
// A method, not a func value, so that a does not escape to the heap.
func (vs *violations) add(req ReqID, hdr string, off int, field, format string, a ...int) *Violation {
	*vs = append(*vs, Violation{Req: req, Header: hdr, Offset: off, Field: field, msg: lazyMsg{format: format}})
	v := &(*vs)[len(*vs)-1]
	v.msg.n = int8(copy(v.msg.ints[:], a))
	return v
}

func (c *Codec) checkWrite(b []byte, p *Packet, vs *violations) {
	if p.Trimmed {
		return // the pad count describes the payload the trim removed
	}
	if padOK(b, p, vs) {
		checkPayloadSize(p, vs)
	}
	if p.TSETH.Rsvd != 0 {
		vs.add(ReqGEN2, "TSETH", p.bthOff+BTHLen+METHLen, "reserved", "reserved bits 0x%03x set", int(p.TSETH.Rsvd))
	}
}

// padOK checks a write's pad count and pad bytes (WIRE-BTH-9). When
// either is wrong, the payload's length is unknown: its size is not
// judged, so that the wrong pad count is one finding.
func padOK(b []byte, p *Packet, vs *violations) bool {
	n, pad := len(p.Payload), int(p.BTH.PadCount)
	if (n+pad)%4 != 0 || (n > 0 && pad != -n&3) {
		vs.add(ReqBTH9, "BTH", p.bthOff+1, "pad_cnt", "pad count %d with %d payload bytes, want %d", pad, n, -n&3)
		return false
	}
	for i := p.hdrEnd + n; i < p.padEnd; i++ {
		if b[i] != 0 {
			vs.add(ReqBTH9, "payload", i, "pad", "pad byte 0x%02x, want 0", int(b[i]))
			return false
		}
	}
	return true
}

// checkPayloadSize checks what one packet tells of its payload's size: a
// FIRST or MIDDLE carries some (WIRE-PAY-1), and the payloads of a
// message sum to its dma_length (WIRE-PAY-2): an ONLY's own payload is
// the sum, and no packet's exceeds it.
func checkPayloadSize(p *Packet, vs *violations) {
	n, op := len(p.Payload), p.BTH.Opcode
	if n == 0 && (op == OpWriteFirst || op == OpWriteMiddle) {
		vs.add(ReqPAY1, "payload", p.hdrEnd, "", "%s with no payload", int(op))
	}
	switch {
	case (op == OpWriteOnly || op == OpWriteOnlyImm) && int64(p.RETH.DMALength) != int64(n):
		vs.add(ReqPAY2, "RETH", p.bthOff+BTHLen+METHLen, "dma_length", "%s dma_length %d, payload %d bytes", int(op), int(p.RETH.DMALength), n)
	case int64(n) > int64(p.RETH.DMALength):
		vs.add(ReqPAY2, "RETH", p.bthOff+BTHLen+METHLen, "dma_length", "payload %d bytes exceeds dma_length %d", n, int(p.RETH.DMALength))
	}
}

func (c *Codec) checkExt(p *Packet, vs *violations) {
	off := p.bthOff + BTHLen
	rsvd := func(hdr string, v uint64) {
		if v != 0 {
			vs.add(ReqGEN2, hdr, off, "reserved", "reserved bits set (0x%x)", int(v)).msg.uns = 1
		}
	}
	switch {
	case p.Decoded&HasAETH != 0:
		a := &p.AETH
		if a.Syndrome&0x80 != 0 {
			vs.add(ReqAETH1, "AETH", off, "syndrome", "syndrome 0x%02x: bit 7 is reserved", int(a.Syndrome))
		}
		if a.Type() == AETHTypeACK && a.Value() != AETHNoCredit {
			vs.add(ReqAETH2, "AETH", off, "syndrome", "ACK credit %d, MRC sends 0x1F (no credit)", int(a.Value()))
		}
	case p.Decoded&HasSETH != 0:
		s := &p.SETH
		rsvd("SETH", uint64(s.Rsvd1)|uint64(s.Rsvd2)<<8|uint64(s.CC.Rsvd)<<16)
		if s.M > MAlwaysSkip {
			vs.add(ReqSETH3, "SETH", off+1, "m", "m = 3 is reserved")
		}
	case p.Decoded&HasNETH != 0:
		n := &p.NETH
		rsvd("NETH", uint64(n.Rsvd1)|uint64(n.Rsvd2)<<8|uint64(n.Rsvd3)<<16)
		if !n.Reason.Valid() {
			vs.add(ReqNETH2, "NETH", off+2, "nack_reason", "unknown NACK reason 0x%02x", int(n.Reason))
		}
	case p.Decoded&HasPETH != 0:
		q := &p.PETH
		rsvd("PETH", uint64(q.Rsvd1)|uint64(q.Rsvd2)<<8|uint64(q.Rsvd3)<<16|uint64(q.Rsvd4)<<32)
	case p.Decoded&HasERTH != 0:
		e := &p.ERTH
		rsvd("ERTH", uint64(e.Rsvd1)|uint64(e.Rsvd2)<<8|uint64(e.Rsvd3)<<16|uint64(e.Rsvd4)<<48)
		if e.Op > EPEVProbe {
			vs.add(ReqERTH1, "ERTH", off+1, "op", "op %d is reserved", int(e.Op))
		}
	case p.Decoded&HasEETH != 0:
		e := &p.EETH
		var any4 byte
		for _, x := range e.Rsvd4 {
			any4 |= x
		}
		rsvd("EETH", uint64(e.Rsvd1)|uint64(e.Rsvd2)<<1|uint64(e.Rsvd3)<<8|uint64(any4)<<16|uint64(e.Rsvd5)<<24|uint64(e.Rsvd6)<<40)
		if e.Op > EPEVProbe {
			vs.add(ReqEETH1, "EETH", off+1, "op", "op %d is reserved", int(e.Op))
		}
	}
}

// b2i is a bool as a lazyMsg operand of a %v verb.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
