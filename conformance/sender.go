package conformance

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// baseTimeout is T = 1.024 µs × 2^timeout in ns (LR-TMR-1).
func baseTimeout(timeout int) int64 { return 1024 << timeout }

// write handles a write packet at a point: the requester's view of it as
// a transmission and the responder's view of it as an arrival.
func (e *engine) write(pt *point, src, dst string, r *pcap.Record) {
	p := &r.Packet
	fl := pt.recentData(src, dst, p.BTH.DestQP)
	if fl == nil {
		fl = e.dataFlow(pt, src, dst, p.BTH.DestQP)
	}
	if fl == nil {
		return
	}
	pt.curFlow = fl
	fl.touch(e.frameNo, pt.curPlane)
	e.addEV(fl, r.EV)
	fl.writes++
	if p.Trimmed {
		fl.trimmed++
	}
	e.tlPacket(pt, fl, r)
	e.sendWrite(pt, fl, src, r)
	if r.Cut {
		e.cutWrite(pt, fl)
	}
	e.arriveWrite(pt, fl, dst, r)
}

// cutWrite counts a write the capture's snap length cut after its
// headers (pcap.Record.Cut), to its responder at the point: it is taken
// as arrived whole, as it most likely did, and since its ICRC is not in
// the capture, what the responder did on the writes it had is not judged
// there (unseen.cut).
func (e *engine) cutWrite(pt *point, fl *flow) {
	e.cutFrames++
	pt.countCut(fl.key.rsp, 1)
}

// countCut adds n writes to rsp cut by the snap length (cutTo), a
// responder new to the point only while it counts fewer than MaxNodes.
func (pt *point) countCut(rsp string, n int) {
	if pt.cutTo == nil {
		pt.cutTo = map[string]int{}
	}
	if _, ok := pt.cutTo[rsp]; ok || len(pt.cutTo) < MaxNodes {
		pt.cutTo[rsp] += n
	}
}

// sentCtx is what the sent hook of a check sees: a write as its requester
// sent it, placed in the connection's PSN window. The model is as before
// the write, but for the fields sendWrite updates first (lastWriteNs,
// lastNewNs, retransmits, the PSN's pending NACK taken out of nackPend).
type sentCtx struct {
	judgedRow  // the requester's
	pt         *point
	fl         *flow
	req        string
	r          *pcap.Record
	p          *wire.Packet
	psn, ev    uint32
	t          int64
	st         *psnInfo    // the PSN's record, nil when not held
	acked      bool        // cumulatively acknowledged
	isNew      bool        // a first transmission
	preCapture bool        // a resend of a PSN sent before the capture began or first seen now
	nack       pendingNACK // on a resend: the NACK that was pending for the PSN (frame 0: none)
	tracked    bool        // a resend of an outstanding PSN the table holds, not selectively acknowledged
	timedOut   bool        // tracked, with no loss signal, a base timeout or more after its previous send
	size       sizeFault   // what the write's payload size breaks, if anything (writeSize)
	// copyLike: a resend repeating its PSN's only earlier copy, the first
	// transmission: on its EV, with its headers and rtx = 0, as a duplicate
	// the fabric made looks at a point away from the requester.
	copyLike bool
}

// fill fills in a finding about the write (in a failWhy or undecidedWhy
// callback, so only for a finding kept).
func (x *sentCtx) fill(f *Finding, exp, obs string, related ...int) {
	f.PSN, f.EV, f.Expected, f.Observed, f.Related = u32p(x.psn), u32p(x.ev), exp, obs, related
}

// at fills in the evidence of a finding about the write (failWhy).
func (x *sentCtx) at(f *Finding, exp, obs string, related ...int) {
	f.PSN, f.EV, f.Expected, f.Observed, f.Related = u32p(x.psn), u32p(x.ev), exp, obs, related
}

