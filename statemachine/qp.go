package statemachine

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
)

// QPState is the verbs QP state (QP-ST-1).
type QPState uint8

// QP states.
const (
	StateReset QPState = iota
	StateInit
	StateRTR
	StateRTS
	StateError
	// StateSQD drains the send queue: messages already started finish,
	// no new one starts, and the responder side works as in RTS
	// (QP-ST-12, AMB-31).
	StateSQD
)

func (s QPState) String() string {
	switch s {
	case StateReset:
		return "RESET"
	case StateInit:
		return "INIT"
	case StateRTR:
		return "RTR"
	case StateRTS:
		return "RTS"
	case StateError:
		return "ERROR"
	case StateSQD:
		return "SQD"
	}
	return fmt.Sprintf("QPState(%d)", uint8(s))
}

// ErrorCause says why a QP entered ERROR.
type ErrorCause uint8

// Causes of the ERROR state.
const (
	CauseNoError       ErrorCause = iota
	CauseModify                   // the application moved the QP to ERROR
	CauseRetryExceeded            // the shared retry budget ran out
	CauseRemoteUnexp              // the peer answered NACK UNEXP_EVENT
	CauseRemoteInvalid            // the peer answered AETH NAK Invalid Request
	CauseRemoteAccess             // the peer answered AETH NAK remote access error
	CauseRemoteOp                 // the peer answered AETH NAK remote operational error
	CauseWIMMLimit                // the peer exceeded max_wimm_dest (WIMM-RSP-4)
	CauseNoRecvWR                 // a WriteIMM completed with no receive WR posted (RSP-NACK-5)
	CauseAccess                   // the peer wrote outside the registered memory (RSP-RCV-2)
)

// QP is one MRC queue pair: a requester and a responder half sharing an EV
// table, driven only through its input methods. It holds no goroutines,
// clocks or sockets; every method appends what it produced to the caller's
// Output. A QP is not safe for concurrent use.
type QP struct {
	st    *static
	state QPState
	attr  Attr
	mask  AttrMask // attributes set so far
	cause ErrorCause
	ccIdx int
	// commEst: the QP accepted a request packet in RTR and raised
	// IBV_EVENT_COMM_EST (CTL-AEV-4); RESET clears it.
	commEst bool
	// drained: the QP, in SQD, has drained its send queue and raised
	// IBV_EVENT_SQ_DRAINED if asked (CTL-AEV-6); entering SQD clears it.
	drained bool
	rng     rng
	ev      evTable
	req     requester
	rsp     responder
	cc      nscc
	// The receive queue: WR IDs of posted receive WRs (WIMM-RSP-3).
	rq     []uint64
	rqHead int
	rqLen  int

	// The step context: set by each input method, cleared on return.
	now Time
	out *Output
}

// node is what the QPs of one Node share: the normalized configuration
// and the compiled profiles. It is immutable.
type node struct {
	cfg   Config
	rules rules // the specification's, but for the seeded faults (Config.Test.Faults)
	// codec places the EV in the headers as the profile's stev_halves
	// says (AMB-23).
	codec    *wire.Codec
	evSets   []*evSet
	dscp     [5]uint8
	tsUnit   Time
	rcvdUnit uint64
}

// static is what a QP derives from its configuration once; it is
// immutable and shared by clones.
type static struct {
	*node
	qp             QPConfig
	v6             bool
	src, dst       [16]byte
	srcMAC, dstMAC [6]byte
	hop            uint8
	pkey           uint16
}

// Node holds what the QPs of one NIC share: the wire profile, the
// controller's EV and CC profiles, compiled once, the device limits and
// the policies. QPs made by one Node share that state, so each costs only
// its own protocol state.
type Node struct{ nd *node }

// NewNode validates cfg and compiles its profiles.
func NewNode(cfg Config) (*Node, error) {
	c, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	codec, err := wire.NewCodec(*c.Profile)
	if err != nil {
		return nil, &ConfigError{Field: "Profile", Reason: err.Error()}
	}
	nd := &node{cfg: c, rules: rules{broken: BreakRules(c.Test.Faults, specRules)}, codec: codec}
	for i := range c.EVProfiles {
		s, _ := buildEVSet(&c.EVProfiles[i])
		nd.evSets = append(nd.evSets, s)
	}
	d := c.Profile.DSCP
	nd.dscp = [5]uint8{ClassTrimmable: d.Trimmable, ClassNoTrim: d.NoTrim, ClassTrimmableRetx: d.TrimmableRetx,
		ClassControl: d.Control, ClassEndpoint: d.Control}
	nd.tsUnit, nd.rcvdUnit = Time(c.Profile.TimestampUnitNs), uint64(c.Profile.RcvdBytesUnit)
	return &Node{nd: nd}, nil
}

