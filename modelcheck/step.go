package modelcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

var dscp = spec.DefaultProfile().DSCP

// actKind is the kind of one transition of the model.
type actKind uint8

// Transitions. Deliver, Drop, Dup, Trim, TrimLast and CE name a packet by
// its index in the world's sorted bag.
const (
	actPost     actKind = iota // QP side posts its next WR
	actDeliver                 // a packet reaches its QP (Receive)
	actDrop                    // the network loses a packet
	actDup                     // the network duplicates a packet
	actTrim                    // a switch trims a data packet (DSCP_TRIMMED)
	actTrimLast                // the last-hop switch trims it (DSCP_TRIMMED_LASTHOP)
	actCE                      // a switch marks an ECT packet CE
	actFail                    // EV idx of QP side fails for good
	actTimer                   // time jumps to the earliest deadline; due QPs Advance
	actTick                    // time advances a quarter timeout, short of every deadline
	actPort                    // plane idx goes down, or comes back up, at both QPs
	actCtl                     // MODIFY_EV_STATE: EV idx of QP side to state arg
	actModify                  // the application moves QP side to ERROR
	actResource                // QP side's responder resource condition becomes arg
	actDynMPR                  // QP side's responder advertises a dynamic MPR of arg PSNs
	actWait                    // scenarios only: time advances by dt (packets in flight meanwhile)
	actPenalty                 // QP side's responder sets rcv_cwnd_pen arg&0x7F and the restore flag arg>>7
	actInject                  // the adversarial requester (Config.Adversary) sends PSN idx to B
	actSQD                     // QP side moves to SQD or back to RTS (sqd.go)
	actRTS                     // QP side moves from RTR to RTS (commest.go)
)

var actNames = [...]string{"post", "deliver", "drop", "dup", "trim", "trim-lasthop", "ce-mark", "path-fail", "timer",
	"tick", "port", "controller", "modify-to-error", "resource", "dynamic-mpr", "wait", "receive-penalty", "inject", "sq-drain", "rts"}

// action is one transition; it is replayable: applied to the same world it
// gives the same successor.
type action struct {
	kind actKind
	side uint8
	idx  uint16
	arg  uint8
	dt   uint32 // actWait
}

// checker holds what one configuration's exploration shares.
type checker struct {
	cfg   Config
	evs   []uint32 // EV values in profile order (both QPs use the same profile)
	msgs  [2][]msgInfo
	limit int
	data  [2][][]byte // the bytes of each WR of each QP (data.go)
	// content is the payload of each PSN of each QP; tmpl and tmplPlane
	// the adversarial requester's packets, by PSN.
	content   [2][][]byte
	tmpl      []wire.Packet
	tmplPlane []uint8
	out       sm.Output
	log       stepLog
	tick      sm.Time
	trace     bool    // record NDJSON (replays and scenario runs)
	now       sm.Time // time of the step being applied
	rec       []byte  // NDJSON records of the current step
	seq       uint32  // packet creation counter
	// stallFired: the checker's stall timer of each QP expired in the
	// step being checked (stall.go).
	stallFired [2]bool
	node       *sm.Node // the Node both QPs share (SharedNode)
}

type msgInfo struct {
	first, n uint32
	imm      bool
	unsig    bool
	rqmsn    int
}

// stepLog is what one transition produced, per QP.
type stepLog struct {
	act      action
	pkt      *packet // the packet delivered (actDeliver)
	ev       [2][]sm.Event
	comps    [2][]sm.Completion
	placed   [2][]uint32 // PSNs placed by QP s (as responder)
	writes   [2][]placement
	sent     [2][]*packet
	holed    [2][]*packet // sent into a failed path
	rejected bool         // the environment assumption rules the step out
}

func (l *stepLog) reset(a action) {
	l.act, l.pkt, l.rejected = a, nil, false
	for s := range 2 {
		l.ev[s], l.comps[s], l.placed[s], l.sent[s], l.holed[s] = l.ev[s][:0], l.comps[s][:0], l.placed[s][:0], l.sent[s][:0], l.holed[s][:0]
		l.writes[s] = l.writes[s][:0]
	}
}