// sendWrite places a write in the requester's view, runs the sent hooks
// and updates the view.
func (e *engine) sendWrite(pt *point, fl *flow, req string, r *pcap.Record) {
	p := &r.Packet
	x := &e.sx
	// Every field stored, one by one, these lines and the next four (no
	// composite literal built aside and copied).
	x.judgedRow, x.pt, x.fl, x.req, x.r, x.p = judgedRow{e.row(pt, req)}, pt, fl, req, r, p
	x.psn, x.ev, x.t = p.BTH.PSN, r.EV, e.now
	x.preCapture, x.nack, x.tracked, x.timedOut, x.copyLike = false, pendingNACK{}, false, false, false
	psn, t := x.psn, x.t
	x.size = e.writeSize(fl, r)
	fl.learnMTU(x)
	x.st = fl.psns.get(psn)
	x.acked = fl.haveUna && !psnAfter(psn, fl.una)
	x.isNew = x.st == nil && !x.acked && (!fl.haveMax || psnAfter(psn, fl.maxSent))
	if x.isNew && !fl.anchored && p.BTH.Retransmit {
		x.isNew, x.preCapture = false, true // a resend of a PSN sent before the capture began
	}
	if !x.isNew && x.st == nil && !x.acked && !x.preCapture {
		x.preCapture = true // behind the highest PSN sent, first seen now
	}
	fl.lastWriteNs = t
	if at, ok := fl.maybeBad.get(x.ev); ok && t >= at+e.grace {
		fl.maybeBad.del(x.ev) // in use after the loss was inferred
	}
	if x.isNew {
		fl.lastNewNs = t
	} else {
		fl.retransmits++
		if len(fl.nackPend) > 0 {
			x.nack = fl.delNACK(psn)
		}
		x.tracked = x.st != nil && !x.acked && !x.st.ackSel
		x.copyLike = x.st != nil && x.st.sends == 1 && x.st.lastEV == x.ev && !p.BTH.Retransmit && headerFP(p) == x.st.hdrFP
		if to := e.pics.Parameters.Timeout; x.tracked && x.st.loss.kind == 0 && to != nil {
			x.timedOut = t-x.st.lastNs >= baseTimeout(*to)-e.tol
		}
	}
	if x.isNew || x.copyLike {
		fl.countCopy(pt.curIface, x.isNew)
	}
	for _, h := range e.hk.sentHooks(e.writeKinds(x)) {
		h(e, x)
	}
	if x.isNew {
		e.sentNew(x)
	} else {
		e.sentAgain(x)
	}
}

// writeKinds returns the kinds of the write x (writeKind).
func (e *engine) writeKinds(x *sentCtx) writeKind {
	k := e.sentKinds // wMPR
	switch {
	case x.isNew:
		k |= wNew
	case x.tracked:
		k |= wResend | wTracked
	default:
		k |= wResend
	}
	if x.nack.frame != 0 {
		k |= wNACKed
	}
	fl := x.fl
	if len(fl.nackPend) > 0 || len(fl.bad) > 0 || fl.fatal || len(x.pt.psu) > 0 || x.p.SRv6 {
		k |= rareWrites // any of them: every hook runs
	}
	return k
}

// sentNew updates the requester's view after a first transmission.
func (e *engine) sentNew(x *sentCtx) {
	fl, p, psn := x.fl, x.p, x.psn
	if !fl.anchored && (e.pics.Capture.FromQPStart || (p.METH.MSN == 0 && p.METH.RQMSN == 0 && p.BTH.Opcode.IsFirst())) {
		fl.startKnown, fl.firstPSN = true, psn
	}
	fl.anchored, fl.haveMax, fl.maxSent = true, true, psn
	if !e.roomIn(fl.psns.len(), MaxPSNsPerFlow) {
		e.capFlow(x.pt, fl)
	} else {
		fp := headerFP(p)
		st, ok, jumped := fl.psns.add(psn)
		if ok {
			st.firstFrame, st.lastFrame, st.lastNs, st.lastEV, st.sends, st.hdrFP = e.frameNo, e.frameNo, x.t, x.ev, 1, fp
		}
		if ok && !p.Trimmed && x.size == sizeOK { // ok: the table holds psn
			fl.psns.payload(psn).keep(x.r)
		}
		if jumped && fl.psns.jumps == 1 {
			e.note("connection %s at %q: PSN %d lies more than %d PSNs beyond those outstanding; the earlier ones are no longer tracked", fl.key, x.pt.name, psn, MaxPSNsPerFlow)
		}
		if !ok {
			e.capFlow(x.pt, fl)
		}
	}
	e.message(x)
}