// NewQP creates a QP in RESET with its own QP number, random seed, address
// vector and queue depths, sharing the Node's configuration otherwise.
func (n *Node) NewQP(qc QPConfig) (*QP, error) {
	qc, err := qc.normalized()
	if err != nil {
		return nil, err
	}
	addr := &qc.Addr
	if err := n.nd.resolveSource(addr); err != nil {
		return nil, err
	}
	if !addr.SrcIP.IsValid() || !addr.DstIP.IsValid() {
		return nil, cfgErr("Addr", "source and destination IP addresses are required")
	}
	if addr.SrcIP.Is4() != addr.DstIP.Is4() {
		return nil, cfgErr("Addr", "source %v and destination %v are not the same IP version", addr.SrcIP, addr.DstIP)
	}
	st := &static{node: n.nd, qp: qc, v6: addr.SrcIP.Is6(), srcMAC: addr.SrcMAC, dstMAC: addr.DstMAC,
		hop: addr.HopLimit, pkey: addr.PKey}
	if !st.v6 || addr.EVMode == wire.EVModeUDP {
		for _, s := range n.nd.evSets {
			for _, v := range s.values {
				if v > 0xFFFF {
					return nil, cfgErr(fmt.Sprintf("EVProfiles[id=%d]", s.id),
						"EV %#x has more than 16 bits, which IPv4 and UDP mode cannot carry (WIRE-EV-3)", v)
				}
			}
		}
	}
	if err := checkSRv6(n.nd.evSets, st.v6, addr.EVMode); err != nil {
		return nil, err
	}
	if st.v6 {
		st.src, st.dst = addr.SrcIP.As16(), addr.DstIP.As16()
	} else {
		s4, d4 := addr.SrcIP.As4(), addr.DstIP.As4()
		copy(st.src[:], s4[:])
		copy(st.dst[:], d4[:])
	}
	if st.hop == 0 {
		st.hop = 64
	}
	if st.pkey == 0 {
		st.pkey = 0xFFFF
	}
	return &QP{st: st, rng: newRNG(qc.Seed)}, nil
}

// checkSRv6 refuses an SRv6 setting the QP would not act on: SRv6 paths
// only wrap an IPv6 QP's packets (WIRE-ENC-2), and the SRv6 EV mode
// routes by those paths (WIRE-EV-4), so it needs a profile that has them.
func checkSRv6(sets []*evSet, v6 bool, mode wire.EVMode) error {
	paths := false
	for _, s := range sets {
		if s.srv6 == nil {
			continue
		}
		if !v6 {
			return cfgErr(fmt.Sprintf("EVProfiles[id=%d].SRv6", s.id), "SRv6 paths wrap only IPv6 packets, and this QP is IPv4 (WIRE-ENC-2)")
		}
		paths = true
	}
	if mode == wire.EVModeSRv6 && !paths {
		return cfgErr("Addr.EVMode", "SRV6 routes by the SRv6 paths of an EV profile, and no profile has any (WIRE-EV-4)")
	}
	return nil
}

// New creates a QP in RESET from qc, on a Node of its own made from cfg.
func New(cfg Config, qc QPConfig) (*QP, error) {
	n, err := NewNode(cfg)
	if err != nil {
		return nil, err
	}
	return n.NewQP(qc)
}

// QPN returns the local QP number.
func (q *QP) QPN() uint32 { return q.st.qp.QPN }

// begin and end bracket every input: they install the step context.
func (q *QP) begin(now Time, out *Output) {
	q.now, q.out = now, out
}

func (q *QP) end() { q.out = nil }

func (q *QP) emit(e Event) {
	e.Time, e.QPN = q.now, q.st.qp.QPN
	q.out.event(e)
}

func (q *QP) trace() bool { return q.out.TracePackets }

