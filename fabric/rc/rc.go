package rc

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Time is synthetic time in nanoseconds.
type Time = sm.Time

// Config configures one RC QP (requester and responder halves).
type Config struct {
	QPN, DestQPN uint32
	// EV is the QP's fixed flow entropy (UDP source port) and Plane the
	// NIC port (0-based) it is bound to.
	EV    uint32
	Plane uint8
	// SrcIP and DstIP are the address vector; both IPv4 or both IPv6.
	SrcIP, DstIP netip.Addr
	// MTU is the path MTU; 0 means 4096.
	MTU int
	// Window is the largest number of PSNs outstanding; 0 means 256.
	Window int
	// Timeout is the local ACK timeout; 0 means 65.536 µs (1.024 µs × 2^6,
	// the MRC scenarios' base timeout, so the comparison is like for like).
	Timeout Time
	// RetryCnt is retry_cnt; 0 means 7, the IBTA maximum.
	RetryCnt int
	// NoECN disables the window's reaction to CE echoes.
	NoECN bool
	// MaxSendWR and MaxRecvWR are the queue depths; 0 means 64 each.
	MaxSendWR, MaxRecvWR int
	// SQPSN and RQPSN are the first PSNs sent and expected.
	SQPSN, RQPSN uint32
	// Profile gives the DSCP values; nil means the default (spec.OrDefault).
	Profile *spec.Profile
}

// Errors; test with errors.Is.
var (
	ErrSendQueueFull = errors.New("rc: send queue full")
	ErrRecvQueueFull = errors.New("rc: receive queue full")
	ErrQPState       = errors.New("rc: QP in ERROR")
	ErrOpcode        = errors.New("rc: only RDMA WRITE and RDMA WRITE WITH IMM are modelled")
	ErrConfig        = errors.New("rc: bad configuration")
)

type sendWR struct {
	wrid     uint64
	va       uint64
	data     []byte
	rkey     uint32
	imm      uint32
	op       sm.Opcode
	firstPSN uint32
	npkts    uint32
}

// QP is one RC queue pair. It is not safe for concurrent use.
type QP struct {
	cfg      Config
	dscpData uint8
	dscpCtl  uint8
	failed   bool
	// Requester.
	sq            []sendWR
	sqHead, sqLen int
	una, nxt, asn uint32 // oldest unacknowledged, next to send, next to assign
	cwnd          int    // packets
	grow          int    // packets acknowledged toward the next +1
	cutEnd        uint32 // no window cut until una passes it
	timerAt       Time
	retries       int
	sentHigh      uint32 // one past the highest PSN ever sent (for go-back-N accounting)
	Retransmitted uint64 // packets sent again by go-back-N
	GoBackNs      uint64 // go-back-N events (NAKs and timeouts)
	// Responder.
	epsn    uint32
	nakSent bool
	ce      bool // a CE-marked packet since the last ACK
	msn     uint32
	rq      []uint64
	rqHead  int
	rqLen   int
}

// New returns a QP ready to send (the equivalent of RTS).
func New(c Config) (*QP, error) {
	if c.MTU == 0 {
		c.MTU = 4096
	}
	if c.Window == 0 {
		c.Window = 256
	}
	if c.Timeout == 0 {
		c.Timeout = sm.Timeout(6)
	}
	if c.RetryCnt == 0 {
		c.RetryCnt = 7
	}
	if c.MaxSendWR == 0 {
		c.MaxSendWR = 64
	}
	if c.MaxRecvWR == 0 {
		c.MaxRecvWR = 64
	}
	c.Profile = spec.OrDefault(c.Profile)
	switch {
	case c.MTU < 256 || c.MTU > 4096:
		return nil, fmt.Errorf("%w: MTU %d", ErrConfig, c.MTU)
	case c.Window < 1 || c.Window >= 1<<22:
		return nil, fmt.Errorf("%w: window %d", ErrConfig, c.Window)
	case !c.SrcIP.IsValid() || !c.DstIP.IsValid() || c.SrcIP.Is4() != c.DstIP.Is4():
		return nil, fmt.Errorf("%w: address vector %v → %v", ErrConfig, c.SrcIP, c.DstIP)
	case c.Timeout <= 0 || c.RetryCnt < 0:
		return nil, fmt.Errorf("%w: timeout %d retry %d", ErrConfig, c.Timeout, c.RetryCnt)
	}
	q := &QP{cfg: c, dscpData: c.Profile.DSCP.NoTrim, dscpCtl: c.Profile.DSCP.Control,
		sq: make([]sendWR, c.MaxSendWR), rq: make([]uint64, c.MaxRecvWR), cwnd: c.Window, timerAt: sm.Never}
	q.una, q.nxt, q.asn, q.sentHigh, q.cutEnd = c.SQPSN, c.SQPSN, c.SQPSN, c.SQPSN, c.SQPSN
	q.epsn = c.RQPSN
	return q, nil
}

