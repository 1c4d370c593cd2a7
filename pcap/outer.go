package pcap

import (
	"net/netip"
	"strconv"

	"github.com/openmrc/mrc/wire"
)

// outerField is one field of a header below MRC's (IP, UDP, SRv6 and its
// SRH), named once for both printers that show it: -V and JSON. The
// addresses and UDP ports are printed apart, as "src -> dst".
type outerField struct {
	verbose string // -V name; "" when -V leaves the field out
	json    string // JSON key; "" when JSON leaves the field out
	hex     int    // -V prints the field in hex with this many digits; 0 decimal
	get     func(pk *wire.Packet) uint64
}

// The outer headers' fields in the order both printers show them.
var (
	ipv4Fields = [...]outerField{
		{"dscp", "dscp", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP4.TOS >> 2) }},
		{"ecn", "ecn", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP4.TOS & 3) }},
		{"total_length", "total_length", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP4.TotalLength) }},
		{"id", "identification", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP4.ID) }},
		{"ttl", "ttl", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP4.TTL) }},
		{"checksum", "checksum", 4, func(pk *wire.Packet) uint64 { return uint64(pk.IP4.Checksum) }},
	}
	ipv6Fields = [...]outerField{
		{"dscp", "dscp", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP6.TrafficClass >> 2) }},
		{"ecn", "ecn", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP6.TrafficClass & 3) }},
		{"flow_label", "flow_label", 5, func(pk *wire.Packet) uint64 { return uint64(pk.IP6.FlowLabel) }},
		{"payload_length", "payload_length", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP6.PayloadLength) }},
		{"hop_limit", "hop_limit", 0, func(pk *wire.Packet) uint64 { return uint64(pk.IP6.HopLimit) }},
	}
	udpFields = [...]outerField{
		{"", "src_port", 0, func(pk *wire.Packet) uint64 { return uint64(pk.UDP.SrcPort) }},
		{"", "dst_port", 0, func(pk *wire.Packet) uint64 { return uint64(pk.UDP.DstPort) }},
		{"length", "length", 0, func(pk *wire.Packet) uint64 { return uint64(pk.UDP.Length) }},
		{"checksum", "checksum", 4, func(pk *wire.Packet) uint64 { return uint64(pk.UDP.Checksum) }},
	}
	srv6Fields = [...]outerField{
		{"payload_length", "", 0, func(pk *wire.Packet) uint64 { return uint64(pk.Outer.PayloadLength) }},
		{"next_header", "", 0, func(pk *wire.Packet) uint64 { return uint64(pk.Outer.NextHeader) }},
		{"hop_limit", "hop_limit", 0, func(pk *wire.Packet) uint64 { return uint64(pk.Outer.HopLimit) }},
	}
	srhFields = [...]outerField{
		{"segments_left", "segments_left", 0, func(pk *wire.Packet) uint64 { return uint64(pk.SRH.SegmentsLeft) }},
		{"last_entry", "last_entry", 0, func(pk *wire.Packet) uint64 { return uint64(pk.SRH.LastEntry) }},
		{"flags", "flags", 2, func(pk *wire.Packet) uint64 { return uint64(pk.SRH.Flags) }},
		{"tag", "tag", 0, func(pk *wire.Packet) uint64 { return uint64(pk.SRH.Tag) }},
	}
)

// appendOuterV appends ", name value" for each of fs that -V shows; sep
// is what goes before the first one.
func appendOuterV(b []byte, pk *wire.Packet, fs []outerField, sep string) []byte {
	for _, f := range fs {
		if f.verbose == "" {
			continue
		}
		b = append(b, sep...)
		sep = ", "
		b = append(b, f.verbose...)
		b = append(b, ' ')
		if f.hex > 0 {
			b = appendHex(b, f.get(pk), f.hex)
		} else {
			b = strconv.AppendUint(b, f.get(pk), 10)
		}
	}
	return b
}

// outer writes each of fs that JSON shows.
func (o *jsonObj) outer(pk *wire.Packet, fs []outerField) {
	for _, f := range fs {
		if f.json != "" {
			o.uint(f.json, f.get(pk))
		}
	}
}