// sentAgain updates the requester's view after a resend.
func (e *engine) sentAgain(x *sentCtx) {
	fl, st, t := x.fl, x.st, x.t
	if !x.tracked {
		if st != nil {
			st.sends++
			st.lastNs, st.lastEV, st.lastFrame = t, x.ev, e.frameNo
		}
		return
	}
	if x.timedOut {
		// EV-ST-5: the EV of the timed-out packet is retired.
		fl.retryEvents++
		e.retire(x.pt, fl, st.lastEV, t+e.grace, st.lastFrame, evstate.CauseTimeout)
	}
	e.checkExhausted(fl, t)
	st.sends++
	st.lastNs, st.lastEV, st.lastFrame = t, x.ev, e.frameNo
	st.loss, st.nack = signal{}, signal{}
	if fl.haveMarked && !psnAfter(x.psn, fl.markedTo) {
		fl.markedTo = wire.PSNAdd(x.psn, -1) // its loss evidence is spent: the next SACK past it marks it again
	}
}

func firstNote(f int) string {
	if f == 0 {
		return ""
	}
	return " first sent in frame " + itoa(f)
}

func nonZero(f int) []int {
	if f == 0 {
		return nil
	}
	return []int{f}
}

// checkExhausted notes when the retry events since una last advanced
// exceed linear_cnt + exp_cnt (LR-TMR-7).
func (e *engine) checkExhausted(fl *flow, t int64) {
	q := &e.pics.Parameters
	if q.LinearCnt == nil || q.ExpCnt == nil || *q.ExpCnt >= 25 || fl.exhausted {
		return
	}
	if fl.retryEvents > *q.LinearCnt+*q.ExpCnt {
		fl.exhausted, fl.exhaustedNs = true, t
	}
}

func (e *engine) capFlow(pt *point, fl *flow) {
	if !fl.capped {
		fl.capped = true
		e.hitBound(fmt.Sprintf("connection %s at %q: PSN table full; later PSNs are not tracked", fl.key, pt.name))
		e.event(eventCtx{kind: evCapped, pt: pt, fl: fl})
	}
}

// retire marks an EV ASSUMED_BAD on event c from time since, unless the
// ev_min_active floor keeps it in use (EV-SET-6).
func (e *engine) retire(pt *point, fl *flow, ev uint32, since int64, frame int, c evstate.Cause) {
	if _, ok := fl.bad[ev]; ok || !e.roomIn(len(fl.bad), MaxEVsPerFlow) {
		return
	}
	unsure := false
	if m := e.pics.Parameters.EVMinActive; m != nil {
		if evstate.FloorHolds(c, len(fl.evs), len(fl.bad), *m) {
			return
		}
		// A requester also retires EVs on losses it infers from the SACK
		// bitmap (not only on timeouts): those the judge has not retired
		// may have used up the floor (EV-SET-6).
		out := len(fl.bad)
		fl.maybeBad.each(func(v uint32) {
			if _, b := fl.bad[v]; !b && v != ev {
				out++
			}
		})
		unsure = evstate.FloorHolds(c, len(fl.evs), out, *m)
	}
	fl.bad[ev] = badEV{since: since, frame: frame, cause: c, unsure: unsure}
	e.event(eventCtx{kind: evRetired, pt: pt, fl: fl, cause: c})
}

// ackOf returns the una update that first acknowledged psn.
func (f *flow) ackOf(psn uint32) unaEvent {
	for _, u := range f.unaHist {
		if !psnAfter(psn, u.una) {
			return u
		}
	}
	return unaEvent{}
}

