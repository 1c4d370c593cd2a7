package modelcheck

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"time"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The endpoint agent (QP 0x2, statemachine.Endpoint) is a state machine of
// its own: best-effort requests (EV probes, port status updates) answered
// by the peer node, matched by request id, timed out by the sender. The
// endpoint model explores two endpoints, A sending requests to B, over a
// network that may lose, duplicate and reorder packets, with timer
// firings. statemachine.Endpoint has no Clone, so each state is rebuilt by
// replaying its path from the initial state (the code is deterministic);
// the state spaces are small.

// EPRequest is one request endpoint A sends.
type EPRequest struct {
	Op   wire.EndpointOp
	Mask uint32 // port_status_mask of a PORT_STATUS_UPDATE
}

// EndpointConfig is one configuration of the endpoint model.
type EndpointConfig struct {
	Name     string
	Requests []EPRequest
	// MaxOutstanding is A's limit of outstanding requests (0: 64).
	MaxOutstanding int
	// Drops, Dups and Timers bound losses, duplications and timer firings.
	Drops, Dups, Timers int
	// Announce are the port masks A announces in turn to B with
	// Endpoint.AnnouncePorts (its own port status updates, repeated until
	// answered); each is a transition.
	Announce []uint32
	// minRepeat, when set, is the repeat interval the check demands
	// instead of the endpoint's (tests: a check stricter than the code
	// must fail).
	minRepeat sm.Time
}

// Endpoint invariant names.
const (
	InvEPAnswered      = "EPAnswered"      // EP-GEN-5: one response per request, same id and op, timestamp reflected
	InvEPOutcomeOnce   = "EPOutcomeOnce"   // EP-GEN-7, EP-GEN-8: one outcome (response or timeout) per request
	InvEPResponseMatch = "EPResponseMatch" // EP-GEN-7, EP-PRB-1, EP-PRB-2: only answered requests, right op and RTT
	InvEPTimeout       = "EPTimeout"       // EP-GEN-7: a timeout only once the request timeout has elapsed
	InvEPPortMask      = "EPPortMask"      // EP-PSU-2: the receiver reports the sender's complete mask
	InvEPProgress      = "EPProgress"      // EP-GEN-7: every request ends in a response or a timeout
	InvEPAnnounce      = "EPAnnounce"      // EP-PSU-1, EP-PSU-2, EP-PSU-4: the current mask, repeated no sooner than 1 ms, not after the answer
)

// epRepeat is the endpoints' RepeatInterval in the model (EP-PSU-4).
const epRepeat = sm.Millisecond

const epTimeout = 64 * sm.Microsecond

var errRejected = errors.New("modelcheck: transition not enabled")

type epPacket struct {
	p    wire.Packet
	from uint8
	id   uint64
}

type epGhost struct {
	sentAt   sm.Time
	sent     bool
	answered bool // B answered it
	outcomes uint8
}

type epWorld struct {
	ep     [2]*sm.Endpoint
	now    sm.Time
	net    []*epPacket
	posted int
	drops  uint8
	dups   uint8
	timers uint8
	g      []epGhost
	// A's port announcements: how many made, the ids they used, when the
	// current mask was last sent, and whether B's answer to it arrived.
	announced int
	annIDs    []uint16
	annSent   sm.Time
	annAcked  bool
}

type epChecker struct {
	cfg  EndpointConfig
	out  sm.Output
	peer [2]sm.Peer
	viol violations
}

var epAddrs = [2]netip.Addr{netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2})}

func (c *epChecker) initial() (*epWorld, error) {
	w := &epWorld{g: make([]epGhost, len(c.cfg.Requests))}
	for s := range 2 {
		e, err := sm.NewEndpoint(sm.EndpointConfig{SrcIP: epAddrs[s], SrcMAC: [6]byte{2, 0, 0, 0, 0, byte(s + 1)},
			MaxOutstanding: c.cfg.MaxOutstanding, Timeout: epTimeout, RepeatInterval: epRepeat})
		if err != nil {
			return nil, err
		}
		w.ep[s] = e
		c.peer[s] = sm.Peer{IP: epAddrs[s], MAC: [6]byte{2, 0, 0, 0, 0, byte(s + 1)}}
	}
	return w, nil
}

