package fabric

import (
	"fmt"

	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Endpoint is what the fabric drives: a *statemachine.QP, or anything else
// with the same pure-state-machine shape (the RC baseline of fabric/rc).
// The fabric calls Receive for each packet delivered to it and Advance at
// its NextDeadline, always with the fabric's clock, and reads what the
// step produced from the Output.
type Endpoint interface {
	Receive(now Time, port int, p *wire.Packet, out *statemachine.Output)
	Advance(now Time, out *statemachine.Output)
	NextDeadline() Time
}

// PortStatusSetter is implemented by endpoints that react to NIC port
// changes (*statemachine.QP does, EV-PORT-1 to EV-PORT-3). Masks have bit
// n set when port n (1-based, plane n−1) is up.
type PortStatusSetter interface {
	SetPortStatus(now Time, local, remote uint32, out *statemachine.Output)
}

// Observer sees the output of every endpoint step before the fabric takes
// its packets and resets it. Placement data alias fabric buffers that are
// reused after Observe returns: copy what you keep.
type Observer interface {
	Observe(now Time, id EndpointID, out *statemachine.Output)
}

// EndpointID names an attached endpoint.
type EndpointID int32

type endpoint struct {
	ep            Endpoint
	ps            PortStatusSetter
	node, peer    int
	qpn           uint32
	sched         Time   // time of the earliest timer event queued for it
	local, remote uint32 // port masks last given to ps
}

// flight is one packet in the fabric. Flights are pooled: the packet is a
// copy of what the endpoint sent and the payload a copy into buf, taken at
// injection, as a NIC's DMA would: the sender may reuse its buffer once the
// work request completes while a duplicate is still in flight.
type flight struct {
	pkt         wire.Packet
	buf         []byte
	id          uint64
	idx         int32 // index in the pool
	src, dst    int32
	ev          uint32 // the EV the sender chose (Outgoing.EV)
	plane, path int16
	hop, nhops  uint8
	size        int32 // bytes the packet occupies on a link
	prio        bool  // control class or trimmed header: strict priority
	trimmable   bool
	ruled       bool // the impairment rules have been applied
	dup         bool // a copy made by a Dup rule
}

// Sim is the deterministic discrete-event fabric. It is not safe for
// concurrent use; run independent Sims in parallel instead.
type Sim struct {
	cfg   Config
	now   Time
	ag    agenda
	rng   rng
	links []link
	nT0   int
	nodes int
	eps   []endpoint
	byQPN map[uint64]EndpointID
	fl    []*flight
	free  []int32
	calls []func()
	freeC []int32
	out   statemachine.Output
	obs   []Observer
	rules []ruleSlot
	nRule int
	// portUp is each node's actual port mask (bit n = port n up).
	portUp []uint32
	// known[n] is what node n's NIC believes of its own ports (after
	// LinkDetect); peers learn it PortStatusDelay later.
	known  []uint32
	class  [64]uint8
	stack  [256]int16
	stats  Stats
	tr     *tracer
	sink   *frameSink
	nextID uint64
	firing EndpointID // the endpoint whose timer is being handled, or -1
	codec  *wire.Codec
	chk    wire.Packet
	chkBuf []byte
}

// New builds an empty fabric: links, switches and no endpoints.
func New(cfg Config) (*Sim, error) {
	c, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	s := &Sim{cfg: c, rng: newRNG(c.Seed), byQPN: map[uint64]EndpointID{}, nodes: c.Nodes, firing: -1}
	s.nT0 = (c.Nodes + c.NodesPerT0 - 1) / c.NodesPerT0
	s.codec, err = wire.NewCodec(*c.Profile)
	if err != nil {
		return nil, &ConfigError{"Profile", err.Error()}
	}
	s.buildLinks()
	all := uint32(1)<<(c.Planes+1) - 2 // ports 1..Planes
	s.portUp = make([]uint32, c.Nodes)
	s.known = make([]uint32, c.Nodes)
	for i := range s.portUp {
		s.portUp[i], s.known[i] = all, all
	}
	s.initClasses()
	s.out.TracePackets = c.EndpointEvents
	if c.Trace != nil {
		s.tr = newTracer(c.Trace)
	}
	if c.Frames != nil {
		if err := c.Frames.Open(c.Planes); err != nil {
			return nil, err
		}
		s.sink = &frameSink{FrameSink: c.Frames}
	}
	return s, nil
}

// Config returns the normalized configuration.
func (s *Sim) Config() Config { return s.cfg }

// Now returns the fabric clock.
func (s *Sim) Now() Time { return s.now }

// Stats returns the counters so far.
func (s *Sim) Stats() Stats {
	st := s.stats
	st.Pending = s.ag.len()
	return st
}

// Observe adds an observer; observers run in the order they were added.
func (s *Sim) Observe(o Observer) { s.obs = append(s.obs, o) }

// Attach connects an endpoint with QP number qpn on node to its peer on
// node peer: every packet it sends goes to peer, to the QP its BTH names,
// and every packet reaching node for qpn goes to it.
func (s *Sim) Attach(node int, qpn uint32, peer int, ep Endpoint) (EndpointID, error) {
	if node < 0 || node >= s.nodes || peer < 0 || peer >= s.nodes {
		return -1, fmt.Errorf("%w: %d or %d (have %d)", ErrUnknownNode, node, peer, s.nodes)
	}
	key := uint64(node)<<32 | uint64(qpn)
	if _, dup := s.byQPN[key]; dup {
		return -1, fmt.Errorf("%w: node %d QPN %#x", ErrDuplicateQPN, node, qpn)
	}
	id := EndpointID(len(s.eps))
	e := endpoint{ep: ep, node: node, peer: peer, qpn: qpn, sched: Never, local: s.known[node], remote: s.known[peer]}
	e.ps, _ = ep.(PortStatusSetter)
	s.eps = append(s.eps, e)
	s.byQPN[key] = id
	s.schedule(id)
	return id, nil
}

// Endpoint returns an attached endpoint.
func (s *Sim) Endpoint(id EndpointID) Endpoint { return s.eps[id].ep }

// EndpointNode returns the node an endpoint is attached to and its peer.
func (s *Sim) EndpointNode(id EndpointID) (node, peer int) { return s.eps[id].node, s.eps[id].peer }

// Endpoints returns the number of attached endpoints; IDs are 0 to n−1.
func (s *Sim) Endpoints() int { return len(s.eps) }

// Input runs one input of endpoint id now (a Post, a PostRecv, a control
// command) and takes what it produced: fn receives the clock and the
// Output to pass to the endpoint's method.
func (s *Sim) Input(id EndpointID, fn func(now Time, out *statemachine.Output)) {
	fn(s.now, &s.out)
	s.collect(id)
}

// At runs fn at time t (not before now). Control actions (impairments,
// failures, posting work) are scheduled this way; they run in time order,
// after every event already queued for the same instant.
func (s *Sim) At(t Time, fn func()) {
	var i int32
	if n := len(s.freeC); n > 0 {
		i = s.freeC[n-1]
		s.freeC = s.freeC[:n-1]
		s.calls[i] = fn
	} else {
		i = int32(len(s.calls))
		s.calls = append(s.calls, fn)
	}
	s.ag.push(max(t, s.now), evCall, i)
}

// Run processes events up to and including time until and leaves the clock
// at until (unless until is Never). It returns the number of events run.
func (s *Sim) Run(until Time) int {
	n := 0
	for s.ag.len() > 0 && s.ag.nextTime() <= until {
		s.step()
		n++
	}
	if until != Never && s.now < until {
		s.now = until
	}
	return n
}

// RunUntil processes events until done reports true (checked after every
// event) or the clock would pass limit. It reports whether done became
// true.
func (s *Sim) RunUntil(done func() bool, limit Time) bool {
	for !done() {
		if s.ag.len() == 0 || s.ag.nextTime() > limit {
			return false
		}
		s.step()
	}
	return true
}

// Step runs the next event, if any, and reports whether there was one.
func (s *Sim) Step() bool {
	if s.ag.len() == 0 {
		return false
	}
	s.step()
	return true
}

// NextEvent returns the time of the next event, or Never.
func (s *Sim) NextEvent() Time {
	if s.ag.len() == 0 {
		return Never
	}
	return s.ag.nextTime()
}

func (s *Sim) step() {
	e := s.ag.pop()
	s.now = e.t
	s.stats.Events++
	switch e.kind {
	case evArrive:
		f := s.fl[e.id]
		f.hop++
		if f.hop == f.nhops {
			s.deliver(e.id)
		} else {
			s.forward(e.id)
		}
	case evTimer:
		ep := &s.eps[e.id]
		if e.t != ep.sched {
			return // superseded by an earlier timer
		}
		ep.sched = Never
		ep.ep.Advance(s.now, &s.out)
		s.firing = EndpointID(e.id)
		s.collect(EndpointID(e.id))
		s.firing = -1
	case evCall:
		fn := s.calls[e.id]
		s.calls[e.id] = nil
		s.freeC = append(s.freeC, e.id)
		fn()
	}
}

// collect hands an endpoint's output to the observers, injects its packets
// and re-arms its timer.
func (s *Sim) collect(id EndpointID) {
	o := &s.out
	for _, ob := range s.obs {
		ob.Observe(s.now, id, o)
	}
	if s.tr != nil && len(o.Events) > 0 {
		s.tr.qpEvents(s.eps[id].node, o.Events)
	}
	for i := range o.Packets {
		s.inject(id, &o.Packets[i])
	}
	o.Reset()
	s.schedule(id)
}

// schedule queues a timer event for the endpoint's deadline unless one at
// or before it is queued already. A deadline that moved later leaves an
// early event behind; it finds nothing due (Advance is idempotent) and
// re-arms.
func (s *Sim) schedule(id EndpointID) {
	ep := &s.eps[id]
	d := ep.ep.NextDeadline()
	if d == Never || d >= ep.sched {
		return
	}
	if d <= s.now {
		// Due now: run after what is already queued for this instant. A
		// deadline still due right after its own Advance would spin; one
		// nanosecond later bounds that to one event per nanosecond.
		d = s.now
		if s.firing == id {
			d = s.now + 1
			s.stats.TimerSpins++
		}
	}
	ep.sched = d
	s.ag.push(d, evTimer, int32(id))
}

func (s *Sim) alloc() (int32, *flight) {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		return i, s.fl[i]
	}
	f := &flight{idx: int32(len(s.fl))}
	s.fl = append(s.fl, f)
	return f.idx, f
}

