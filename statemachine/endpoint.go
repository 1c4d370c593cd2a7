package statemachine

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// EndpointConfig configures a node's endpoint-operation agent (QP 0x2).
type EndpointConfig struct {
	// Profile gives the DSCP values and timestamp unit; nil means the
	// default (spec.OrDefault).
	Profile *spec.Profile
	SrcMAC  [6]byte
	SrcIP   netip.Addr
	// EVMode is how EVs reach the wire.
	EVMode wire.EVMode
	// ReverseEV[port-1] is the EV responses leave on from that port; 0
	// reflects the request's EV (EP-GEN-6).
	ReverseEV [MaxPlanes]uint32
	// MaxOutstanding bounds the requests awaiting an answer; 0 means 64.
	MaxOutstanding int
	// Timeout is rsp_timeout: how long a request waits; 0 means 2 ms.
	Timeout Time
	// RepeatInterval is how often an unanswered port status update is
	// repeated (EP-PSU-4); 0 means 1 ms, the least allowed.
	RepeatInterval Time
}

// PortPeer is a peer node a port status update goes to, and the path to
// it: an EV and the 1-based local port (up) it leaves on.
type PortPeer struct {
	Peer
	EV   uint32
	Port uint8
}

// announce is one peer's NIC-initiated port status update.
type announce struct {
	to       PortPeer
	id       uint16
	sentAt   Time
	answered bool
}

// Peer addresses another node's endpoint.
type Peer struct {
	MAC [6]byte
	IP  netip.Addr
}

// EPRequest is one endpoint request (mrc_ctl_ep_req).
type EPRequest struct {
	ReqID uint16
	Op    wire.EndpointOp
	Dst   Peer
	// EV and Port (1-based) are req_ev: the path and the port it leaves on.
	EV   uint32
	Port uint8
	// DSCP is req_tc. A NIC-initiated port status update uses
	// DSCP_CONTROL instead (EP-GEN-4).
	DSCP         uint8
	NICInitiated bool
	// PortStatus is the port_status_mask of a PORT_STATUS_UPDATE: bit n =
	// port n up, bit 0 always 0 (WIRE-ERTH-2).
	PortStatus uint32
}

type epPending struct {
	id     uint16
	op     wire.EndpointOp
	ev     uint32
	sentAt Time
	valid  bool
}

// Endpoint is a node's endpoint-operation agent: EV probes with RTT and
// port status updates, connectionless and best effort (EP-GEN-1). Like a
// QP it is a pure state machine driven by inputs.
type Endpoint struct {
	cfg EndpointConfig
	// codec places the EV as the profile's stev_halves says (AMB-23).
	codec *wire.Codec
	dscp  uint8 // DSCP_CONTROL
	tsU   Time
	pend  []epPending
	// NIC-initiated port status updates (EP-PSU-1, EP-PSU-4).
	mask   uint32
	ann    []announce
	nextID uint16
}

// NewEndpoint returns an endpoint agent.
func NewEndpoint(cfg EndpointConfig) (*Endpoint, error) {
	cfg.Profile = spec.OrDefault(cfg.Profile)
	codec, err := wire.NewCodec(*cfg.Profile)
	if err != nil {
		return nil, &ConfigError{Field: "Profile", Reason: err.Error()}
	}
	if !cfg.SrcIP.IsValid() {
		return nil, cfgErr("SrcIP", "required")
	}
	if cfg.MaxOutstanding == 0 {
		cfg.MaxOutstanding = 64
	}
	if cfg.MaxOutstanding < 1 || cfg.MaxOutstanding > 1<<16 {
		return nil, cfgErr("MaxOutstanding", "%d: want [1, 65536]", cfg.MaxOutstanding)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * Millisecond
	}
	if cfg.RepeatInterval == 0 {
		cfg.RepeatInterval = Millisecond
	}
	if cfg.RepeatInterval < Millisecond {
		return nil, cfgErr("RepeatInterval", "%d ns: at most one update per millisecond (EP-PSU-4)", cfg.RepeatInterval)
	}
	return &Endpoint{cfg: cfg, codec: codec, dscp: cfg.Profile.DSCP.Control, tsU: Time(cfg.Profile.TimestampUnitNs),
		pend: make([]epPending, cfg.MaxOutstanding)}, nil
}

