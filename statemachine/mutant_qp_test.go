package statemachine

// Tests written against mutants scripts/mutate.sh found alive in qp.go:
// each pins one boundary or transition of the requirement it names that no
// other test pinned.

import "testing"

// TestMutantIPv4EVSixteenBits (WIRE-EV-3): over IPv4 an EV of exactly 16
// bits, 0xFFFF, is accepted; only one with more bits is refused.
func TestMutantIPv4EVSixteenBits(t *testing.T) {
	c := testConfig(qpnA)
	c.EVProfiles[0].EVs = []EVEntry{{0xFFFF, 1}, {0x101, 1}, {0x200, 2}, {0x201, 2}}
	if _, err := c.new(); err != nil {
		t.Errorf("EV 0xFFFF over IPv4 refused: %v", err)
	}
}

// TestMutantHopLimitFromAddressVector (QP-SM-1): packets carry the hop
// limit of the QP's configured address vector, and 64 only when it leaves
// it 0.
func TestMutantHopLimitFromAddressVector(t *testing.T) {
	for _, c := range []struct{ set, want uint8 }{{5, 5}, {0, 64}} {
		o := newOne(t, func(tc *testCfg, a *Attr) { tc.Addr.HopLimit = c.set })
		o.write(1, 10, false)
		ps := o.take()
		if len(ps) != 1 {
			t.Fatalf("HopLimit %d: sent %d packets, want 1", c.set, len(ps))
		}
		if ps[0].IP4.TTL != c.want {
			t.Errorf("HopLimit %d: TTL %d, want %d", c.set, ps[0].IP4.TTL, c.want)
		}
	}
}
