package fabric

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
)

// LinkKind says where a link sits in the Clos.
type LinkKind uint8

// Link kinds, in path order.
const (
	LinkNIC     LinkKind = iota // node → T0: the sender's own port queue
	LinkT0Up                    // T0 → T1
	LinkT1Down                  // T1 → T0
	LinkLastHop                 // T0 → node
)

func (k LinkKind) String() string {
	switch k {
	case LinkNIC:
		return "nic"
	case LinkT0Up:
		return "t0up"
	case LinkT1Down:
		return "t1down"
	case LinkLastHop:
		return "lasthop"
	}
	return fmt.Sprintf("LinkKind(%d)", uint8(k))
}

// link is one direction of a cable with its egress queue. A link is an
// output queue served at line rate, modelled by virtual finish times: busy
// is when the data lane will have sent everything queued, so the backlog a
// packet finds is (busy − now) × rate and its departure is known the
// moment it is queued, with no event per departure. Control packets and
// trimmed headers go on a strict-priority lane (WP §2.1: trimmed headers
// are forwarded with priority): they wait only for each other, and the
// capacity they use delays the data lane behind them. Times are in
// picoseconds so that serialisation does not round per packet.
type link struct {
	kind    LinkKind
	down    bool
	psPerB  int64 // picoseconds per byte
	busy    int64 // ps: the data lane is busy until then
	hiBusy  int64 // ps: the priority lane is busy until then
	sent    uint64
	bytes   uint64
	peakQ   int64 // largest backlog seen, bytes
	lossles bool  // never drops (the sender's NIC queue)
}

// Link layout: four blocks, each indexed arithmetically.
//
//	NIC uplinks      node×P + plane
//	last hops        N×P + node×P + plane
//	T0 uplinks       2N×P + (plane×T0s + t0)×K + k
//	T1 downlinks     2N×P + P×T0s×K + (plane×K + k)×T0s + t0
func (s *Sim) buildLinks() {
	c := &s.cfg
	np := s.nodes * c.Planes
	core := c.Planes * s.nT0 * c.PathsPerPlane
	s.links = make([]link, 2*np+2*core)
	ps := int64(8e12) / c.LinkRate
	for i := range s.links {
		l := &s.links[i]
		l.psPerB = max(1, ps)
		switch {
		case i < np:
			l.kind, l.lossles = LinkNIC, true
		case i < 2*np:
			l.kind = LinkLastHop
		case i < 2*np+core:
			l.kind = LinkT0Up
		default:
			l.kind = LinkT1Down
		}
	}
}

func (s *Sim) nicLink(node, plane int) int  { return node*s.cfg.Planes + plane }
func (s *Sim) lastLink(node, plane int) int { return (s.nodes+node)*s.cfg.Planes + plane }
func (s *Sim) t0UpLink(plane, t0, k int) int {
	return 2*s.nodes*s.cfg.Planes + (plane*s.nT0+t0)*s.cfg.PathsPerPlane + k
}
func (s *Sim) t1DownLink(plane, k, t0 int) int {
	c := &s.cfg
	return 2*s.nodes*c.Planes + c.Planes*s.nT0*c.PathsPerPlane + (plane*c.PathsPerPlane+k)*s.nT0 + t0
}

// linkOf returns the link of the flight's current hop.
func (s *Sim) linkOf(f *flight) int {
	pl := int(f.plane)
	switch {
	case f.hop == 0:
		return s.nicLink(int(f.src), pl)
	case f.hop == f.nhops-1:
		return s.lastLink(int(f.dst), pl)
	case f.hop == 1:
		return s.t0UpLink(pl, s.t0(int(f.src)), int(f.path))
	}
	return s.t1DownLink(pl, int(f.path), s.t0(int(f.dst)))
}

// Packet classes by DSCP, from the profile.
const (
	clsPrio      uint8 = 1 << iota // control class, trimmed headers
	clsTrimmable                   // may be trimmed under congestion
)

