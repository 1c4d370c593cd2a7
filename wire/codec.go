package wire

import (
	"fmt"
	"sync"

	"github.com/openmrc/mrc/spec"
)

// Codec encodes and decodes MRC packets under one spec.Profile. It is
// immutable after NewCodec and safe for concurrent use.
type Codec struct {
	prof                                     spec.Profile
	seMask, mMask, rtxMask, tsMask, rsvdMask byte
	ports                                    [8]uint16
	nports                                   int
	hdrsOnce                                 sync.Once
	hdrs                                     []Header // built by headers, on first use
	trimDSCP                                 uint64   // bit d set: DSCP d marks a trimmed packet
}

// NewCodec returns a Codec for p, or an error naming the bad setting.
func NewCodec(p spec.Profile) (*Codec, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := &Codec{prof: p, rtxMask: p.BTHRetransmitMask, tsMask: p.BTHTimestampMask}
	c.rsvdMask = ^(0x80 | c.rtxMask | c.tsMask)
	c.seMask, c.mMask = 0x80, 0x40 // IBTA order (AMB-4)
	if p.BTHFlagOrder == spec.BTHFlagOrderSwapped {
		c.seMask, c.mMask = 0x40, 0x80
	}
	if len(p.AcceptUDPDstPorts) > len(c.ports) {
		return nil, fmt.Errorf("wire: profile %q accepts %d UDP ports, at most %d", p.Name, len(p.AcceptUDPDstPorts), len(c.ports))
	}
	c.nports = copy(c.ports[:], p.AcceptUDPDstPorts)
	c.trimDSCP = 1<<p.DSCP.Trimmed | 1<<p.DSCP.TrimmedLastHop // Validate: DSCPs are at most 63
	c.prof.AcceptUDPDstPorts = append([]uint16(nil), p.AcceptUDPDstPorts...)
	return c, nil
}

// epOp maps an endpoint op between its wire value and EndpointOp, both
// ways: under the API's numbering (AMB-25) the two defined ops swap.
func (c *Codec) epOp(op EndpointOp) EndpointOp {
	if c.prof.ERTHOpOrder == spec.ERTHOpAPI && op <= EPEVProbe {
		return op ^ 1
	}
	return op
}

// SetEV writes ev into p as SetEV does, with the halves in the order of
// the profile's stev_halves (AMB-23).
func (c *Codec) SetEV(p *Packet, ev uint32, mode EVMode) {
	if c.prof.STEVHalves == spec.STEVHighInSrcPort && p.IsIPv6 && mode != EVModeUDP {
		ev = ev<<16 | ev>>16
	}
	p.SetEV(ev, mode)
}

// EV returns the EV p carries, as Packet.EV does, with the halves in the
// order of the profile's stev_halves (AMB-23).
func (c *Codec) EV(p *Packet, mode EVMode) uint32 {
	ev := p.EV(mode)
	if c.prof.STEVHalves == spec.STEVHighInSrcPort && p.IsIPv6 && mode != EVModeUDP {
		ev = ev<<16 | ev>>16
	}
	return ev
}

// Default is the Codec of spec.DefaultProfile.
var Default = func() *Codec {
	c, err := NewCodec(spec.DefaultProfile())
	if err != nil {
		panic(err) // the default profile is validated by spec's tests
	}
	return c
}()

// Profile returns a copy of the codec's profile.
func (c *Codec) Profile() spec.Profile {
	p := c.prof
	p.AcceptUDPDstPorts = append([]uint16(nil), c.prof.AcceptUDPDstPorts...)
	return p
}

// AcceptsPort reports whether UDP destination port is MRC under the profile
// (WIRE-UDP-1).
func (c *Codec) AcceptsPort(port uint16) bool {
	for _, p := range c.ports[:c.nports] {
		if p == port {
			return true
		}
	}
	return false
}

// IsTrimmedDSCP reports whether dscp marks a trimmed packet, and whether
// it was trimmed at the last hop (WIRE-DSCP-2).
func (c *Codec) IsTrimmedDSCP(dscp uint8) (trimmed, lastHop bool) {
	switch dscp {
	case c.prof.DSCP.Trimmed:
		return true, false
	case c.prof.DSCP.TrimmedLastHop:
		return true, true
	}
	return false, false
}
