package pcap

import (
	"errors"
	"fmt"
	"sync"

	"github.com/openmrc/mrc/wire"
)

// This file asks wire, rather than restating it, which field of a header
// holds a given struct member and which requirement ID a given rule
// carries. The generated dissector and the printers use the answers, so a
// renamed field or a renumbered requirement in wire reaches them at the
// next go generate instead of silently diverging.

// semKeys are the keys (FieldKeys) of the fields the tools interpret.
type semKeys struct {
	Opcode, Pad, TVer, DestQP, AckReq, RTX, TS, PSN                       string // BTH
	Syndrome, SETHM, CACKPSN, NACKReason, NACKPSN, ERTHOp, EETHOp, DMALen string
}

// keyOf returns the key of the only field of header hdr that is non-zero
// in enc, an encoding with just one struct member set.
func keyOf(c *wire.Codec, hdr string, enc []byte) (string, error) {
	h, ok := c.Header(hdr)
	if !ok {
		return "", fmt.Errorf("pcap: wire has no %s header", hdr)
	}
	keys := FieldKeys(&h)
	found := ""
	for i, f := range h.Fields {
		if len(enc) >= h.Len && f.Value(enc) != 0 {
			if found != "" {
				return "", fmt.Errorf("pcap: %s: fields %s and %s both changed", hdr, found, keys[i])
			}
			found = keys[i]
		}
	}
	if found == "" {
		return "", fmt.Errorf("pcap: %s: no field holds the probed member", hdr)
	}
	return found, nil
}

func deriveKeys(c *wire.Codec) (semKeys, error) {
	var k semKeys
	var errs []error
	bth := func(dst *string, h wire.BTH) {
		v, err := keyOf(c, "BTH", c.AppendBTH(nil, &h))
		*dst = v
		errs = append(errs, err)
	}
	bth(&k.Opcode, wire.BTH{Opcode: wire.OpWriteFirst})
	bth(&k.Pad, wire.BTH{PadCount: 3})
	bth(&k.TVer, wire.BTH{TVer: 1})
	bth(&k.DestQP, wire.BTH{DestQP: 1})
	bth(&k.AckReq, wire.BTH{AckReq: true})
	bth(&k.RTX, wire.BTH{Retransmit: true})
	bth(&k.TS, wire.BTH{TSPresent: true})
	bth(&k.PSN, wire.BTH{PSN: 1})
	ext := func(dst *string, hdr string, enc []byte) {
		v, err := keyOf(c, hdr, enc)
		*dst = v
		errs = append(errs, err)
	}
	ext(&k.Syndrome, "AETH", (&wire.AETH{Syndrome: 1}).Append(nil))
	ext(&k.SETHM, "SETH", (&wire.SETH{M: 1}).Append(nil))
	ext(&k.CACKPSN, "SETH", (&wire.SETH{CACKPSN: 1}).Append(nil))
	ext(&k.NACKReason, "NETH", (&wire.NETH{Reason: 1}).Append(nil))
	ext(&k.NACKPSN, "NETH", (&wire.NETH{NACKPSN: 1}).Append(nil))
	ext(&k.ERTHOp, "ERTH", (&wire.ERTH{Op: 1}).Append(nil))
	ext(&k.EETHOp, "EETH", (&wire.EETH{Op: 1}).Append(nil))
	ext(&k.DMALen, "RETH", (&wire.RETH{DMALength: 1}).Append(nil))
	return k, errors.Join(errs...)
}

// defaultKeys returns the keys for wire.Default, for fieldNote, derived
// on first use.
var defaultKeys = sync.OnceValues(func() (semKeys, error) { return deriveKeys(wire.Default) })

// ruleReqs are the requirement IDs of the rules the dissector applies,
// each found by decoding or checking a frame that breaks the rule.
type ruleReqs struct {
	Opcode, TVer, BTHRsvd, RTX, TS, EPQP, EPPSN, Syndrome, Credit string
	M, NACKReason, ERTHOp, EETHOp, ICRC, ICRCTrunc, PadOver       string
	PadCount, PadByte, NoPayload, DMALen, Trailing, PadNonWrite   string
	IPLen, UDPLen, UDPShort, UDPChecksum, IPChecksum, IPFrag      string
	IPDF, TrimControl, SACKPSN, NACKPSN, ProbePSN, SRH, BTHTrunc  string
	Rsvd                                                          map[string]string // by header
	Trunc                                                         map[string]string // by header
}