func epKey(k *epPacket) uint64 {
	h := newHasher()
	p := &k.p
	h.mix(uint64(k.from) | uint64(p.BTH.Opcode)<<8 | uint64(p.BTH.PSN)<<16)
	h.mix(uint64(p.ERTH.Op) | uint64(p.ERTH.PortStatusMask)<<8)
	h.mix(uint64(p.ERTH.TxTimestamp) | uint64(p.EETH.Op)<<16 | uint64(p.EETH.TxTimestamp)<<24)
	h.mix(uint64(p.EV(wire.EVModeUDP)) | uint64(p.IP4.TOS)<<32)
	return h.sum()
}

// epEnabled lists the enabled transitions: post the next request,
// deliver, drop or duplicate a packet, fire the timer.
func (c *epChecker) actions(w *epWorld) []action {
	var acts []action
	if w.posted < len(c.cfg.Requests) {
		acts = append(acts, action{kind: actPost})
	}
	if w.announced < len(c.cfg.Announce) {
		acts = append(acts, action{kind: actPort})
	}
	for i, k := range w.net {
		if i > 0 && w.net[i-1].id == k.id {
			continue
		}
		acts = append(acts, action{kind: actDeliver, idx: uint16(i)})
		if int(w.drops) < c.cfg.Drops {
			acts = append(acts, action{kind: actDrop, idx: uint16(i)})
		}
		if int(w.dups) < c.cfg.Dups {
			acts = append(acts, action{kind: actDup, idx: uint16(i)})
		}
	}
	if int(w.timers) < c.cfg.Timers && min(w.ep[0].NextDeadline(), w.ep[1].NextDeadline()) != sm.Never {
		acts = append(acts, action{kind: actTimer})
	}
	return acts
}

// apply performs a on w in place and checks the invariants on the step.
func (c *epChecker) apply(w *epWorld, a action) error {
	c.viol = violations{}
	out := &c.out
	out.Reset()
	var from = -1
	switch a.kind {
	case actPost:
		k := w.posted
		rq := c.cfg.Requests[k]
		err := w.ep[0].Send(w.now, sm.EPRequest{ReqID: uint16(k + 1), Op: rq.Op, Dst: c.peer[1], EV: 0x100, Port: 1,
			NICInitiated: rq.Op == wire.EPPortStatusUpdate, PortStatus: rq.Mask}, out)
		if errors.Is(err, sm.ErrTooManyRequests) {
			return errRejected // not enabled while the table is full
		}
		if err != nil {
			return fmt.Errorf("modelcheck: endpoint request %d: %w", k+1, err)
		}
		w.posted++
		w.g[k] = epGhost{sentAt: w.now, sent: true}
		from = 0
	case actPort:
		mask := c.cfg.Announce[w.announced]
		peers := []sm.PortPeer{{Peer: c.peer[1], EV: 0x100, Port: 1}}
		if err := w.ep[0].AnnouncePorts(w.now, mask, peers, out); err != nil {
			return fmt.Errorf("modelcheck: announce %#x: %w", mask, err)
		}
		if w.announced == 0 || mask != c.cfg.Announce[w.announced-1] {
			w.annAcked = false
		}
		w.announced++
		from = 0
	case actDeliver:
		k := w.net[a.idx]
		w.net = slices.Delete(w.net, int(a.idx), int(a.idx)+1)
		to := 1 - int(k.from)
		w.ep[to].Receive(w.now, 1, &k.p, out)
		from = to
		if to == 1 && k.p.BTH.Opcode == wire.OpEndpointReq {
			c.checkAnswer(w, k)
		}
	case actDrop:
		w.net = slices.Delete(w.net, int(a.idx), int(a.idx)+1)
		w.drops++
	case actDup:
		w.net = slices.Insert(w.net, int(a.idx), w.net[a.idx])
		w.dups++
	case actTimer:
		w.now = max(w.now, min(w.ep[0].NextDeadline(), w.ep[1].NextDeadline()))
		w.timers++
		w.ep[0].Advance(w.now, out)
		w.ep[1].Advance(w.now, out)
		from = 0 // only A's requests time out or repeat; B only answers
	}
	c.checkAnnounce(w, a)
	for i := range out.Packets {
		k := &epPacket{p: out.Packets[i].Pkt, from: uint8(max(from, 0))}
		k.id = epKey(k)
		i, _ := slices.BinarySearchFunc(w.net, k.id, func(x *epPacket, id uint64) int { return cmp.Compare(x.id, id) })
		w.net = slices.Insert(w.net, i, k)
	}
	c.checkEvents(w)
	return nil
}