// Post posts a send work request (mrc_post_send). Only RDMA WRITE and
// RDMA WRITE WITH IMM are accepted (REQ-OP-1), and only in RTS (REQ-OP-2,
// QP-ST-9); in ERROR the WR completes at once with a flush error
// (CMP-ERR-1).
func (q *QP) Post(now Time, wr WorkRequest, out *Output) error {
	q.begin(now, out)
	defer q.end()
	if wr.Opcode != OpWrite && wr.Opcode != OpWriteImm {
		return &OpError{WRID: wr.WRID, Opcode: wr.Opcode, Err: ErrUnsupportedOpcode}
	}
	if len(wr.Data) > MaxMessageLen {
		return &OpError{WRID: wr.WRID, Opcode: wr.Opcode, Err: ErrMessageTooLong}
	}
	switch q.state {
	case StateRTS, StateSQD:
	case StateError:
		q.complete(wr.WRID, wr.Opcode, StatusFlushError, uint32(len(wr.Data)))
		return nil
	default:
		return &OpError{WRID: wr.WRID, Opcode: wr.Opcode, Err: fmt.Errorf("%w: %s", ErrQPState, q.state)}
	}
	if err := q.req.post(wr); err != nil {
		return &OpError{WRID: wr.WRID, Opcode: wr.Opcode, Err: err}
	}
	q.pump()
	return nil
}

// PostRecv posts a receive work request (mrc_post_recv); each WriteIMM
// consumes one (WIMM-RSP-3). Receive WRs may be posted from INIT on
// (QP-ST-9); in ERROR the WR completes at once with a flush error.
func (q *QP) PostRecv(now Time, wrid uint64, out *Output) error {
	q.begin(now, out)
	defer q.end()
	switch q.state {
	case StateInit, StateRTR, StateRTS, StateSQD:
	case StateError:
		q.out.Completions = append(q.out.Completions, Completion{QPN: q.st.qp.QPN, WRID: wrid, Status: StatusFlushError,
			Opcode: OpRecvWriteImm, Recv: true})
		return nil
	default:
		return fmt.Errorf("%w: post_recv in %s", ErrQPState, q.state)
	}
	if q.rqLen == len(q.rq) {
		return ErrRecvQueueFull
	}
	q.rq[(q.rqHead+q.rqLen)%len(q.rq)] = wrid
	q.rqLen++
	return nil
}

// Advance tells the QP that time is now: expired retransmission timers,
// probe rounds and delayed SACKs run, and any sending the window allows
// happens.
func (q *QP) Advance(now Time, out *Output) {
	q.begin(now, out)
	defer q.end()
	if q.responding() {
		q.ackTimer()
	}
	if q.sending() {
		q.rtoTimer()
	}
	if q.sending() {
		q.holdTimer()
		q.probeTimer()
		q.reverseTimer()
		q.pump()
		q.stallTimer()
	}
}

// NextDeadline is the earliest time at which Advance has work to do, or
// Never.
func (q *QP) NextDeadline() Time {
	d := Never
	if q.responding() {
		d = q.rsp.ackDue
	}
	if q.sending() {
		d = min(d, q.req.deadline(), q.ev.probeDeadline())
	}
	return d
}

// sending reports whether the requester side works: in RTS, and in SQD
// for what was started before (QP-ST-9, QP-ST-12).
func (q *QP) sending() bool { return q.state == StateRTS || q.state == StateSQD }

// responding reports whether the responder side works: RTR, RTS, SQD.
func (q *QP) responding() bool { return q.state == StateRTR || q.sending() }

// checkDrained raises IBV_EVENT_SQ_DRAINED, if the move to SQD asked for
// it, once the QP has drained (QP-ST-12, CTL-AEV-6); atMove is true at the
// move to SQD.
func (q *QP) checkDrained(atMove bool) {
	r := &q.req
	if q.state != StateSQD || q.drained || !q.st.rules.sqDrained(r.sendOff != 0, r.outstanding(), atMove) {
		return
	}
	q.drained = true
	if q.attr.SQDNotify {
		q.emit(Event{Kind: EvSQDrained})
	}
}

func (q *QP) ignore(r IgnoreReason, psn, ev uint32) {
	q.emit(Event{Kind: EvIgnored, Reason: uint8(r), PSN: psn, EV: ev})
}

func (q *QP) setState(s QPState) {
	if s != q.state {
		q.emit(Event{Kind: EvQPState, From: uint8(q.state), To: uint8(s)})
		q.state = s
	}
}

