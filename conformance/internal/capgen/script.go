package capgen

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
)

const (
	dscpControl   = 46
	dscpTrimmable = 4
	dscpRetx      = 8
	dscpNoTrim    = 0
	ect0          = 2
)

// requester builds the messages of one QP and sends their packets when
// the script says so.
type requester struct {
	s           *sim
	self, peer  *node
	next        uint32
	msn, rqmsn  uint16
	va          uint64
	pkts        map[uint32]*wire.Packet
	mtu         int
	unflagOnce  bool // fault Unflagged: the next retransmission forgets rtx
	reservedPSN int64
}

func newRequester(s *sim, self, peer *node, psn uint32) *requester {
	return &requester{s: s, self: self, peer: peer, next: psn, va: 0x10000, pkts: map[uint32]*wire.Packet{}, mtu: 256, reservedPSN: -1}
}

// message segments one work request (REQ-SEG-1, REQ-SEG-2) and returns its PSNs.
func (q *requester) message(imm bool, size int, immVal uint32) []uint32 {
	n := max(1, (size+q.mtu-1)/q.mtu)
	var psns []uint32
	for k := 0; k < n; k++ {
		var op wire.Opcode
		switch {
		case n == 1 && imm:
			op = wire.OpWriteOnlyImm
		case n == 1:
			op = wire.OpWriteOnly
		case k == 0:
			op = wire.OpWriteFirst
		case k < n-1:
			op = wire.OpWriteMiddle
		case imm:
			op = wire.OpWriteLastImm
		default:
			op = wire.OpWriteLast
		}
		lo := k * q.mtu
		hi := min(size, lo+q.mtu)
		pay := make([]byte, hi-lo)
		for i := range pay {
			pay[i] = byte(int(q.msn)*7 + lo + i)
		}
		p := &wire.Packet{}
		p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: q.peer.qpn, PSN: q.next, AckReq: op.IsLast(), TSPresent: true}
		p.METH = wire.METH{MSN: q.msn, RQMSN: q.rqmsn}
		p.TSETH = wire.TSETH{FType: 1}
		p.RETH = wire.RETH{VA: q.va + uint64(lo), RKey: 0x1234, DMALength: uint32(size)}
		if op.HasImm() {
			p.ImmDt = immVal
		}
		p.Payload = pay
		q.pkts[q.next] = p
		psns = append(psns, q.next)
		q.next = wire.PSNAdd(q.next, 1)
	}
	q.msn++
	if imm {
		q.rqmsn++
	}
	q.va += 0x10000
	return psns
}

// send transmits PSN psn at ns on EV ev, as a first transmission or a
// retransmission.
func (q *requester) send(ns int64, psn uint32, ev uint32, rtx bool, f fate) {
	q.s.at(ns, func() {
		orig := q.pkts[psn]
		dscp := uint8(dscpTrimmable)
		if rtx {
			dscp = dscpRetx
		}
		p := packet(q.self, q.peer, ev, dscp, ect0)
		p.BTH, p.METH, p.TSETH, p.RETH, p.ImmDt, p.Payload = orig.BTH, orig.METH, orig.TSETH, orig.RETH, orig.ImmDt, orig.Payload
		p.BTH.Retransmit = rtx
		if rtx && q.unflagOnce {
			p.BTH.Retransmit, q.unflagOnce = false, false
		}
		if int64(psn) == q.reservedPSN {
			p.BTH.Rsvd = 0x40
		}
		p.TSETH.TxTimestamp = uint16(ns / 128)
		what := "first transmission"
		if rtx {
			what = "retransmission"
		}
		note := fmt.Sprintf("%s→%s %s PSN %d msn %d, %s on EV 0x%08x", q.self.name, q.peer.name, p.BTH.Opcode, psn, p.METH.MSN, what, ev)
		if f.lost {
			note += " (lost in the fabric)"
		}
		if f.badICRC {
			note += " (ICRC corrupted)"
		}
		q.s.xmit(q.self, q.peer, planeOf(ev), ns, p, f, note)
	})
}