func newChecker(cfg Config) (*checker, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &checker{cfg: cfg, evs: cfg.evValues(), limit: cfg.retryLimit(), tick: sm.Timeout(cfg.TimeoutAttr) / 4}
	c.out.TracePackets = true
	for s := range 2 {
		for p := range uint32(maxPSNs) {
			c.content[s] = append(c.content[s], payload(s, p))
		}
		var psn uint32
		rq := 0
		for _, m := range cfg.Msgs[s] {
			c.msgs[s] = append(c.msgs[s], msgInfo{first: psn, n: uint32(m.Packets), imm: m.Imm, unsig: m.Unsignaled, rqmsn: rq})
			var d []byte
			for range m.Packets {
				d = append(d, c.content[s][psn]...)
				psn++
			}
			c.data[s] = append(c.data[s], d)
			if m.Imm {
				rq++
			}
		}
	}
	if cfg.Adversary {
		var err error
		if c.tmpl, c.tmplPlane, err = c.templates(); err != nil {
			return nil, err
		}
	}
	if cfg.Bounds.MaxCopies == 0 {
		c.cfg.Bounds.MaxCopies = 2
	}
	if cfg.MaxDistinct == 0 {
		c.cfg.MaxDistinct = 4_000_000
	}
	return c, nil
}

// initial builds the initial world: both QPs in RTS, the receive WRs their
// peer's WriteIMMs need posted, and with PostUpfront every WR posted.
func (c *checker) initial() (*world, error) {
	w := &world{}
	for s := range 2 {
		q, err := c.newQP(s)
		if err != nil {
			return nil, err
		}
		if err := c.bringUp(q, s); err != nil {
			return nil, err
		}
		for k := 0; k < c.cfg.recvWRs(s); k++ {
			if err := q.PostRecv(0, uint64(1000+k), &c.out); err != nil {
				return nil, err
			}
		}
		c.out.Reset()
		w.qp[s] = q
	}
	if c.cfg.PostUpfront {
		for s := range 2 {
			for range c.msgs[s] {
				nw, err := c.apply(w, action{kind: actPost, side: uint8(s)})
				if err != nil {
					return nil, err
				}
				if v := c.check(w, nw); v.any() { // also records the posts in the ghost state
					return nil, fmt.Errorf("modelcheck: %s: the initial posts violate %s", c.cfg.Name, strings.Join(v.details, "; "))
				}
				w = nw
			}
		}
	}
	return w, nil
}

// newQP makes QP s: on a Node of its own, or on the shared one
// (SharedNode), where its source is GID 1 + s.
func (c *checker) newQP(s int) (*sm.QP, error) {
	cfg, qc := c.cfg.smConfig(s)
	if !c.cfg.SharedNode {
		return sm.New(cfg, qc)
	}
	if c.node == nil {
		n, err := sm.NewNode(c.cfg.nodeConfig())
		if err != nil {
			return nil, err
		}
		c.node = n
	}
	qc.Addr.SGIDIndex = 1 + s
	return c.node.NewQP(qc)
}

func (c *checker) evIndex(v uint32) int {
	for i, e := range c.evs {
		if e == v {
			return i
		}
	}
	return -1
}

func (c *checker) failable(v uint32) bool {
	if c.cfg.FailableEVs == nil {
		return true
	}
	for _, e := range c.cfg.FailableEVs {
		if e == v {
			return true
		}
	}
	return false
}

// dynMPR is QP s's responder window in PSNs.
func (c *checker) dynMPR(w *world, s int) int {
	if w.dyn[s] == 0 {
		return c.cfg.MPR
	}
	return int(w.dyn[s])
}

// deadline is the earliest time either QP's Advance has work.
func deadline(w *world) sm.Time { return min(w.qp[0].NextDeadline(), w.qp[1].NextDeadline()) }

// actions appends the transitions enabled in w, in a fixed order.
func (c *checker) actions(w *world, dst []action) []action {
	if c.cfg.Adversary && int(w.cnt.injects) < c.cfg.Bounds.Injects {
		for p := range c.tmpl {
			dst = append(dst, action{kind: actInject, idx: uint16(p)})
		}
	}
	if !c.cfg.PostUpfront {
		for s := range 2 {
			if c.cfg.Adversary && s == 0 {
				continue
			}
			if int(w.posted[s]) < len(c.msgs[s]) {
				dst = append(dst, action{kind: actPost, side: uint8(s)})
			}
		}
	}
	dst = c.netActions(w, dst)
	dst = c.controlActions(w, dst)
	return dst
}