// craft encodes p as untagged IPv4, applies edit, and recomputes the
// ICRC when fix is set.
func craft(c *wire.Codec, p *wire.Packet, fix bool, edit func(f []byte, bth int) []byte) []byte {
	f, err := c.Append(nil, p)
	if err != nil {
		return nil
	}
	var q wire.Packet
	_ = c.Decode(f, &q)
	_, _, bth := q.Offsets()
	f = edit(f, bth)
	if fix {
		_ = SetICRC(c, f)
	}
	return f
}

// decodeReq returns the requirement ID of the error decoding f.
func decodeReq(c *wire.Codec, f []byte) string {
	var p wire.Packet
	var we *wire.Error
	if errors.As(c.Decode(f, &p), &we) {
		return we.Req.String()
	}
	return ""
}

// checkReq returns the requirement ID of f's violation on header.field
// (any header when header is "").
func checkReq(c *wire.Codec, f []byte, header, field string) string {
	var p wire.Packet
	if c.Decode(f, &p) != nil {
		return ""
	}
	vs := c.Check(f, &p, nil)
	for _, v := range vs {
		if (header == "" || v.Header == header) && v.Field == field {
			return v.Req.String()
		}
	}
	// Field names in Check's messages may be renamed; a lone finding
	// other than the ICRC is still the rule's.
	var other []wire.Violation
	for _, v := range vs {
		if v.Field != "icrc" {
			other = append(other, v)
		}
	}
	if len(other) == 1 {
		return other[0].Req.String()
	}
	return ""
}

// Offsets in crafted frames: untagged IPv4.
const (
	craftIP  = 14
	craftUDP = 34
)

// resize inserts delta bytes before the ICRC (removes them when delta is
// negative) and fixes the IPv4 and UDP lengths and the IPv4 checksum.
func resize(f []byte, delta int) []byte {
	icrc := append([]byte(nil), f[len(f)-wire.ICRCLen:]...)
	body := append([]byte(nil), f[:len(f)-wire.ICRCLen]...)
	if delta >= 0 {
		body = append(body, make([]byte, delta)...)
	} else {
		body = body[:len(body)+delta]
	}
	f = append(body, icrc...)
	put := func(off, v int) { f[off], f[off+1] = byte(v>>8), byte(v) }
	put(craftIP+2, len(f)-craftIP)
	put(craftIP+10, int(wire.IPv4Checksum(f[craftIP:])))
	put(craftUDP+4, len(f)-craftUDP)
	return f
}

func same(f []byte, _ int) []byte { return f }

func rpkt(op wire.Opcode) *wire.Packet {
	p := &wire.Packet{}
	p.IP4.FlagsFrag = 0x4000 // DF, as MRC sends (WIRE-ENC-5)
	p.BTH = wire.BTH{Opcode: op, DestQP: 0x11}
	switch op {
	case wire.OpAcknowledge:
		p.AETH.Syndrome = wire.AETHNoCredit
	case wire.OpEndpointReq, wire.OpEndpointResp:
		p.BTH.DestQP = wire.EndpointQPN
	}
	return p
}

// deriveReqs learns, by decoding crafted frames, the requirement each
// codec rule reports, one header group at a time.
func deriveReqs(c *wire.Codec) ruleReqs {
	var r ruleReqs
	r.bth(c)
	r.extHeaders(c)
	r.payload(c)
	r.ipUDP(c)
	r.feedbackPSN(c)
	r.reserved(c)
	return r
}

// bth finds the requirements of the BTH: opcode, version, reserved bits, the
// profile's flags and the endpoint QP's number and PSN.
func (r *ruleReqs) bth(c *wire.Codec) {
	ack := ackPacket
	r.Opcode = decodeReq(c, craft(c, ack(), false, func(f []byte, bth int) []byte { f[bth] = 0xC0; return f }))
	r.TVer = checkReq(c, craft(c, ack(), true, func(f []byte, bth int) []byte { f[bth+1] |= 1; return f }), "BTH", "tver")
	r.BTHRsvd = checkReq(c, craft(c, ack(), true, func(f []byte, bth int) []byte {
		// Set a bit of byte 8 that the profile leaves reserved.
		for m := byte(1); m != 0; m <<= 1 {
			var h wire.BTH
			x := f[bth+8]
			f[bth+8] = m
			_ = c.DecodeBTH(f[bth:], &h)
			f[bth+8] = x
			if h.Rsvd != 0 {
				f[bth+8] |= m
				break
			}
		}
		return f
	}), "BTH", "reserved")
	p := rpkt(wire.OpSACK)
	p.BTH.Retransmit = true
	r.RTX = checkReq(c, craft(c, p, false, same), "BTH", "rtx")
	p = ack()
	p.BTH.TSPresent = true
	r.TS = checkReq(c, craft(c, p, false, same), "BTH", "ts")
	p = rpkt(wire.OpEndpointReq)
	p.BTH.DestQP = 0x33
	r.EPQP = checkReq(c, craft(c, p, false, same), "BTH", "dest_qp")
	p = rpkt(wire.OpEndpointReq)
	p.BTH.PSN = 0x10000
	r.EPPSN = checkReq(c, craft(c, p, false, same), "BTH", "psn")
}