// checkAnswer: B answers a well-formed request with one response carrying
// its id and op and reflecting its timestamp (EP-GEN-5).
func (c *epChecker) checkAnswer(w *epWorld, req *epPacket) {
	var resp []*wire.Packet
	for i := range c.out.Packets {
		if p := &c.out.Packets[i].Pkt; p.BTH.Opcode == wire.OpEndpointResp {
			resp = append(resp, p)
		}
	}
	id := req.p.BTH.PSN & 0xFFFF
	if len(resp) != 1 || resp[0].BTH.PSN != id || resp[0].EETH.Op != req.p.ERTH.Op ||
		resp[0].EETH.TxTimestamp != req.p.ERTH.TxTimestamp || resp[0].BTH.DestQP != wire.EndpointQPN {
		c.viol.add(InvEPAnswered, "B answered request %d (%v) with %d response(s)", id, req.p.ERTH.Op, len(resp))
		return
	}
	if k := int(id) - 1; k >= 0 && k < len(w.g) {
		w.g[k].answered = true
	}
}

func (c *epChecker) checkEvents(w *epWorld) {
	u := sm.Time(128) // the default profile's timestamp unit
	for _, e := range c.out.Events {
		k := int(e.PSN) - 1
		if (e.Kind == sm.EvEPResponse || e.Kind == sm.EvEPTimeout) && slices.Contains(w.annIDs, uint16(e.PSN)) {
			if e.Kind == sm.EvEPResponse && uint16(e.PSN) == w.annIDs[len(w.annIDs)-1] {
				w.annAcked = true
			}
			continue // an announcement's outcome: checkAnnounce
		}
		switch e.Kind {
		case sm.EvEPResponse, sm.EvEPTimeout:
			if k < 0 || k >= len(w.g) || !w.g[k].sent {
				c.viol.add(InvEPOutcomeOnce, "an outcome for request %d, which was never sent", e.PSN)
				continue
			}
			g := &w.g[k]
			if g.outcomes++; g.outcomes > 1 {
				c.viol.add(InvEPOutcomeOnce, "request %d has %d outcomes (%s)", e.PSN, g.outcomes, e.Kind)
			}
			rq := c.cfg.Requests[k]
			if e.Kind == sm.EvEPResponse {
				rtt := sm.Time(uint16(w.now/u)-uint16(g.sentAt/u)) * u
				if !g.answered || e.Reason != uint8(rq.Op) || sm.Time(e.Value) != rtt {
					c.viol.add(InvEPResponseMatch, "response for request %d: answered=%v op %d (want %d) rtt %d (want %d)",
						e.PSN, g.answered, e.Reason, rq.Op, e.Value, rtt)
				}
			} else if w.now-g.sentAt < epTimeout {
				c.viol.add(InvEPTimeout, "request %d timed out after %v, before the timeout %v", e.PSN, w.now-g.sentAt, epTimeout)
			}
		case sm.EvRemotePortMask:
			if rq := c.cfg.Requests; e.QPN != wire.EndpointQPN || !slices.ContainsFunc(rq, func(r EPRequest) bool {
				return r.Op == wire.EPPortStatusUpdate && uint64(r.Mask) == e.Value
			}) && !slices.Contains(c.cfg.Announce, uint32(e.Value)) {
				c.viol.add(InvEPPortMask, "B reports port mask %#x, which A never sent", e.Value)
			}
		}
	}
}