func (e *Endpoint) packet(out *Output, dst Peer, ev uint32, port uint8, dscp uint8) (*wire.Packet, error) {
	if dst.IP.Is4() != e.cfg.SrcIP.Is4() || !dst.IP.IsValid() {
		return nil, fmt.Errorf("%w: peer %v and source %v are not the same IP version", ErrInvalidAttr, dst.IP, e.cfg.SrcIP)
	}
	if port < 1 || port > MaxPlanes {
		return nil, fmt.Errorf("%w: port %d outside [1, %d]", ErrInvalidAttr, port, MaxPlanes)
	}
	if dscp > 63 {
		return nil, fmt.Errorf("%w: DSCP %d exceeds 63", ErrInvalidAttr, dscp)
	}
	o := out.newPacket()
	p := &o.Pkt
	p.Eth.Src, p.Eth.Dst = e.cfg.SrcMAC, dst.MAC
	if dst.IP.Is6() {
		p.IsIPv6 = true
		p.IP6.TrafficClass, p.IP6.HopLimit, p.IP6.Src, p.IP6.Dst = dscp<<2, 64, e.cfg.SrcIP.As16(), dst.IP.As16()
	} else {
		p.IP4.TOS, p.IP4.TTL, p.IP4.FlagsFrag, p.IP4.Src, p.IP4.Dst = dscp<<2, 64, 0x4000, e.cfg.SrcIP.As4(), dst.IP.As4()
	}
	e.codec.SetEV(p, ev, e.cfg.EVMode)
	o.EV, o.Plane, o.Class = ev, port-1, ClassEndpoint
	return p, nil
}

// Send sends an endpoint request to a peer's QP 0x2 (EP-GEN-1 to EP-GEN-4):
// its request id in BTH psn bits 15:0 (WIRE-EP-1), unique among outstanding
// requests (EP-GEN-2). The answer, or the timeout, is reported as
// EvEPResponse or EvEPTimeout.
func (e *Endpoint) Send(now Time, rq EPRequest, out *Output) error {
	if rq.Op > wire.EPEVProbe {
		return fmt.Errorf("%w: endpoint op %d", ErrInvalidAttr, rq.Op)
	}
	if rq.PortStatus&1 != 0 || (rq.Op == wire.EPEVProbe && rq.PortStatus != 0) {
		return fmt.Errorf("%w: port_status_mask %#x: bit 0 is unused, and EV probes carry 0", ErrInvalidAttr, rq.PortStatus)
	}
	free := -1
	for i := range e.pend {
		if e.pend[i].valid && e.pend[i].id == rq.ReqID {
			return fmt.Errorf("%w: request id %d is still outstanding", ErrInvalidAttr, rq.ReqID)
		}
		if !e.pend[i].valid && free < 0 {
			free = i
		}
	}
	if free < 0 {
		return ErrTooManyRequests
	}
	dscp := rq.DSCP
	if rq.NICInitiated {
		dscp = e.dscp
	}
	p, err := e.packet(out, rq.Dst, rq.EV, rq.Port, dscp)
	if err != nil {
		return err
	}
	p.BTH = wire.BTH{Opcode: wire.OpEndpointReq, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: uint32(rq.ReqID)}
	p.ERTH = wire.ERTH{Op: rq.Op, PortStatusMask: rq.PortStatus, TxTimestamp: uint16(now / e.tsU), FType: 1}
	e.pend[free] = epPending{id: rq.ReqID, op: rq.Op, ev: rq.EV, sentAt: now, valid: true}
	return nil
}

// Receive handles an endpoint packet that arrived on local port port. A
// request is answered with an ENDPOINT_RESPONSE that repeats its id and op
// and reflects its timestamp (EP-GEN-5), from the same port (EP-GEN-6); a
// PORT_STATUS_UPDATE also yields EvRemotePortMask, which the caller applies
// to its QPs to that peer with QP.SetPortStatus (EP-PSU-2, EP-PSU-3). A
// response yields EvEPResponse with the RTT from the reflected timestamp
// (EP-PRB-1, EP-PRB-2); one matching no outstanding request is dropped
// (EP-GEN-8).
func (e *Endpoint) Receive(now Time, port int, p *wire.Packet, out *Output) {
	ev := e.codec.EV(p, e.cfg.EVMode)
	ignore := func(r IgnoreReason) {
		out.event(Event{Kind: EvIgnored, Time: now, QPN: wire.EndpointQPN, PSN: p.BTH.PSN, EV: ev, Reason: uint8(r)})
	}
	if p.BTH.DestQP != wire.EndpointQPN || port < 1 || port > MaxPlanes {
		ignore(IgnoreWrongQP)
		return
	}
	switch p.BTH.Opcode {
	case wire.OpEndpointReq:
		if p.ERTH.Op > wire.EPEVProbe {
			ignore(IgnoreUnexpectedOp)
			return
		}
		if p.ERTH.Op == wire.EPPortStatusUpdate {
			out.event(Event{Kind: EvRemotePortMask, Time: now, QPN: wire.EndpointQPN, EV: ev, Plane: uint8(port - 1),
				Value: uint64(p.ERTH.PortStatusMask)})
		}
		src := Peer{MAC: p.Eth.Src, IP: netip.AddrFrom4(p.IP4.Src)}
		if p.IsIPv6 {
			src.IP = netip.AddrFrom16(p.IP6.Src)
		}
		rev := e.cfg.ReverseEV[port-1]
		if rev == 0 {
			rev = ev
		}
		r, err := e.packet(out, src, rev, uint8(port), e.dscp)
		if err != nil {
			ignore(IgnoreMalformed)
			return
		}
		r.BTH = wire.BTH{Opcode: wire.OpEndpointResp, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: p.BTH.PSN & 0xFFFF}
		r.EETH = wire.EETH{Op: p.ERTH.Op, TxTimestamp: p.ERTH.TxTimestamp}
	case wire.OpEndpointResp:
		id := uint16(p.BTH.PSN)
		for i := range e.pend {
			if q := &e.pend[i]; q.valid && q.id == id && q.op == p.EETH.Op {
				for j := range e.ann {
					if a := &e.ann[j]; a.id == id && q.op == wire.EPPortStatusUpdate {
						a.answered = true
					}
				}
				rtt := Time(uint16(now/e.tsU)-p.EETH.TxTimestamp) * e.tsU
				out.event(Event{Kind: EvEPResponse, Time: now, QPN: wire.EndpointQPN, PSN: uint32(id), EV: q.ev,
					Plane: uint8(port - 1), Reason: uint8(q.op), Value: uint64(rtt)})
				*q = epPending{}
				return
			}
		}
		ignore(IgnoreUnknownProbe)
	default:
		ignore(IgnoreUnexpectedOp)
	}
}

