package pcap

import (
	"net/netip"
	"strconv"

	"github.com/openmrc/mrc/wire"
)

// linkView says how the -V tree and JSON show one of wire's link headers
// (wire.LinkHeaders): every field of wire's description, in its order,
// except those a view leaves out. The fields themselves, their names and
// whether they print in hex come from wire.
type linkView struct {
	header   string    // wire's header name
	tree     string    // -V title
	json     string    // JSON object holding the fields; "" leaves the header out of JSON
	ends     [2]string // -V shows these first, as "src -> dst"
	treeHide []string  // fields -V leaves out
	jsonHide []string  // fields JSON leaves out
	treeName [2]string // -V names field treeName[0] treeName[1]
}

var linkViews = [...]linkView{
	{header: wire.HdrEthernet, tree: "Ethernet", ends: [2]string{"src", "dst"}},
	{header: wire.HdrEthernetVLAN, tree: "Ethernet", ends: [2]string{"src", "dst"}, treeHide: []string{"tpid"}},
	{header: wire.HdrSRv6, tree: "IPv6 (SRv6 outer)", json: "srv6", ends: [2]string{"src", "dst"},
		treeHide: []string{"version", "dscp", "ecn", "flow_label"},
		jsonHide: []string{"version", "dscp", "ecn", "flow_label", "payload_length", "next_header"}},
	{header: wire.HdrSRH, tree: "SRH", json: "srv6"},
	{header: wire.HdrIPv4, tree: "IPv4", json: "ip", ends: [2]string{"src", "dst"},
		treeHide: []string{"version"}, treeName: [2]string{"identification", "id"}},
	{header: wire.HdrIPv6, tree: "IPv6", json: "ip", ends: [2]string{"src", "dst"},
		treeHide: []string{"version", "next_header"}, jsonHide: []string{"next_header"}},
	{header: wire.HdrUDP, tree: "UDP", json: "udp", ends: [2]string{"src_port", "dst_port"}},
}

// linkX is a link header compiled for printing: its view and the
// extractors of the fields each printer shows.
type linkX struct {
	h        *wire.Header
	view     *linkView
	src, dst fieldX // -V's ends; key "" when the header has none
	tree     []fieldX
	json     []fieldX
}

