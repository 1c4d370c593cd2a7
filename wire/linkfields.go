package wire

// Field descriptions of the headers below MRC's: Ethernet (with or
// without an 802.1Q tag), the SRv6 outer IPv6 header and its SRH, the
// inner IPv4 or IPv6 header, and UDP. Fields are listed in the order
// tools show them (addresses after the version, the rest in wire order);
// Bit places each one. Names are the codec's JSON names; Wireshark holds
// Wireshark's, under which pcap's display filter reads the field. Only
// fields that tools show are described.

// lf is a link-header field: name, Wireshark's name, bit and width.
func lf(name, ws string, bit, width int) Field {
	return Field{Name: name, Wireshark: ws, Bit: bit, Width: width}
}

func lhex(name, ws string, bit, width int) Field {
	f := lf(name, ws, bit, width)
	f.Hex = true
	return f
}

func laddr(name, ws string, bit, width int) Field {
	f := lf(name, ws, bit, width)
	f.Addr = true
	return f
}

var ipv6Fields = []Field{
	lf("version", "ipv6.version", 0, 4),
	laddr("src", "ipv6.src", 64, 128), laddr("dst", "ipv6.dst", 192, 128),
	lf("dscp", "ipv6.tclass.dscp", 4, 6), lf("ecn", "ipv6.tclass.ecn", 10, 2),
	lhex("flow_label", "ipv6.flow", 12, 20), lf("payload_length", "ipv6.plen", 32, 16),
	lf("next_header", "ipv6.nxt", 48, 8), lf("hop_limit", "ipv6.hlim", 56, 8),
}

// Names of the link headers, as LinkHeaders and WalkLink give them.
const (
	HdrEthernet     = "Ethernet"
	HdrEthernetVLAN = "Ethernet802.1Q" // Ethernet with an 802.1Q tag
	HdrSRv6         = "SRv6"           // the outer IPv6 header of an SRv6 frame
	HdrSRH          = "SRH"
	HdrIPv4         = "IPv4"
	HdrIPv6         = "IPv6"
	HdrUDP          = "UDP"
)

var linkHeaders = []Header{
	{HdrEthernet, 14, []Field{laddr("dst", "eth.dst", 0, 48), laddr("src", "eth.src", 48, 48),
		lhex("ether_type", "eth.type", 96, 16)}},
	{HdrEthernetVLAN, 18, []Field{laddr("dst", "eth.dst", 0, 48), laddr("src", "eth.src", 48, 48),
		lhex("tpid", "eth.type", 96, 16), lhex("vlan_tci", "", 112, 16), lhex("ether_type", "vlan.etype", 128, 16)}},
	{HdrSRv6, 40, ipv6Fields},
	{HdrSRH, 8, []Field{lf("segments_left", "ipv6.routing.segleft", 24, 8),
		lf("last_entry", "ipv6.routing.srh.last_entry", 32, 8), lhex("flags", "ipv6.routing.srh.flags", 40, 8),
		lf("tag", "ipv6.routing.srh.tag", 48, 16)}},
	{HdrIPv4, 20, []Field{lf("version", "ip.version", 0, 4),
		laddr("src", "ip.src", 96, 32), laddr("dst", "ip.dst", 128, 32),
		lf("dscp", "ip.dsfield.dscp", 8, 6), lf("ecn", "ip.dsfield.ecn", 14, 2), lf("total_length", "ip.len", 16, 16),
		lf("identification", "ip.id", 32, 16), lf("ttl", "ip.ttl", 64, 8), lhex("checksum", "ip.checksum", 80, 16)}},
	{HdrIPv6, 40, ipv6Fields},
	{HdrUDP, 8, []Field{lf("src_port", "udp.srcport", 0, 16), lf("dst_port", "udp.dstport", 16, 16),
		lf("length", "udp.length", 32, 16), lhex("checksum", "udp.checksum", 48, 16)}},
}

// LinkHeaders returns the field descriptions of the headers below MRC's,
// in wire order. The result is shared: do not modify it.
func LinkHeaders() []Header { return linkHeaders }

// WalkLink calls f with the description and frame offset of each header
// below the BTH that decoding frame b into p read whole, outside in:
// Ethernet, the SRv6 outer IPv6 header and SRH, the inner IP header and
// UDP. Tools use it to print those headers field by field.
func (p *Packet) WalkLink(b []byte, f func(h *Header, off int)) {
	off, eth := 14, &linkHeaders[0]
	if p.Eth.HasVLAN {
		off, eth = 18, &linkHeaders[1]
	}
	if len(b) >= off && p.Eth.EtherType != 0 {
		f(eth, 0)
	}
	if p.SRv6 {
		f(&linkHeaders[2], off)
		if p.HasSRH {
			f(&linkHeaders[3], off+40)
		}
	}
	if p.ipOff != 0 {
		if p.IsIPv6 {
			f(&linkHeaders[5], p.ipOff)
		} else {
			f(&linkHeaders[4], p.ipOff)
		}
	}
	if p.udpOff != 0 && p.UDP.DstPort != 0 {
		f(&linkHeaders[6], p.udpOff)
	}
}

// EndsHeader returns the header whose source and destination name the
// frame's ends, as tshark's one-line summary shows them, and its offset:
// the innermost IP header decoding read, even one it then rejected (an
// IPv6 header is taken as read when it holds an address), else the
// Ethernet header, which the frame may hold only part of.
func (p *Packet) EndsHeader() (h *Header, off int) {
	ethEnd := 14
	if p.Eth.HasVLAN {
		ethEnd = 18
	}
	switch {
	case p.IsIPv6 && p.ipOff != 0:
		return &linkHeaders[5], p.ipOff
	case p.IsIPv6 && (p.IP6.Src != [16]byte{} || p.IP6.Dst != [16]byte{}):
		off = ethEnd
		if p.SRv6 {
			off += 40
			if p.HasSRH {
				off += 8 + 8*int(p.SRH.HdrExtLen)
			}
		}
		return &linkHeaders[5], off
	case p.ipOff != 0:
		return &linkHeaders[4], p.ipOff
	case p.SRv6:
		return &linkHeaders[2], ethEnd
	}
	if p.Eth.HasVLAN {
		return &linkHeaders[1], 0
	}
	return &linkHeaders[0], 0
}
