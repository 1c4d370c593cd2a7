package peer

// The data plane: frames in (Receive), timers (Advance), and the
// statemachine's output turned into frames out (transmit).

import (
	"net/netip"

	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// MaxNeighbours bounds the peers whose MAC the agent learns per plane
// (the README's "Resource limits"): frames from further source addresses
// are still handled, their MAC is not kept.
const MaxNeighbours = 256

// learn records the MAC that ip's frames come from on plane, so that
// answers go back to it; a multicast or broadcast source MAC is never
// learned, and neither is a new address once MaxNeighbours are known.
func (a *Agent) learn(plane int, ip netip.Addr, mac [6]byte) {
	if mac[0]&1 != 0 {
		return
	}
	if _, known := a.neigh[plane][ip]; known || len(a.neigh[plane]) < MaxNeighbours {
		a.neigh[plane][ip] = mac
	}
}

// MaxCQEntries bounds the completions one QP's CQ holds until poll_cq
// takes them: room for a full send and a full receive queue of the
// largest depth a QP may ask for. MaxCQEntriesTotal bounds them over all
// CQs (about 3.5 MiB), since maxQPs full CQs would hold 450 MiB. A
// completion beyond either finds its CQ full (complete).
const (
	MaxCQEntries      = 2 * maxQueue
	MaxCQEntriesTotal = 1 << 16
)

// complete writes c to e's CQ. A full CQ is a CQ error, as in verbs: the
// completion is lost and IBV_EVENT_CQ_ERR raised for the QP, once until
// poll_cq makes room again; the QP itself carries on (AMB-95).
func (a *Agent) complete(e *qpEntry, c statemachine.Completion) {
	if len(e.cq) >= MaxCQEntries || a.cqHeld >= MaxCQEntriesTotal {
		if !e.cqFull {
			e.cqFull = true
			a.async.Add(statemachine.AsyncEvent{Type: statemachine.AsyncCQErr, QPN: e.qpn})
		}
		return
	}
	e.cq = append(e.cq, completion(c))
	a.cqHeld++
	if e.channel != nil && a.rules.wiresChannel() {
		e.channel.Offer(e.qpn, c)
	} else {
		e.notify.Offer(c)
	}
}

// Receive hands the agent one frame that arrived on plane (0-based) at
// time now. Frames that fail a wire check, are not for this node or name
// no QP are dropped and counted (RSP-RCV-1).
func (a *Agent) Receive(now statemachine.Time, plane int, frame []byte) {
	defer a.collect()
	a.node.RxPackets++
	if plane < 0 || plane >= a.ports {
		a.node.RxDropped++
		return
	}
	p := &a.pkt
	if err := a.codec.Decode(frame, p); err != nil {
		a.node.RxDropped++
		return
	}
	a.viol = a.codec.Check(frame, p, a.viol[:0])
	for _, v := range a.viol {
		if v.Req == wire.ReqICRC1 {
			a.node.RxBadICRC++
			if a.rules.acceptsBadICRC() {
				continue
			}
		}
		a.node.RxDropped++
		return
	}
	var src, dst netip.Addr
	if p.IsIPv6 {
		src, dst = netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst)
	} else {
		src, dst = netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst)
	}
	if dst != a.cfg.IP || p.SRv6 && !a.rules.decapsSRv6() {
		a.node.RxDropped++
		return
	}
	a.learn(plane, src, p.Eth.Src)
	if p.BTH.DestQP == wire.EndpointQPN {
		a.curSrc = src
		a.ep.Receive(now, plane+1, p, &a.out)
		return
	}
	e, ok := a.qps[p.BTH.DestQP]
	if !ok || e.qp == nil {
		a.node.RxUnknown++
		return
	}
	e.c.RxPackets++
	a.cur = &e.c
	switch p.BTH.Opcode {
	case wire.OpSACK:
		p.SETH.M = a.rules.sackVerdict(p.SETH.M, p.SETH.PR)
	case wire.OpNACK:
		p.NETH.Reason = a.rules.nackReason(p.NETH.Reason)
	}
	e.qp.Receive(now, plane+1, p, &a.out)
}

// Advance runs the timers due at now.
func (a *Agent) Advance(now statemachine.Time) {
	defer a.collect()
	for _, qpn := range a.order {
		if e := a.qps[qpn]; e.qp != nil && e.qp.NextDeadline() <= now {
			a.cur = &e.c
			e.qp.Advance(now, &a.out)
			a.collect()
		}
	}
	if a.ep.NextDeadline() <= now {
		a.ep.Advance(now, &a.out)
	}
	if a.psuDeadline() <= now {
		a.sendPSU(now)
	}
}

// NextDeadline is when Advance next has work, or statemachine.Never.
func (a *Agent) NextDeadline() statemachine.Time {
	d := min(a.ep.NextDeadline(), a.psuDeadline())
	for _, qpn := range a.order {
		if e := a.qps[qpn]; e.qp != nil {
			d = min(d, e.qp.NextDeadline())
		}
	}
	return d
}

