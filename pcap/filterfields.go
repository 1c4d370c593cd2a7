package pcap

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/openmrc/mrc/wire"
)

// fieldKind is the type of a filter field: what literals it compares with.
type fieldKind uint8

const (
	kindPresence fieldKind = iota // a protocol, header or byte string: tested for presence only
	kindUint
	kindInt    // a signed field; fval.u holds the int64's bits
	kindAddr   // an IPv4 or IPv6 address
	kindMAC    // an Ethernet address
	kindString // mrc.req
)

// fval is one occurrence of a field's value.
type fval struct {
	u uint64
	a netip.Addr
	m [6]byte
	s string
}

// filterField is one name of the filter vocabulary. get returns the
// field's i-th occurrence in the frame: most fields occur at most once,
// ipv6.addr, mrc.req and the like several times.
type filterField struct {
	name  string
	kind  fieldKind
	width int                   // bits, for kindUint and kindInt
	v6    bool                  // kindAddr: holds IPv6 addresses (else IPv4)
	note  func(v uint64) string // symbolic value names, or nil
	get   func(e *fenv, i int) (fval, bool)
	check bool // evaluation needs the strict checks (Decoder.NoCheck unset)
}

// frameField is a field of the MRC dissector that is not a header field:
// the generated Lua dissector declares its ProtoField from this table and
// the filter evaluates it, so both name it once.
type frameField struct {
	Var, Abbrev, Title string // Lua local variable, filter name, display title
	PF, Args           string // Lua ProtoField type and further arguments
	kind               fieldKind
	width              int
	check              bool
	get                func(e *fenv, i int) (fval, bool)
}

// frameFields are the MRC dissector's own fields, in the dissector's order.
var frameFields = []frameField{
	{Var: "f_req", Abbrev: "mrc.req", Title: "Requirement broken", PF: "string", kind: kindString, check: true, get: getReq},
	{Var: "f_ev", Abbrev: "mrc.ev", Title: "EV", PF: "uint32", Args: "base.HEX", kind: kindUint, width: 32,
		get: func(e *fenv, i int) (fval, bool) { return fval{u: uint64(e.r.EV)}, i == 0 && e.mrc }},
	{Var: "f_trimmed", Abbrev: "mrc.trimmed", Title: "Trimmed", PF: "uint8",
		Args: `base.DEC, { [0] = "no", [1] = "yes", [2] = "at the last hop" }`, kind: kindUint, width: 8,
		get: func(e *fenv, i int) (fval, bool) {
			var v uint64
			if e.r.Packet.TrimmedLastHop {
				v = 2
			} else if e.r.Packet.Trimmed {
				v = 1
			}
			return fval{u: v}, i == 0 && e.mrc
		}},
	{Var: "f_payload_len", Abbrev: "mrc.payload_len", Title: "Payload length", PF: "uint32", Args: "base.DEC",
		kind: kindUint, width: 32,
		get: func(e *fenv, i int) (fval, bool) {
			return fval{u: uint64(len(e.r.Packet.Payload))}, i == 0 && e.payload()
		}},
	{Var: "f_payload", Abbrev: "mrc.payload", Title: "Payload", PF: "bytes", kind: kindPresence,
		get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 && e.payload() && len(e.r.Packet.Payload) > 0 }},
	{Var: "f_pad", Abbrev: "mrc.pad", Title: "Pad", PF: "bytes", kind: kindPresence,
		get: func(e *fenv, i int) (fval, bool) {
			return fval{}, i == 0 && e.payload() && !e.r.Packet.Trimmed && e.r.Packet.BTH.PadCount > 0
		}},
	{Var: "f_icrc", Abbrev: "mrc.icrc", Title: "ICRC", PF: "uint32", Args: "base.HEX", kind: kindUint, width: 32,
		get: func(e *fenv, i int) (fval, bool) { return fval{u: uint64(e.r.Packet.ICRC)}, i == 0 && e.icrc() }},
	{Var: "f_icrc_ok", Abbrev: "mrc.icrc_ok", Title: "ICRC correct", PF: "uint8",
		Args: `base.DEC, { [0] = "no", [1] = "yes" }`, kind: kindUint, width: 8, check: true,
		get: func(e *fenv, i int) (fval, bool) {
			var v uint64
			if e.r.ICRCOK {
				v = 1
			}
			return fval{u: v}, i == 0 && e.icrc()
		}},
	{Var: "f_icrc_computed", Abbrev: "mrc.icrc_computed", Title: "ICRC computed", PF: "uint32", Args: "base.HEX",
		kind: kindUint, width: 32,
		get: func(e *fenv, i int) (fval, bool) {
			if i != 0 || !e.icrc() {
				return fval{}, false
			}
			return fval{u: uint64(e.codec.ComputeICRC(e.r.Data, &e.r.Packet))}, true
		}},
}