// netActions appends the network's transitions enabled in w: deliveries,
// faults of the packets in flight, path failures and time.
func (c *checker) netActions(w *world, dst []action) []action {
	b := &c.cfg.Bounds
	faultOK := b.NetFaults == 0 || w.cnt.faults() < b.NetFaults
	for i, k := range w.net {
		if i > 0 && w.net[i-1].id == k.id {
			continue // the same packet again: the same successors
		}
		idx := uint16(i)
		dst = append(dst, action{kind: actDeliver, idx: idx})
		if !faultOK {
			continue
		}
		if int(w.cnt.drops) < b.Drops {
			dst = append(dst, action{kind: actDrop, idx: idx})
		}
		if int(w.cnt.dups) < b.Dups && w.copies(k.id) < b.MaxCopies {
			dst = append(dst, action{kind: actDup, idx: idx})
		}
		if d := k.p.DSCP(); int(w.cnt.trims) < b.Trims && k.isData() && (d == dscp.Trimmable || d == dscp.TrimmableRetx) {
			dst = append(dst, action{kind: actTrim, idx: idx}, action{kind: actTrimLast, idx: idx})
		}
		if int(w.cnt.ces) < b.CEs && k.p.ECN() == 2 {
			dst = append(dst, action{kind: actCE, idx: idx})
		}
	}
	if int(w.cnt.fails) < b.PathFails {
		for s := range 2 {
			if len(c.msgs[s]) == 0 {
				continue
			}
			for i, v := range c.evs {
				if w.failed[s]&(1<<i) == 0 && c.failable(v) {
					dst = append(dst, action{kind: actFail, side: uint8(s), idx: uint16(i)})
				}
			}
		}
	}
	if d := deadline(w); d != sm.Never {
		if int(w.cnt.timers) < b.Timers {
			dst = append(dst, action{kind: actTimer})
		}
		if int(w.cnt.ticks) < b.Ticks && w.now+c.tick < d {
			dst = append(dst, action{kind: actTick})
		}
	}
	return dst
}

// controlActions appends the control plane's and the application's
// transitions enabled in w: ports, modify, responder conditions and the
// controller's EV states.
func (c *checker) controlActions(w *world, dst []action) []action {
	b := &c.cfg.Bounds
	if int(w.cnt.flaps) < b.PortFlaps {
		for p := 0; p < c.cfg.Planes; p++ {
			dst = append(dst, action{kind: actPort, idx: uint16(p)})
		}
	}
	for s := range 2 {
		if len(c.msgs[1-s]) == 0 || w.qp[s].State() == sm.StateError {
			continue
		}
		if int(w.cnt.modify) < b.Modify {
			dst = append(dst, action{kind: actModify, side: uint8(s)})
		}
		if int(w.cnt.resource) < b.Resource {
			for r := sm.ResourcesOK; r <= sm.NoOtherResource; r++ {
				if uint8(r) != w.res[s] {
					dst = append(dst, action{kind: actResource, side: uint8(s), arg: uint8(r)})
				}
			}
		}
		if int(w.cnt.penalty) < b.Penalty {
			dst = append(dst, action{kind: actPenalty, side: uint8(s), arg: 64}, action{kind: actPenalty, side: uint8(s), arg: 0x80})
		}
		if int(w.cnt.dynmpr) < b.DynMPR {
			for u := 1; u <= c.cfg.MPR; u++ {
				if u != c.dynMPR(w, s) {
					dst = append(dst, action{kind: actDynMPR, side: uint8(s), arg: uint8(u)})
				}
			}
		}
	}
	if int(w.cnt.ctl) < b.Controller {
		for s := range 2 {
			if len(c.msgs[s]) == 0 || c.cfg.SharedNode && s == 1 {
				continue // the profile operation is one action for both QPs
			}
			for i, v := range c.evs {
				st, _ := w.qp[s].EVStateOf(v)
				other, _ := w.qp[1-s].EVStateOf(v)
				for _, to := range []sm.EVState{sm.EVGood, sm.EVAssumedBad, sm.EVDenied} {
					if st != to || c.cfg.SharedNode && other != to {
						dst = append(dst, action{kind: actCtl, side: uint8(s), idx: uint16(i), arg: uint8(to)})
					}
				}
			}
		}
	}
	return c.rtsActions(w, c.sqdActions(w, dst))
}

