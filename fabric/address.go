package fabric

import "net/netip"

// PlaneAddr returns a node's address on a plane in the per-plane
// addressing mode (Config.PlaneAddresses): IPv6 fd00:P::N+1, or IPv4
// 10.P+1.hi.lo for node number N = hi·256 + lo. Host parts count nodes from
// 1 in IPv6, as fd00:P:: is the plane's subnet-router anycast address;
// IPv4 keeps the node number, as the single-address harness does (10.0.x.y).
func PlaneAddr(node, plane int, v6 bool) netip.Addr {
	if v6 {
		return netip.AddrFrom16(planeAddr6(node, plane))
	}
	return netip.AddrFrom4(planeAddr4(node, plane))
}

func planeAddr6(node, plane int) [16]byte {
	h := uint32(node) + 1
	return [16]byte{0: 0xfd, 2: byte(plane >> 8), 3: byte(plane), 12: byte(h >> 24), 13: byte(h >> 16), 14: byte(h >> 8), 15: byte(h)}
}

func planeAddr4(node, plane int) [4]byte {
	return [4]byte{10, byte(plane + 1), byte(node >> 8), byte(node)}
}

// stampPlane writes the addresses of the flight's plane into its packet
// (Config.PlaneAddresses): a node's NIC port on plane P owns the node's
// plane-P address and reaches the peer's port on the same plane, so the
// source and destination of every IP header become the plane's. An SRv6
// outer header keeps its uSID destination, the path, and takes the source.
func (f *flight) stampPlane() {
	p := &f.pkt
	src, dst, plane := int(f.src), int(f.dst), int(f.plane)
	if p.IsIPv6 {
		p.IP6.Src, p.IP6.Dst = planeAddr6(src, plane), planeAddr6(dst, plane)
		if p.SRv6 {
			p.Outer.Src = p.IP6.Src
		}
		return
	}
	p.IP4.Src, p.IP4.Dst = planeAddr4(src, plane), planeAddr4(dst, plane)
}