// Advance expires requests that waited Timeout (EP-GEN-7) and repeats
// unanswered port status updates (EP-PSU-4).
func (e *Endpoint) Advance(now Time, out *Output) {
	for i := range e.pend {
		if q := &e.pend[i]; q.valid && now-q.sentAt >= e.cfg.Timeout {
			out.event(Event{Kind: EvEPTimeout, Time: now, QPN: wire.EndpointQPN, PSN: uint32(q.id), EV: q.ev, Reason: uint8(q.op)})
			*q = epPending{}
		}
	}
	for i := range e.ann {
		if a := &e.ann[i]; !a.answered && now-a.sentAt >= e.cfg.RepeatInterval {
			_ = e.sendAnnounce(now, a, out) // a full request table: try again next interval
		}
	}
}

// AnnouncePorts is the NIC's own port status update (EP-PSU-1), unless the
// profile's port_status_signal is none (AMB-7): it sends
// the complete port mask (EP-PSU-2) to every peer now and repeats it to
// each, at most once per RepeatInterval, until that peer answers; a later
// call with another mask starts over with the new one (EP-PSU-4). The
// same mask to the same peers leaves answered peers alone.
func (e *Endpoint) AnnouncePorts(now Time, mask uint32, peers []PortPeer, out *Output) error {
	if mask&1 != 0 {
		return fmt.Errorf("%w: port_status_mask %#x: bit 0 is unused (WIRE-ERTH-2)", ErrInvalidAttr, mask)
	}
	if e.cfg.Profile.PortStatus == spec.PortStatusNone {
		e.mask = mask // a profile without port-status signalling announces nothing (AMB-7)
		return nil
	}
	changed := mask != e.mask || len(peers) != len(e.ann)
	for i := 0; !changed && i < len(peers); i++ {
		changed = peers[i] != e.ann[i].to
	}
	if !changed {
		return nil
	}
	for i := range e.ann {
		e.cancel(e.ann[i].id)
	}
	e.mask, e.ann = mask, e.ann[:0]
	var errs []error
	for _, p := range peers {
		e.ann = append(e.ann, announce{to: p})
		if err := e.sendAnnounce(now, &e.ann[len(e.ann)-1], out); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sendAnnounce (re)sends one peer's update with a fresh request id,
// dropping the previous request's wait.
func (e *Endpoint) sendAnnounce(now Time, a *announce, out *Output) error {
	e.cancel(a.id)
	a.sentAt = now
	for range 1 << 16 {
		e.nextID++
		if e.nextID != 0 && !e.outstanding(e.nextID) {
			break
		}
	}
	a.id = e.nextID
	return e.Send(now, EPRequest{ReqID: a.id, Op: wire.EPPortStatusUpdate, Dst: a.to.Peer, EV: a.to.EV, Port: a.to.Port,
		NICInitiated: true, PortStatus: e.mask}, out)
}

func (e *Endpoint) outstanding(id uint16) bool {
	for i := range e.pend {
		if e.pend[i].valid && e.pend[i].id == id {
			return true
		}
	}
	return false
}

func (e *Endpoint) cancel(id uint16) {
	if id == 0 { // never sent (automatic ids start at 1)
		return
	}
	for i := range e.pend {
		if q := &e.pend[i]; q.valid && q.id == id && q.op == wire.EPPortStatusUpdate {
			*q = epPending{}
		}
	}
}

// NextDeadline is when the oldest outstanding request times out, or Never.
func (e *Endpoint) NextDeadline() Time {
	d := Never
	for i := range e.pend {
		if q := &e.pend[i]; q.valid {
			d = min(d, q.sentAt+e.cfg.Timeout)
		}
	}
	for i := range e.ann {
		if a := &e.ann[i]; !a.answered {
			d = min(d, a.sentAt+e.cfg.RepeatInterval)
		}
	}
	return d
}