// probe sends a reliability probe on ev.
func (q *requester) probe(ns int64, ev uint32, id uint16) {
	q.s.at(ns, func() {
		p := packet(q.self, q.peer, ev, dscpNoTrim, ect0)
		p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: q.peer.qpn}
		p.PETH = wire.PETH{ProbeID: id, SPDCID: uint16(q.self.qpn), DPDCID: uint16(q.peer.qpn), TxTimestamp: uint16(ns / 128), FType: 1}
		q.s.xmit(q.self, q.peer, planeOf(ev), ns, p, fate{}, fmt.Sprintf("%s→%s probe %d on EV 0x%08x", q.self.name, q.peer.name, id, ev))
	})
}

// responder answers the data sent to one QP (spec/23-responder.md), one
// SACK per packet, ACKs when cack passes an ack_req PSN.
type responder struct {
	s          *sim
	self, peer *node
	cack       uint32
	w          uint32
	got        map[uint32]bool
	bytes      int64
	ackPend    map[uint32]bool
	lasts      map[uint32]bool
	done       uint32
	alwaysSkip map[uint32]bool
	probeM     []wire.Multipath
	bogus      bool
	unanswered bool
}

func newResponder(s *sim, self, peer *node, cack uint32) *responder {
	return &responder{s: s, self: self, peer: peer, cack: cack, w: 128, got: map[uint32]bool{},
		ackPend: map[uint32]bool{}, lasts: map[uint32]bool{}, alwaysSkip: map[uint32]bool{}}
}

func psnDist(a, b uint32) uint32 { return (a - b) & wire.PSNMask }

func (r *responder) arrive(p *wire.Packet, ns int64, plane int) {
	t := ns + rspDelay
	ev := p.EV(wire.EVModeSTEV)
	ce := p.ECN() == 3
	switch op := p.BTH.Opcode; {
	case op == wire.OpProbe:
		m := wire.MNone
		if ce {
			m = wire.MSkipOnce
		}
		if len(r.probeM) > 0 {
			m, r.probeM = r.probeM[0], r.probeM[1:]
		}
		if r.s.fault == NoAnswer && !r.unanswered {
			r.unanswered = true // the seeded bug: the probe gets no answer (RSP-PRB-1)
			return
		}
		r.sack(t, plane, 0, ev, p.PETH.TxTimestamp, true, p.PETH.ProbeID, m)
	case op == wire.OpEndpointReq:
		q := packet(r.self, r.peer, r.self.rev[plane], dscpControl, 0)
		q.BTH = wire.BTH{Opcode: wire.OpEndpointResp, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: p.BTH.PSN}
		q.EETH = wire.EETH{Op: p.ERTH.Op, TxTimestamp: p.ERTH.TxTimestamp}
		r.s.xmit(r.self, r.peer, plane, t, q, fate{}, fmt.Sprintf("%s→%s endpoint response %d", r.self.name, r.peer.name, p.BTH.PSN))
	case op.IsWrite():
		psn := p.BTH.PSN
		trimmed, lastHop := r.s.c.IsTrimmedDSCP(p.DSCP())
		d := psnDist(psn, r.cack)
		dup := d == 0 || d >= 1<<23 || r.got[psn]
		var ts uint16
		if p.Decoded&wire.HasTSETH != 0 || p.BTH.TSPresent {
			ts = p.TSETH.TxTimestamp
		}
		switch {
		case !dup && d > r.w:
			r.nack(t, plane, psn, ev, ts, wire.NACKPSNOutOfWindow)
		case trimmed && !dup:
			reason := wire.NACKTrimmed
			if lastHop {
				reason = wire.NACKTrimmedLastHop
			}
			r.nack(t, plane, psn, ev, ts, reason)
		case dup:
			r.sack(t, plane, psn, ev, ts, false, 0, r.verdict(psn, ce))
		default:
			r.got[psn] = true
			r.bytes += int64(len(p.Payload))
			if op.IsLast() {
				r.lasts[psn] = true
			}
			if p.BTH.AckReq {
				r.ackPend[psn] = true
			}
			if r.s.fault == SACKUnseen && !r.bogus && psn == 0xFFFFFE {
				r.got[0xFFFFFD], r.bogus = true, true // the seeded bug: claims the lost PSN
			}
			for r.got[wire.PSNAdd(r.cack, 1)] {
				r.cack = wire.PSNAdd(r.cack, 1)
				delete(r.got, r.cack)
				if r.lasts[r.cack] {
					r.done++
					delete(r.lasts, r.cack)
				}
			}
			r.sack(t, plane, psn, ev, ts, false, 0, r.verdict(psn, ce))
			due := false
			for q := range r.ackPend {
				if psnDist(r.cack, q) < 1<<23 {
					delete(r.ackPend, q)
					due = true
				}
			}
			if due {
				r.ack(t+10, plane)
			}
		}
	}
}

