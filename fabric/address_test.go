package fabric_test

import (
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/fabric"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// data6 is data() over IPv6 with the endpoint's one address fd00::1 → fd00::2.
func data6(qpn, psn uint32, ev uint32, plane uint8) sm.Outgoing {
	o := data(qpn, psn, ev, plane)
	p := &o.Pkt
	p.IsIPv6 = true
	p.IP6 = wire.IPv6{TrafficClass: p.IP4.TOS, HopLimit: 64,
		Src: netip.MustParseAddr("fd00::1").As16(), Dst: netip.MustParseAddr("fd00::2").As16()}
	p.SetEV(ev, wire.EVModeSTEV)
	return o
}

// TestPlaneAddresses: with PlaneAddresses, every packet carries its
// plane's addresses of its two nodes (fd00:P::N+1, 10.P+1.x.y), whatever
// the endpoint wrote, and the ICRC over them is right; without it, the
// endpoint's addresses stay.
func TestPlaneAddresses(t *testing.T) {
	for _, on := range []bool{false, true} {
		var rec recorder
		s, _, ids := newSim(t, fabric.Config{Planes: 3, Frames: &rec, PlaneAddresses: on}, 2)
		send(s, ids[0], data6(0x10, 1, 0x100, 0), data6(0x10, 2, 0x900, 1), data6(0x10, 3, 0x1100, 2),
			data(0x10, 4, 0x100, 0), data(0x10, 5, 0x1100, 2))
		s.Run(sm.Never)
		if len(rec.frames) != 10 {
			t.Fatalf("PlaneAddresses %v: %d frames, want 10 (5 tx, 5 rx)", on, len(rec.frames))
		}
		sources := map[netip.Addr]bool{}
		for _, f := range rec.frames {
			var p wire.Packet
			if err := wire.Default.Decode(f.Data, &p); err != nil {
				t.Fatalf("PlaneAddresses %v: frame does not decode: %v", on, err)
			}
			if !wire.Default.VerifyICRC(f.Data, &p) {
				t.Errorf("PlaneAddresses %v: PSN %d: bad ICRC", on, p.BTH.PSN)
			}
			src, dst := netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst)
			if p.IsIPv6 {
				src, dst = netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst)
			}
			v6 := p.IsIPv6
			wantSrc, wantDst := fabric.PlaneAddr(0, f.Plane, v6), fabric.PlaneAddr(1, f.Plane, v6)
			if !on {
				wantSrc, wantDst = netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
				if v6 {
					wantSrc, wantDst = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
				}
			}
			if src != wantSrc || dst != wantDst {
				t.Errorf("PlaneAddresses %v: PSN %d at %v on plane %d: %v → %v, want %v → %v", on, p.BTH.PSN, f.Point, f.Plane, src, dst, wantSrc, wantDst)
			}
			sources[src] = true
		}
		if on && len(sources) != 5 { // 3 IPv6 and 2 IPv4 source addresses, one per plane used
			t.Errorf("source addresses %v, want one per plane and IP version", sources)
		}
	}
	if a := fabric.PlaneAddr(0, 1, true).String(); a != "fd00:1::1" {
		t.Errorf("node 0 plane 1: %s, want fd00:1::1", a)
	}
	if a := fabric.PlaneAddr(258, 0, false).String(); a != "10.1.1.2" {
		t.Errorf("node 258 plane 0: %s, want 10.1.1.2", a)
	}
}