// extHeaders finds the requirements of the AETH, SETH, NETH, ERTH and EETH code points.
func (r *ruleReqs) extHeaders(c *wire.Codec) {
	ack := ackPacket
	p := ack()
	p.AETH.Syndrome |= 0x80
	r.Syndrome = checkReq(c, craft(c, p, false, same), "AETH", "syndrome")
	p = ack()
	p.AETH.Syndrome = 5
	r.Credit = checkReq(c, craft(c, p, false, same), "AETH", "syndrome")
	p = rpkt(wire.OpSACK)
	p.SETH.M = 3
	r.M = checkReq(c, craft(c, p, false, same), "SETH", "m")
	p = rpkt(wire.OpNACK)
	p.NETH.Reason = 0xFF
	r.NACKReason = checkReq(c, craft(c, p, false, same), "NETH", "nack_reason")
	p = rpkt(wire.OpEndpointReq)
	p.ERTH.Op = 3
	r.ERTHOp = checkReq(c, craft(c, p, false, same), "ERTH", "op")
	p = rpkt(wire.OpEndpointResp)
	p.EETH.Op = 3
	r.EETHOp = checkReq(c, craft(c, p, false, same), "EETH", "op")
}

// payload finds the requirements of the ICRC, the pad and the payload length.
func (r *ruleReqs) payload(c *wire.Codec) {
	ack := ackPacket
	r.ICRC = checkReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte { f[len(f)-1] ^= 1; return f }), "ICRC", "icrc")
	r.ICRCTrunc = decodeReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte { return resize(f, -6) }))
	r.Trailing = checkReq(c, craft(c, ack(), true, func(f []byte, _ int) []byte { return resize(f, 4) }), wire.OpAcknowledge.String(), "")
	r.PadNonWrite = checkReq(c, craft(c, ack(), true, func(f []byte, bth int) []byte { f[bth+1] |= 0x10; return f }), "BTH", "pad_count")
	r.PadOver = decodeReq(c, craft(c, rpkt(wire.OpWriteOnly), false, func(f []byte, bth int) []byte { f[bth+1] |= 0x30; return f }))
	p := rpkt(wire.OpWriteOnly)
	p.Payload, p.RETH.DMALength = []byte{1, 2, 3, 4, 5}, 5
	r.PadCount = checkReq(c, craft(c, p, true, func(f []byte, bth int) []byte {
		f = resize(f, -3) // drop the pad bytes, keep the count
		f[bth+1] &^= 0x30
		return f
	}), "BTH", "pad_count")
	r.PadByte = checkReq(c, craft(c, p, true, func(f []byte, _ int) []byte { f[len(f)-wire.ICRCLen-1] = 0xEE; return f }), "payload", "pad")
	r.NoPayload = checkReq(c, craft(c, rpkt(wire.OpWriteFirst), false, same), "payload", "")
	p = rpkt(wire.OpWriteOnly)
	p.RETH.DMALength = 9
	r.DMALen = checkReq(c, craft(c, p, false, same), "RETH", "dma_length")
}

// ipUDP finds the requirements of the IPv4 and UDP headers and the DSCP.
func (r *ruleReqs) ipUDP(c *wire.Codec) {
	ack := ackPacket
	r.IPLen = decodeReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte { return f[:len(f)-1] }))
	r.UDPLen = decodeReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte { f[craftUDP+5]++; return f }))
	r.UDPShort = checkReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte {
		f = append(f, 0, 0)
		f[craftIP+3] += 2
		f[craftIP+10], f[craftIP+11] = 0, 0
		v := wire.IPv4Checksum(f[craftIP:])
		f[craftIP+10], f[craftIP+11] = byte(v>>8), byte(v)
		return f
	}), "UDP", "length")
	r.UDPChecksum = checkReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte { f[craftUDP+7] = 1; return f }), "UDP", "checksum")
	r.IPChecksum = checkReq(c, craft(c, ack(), false, func(f []byte, _ int) []byte { f[craftIP+11] ^= 1; return f }), "IPv4", "checksum")
	r.IPFrag = checkReq(c, craft(c, ack(), true, func(f []byte, _ int) []byte {
		f[craftIP+6] |= 0x20 // more fragments
		v := wire.IPv4Checksum(f[craftIP:])
		f[craftIP+10], f[craftIP+11] = byte(v>>8), byte(v)
		return f
	}), "IPv4", "flags")
	r.IPDF = checkReq(c, craft(c, ack(), true, func(f []byte, _ int) []byte {
		f[craftIP+6] &^= 0x40
		v := wire.IPv4Checksum(f[craftIP:])
		f[craftIP+10], f[craftIP+11] = byte(v>>8), byte(v)
		return f
	}), "IPv4", "flags")
	p := ack()
	p.IP4.TOS = c.Profile().DSCP.Trimmed << 2
	r.TrimControl = checkReq(c, craft(c, p, false, same), "", "dscp")
}

