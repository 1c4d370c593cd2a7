package statemachine

import (
	"fmt"
	"net/netip"
)

// GIDType is the kind of a verbs GID table entry.
type GIDType uint8

// GID types (ibv_gid_type).
const (
	GIDRoCEv2 GIDType = iota // IBV_GID_TYPE_ROCE_V2: IP/UDP, the only kind MRC uses
	GIDRoCEv1                // IBV_GID_TYPE_ROCE_V1: Ethernet, no IP
	GIDIB                    // IBV_GID_TYPE_IB: InfiniBand
)

func (t GIDType) String() string {
	switch t {
	case GIDRoCEv2:
		return "RoCEv2"
	case GIDRoCEv1:
		return "RoCEv1"
	case GIDIB:
		return "IB"
	}
	return fmt.Sprintf("GIDType(%d)", uint8(t))
}

// GID is one entry of the device's verbs GID table.
type GID struct {
	IP   netip.Addr
	Type GIDType
}

// resolveSource fills addr.SrcIP from the GID table entry addr.SGIDIndex
// names when the Node has a GID table: the source GID of an MRC QP comes
// from the verbs GID table of the device, and only RoCEv2 entries may be
// used (QP-ST-8). Without a table, SrcIP is used as given and SGIDIndex
// must be 0.
func (n *node) resolveSource(addr *Addressing) error {
	gids := n.cfg.Device.GIDs
	if len(gids) == 0 {
		if addr.SGIDIndex != 0 {
			return cfgErr("Addr.SGIDIndex", "%d: the device has no GID table (Device.GIDs)", addr.SGIDIndex)
		}
		return nil
	}
	i := addr.SGIDIndex
	if i < 0 || i >= len(gids) {
		return cfgErr("Addr.SGIDIndex", "%d: the GID table has %d entries", i, len(gids))
	}
	g := gids[i]
	if g.Type != GIDRoCEv2 {
		return cfgErr("Addr.SGIDIndex", "GID %d is %s; an MRC QP uses RoCEv2 GIDs only (QP-ST-8)", i, g.Type)
	}
	if addr.SrcIP.IsValid() && addr.SrcIP != g.IP {
		return cfgErr("Addr.SrcIP", "%v differs from GID %d (%v)", addr.SrcIP, i, g.IP)
	}
	addr.SrcIP = g.IP
	return nil
}