func (s *Sim) release(i int32) {
	f := s.fl[i]
	buf := f.buf
	f.pkt = wire.Packet{}
	f.buf = buf
	s.free = append(s.free, i)
}

// setPayload copies data into the flight's own buffer.
func (f *flight) setPayload(data []byte) {
	if data == nil {
		f.pkt.Payload = nil
		return
	}
	if cap(f.buf) < len(data) {
		f.buf = make([]byte, len(data), max(len(data), 4096))
	}
	f.pkt.Payload = f.buf[:len(data)]
	copy(f.pkt.Payload, data)
}

// inject puts a packet an endpoint sent onto its NIC port.
func (s *Sim) inject(from EndpointID, o *statemachine.Outgoing) {
	ep := &s.eps[from]
	i, f := s.alloc()
	f.pkt = o.Pkt
	f.setPayload(o.Pkt.Payload)
	s.nextID++
	f.id = s.nextID
	f.src, f.dst, f.ev = int32(ep.node), int32(ep.peer), o.EV
	f.plane, f.path, f.hop, f.ruled, f.dup = int16(o.Plane), -1, 0, false, false
	if s.cfg.PlaneAddresses && int(o.Plane) < s.cfg.Planes {
		f.stampPlane()
	}
	s.classify(f)
	s.stats.Injected++
	if s.sink != nil {
		s.sink.write(s, AtTx, f)
	}
	if int(o.Plane) >= s.cfg.Planes {
		s.drop(i, DropNoPort, -1)
		return
	}
	if s.t0(ep.node) == s.t0(ep.peer) {
		f.nhops = 2
	} else {
		f.nhops = 4
		f.path = int16(s.cfg.Mapper.Path(o.EV, int(o.Plane), ep.node, ep.peer, s.cfg.PathsPerPlane))
	}
	if s.tr != nil {
		s.tr.packet(s.now, "tx", f, "")
	}
	s.forward(i)
}

