package fabric

import (
	"fmt"

	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Class selects the packets a Rule applies to.
type Class uint8

// Packet classes for rules.
const (
	AllPackets     Class = iota
	DataPackets          // write requests and reliability probes (the forward path)
	ControlPackets       // SACK, NACK, transport ACK (the reverse path)
)

// Any is the wildcard of Rule's Plane, Path, Src and Dst.
const Any = -1

// Rule is an impairment applied where a packet leaves its source T0 (the
// first switch), once per packet. A rule matches on plane, path, source and
// destination node (Any for all), optionally one EV (an ACL on the flow, as
// the white paper's 20 %-drop-on-one-EV test injects it) or one PSN, and a
// packet class. Start from NewRule, which matches everything.
type Rule struct {
	Plane, Path int
	Src, Dst    int
	Class       Class
	EV          uint32
	MatchEV     bool
	PSN         uint32
	MatchPSN    bool
	// Drop is the loss probability; 1 blackholes.
	Drop float64
	// Dup is the probability that the packet is duplicated; the copy
	// follows DupDelay later.
	Dup      float64
	DupDelay Time
	// Delay is the probability that the packet is held back by DelayBy
	// (reordering it behind later packets).
	Delay   float64
	DelayBy Time
	// Jitter adds a uniform extra delay in [0, Jitter] to every matching
	// packet.
	Jitter Time
	// Limit bounds how many packets the rule acts on (drops, duplicates or
	// delays); 0 means no bound.
	Limit int
}

// NewRule returns a rule that matches every packet and does nothing.
func NewRule() Rule { return Rule{Plane: Any, Path: Any, Src: Any, Dst: Any} }

// RuleID names an installed rule.
type RuleID int

type ruleSlot struct {
	r                Rule
	on               bool
	drop, dup, delay uint32
	acted            int
}

// AddRule installs r and returns its ID.
func (s *Sim) AddRule(r Rule) (RuleID, error) {
	c := &s.cfg
	if r.Plane < Any || r.Plane >= c.Planes || r.Path < Any || r.Path >= c.PathsPerPlane {
		return -1, fmt.Errorf("%w: plane %d path %d", ErrBadPlane, r.Plane, r.Path)
	}
	if r.Src < Any || r.Src >= s.nodes || r.Dst < Any || r.Dst >= s.nodes {
		return -1, fmt.Errorf("%w: src %d dst %d", ErrUnknownNode, r.Src, r.Dst)
	}
	if r.Jitter < 0 || r.DupDelay < 0 || r.DelayBy < 0 || r.Limit < 0 {
		return -1, fmt.Errorf("fabric: rule with negative delay or limit")
	}
	slot := ruleSlot{r: r, on: true, drop: prob(r.Drop), dup: prob(r.Dup), delay: prob(r.Delay)}
	for i := range s.rules {
		if !s.rules[i].on {
			s.rules[i] = slot
			s.nRule++
			return RuleID(i), nil
		}
	}
	s.rules = append(s.rules, slot)
	s.nRule++
	return RuleID(len(s.rules) - 1), nil
}

// RemoveRule uninstalls a rule; removing it twice is harmless.
func (s *Sim) RemoveRule(id RuleID) {
	if int(id) >= 0 && int(id) < len(s.rules) && s.rules[id].on {
		s.rules[id].on = false
		s.nRule--
	}
}

// ClearRules uninstalls every rule.
func (s *Sim) ClearRules() {
	s.rules = s.rules[:0]
	s.nRule = 0
}

func (r *Rule) matches(f *flight) bool {
	if r.Plane != Any && int(f.plane) != r.Plane || r.Path != Any && int(f.path) != r.Path ||
		r.Src != Any && int(f.src) != r.Src || r.Dst != Any && int(f.dst) != r.Dst {
		return false
	}
	op := f.pkt.BTH.Opcode
	data := op.IsWrite() || op == wire.OpProbe
	switch r.Class {
	case DataPackets:
		if !data {
			return false
		}
	case ControlPackets:
		if data {
			return false
		}
	}
	if r.MatchEV && f.ev != r.EV {
		return false
	}
	return !r.MatchPSN || f.pkt.BTH.PSN == r.PSN
}

// applyRules runs the installed rules over a packet leaving its first
// switch: whether to drop it, extra delay, and a duplicate flight (or −1)
// to forward as well.
func (s *Sim) applyRules(f *flight) (drop bool, extra Time, dup int32) {
	dup = -1
	for k := range s.rules {
		rs := &s.rules[k]
		if !rs.on || !rs.r.matches(f) {
			continue
		}
		r := &rs.r
		if r.Limit > 0 && rs.acted >= r.Limit {
			continue
		}
		if s.rng.hit(rs.drop) {
			rs.acted++
			return true, 0, dup
		}
		if dup < 0 && s.rng.hit(rs.dup) {
			rs.acted++
			dup = s.clone(f, r.DupDelay)
		}
		if s.rng.hit(rs.delay) {
			rs.acted++
			extra += r.DelayBy
			s.stats.Delayed++
		}
		if r.Jitter > 0 {
			extra += Time(s.rng.upto(int64(r.Jitter)))
		}
	}
	return false, extra, dup
}

// clone makes a duplicate of f that enters the same link delay later.
func (s *Sim) clone(f *flight, delay Time) int32 {
	i, c := s.alloc()
	buf := c.buf
	idx := c.idx
	*c = *f
	c.buf, c.idx = buf, idx
	c.setPayload(f.pkt.Payload)
	s.nextID++
	c.id = s.nextID
	c.dup = true
	s.stats.Duplicated++
	if s.tr != nil {
		s.tr.packet(s.now, "dup", c, "")
	}
	if delay > 0 {
		// Hold the copy at the switch: it re-enters forward from an
		// arrival event at its current hop.
		c.hop--
		s.ag.push(s.now+delay, evArrive, i)
		return -1
	}
	return i
}

// SetLinkUp takes one link down or up; a down link drops everything it
// is given. k, plane, a and path are as for Link.
func (s *Sim) SetLinkUp(k LinkKind, plane, a, path int, up bool) error {
	li, err := s.linkIndex(k, plane, a, path)
	if err != nil {
		return err
	}
	s.links[li].down = !up
	if s.tr != nil {
		s.tr.link(s.now, k, plane, a, path, up)
	}
	return nil
}

// SetT1Up makes T1 switch path of plane stop forwarding (up false) or
// resume: every packet reaching it is dropped, with no signal to anyone,
// as when a T1 silently blackholes (WP §3).
func (s *Sim) SetT1Up(plane, path int, up bool) error {
	for t0 := 0; t0 < s.nT0; t0++ {
		if err := s.SetLinkUp(LinkT1Down, plane, t0, path, up); err != nil {
			return err
		}
	}
	return nil
}

// SetPortUp takes a node's NIC port on plane down or up (both directions
// of its cable). The NIC notices after LinkDetect and stops using the
// plane for every QP on the node (EV-PORT-1); its peers learn it
// PortStatusDelay later through the port-status update and stop sending to
// it on that plane (EV-PORT-2); both resume when it returns (EV-PORT-3).
func (s *Sim) SetPortUp(node, plane int, up bool) error {
	if node < 0 || node >= s.nodes {
		return fmt.Errorf("%w: %d", ErrUnknownNode, node)
	}
	if plane < 0 || plane >= s.cfg.Planes {
		return fmt.Errorf("%w: plane %d", ErrBadPlane, plane)
	}
	s.links[s.nicLink(node, plane)].down = !up
	s.links[s.lastLink(node, plane)].down = !up
	bit := uint32(1) << (plane + 1)
	if up {
		s.portUp[node] |= bit
	} else {
		s.portUp[node] &^= bit
	}
	if s.tr != nil {
		s.tr.link(s.now, LinkNIC, plane, node, -1, up)
	}
	s.At(s.now+s.cfg.LinkDetect, func() {
		s.known[node] = s.portUp[node]
		s.notify(func(e *endpoint) bool { return e.node == node }, node)
		s.At(s.now+s.cfg.PortStatusDelay, func() {
			s.notify(func(e *endpoint) bool { return e.peer == node && e.node != node }, node)
		})
	})
	return nil
}

// SetPlaneUp fails or restores a whole plane: every node's port on it.
func (s *Sim) SetPlaneUp(plane int, up bool) error {
	for n := 0; n < s.nodes; n++ {
		if err := s.SetPortUp(n, plane, up); err != nil {
			return err
		}
	}
	return nil
}

// notify pushes the current port knowledge to the endpoints sel picks.
func (s *Sim) notify(sel func(*endpoint) bool, node int) {
	for i := range s.eps {
		e := &s.eps[i]
		if !sel(e) || e.ps == nil {
			continue
		}
		l, r := s.known[e.node], s.known[e.peer]
		if e.node == node {
			e.local = l
		}
		if e.peer == node {
			e.remote = r
		}
		e.ps.SetPortStatus(s.now, e.local, e.remote, &s.out)
		s.collect(EndpointID(i))
	}
}

// PortUp reports whether a node's port on plane is up.
func (s *Sim) PortUp(node, plane int) bool { return s.portUp[node]&(1<<(plane+1)) != 0 }

// DropReason says why the fabric discarded a packet.
type DropReason uint8

// Drop reasons.
const (
	DropRule     DropReason = iota // an impairment rule (random loss, blackhole)
	DropLinkDown                   // a failed link, port, T1 or plane
	DropOverflow                   // tail drop: the egress queue was full
	DropNoPort                     // sent on a port the node does not have
	DropNoQP                       // no QP with that number on the destination
	numDropReasons
)

func (d DropReason) String() string {
	switch d {
	case DropRule:
		return "rule"
	case DropLinkDown:
		return "link-down"
	case DropOverflow:
		return "overflow"
	case DropNoPort:
		return "no-port"
	case DropNoQP:
		return "no-qp"
	}
	return fmt.Sprintf("DropReason(%d)", uint8(d))
}

// Stats are the fabric's counters.
type Stats struct {
	Events         uint64 // events run
	Injected       uint64 // packets endpoints sent
	Delivered      uint64 // packets handed to endpoints
	DeliveredBytes uint64 // payload bytes delivered
	Dropped        [numDropReasons]uint64
	Trimmed        uint64 // trimmed mid-fabric (DSCP TRIMMED)
	TrimmedLastHop uint64 // trimmed on the last hop (DSCP TRIMMED_LASTHOP)
	Marked         uint64 // CE marks
	Duplicated     uint64
	Delayed        uint64
	WireErrors     uint64 // WireCheck: packets the codec rejected
	TimerSpins     uint64 // deadlines still due after their Advance
	Pending        int    // events queued now
}

// TotalDropped sums the drops of every reason.
func (st *Stats) TotalDropped() uint64 {
	var n uint64
	for _, d := range st.Dropped {
		n += d
	}
	return n
}

var _ PortStatusSetter = (*statemachine.QP)(nil)
var _ Endpoint = (*statemachine.QP)(nil)