// getReq returns the requirement IDs a frame breaks: its decode error's,
// then each strict violation's.
func getReq(e *fenv, i int) (fval, bool) {
	if !e.mrc {
		return fval{}, false
	}
	if r := e.r; r.Malformed() {
		if we := errOf(r.Err); we != nil && we.Req != "" {
			if i == 0 {
				return fval{s: we.Req}, true
			}
			i--
		}
	}
	if i < len(e.r.Violations) {
		return fval{s: e.r.Violations[i].Req}, true
	}
	return fval{}, false
}

// otherFields are the fields of Wireshark's own dissectors that a tshark
// user filters MRC traffic with, under Wireshark's names.
var otherFields = []filterField{
	{name: "frame", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 }},
	uintField("frame.number", 64, func(e *fenv) (uint64, bool) { return uint64(e.r.Number), true }),
	uintField("frame.len", 32, func(e *fenv) (uint64, bool) { return uint64(e.r.Length), true }),
	uintField("frame.cap_len", 32, func(e *fenv) (uint64, bool) { return uint64(len(e.r.Data)), true }),
	{name: "eth", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 && e.eth() }},
	macField("eth.src", func(e *fenv, i int) ([6]byte, bool) { return e.r.Packet.Eth.Src, i == 0 && e.eth() }),
	macField("eth.dst", func(e *fenv, i int) ([6]byte, bool) { return e.r.Packet.Eth.Dst, i == 0 && e.eth() }),
	macField("eth.addr", func(e *fenv, i int) ([6]byte, bool) {
		if i == 0 {
			return e.r.Packet.Eth.Src, e.eth()
		}
		return e.r.Packet.Eth.Dst, i == 1 && e.eth()
	}),
	// Wireshark's eth.type is the type field after the addresses: an
	// 802.1Q frame's is the tag's 0x8100, not the EtherType within.
	uintField("eth.type", 16, func(e *fenv) (uint64, bool) {
		if !e.eth() {
			return 0, false
		}
		return uint64(e.r.Data[12])<<8 | uint64(e.r.Data[13]), true
	}),
	{name: "ip", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 && e.ip4() }},
	addr4Field("ip.src", func(p *wire.Packet, i int) ([4]byte, bool) { return p.IP4.Src, i == 0 }),
	addr4Field("ip.dst", func(p *wire.Packet, i int) ([4]byte, bool) { return p.IP4.Dst, i == 0 }),
	addr4Field("ip.addr", func(p *wire.Packet, i int) ([4]byte, bool) {
		if i == 0 {
			return p.IP4.Src, true
		}
		return p.IP4.Dst, i == 1
	}),
	uintField("ip.dsfield.dscp", 6, func(e *fenv) (uint64, bool) { return uint64(e.r.Packet.IP4.TOS >> 2), e.ip4() }),
	uintField("ip.dsfield.ecn", 2, func(e *fenv) (uint64, bool) { return uint64(e.r.Packet.IP4.TOS & 3), e.ip4() }),
	uintField("ip.ttl", 8, func(e *fenv) (uint64, bool) { return uint64(e.r.Packet.IP4.TTL), e.ip4() }),
	{name: "ipv6", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) {
		_, ok := e.ipv6(0)
		return fval{}, i == 0 && ok
	}},
	// An SRv6 frame has two IPv6 headers, outer first: tshark shows both.
	{name: "ipv6.src", kind: kindAddr, v6: true, get: func(e *fenv, i int) (fval, bool) {
		h, ok := e.ipv6(i)
		if !ok {
			return fval{}, false
		}
		return fval{a: netip.AddrFrom16(h.Src)}, true
	}},
	{name: "ipv6.dst", kind: kindAddr, v6: true, get: func(e *fenv, i int) (fval, bool) {
		h, ok := e.ipv6(i)
		if !ok {
			return fval{}, false
		}
		return fval{a: netip.AddrFrom16(h.Dst)}, true
	}},
	{name: "ipv6.addr", kind: kindAddr, v6: true, get: func(e *fenv, i int) (fval, bool) {
		h, ok := e.ipv6(i / 2)
		if !ok {
			return fval{}, false
		}
		if i%2 == 0 {
			return fval{a: netip.AddrFrom16(h.Src)}, true
		}
		return fval{a: netip.AddrFrom16(h.Dst)}, true
	}},
	{name: "udp", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 && e.udp() }},
	uintField("udp.srcport", 16, func(e *fenv) (uint64, bool) { return uint64(e.r.Packet.UDP.SrcPort), e.udp() }),
	uintField("udp.dstport", 16, func(e *fenv) (uint64, bool) { return uint64(e.r.Packet.UDP.DstPort), e.udp() }),
	{name: "udp.port", kind: kindUint, width: 16, get: func(e *fenv, i int) (fval, bool) {
		if i == 0 {
			return fval{u: uint64(e.r.Packet.UDP.SrcPort)}, e.udp()
		}
		return fval{u: uint64(e.r.Packet.UDP.DstPort)}, i == 1 && e.udp()
	}},
	uintField("udp.length", 16, func(e *fenv) (uint64, bool) { return uint64(e.r.Packet.UDP.Length), e.udp() }),
}

