package peer

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/wire"
)

// writeFrom is a well-formed write (valid ICRC) to 10.0.0.2 from src with
// Ethernet source mac, to a QP nobody created.
func writeFrom(t *testing.T, src netip.Addr, mac [6]byte) []byte {
	t.Helper()
	p := wire.Packet{}
	p.Eth.Src, p.Eth.Dst = mac, [6]byte{2, 0, 0, 0, 0, 1}
	p.IP4.TTL, p.IP4.FlagsFrag, p.IP4.Src, p.IP4.Dst = 64, 0x4000, src.As4(), [4]byte{10, 0, 0, 2}
	p.SetEV(0x1234, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x77, PSN: 1}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 7, DMALength: 4}
	p.Payload = []byte("spam")
	b, err := wire.Default.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNeighboursBounded (issue 14): well-formed frames from ever new
// source addresses do not grow the agent's memory past MaxNeighbours
// learned MACs per plane, and a broadcast or multicast source MAC is
// never learned (answers would go to everyone).
func TestNeighboursBounded(t *testing.T) {
	a, _ := newAgent(t)
	rng := rand.New(rand.NewPCG(14, 7))
	for i := 0; i < 4*MaxNeighbours; i++ {
		src := netip.AddrFrom4([4]byte{10, byte(rng.IntN(256)), byte(rng.IntN(256)), byte(1 + rng.IntN(254))})
		a.Receive(0, 0, writeFrom(t, src, [6]byte{2, 9, 9, 9, byte(i >> 8), byte(i)}))
	}
	if n := len(a.neigh[0]); n != MaxNeighbours {
		t.Errorf("%d neighbours learned on plane 0, want the limit %d", n, MaxNeighbours)
	}
	tester := netip.MustParseAddr("10.0.0.1")
	b, _ := newAgent(t)
	for _, mac := range [][6]byte{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x01, 0x00, 0x5e, 0, 0, 1}} {
		b.Receive(0, 1, writeFrom(t, tester, mac))
		if m, ok := b.neigh[1][tester]; ok {
			t.Errorf("learned %x for %v", m, tester)
		}
	}
}

// TestSendsOnlyToUnicast (issue 14): the control session cannot make the
// peer send to a group: a broadcast or multicast MAC, or a multicast,
// broadcast or unspecified IP, as an endpoint request's destination or a
// QP's address vector, is refused.
func TestSendsOnlyToUnicast(t *testing.T) {
	a, c := newAgent(t)
	ctx := context.Background()
	for i, dst := range []control.Peer{
		{MAC: "ff:ff:ff:ff:ff:ff", IP: "10.0.0.1"},
		{MAC: "01:00:5e:00:00:01", IP: "10.0.0.1"},
		{MAC: "02:00:00:00:00:09", IP: "224.0.0.1"},
		{MAC: "02:00:00:00:00:09", IP: "255.255.255.255"},
		{MAC: "02:00:00:00:00:09", IP: "0.0.0.0"},
	} {
		err := c.Call(ctx, control.MethodEPSend, control.EPSendParams{Op: control.EPEVProbe, ReqID: uint16(10 + i), Dst: dst, Port: 1}, nil)
		if !errors.Is(err, control.ErrInvalidArgument) {
			t.Errorf("ep_send to %+v: %v, want invalid_argument", dst, err)
		}
	}
	ok := control.EPSendParams{Op: control.EPEVProbe, ReqID: 2, Dst: control.Peer{MAC: "02:00:00:00:00:09", IP: "10.0.0.1"}, Port: 1}
	if err := c.Call(ctx, control.MethodEPSend, ok, nil); err != nil {
		t.Errorf("ep_send to a unicast peer: %v", err)
	}
	if _, err := parseMAC("33:33:00:00:00:01"); err == nil {
		t.Error("an IPv6 multicast MAC accepted for an address vector")
	}
	if _, err := a.parseDstIP("10.0.0.1"); err != nil {
		t.Errorf("a unicast IP refused: %v", err)
	}
}

// tunnelStub is a transport whose remote a hello may fix.
type tunnelStub struct {
	remote *net.UDPAddr
	fixed  bool
}

func (s *tunnelStub) Planes() int                     { return 2 }
func (s *tunnelStub) WriteFrame(int, []byte) error    { return nil }
func (s *tunnelStub) ReadFrame() (netio.Frame, error) { return netio.Frame{}, netio.ErrClosed }
func (s *tunnelStub) MACs() [][6]byte                 { return make([][6]byte, 2) }
func (s *tunnelStub) TapsOutgoing() bool              { return false }
func (s *tunnelStub) Close() error                    { return nil }

func (s *tunnelStub) SetRemote(addr string) error {
	a, err := net.ResolveUDPAddr("udp", addr)
	s.remote, s.fixed = a, err == nil
	return err
}

func (s *tunnelStub) Remote() (*net.UDPAddr, bool) { return s.remote, s.fixed }

// TestHelloFixesTunnel (issue 14 finding 6): the tunnel address a hello
// announces becomes the runner's only remote; a remote fixed at start
// (mrc-peer --remote) refuses another one.
func TestHelloFixesTunnel(t *testing.T) {
	a, _ := newAgent(t)
	hello := func(r *Runner, tunnel string) error {
		_, err := r.Handler()(control.MethodHello, []byte(`{"version":1,"tunnel":"`+tunnel+`"}`))
		return err
	}
	open := &tunnelStub{}
	if err := hello(NewRunner(a, open), "127.0.0.1:4242"); err != nil || open.remote.String() != "127.0.0.1:4242" {
		t.Errorf("announced remote: %v %v", err, open.remote)
	}
	pinned := &tunnelStub{}
	_ = pinned.SetRemote("127.0.0.1:5000")
	r := NewRunner(a, pinned)
	if err := hello(r, "127.0.0.1:4242"); !errors.Is(err, control.ErrInvalidArgument) || pinned.remote.String() != "127.0.0.1:5000" {
		t.Errorf("a pinned remote moved: %v %v", err, pinned.remote)
	}
	if err := hello(r, "127.0.0.1:5000"); err != nil {
		t.Errorf("the pinned remote itself refused: %v", err)
	}
}