func (r *responder) verdict(psn uint32, ce bool) wire.Multipath {
	if r.alwaysSkip[psn] {
		delete(r.alwaysSkip, psn)
		return wire.MAlwaysSkip
	}
	if ce {
		return wire.MSkipOnce
	}
	return wire.MNone
}

func (r *responder) ctl(plane int, op wire.Opcode, psn uint32) *wire.Packet {
	p := packet(r.self, r.peer, r.self.rev[plane], dscpControl, 0)
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: r.peer.qpn, PSN: psn}
	return p
}

// sack sends a SACK triggered by trig (RSP-SACK-1, RSP-SACK-2) or, with
// pr, answering probe probeID (RSP-PRB-1).
func (r *responder) sack(t int64, plane int, trig, ev uint32, ts uint16, pr bool, probeID uint16, m wire.Multipath) {
	p := r.ctl(plane, wire.OpSACK, r.cack)
	s := &p.SETH
	s.CACKPSN, s.Entropy, s.M, s.PR = r.cack, ev, m, pr
	s.SPDCID, s.DPDCID = uint16(r.self.qpn), uint16(r.peer.qpn)
	base := wire.PSNAdd(r.cack, 1)
	if pr {
		s.AckPSNOffset = int16(probeID)
	} else {
		if off := wire.PSNDiff(trig, r.cack); off >= -32768 && off <= 32767 {
			s.AckPSNOffset = int16(off)
		}
		if d := psnDist(trig, r.cack); d > 64 && d <= r.w {
			base = wire.PSNAdd(trig, -63)
		}
	}
	s.SACKOffset = int16(wire.PSNDiff(base, r.cack))
	held := 0
	for q := range r.got {
		if d := psnDist(q, r.cack); d > 0 && d < 1<<23 {
			held++
			if i := psnDist(q, base); i < 64 {
				s.SACKBitmap |= 1 << i
			}
		}
	}
	s.CC = wire.CCState{TxTimestamp: ts, OOOCount: uint16(min(held, 32767)), RcvdBytes: uint32(r.bytes/256) & 0xFFFFFF}
	what := fmt.Sprintf("SACK cack %d for PSN %d", r.cack, trig)
	if pr {
		what = fmt.Sprintf("SACK answering probe %d", probeID)
	}
	r.s.xmit(r.self, r.peer, plane, t, p, fate{}, fmt.Sprintf("%s→%s %s, m %s, EV 0x%08x", r.self.name, r.peer.name, what, m, ev))
}

func (r *responder) nack(t int64, plane int, psn, ev uint32, ts uint16, reason wire.NACKReason) {
	p := r.ctl(plane, wire.OpNACK, psn)
	p.NETH = wire.NETH{Reason: reason, Entropy: ev, SPDCID: uint16(r.self.qpn), DPDCID: uint16(r.peer.qpn), NACKPSN: psn, TxTimestamp: ts}
	r.s.xmit(r.self, r.peer, plane, t, p, fate{}, fmt.Sprintf("%s→%s NACK %s for PSN %d, EV 0x%08x", r.self.name, r.peer.name, reason, psn, ev))
}

func (r *responder) ack(t int64, plane int) {
	p := r.ctl(plane, wire.OpAcknowledge, r.cack)
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit, MSN: r.done}
	r.s.xmit(r.self, r.peer, plane, t, p, fate{}, fmt.Sprintf("%s→%s ACK psn %d", r.self.name, r.peer.name, r.cack))
}