// appendSRv6V writes the outer IPv6 header and SRH of an SRv6 frame.
func appendSRv6V(b []byte, pk *wire.Packet) []byte {
	if !pk.SRv6 {
		return b
	}
	b = append(b, "    IPv6 (SRv6 outer): "...)
	b = appendEndsV(b, netip.AddrFrom16(pk.Outer.Src), netip.AddrFrom16(pk.Outer.Dst))
	b = append(appendOuterV(b, pk, srv6Fields[:], ", "), '\n')
	if pk.HasSRH {
		b = appendOuterV(append(b, "    SRH:"...), pk, srhFields[:], " ")
		s := &pk.SRH
		for i := 0; i <= int(s.LastEntry) && i < wire.MaxSRHSegments; i++ {
			b = append(b, "\n        segment["...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, "]: "...)
			b = netip.AddrFrom16(s.Segments[i]).AppendTo(b)
		}
		b = append(b, '\n')
	}
	return b
}

// appendIPV writes the (inner) IPv4 or IPv6 header.
func appendIPV(b []byte, pk *wire.Packet) []byte {
	if ip, _, _ := pk.Offsets(); ip == 0 {
		return b
	}
	if pk.IsIPv6 {
		b = append(b, "    IPv6: "...)
		b = appendEndsV(b, netip.AddrFrom16(pk.IP6.Src), netip.AddrFrom16(pk.IP6.Dst))
		b = appendOuterV(b, pk, ipv6Fields[:], ", ")
	} else {
		b = append(b, "    IPv4: "...)
		b = appendEndsV(b, netip.AddrFrom4(pk.IP4.Src), netip.AddrFrom4(pk.IP4.Dst))
		b = appendOuterV(b, pk, ipv4Fields[:], ", ")
	}
	return append(b, '\n')
}

// appendUDPV writes the UDP header.
func appendUDPV(b []byte, pk *wire.Packet) []byte {
	if _, udp, _ := pk.Offsets(); udp == 0 || pk.UDP.DstPort == 0 {
		return b
	}
	b = append(b, "    UDP: "...)
	b = strconv.AppendUint(b, uint64(pk.UDP.SrcPort), 10)
	b = append(b, " -> "...)
	b = strconv.AppendUint(b, uint64(pk.UDP.DstPort), 10)
	return append(appendOuterV(b, pk, udpFields[:], ", "), '\n')
}

func appendEndsV(b []byte, src, dst netip.Addr) []byte {
	b = src.AppendTo(b)
	b = append(b, " -> "...)
	return dst.AppendTo(b)
}

// srv6 writes the outer IPv6 header and SRH of an SRv6 frame.
func (o *jsonObj) srv6(pk *wire.Packet) {
	if !pk.SRv6 {
		return
	}
	o.open("srv6")
	o.addr("src", netip.AddrFrom16(pk.Outer.Src))
	o.addr("dst", netip.AddrFrom16(pk.Outer.Dst))
	o.outer(pk, srv6Fields[:])
	if pk.HasSRH {
		o.outer(pk, srhFields[:])
		s := &pk.SRH
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
	o.close()
}

// ip writes the (inner) IPv4 or IPv6 header.
func (o *jsonObj) ip(pk *wire.Packet) {
	if ip, _, _ := pk.Offsets(); ip == 0 {
		return
	}
	o.open("ip")
	if pk.IsIPv6 {
		o.uint("version", 6)
		o.addr("src", netip.AddrFrom16(pk.IP6.Src))
		o.addr("dst", netip.AddrFrom16(pk.IP6.Dst))
		o.outer(pk, ipv6Fields[:])
	} else {
		o.uint("version", 4)
		o.addr("src", netip.AddrFrom4(pk.IP4.Src))
		o.addr("dst", netip.AddrFrom4(pk.IP4.Dst))
		o.outer(pk, ipv4Fields[:])
	}
	o.close()
}

// udp writes the UDP header.
func (o *jsonObj) udp(pk *wire.Packet) {
	if _, udp, _ := pk.Offsets(); udp == 0 || pk.UDP.DstPort == 0 {
		return
	}
	o.open("udp")
	o.outer(pk, udpFields[:])
	o.close()
}