// apply returns the successor of w under a; c.log describes the step.
func (c *checker) apply(w *world, a action) (*world, error) {
	nw := w.clone()
	c.now = nw.now
	c.log.reset(a)
	c.rec = c.rec[:0]
	out := &c.out
	switch a.kind {
	case actPost:
		s := int(a.side)
		k := int(nw.posted[s])
		wr := c.wr(s, k, c.msgs[s][k])
		nw.posted[s]++
		c.record("Post", sm.Event{QPN: qpns[s], MSN: uint16(k), Reason: uint8(wr.Opcode), Value: wr.WRID})
		if err := nw.own(s).Post(nw.now, wr, out); err != nil {
			return nil, fmt.Errorf("modelcheck: post WR %d on %s: %w", k+1, side[s], err)
		}
		c.collect(nw, s)
	case actTimer:
		nw.now = max(nw.now, deadline(nw))
		c.now = nw.now
		nw.cnt.timers++
		c.record("Timer", sm.Event{})
		for s := range 2 {
			if nw.qp[s].NextDeadline() <= nw.now {
				nw.own(s).Advance(nw.now, out)
				c.collect(nw, s)
			}
		}
		if c.cfg.SilentTimeouts && !c.silent(w) {
			c.log.rejected = true
		}
	case actTick:
		nw.now += c.tick
		c.now = nw.now
		nw.cnt.ticks++
		c.record("Tick", sm.Event{})
	case actWait:
		nw.now += sm.Time(a.dt)
		c.now = nw.now
	case actDeliver, actInject, actDrop, actDup, actTrim, actTrimLast, actCE, actFail:
		c.applyNet(w, nw, a)
	default:
		if err := c.applyControl(nw, a); err != nil {
			return nil, err
		}
	}
	return nw, nil
}

// applyNet applies a network transition of w to its successor nw.
func (c *checker) applyNet(w, nw *world, a action) {
	out := &c.out
	switch a.kind {
	case actDeliver:
		k := w.net[a.idx]
		nw.remove(int(a.idx))
		c.log.pkt = k
		c.recordPkt("Deliver", k)
		if c.cfg.Adversary && k.to() == 0 {
			return // the adversarial requester ignores what it is told
		}
		nw.own(k.to()).Receive(nw.now, int(k.port), &k.p, out)
		c.collect(nw, k.to())
	case actInject:
		c.seq++
		k := &packet{p: c.tmpl[a.idx], from: 0, port: c.tmplPlane[a.idx] + 1, seq: c.seq}
		k.key()
		nw.cnt.injects++
		c.recordPkt("Inject", k)
		nw.insert(k)
	case actDrop:
		c.recordPkt("NetDrop", w.net[a.idx])
		nw.remove(int(a.idx))
		nw.cnt.drops++
	case actDup:
		c.recordPkt("NetDup", w.net[a.idx])
		nw.insert(w.net[a.idx])
		nw.cnt.dups++
	case actTrim, actTrimLast, actCE:
		k := *w.net[a.idx]
		nw.remove(int(a.idx))
		tos := &k.p.IP4.TOS
		switch a.kind {
		case actCE:
			*tos |= 3
			nw.cnt.ces++
			c.recordPkt("NetCE", &k)
		default:
			d := dscp.Trimmed
			name := "NetTrim"
			if a.kind == actTrimLast {
				d, name = dscp.TrimmedLastHop, "NetTrimLastHop"
			}
			*tos = d<<2 | *tos&3
			k.p.Payload = nil
			nw.cnt.trims++
			c.recordPkt(name, &k)
		}
		k.key()
		nw.insert(&k)
	case actFail:
		s := int(a.side)
		v := c.evs[a.idx]
		nw.failed[s] |= 1 << a.idx
		nw.cnt.fails++
		c.record("NetFail", sm.Event{QPN: qpns[s], EV: v})
		for i := len(nw.net) - 1; i >= 0; i-- {
			if k := nw.net[i]; int(k.from) == s && (k.isData() || k.op() == wire.OpProbe) && k.ev() == v {
				nw.remove(i)
			}
		}
	}
}

