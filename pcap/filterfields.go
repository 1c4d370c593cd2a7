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
		if we := errOf(r.Err); we != nil && we.Req != wire.NoReq {
			if i == 0 {
				return fval{s: we.Req.String()}, true
			}
			i--
		}
	}
	if i < len(e.r.Violations) {
		return fval{s: e.r.Violations[i].Req.String()}, true
	}
	return fval{}, false
}

// frameMeta are Wireshark's frame fields: the capture's record of each
// frame, which no header holds.
var frameMeta = []filterField{
	{name: "frame", kind: kindPresence, get: func(e *fenv, i int) (fval, bool) { return fval{}, i == 0 }},
	uintField("frame.number", 64, func(e *fenv) (uint64, bool) { return uint64(e.r.Number), true }),
	uintField("frame.len", 32, func(e *fenv) (uint64, bool) { return uint64(e.r.Length), true }),
	uintField("frame.cap_len", 32, func(e *fenv) (uint64, bool) { return uint64(len(e.r.Data)), true }),
}

// linkPairs are Wireshark's fields that stand for two others of the same
// header, each header's first then its second: either address, either
// port.
var linkPairs = []struct{ name, a, b string }{
	{"eth.addr", "eth.src", "eth.dst"},
	{"ip.addr", "ip.src", "ip.dst"},
	{"ipv6.addr", "ipv6.src", "ipv6.dst"},
	{"udp.port", "udp.srcport", "udp.dstport"},
}

// linkPlace is where a link-header field lies: the header's index in
// wire.LinkHeaders and the field.
type linkPlace struct {
	hdr int
	x   fieldX
}

// linkVocabulary returns the filter fields of the headers below MRC's,
// from wire.LinkHeaders under the names Wireshark gives them: for each
// protocol (the names' first part: eth, vlan, ipv6, ip, udp) its presence,
// then each of its fields once however many headers hold it (an SRv6
// frame's outer and inner IPv6 headers, outer first, as tshark lists
// them), then its pairs (linkPairs).
func linkVocabulary() []filterField {
	hs := wire.LinkHeaders()
	var protos, names []string
	hdrs := map[string][]int{}         // protocol -> headers holding its fields
	places := map[string][]linkPlace{} // Wireshark name -> where it lies
	for hi := range hs {
		for _, f := range hs[hi].Fields {
			if f.Wireshark == "" {
				continue
			}
			proto, _, _ := strings.Cut(f.Wireshark, ".")
			if !slices.Contains(protos, proto) {
				protos = append(protos, proto)
			}
			if !slices.Contains(hdrs[proto], hi) {
				hdrs[proto] = append(hdrs[proto], hi)
			}
			if places[f.Wireshark] == nil {
				names = append(names, f.Wireshark)
			}
			places[f.Wireshark] = append(places[f.Wireshark], linkPlace{hi, newFieldX(f, f.Name)})
		}
	}
	var fs []filterField
	for _, proto := range protos {
		in := hdrs[proto]
		fs = append(fs, filterField{name: proto, kind: kindPresence, get: func(e *fenv, i int) (fval, bool) {
			return fval{}, i == 0 && slices.ContainsFunc(in, func(h int) bool { return e.linkOff(h) >= 0 })
		}})
		for _, n := range names {
			if p, _, _ := strings.Cut(n, "."); p == proto {
				fs = append(fs, linkField(n, places[n]))
			}
		}
		for _, pr := range linkPairs {
			if p, _, _ := strings.Cut(pr.name, "."); p == proto {
				fs = append(fs, linkField(pr.name, pairPlaces(places[pr.a], places[pr.b])))
			}
		}
	}
	return fs
}

// pairPlaces interleaves the places of two fields of the same headers:
// each header's a, then its b.
func pairPlaces(a, b []linkPlace) []linkPlace {
	out := make([]linkPlace, 0, len(a)+len(b))
	for i := range a {
		out = append(out, a[i], b[i])
	}
	return out
}

