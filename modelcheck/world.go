package modelcheck

import (
	"fmt"
	"slices"
	"strings"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// packet is one packet in flight. It is immutable once made: a fault that
// changes a packet (trim, CE mark) makes a new one, so worlds share them.
type packet struct {
	p     wire.Packet
	from  uint8
	port  uint8  // 1-based port it arrives on at the other QP (its plane + 1)
	seq   uint32 // creation order; scenario runs deliver in this order (not hashed)
	id    uint64 // identity: a hash of every field the receiver can read
	base  uint64 // id without the probe ID, for probes and probe answers
	probe bool   // a probe, or a SACK answering one (pr = 1)
}

func (k *packet) to() int { return 1 - int(k.from) }

func (k *packet) op() wire.Opcode { return k.p.BTH.Opcode }

func (k *packet) isData() bool { return k.op().IsWrite() }

// ev is the EV the packet travels on (UDP source port).
func (k *packet) ev() uint32 { return k.p.EV(wire.EVModeUDP) }

// probeID is the probe ID a probe or a probe answer carries.
func (k *packet) probeID() uint16 {
	if k.op() == wire.OpProbe {
		return k.p.PETH.ProbeID
	}
	return uint16(k.p.SETH.AckPSNOffset)
}

// prober is the QP whose probe round a probe ID refers to.
func (k *packet) prober() int {
	if k.op() == wire.OpProbe {
		return int(k.from)
	}
	return k.to()
}

// key computes id and base. Left out: the probe timestamps (PETH, and the
// CC_STATE timestamp of a probe answer, which no code reads), the CC_STATE
// counters nothing reads (ooo_count, rcvd_bytes), and everything derived
// from the QP pair's static configuration (addresses, P_Key, QPNs of the
// peer). Data timestamps (TSETH) and their reflection in SACKs are kept:
// with Config.Timestamps they feed congestion control's RTT samples.
func (k *packet) key() {
	p := &k.p
	h := newHasher()
	b := &p.BTH
	h.mix(uint64(k.from) | uint64(k.port)<<8 | uint64(b.Opcode)<<16 | uint64(b.DestQP)<<24)
	// The payload's bytes are a function of the sender and the PSN
	// (data.go); its length is hashed below.
	h.mix(uint64(b.PSN) | boolBit(b.AckReq)<<32 | boolBit(b.Retransmit)<<33 | uint64(p.IP4.TOS)<<40)
	h.mix(uint64(k.ev()))
	k.probe = false
	switch {
	case b.Opcode.IsWrite():
		h.mix(uint64(p.METH.MSN) | uint64(p.METH.RQMSN)<<16 | uint64(len(p.Payload))<<32)
		h.mix(p.RETH.VA)
		h.mix(uint64(p.RETH.RKey) | uint64(p.RETH.DMALength)<<32)
		h.mix(uint64(p.ImmDt) | uint64(p.TSETH.TxTimestamp)<<32)
	case b.Opcode == wire.OpSACK:
		s := &p.SETH
		h.mix(uint64(s.M) | boolBit(s.PR)<<8 | uint64(s.MPR)<<16 | uint64(s.CACKPSN)<<24)
		h.mix(uint64(s.Entropy) | uint64(uint16(s.SACKOffset))<<32)
		h.mix(s.SACKBitmap)
		h.mix(boolBit(s.CC.RC) | uint64(s.CC.RcvCwndPen)<<8)
		if s.PR {
			k.probe = true
		} else {
			h.mix(uint64(uint16(s.AckPSNOffset)) | uint64(s.CC.TxTimestamp)<<16)
		}
	case b.Opcode == wire.OpNACK:
		n := &p.NETH
		h.mix(uint64(n.Reason) | uint64(n.Entropy)<<8)
		h.mix(uint64(n.NACKPSN))
	case b.Opcode == wire.OpAcknowledge:
		h.mix(uint64(p.AETH.Syndrome) | uint64(p.AETH.MSN)<<8)
	case b.Opcode == wire.OpProbe:
		k.probe = true
	}
	k.base = h.sum()
	if k.probe {
		h.mix(uint64(k.probeID()))
	}
	k.id = h.sum()
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// canon is the packet's contribution to the state hash: its identity, with
// a probe ID replaced by its age in probe rounds of the prober (the ID
// carries the round modulo 32, and the QP only compares IDs for equality).
func (k *packet) canon(w *world) uint64 {
	if !k.probe {
		return k.id
	}
	age := (probeRound(w.qp[k.prober()]) - k.probeID()>>11) & 31
	h := hasher{h: k.base}
	h.mix(uint64(age) | 1<<40)
	return h.sum()
}

// counters are the budget counters of Bounds.
type counters struct {
	drops, dups, trims, ces, fails, timers, ticks, flaps, ctl, modify, resource, dynmpr, penalty, injects uint8
}

func (c counters) faults() int { return int(c.drops) + int(c.dups) + int(c.trims) + int(c.ces) }

// ghost is what the invariants remember about the traffic QP s sends
// (s as requester, the other QP as responder).
type ghost struct {
	placed   uint32          // PSNs placed at the responder (RSP-DUP-1)
	acked    uint32          // PSNs ever acknowledged, selectively or cumulatively
	nackEV   [maxPSNs]uint32 // EV+1 a recoverable NACK or timeout named, until retransmitted
	retries  uint8           // retry events since una last advanced, counted from the events
	sendDone uint8           // send completions written
	sendOK   uint8           // of which successful
	immDone  uint8           // WriteIMM receive completions written by the responder
	// hold is when a PSN a resource NACK named may be retransmitted
	// (LR-NACK-2); 0: no hold-off.
	hold [maxPSNs]sm.Time
	// probeRun counts the consecutive probe answers with m = NONE of each
	// ASSUMED_BAD EV; probing marks EVs with a probe outstanding (EV-ST-7).
	probeRun [8]uint8
	probing  uint8
	// mem is the responder's memory: the content tag of each PSN-sized
	// slot of the buffer (data.go); wild marks a write outside it.
	mem  [maxPSNs]uint8
	wild bool
	// sentAt and rto are when an in-flight PSN was last sent and 1 + the
	// RTO exponent its timer must have, max(0, retries − linear_cnt) with
	// the retries counted above (LR-TMR-4); rto 0: not in flight.
	sentAt [maxPSNs]sm.Time
	rto    [maxPSNs]uint8
	txEV   [maxPSNs]uint8 // 1 + index of the EV an in-flight PSN was last sent on
	// stallAt is when the checker's stall timer expires (stall.go), 0 when
	// nothing waits; peerWin the window the responder last advertised
	// with dynamic MPR, 0 when none.
	stallAt sm.Time
	peerWin uint8
	// stallPSN is the offset of the PSN the stall timer times (while
	// stallAt is set); it is waiting's answer for this world, so the hash
	// leaves it out.
	stallPSN uint8
	// owed marks the PSNs the environment gave a reason to retransmit (a
	// recoverable NACK delivered, the checker's own timer expired) and no
	// retransmission of which has reached the network since (owed.go).
	owed uint32
	// rqHeld, rqPSN and rqNext follow the WriteIMMs the adversarial
	// requester's packets make the responder hold (answers.go): bit r of
	// rqHeld an RQMSN accepted and not yet delivered, rqPSN[r] 1 + the
	// offset of the PSN that carried it, rqNext 1 + the RQMSN delivered
	// last (WIMM-SM-1, WIMM-RSP-2).
	rqHeld uint8
	rqPSN  [maxRQ]uint8
	rqNext uint16
}

// world is one state of the model: the two QPs, time, the network and the
// budget counters, plus the ghost state of the invariants.
type world struct {
	qp     [2]*sm.QP
	now    sm.Time
	net    []*packet // a bag, sorted by id
	posted [2]uint8
	cnt    counters
	failed [2]uint32 // bit i: EV i of QP s's profile black-holes what s sends on it
	down   uint32    // planes down (bit p)
	res    [2]uint8  // responder resource condition of QP s
	dyn    [2]uint8  // dynamic MPR of QP s's responder, 0: none set
	g      [2]ghost
	sqd    [2]sqdGhost
	est    uint8 // bit s: QP s raised COMM_EST (commest.go)
	// QPs are shared between worlds until a step changes them (own);
	// fp caches a QP's fingerprint at time fpAt.
	owned [2]bool
	fp    [2]uint64
	fpOK  [2]bool
	fpAt  sm.Time
}

// clone copies w, sharing its QPs until own is called.
func (w *world) clone() *world {
	c := *w
	c.net = slices.Clone(w.net)
	c.owned = [2]bool{}
	return &c
}

// own makes QP s private to w before a step changes it.
func (w *world) own(s int) *sm.QP {
	if !w.owned[s] {
		w.qp[s] = w.qp[s].Clone()
		w.owned[s], w.fpOK[s] = true, false
	}
	return w.qp[s]
}

func (w *world) fingerprint(s int) uint64 {
	if w.fpAt != w.now {
		w.fpOK, w.fpAt = [2]bool{}, w.now
	}
	if !w.fpOK[s] {
		w.fp[s], w.fpOK[s] = fingerprint(w.qp[s], w.now), true
	}
	return w.fp[s]
}

// hash is the visited-set fingerprint of the world.
func (w *world) hash(scratch []uint64) (uint64, []uint64) { return w.hashOpt(scratch, true) }

// coarseHash is hash without the time budgets (timers, ticks) and without
// the QPs' random streams and rotations: the livelock check's notion of
// "the same state again".
func (w *world) coarseHash(scratch []uint64) (uint64, []uint64) { return w.hashOpt(scratch, false) }

func (w *world) hashOpt(scratch []uint64, budgets bool) (uint64, []uint64) {
	h := newHasher()
	if budgets {
		h.mix(w.fingerprint(0))
		h.mix(w.fingerprint(1))
	} else {
		h.mix(coarseFingerprint(w.qp[0], w.now))
		h.mix(coarseFingerprint(w.qp[1], w.now))
	}
	scratch = scratch[:0]
	for _, k := range w.net {
		scratch = append(scratch, k.canon(w))
	}
	slices.Sort(scratch)
	h.mix(uint64(len(scratch)))
	for _, v := range scratch {
		h.mix(v)
	}
	c := w.cnt
	if !budgets {
		c.timers, c.ticks = 0, 0
	}
	h.mix(uint64(w.posted[0]) | uint64(w.posted[1])<<8 | uint64(c.drops)<<16 | uint64(c.dups)<<24 | uint64(c.trims)<<32 |
		uint64(c.ces)<<40 | uint64(c.fails)<<48 | uint64(c.timers)<<56)
	h.mix(uint64(c.ticks) | uint64(c.flaps)<<8 | uint64(c.ctl)<<16 | uint64(c.modify)<<24 | uint64(w.down)<<32 | uint64(c.injects)<<40)
	h.mix(uint64(c.resource) | uint64(c.dynmpr)<<8 | uint64(c.penalty)<<56 | uint64(w.res[0])<<16 | uint64(w.res[1])<<24 | uint64(w.dyn[0])<<32 |
		uint64(w.dyn[1])<<40)
	h.mix(uint64(w.failed[0]) | uint64(w.failed[1])<<32)
	if w.sqd != ([2]sqdGhost{}) || w.est != 0 {
		h.mix(w.sqd[0].word() | w.sqd[1].word()<<32 | uint64(w.est)<<26)
	}
	for _, g := range w.g {
		if !budgets {
			// The checker's own retry count and stall timer run on while
			// a QP hangs: they are not the QPs' state.
			g.retries, g.stallAt = 0, 0
		}
		h.mix(uint64(g.placed) | uint64(g.acked)<<32)
		h.mix(uint64(g.owed))
		h.mix(uint64(g.retries) | uint64(g.sendDone)<<8 | uint64(g.immDone)<<16 | uint64(g.sendOK)<<24)
		for _, e := range g.nackEV {
			h.mix(uint64(e))
		}
		for _, t := range g.hold {
			if t > w.now {
				h.mix(uint64(t - w.now))
			} else {
				h.mix(0)
			}
		}
		h.mix(uint64(g.probing) | boolBit(g.wild)<<8 | uint64(g.peerWin)<<16)
		if g.stallAt != 0 {
			h.mix(uint64(g.stallAt-w.now) | 1<<62)
		}
		for p, r := range g.rto {
			if r != 0 {
				h.mix(uint64(w.now-g.sentAt[p]) | uint64(r)<<56 | uint64(g.txEV[p])<<48)
			}
		}
		for _, m := range g.mem {
			h.mix(uint64(m))
		}
		for _, r := range g.probeRun {
			h.mix(uint64(r))
		}
		if g.rqHeld != 0 || g.rqNext != 0 {
			h.mix(uint64(g.rqHeld) | uint64(g.rqNext)<<8 | 1<<63)
			for r, p := range g.rqPSN {
				if g.rqHeld&(1<<r) != 0 {
					h.mix(uint64(p) | uint64(r)<<8)
				}
			}
		}
	}
	return h.sum(), scratch
}

// insert adds k to the bag, keeping it sorted.
func (w *world) insert(k *packet) {
	i, _ := slices.BinarySearchFunc(w.net, k.id, func(x *packet, id uint64) int {
		switch {
		case x.id < id:
			return -1
		case x.id > id:
			return 1
		}
		return 0
	})
	w.net = slices.Insert(w.net, i, k)
}

func (w *world) remove(i int) { w.net = slices.Delete(w.net, i, i+1) }

func (w *world) copies(id uint64) int {
	n := 0
	for _, k := range w.net {
		if k.id == id {
			n++
		}
	}
	return n
}

// pktString describes a packet for counterexamples and logs.
func pktString(k *packet) string {
	p := &k.p
	b := &p.BTH
	dir := side[k.from] + ">" + side[k.to()] + " "
	var s string
	switch b.Opcode {
	case wire.OpSACK:
		h := &p.SETH
		s = fmt.Sprintf("SACK cack=%d", int32(h.CACKPSN<<8)>>8)
		if h.PR {
			s += fmt.Sprintf(" probe=%#x", uint16(h.AckPSNOffset))
		} else {
			s += fmt.Sprintf(" ack=%d", h.AckPSN())
		}
		if h.SACKBitmap != 0 {
			s += fmt.Sprintf(" bm@%d=%b", h.BitmapBase(), h.SACKBitmap)
		}
		s += fmt.Sprintf(" ev=%#x", h.Entropy)
		if h.M != wire.MNone {
			s += " m=" + h.M.String()
		}
	case wire.OpNACK:
		s = fmt.Sprintf("NACK %s psn=%d ev=%#x", p.NETH.Reason, p.NETH.NACKPSN, p.NETH.Entropy)
	case wire.OpAcknowledge:
		s = fmt.Sprintf("ACK psn=%d syn=%#x msn=%d", int32(b.PSN<<8)>>8, p.AETH.Syndrome, p.AETH.MSN)
	case wire.OpProbe:
		s = fmt.Sprintf("PROBE id=%#x ev=%#x", p.PETH.ProbeID, k.ev())
	default:
		s = fmt.Sprintf("%s psn=%d msn=%d", strings.TrimPrefix(b.Opcode.String(), "RDMA_"), b.PSN, p.METH.MSN)
		if b.Opcode.HasImm() {
			s += fmt.Sprintf(" rqmsn=%d", p.METH.RQMSN)
		}
		if b.Retransmit {
			s += " rtx"
		}
		s += fmt.Sprintf(" ev=%#x", k.ev())
		if k.isData() && len(p.Payload) == 0 && b.Opcode != wire.OpWriteOnly && b.Opcode != wire.OpWriteOnlyImm {
			s += " TRIMMED"
		}
	}
	if p.ECN() == 3 {
		s += " CE"
	}
	return dir + s
}