// checkAnnounce: every port status update A sends on its own carries the
// mask it announces now (EP-PSU-2); it goes out when the mask is
// announced and is repeated no sooner than RepeatInterval (EP-PSU-4), and
// never once B's answer to the current mask has arrived (EP-PSU-4).
func (c *epChecker) checkAnnounce(w *epWorld, a action) {
	for i := range c.out.Packets {
		p := &c.out.Packets[i].Pkt
		if p.BTH.Opcode != wire.OpEndpointReq || p.ERTH.Op != wire.EPPortStatusUpdate || w.announced == 0 {
			continue
		}
		id := uint16(p.BTH.PSN)
		if k := int(id) - 1; k >= 0 && k < w.posted && c.cfg.Requests[k].Op == wire.EPPortStatusUpdate && a.kind == actPost {
			continue // an explicit request (Send), not an announcement
		}
		w.annIDs = append(w.annIDs, id)
		cur := c.cfg.Announce[w.announced-1]
		switch {
		case p.ERTH.PortStatusMask != cur:
			c.viol.add(InvEPAnnounce, "A announced mask %#x while its ports are %#x", p.ERTH.PortStatusMask, cur)
		case a.kind == actTimer && w.now-w.annSent < max(epRepeat, c.cfg.minRepeat):
			c.viol.add(InvEPAnnounce, "A repeated its update after %v, before %v", w.now-w.annSent, max(epRepeat, c.cfg.minRepeat))
		case a.kind == actTimer && w.annAcked:
			c.viol.add(InvEPAnnounce, "A repeated its update after B had answered it")
		case a.kind != actTimer && a.kind != actPort:
			c.viol.add(InvEPAnnounce, "A sent an update on %s", actNames[a.kind])
		}
		w.annSent = w.now
	}
}

func (c *epChecker) hash(w *epWorld) uint64 {
	h := newHasher()
	for s := range 2 {
		ph := qpHasher{hasher: newHasher()} // absolute time: timestamps are absolute too
		e := reflect.ValueOf(w.ep[s]).Elem()
		ph.value(e.FieldByName("pend"), "pend")
		h.mix(ph.sum())
		h.mix(e.FieldByName("mask").Uint() | e.FieldByName("nextID").Uint()<<32)
		ann := e.FieldByName("ann") // the peer (to) is the same in every state
		for i := range ann.Len() {
			x := ann.Index(i)
			h.mix(x.FieldByName("id").Uint() | boolBit(x.FieldByName("answered").Bool())<<16)
			h.mix(uint64(x.FieldByName("sentAt").Int()))
		}
	}
	h.mix(uint64(w.now))
	for _, k := range w.net {
		h.mix(k.id)
	}
	h.mix(uint64(w.posted) | uint64(w.drops)<<16 | uint64(w.dups)<<24 | uint64(w.timers)<<32 | uint64(w.announced)<<40)
	h.mix(uint64(w.annSent) ^ boolBit(w.annAcked)<<63)
	for _, id := range w.annIDs {
		h.mix(uint64(id))
	}
	for _, g := range w.g {
		h.mix(uint64(g.sentAt) ^ boolBit(g.sent)<<62 ^ boolBit(g.answered)<<61 ^ uint64(g.outcomes)<<56)
	}
	return h.sum()
}