// feedbackPSN finds the requirements of the PSNs of SACK, NACK and probe, and the SRH.
func (r *ruleReqs) feedbackPSN(c *wire.Codec) {
	ack := ackPacket
	p := rpkt(wire.OpSACK)
	p.BTH.PSN = 1
	r.SACKPSN = checkReq(c, craft(c, p, false, same), "BTH", "psn")
	p = rpkt(wire.OpNACK)
	p.BTH.PSN = 1
	r.NACKPSN = checkReq(c, craft(c, p, false, same), "BTH", "psn")
	p = rpkt(wire.OpProbe)
	p.BTH.PSN = 1
	r.ProbePSN = checkReq(c, craft(c, p, false, same), "BTH", "psn")
	p = ack()
	p.IsIPv6, p.SRv6, p.HasSRH = true, true, true
	r.SRH = decodeReq(c, craft(c, p, false, func(f []byte, _ int) []byte { f[14+40+2] = 3; return f }))
}

// reserved finds the requirements of reserved fields and truncated headers, per header.
func (r *ruleReqs) reserved(c *wire.Codec) {
	r.BTHTrunc = truncReq(c, "BTH")
	r.Rsvd = map[string]string{"BTH": r.BTHRsvd}
	rs := func(h, vh string, q *wire.Packet) { r.Rsvd[h] = checkReq(c, craft(c, q, false, same), vh, "reserved") }
	p := rpkt(wire.OpWriteOnly)
	p.BTH.TSPresent, p.TSETH.Rsvd = true, 1
	rs("TSETH", "TSETH", p)
	p = rpkt(wire.OpSACK)
	p.SETH.Rsvd2 = 1
	rs("SETH", "SETH", p)
	p = rpkt(wire.OpSACK)
	p.SETH.CC.Rsvd = 1
	rs("CC_STATE", "SETH", p)
	p = rpkt(wire.OpNACK)
	p.NETH.Rsvd2 = 1
	rs("NETH", "NETH", p)
	p = rpkt(wire.OpProbe)
	p.PETH.Rsvd2 = 1
	rs("PETH", "PETH", p)
	p = rpkt(wire.OpEndpointReq)
	p.ERTH.Rsvd2 = 1
	rs("ERTH", "ERTH", p)
	p = rpkt(wire.OpEndpointResp)
	p.EETH.Rsvd3 = 1
	rs("EETH", "EETH", p)
	r.Trunc = map[string]string{}
	for _, h := range []string{"METH", "TSETH", "RETH", "ImmDt", "AETH", "SETH", "NETH", "PETH", "ERTH", "EETH"} {
		r.Trunc[h] = truncReq(c, h)
	}
}

func ackPacket() *wire.Packet { return rpkt(wire.OpAcknowledge) }

// truncReq returns the requirement ID wire reports when header h is cut
// short.
func truncReq(c *wire.Codec, h string) string {
	var err error
	switch h {
	case "BTH":
		err = c.DecodeBTH(nil, &wire.BTH{})
	case "METH":
		err = (&wire.METH{}).Decode(nil)
	case "TSETH":
		err = (&wire.TSETH{}).Decode(nil)
	case "RETH":
		err = (&wire.RETH{}).Decode(nil)
	case "AETH":
		err = (&wire.AETH{}).Decode(nil)
	case "SETH", "CC_STATE":
		err = (&wire.SETH{}).Decode(nil)
	case "NETH":
		err = (&wire.NETH{}).Decode(nil)
	case "PETH":
		err = (&wire.PETH{}).Decode(nil)
	case "ERTH":
		err = (&wire.ERTH{}).Decode(nil)
	case "EETH":
		err = (&wire.EETH{}).Decode(nil)
	case "ImmDt":
		// wire has no ImmDt type: cut a WRITE_ONLY_IMM two bytes into its
		// ImmDt (the ICRC moves into its place).
		p := rpkt(wire.OpWriteOnlyImm)
		return decodeReq(c, craft(c, p, false, func(f []byte, _ int) []byte { return resize(f, -2) }))
	}
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Req.String()
	}
	return ""
}