// script is the exchange of every capture but BeyondMPR: A writes six
// messages to B over two planes; one packet is lost, one trimmed, one
// CE-marked, the tail is lost; B retires an EV with ALWAYS_SKIP, A probes
// it back; A times out its tail; then an endpoint probe and a write from
// B to A.
func (s *sim) script() {
	f := s.fault
	q := newRequester(s, nodeA, nodeB, 0xFFFFFC)
	var psns []uint32
	psns = append(psns, q.message(false, 600, 0)...) // FFFFFC-FFFFFE
	psns = append(psns, q.message(false, 100, 0)...) // FFFFFF
	rq := q.rqmsn
	psns = append(psns, q.message(true, 300, 0xA1)...) // 0-1 (WriteIMM)
	psns = append(psns, q.message(false, 512, 0)...)   // 2-3
	psns = append(psns, q.message(true, 64, 0xA2)...)  // 4 (WriteIMM)
	psns = append(psns, q.message(false, 32, 0)...)    // 5
	if f == WIMMOrder {
		// The seeded bug: the two WriteIMMs swap their RQMSN, so the
		// responder would complete the second before the first.
		for _, p := range []uint32{0, 1} {
			q.pkts[p].METH.RQMSN = rq + 1
		}
		q.pkts[4].METH.RQMSN = rq
	}
	if f == Reserved {
		q.reservedPSN = 2
	}
	evs := []uint32{a1, a4, a2, a5, a3, a6, a1, a4, a2, a5}
	for i, psn := range psns {
		ft := fate{}
		switch i {
		case 1, 9:
			ft.lost = true
		case 5:
			ft.trim = true
		case 7:
			ft.ce = true
			ft.badICRC = f == BadICRC
		}
		q.send(int64(1000+1000*i), psn, evs[i], false, ft)
	}
	s.hosts[nodeB].rsp.alwaysSkip[4] = true
	s.hosts[nodeB].rsp.probeM = []wire.Multipath{wire.MAlwaysSkip, wire.MNone}
	if f == Premature {
		q.send(8500, 2, a3, true, fate{}) // resent before any loss signal or timeout
	}
	// Recovery.
	switch f {
	case GoBackN:
		rt := []uint32{a3, a1, a4, a5}
		for i, psn := range []uint32{0xFFFFFD, 0xFFFFFE, 0xFFFFFF, 0, 1, 2, 3, 4} {
			q.send(int64(20000+1000*i), psn, rt[i%len(rt)], true, fate{})
		}
	default:
		if f != SACKUnseen {
			q.unflagOnce = f == Unflagged
			q.send(20000, 0xFFFFFD, a3, true, fate{}) // the SACK gap shows it missing
		}
		ev := a1
		if f == NACKedEV {
			ev = a6 // the seeded bug: the EV the TRIMMED NACK reflects
		}
		q.send(21000, 1, ev, true, fate{})
		if f == BadICRC {
			q.send(22000, 3, a3, true, fate{})
		}
	}
	// B retired a2 with ALWAYS_SKIP; A probes it twice, one base timeout apart.
	q.probe(30000, a2, 1)
	q.probe(30000+timeoutNs+1000, a2, 2)
	// PSN 5, the tail, times out; its EV a5 is retired.
	q.send(10000+timeoutNs+2000, 5, a3, true, fate{})
	// New data on the revived a2.
	m6 := q.message(false, 48, 0)
	q.send(310000, m6[0], a2, false, fate{})
	// An endpoint EV probe from A to B.
	s.at(320000, func() {
		p := packet(nodeA, nodeB, a4, dscpControl, 0)
		p.BTH = wire.BTH{Opcode: wire.OpEndpointReq, PKey: 0xFFFF, DestQP: wire.EndpointQPN, PSN: 0x0101}
		p.ERTH = wire.ERTH{Op: wire.EPEVProbe, TxTimestamp: uint16(320000 / 128), FType: 1}
		s.xmit(nodeA, nodeB, planeOf(a4), 320000, p, fate{}, "A→B endpoint EV_PROBE request 257")
	})
	// B writes to A: the other direction of the QP pair.
	qb := newRequester(s, nodeB, nodeA, 0x500)
	mb := qb.message(false, 40, 0)
	qb.send(330000, mb[0], b1, false, fate{})
}

// scriptMPR sends 129 one-packet writes before the first loss is
// repaired: PSN 0 is lost, so PSN 128 lies one beyond una + 128 × MPR (1).
func (s *sim) scriptMPR() {
	q := newRequester(s, nodeA, nodeB, 0)
	evs := []uint32{a1, a4, a3, a5}
	for i := 0; i < 129; i++ {
		psn := q.message(false, 8, 0)[0]
		q.send(int64(1000+100*i), psn, evs[i%len(evs)], false, fate{lost: i == 0})
	}
	q.send(20000, 0, a6, true, fate{})   // the SACK gap shows PSN 0 missing
	q.send(25000, 128, a6, true, fate{}) // PSN_OOR_WINDOW NACK, now inside the window
}