// linkField is the filter field read at places: its i-th occurrence is
// the i-th place the frame holds, in order.
func linkField(name string, places []linkPlace) filterField {
	f0 := places[0].x.f
	f := filterField{name: name, kind: kindUint, width: f0.Width}
	switch {
	case f0.Addr && f0.Width == 48:
		f.kind, f.width = kindMAC, 0
	case f0.Addr:
		f.kind, f.width, f.v6 = kindAddr, 0, f0.Width == 128
	}
	kind := f.kind
	f.get = func(e *fenv, i int) (fval, bool) {
		for k := range places {
			pl := &places[k]
			off := e.linkOff(pl.hdr)
			if off < 0 || off+pl.x.eb >= len(e.r.Data) {
				continue
			}
			if i > 0 {
				i--
				continue
			}
			b := e.r.Data[off:]
			switch kind {
			case kindMAC:
				return fval{m: [6]byte(b[pl.x.sb:])}, true
			case kindAddr:
				a, _ := netip.AddrFromSlice(b[pl.x.sb : pl.x.eb+1])
				return fval{a: a}, true
			}
			return fval{u: pl.x.value(b)}, true
		}
		return fval{}, false
	}
	return f
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

// fenv is what a Filter evaluates against: the record and, worked out
// at most once per frame, where each transport header lies.
type fenv struct {
	r      *Record
	codec  *wire.Codec
	mrc    bool     // the MRC dissector would take the frame
	walked bool     // offs is filled for r
	offs   []int    // frame offset of each of codec.Headers(), -1 when absent
	names  []string // codec.Headers() names
	linked bool     // loffs is filled for r
	loffs  []int    // frame offset of each of wire.LinkHeaders(), -1 when absent
}

// reset points e at r. The MRC dissector takes a datagram that reached
// an MRC port (the BTH offset is set only then) unless its first byte is
// an opcode outside MRC's 0xC0-0xDF block, which it hands back.
func (e *fenv) reset(r *Record) {
	e.r, e.walked, e.linked = r, false, false
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

// icrc reports whether the frame carries an ICRC that was reached, and
// is in the capture.
func (e *fenv) icrc() bool { return e.mrc && e.r.HasICRC() }

// linkOff returns the frame offset of the i-th of wire.LinkHeaders, or -1
// when the frame does not hold it. Wireshark dissects an Ethernet header
// of 14 bytes whatever follows, so that header is taken from 14 bytes on,
// where WalkLink wants a whole 802.1Q tag.
func (e *fenv) linkOff(i int) int {
	if !e.linked {
		e.linked = true
		for j := range e.loffs {
			e.loffs[j] = -1
		}
		e.r.Packet.WalkLink(e.r.Data, func(h *wire.Header, off int) {
			switch h.Name {
			case wire.HdrEthernet, wire.HdrEthernetVLAN:
				return
			}
			for j := range e.loffs {
				if &wire.LinkHeaders()[j] == h {
					e.loffs[j] = off
					return
				}
			}
		})
		if len(e.r.Data) >= 14 && e.r.Packet.Eth.EtherType != 0 {
			i := linkEth[0]
			if e.r.Packet.Eth.HasVLAN {
				i = linkEth[1]
			}
			e.loffs[i] = 0
		}
	}
	return e.loffs[i]
}

// linkEth holds the indexes in wire.LinkHeaders of the Ethernet header
// without and with an 802.1Q tag.
var linkEth = [2]int{linkIndex(wire.HdrEthernet), linkIndex(wire.HdrEthernetVLAN)}

func linkIndex(name string) int {
	return slices.IndexFunc(wire.LinkHeaders(), func(h wire.Header) bool { return h.Name == name })
}

// vocabulary returns every field name a filter may use with codec c:
// the MRC dissector's (its protocol, each header and header field of
// c.Headers() as WiresharkField names them, and frameFields), then
// Wireshark's frame fields and those of the headers below MRC's.
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
	fs = append(fs, frameMeta...)
	return append(fs, linkVocabulary()...)
}

// FilterFields returns the names a display filter for codec c (nil:
// wire.Default) may use, in order: the MRC dissector's, then Wireshark's
// frame fields and the fields of wire.LinkHeaders.
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
