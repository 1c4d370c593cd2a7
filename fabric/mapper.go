package fabric

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
)

// Mapper chooses the path (the T0 uplink, hence the T1 switch) a packet
// takes within its plane. The plane is not the mapper's choice: it is the
// NIC port the endpoint sent the packet on (Outgoing.Plane).
type Mapper interface {
	// Path returns the path in [0, paths) of a packet with EV ev from
	// node src to node dst on plane plane.
	Path(ev uint32, plane, src, dst, paths int) int
}

// HashMapper is ECMP: each T0 hashes the packet's flow (the addresses and
// the EV in the UDP source port and flow label) onto one of its uplinks.
// The hash is fixed by Seed, as a switch's hash seed is.
type HashMapper struct{ Seed uint64 }

// Path implements Mapper.
func (m HashMapper) Path(ev uint32, plane, src, dst, paths int) int {
	h := m.Seed ^ uint64(ev)*0x9E3779B97F4A7C15 ^ uint64(src)<<40 ^ uint64(dst)<<20 ^ uint64(plane)<<60
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return int(h % uint64(paths))
}

// SRv6Mapper is static SRv6 source routing (WP §2.2-2.3): the NIC builds
// the outer destination from the destination's template by copying the
// EV's plane number into every uSID and its T0-uplink number into the T1
// uSID (wire.SRv6Template.Path); T0 then forwards on the uplink that uSID
// names, with no hashing. The path is that uplink number modulo the
// fabric's paths per plane. Results are cached per EV, so the steady state
// does not allocate.
type SRv6Mapper struct {
	Template wire.SRv6Template
	cache    map[uint32]int32
	// Mismatches counts packets whose EV names another plane than the
	// port they left on: a profile and template that disagree.
	Mismatches int
}

// DefaultSRv6Template lays out the EVs of statemachine.GenerateEVProfile
// (plane in EV bits 15-11) and an 8-bit T0-uplink number in EV bits 7-0,
// over four uSIDs (source T0, T1, destination T0, destination NIC) whose
// upper nibble is the tier, bits 11-4 the uplink (T1 uSID only) and bits
// 3-1 the plane.
func DefaultSRv6Template() wire.SRv6Template {
	return wire.SRv6Template{
		Locator: 0xFC000000, USIDs: []uint16{0x1001, 0x2001, 0x3001, 0x4001}, T1Index: 1,
		PlaneMask: 0x000E, UplinkMask: 0x0FF0,
		PlaneShift: 11, PlaneBits: 3, UplinkShift: 0, UplinkBits: 8,
	}
}

// NewSRv6Mapper returns a mapper for template t.
func NewSRv6Mapper(t wire.SRv6Template) (*SRv6Mapper, error) {
	if _, err := t.Path(0); err != nil {
		return nil, err
	}
	if t.UplinkMask == 0 {
		return nil, fmt.Errorf("fabric: SRv6 template has no uplink field")
	}
	return &SRv6Mapper{Template: t, cache: map[uint32]int32{}}, nil
}

// Path implements Mapper by reading the uplink back out of the uSID path,
// as the T0 switch would.
func (m *SRv6Mapper) Path(ev uint32, plane, src, dst, paths int) int {
	v, ok := m.cache[ev]
	if !ok {
		addr, err := m.Template.Path(ev)
		if err != nil {
			v = -1
		} else {
			t1 := addr.USIDs()[m.Template.T1Index]
			v = int32(extract(t1, m.Template.UplinkMask))
			pl := int32(extract(t1, m.Template.PlaneMask))
			v |= pl << 16
		}
		m.cache[ev] = v
	}
	if v < 0 {
		return 0
	}
	if int(v>>16) != plane&(1<<m.Template.PlaneBits-1) {
		m.Mismatches++
	}
	return int(v&0xFFFF) % paths
}

// extract gathers the bits of u under mask, low to high (the inverse of
// the template's deposit).
func extract(u, mask uint16) uint16 {
	var r uint16
	for bit := uint16(1); mask != 0; bit <<= 1 {
		low := mask & -mask
		if u&low != 0 {
			r |= bit
		}
		mask &^= low
	}
	return r
}