func compileLink() []linkX {
	hs := wire.LinkHeaders()
	xs := make([]linkX, len(hs))
	for i := range hs {
		h := &hs[i]
		x := &xs[i]
		x.h = h
		for j := range linkViews {
			if linkViews[j].header == h.Name {
				x.view = &linkViews[j]
			}
		}
		if x.view == nil { // TestLinkViewsCoverWire rules this out
			x.view = &linkView{header: h.Name, tree: h.Name}
		}
		v := x.view
		for _, f := range h.Fields {
			switch f.Name {
			case v.ends[0]:
				x.src = newFieldX(f, f.Name)
				continue
			case v.ends[1]:
				x.dst = newFieldX(f, f.Name)
				continue
			}
			if !contains(v.treeHide, f.Name) {
				name := f.Name
				if name == v.treeName[0] {
					name = v.treeName[1]
				}
				x.tree = append(x.tree, newFieldX(f, name))
			}
		}
		for _, f := range h.Fields {
			if !contains(v.jsonHide, f.Name) {
				x.json = append(x.json, newFieldX(f, f.Name))
			}
		}
	}
	return xs
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// linkOf returns the compiled form of h, one of wire.LinkHeaders().
func (p *Printer) linkOf(h *wire.Header) *linkX {
	for i := range p.link {
		if p.link[i].h == h {
			return &p.link[i]
		}
	}
	for i := range p.link {
		if p.link[i].h.Name == h.Name {
			return &p.link[i]
		}
	}
	return nil
}

// appendLinkValue appends a link header field's value from header bytes
// hb as -V shows it: an address, hex, or decimal.
func appendLinkValue(b []byte, x *fieldX, hb []byte) []byte {
	switch {
	case x.f.Addr:
		return appendAddr(b, x.f.Bytes(hb))
	case x.f.Hex:
		return appendHex(b, x.value(hb), (x.f.Width+3)/4)
	}
	return strconv.AppendUint(b, x.value(hb), 10)
}

// appendAddr appends an IPv4, Ethernet or IPv6 address.
func appendAddr(b []byte, a []byte) []byte {
	switch len(a) {
	case 4:
		return netip.AddrFrom4([4]byte(a)).AppendTo(b)
	case 6:
		return appendMAC(b, [6]byte(a))
	case 16:
		return netip.AddrFrom16([16]byte(a)).AppendTo(b)
	}
	return b
}

// appendLinkV writes the headers below MRC's, one line each, from wire's
// link header descriptions.
func (p *Printer) appendLinkV(b []byte, r *Record) []byte {
	r.Packet.WalkLink(r.Data, func(h *wire.Header, off int) {
		b = p.appendLinkHeaderV(b, r, h, off)
	})
	return b
}

// appendLinkHeaderV writes link header h, at offset off in r's frame.
func (p *Printer) appendLinkHeaderV(b []byte, r *Record, h *wire.Header, off int) []byte {
	x := p.linkOf(h)
	hb := r.Data[off : off+h.Len]
	b = append(b, "    "...)
	b = append(b, x.view.tree...)
	b = append(b, ':')
	sep := " "
	if x.src.key != "" {
		b = append(b, ' ')
		b = appendLinkValue(b, &x.src, hb)
		b = append(b, " -> "...)
		b = appendLinkValue(b, &x.dst, hb)
		sep = ", "
	}
	for i := range x.tree {
		f := &x.tree[i]
		b = append(b, sep...)
		sep = ", "
		b = append(b, f.key...)
		b = append(b, ' ')
		b = appendLinkValue(b, f, hb)
	}
	if h.Name == wire.HdrSRH {
		s := &r.Packet.SRH
		for i := 0; i <= int(s.LastEntry) && i < wire.MaxSRHSegments; i++ {
			b = append(b, "\n        segment["...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, "]: "...)
			b = netip.AddrFrom16(s.Segments[i]).AppendTo(b)
		}
	}
	return append(b, '\n')
}

// link writes the headers below MRC's that JSON shows, from wire's link
// header descriptions; headers of one JSON object (the SRv6 outer IPv6
// header and its SRH) share it.
func (o *jsonObj) link(p *Printer, r *Record) {
	open := ""
	r.Packet.WalkLink(r.Data, func(h *wire.Header, off int) {
		x := p.linkOf(h)
		if x.view.json == "" {
			return
		}
		if x.view.json != open {
			if open != "" {
				o.close()
			}
			open = x.view.json
			o.open(open)
		}
		hb := r.Data[off : off+h.Len]
		for i := range x.json {
			f := &x.json[i]
			if !o.first {
				o.b = append(o.b, ',')
			}
			o.first = false
			o.b = append(o.b, f.prefix...)
			if f.f.Addr {
				o.b = append(o.b, '"')
				o.b = appendAddr(o.b, f.f.Bytes(hb))
				o.b = append(o.b, '"')
			} else {
				o.b = strconv.AppendUint(o.b, f.value(hb), 10)
			}
		}
		if h.Name == wire.HdrSRH {
			o.segments(&r.Packet.SRH)
		}
	})
	if open != "" {
		o.close()
	}
}

// segments writes an SRH's segment list.
func (o *jsonObj) segments(s *wire.SRH) {
	o.key("segments")
	o.b = append(o.b, '[')
	for i := 0; i <= int(s.LastEntry) && i < wire.MaxSRHSegments; i++ {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = append(o.b, '"')
		o.b = netip.AddrFrom16(s.Segments[i]).AppendTo(o.b)
		o.b = append(o.b, '"')
	}
	o.b = append(o.b, ']')
}