func (s *Sim) initClasses() {
	d := s.cfg.Profile.DSCP
	s.class[d.Control&63] |= clsPrio
	s.class[d.Trimmed&63] |= clsPrio
	s.class[d.TrimmedLastHop&63] |= clsPrio
	s.class[d.Trimmable&63] |= clsTrimmable
	s.class[d.TrimmableRetx&63] |= clsTrimmable
	for op := 0; op < 256; op++ {
		o := wire.Opcode(op)
		if !o.Valid() {
			continue
		}
		st := o.Stack()
		n := 0
		for _, h := range []struct {
			b wire.Stack
			n int
		}{{wire.HasMETH, wire.METHLen}, {wire.HasRETH, wire.RETHLen}, {wire.HasImmDt, wire.ImmDtLen},
			{wire.HasAETH, wire.AETHLen}, {wire.HasSETH, wire.SETHLen + wire.CCStateLen}, {wire.HasNETH, wire.NETHLen},
			{wire.HasPETH, wire.PETHLen}, {wire.HasERTH, wire.ERTHLen}, {wire.HasEETH, wire.EETHLen}} {
			if st&h.b != 0 {
				n += h.n
			}
		}
		s.stack[op] = int16(n)
	}
}

// frameLen is the bytes a packet occupies on a link: the frame with its
// ICRC (absent once trimmed) and FCS, plus preamble and inter-frame gap.
func (s *Sim) frameLen(p *wire.Packet, trimmed bool) int32 {
	n := 14 + 4 + 20
	if p.Eth.HasVLAN {
		n += 4
	}
	if p.IsIPv6 {
		n += 40
	} else {
		n += 20
	}
	if p.SRv6 {
		n += 40
		if p.HasSRH {
			n += 8 + 16*(int(p.SRH.LastEntry)+1)
		}
	}
	n += 8 + wire.BTHLen + int(s.stack[p.BTH.Opcode])
	if p.BTH.TSPresent && p.BTH.Opcode.IsWrite() {
		n += wire.TSETHLen
	}
	n += len(p.Payload) + (-len(p.Payload))&3
	if !trimmed {
		n += wire.ICRCLen
	}
	return int32(n)
}

func (s *Sim) classify(f *flight) {
	c := s.class[dscp(&f.pkt)]
	f.prio, f.trimmable = c&clsPrio != 0, c&clsTrimmable != 0 && f.pkt.BTH.Opcode.IsWrite()
	f.size = s.frameLen(&f.pkt, false)
}

// tos returns the traffic class of the outermost IP header: switches mark
// and trim the header they forward on (WIRE-DSCP-6).
func tos(p *wire.Packet) uint8 {
	switch {
	case p.SRv6:
		return p.Outer.TrafficClass
	case p.IsIPv6:
		return p.IP6.TrafficClass
	}
	return p.IP4.TOS
}

func setTOS(p *wire.Packet, v uint8) {
	switch {
	case p.SRv6:
		p.Outer.TrafficClass = v
	case p.IsIPv6:
		p.IP6.TrafficClass = v
	default:
		p.IP4.TOS = v
	}
}

func dscp(p *wire.Packet) uint8 { return tos(p) >> 2 }

// enqueue puts flight f on link li at the current time and returns when it
// reaches the far end. A switch queue first trims (a trimmable packet
// above TrimBytes), then tail-drops (a packet that does not fit
// QueueBytes), then ECN-marks (an ECT packet above ECNMin, except on the
// last hop unless ECNLastHop). It reports false when the packet was
// dropped (and released).
func (s *Sim) enqueue(f *flight, li int) (Time, bool) {
	l := &s.links[li]
	i := f.idx
	if l.down {
		s.drop(i, DropLinkDown, li)
		return 0, false
	}
	if s.tr != nil && s.cfg.TraceHops {
		s.tr.hop(s.now, f, l.kind, li)
	}
	now := int64(s.now) * 1000
	backlog := max(0, l.busy-now) / l.psPerB // bytes queued on the data lane
	l.peakQ = max(l.peakQ, backlog)
	c := &s.cfg
	if !f.prio && !l.lossles {
		if f.trimmable && c.TrimBytes >= 0 && backlog > int64(c.TrimBytes) {
			s.trim(f, l.kind == LinkLastHop)
		} else if backlog+int64(f.size) > int64(c.QueueBytes) {
			s.drop(i, DropOverflow, li)
			return 0, false
		} else if c.ECNMin >= 0 && backlog > int64(c.ECNMin) && (l.kind != LinkLastHop || c.ECNLastHop) {
			s.mark(f, backlog)
		}
	}
	ser := int64(f.size) * l.psPerB
	var end int64
	if f.prio {
		end = max(now, l.hiBusy) + ser
		l.hiBusy = end
		l.busy = max(l.busy, now) + ser
	} else {
		end = max(now, l.busy) + ser
		l.busy = end
	}
	l.sent++
	l.bytes += uint64(f.size)
	return Time((end+999)/1000) + c.HopDelay, true
}