func uintField(name string, width int, get func(e *fenv) (uint64, bool)) filterField {
	return filterField{name: name, kind: kindUint, width: width, get: func(e *fenv, i int) (fval, bool) {
		if i != 0 {
			return fval{}, false
		}
		v, ok := get(e)
		return fval{u: v}, ok
	}}
}

func macField(name string, get func(e *fenv, i int) ([6]byte, bool)) filterField {
	return filterField{name: name, kind: kindMAC, get: func(e *fenv, i int) (fval, bool) {
		m, ok := get(e, i)
		return fval{m: m}, ok
	}}
}

func addr4Field(name string, get func(p *wire.Packet, i int) ([4]byte, bool)) filterField {
	return filterField{name: name, kind: kindAddr, get: func(e *fenv, i int) (fval, bool) {
		if !e.ip4() {
			return fval{}, false
		}
		a, ok := get(&e.r.Packet, i)
		return fval{a: netip.AddrFrom4(a)}, ok
	}}
}

// fenv is what a Filter evaluates against: the record and, worked out
// at most once per frame, where each transport header lies.
type fenv struct {
	r      *Record
	codec  *wire.Codec
	mrc    bool     // the MRC dissector would take the frame
	walked bool     // offs is filled for r
	offs   []int    // frame offset of each of codec.Headers(), -1 when absent
	names  []string // codec.Headers() names
}

// reset points e at r. The MRC dissector takes a datagram that reached
// an MRC port (the BTH offset is set only then) unless its first byte is
// an opcode outside MRC's 0xC0-0xDF block, which it hands back.
func (e *fenv) reset(r *Record) {
	e.r, e.walked = r, false
	_, _, bth := r.Packet.Offsets()
	e.mrc = bth != 0 && (bth >= len(r.Data) || r.Data[bth]&0xE0 == 0xC0)
}