// Failed reports whether the QP is in ERROR.
func (q *QP) Failed() bool { return q.failed }

// EV returns the QP's flow entropy and Plane its NIC port (0-based).
func (q *QP) EV() uint32 { return q.cfg.EV }

// Plane returns the NIC port (0-based) the QP is bound to.
func (q *QP) Plane() uint8 { return q.cfg.Plane }

// Window returns the current window in packets.
func (q *QP) Window() int { return q.cwnd }

// Outstanding returns the PSNs sent and not acknowledged.
func (q *QP) Outstanding() int { return int(wire.PSNDiff(q.nxt, q.una)) }

// Post queues a WRITE or WRITE WITH IMM.
func (q *QP) Post(now Time, wr sm.WorkRequest, out *sm.Output) error {
	if wr.Opcode != sm.OpWrite && wr.Opcode != sm.OpWriteImm {
		return ErrOpcode
	}
	if q.failed {
		out.Completions = append(out.Completions, sm.Completion{QPN: q.cfg.QPN, WRID: wr.WRID, Status: sm.StatusFlushError,
			Opcode: wr.Opcode, ByteLen: uint32(len(wr.Data))})
		return nil
	}
	if q.sqLen == len(q.sq) {
		return ErrSendQueueFull
	}
	n := uint32(max(1, (len(wr.Data)+q.cfg.MTU-1)/q.cfg.MTU))
	q.sq[(q.sqHead+q.sqLen)%len(q.sq)] = sendWR{wrid: wr.WRID, va: wr.RemoteVA, data: wr.Data, rkey: wr.RKey,
		imm: wr.Imm, op: wr.Opcode, firstPSN: q.asn, npkts: n}
	q.sqLen++
	q.asn = wire.PSNAdd(q.asn, int(n))
	q.pump(now, out)
	return nil
}

// PostRecv posts a receive WR, consumed by an incoming WRITE WITH IMM.
func (q *QP) PostRecv(now Time, wrid uint64, out *sm.Output) error {
	if q.failed {
		out.Completions = append(out.Completions, sm.Completion{QPN: q.cfg.QPN, WRID: wrid, Status: sm.StatusFlushError,
			Opcode: sm.OpRecvWriteImm, Recv: true})
		return nil
	}
	if q.rqLen == len(q.rq) {
		return ErrRecvQueueFull
	}
	q.rq[(q.rqHead+q.rqLen)%len(q.rq)] = wrid
	q.rqLen++
	return nil
}

func (q *QP) at(i int) *sendWR { return &q.sq[(q.sqHead+i)%len(q.sq)] }