// trim strips the payload and rewrites the DSCP to TRIMMED, or
// TRIMMED_LASTHOP on the last hop (WIRE-DSCP-2); the header continues with
// priority.
func (s *Sim) trim(f *flight, lastHop bool) {
	d := s.cfg.Profile.DSCP.Trimmed
	if lastHop {
		d = s.cfg.Profile.DSCP.TrimmedLastHop
		s.stats.TrimmedLastHop++
	} else {
		s.stats.Trimmed++
	}
	p := &f.pkt
	setTOS(p, d<<2|tos(p)&3)
	p.Payload = nil
	f.prio, f.trimmable = true, false
	f.size = s.frameLen(p, true)
	if s.tr != nil {
		why := "TRIMMED"
		if lastHop {
			why = "TRIMMED_LASTHOP"
		}
		s.tr.packet(s.now, "trim", f, why)
	}
}

// mark sets CE on an ECN-capable packet with probability rising linearly
// from ECNMin to ECNMax (RED-style, so that marks are randomized as in
// WP §2.1).
func (s *Sim) mark(f *flight, backlog int64) {
	p := &f.pkt
	t := tos(p)
	if t&3 == 0 || t&3 == 3 {
		return // Not-ECT, or marked already
	}
	c := &s.cfg
	if backlog < int64(c.ECNMax) {
		span := int64(c.ECNMax - c.ECNMin)
		if int64(s.rng.next()%uint64(span)) >= backlog-int64(c.ECNMin) {
			return
		}
	}
	setTOS(p, t|3)
	s.stats.Marked++
	if s.tr != nil {
		s.tr.packet(s.now, "ce", f, "")
	}
}

// SetLinkRate changes one link's rate (bits per second), for degraded or
// mixed-speed links; packets already queued keep their departure times.
// k, plane, a and path are as for Link.
func (s *Sim) SetLinkRate(k LinkKind, plane, a, path int, bps int64) error {
	li, err := s.linkIndex(k, plane, a, path)
	if err != nil {
		return err
	}
	if bps < 1e6 || bps > 8e12 {
		return &ConfigError{"LinkRate", fmt.Sprintf("%d b/s: want [1 Mb/s, 8 Tb/s]", bps)}
	}
	s.links[li].psPerB = max(1, int64(8e12)/bps)
	return nil
}

// LinkStats describes one link.
type LinkStats struct {
	Kind       LinkKind
	Down       bool
	Packets    uint64
	Bytes      uint64
	PeakQueue  int64 // bytes
	QueueBytes int64 // backlog now
}

// Link returns the counters of the link of kind k: for LinkNIC and
// LinkLastHop, a is the node; for LinkT0Up, a is the T0 and path the T1;
// for LinkT1Down, path is the T1 and a the destination T0.
func (s *Sim) Link(k LinkKind, plane, a, path int) (LinkStats, error) {
	li, err := s.linkIndex(k, plane, a, path)
	if err != nil {
		return LinkStats{}, err
	}
	l := &s.links[li]
	return LinkStats{Kind: l.kind, Down: l.down, Packets: l.sent, Bytes: l.bytes, PeakQueue: l.peakQ,
		QueueBytes: max(0, l.busy-int64(s.now)*1000) / l.psPerB}, nil
}

func (s *Sim) linkIndex(k LinkKind, plane, a, path int) (int, error) {
	c := &s.cfg
	if plane < 0 || plane >= c.Planes {
		return 0, fmt.Errorf("%w: plane %d", ErrBadPlane, plane)
	}
	switch k {
	case LinkNIC, LinkLastHop:
		if a < 0 || a >= s.nodes {
			return 0, fmt.Errorf("%w: %d", ErrUnknownNode, a)
		}
		if k == LinkNIC {
			return s.nicLink(a, plane), nil
		}
		return s.lastLink(a, plane), nil
	case LinkT0Up, LinkT1Down:
		if a < 0 || a >= s.nT0 || path < 0 || path >= c.PathsPerPlane {
			return 0, fmt.Errorf("%w: T0 %d path %d", ErrBadPlane, a, path)
		}
		if k == LinkT0Up {
			return s.t0UpLink(plane, a, path), nil
		}
		return s.t1DownLink(plane, path, a), nil
	}
	return 0, fmt.Errorf("fabric: unknown link kind %d", k)
}
