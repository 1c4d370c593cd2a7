package statemachine

import (
	"math/bits"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// sendWR is a posted work request with the PSN range it was given.
type sendWR struct {
	wrid     uint64
	va       uint64
	data     []byte
	rkey     uint32
	imm      uint32
	firstPSN uint32
	npkts    uint32
	msn      uint16
	rqmsn    uint16
	op       Opcode
	started  bool // its first packet has been sent (counts against max_wimm)
	unsig    bool
	se       bool // IBV_SEND_SOLICITED on a WriteImm (WIRE-BTH-10)
}

// The per-PSN EV record packs the EV index (11 bits, MaxEVs) with the
// timeout exponent the packet's timer was armed with (5 bits), keeping the
// per-PSN state at 11 bytes.
const (
	evIdxBits = 11
	evIdxMask = 1<<evIdxBits - 1
)

// requester is the sending half of a QP. Internally una is the oldest PSN
// not cumulatively acknowledged, that is the spec's una + 1 (the spec's una
// is inclusive, AMB-26); nxt is the next PSN to send for the first time.
type requester struct {
	una, nxt   uint32
	assign     uint32 // next PSN to give a posted WR
	win        uint32 // MPR window in PSNs (MPR-WIN-1)
	peerWin    uint32 // window the responder advertised via dynamic MPR; 0 = none
	dynMPR     bool
	ring       txRing
	pmtu       int
	inflight   int64 // payload bytes in flight (sent, not acknowledged, not lost)
	nLost      int   // PSNs queued for retransmission
	rtxHint    uint32
	lossScan   uint32 // PSNs below it were judged by the reorder rule
	highAck    uint32 // one past the highest acknowledged PSN
	timerAt    Time   // lower bound of the timers of packets in flight
	holdAt     Time   // lower bound of the hold-offs of held retransmissions
	stallAt    Time   // stall timer of a queued retransmission no EV may carry (LR-SM-3); Never when none
	stallPSN   uint32 // the PSN the stall timer waits for (0 while stallAt is Never)
	retries    int    // the retry counter c (LR-TMR-6)
	tshift     uint8  // the timeout attribute t
	linear     int
	exp        int
	baseRTT    Time
	sq         []sendWR
	sqHead     int
	sqLen      int
	sendIdx    int    // send-queue position (from the head) of the message being segmented
	sendOff    uint32 // packets of that message already sent
	msn        uint16
	rqmsn      uint16
	wimm       int // WriteIMMs started and not completed (WIMM-REQ-1)
	maxWIMM    int
	lastFound  int  // find cache
	sentData   bool // data sent since the last reverse-path check (EV-REV-2)
	rcvdData   bool // data received since the last reverse-path check
	revAt      Time
	revInt     Time
	probeRound uint16
}

func (r *requester) init(st *static, a *Attr, baseRTT Time) {
	*r = requester{
		una: a.SQPSN, nxt: a.SQPSN, assign: a.SQPSN, rtxHint: a.SQPSN, lossScan: a.SQPSN, highAck: a.SQPSN,
		win: uint32(a.MPR) * uint32(st.cfg.Test.MPRUnit), dynMPR: a.Cap&CapDynamicMPR != 0, maxWIMM: int(a.MaxWIMM), pmtu: int(a.PathMTU),
		timerAt: Never, holdAt: Never, stallAt: Never, revAt: Never, baseRTT: baseRTT, sq: make([]sendWR, st.qp.MaxSendWR),
	}
	r.ring = newTxRing(st.rules.reach(r.win))
	r.tshift = a.Timeout
	r.linear, r.exp = st.rules.retryBudget(int(a.Retry.LinearCnt), int(a.Retry.ExpCnt))
	r.revInt = max(baseRTT, Timeout(a.Timeout))
	if baseRTT > 0 {
		r.revInt = baseRTT
	}
}

func (r *requester) clone() requester {
	c := *r
	c.ring = r.ring.clone()
	c.sq = append([]sendWR(nil), r.sq...)
	return c
}

// post queues a WR and gives it its PSNs, MSN and RQMSN in post order
// (REQ-OP-3, REQ-SEG-1, REQ-PSN-1, REQ-PSN-3, WIRE-METH-2, WIRE-METH-3).
func (r *requester) post(wr WorkRequest) error {
	if r.sqLen == len(r.sq) {
		return ErrSendQueueFull
	}
	n := uint32(1)
	if len(wr.Data) > 0 {
		n = uint32((len(wr.Data) + r.pmtu - 1) / r.pmtu)
	}
	m := &r.sq[(r.sqHead+r.sqLen)%len(r.sq)]
	*m = sendWR{wrid: wr.WRID, va: wr.RemoteVA, data: wr.Data, rkey: wr.RKey, imm: wr.Imm,
		firstPSN: r.assign, npkts: n, msn: r.msn, rqmsn: r.rqmsn, op: wr.Opcode, unsig: wr.Unsignaled,
		se: wr.Solicited && wr.Opcode == OpWriteImm}
	r.sqLen++
	r.assign = wire.PSNAdd(r.assign, int(n))
	r.msn++
	if wr.Opcode == OpWriteImm {
		r.rqmsn++
	}
	return nil
}

func (r *requester) pop() {
	r.sq[r.sqHead] = sendWR{}
	r.sqHead = (r.sqHead + 1) % len(r.sq)
	r.sqLen--
	if r.sendIdx > 0 {
		r.sendIdx--
	} else {
		r.sendOff = 0
	}
	r.lastFound = 0
}

func (r *requester) at(i int) *sendWR { return &r.sq[(r.sqHead+i)%len(r.sq)] }

// find returns the send-queue position of the message holding psn, which
// must lie in [una, nxt).
func (r *requester) find(psn uint32) int {
	if i := r.lastFound; i < r.sqLen {
		m := r.at(i)
		if d := wire.PSNDiff(psn, m.firstPSN); d >= 0 && uint32(d) < m.npkts {
			return i
		}
	}
	lo, hi := 0, r.sqLen-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if wire.PSNDiff(psn, r.at(mid).firstPSN) >= 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	r.lastFound = lo
	return lo
}

// segLen is the payload length of packet k of m (REQ-SEG-1).
func (r *requester) segLen(m *sendWR, k uint32) int64 {
	a := int64(k) * int64(r.pmtu)
	return min(int64(len(m.data))-a, int64(r.pmtu))
}

func (r *requester) pktLen(psn uint32) int64 {
	m := r.at(r.find(psn))
	return r.segLen(m, uint32(wire.PSNDiff(psn, m.firstPSN)))
}

// effWin is W, the window every transmission respects: the requester's
// MPR, or the responder's advertised dynamic MPR when smaller
// (MPR-WIN-1, MPR-DYN-3).
func (r *requester) effWin() uint32 {
	if r.peerWin != 0 && r.peerWin < r.win {
		return r.peerWin
	}
	return r.win
}

func (r *requester) outstanding() int32 { return wire.PSNDiff(r.nxt, r.una) }

// rtoShift is the exponent of RTO(c) = T × 2^max(0, c − linear_cnt),
// capped so that RTO never exceeds 1.024 µs × 2^24 (LR-TMR-4).
func (r *requester) rtoShift() uint8 {
	sh := max(0, r.retries-r.linear)
	return uint8(min(sh, MaxTimeout-int(r.tshift)))
}

func (r *requester) evAt(i uint32) int { return int(r.ring.ev[i] & evIdxMask) }

// avoidAt is the EV index a queued PSN's retransmission must not take (the
// EV its NACK or timeout named, EV-ST-13), or -1 once its stall timer has
// expired and it may take any usable EV (LR-SM-3, AMB-44).
func (r *requester) avoidAt(i uint32) int {
	if r.ring.fl[i]&txFree != 0 {
		return -1
	}
	return r.evAt(i)
}

func (r *requester) timerOf(i uint32) Time {
	return r.ring.sentAt[i] + Timeout(r.tshift)<<(r.ring.ev[i]>>evIdxBits)
}

func (r *requester) deadline() Time { return min(r.timerAt, r.holdAt, r.revAt, r.stallAt) }

// clearFlight drops all in-flight state (on ERROR).
func (r *requester) clearFlight() {
	clear(r.ring.fl)
	clear(r.ring.sacked)
	r.una, r.assign, r.inflight, r.nLost = r.nxt, r.nxt, 0, 0
	r.timerAt, r.holdAt, r.revAt, r.stallAt, r.stallPSN = Never, Never, Never, Never, 0
	r.sendIdx, r.sendOff, r.wimm = 0, 0, 0
}

// pump sends what the windows allow: retransmissions first, oldest first,
// then new PSNs in order (REQ-TX-1, REQ-TX-2, LR-RTX-2).
func (q *QP) pump() {
	if !q.sending() {
		return
	}
	r := &q.req
	for r.nLost > 0 {
		psn, ok := r.nextLost(q.now)
		if !ok {
			break // every lost PSN is held back (LR-NACK-2)
		}
		switch q.sendRetransmission(psn) {
		case rtxSent:
			continue
		case rtxNoEV:
			if q.st.rules.stallTimed() {
				r.stall(psn, q.now) // it waits, and everything behind it, under a timer (LR-SM-3)
			}
		default:
			if q.st.rules.stallTimerStops() {
				r.endStall()
			}
		}
		return
	}
	if q.st.rules.stallTimerStops() {
		r.endStall()
	}
	for r.sendIdx < r.sqLen {
		if r.sendOff == 0 && !q.st.rules.startsNew(q.state) {
			break // SQD starts no new message (QP-ST-12)
		}
		if !q.sendNew() {
			return
		}
	}
	q.checkDrained(false)
}

func (q *QP) sendNew() bool {
	r := &q.req
	m := r.at(r.sendIdx)
	psn := wire.PSNAdd(m.firstPSN, int(r.sendOff))
	if uint32(wire.PSNDiff(psn, r.una)) >= q.st.rules.reach(r.effWin()) {
		return false // beyond the MPR window (MPR-WIN-1)
	}
	if m.op == OpWriteImm && !m.started && r.wimm >= r.maxWIMM {
		return false // the WriteIMM waits, and everything behind it (WIMM-REQ-1, WIMM-REQ-3)
	}
	n := r.segLen(m, r.sendOff)
	if !q.cc.allow(r.inflight, n) {
		return false
	}
	ev, ok := q.nextEV(-1)
	if !ok {
		return false
	}
	q.emitData(m, r.sendOff, psn, ev, false)
	r.arm(psn, ev, q.now)
	r.inflight += n
	r.nxt = wire.PSNAdd(psn, 1)
	if m.op == OpWriteImm && !m.started {
		m.started = true
		r.wimm++
	}
	if r.sendOff++; r.sendOff == m.npkts {
		r.sendIdx, r.sendOff = r.sendIdx+1, 0
	}
	return true
}

// arm records a transmission of psn on EV ev and starts its timer with the
// current RTO (LR-TMR-4).
func (r *requester) arm(psn uint32, ev int, now Time) {
	i := psn & r.ring.mask
	sh := r.rtoShift()
	r.ring.setFlags(i, r.ring.fl[i]&txRetx|txInFlight)
	r.ring.sentAt[i], r.ring.ev[i] = now, uint16(ev)|uint16(sh)<<evIdxBits
	r.timerAt = min(r.timerAt, now+Timeout(r.tshift)<<sh)
	r.sentData = true
}

// nextLost returns the oldest PSN queued for retransmission whose hold-off
// has passed.
func (r *requester) nextLost(now Time) (uint32, bool) {
	if wire.PSNLess(r.rtxHint, r.una) {
		r.rtxHint = r.una
	}
	first := true
	for p := r.rtxHint; p != r.nxt; p = wire.PSNAdd(p, 1) {
		i := p & r.ring.mask
		f := r.ring.fl[i]
		if f&txLost == 0 {
			continue
		}
		if first {
			r.rtxHint, first = p, false
		}
		if f&txHold == 0 || r.ring.sentAt[i] <= now {
			r.ring.fl[i] &^= txHold
			return p, true
		}
		r.holdAt = min(r.holdAt, r.ring.sentAt[i])
	}
	return 0, false
}

// What sendRetransmission did.
type rtxResult uint8

const (
	rtxSent    rtxResult = iota
	rtxBlocked           // the MPR window or cwnd holds it back: answers will come
	rtxNoEV              // no usable EV other than the one it must avoid (LR-SM-3)
)

func (q *QP) sendRetransmission(psn uint32) rtxResult {
	r := &q.req
	if uint32(wire.PSNDiff(psn, r.una)) >= q.st.rules.reach(r.effWin()) {
		return rtxBlocked // a dynamic-MPR shrink pauses retransmissions too (MPR-DYN-3, LR-NACK-3)
	}
	n := r.pktLen(psn)
	if !q.cc.allow(r.inflight, n) {
		return rtxBlocked // retransmissions count against cwnd (LR-RTX-3)
	}
	i := psn & r.ring.mask
	avoid := r.avoidAt(i)
	ev := avoid
	if q.st.rules.avoidsNamedEV() {
		var ok bool
		if ev, ok = q.nextEV(avoid); !ok {
			return rtxNoEV // never on the EV the NACK or timeout named (EV-ST-13, LR-NACK-1)
		}
	}
	m := r.at(r.find(psn))
	q.emitData(m, uint32(wire.PSNDiff(psn, m.firstPSN)), psn, ev, true)
	r.ring.fl[i] = r.ring.fl[i]&^(txLost|txFree) | txRetx
	r.arm(psn, ev, q.now)
	r.nLost--
	r.inflight += n
	if r.rtxHint == psn {
		r.rtxHint = wire.PSNAdd(psn, 1) // not past an older PSN still held back
	}
	return rtxSent
}

// stall records that psn, the oldest retransmission pump may send, has no
// EV to go on. A queued PSN has no packet timer (LR-TMR-4 arms timers on
// transmissions), so without this timer a QP whose only usable EV is the
// one EV-ST-13 excludes would wait forever, neither progressing nor
// reaching ERROR. The stall timer times one PSN's wait: it runs RTO(c)
// from the moment psn starts waiting, and restarts when another PSN takes
// its place, so an expiry never ends an avoidance that began less than
// RTO(c) ago (LR-SM-3, LR-TMR-4, AMB-101).
func (r *requester) stall(psn uint32, now Time) {
	if r.stallAt == Never || r.stallPSN != psn {
		r.stallAt = now + Timeout(r.tshift)<<r.rtoShift()
	}
	r.stallPSN = psn
}

// endStall stops the stall timer: nothing waits for an EV any more.
func (r *requester) endStall() { r.stallAt, r.stallPSN = Never, 0 }

// stallTimer runs after pump: when the stall timer expires and the
// retransmission still cannot be sent, it counts one retry event, as the
// timeout of the waiting retransmission, and restarts with the RTO of the
// new counter, so the wait is bounded and the QP reaches ERROR when the
// retry budget runs out (LR-SM-3, LR-TMR-6, LR-TMR-7). The expiry also
// ends the PSN's claim on avoiding its EV: the next retransmission is the
// timer's, not the NACK's, and may take any usable EV, the avoided one
// included. Without that, a PSN whose only working EV is the one it avoids
// waits for good even after a probe proves that EV sound (finding F4 of
// fabric/README.md, AMB-44). EV-ST-13 still holds for the RTO after the
// NACK, and whenever another EV is usable.
func (q *QP) stallTimer() {
	r := &q.req
	if q.now < r.stallAt {
		return
	}
	psn := r.stallPSN
	i := psn & r.ring.mask
	var ev uint32
	if a := r.avoidAt(i); a >= 0 {
		ev = q.ev.set.values[a]
	}
	q.emit(Event{Kind: EvStallTimeout, PSN: psn, EV: ev})
	r.stallAt = Never
	q.chargeRetry()
	if q.sending() {
		q.st.rules.retryStalled(q, psn)
	}
}

// retryStalled ends the waiting PSN psn's claim on avoiding its EV, unless
// the policy keeps it, and lets it go now if an EV may carry it; if none
// may, pump re-arms the stall timer.
func (q *QP) retryStalled(psn uint32) {
	if !q.st.cfg.Policy.KeepAvoidAfterStall {
		q.req.ring.fl[psn&q.req.ring.mask] |= txFree
	}
	q.pump()
}

// emitData builds data packet k of m: opcode by position (REQ-SEG-2), the
// packet's own VA in a RETH in every packet (REQ-SEG-3, WIRE-RETH-2), METH,
// a TSETH when configured (REQ-HDR-1), ack_req on a message's last packet
// (REQ-HDR-3, WIRE-BTH-14), and on retransmissions the rtx flag and the
// profile's retransmit class (REQ-PSN-2, LR-RTX-3).
func (q *QP) emitData(m *sendWR, k, psn uint32, ev int, rtx bool) {
	st := q.st
	o := q.out.newPacket()
	class := ClassTrimmable
	if rtx {
		class = ClassTrimmableRetx
		if st.cfg.Profile.Retransmit == spec.RetransmitControl {
			class = ClassControl
		}
	}
	if q.attr.Cap&CapTrimNACKDestUnsupported != 0 {
		class = ClassNoTrim // the peer cannot NACK trims (WIRE-DSCP-5)
	}
	q.fillHeaders(o, class, ev, true)
	p := &o.Pkt
	first, last := k == 0, k == m.npkts-1
	var op wire.Opcode
	switch {
	case first && last:
		op = wire.OpWriteOnly
	case first:
		op = wire.OpWriteFirst
	case last:
		op = wire.OpWriteLast
	default:
		op = wire.OpWriteMiddle
	}
	if last && m.op == OpWriteImm {
		op++ // WRITE_LAST → WRITE_LAST_IMM, WRITE_ONLY → WRITE_ONLY_IMM
		p.ImmDt = m.imm
	}
	p.BTH = wire.BTH{Opcode: op, PKey: st.pkey, DestQP: q.attr.DestQPN, AckReq: last, Retransmit: rtx,
		TSPresent: st.qp.Timestamps, PSN: psn, SE: last && m.se}
	p.METH = wire.METH{RQMSN: m.rqmsn, MSN: m.msn}
	if st.qp.Timestamps {
		p.TSETH = wire.TSETH{TxTimestamp: q.tsNow(), FType: 1}
	}
	off := int(k) * q.req.pmtu
	p.RETH = wire.RETH{VA: m.va + uint64(off), RKey: m.rkey, DMALength: uint32(len(m.data))}
	p.Payload = m.data[off : off+int(q.req.segLen(m, k))]
	if q.trace() {
		var f uint8
		if rtx {
			f = FlagRetransmit
		}
		q.emit(Event{Kind: EvPacketSent, PSN: psn, EV: o.EV, Plane: o.Plane, MSN: m.msn, Reason: uint8(op), Flags: f})
	}
}

// markLost queues an in-flight PSN for retransmission; avoid is the EV the
// retransmission must not use.
func (q *QP) markLost(psn uint32, c LossCause, avoid int) {
	r := &q.req
	i := psn & r.ring.mask
	f := r.ring.fl[i]
	if f&txInFlight == 0 {
		return
	}
	r.inflight -= r.pktLen(psn)
	r.ring.fl[i] = f&^(txInFlight|txFree) | txLost
	r.ring.ev[i] = uint16(avoid)
	if r.nLost == 0 || wire.PSNLess(psn, r.rtxHint) {
		r.rtxHint = psn
	}
	r.nLost++
	if q.trace() {
		q.emit(Event{Kind: EvLost, PSN: psn, EV: q.ev.set.values[avoid], Reason: uint8(c)})
	}
	q.st.rules.alsoLost(q, psn, c)
}

// chargeRetry counts one retry event on the shared counter; the QP fails
// when the counter exceeds linear_cnt + exp_cnt, never when exp_cnt is 25
// (LR-TMR-6, LR-TMR-7).
func (q *QP) chargeRetry() {
	r := &q.req
	r.retries++
	q.emit(Event{Kind: EvRetry, Value: uint64(r.retries)})
	if r.exp != RetryInfinite && r.retries > r.linear+r.exp {
		q.enterError(CauseRetryExceeded, StatusRetryExceeded)
	}
}

// ackTo moves the cumulative point so that cack is the oldest PSN not yet
// acknowledged, releasing PSN state, resetting the retry counter
// (LR-TMR-6) and completing WRs. It returns the bytes newly acknowledged.
func (q *QP) ackTo(cack uint32) int64 {
	r := &q.req
	var acked int64
	for r.una != cack {
		i := r.una & r.ring.mask
		f := r.ring.fl[i]
		if f&txInFlight != 0 {
			n := r.pktLen(r.una)
			r.inflight -= n
			acked += n
		}
		if f&txLost != 0 {
			r.nLost--
		}
		r.ring.setFlags(i, 0)
		r.una = wire.PSNAdd(r.una, 1)
	}
	if wire.PSNLess(r.highAck, cack) {
		r.highAck = cack
	}
	r.retries = 0
	q.completeSends()
	return acked
}

// completeSends completes, in post order, every WR whose last PSN is
// cumulatively acknowledged (CMP-SND-1, CMP-SND-2, CMP-SND-3).
func (q *QP) completeSends() {
	r := &q.req
	for r.sqLen > 0 && r.sendIdx > 0 {
		m := r.at(0)
		if !wire.PSNLess(wire.PSNAdd(m.firstPSN, int(m.npkts)-1), r.una) {
			return
		}
		if m.op == OpWriteImm {
			r.wimm--
		}
		if !m.unsig {
			q.complete(m.wrid, m.op, StatusSuccess, uint32(len(m.data)))
		}
		r.pop()
	}
}

// sackBits applies a SACK bitmap: bit k acknowledges PSN base+k, which is
// never retransmitted again and whose timer stops (LR-SACK-2, LR-SACK-5).
func (q *QP) sackBits(base uint32, bm uint64) int64 {
	r := &q.req
	var acked int64
	// Keep only the bits of outstanding PSNs: [una, nxt) relative to base.
	lo, hi := int64(wire.PSNDiff(r.una, base)), int64(wire.PSNDiff(r.nxt, base))
	if lo >= 64 || hi <= 0 {
		return 0
	}
	if lo > 0 {
		bm &^= 1<<lo - 1
	}
	if hi < 64 {
		bm &= 1<<hi - 1
	}
	bm &^= r.ring.sacked64(base) // SACKed before: nothing to do
	for bm != 0 {
		k := bits.TrailingZeros64(bm)
		bm &= bm - 1
		psn := wire.PSNAdd(base, k)
		i := psn & r.ring.mask
		f := r.ring.fl[i]
		if f&txInFlight != 0 {
			n := r.pktLen(psn)
			r.inflight -= n
			acked += n
		}
		if f&txLost != 0 {
			r.nLost-- // it arrived after all: no retransmission
		}
		r.ring.setFlags(i, f&^(txInFlight|txLost|txHold)|txSACKed)
		if !wire.PSNLess(psn, r.highAck) {
			r.highAck = wire.PSNAdd(psn, 1)
		}
	}
	return acked
}

// reorderGuard is reorder_guard in packets: the configured value, else the
// congestion window in packets (one BDP), else the MPR window (LR-RTX-4).
func (q *QP) reorderGuard() int {
	if g := q.st.cfg.Policy.ReorderThreshold; g > 0 {
		return g
	}
	if q.cc.on {
		return int(max(1, q.cc.cwnd/int64(q.req.pmtu)))
	}
	return int(q.req.win)
}

// reorderLoss marks as lost the first transmissions of PSNs still
// unacknowledged although a PSN reorder_guard packets after them was
// acknowledged. Each PSN is judged once; later recovery of it relies on
// NACKs and its timer (LR-RTX-4). An inferred loss implicates the EV the
// packet was sent on as a timeout does: GOOD or SKIP → ASSUMED_BAD,
// subject to ev_min_active, replaced from the plane's backups, with no
// retry counted (EV-SM-5, EV-ST-5, EV-SET-6, EV-REP-1), unless the
// policy KeepEVOnInferredLoss is set. No trim NACK has arrived for a PSN
// still in flight: a trimmed packet's NACK would have queued it.
func (q *QP) reorderLoss() {
	r := &q.req
	if wire.PSNLess(r.lossScan, r.una) {
		r.lossScan = r.una
	}
	limit := wire.PSNAdd(r.highAck, -q.reorderGuard())
	for wire.PSNLess(r.lossScan, limit) && wire.PSNLess(r.lossScan, r.nxt) {
		i := r.lossScan & r.ring.mask
		if f := r.ring.fl[i]; f&txInFlight != 0 && f&txRetx == 0 {
			ev := r.evAt(i)
			q.markLost(r.lossScan, LossReorder, ev)
			if !q.st.cfg.Policy.KeepEVOnInferredLoss {
				q.evEvent(ev, CauseInferredLoss) // EV-SM-5
			}
		}
		r.lossScan = wire.PSNAdd(r.lossScan, 1)
	}
}

// rttSample returns the RTT a SACK measures, or −1: from the reflected
// TSETH timestamp when data carries one and it is non-zero, else from the
// send time of the PSN that triggered the SACK if it was sent only once
// (CC-SIG-1, CC-SIG-3).
func (q *QP) rttSample(s *wire.SETH) Time {
	if q.st.qp.Timestamps {
		if s.CC.TxTimestamp == 0 {
			return -1
		}
		u := q.st.tsUnit
		return Time(uint16(q.now/u)-s.CC.TxTimestamp) * u
	}
	r := &q.req
	psn := s.AckPSN()
	d := wire.PSNDiff(psn, r.una)
	if d < 0 || d >= r.outstanding() {
		return -1
	}
	i := psn & r.ring.mask
	if f := r.ring.fl[i]; f&txRetx != 0 || f&(txInFlight|txSACKed) == 0 {
		return -1
	}
	return q.now - r.ring.sentAt[i]
}

// lookupEV finds the EV a SACK or NACK reflects, trying first the EV the
// answered PSN was last sent on.
func (q *QP) lookupEV(v, psn uint32) (int, bool) {
	r := &q.req
	if d := wire.PSNDiff(psn, r.una); d >= 0 && d < r.outstanding() {
		if i := r.evAt(psn & r.ring.mask); q.ev.set.values[i] == v {
			return i, true
		}
	}
	return q.ev.set.lookup(v)
}

// onSACK processes a Reliability SACK: cumulative acknowledgement
// (LR-SACK-1), bitmap (LR-SACK-2) and the losses they reveal, the verdict
// on the EV it reflects (sackVerdict, ev.go: LR-SACK-3, EV-PRB-4,
// EV-REV-3), dynamic MPR (MPR-DYN-3, MPR-DYN-4) and the CC_STATE
// (LR-SACK-4).
func (q *QP) onSACK(s *wire.SETH) {
	r := &q.req
	cack := wire.PSNAdd(s.CACKPSN, 1) // the first PSN cack_psn does not cover
	if q.trace() {
		var f uint8
		if s.PR {
			f = FlagProbe
		}
		q.emit(Event{Kind: EvSACKReceived, PSN: s.CACKPSN & wire.PSNMask, EV: s.Entropy, Reason: uint8(s.M), Flags: f})
	}
	dc := wire.PSNDiff(cack, r.una)
	if dc > r.outstanding() {
		q.ignore(IgnoreInvalidAck, s.CACKPSN, s.Entropy) // cack_psn not before the next unsent PSN
		return
	}
	var rtt Time = -1
	if !s.PR {
		rtt = q.rttSample(s)
	}
	ev, evOK := q.lookupEV(s.Entropy, s.AckPSN())
	var acked int64
	if dc > 0 {
		acked = q.ackTo(cack)
	}
	if s.SACKBitmap != 0 {
		acked += q.sackBits(s.BitmapBase(), s.SACKBitmap)
	}
	q.reorderLoss()
	m := q.sackVerdict(s, ev, evOK)
	if r.dynMPR && s.MPR != 0 {
		r.peerWin = uint32(s.MPR) * uint32(q.st.cfg.Test.MPRUnit)
	}
	if !s.PR {
		q.ccEvent(q.cc.onAck(q.now, acked, m != wire.MNone, rtt, s.CC.RcvCwndPen, s.CC.RC, r.inflight))
	}
}

func (q *QP) ccEvent(c CCCause) {
	if c != CCNone && q.trace() {
		q.emit(Event{Kind: EvCwnd, Value: uint64(q.cc.cwnd), Reason: uint8(c)})
	}
}

// onNACK processes a Reliability NACK per reason code (LR-NACK-1 to
// LR-NACK-7).
func (q *QP) onNACK(p *wire.Packet) {
	r := &q.req
	n := &p.NETH
	psn := n.NACKPSN & wire.PSNMask
	if q.trace() {
		q.emit(Event{Kind: EvNACKReceived, PSN: psn, EV: n.Entropy, Reason: uint8(n.Reason)})
	}
	d := wire.PSNDiff(psn, r.una)
	switch n.Reason {
	case wire.NACKUnexpEvent:
		// A connection-level signal: it counts when its PSN was sent and is
		// not cumulatively acknowledged, even if a SACK's bitmap covered it
		// (the responder names the WriteIMM whose delivery failed).
		if d < 0 || d >= r.outstanding() || !q.st.rules.unexpCounts(r.ring.fl[psn&r.ring.mask]&txSACKed != 0) {
			q.ignore(IgnoreStaleAck, psn, n.Entropy) // LR-NACK-6, AMB-100
			return
		}
		q.enterError(CauseRemoteUnexp, StatusRemoteOpError) // retry nothing (LR-NACK-4)
		return
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop, wire.NACKNoBitmap, wire.NACKNoPktBuffer,
		wire.NACKNoResource, wire.NACKPSNOutOfWindow:
	default:
		q.ignore(IgnoreUnknownReason, psn, n.Entropy) // LR-NACK-7
		return
	}
	if !q.st.rules.heedsNACK(n.Reason) {
		return
	}
	if !q.st.rules.recoverable(n.Reason) {
		q.enterError(CauseRemoteOp, StatusRemoteOpError)
		return
	}
	i := psn & r.ring.mask
	if d < 0 || d >= r.outstanding() || r.ring.fl[i]&txSACKed != 0 {
		q.ignore(IgnoreStaleAck, psn, n.Entropy) // not outstanding (LR-NACK-6)
		return
	}
	ev, ok := q.ev.set.lookup(n.Entropy)
	if !ok {
		ev = r.evAt(i)
	} else if n.Reason == wire.NACKTrimmed {
		q.evEvent(ev, CauseTrimmed) // EV-ST-3
	}
	nb := r.pktLen(psn)
	if r.ring.fl[i]&txInFlight != 0 {
		q.markLost(psn, LossNACK, ev)
	} else {
		r.ring.ev[i] = uint16(ev) // already queued: now avoid this EV (EV-ST-13)
		r.ring.fl[i] &^= txFree
		if psn == r.stallPSN {
			r.stallAt, r.stallPSN = Never, 0 // its wait begins anew: pump restarts the timer (AMB-101)
		}
	}
	switch n.Reason {
	case wire.NACKNoBitmap, wire.NACKNoPktBuffer, wire.NACKNoResource:
		// Resource NACKs wait base_rtt before the retransmission (LR-NACK-2).
		at := q.now + q.st.rules.holdOff(r.baseRTT)
		r.ring.fl[i] |= txHold
		r.ring.sentAt[i] = at
		r.holdAt = min(r.holdAt, at)
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop:
		q.ccEvent(q.cc.onLoss(nb)) // CC-NSCC-6
	}
	q.chargeRetry() // LR-NACK-5
}

// onAETH processes the RoCE transport ACK: an ACK cumulatively
// acknowledges every PSN up to and including its BTH psn and carries no EV
// or congestion information (RSP-ACK-2); a NAK fails the QP with the status
// its code gives (CMP-ERR-2); RNR and other NAKs are discarded
// (WIRE-AETH-3).
func (q *QP) onAETH(p *wire.Packet) {
	a := &p.AETH
	switch a.Type() {
	case wire.AETHTypeACK:
		r := &q.req
		cack := wire.PSNAdd(p.BTH.PSN, 1)
		dc := wire.PSNDiff(cack, r.una)
		if dc > r.outstanding() {
			q.ignore(IgnoreInvalidAck, p.BTH.PSN, 0)
			return
		}
		if dc > 0 {
			q.ackTo(cack)
		}
	case wire.AETHTypeNAK:
		switch a.Value() {
		case wire.AETHNAKInvalidRequest:
			q.enterError(CauseRemoteInvalid, StatusRemoteInvalidReq)
		case aethNAKRemoteAccess:
			q.enterError(CauseRemoteAccess, StatusRemoteAccessErr)
		case aethNAKRemoteOp:
			q.enterError(CauseRemoteOp, StatusRemoteOpError)
		default:
			q.ignore(IgnoreUnexpectedOp, p.BTH.PSN, 0)
		}
	default:
		q.ignore(IgnoreUnexpectedOp, p.BTH.PSN, 0)
	}
}

// AETH NAK codes beyond wire's (IBTA): remote access and remote operational
// errors.
const (
	aethNAKRemoteAccess = 2
	aethNAKRemoteOp     = 3
)

// rtoTimer fires expired per-packet timers (LR-TMR-3, LR-TMR-4). Each
// expired packet is queued for retransmission, moves the EV it was last
// sent on to ASSUMED_BAD (EV-ST-5), shrinks cwnd (CC-NSCC-6) and, when it
// is the oldest outstanding PSN on an EV not already ASSUMED_BAD, counts
// one retry event (LR-TMR-5, LR-TMR-6).
func (q *QP) rtoTimer() {
	r := &q.req
	if q.now < r.timerAt {
		return
	}
	next := Never
	for psn := r.una; psn != r.nxt && q.sending(); psn = wire.PSNAdd(psn, 1) {
		i := psn & r.ring.mask
		if r.ring.fl[i]&txInFlight == 0 {
			continue
		}
		t := r.timerOf(i)
		if q.now < t {
			next = min(next, t)
			continue
		}
		ev := r.evAt(i)
		// Only the oldest outstanding packet's timeout measures a stall of
		// the connection: timeouts of later PSNs are path failures, which
		// the EV state handles. Counting them all let one correlated failure
		// (a T1 switch blackholing a quarter of the paths) push c past
		// linear_cnt at once and stall every path in exponential backoff.
		counted := q.ev.state(ev) != EVAssumedBad && psn == r.una
		q.emit(Event{Kind: EvTimeout, PSN: psn, EV: q.ev.set.values[ev]})
		nb := r.pktLen(psn)
		q.markLost(psn, LossTimeout, ev)
		q.evEvent(ev, CauseTimeout) // EV-ST-5
		q.ccEvent(q.cc.onLoss(nb))
		if counted {
			q.chargeRetry()
		}
	}
	if q.sending() {
		r.timerAt = next
	}
}

// holdTimer recomputes when the next held retransmission becomes
// eligible (LR-NACK-2); pump then sends the eligible ones.
func (q *QP) holdTimer() {
	r := &q.req
	if q.now < r.holdAt {
		return
	}
	r.holdAt = Never
	for p := r.una; p != r.nxt; p = wire.PSNAdd(p, 1) {
		i := p & r.ring.mask
		if f := r.ring.fl[i]; f&txLost != 0 && f&txHold != 0 && r.ring.sentAt[i] > q.now {
			r.holdAt = min(r.holdAt, r.ring.sentAt[i])
		}
	}
}

// probeTimer sends one probe round: a RELIABILITY_PROBE_REQ on every
// ASSUMED_BAD EV whose plane is up, at most one per EV per interval; a
// probe still unanswered from the last round counts as failed (EV-PRB-1,
// EV-PRB-2).
func (q *QP) probeTimer() {
	t := &q.ev
	if t.nBad == 0 {
		t.probeAt = Never
		return
	}
	if q.now < t.probeAt {
		return
	}
	t.probeAt = addSat(q.now, t.probeInt)
	q.req.probeRound++
	for i := range t.e {
		if t.state(i) != EVAssumedBad || !t.planeUp(i) {
			continue
		}
		if t.probing(i) {
			t.setProbeOK(i, 0) // the last probe went unanswered
		}
		q.sendProbe(i)
	}
}

// reverseTimer probes one random EV in every RTT in which the QP received
// data but sent none, to find reverse EVs for its SACKs (EV-REV-2).
func (q *QP) reverseTimer() {
	r := &q.req
	if q.now < r.revAt {
		return
	}
	if !r.rcvdData {
		r.revAt = Never
		return
	}
	if !r.sentData {
		// Any usable EV, not only the active set's: a QP that only
		// receives has no data of its own to tell which EVs work
		// (EV-SM-4).
		if ev, ok := q.randomEV(nil, q.ev.usable); ok {
			q.sendProbe(ev)
		}
	}
	r.rcvdData, r.sentData = false, false
	r.revAt = addSat(q.now, r.revInt)
}

// probeID tags a probe with its EV index and the round, so that an answer
// can be matched to the probe it answers (EV-PRB-4).
func (r *requester) probeID(ev int) uint16 {
	return uint16(ev)&evIdxMask | r.probeRound<<evIdxBits
}

// sendProbe sends a RELIABILITY_PROBE_REQ on EV ev: no PSN (BTH psn 0),
// class DSCP_NO_TRIM, ECT (EV-PRB-3, WIRE-PETH-2, WIRE-DSCP-1).
func (q *QP) sendProbe(ev int) {
	o := q.out.newPacket()
	q.fillHeaders(o, ClassNoTrim, ev, true)
	p := &o.Pkt
	id := q.req.probeID(ev)
	q.ev.setFlag(ev, evProbing, true)
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: q.st.pkey, DestQP: q.attr.DestQPN}
	p.PETH = wire.PETH{ProbeID: id, SPDCID: uint16(q.st.qp.QPN), DPDCID: uint16(q.attr.DestQPN),
		TxTimestamp: q.tsNow(), FType: 1}
	q.emit(Event{Kind: EvProbeSent, EV: o.EV, Plane: o.Plane, Value: uint64(id)})
}