// applyControl applies a transition of the control plane or the
// application to nw.
func (c *checker) applyControl(nw *world, a action) error {
	out := &c.out
	switch a.kind {
	case actPort:
		nw.down ^= 1 << a.idx
		nw.cnt.flaps++
		up := ^nw.down & (1<<c.cfg.Planes - 1)
		c.record("PortStatus", sm.Event{Plane: uint8(a.idx), From: uint8(1 - up>>a.idx&1), To: uint8(up >> a.idx & 1), Value: uint64(up << 1)})
		for s := range 2 {
			nw.own(s).SetPortStatus(nw.now, up<<1, up<<1, out)
			c.collect(nw, s)
		}
	case actModify:
		s := int(a.side)
		nw.cnt.modify++
		c.record("Modify", sm.Event{QPN: qpns[s], To: uint8(sm.StateError)})
		if err := nw.own(s).Modify(nw.now, sm.StateError, sm.Attr{}, 0, out); err != nil {
			return err
		}
		c.collect(nw, s)
	case actResource:
		s := int(a.side)
		nw.cnt.resource++
		nw.res[s] = a.arg
		c.record("Resource", sm.Event{QPN: qpns[s], Reason: a.arg})
		nw.own(s).SetResourceCondition(sm.ResourceCondition(a.arg))
	case actDynMPR:
		s := int(a.side)
		nw.cnt.dynmpr++
		nw.dyn[s] = a.arg
		c.record("DynamicMPR", sm.Event{QPN: qpns[s], Value: uint64(a.arg)})
		if err := nw.own(s).SetDynamicMPR(a.arg); err != nil {
			return err
		}
	case actPenalty:
		s := int(a.side)
		nw.cnt.penalty++
		c.record("ReceivePenalty", sm.Event{QPN: qpns[s], Value: uint64(a.arg)})
		if err := nw.own(s).SetReceivePenalty(a.arg&0x7F, a.arg&0x80 != 0); err != nil {
			return err
		}
	case actCtl:
		s := int(a.side)
		nw.cnt.ctl++
		c.record("Controller", sm.Event{QPN: qpns[s], EV: c.evs[a.idx], To: a.arg})
		if c.cfg.SharedNode {
			return c.profileEVState(nw, c.evs[a.idx], sm.EVState(a.arg))
		}
		if err := nw.own(s).SetEVState(nw.now, c.evs[a.idx], sm.EVState(a.arg), out); err != nil {
			return err
		}
		c.collect(nw, s)
	case actSQD:
		return c.applySQD(nw, a)
	case actRTS:
		return c.applyRTS(nw, a)
	}
	return nil
}

// profileEVState is MODIFY_EV_STATE on the shared Node's EV profile:
// both QPs change EV ev to st in one call; what they produce is split by
// QP (events and completions by QPN, packets by destination QP).
func (c *checker) profileEVState(w *world, ev uint32, st sm.EVState) error {
	if _, err := c.node.SetProfileEVState(w.now, []*sm.QP{w.own(0), w.own(1)}, 1, ev, st, &c.out); err != nil {
		return err
	}
	o := &c.out
	evs, pkts, cps := slices.Clone(o.Events), slices.Clone(o.Packets), slices.Clone(o.Completions)
	o.Reset()
	for s := range 2 {
		for _, e := range evs {
			if e.QPN == qpns[s] {
				o.Events = append(o.Events, e)
			}
		}
		for _, k := range pkts {
			if k.Pkt.BTH.DestQP == qpns[1-s] {
				o.Packets = append(o.Packets, k)
			}
		}
		for _, cp := range cps {
			if cp.QPN == qpns[s] {
				o.Completions = append(o.Completions, cp)
			}
		}
		c.collect(w, s)
	}
	return nil
}

