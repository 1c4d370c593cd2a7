package statemachine

import "github.com/openmrc/mrc/wire"

// Clone returns an independent copy of the QP, random stream included, for
// a model checker's breadth-first search. The static configuration and EV
// profile are shared (they are immutable); the WR data buffers are shared
// too (the QP never writes them).
func (q *QP) Clone() *QP {
	c := *q
	c.out = nil
	if q.ev.set != nil {
		c.ev = q.ev.clone()
	}
	c.req = q.req.clone()
	c.rsp = q.rsp.clone()
	c.rq = append([]uint64(nil), q.rq...)
	return &c
}

// PSNState is the requester's view of one PSN.
type PSNState uint8

// Requester PSN states.
const (
	PSNNotOutstanding PSNState = iota // acknowledged cumulatively, or not sent yet
	PSNInFlight                       // sent, no answer yet
	PSNSACKed                         // selectively acknowledged
	PSNLost                           // queued for retransmission
)

// CumulativeACK returns the requester's una: the highest PSN known to be
// cumulatively acknowledged (initially SQ_PSN − 1, AMB-26).
func (q *QP) CumulativeACK() uint32 { return wire.PSNAdd(q.req.una, -1) }

// NextPSN returns the next PSN the requester will send for the first time.
func (q *QP) NextPSN() uint32 { return q.req.nxt }

// PSNStateOf returns the requester's state of psn.
func (q *QP) PSNStateOf(psn uint32) PSNState {
	r := &q.req
	if r.ring.fl == nil {
		return PSNNotOutstanding
	}
	d := wire.PSNDiff(psn, r.una)
	if d < 0 || d >= r.outstanding() {
		return PSNNotOutstanding
	}
	switch f := r.ring.fl[psn&r.ring.mask]; {
	case f&txSACKed != 0:
		return PSNSACKed
	case f&txLost != 0:
		return PSNLost
	}
	return PSNInFlight
}

// AvoidedEV returns the EV the retransmission of a queued PSN must not
// take: the EV its NACK reflected or its timeout implicated (EV-ST-13). ok
// is false when psn is not queued for retransmission, or when its stall
// timer has expired and it may take any usable EV (LR-SM-3, AMB-44).
func (q *QP) AvoidedEV(psn uint32) (ev uint32, ok bool) {
	if q.PSNStateOf(psn) != PSNLost {
		return 0, false
	}
	r := &q.req
	a := r.avoidAt(psn & r.ring.mask)
	if a < 0 {
		return 0, false
	}
	return q.ev.set.values[a], true
}

// AppendInFlight appends the PSNs sent and not yet acknowledged (in flight
// or queued for retransmission) to dst.
func (q *QP) AppendInFlight(dst []uint32) []uint32 {
	r := &q.req
	for p := r.una; p != r.nxt; p = wire.PSNAdd(p, 1) {
		if r.ring.fl[p&r.ring.mask]&(txInFlight|txLost) != 0 {
			dst = append(dst, p)
		}
	}
	return dst
}

// Retries returns the retry counter (retry events since the cumulative ACK
// last advanced).
func (q *QP) Retries() int { return q.req.retries }

// Cwnd returns the congestion window in bytes (0 without congestion control).
func (q *QP) Cwnd() int64 {
	if !q.cc.on {
		return 0
	}
	return q.cc.cwnd
}

// InflightBytes returns the bytes the requester counts in flight.
func (q *QP) InflightBytes() int64 { return q.req.inflight }

// WIMMInFlight returns the WriteIMMs the requester has started and not
// completed.
func (q *QP) WIMMInFlight() int { return q.req.wimm }

// ResponderCumulativeACK returns the responder's cack: the highest PSN such
// that it and every earlier PSN have been received (initially RQ_PSN − 1).
func (q *QP) ResponderCumulativeACK() uint32 { return wire.PSNAdd(q.rsp.epsn, -1) }

// ResponderHas reports whether the responder counts psn as received: at or
// before cack (within 2^23), or marked in its tracking bitmap (RSP-RCV-6).
func (q *QP) ResponderHas(psn uint32) bool {
	r := &q.rsp
	if r.ring.rcv == nil {
		return false
	}
	d := (psn - r.epsn + 1) & wire.PSNMask
	return d == 0 || d >= 1<<23 || (d <= r.maxWin && r.ring.get(psn))
}