func (e *fenv) hdrOff(i int) int {
	if !e.walked {
		e.walked = true
		for j := range e.offs {
			e.offs[j] = -1
		}
		if e.mrc {
			walk(e.codec, e.r, func(h *wire.Header, off int) {
				for j, n := range e.names {
					if n == h.Name {
						e.offs[j] = off
						return
					}
				}
			})
		}
	}
	return e.offs[i]
}

// payload reports whether the dissector shows the payload length: a
// write that decoded to its end.
func (e *fenv) payload() bool {
	return e.mrc && e.r.Err == nil && e.r.Packet.Decoded&wire.HasPayload != 0
}

// icrc reports whether the frame carries an ICRC that was reached.
func (e *fenv) icrc() bool { return e.mrc && e.r.Err == nil && !e.r.Packet.Trimmed }

func (e *fenv) eth() bool { return len(e.r.Data) >= 14 && e.r.Packet.Eth.EtherType != 0 }

func (e *fenv) ip4() bool {
	ip, _, _ := e.r.Packet.Offsets()
	return ip != 0 && !e.r.Packet.IsIPv6
}

// ipv6 returns the frame's n-th IPv6 header, outermost first.
func (e *fenv) ipv6(n int) (*wire.IPv6, bool) {
	p := &e.r.Packet
	ip, _, _ := p.Offsets()
	if p.SRv6 {
		if n == 0 {
			return &p.Outer, true
		}
		n--
	}
	if n == 0 && ip != 0 && p.IsIPv6 {
		return &p.IP6, true
	}
	return nil, false
}

func (e *fenv) udp() bool {
	_, udp, _ := e.r.Packet.Offsets()
	return udp != 0 && e.r.Packet.UDP.DstPort != 0
}

// vocabulary returns every field name a filter may use with codec c:
// the MRC dissector's (its protocol, each header and header field of
// c.Headers() as WiresharkField names them, and frameFields), then the
// Wireshark fields of otherFields.
func vocabulary(c *wire.Codec) []filterField {
	fs := []filterField{{name: "mrc", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 && e.mrc }}}
	for hi, h := range c.Headers() {
		fs = append(fs, filterField{name: "mrc." + strings.ToLower(h.Name), kind: kindPresence,
			get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 && e.hdrOff(hi) >= 0 }})
		for _, x := range extractors(&h) {
			f := filterField{name: WiresharkField(h.Name, x.key), kind: kindUint, width: x.f.Width}
			if x.f.Signed {
				f.kind = kindInt
			}
			if fieldNote(h.Name, x.key, 0) != "" {
				hn, key := h.Name, x.key
				f.note = func(v uint64) string { return fieldNote(hn, key, v) }
			}
			n := h.Len
			f.get = func(e *fenv, i int) (fval, bool) {
				off := e.hdrOff(hi)
				if i != 0 || off < 0 {
					return fval{}, false
				}
				hb := e.r.Data[off : off+n]
				if x.f.Signed {
					return fval{u: uint64(x.int(hb))}, true
				}
				return fval{u: x.value(hb)}, true
			}
			fs = append(fs, f)
		}
	}
	for _, ff := range frameFields {
		fs = append(fs, filterField{name: ff.Abbrev, kind: ff.kind, width: ff.width, check: ff.check, get: ff.get})
	}
	fs = append(fs, otherFields...)
	return fs
}

// FilterFields returns the names a display filter for codec c (nil:
// wire.Default) may use, in order: the MRC dissector's, then Wireshark's
// frame, eth, ip, ipv6 and udp fields.
func FilterFields(c *wire.Codec) []string {
	if c == nil {
		c = wire.Default
	}
	var names []string
	for _, f := range vocabulary(c) {
		names = append(names, f.name)
	}
	return slices.Clip(names)
}