// collect moves what QP s produced into the world and the step log.
func (c *checker) collect(w *world, s int) {
	o := &c.out
	l := &c.log
	l.ev[s] = append(l.ev[s], o.Events...)
	l.comps[s] = append(l.comps[s], o.Completions...)
	for _, p := range o.Placements {
		l.placed[s] = append(l.placed[s], p.PSN)
		l.writes[s] = append(l.writes[s], placement{psn: p.PSN, va: p.VA, n: len(p.Data), tag: c.tagOf(1-s, p.Data)})
	}
	if c.trace {
		for _, e := range o.Events {
			c.rec = e.AppendJSON(c.rec)
		}
	}
	for i := range o.Packets {
		og := &o.Packets[i]
		c.seq++
		k := &packet{p: og.Pkt, from: uint8(s), port: og.Plane + 1, seq: c.seq}
		k.key()
		if (k.isData() || k.op() == wire.OpProbe) && w.failed[s]&(1<<c.evIndex(og.EV)) != 0 {
			l.holed[s] = append(l.holed[s], k)
			continue
		}
		l.sent[s] = append(l.sent[s], k)
		w.insert(k)
	}
	o.Reset()
}

func (c *checker) record(kind string, e sm.Event) {
	if c.trace {
		e.Time = c.now
		c.rec = sm.AppendTraceRecord(c.rec, kind, e)
	}
}

// recordPkt writes a harness record about packet k: psn, ev (the path, or
// the EV a SACK/NACK reflects), reason (the BTH opcode), flags (1 retransmit,
// 2 trimmed, 4 CE).
func (c *checker) recordPkt(kind string, k *packet) {
	if !c.trace {
		return
	}
	e := sm.Event{Time: c.now, QPN: qpns[k.from], PSN: k.p.BTH.PSN, EV: k.ev(), Reason: uint8(k.op()), Plane: k.port - 1}
	switch k.op() {
	case wire.OpSACK:
		e.EV, e.PSN = k.p.SETH.Entropy, k.p.SETH.CACKPSN
	case wire.OpNACK:
		e.EV, e.PSN = k.p.NETH.Entropy, k.p.NETH.NACKPSN
	}
	if k.p.BTH.Retransmit {
		e.Flags |= 1
	}
	if d := k.p.DSCP(); k.isData() && (d == dscp.Trimmed || d == dscp.TrimmedLastHop) {
		e.Flags |= 2
	}
	if k.p.ECN() == 3 {
		e.Flags |= 4
	}
	c.rec = sm.AppendTraceRecord(c.rec, kind, e)
}

// silent reports whether every PSN that timed out in this step had no copy
// and no answer in flight before it (TLA+ Silent(p)).
func (c *checker) silent(pre *world) bool {
	for s := range 2 {
		for _, e := range c.log.ev[s] {
			if e.Kind != sm.EvTimeout {
				continue
			}
			for _, k := range pre.net {
				if about(k, s, e.PSN) {
					return false
				}
			}
		}
	}
	return true
}

// about reports whether k is a copy of QP s's PSN p or an answer to it.
func about(k *packet, s int, p uint32) bool {
	switch {
	case int(k.from) == s && k.isData():
		return k.p.BTH.PSN == p
	case k.to() != s:
		return false
	case k.op() == wire.OpNACK:
		return k.p.NETH.NACKPSN == p
	case k.op() == wire.OpSACK:
		h := &k.p.SETH
		if wire.PSNDiff(p, h.CACKPSN) <= 0 {
			return true
		}
		d := wire.PSNDiff(p, h.BitmapBase())
		return d >= 0 && d < 64 && h.SACKBitmap&(1<<d) != 0
	case k.op() == wire.OpAcknowledge:
		return wire.PSNDiff(p, k.p.BTH.PSN) <= 0
	}
	return false
}

