package conformance

import (
	"net/netip"

	"github.com/openmrc/mrc/wire"
)

// One address per plane. A node may own one address per fabric plane, one
// NIC port per plane (the deployment the white paper describes). The PICS
// can name them (nodes); without it, the traffic ties them: a write on an
// address pair the judge has not named yet that continues, on another
// plane at the same capture point, a message another pair's connection is
// sending makes the two pairs one QP's planes. The proof is all of:
//
//   - both addresses of the new pair are unnamed (no earlier frame used them)
//     and undeclared (the PICS's nodes do not list them);
//   - the capture point knows the frame's plane, and the connection has not
//     been seen on that plane;
//   - the same responder QP number (dest_qp);
//   - a MIDDLE or LAST packet of the connection's message in progress: the
//     same r_key and dma_length, a PSN within the message, and a VA at
//     exactly its PSN's offset in the message (path MTU bytes per PSN);
//   - each address differs from the one it is tied to only in its network
//     part: the same interface identifier (IPv6 low 64 bits) or the same
//     low 16 bits (IPv4), so that a parallel judge (Options.Jobs) gives
//     both pairs to one worker.
//
// The new addresses then name the connection's nodes (the first pair
// seen), for every later frame in either direction. Frames before the tie
// keep the names they had.

// tiePlanes ties a write's address pair to a connection on another plane
// (see above); it runs before the frame's addresses are named.
func (e *engine) tiePlanes(pt *point, p *wire.Packet) {
	op := p.BTH.Opcode
	if op.IsFirst() || pt.curPlane < 0 || len(e.addrNode)+2 > MaxNodes {
		return
	}
	src, dst, ok := ipPair(p)
	if !ok || e.named(src) || e.named(dst) {
		return
	}
	for _, fl := range pt.flows {
		if fl.key.qpn != p.BTH.DestQP || fl.key.partial || fl.planes[pt.curPlane] || !e.inMessage(fl, p) {
			continue
		}
		ra, rb := e.addrOf(fl.key.req), e.addrOf(fl.key.rsp)
		if !sameHost(src, ra) || !sameHost(dst, rb) {
			continue
		}
		e.cacheNode(src, fl.key.req)
		e.cacheNode(dst, fl.key.rsp)
		e.note("addresses %s and %s carry connection %s on plane %d: taken as nodes %s and %s (one address per plane, tied by the traffic; declare nodes in the PICS to be sure)",
			src, dst, fl.key, pt.curPlane, fl.key.req, fl.key.rsp)
		return
	}
}

// inMessage reports whether write p is a packet of fl's message in
// progress: same r_key and dma_length, a PSN within the message and the
// VA of its offset.
func (e *engine) inMessage(fl *flow, p *wire.Packet) bool {
	m := &fl.msg
	if !m.active || p.RETH.RKey != m.rkey || p.RETH.DMALength != m.dmaLen {
		return false
	}
	mtu := fl.mtu
	if v := e.pics.Parameters.PathMTU; v != nil {
		mtu = *v
	}
	k := uint64(psnDist(p.BTH.PSN, m.firstPSN))
	if mtu <= 0 || k == 0 || k >= 1<<23 || k*uint64(mtu) >= uint64(m.dmaLen) {
		return false
	}
	return p.RETH.VA == m.va0+k*uint64(mtu)
}

// named reports whether an address was named already, or is declared.
func (e *engine) named(a netip.Addr) bool {
	for i := range e.lastAddr {
		if l := &e.lastAddr[i]; l.ok && l.a == a {
			return true
		}
	}
	if _, ok := e.addrNode[a]; ok {
		return true
	}
	_, ok := e.pics.byAddr[a.Unmap()]
	return ok
}

// addrOf returns the address a node name stands for when the name is an
// undeclared address (the invalid address otherwise).
func (e *engine) addrOf(node string) netip.Addr {
	a, err := netip.ParseAddr(node)
	if err != nil {
		return netip.Addr{}
	}
	return a
}

// sameHost reports whether two addresses of one family share their host
// part: the IPv6 interface identifier, the IPv4 low 16 bits.
func sameHost(a, b netip.Addr) bool {
	a, b = a.Unmap(), b.Unmap()
	switch {
	case a.Is6() && b.Is6():
		x, y := a.As16(), b.As16()
		return [8]byte(x[8:]) == [8]byte(y[8:])
	case a.Is4() && b.Is4():
		x, y := a.As4(), b.As4()
		return x[2] == y[2] && x[3] == y[3]
	}
	return false
}

// ipPair returns a decoded packet's inner source and destination.
func ipPair(p *wire.Packet) (src, dst netip.Addr, ok bool) {
	if ip, _, _ := p.Offsets(); ip == 0 {
		return src, dst, false
	}
	if p.IsIPv6 {
		return netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst), true
	}
	return netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst), true
}