// enterError moves the QP to ERROR (QP-ST-10) and flushes outstanding
// work: the send WR at the head of the queue completes with st, every other
// send and receive WR with a flush error, in post order (CMP-ERR-1,
// CMP-ERR-2). The QP then sends nothing and drops what arrives (QP-ST-11).
func (q *QP) enterError(c ErrorCause, st Status) {
	if q.state == StateError {
		return
	}
	q.cause = c
	q.setState(StateError)
	r := &q.req
	var fl uint8
	if r.sqLen == 0 {
		fl = FlagNoCompletion
	}
	q.emit(Event{Kind: EvQPError, Reason: uint8(c), Value: uint64(st), Flags: fl})
	for r.sqLen > 0 {
		m := &r.sq[r.sqHead]
		q.complete(m.wrid, m.op, st, uint32(len(m.data)))
		st = StatusFlushError
		r.pop()
	}
	for ; q.rqLen > 0; q.rqLen-- {
		q.out.Completions = append(q.out.Completions, Completion{QPN: q.st.qp.QPN, WRID: q.rq[q.rqHead],
			Status: StatusFlushError, Opcode: OpRecvWriteImm, Recv: true})
		q.rqHead = (q.rqHead + 1) % len(q.rq)
	}
	q.req.clearFlight()
	q.rsp.clearPending()
	q.ev.probeAt = Never
}

func (q *QP) complete(wrid uint64, op Opcode, st Status, n uint32) {
	q.out.Completions = append(q.out.Completions, Completion{QPN: q.st.qp.QPN, WRID: wrid, Status: st, Opcode: op, ByteLen: n})
	q.emit(Event{Kind: EvCompleted, Value: wrid, Reason: uint8(st)})
}

// fillHeaders writes the Ethernet, IP and UDP headers of an outgoing packet
// with its class's DSCP (WIRE-DSCP-1) and its EV (WIRE-EV-1, WIRE-UDP-2).
// Write packets and probes are ECN-capable, ECT(0), so that the fabric can
// mark them; control packets are Not-ECT (WIRE-DSCP-3).
func (q *QP) fillHeaders(o *Outgoing, class DSCPClass, ev int, ect bool) {
	st := q.st
	p := &o.Pkt
	p.Eth.Src, p.Eth.Dst = st.srcMAC, st.dstMAC
	tos := st.dscp[class] << 2
	if ect {
		tos |= 2
	}
	if st.v6 {
		p.IsIPv6 = true
		p.IP6.TrafficClass, p.IP6.HopLimit, p.IP6.Src, p.IP6.Dst = tos, st.hop, st.src, st.dst
	} else {
		p.IP4.TOS, p.IP4.TTL, p.IP4.FlagsFrag = tos, st.hop, 0x4000
		copy(p.IP4.Src[:], st.src[:4])
		copy(p.IP4.Dst[:], st.dst[:4])
	}
	v := q.ev.set.values[ev]
	st.codec.SetEV(p, v, st.qp.Addr.EVMode)
	o.EV, o.Plane, o.Class = v, q.ev.set.plane[ev], class
	p.SRv6, p.HasSRH = false, false
	if st.v6 && q.ev.set.srv6 != nil {
		q.ev.set.srv6[ev].encap(p, tos, st)
	}
}

// encap wraps p in the outer IPv6 header (and SRH) of an SRv6 EV
// (CTL-EVX-6, WIRE-ENC-2): from the QP's address to the path's uSID
// address, the SRH holding the one segment with segments_left 1 (AMB-73).
func (s *SRv6Path) encap(p *wire.Packet, tos uint8, st *static) {
	p.SRv6 = true
	p.Outer = wire.IPv6{TrafficClass: tos, FlowLabel: p.IP6.FlowLabel, HopLimit: st.hop, Src: st.src, Dst: s.Addr}
	if s.HasSegment {
		p.HasSRH = true
		p.SRH = wire.SRH{SegmentsLeft: 1}
		p.SRH.Segments[0] = s.Segment
	}
}

// tsNow is the 16-bit timestamp of now in profile units (WIRE-TSETH-2).
func (q *QP) tsNow() uint16 { return uint16(q.now / q.st.tsUnit) }

// State returns the QP state.
func (q *QP) State() QPState { return q.state }

// ErrorCause returns why the QP entered ERROR (CauseNoError otherwise).
func (q *QP) ErrorCause() ErrorCause { return q.cause }

// Attr returns the attributes set so far and their mask.
func (q *QP) Attr() (Attr, AttrMask) { return q.attr, q.mask }
