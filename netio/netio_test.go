package netio

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// frame builds an Ethernet frame: IPv4 or IPv6 UDP to dst:port, with an
// optional VLAN tag or SRv6 outer header.
func frame(dst netip.Addr, port uint16, vlan, srv6 bool) []byte {
	b := make([]byte, 12, 200)
	if vlan {
		b = append(b, 0x81, 0x00, 0x00, 0x05)
	}
	udp := func(b []byte) []byte {
		u := make([]byte, 8)
		binary.BigEndian.PutUint16(u[2:], port)
		return append(b, u...)
	}
	if dst.Is4() {
		b = append(b, 0x08, 0x00)
		ip := make([]byte, 20)
		ip[0], ip[9] = 0x45, 17
		d := dst.As4()
		copy(ip[16:], d[:])
		return udp(append(b, ip...))
	}
	b = append(b, 0x86, 0xDD)
	ip6 := func(next byte, d netip.Addr) []byte {
		h := make([]byte, 40)
		h[0], h[6] = 0x60, next
		a := d.As16()
		copy(h[24:], a[:])
		return h
	}
	if srv6 {
		b = append(b, ip6(41, netip.MustParseAddr("fc00::1"))...)
	}
	return udp(append(b, ip6(17, dst)...))
}

// TestGuard: the tester sends only MRC frames, only to configured peers,
// only on its planes; everything else is refused.
func TestGuard(t *testing.T) {
	peer4, peer6 := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("fd00::2")
	g := Guard{Peers: []netip.Addr{peer4, peer6}, Ports: []uint16{4791}, SRv6: []netip.Prefix{netip.MustParsePrefix("fc00::/16")}}
	ok := [][]byte{
		frame(peer4, 4791, false, false), frame(peer4, 4791, true, false),
		frame(peer6, 4791, false, false), frame(peer6, 4791, false, true),
	}
	for i, f := range ok {
		if err := g.Check(0, 2, f); err != nil {
			t.Errorf("frame %d: %v", i, err)
		}
	}
	stray := netip.MustParseAddr("10.0.0.9")
	bad := map[string]struct {
		plane int
		f     []byte
	}{
		"another destination":       {0, frame(stray, 4791, false, false)},
		"another inner destination": {0, frame(netip.MustParseAddr("fd00::9"), 4791, false, true)},
		"another UDP port":          {0, frame(peer4, 53, false, false)},
		"no such plane":             {2, frame(peer4, 4791, false, false)},
		"not Ethernet":              {0, []byte{1, 2, 3}},
		"not IP":                    {0, append(make([]byte, 12), 0x08, 0x06, 0, 0)},
		"truncated IPv4":            {0, frame(peer4, 4791, false, false)[:20]},
		// Issue 14 finding 7: every layer, not the IP destination alone.
		"broadcast Ethernet":     {0, withEthDst(frame(peer4, 4791, false, false), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
		"multicast Ethernet":     {0, withEthDst(frame(peer4, 4791, false, false), 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01)},
		"SRv6 outer elsewhere":   {0, withOuterDst(frame(peer6, 4791, false, true), netip.MustParseAddr("2001:db8::1"))},
		"SRH segment elsewhere":  {0, frameSRH(peer6, netip.MustParseAddr("fc00::1"), netip.MustParseAddr("2001:db8::2"))},
		"SRv6 outer to the peer": {0, withOuterDst(frame(peer6, 4791, false, true), peer6)},
		"another peer MAC":       {1, withEthDst(frame(peer4, 4791, false, false), 2, 0, 0, 0, 0, 9)},
	}
	g.PeerMACs = [][6]byte{{}, {2, 0, 0, 0, 0, 1}}
	if err := g.Check(1, 2, withEthDst(frame(peer4, 4791, false, false), 2, 0, 0, 0, 0, 1)); err != nil {
		t.Errorf("the peer's MAC on plane 1: %v", err)
	}
	if err := g.Check(0, 2, frameSRH(peer6, netip.MustParseAddr("fc00::1"), netip.MustParseAddr("fc00::2"))); err != nil {
		t.Errorf("an SRH inside the prefix: %v", err)
	}
	for name, c := range bad {
		var re *RefusedError
		if err := g.Check(c.plane, 2, c.f); !errors.As(err, &re) {
			t.Errorf("%s: %v, want a *RefusedError", name, err)
		}
	}
	var empty Guard
	if err := empty.Check(0, 1, ok[0]); err == nil {
		t.Error("a guard without peers let a frame through")
	}
	if dst, ok := IsMRC(frame(peer4, 4791, false, false), []uint16{4791}); !ok || dst != peer4 {
		t.Errorf("IsMRC: %v %v", dst, ok)
	}
	if _, ok := IsMRC(frame(peer4, 53, false, false), []uint16{4791}); ok {
		t.Error("IsMRC accepted port 53")
	}
}

func withEthDst(f []byte, mac ...byte) []byte {
	copy(f, mac)
	return f
}

// withOuterDst rewrites the outer destination of an SRv6 frame.
func withOuterDst(f []byte, dst netip.Addr) []byte {
	a := dst.As16()
	copy(f[14+24:], a[:])
	return f
}

// frameSRH builds an SRv6 frame to dst with an outer destination and an
// SRH holding one segment.
func frameSRH(dst, outer, segment netip.Addr) []byte {
	inner := frame(dst, 4791, false, false)[14:]
	b := append(make([]byte, 12), 0x86, 0xDD)
	h := make([]byte, 40)
	h[0], h[6] = 0x60, 43
	o := outer.As16()
	copy(h[24:], o[:])
	srh := []byte{41, 2, 4, 0, 0, 0, 0, 0}
	sg := segment.As16()
	srh = append(srh, sg[:]...)
	return append(append(append(b, h...), srh...), inner...)
}

type sink struct {
	planes int
	n      int
}

func (s *sink) Planes() int                  { return s.planes }
func (s *sink) WriteFrame(int, []byte) error { s.n++; return nil }
func (s *sink) ReadFrame() (Frame, error)    { return Frame{}, ErrClosed }
func (s *sink) MACs() [][6]byte              { return make([][6]byte, s.planes) }
func (s *sink) TapsOutgoing() bool           { return false }
func (s *sink) Close() error                 { return nil }

// TestGuardedWritesNothingRefused: a refused frame never reaches the
// transport.
func TestGuardedWritesNothingRefused(t *testing.T) {
	s := &sink{planes: 1}
	g := &Guarded{Conn: s, G: Guard{Peers: []netip.Addr{netip.MustParseAddr("10.0.0.2")}, Ports: []uint16{4791}}}
	if err := g.WriteFrame(0, frame(netip.MustParseAddr("10.0.0.3"), 4791, false, false)); err == nil {
		t.Fatal("refused frame accepted")
	}
	if err := g.WriteFrame(0, frame(netip.MustParseAddr("10.0.0.2"), 4791, false, false)); err != nil {
		t.Fatal(err)
	}
	if s.n != 1 {
		t.Errorf("%d frames written, want 1", s.n)
	}
}

// TestTunnel: frames cross the UDP tunnel with their plane, the far end
// learns the sender from a hello, and datagrams without the shim are
// ignored.
func TestTunnel(t *testing.T) {
	macs := [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}
	a, err := ListenTunnel("127.0.0.1:0", "", macs)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := ListenTunnel("127.0.0.1:0", a.LocalAddr().String(), macs)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.WriteFrame(1, []byte("lost")); err != nil { // nobody known yet: lost, no error
		t.Fatal(err)
	}
	if err := b.Hello(); err != nil {
		t.Fatal(err)
	}
	// Garbage first: a plain datagram without the shim.
	if _, err := b.c.WriteToUDP([]byte("not a tunnel datagram"), a.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFrame(1, []byte("frame on plane 1")); err != nil {
		t.Fatal(err)
	}
	got := make(chan Frame, 1)
	go func() {
		f, err := a.ReadFrame()
		if err == nil {
			got <- f
		}
	}()
	select {
	case f := <-got:
		if f.Plane != 1 || string(f.Data) != "frame on plane 1" || f.At.IsZero() {
			t.Errorf("got plane %d %q at %v", f.Plane, f.Data, f.At)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no frame")
	}
	// a learned b's address and answers it.
	if err := a.WriteFrame(0, []byte("answer")); err != nil {
		t.Fatal(err)
	}
	f, err := b.ReadFrame()
	if err != nil || f.Plane != 0 || string(f.Data) != "answer" {
		t.Fatalf("%v %+v", err, f)
	}
	if err := a.WriteFrame(2, nil); err == nil {
		t.Error("plane 2 of 2 accepted")
	}
	a.Close()
	if _, err := a.ReadFrame(); !errors.Is(err, ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
}