func (s *Sim) t0(node int) int { return node / s.cfg.NodesPerT0 }

// forward puts flight i on the link of its current hop, applying the
// impairment rules where the packet leaves its source T0.
func (s *Sim) forward(i int32) {
	f := s.fl[i]
	var extra Time
	if f.hop == 1 && !f.ruled && s.nRule > 0 {
		f.ruled = true
		var drop bool
		var dup int32 = -1
		drop, extra, dup = s.applyRules(f)
		if dup >= 0 {
			s.forward(dup)
		}
		if drop {
			s.drop(i, DropRule, -1)
			return
		}
	}
	li := s.linkOf(f)
	at, ok := s.enqueue(f, li)
	if !ok {
		return // enqueue counted and released it
	}
	s.ag.push(at+extra, evArrive, i)
}

// deliver hands a flight that crossed its last hop to the QP its BTH
// names on the destination node.
func (s *Sim) deliver(i int32) {
	f := s.fl[i]
	id, ok := s.byQPN[uint64(f.dst)<<32|uint64(f.pkt.BTH.DestQP)]
	if !ok {
		s.drop(i, DropNoQP, -1)
		return
	}
	s.stats.Delivered++
	s.stats.DeliveredBytes += uint64(len(f.pkt.Payload))
	if s.sink != nil {
		s.sink.write(s, AtRx, f)
	}
	if s.tr != nil {
		s.tr.packet(s.now, "rx", f, "")
	}
	p := &f.pkt
	if s.cfg.WireCheck {
		p = s.recode(p)
		if p == nil {
			s.release(i)
			return
		}
	}
	s.eps[id].ep.Receive(s.now, int(f.plane)+1, p, &s.out)
	s.collect(id)
	s.release(i)
}

// recode encodes p and decodes the bytes into a scratch packet, as a real
// receiver would see them; a packet the codec rejects is dropped.
func (s *Sim) recode(p *wire.Packet) *wire.Packet {
	var err error
	s.chkBuf, err = s.codec.Append(s.chkBuf[:0], p)
	if err == nil {
		err = s.codec.Decode(s.chkBuf, &s.chk)
	}
	if err != nil {
		s.stats.WireErrors++
		if s.tr != nil {
			s.tr.note(s.now, "wire-error", err.Error())
		}
		return nil
	}
	return &s.chk
}

// drop releases a flight and counts why.
func (s *Sim) drop(i int32, why DropReason, li int) {
	s.stats.Dropped[why]++
	if s.tr != nil {
		s.tr.packet(s.now, "drop", s.fl[i], why.String())
	}
	_ = li
	s.release(i)
}