// WIMMHeld returns the RQMSNs of the WriteIMMs the responder holds, in
// delivery order, appended to dst.
func (q *QP) WIMMHeld(dst []uint16) []uint16 {
	r := &q.rsp
	for k := 0; k < r.n; k++ {
		dst = append(dst, r.slot(k).rqmsn)
	}
	return dst
}

// EVInfo describes one EV of the QP's table.
type EVInfo struct {
	Value  uint32
	Plane  uint8
	State  EVState
	Active bool
}

// EVs appends the QP's EV table to dst, in profile order.
func (q *QP) EVs(dst []EVInfo) []EVInfo {
	t := &q.ev
	if t.set == nil {
		return dst
	}
	for i, v := range t.set.values {
		dst = append(dst, EVInfo{Value: v, Plane: t.set.plane[i], State: t.state(i), Active: t.active(i)})
	}
	return dst
}

// EVStateOf returns the state of EV value ev.
func (q *QP) EVStateOf(ev uint32) (EVState, bool) {
	if q.ev.set == nil {
		return EVUnknown, false
	}
	i, ok := q.ev.set.lookup(ev)
	if !ok {
		return EVUnknown, false
	}
	return q.ev.state(i), true
}

// AbstractState is the protocol-relevant state of a QP, for model checkers
// and trace validation. It leaves out buffers, timers' exact values and
// congestion-control internals.
type AbstractState struct {
	State      QPState
	Cause      ErrorCause
	UNA        uint32     // requester's una (inclusive)
	NXT        uint32     // next PSN to send for the first time
	PSNs       []PSNState // requester state of each PSN after UNA, up to NXT
	Retries    int
	SendQueue  int
	WIMM       int
	CACK       uint32   // responder's cack (inclusive)
	Received   []uint32 // PSNs received beyond CACK
	ExpRQMSN   uint16
	WIMMHeld   []uint16
	EVStates   []EVState
	EVActive   []bool
	PlanesDown uint32
}

// AbstractState returns the QP's abstract state.
func (q *QP) AbstractState() AbstractState {
	a := AbstractState{State: q.state, Cause: q.cause, UNA: q.CumulativeACK(), NXT: q.req.nxt, Retries: q.req.retries,
		SendQueue: q.req.sqLen, WIMM: q.req.wimm, CACK: q.ResponderCumulativeACK(), ExpRQMSN: q.rsp.expRQMSN,
		PlanesDown: q.ev.planeDown}
	for p := q.req.una; p != q.req.nxt; p = wire.PSNAdd(p, 1) {
		a.PSNs = append(a.PSNs, q.PSNStateOf(p))
	}
	r := &q.rsp
	for k := uint32(0); k < r.maxWin && r.ring.rcv != nil; k++ {
		if p := wire.PSNAdd(r.epsn, int(k)); r.ring.get(p) {
			a.Received = append(a.Received, p)
		}
	}
	a.WIMMHeld = q.WIMMHeld(nil)
	for i := range q.ev.e {
		a.EVStates = append(a.EVStates, q.ev.state(i))
		a.EVActive = append(a.EVActive, q.ev.active(i))
	}
	return a
}

// StateHash is a 64-bit FNV-1a hash of the abstract state, computed
// without allocating, for a model checker's visited set.
func (q *QP) StateHash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		for i := 0; i < 8; i++ {
			h ^= v & 0xFF
			h *= 1099511628211
			v >>= 8
		}
	}
	r := &q.req
	mix(uint64(q.state) | uint64(q.cause)<<8 | uint64(r.una)<<16 | uint64(r.nxt)<<40)
	mix(uint64(r.retries) | uint64(r.sqLen)<<16 | uint64(r.wimm)<<32 | uint64(q.ev.planeDown)<<48)
	for p := r.una; p != r.nxt; p = wire.PSNAdd(p, 1) {
		mix(uint64(q.PSNStateOf(p)))
	}
	s := &q.rsp
	mix(uint64(s.epsn) | uint64(s.expRQMSN)<<24)
	for _, w := range s.ring.rcv {
		mix(w)
	}
	for k := 0; k < s.n; k++ {
		mix(uint64(s.slot(k).rqmsn) | uint64(s.slot(k).last)<<16)
	}
	for _, e := range q.ev.e {
		mix(uint64(e & (evStateMask | evActive)))
	}
	return h
}