// rebuild replays path from the initial state.
func (c *epChecker) rebuild(path []action) (*epWorld, error) {
	w, err := c.initial()
	if err != nil {
		return nil, err
	}
	for _, a := range path {
		if err := c.apply(w, a); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// CheckEndpoint explores every state of the endpoint model within cfg's
// bounds, breadth-first, checking EPAnswered, EPOutcomeOnce,
// EPResponseMatch, EPTimeout, EPPortMask and, in states where nothing can
// happen any more, EPProgress.
func CheckEndpoint(cfg EndpointConfig) (*Result, error) {
	start := time.Now()
	c := &epChecker{cfg: cfg}
	w0, err := c.initial()
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg.Name}
	seen := map[uint64]bool{c.hash(w0): true}
	frontier := [][]action{nil}
	for len(frontier) > 0 {
		var next [][]action
		for _, path := range frontier {
			w, err := c.rebuild(path)
			if err != nil {
				return nil, err
			}
			acts := c.actions(w)
			if len(acts) == 0 {
				res.Terminal++
				if w.announced > 0 && !w.annAcked && int(w.timers) < cfg.Timers {
					v := &violations{}
					v.add(InvEPAnnounce, "nothing left to happen, but A's port status update was never answered")
					res.Violation = c.violation(path, nil, v)
					res.Distinct, res.Depth, res.Elapsed = len(seen), len(path), time.Since(start)
					return res, nil
				}
				for k, g := range w.g {
					if g.outcomes != 1 {
						v := &violations{}
						v.add(InvEPProgress, "nothing left to happen, but request %d has %d outcomes", k+1, g.outcomes)
						res.Violation = c.violation(path, nil, v)
						res.Distinct, res.Depth, res.Elapsed = len(seen), len(path), time.Since(start)
						return res, nil
					}
				}
			}
			for _, a := range acts {
				nw, err := c.rebuild(path)
				if err != nil {
					return nil, err
				}
				if err := c.apply(nw, a); err == errRejected {
					res.Rejected++
					continue
				} else if err != nil {
					return nil, err
				}
				res.States++
				if c.viol.any() {
					v := c.viol
					res.Violation = c.violation(path, &a, &v)
					res.Distinct, res.Depth, res.Elapsed = len(seen), len(path)+1, time.Since(start)
					return res, nil
				}
				if h := c.hash(nw); !seen[h] {
					seen[h] = true
					next = append(next, append(slices.Clip(path), a))
				}
			}
		}
		if len(next) > 0 {
			res.Depth++
		}
		frontier = next
	}
	res.Distinct, res.Elapsed = len(seen), time.Since(start)
	return res, nil
}

func (c *epChecker) violation(path []action, last *action, v *violations) *Violation {
	acts := slices.Clone(path)
	if last != nil {
		acts = append(acts, *last)
	}
	var steps [][]string
	for i := range acts {
		steps = append(steps, []string{fmt.Sprintf("%s %d", actNames[acts[i].kind], acts[i].idx)})
	}
	return &Violation{Invariant: v.names[0], All: v.names, Details: v.details, Steps: steps}
}

// EndpointConfigurations returns the endpoint model's default
// configurations.
func EndpointConfigurations() []EndpointConfig {
	return []EndpointConfig{
		{Name: "ep-probe-and-port-status", Requests: []EPRequest{{Op: wire.EPEVProbe}, {Op: wire.EPPortStatusUpdate, Mask: 0b110}},
			Drops: 1, Dups: 1, Timers: 2},
		{Name: "ep-one-outstanding", Requests: []EPRequest{{Op: wire.EPEVProbe}, {Op: wire.EPEVProbe}}, MaxOutstanding: 1,
			Drops: 1, Dups: 1, Timers: 2},
		{Name: "ep-announce", Announce: []uint32{0b110, 0b110, 0b100}, Drops: 2, Dups: 1, Timers: 3},
	}
}