// msgCtx is what the msg hook of a check sees: a first transmission's
// place in its message, as the requester's MSN window assembles messages
// from first transmissions in PSN order. A LAST write is shown twice: as
// it starts or continues its message, then as it ends it.
type msgCtx struct {
	pt    *point
	fl    *flow
	node  string
	p     *wire.Packet
	psn   uint32
	m     *msgState // updated for the write, but for the message's end
	phase msgPhase
	// follows: the message starts right after a complete previous one
	// (m.prev*); qpFirst: it is the QP's first, in a capture from QP start.
	follows, qpFirst bool
	bytes            uint64    // the message's bytes before this write
	bytesOK          bool      // ... all whole
	sizeSeen         bool      // a write before this one had its size reported (sizeFault)
	size             sizeFault // this write's
}

type msgPhase uint8

const (
	msgStart  msgPhase = iota + 1 // the write starts a message
	msgInside                     // continues it
	msgBroken                     // a FIRST or ONLY inside a message: assembly restarts at the next FIRST
	msgEnd                        // ends it (after msgStart or msgInside)
)

// message places a first transmission in its message and runs the msg
// hooks.
func (e *engine) message(x *sentCtx) {
	fl, p := x.fl, x.p
	m := &fl.msg
	op, psn := p.BTH.Opcode, x.psn
	if m.active && psn != m.nextPSN {
		m.active = false // a PSN gap (REQ-PSN-1 reports it); restart at the next FIRST
	}
	if !m.active && !op.IsFirst() {
		return // joined mid-message
	}
	c := &e.mx
	*c = msgCtx{pt: x.pt, fl: fl, node: x.req, p: p, psn: psn, m: m}
	switch {
	case !m.active:
		if m.havePrev && psn != m.nextPSN {
			m.havePrev = false
		}
		m.active = true
		m.msn, m.rqmsn, m.firstPSN, m.firstFr = p.METH.MSN, p.METH.RQMSN, psn, e.frameNo
		m.va0, m.rkey, m.dmaLen, m.bytes, m.bytesOK = p.RETH.VA, p.RETH.RKey, p.RETH.DMALength, 0, true
		m.sizeSeen, m.dmaSeen, m.stride = false, false, 0
		m.firstNs = e.now
		c.phase, c.follows = msgStart, m.havePrev
		// A write before it seen with a bad ICRC may have been the QP's
		// first: then it is not known to be.
		c.qpFirst = !m.havePrev && fl.startKnown && psn == fl.firstPSN && e.pics.Capture.FromQPStart && fl.badICRCCopy(wire.PSNAdd(psn, -1)) == 0
	case op == wire.OpWriteFirst || op == wire.OpWriteOnly || op == wire.OpWriteOnlyImm:
		c.phase = msgBroken
		e.runMsg(c)
		m.active = false
		return
	default:
		c.phase = msgInside
	}
	c.bytes, c.bytesOK, c.sizeSeen, c.size = m.bytes, m.bytesOK, m.sizeSeen, x.size
	if p.Trimmed {
		m.bytesOK = false
	}
	m.sizeSeen = m.sizeSeen || x.size != sizeOK
	m.dmaSeen = m.dmaSeen || x.size == sizeDMA
	m.bytes += uint64(len(p.Payload))
	m.nextPSN = wire.PSNAdd(psn, 1)
	e.runMsg(c)
	if c.phase == msgInside && psn == wire.PSNAdd(m.firstPSN, 1) && p.RETH.VA > m.va0 {
		m.stride = p.RETH.VA - m.va0 // for msgMTUs, once this va is judged
	}
	if !op.IsLast() {
		return
	}
	imm := op.HasImm()
	if imm {
		e.wimmPrune(fl)
	}
	c.phase = msgEnd
	e.runMsg(c)
	if imm && e.roomIn(len(fl.wimm), MaxPending) {
		fl.wimm = append(fl.wimm, wimmOpen{firstNs: m.firstNs, lastPSN: psn, frame: m.firstFr})
	}
	m.active, m.havePrev = false, true
	m.prevMSN, m.prevRQMSN, m.prevIMM, m.prevFrame = m.msn, m.rqmsn, imm, m.firstFr
}