// describe renders a step for counterexamples: the action, then what each
// QP did.
func (c *checker) describe(pre *world, a action, post *world) []string {
	var lines []string
	head := fmt.Sprintf("t=%-6s %s", fmtTime(post.now), actNames[a.kind])
	switch a.kind {
	case actPost:
		k := int(pre.posted[a.side])
		m := c.msgs[a.side][k]
		op := "WRITE"
		if m.imm {
			op = "WRITE_WITH_IMM"
		}
		head += fmt.Sprintf(" %s WR %d: %s of %d packet(s), PSNs %d-%d", side[a.side], k+1, op, m.n, m.first, m.first+m.n-1)
	case actDeliver, actDrop, actDup, actTrim, actTrimLast, actCE:
		head += " " + pktString(pre.net[a.idx])
	case actFail:
		head += fmt.Sprintf(" %s EV %#x", side[a.side], c.evs[a.idx])
	case actPort:
		st := "down"
		if post.down&(1<<a.idx) == 0 {
			st = "up"
		}
		head += fmt.Sprintf(" plane %d %s", a.idx, st)
	case actCtl:
		who := side[a.side]
		if c.cfg.SharedNode {
			who = "profile 1 (A and B)"
		}
		head += fmt.Sprintf(" %s EV %#x -> %s", who, c.evs[a.idx], sm.EVState(a.arg))
	case actModify:
		head += " " + side[a.side] + " to ERROR"
	case actResource:
		head += fmt.Sprintf(" %s responder resources: %s", side[a.side], resourceNames[a.arg])
	case actDynMPR:
		head += fmt.Sprintf(" %s responder window %d PSNs", side[a.side], a.arg)
	case actWait:
		head += fmt.Sprintf(" %dns", a.dt)
	case actInject:
		head += c.injectText(&c.tmpl[a.idx])
	case actSQD:
		head += " " + describeSQD(a)
	case actRTS:
		head += " " + side[a.side] + " RTR to RTS"
	case actPenalty:
		head += fmt.Sprintf(" %s rcv_cwnd_pen %d restore %v", side[a.side], a.arg&0x7F, a.arg&0x80 != 0)
	}
	lines = append(lines, head)
	for s := range 2 {
		k := 0
		for _, e := range c.log.ev[s] {
			var d string
			switch e.Kind {
			case sm.EvPacketSent, sm.EvSACKSent, sm.EvNACKSent, sm.EvACKSent, sm.EvProbeSent:
				if k < len(c.log.sent[s]) {
					d = "sends " + pktString(c.log.sent[s][k])
					k++
				}
			case sm.EvPlaced:
				d = fmt.Sprintf("places psn=%d", e.PSN)
			case sm.EvEVState:
				d = fmt.Sprintf("EV %#x %s->%s (%s)", e.EV, sm.EVState(e.From), sm.EVState(e.To), sm.EVCause(e.Reason))
			case sm.EvTimeout:
				d = fmt.Sprintf("timeout psn=%d ev=%#x", e.PSN, e.EV)
			case sm.EvStallTimeout:
				d = fmt.Sprintf("stall timeout psn=%d (no EV but %#x)", e.PSN, e.EV)
			case sm.EvRetry:
				d = fmt.Sprintf("retry %d", e.Value)
			case sm.EvQPState:
				d = fmt.Sprintf("QP %s->%s", sm.QPState(e.From), sm.QPState(e.To))
			case sm.EvIMMDelivered:
				d = fmt.Sprintf("delivers WriteIMM rqmsn=%d", e.Value)
			case sm.EvLost:
				d = fmt.Sprintf("queues psn=%d for retransmission", e.PSN)
			case sm.EvDuplicate:
				d = fmt.Sprintf("duplicate psn=%d", e.PSN)
			}
			if d != "" {
				lines = append(lines, "    "+side[s]+" "+d)
			}
		}
		for _, h := range c.log.holed[s] {
			lines = append(lines, "    "+side[s]+" sends "+pktString(h)+" (lost: the path failed)")
		}
		for _, cp := range c.log.comps[s] {
			if cp.Recv {
				lines = append(lines, fmt.Sprintf("    %s receive completion wr=%d %s imm=%#x rqmsn=%d", side[s], cp.WRID, cp.Status, cp.Imm, cp.RQMSN))
			} else {
				lines = append(lines, fmt.Sprintf("    %s send completion wr=%d %s", side[s], cp.WRID, cp.Status))
			}
		}
	}
	return lines
}

var resourceNames = [...]string{"OK", "NO_BITMAP", "NO_PKT_BUFFER", "NO_RESOURCE"}

func fmtTime(t sm.Time) string {
	if t%1000 == 0 {
		return fmt.Sprintf("%dus", t/1000)
	}
	return fmt.Sprintf("%.3fus", float64(t)/1000)
}