// find returns the send-queue position of the WR holding psn.
func (q *QP) find(psn uint32) int {
	lo, hi := 0, q.sqLen-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if wire.PSNDiff(psn, q.at(mid).firstPSN) >= 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// pump sends new (or, after a go-back-N, resent) PSNs while the window
// allows.
func (q *QP) pump(now Time, out *sm.Output) {
	for !q.failed && q.nxt != q.asn && int(wire.PSNDiff(q.nxt, q.una)) < q.cwnd {
		q.send(now, q.nxt, out)
		if wire.PSNLess(q.nxt, q.sentHigh) {
			q.Retransmitted++
		} else {
			q.sentHigh = wire.PSNAdd(q.nxt, 1)
		}
		q.nxt = wire.PSNAdd(q.nxt, 1)
		if q.timerAt == sm.Never {
			q.timerAt = now + q.cfg.Timeout
		}
	}
}

func (q *QP) header(o *sm.Outgoing, dscp uint8, ect bool) {
	p := &o.Pkt
	t := dscp << 2
	if ect {
		t |= 2
	}
	if q.cfg.SrcIP.Is4() {
		p.IP4.TOS, p.IP4.TTL, p.IP4.FlagsFrag = t, 64, 0x4000
		p.IP4.Src, p.IP4.Dst = q.cfg.SrcIP.As4(), q.cfg.DstIP.As4()
	} else {
		p.IsIPv6 = true
		p.IP6.TrafficClass, p.IP6.HopLimit = t, 64
		p.IP6.Src, p.IP6.Dst = q.cfg.SrcIP.As16(), q.cfg.DstIP.As16()
	}
	p.SetEV(q.cfg.EV, wire.EVModeUDP)
	o.EV, o.Plane = q.cfg.EV, q.cfg.Plane
}

func (q *QP) send(now Time, psn uint32, out *sm.Output) {
	m := q.at(q.find(psn))
	k := uint32(wire.PSNDiff(psn, m.firstPSN))
	out.Packets = append(out.Packets, sm.Outgoing{Class: sm.ClassNoTrim})
	o := &out.Packets[len(out.Packets)-1]
	q.header(o, q.dscpData, true)
	first, last := k == 0, k == m.npkts-1
	op := wire.OpWriteMiddle
	switch {
	case first && last:
		op = wire.OpWriteOnly
	case first:
		op = wire.OpWriteFirst
	case last:
		op = wire.OpWriteLast
	}
	p := &o.Pkt
	if last && m.op == sm.OpWriteImm {
		op++
		p.ImmDt = m.imm
	}
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: q.cfg.DestQPN, PSN: psn, AckReq: last,
		Retransmit: wire.PSNLess(psn, q.sentHigh)}
	off := int(k) * q.cfg.MTU
	end := min(len(m.data), off+q.cfg.MTU)
	p.RETH = wire.RETH{VA: m.va + uint64(off), RKey: m.rkey, DMALength: uint32(len(m.data))}
	p.Payload = m.data[off:end]
}

// Receive handles one packet: data as responder, AETH as requester.
func (q *QP) Receive(now Time, port int, p *wire.Packet, out *sm.Output) {
	if q.failed || p.BTH.DestQP != q.cfg.QPN {
		return
	}
	switch op := p.BTH.Opcode; {
	case op.IsWrite():
		q.onData(p, out)
	case op == wire.OpAcknowledge:
		q.onAck(now, p, out)
	}
}

func (q *QP) onData(p *wire.Packet, out *sm.Output) {
	t := p.ECN()
	if d := p.DSCP(); d == q.cfg.Profile.DSCP.Trimmed || d == q.cfg.Profile.DSCP.TrimmedLastHop {
		return // RC knows nothing of trimming: a payload-less write is lost
	}
	if t == 3 {
		q.ce = true
	}
	psn := p.BTH.PSN
	switch d := wire.PSNDiff(psn, q.epsn); {
	case d < 0: // duplicate: acknowledge again, place nothing
		q.ack(wire.PSNAdd(q.epsn, -1), false, out)
	case d > 0: // a gap: one sequence-error NAK per gap, discard
		if !q.nakSent {
			q.nakSent = true
			q.ack(q.epsn, true, out)
		}
	default:
		q.nakSent = false
		out.Placements = append(out.Placements, sm.Placement{VA: p.RETH.VA, RKey: p.RETH.RKey, Data: p.Payload, PSN: psn})
		q.epsn = wire.PSNAdd(q.epsn, 1)
		if p.BTH.Opcode.IsLast() {
			q.msn++
		}
		if p.BTH.Opcode.HasImm() {
			if q.rqLen == 0 {
				q.fail(sm.StatusFlushError, out) // no receive WR: IBTA would answer RNR; MRC has none (WIMM-RSP-3)
				return
			}
			wrid := q.rq[q.rqHead]
			q.rqHead = (q.rqHead + 1) % len(q.rq)
			q.rqLen--
			out.Completions = append(out.Completions, sm.Completion{QPN: q.cfg.QPN, WRID: wrid, Status: sm.StatusSuccess,
				Opcode: sm.OpRecvWriteImm, Recv: true, ByteLen: p.RETH.DMALength, Imm: p.ImmDt})
		}
		q.ack(psn, false, out)
	}
}

// ack sends an ACK for psn (cumulative) or a sequence-error NAK naming
// the expected PSN.
func (q *QP) ack(psn uint32, nak bool, out *sm.Output) {
	out.Packets = append(out.Packets, sm.Outgoing{Class: sm.ClassControl})
	o := &out.Packets[len(out.Packets)-1]
	q.header(o, q.dscpCtl, false)
	syn := uint8(wire.AETHTypeACK<<5 | wire.AETHNoCredit)
	if nak {
		syn = wire.AETHTypeNAK << 5 // NAK code 0: PSN sequence error
	}
	o.Pkt.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: q.cfg.DestQPN, PSN: psn, SE: q.ce}
	o.Pkt.AETH = wire.AETH{Syndrome: syn, MSN: q.msn & wire.PSNMask}
	q.ce = false
}