func (e *engine) runMsg(c *msgCtx) {
	for _, k := range e.hk.msg {
		k.msg(e, c)
	}
}

// wimmPrune forgets the WriteIMMs completed before the message starting
// now began.
func (e *engine) wimmPrune(fl *flow) {
	keep := fl.wimm[:0]
	for _, w := range fl.wimm {
		if !w.done || w.doneNs >= fl.msg.firstNs {
			keep = append(keep, w)
		}
	}
	fl.wimm = keep
}

// advanceUna moves the requester's cumulative point (LR-SACK-1, RSP-ACK-2).
func (e *engine) advanceUna(fl *flow, cack uint32) {
	if fl.haveMax && psnAfter(cack, fl.maxSent) {
		return // not before the next unsent PSN: discarded by the requester
	}
	if fl.haveUna && !psnAfter(cack, fl.una) {
		return
	}
	fl.una, fl.haveUna = cack, true
	fl.retryEvents = 0
	fl.exhausted = false
	if len(fl.unaHist) >= 256 {
		fl.unaHist = append(fl.unaHist[:0], fl.unaHist[128:]...)
	}
	fl.unaHist = append(fl.unaHist, unaEvent{una: cack, ns: e.now, frame: e.frameNo})
	// Drop the PSNs now cumulatively acknowledged.
	fl.psns.dropThrough(cack)
	if len(fl.nackPend) > 0 {
		for q := range fl.nackPend {
			if !psnAfter(q, cack) {
				fl.delNACK(q)
			}
		}
	}
	for i := range fl.wimm {
		if w := &fl.wimm[i]; !w.done && !psnAfter(w.lastPSN, cack) {
			w.done, w.doneNs = true, e.now
		}
	}
}

// sackAtRequester applies a SACK to the requester's view.
func (e *engine) sackAtRequester(pt *point, fl *flow, s *wire.SETH) {
	t := e.now
	e.advanceUna(fl, s.CACKPSN)
	high, haveHigh := e.sackBitmap(fl, s)
	// Loss evidence: PSNs between una and the highest acknowledged PSN
	// that the SACK does not acknowledge (LR-RTX-4).
	if haveHigh && fl.haveUna && psnAfter(high, fl.una) {
		// PSNs up to fl.markedTo were marked by an earlier SACK, or
		// acknowledged, and none was resent since: start after them.
		from := fl.una
		if fl.haveMarked && psnAfter(fl.markedTo, from) {
			from = fl.markedTo
		}
		// The PSNs the table does not hold or holds acknowledged
		// selectively have nothing to mark: the walk visits the others
		// only, by the word (psnTable.openIn).
		stop, stopped := uint32(0), false
		// No PSN after from and before high (most SACKs, once marked):
		// span's range would be empty.
		q, end := from, from
		if psnAfter(high, wire.PSNAdd(from, 1)) {
			q, end = fl.psns.span(from, high)
		}
		for q != end {
			bm, n := fl.psns.openIn(q, end)
			for ; bm != 0; bm &= bm - 1 {
				p := wire.PSNAdd(q, bits.TrailingZeros64(bm))
				st := fl.psns.get(p)
				if st == nil || st.ackSel || st.loss.kind != 0 {
					continue
				}
				if st.lastNs > t {
					if !stopped {
						stop, stopped = wire.PSNAdd(p, -1), true // sent after this SACK's time: a later SACK marks it
					}
					continue
				}
				st.loss = signal{kind: sigGap, frame: e.frameNo, ns: t}
				if _, ok := fl.maybeBad.get(st.lastEV); !ok && e.roomIn(fl.maybeBad.len(), MaxEVsPerFlow) {
					fl.maybeBad.put(st.lastEV, t)
				}
			}
			q = wire.PSNAdd(q, int(n))
		}
		to := wire.PSNAdd(high, -1)
		if fl.haveMax && psnAfter(to, fl.maxSent) {
			to = fl.maxSent // PSNs not sent yet are marked when a SACK passes them
		}
		if stopped && psnAfter(to, stop) {
			to = stop
		}
		if !fl.haveMarked || psnAfter(to, fl.markedTo) || stopped {
			fl.markedTo, fl.haveMarked = to, true
		}
	}
	if s.MPR != 0 && e.dynMPR {
		if len(fl.dynMPR) >= 64 {
			fl.dynMPR = append(fl.dynMPR[:0], fl.dynMPR[32:]...)
		}
		fl.dynMPR = append(fl.dynMPR, unaEvent{una: uint32(s.MPR), ns: t, frame: e.frameNo})
	}
	switch c := evstate.OfSACK(s.M, s.PR); {
	case evstate.Revives(c):
		delete(fl.bad, s.Entropy) // a probe answer revives the EV (EV-ST-7, EV-ST-8)
		fl.maybeBad.del(s.Entropy)
	case evstate.Retires(c):
		e.retire(pt, fl, s.Entropy, t+e.grace, e.frameNo, c)
	}
}