// collect turns the statemachine's output into frames, memory writes,
// completions and counters.
func (a *Agent) collect() {
	o := &a.out
	for _, c := range o.Completions {
		if e, ok := a.qps[c.QPN]; ok {
			a.complete(e, c)
		}
	}
	for _, e := range statemachine.AsyncEventsOf(o, nil) {
		if a.rules.raisesAsync(e.Type) {
			a.async.Add(e)
		}
	}
	for _, b := range a.bat {
		b.Collect(o)
	}
	for _, pl := range o.Placements {
		for _, r := range a.mrs {
			if r.rkey == pl.RKey && pl.VA >= r.va && pl.VA-r.va <= uint64(len(r.buf)) && uint64(len(pl.Data)) <= uint64(len(r.buf))-(pl.VA-r.va) {
				copy(r.buf[pl.VA-r.va:], pl.Data)
				a.node.PlacedByte += uint64(len(pl.Data))
				break
			}
		}
	}
	for _, ev := range o.Events {
		if a.cfg.Trace != nil {
			a.cfg.Trace(ev)
		}
		if e, ok := a.qps[ev.QPN]; ok {
			e.c.count(ev.Kind) // a QP's events count for the node too
		}
		a.node.count(ev.Kind)
		switch ev.Kind {
		case statemachine.EvRemotePortMask:
			a.remotePortMask(ev)
		case statemachine.EvEVReplaced:
			if !a.rules.replacesEV() {
				a.denyReplacement(ev)
			}
		case statemachine.EvEPResponse:
			a.epResponse(ev)
		case statemachine.EvEPTimeout:
			if uint16(ev.PSN) < psuIDBase {
				a.epTO = append(a.epTO, uint16(ev.PSN))
			}
		}
	}
	for i := range o.Packets {
		a.transmit(&o.Packets[i])
	}
	o.Reset()
	a.cur = nil
}

// count adds one event of kind to the counters that track it.
func (c *counters) count(kind statemachine.EventKind) {
	switch kind {
	case statemachine.EvDuplicate:
		c.RxDup++
	case statemachine.EvIgnored:
		c.RxIgnored++
	case statemachine.EvTimeout:
		c.Timeouts++
	case statemachine.EvRetry:
		c.Retries++
	}
}

// transmit applies the egress faults, fills the per-port MAC addresses and
// encodes one packet.
func (a *Agent) transmit(o *statemachine.Outgoing) {
	p := &o.Pkt
	op := p.BTH.Opcode
	if !a.rules.sends(p) {
		return
	}
	switch {
	case op.IsWrite():
		p.BTH.Retransmit = a.rules.rtxFlag(p.BTH.Retransmit)
	case op == wire.OpSACK:
		p.SETH.M = a.rules.answerVerdict(p.SETH.M)
	}
	plane := int(o.Plane)
	if plane >= a.ports || a.rules.enabledPorts(a.ctl, 1<<(plane+1)) == 0 {
		a.node.RxDropped++ // an EV profile naming a port this node lacks
		return
	}
	p.UDP.SrcPort = a.rules.udpSrcPort(p.UDP.SrcPort)
	p.BTH.SE = a.rules.seFlag(p.BTH.SE)
	if !a.rules.encapsSRv6() {
		p.SRv6, p.HasSRH = false, false
	}
	p.Eth.Src = a.cfg.MACs[plane]
	dst := netip.AddrFrom4(p.IP4.Dst)
	if p.IsIPv6 {
		dst = netip.AddrFrom16(p.IP6.Dst)
	}
	if m, ok := a.neigh[plane][dst]; ok {
		p.Eth.Dst = m
	}
	b, err := a.codec.Append(nil, p)
	if err != nil {
		return
	}
	a.rules.seal(a, b, p)
	for _, c := range []*counters{&a.node, a.cur} {
		if c == nil {
			continue
		}
		c.TxPackets++
		switch {
		case op.IsWrite():
			c.TxData++
			if p.BTH.Retransmit {
				c.TxRetx++
			}
		case op == wire.OpSACK:
			c.TxSACKs++
		case op == wire.OpNACK:
			c.TxNACKs++
		case op == wire.OpAcknowledge:
			c.TxACKs++
		case op == wire.OpProbe:
			c.TxProbes++
		default:
			c.TxEP++
		}
	}
	a.tx = append(a.tx, Tx{Plane: plane, Frame: b})
}

// swapImm reverses the bytes of an encoded packet's ImmDt and recomputes
// its ICRC: only the byte order is wrong (the imm-byte-swap fault).
func (a *Agent) swapImm(b []byte) {
	var d wire.Packet
	if a.codec.Decode(b, &d) != nil {
		return
	}
	_, _, bth := d.Offsets()
	off := bth + 12 + 4 + 16 // BTH, METH, RETH
	if d.BTH.TSPresent {
		off += 4 // TSETH
	}
	if off+4 > len(b)-4 {
		return
	}
	b[off], b[off+1], b[off+2], b[off+3] = b[off+3], b[off+2], b[off+1], b[off]
	v := a.codec.ComputeICRC(b, &d)
	n := len(b)
	b[n-4], b[n-3], b[n-2], b[n-1] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
