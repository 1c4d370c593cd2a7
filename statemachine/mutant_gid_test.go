package statemachine

import (
	"net/netip"
	"testing"
)

// TestMutantGIDIndexZero: entry 0 of the device's GID table is a valid
// source GID when it is RoCEv2 (QP-ST-8): the lowest index is accepted,
// not refused as out of range, and its address becomes the QP's source.
func TestMutantGIDIndexZero(t *testing.T) {
	c := testConfig(qpnA)
	v2 := c.Addr.SrcIP
	c.Device.GIDs = []GID{{IP: v2, Type: GIDRoCEv2}, {IP: netip.MustParseAddr("fe80::1"), Type: GIDRoCEv1}}
	n, err := NewNode(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	addr := c.Addr
	addr.SrcIP, addr.SGIDIndex = netip.Addr{}, 0
	if err := n.nd.resolveSource(&addr); err != nil {
		t.Fatalf("GID index 0 (RoCEv2): %v", err)
	}
	if addr.SrcIP != v2 {
		t.Errorf("GID index 0: source %v, want %v", addr.SrcIP, v2)
	}
}