// sackBitmap marks the PSNs a SACK's bitmap acknowledges selectively and
// returns the highest PSN it acknowledges (its cack when none is higher).
// Bits beyond the highest PSN sent are ignored.
func (e *engine) sackBitmap(fl *flow, s *wire.SETH) (high uint32, haveHigh bool) {
	base := s.BitmapBase()
	bm := s.SACKBitmap
	high, haveHigh = s.CACKPSN, true
	if bm == 0 {
		return high, haveHigh
	}
	dc := wire.PSNDiff(base, s.CACKPSN)
	dm := int32(0)
	if fl.haveMax {
		dm = wire.PSNDiff(base, fl.maxSent)
	}
	if !linearPSNs(dc) || !linearPSNs(dm) {
		return e.sackBitmapWrapped(fl, s)
	}
	// base+i keeps its order against cack and maxSent for every bit i:
	// the bits past maxSent go at once, and the highest PSN is the top bit.
	if fl.haveMax {
		if dm > 0 {
			return high, haveHigh
		}
		if -dm < 63 {
			bm &= 1<<(-dm+1) - 1
		}
	}
	if bm == 0 {
		return high, haveHigh
	}
	if top := int32(63 - bits.LeadingZeros64(bm)); dc+top > 0 {
		high = wire.PSNAdd(base, int(top))
	}
	t := &fl.psns
	if len(t.ring) == 0 {
		return high, haveHigh
	}
	size := uint32(len(t.ring))
	for bm &= t.openFrom(base); bm != 0; bm &= bm - 1 { // what the table does not hold, or earlier SACKs marked, goes by the word
		q := (base + uint32(bits.TrailingZeros64(bm))) & wire.PSNMask
		if psnDist(q, t.lo) >= size {
			continue
		}
		if en := &t.ring[q&(size-1)]; en.used && en.psn == q && !en.ackSel { // psns.get, inline
			t.markSel(q, &en.psnInfo)
			en.ackNs, en.ackFrame = e.now, e.frameNo
			if len(fl.nackPend) > 0 {
				fl.delNACK(q)
			}
		}
	}
	return high, haveHigh
}

// linearPSNs reports whether a PSN d from another, plus 0 to 63, stays
// within PSNDiff's range: psnAfter(base+i, x) is then PSNDiff(base, x)+i > 0.
func linearPSNs(d int32) bool { return d > -(1<<23)+64 && d < 1<<23-64 }

// sackBitmapWrapped is sackBitmap bit by bit, for a bitmap that crosses
// the point half the PSN space away from cack or maxSent.
func (e *engine) sackBitmapWrapped(fl *flow, s *wire.SETH) (high uint32, haveHigh bool) {
	base := s.BitmapBase()
	high, haveHigh = s.CACKPSN, true
	for bm := s.SACKBitmap; bm != 0; bm &= bm - 1 {
		q := wire.PSNAdd(base, bits.TrailingZeros64(bm))
		if fl.haveMax && psnAfter(q, fl.maxSent) {
			continue
		}
		e.ackSel(fl, q)
		if psnAfter(q, high) {
			high = q
		}
	}
	return high, haveHigh
}

