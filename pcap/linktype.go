package pcap

import "strconv"

// LinkType is a capture's link-layer header type: the LINKTYPE_ value
// of a pcap file header or a pcapng Interface Description Block (the
// tcpdump.org link-layer header type registry). MRC runs on Ethernet;
// the Decoder reports frames of any other link type as a LinkError.
type LinkType uint16

// Link types of the registry that captures commonly carry.
const (
	LinkTypeNull       LinkType = 0   // BSD loopback
	LinkTypeEthernet   LinkType = 1   // IEEE 802.3 Ethernet
	LinkTypeRaw        LinkType = 101 // raw IPv4 or IPv6, no link header
	LinkTypeIEEE802_11 LinkType = 105 // IEEE 802.11 wireless LAN
	LinkTypeLoop       LinkType = 108 // OpenBSD loopback
	LinkTypeLinuxSLL   LinkType = 113 // Linux "cooked" capture, version 1
	LinkTypeIPv4       LinkType = 228 // raw IPv4
	LinkTypeIPv6       LinkType = 229 // raw IPv6
	LinkTypeLinuxSLL2  LinkType = 276 // Linux "cooked" capture, version 2
)

// String returns the link type's name, or "LinkType(N)" for a value not
// listed above.
func (t LinkType) String() string {
	switch t {
	case LinkTypeNull:
		return "Null"
	case LinkTypeEthernet:
		return "Ethernet"
	case LinkTypeRaw:
		return "Raw"
	case LinkTypeIEEE802_11:
		return "802.11"
	case LinkTypeLoop:
		return "Loop"
	case LinkTypeLinuxSLL:
		return "Linux SLL"
	case LinkTypeIPv4:
		return "IPv4"
	case LinkTypeIPv6:
		return "IPv6"
	case LinkTypeLinuxSLL2:
		return "Linux SLL2"
	}
	return "LinkType(" + strconv.Itoa(int(t)) + ")"
}