func (q *QP) onAck(now Time, p *wire.Packet, out *sm.Output) {
	a := &p.AETH
	psn := p.BTH.PSN
	if p.BTH.SE && !q.cfg.NoECN && !wire.PSNLess(q.una, q.cutEnd) {
		q.cwnd = max(1, q.cwnd/2) // once per window of data (DCQCN stand-in)
		q.cutEnd, q.grow = q.nxt, 0
	}
	switch a.Type() {
	case wire.AETHTypeACK:
		q.advance(now, wire.PSNAdd(psn, 1), out)
	case wire.AETHTypeNAK:
		if a.Value() != 0 {
			q.fail(sm.StatusRemoteInvalidReq, out)
			return
		}
		// Everything before the expected PSN arrived; go back to it.
		q.advance(now, psn, out)
		if wire.PSNLess(psn, q.nxt) && !wire.PSNLess(psn, q.una) {
			q.goBackN(now, out)
		}
	}
	q.pump(now, out)
}

// advance moves una to cack (exclusive), completing WRs in order.
func (q *QP) advance(now Time, cack uint32, out *sm.Output) {
	d := wire.PSNDiff(cack, q.una)
	if d <= 0 || d > wire.PSNDiff(q.sentHigh, q.una) {
		return
	}
	if wire.PSNLess(q.nxt, cack) {
		q.nxt = cack // an ACK overtook a go-back-N: skip what is acknowledged
	}
	q.una = cack
	q.retries = 0
	q.timerAt = sm.Never
	if q.una != q.nxt {
		q.timerAt = now + q.cfg.Timeout
	}
	if q.grow += int(d); q.grow >= q.cwnd {
		q.grow = 0
		q.cwnd = min(q.cwnd+1, q.cfg.Window)
	}
	for q.sqLen > 0 {
		m := q.at(0)
		if !wire.PSNLess(wire.PSNAdd(m.firstPSN, int(m.npkts)-1), q.una) {
			break
		}
		out.Completions = append(out.Completions, sm.Completion{QPN: q.cfg.QPN, WRID: m.wrid, Status: sm.StatusSuccess,
			Opcode: m.op, ByteLen: uint32(len(m.data))})
		q.sq[q.sqHead] = sendWR{}
		q.sqHead = (q.sqHead + 1) % len(q.sq)
		q.sqLen--
	}
}

func (q *QP) goBackN(now Time, out *sm.Output) {
	q.GoBackNs++
	if q.retries++; q.retries > q.cfg.RetryCnt {
		q.fail(sm.StatusRetryExceeded, out)
		return
	}
	q.nxt = q.una
	q.timerAt = now + q.cfg.Timeout
}

// fail moves the QP to ERROR: the oldest WR completes with st, the rest
// and the posted receives are flushed.
func (q *QP) fail(st sm.Status, out *sm.Output) {
	q.failed = true
	for ; q.sqLen > 0; q.sqLen-- {
		m := q.at(0)
		out.Completions = append(out.Completions, sm.Completion{QPN: q.cfg.QPN, WRID: m.wrid, Status: st, Opcode: m.op,
			ByteLen: uint32(len(m.data))})
		st = sm.StatusFlushError
		q.sq[q.sqHead] = sendWR{} // drop the reference to the buffer
		q.sqHead = (q.sqHead + 1) % len(q.sq)
	}
	for ; q.rqLen > 0; q.rqLen-- {
		out.Completions = append(out.Completions, sm.Completion{QPN: q.cfg.QPN, WRID: q.rq[q.rqHead],
			Status: sm.StatusFlushError, Opcode: sm.OpRecvWriteImm, Recv: true})
		q.rqHead = (q.rqHead + 1) % len(q.rq)
	}
	q.timerAt = sm.Never
}

// Advance fires the local ACK timeout: go back to the oldest
// unacknowledged PSN.
func (q *QP) Advance(now Time, out *sm.Output) {
	if q.failed || now < q.timerAt {
		return
	}
	q.timerAt = sm.Never
	if q.una != q.nxt || wire.PSNLess(q.una, q.sentHigh) {
		q.goBackN(now, out)
	}
	q.pump(now, out)
}

// NextDeadline returns when the ACK timer expires, or Never.
func (q *QP) NextDeadline() Time {
	if q.failed {
		return sm.Never
	}
	return q.timerAt
}