// ackSel records that a SACK acknowledged PSN q selectively.
func (e *engine) ackSel(fl *flow, q uint32) {
	if st := fl.psns.get(q); st != nil && !st.ackSel {
		fl.psns.markSel(q, st)
		st.ackNs, st.ackFrame = e.now, e.frameNo
		if len(fl.nackPend) > 0 {
			fl.delNACK(q)
		}
	}
}

// nackAtRequester applies a NACK to the requester's view.
func (e *engine) nackAtRequester(pt *point, fl *flow, n *wire.NETH) {
	t := e.now
	st := fl.psns.get(n.NACKPSN)
	if st == nil {
		return // not sent, or cumulatively acknowledged: ignored (LR-NACK-6)
	}
	if n.Reason == wire.NACKUnexpEvent {
		// Fatal even when the PSN is selectively acknowledged: the
		// responder names the failed message's last PSN (AMB-100).
		e.fatalAt(pt, fl)
		return
	}
	if st.ackSel {
		return // not outstanding: ignored (LR-NACK-6)
	}
	if !n.Reason.Valid() {
		return
	}
	sig := signal{kind: sigNACK, frame: e.frameNo, ns: t, ev: n.Entropy, reason: n.Reason}
	st.nack, st.loss = sig, sig
	fl.retryEvents++
	e.checkExhausted(fl, t)
	switch n.Reason {
	case wire.NACKTrimmed, wire.NACKTrimmedLastHop, wire.NACKPSNOutOfWindow:
		if e.roomIn(len(fl.nackPend), MaxPending) {
			fl.putNACK(n.NACKPSN, pendingNACK{frame: e.frameNo, ns: t, reason: n.Reason})
		}
	}
}

func (e *engine) fatalAt(pt *point, fl *flow) {
	if fl.fatal {
		return
	}
	fl.fatal, fl.fatalNs, fl.fatalFrame = true, e.now+e.grace, e.frameNo
	e.event(eventCtx{kind: evFatal, pt: pt, fl: fl})
}

// eventCtx is what the event hook of a check sees: a state change of the
// requester's view.
type eventCtx struct {
	kind eventKind
	pt   *point
	fl   *flow
	// evRetired: what retired the EV, a timeout (evstate.CauseTimeout,
	// EV-ST-5) or a SACK (EV-ST-4).
	cause evstate.Cause
}

type eventKind uint8

const (
	evRetired eventKind = iota + 1 // an EV became ASSUMED_BAD
	evFatal                        // the QP went to ERROR (a fatal NACK or NAK)
	evCapped                       // the connection's PSN table is full: later PSNs are not tracked
)

func (e *engine) event(x eventCtx) {
	for _, c := range e.hk.event {
		c.event(e, &x)
	}
}

// sizeJudged reports whether the write's payload size can be judged: it
// was not trimmed, its pad count and DMA length are not at fault.
func sizeJudged(x *sentCtx) bool {
	return !x.p.Trimmed && x.size != sizePad && x.size != sizeNone && x.size != sizeDMA
}

// learnMTU takes into the model the path MTU the connection is seen to
// use (flow.mtu): the payload of its first FIRST or MIDDLE packet whose
// size can be judged and is one a path MTU can have. Small enough to
// inline: a connection that has its MTU costs its writes no call.
func (fl *flow) learnMTU(x *sentCtx) {
	if fl.mtu == 0 {
		fl.learnFirstMTU(x)
	}
}

// learnFirstMTU is learnMTU while the connection has no MTU.
func (fl *flow) learnFirstMTU(x *sentCtx) {
	op, n := x.p.BTH.Opcode, len(x.p.Payload)
	if sizeJudged(x) && (op == wire.OpWriteFirst || op == wire.OpWriteMiddle) && slices.Contains(pathMTUs, n) {
		fl.mtu = n
	}
}
