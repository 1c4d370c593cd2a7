package peer

import (
	"math/rand/v2"
	"net/netip"
	"testing"

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
