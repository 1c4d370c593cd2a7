package workload

import (
	"encoding/binary"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/internal/evtable"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Observe implements fabric.Observer: it applies every step's placements
// to memory and checks, as they happen, the invariants of the package doc.
func (h *Harness) Observe(now Time, id fabric.EndpointID, out *sm.Output) {
	r := h.refs[id]
	if r == nil {
		return
	}
	if h.opt.Check && r.mrc != nil {
		h.events(r, out)
	}
	for i := range out.Placements {
		h.place(r, &out.Placements[i])
	}
	for i := range out.Completions {
		c := &out.Completions[i]
		if c.Recv {
			h.recvCompletion(id, r, c)
		} else {
			h.sendCompletion(r, c)
		}
	}
	if h.opt.Check && r.mrc != nil {
		if r.steps++; h.opt.BoundsEvery <= 1 || r.steps%h.opt.BoundsEvery == 0 {
			h.bounds(r)
		}
		if r.requester {
			h.drainObserve(id, r, out)
		}
	}
}

// events checks the QP's event stream: path-state changes only as the
// table of 21-paths.md allows, data only on GOOD EVs of planes that are up,
// every data PSN inside the MPR window, no retransmission on a NACKed EV,
// and no QP error.
func (h *Harness) events(r *ref, out *sm.Output) {
	q := r.mrc
	una := q.CumulativeACK()
	for i := range out.Events {
		e := &out.Events[i]
		switch e.Kind {
		case sm.EvEVState:
			from, to, c := sm.EVState(e.From), sm.EVState(e.To), sm.EVCause(e.Reason)
			if got := r.ev[e.EV]; got != from {
				h.fail("EV-ST-1", "QP %#x EV %#x left %s but was %s", q.QPN(), e.EV, from, got)
			}
			if !evtable.Allowed(from, to, c) {
				h.fail("EV-ST-10", "QP %#x EV %#x %s → %s on cause %d, which the path-state table does not allow",
					q.QPN(), e.EV, from, to, c)
			}
			r.ev[e.EV] = to
		case sm.EvPlane:
			if e.To == 0 {
				r.planeDown |= 1 << e.Plane
			} else {
				r.planeDown &^= 1 << e.Plane
			}
		case sm.EvStallTimeout:
			delete(r.avoid, e.PSN) // the wait's expiry ends the avoidance (LR-SM-3, AMB-44)
		case sm.EvNACKReceived:
			r.avoid[e.PSN] = e.EV
			if len(r.avoid) > 4*int(h.win) {
				for p := range r.avoid {
					if d := wire.PSNDiff(p, una); d < 0 || d > int32(h.win) {
						delete(r.avoid, p)
					}
				}
			}
		case sm.EvPacketSent:
			if !wire.Opcode(e.Reason).IsWrite() {
				break
			}
			if st := r.ev[e.EV]; st != sm.EVGood {
				h.fail("EV-ST-1", "QP %#x sent PSN %d on EV %#x in state %s (EV-SET-4)", q.QPN(), e.PSN, e.EV, st)
			}
			if r.planeDown&(1<<e.Plane) != 0 {
				h.fail("EV-PORT-2", "QP %#x sent PSN %d on plane %d, which is down", q.QPN(), e.PSN, e.Plane)
			}
			if d := wire.PSNDiff(e.PSN, una); d < 1 || uint32(d) > h.win {
				h.fail("MPR-WIN-1", "QP %#x sent PSN %d with una %d, W %d", q.QPN(), e.PSN, una, h.win)
			}
			if e.Flags&sm.FlagRetransmit != 0 {
				if ev, ok := r.avoid[e.PSN]; ok && ev == e.EV {
					h.fail("EV-ST-13", "QP %#x retransmitted PSN %d on the NACKed EV %#x", q.QPN(), e.PSN, ev)
				}
				delete(r.avoid, e.PSN)
			}
		case sm.EvQPError:
			if !h.opt.AllowErrors {
				h.fail("LR-TMR-7", "QP %#x entered ERROR (cause %d): the connection was lost", q.QPN(), e.Reason)
			}
		}
	}
}

// bounds checks that the requester's and responder's state stays within
// what their attributes allow, whatever the fabric does: PSNs in flight
// inside the window (MPR-WIN-1, REQ-PSN-4), WriteIMMs in flight and held
// within max_wimm and max_wimm_dest (WIMM-REQ-1, WIMM-RSP-4), bytes in
// flight within the window, and an EV table of fixed size whose active set
// per plane never exceeds the profile's (EV-SET-5).
func (h *Harness) bounds(r *ref) {
	q := r.mrc
	a := &h.opt.Attr
	if q.State() != sm.StateRTS {
		return
	}
	una := q.CumulativeACK()
	if out := wire.PSNDiff(q.NextPSN(), una) - 1; out < 0 || uint32(out) > h.win {
		h.fail("REQ-PSN-4", "QP %#x has %d PSNs outstanding, window %d", q.QPN(), out, h.win)
	}
	h.scratch = q.AppendInFlight(h.scratch[:0])
	for _, p := range h.scratch {
		if d := wire.PSNDiff(p, una); d < 1 || uint32(d) > h.win {
			h.fail("MPR-WIN-1", "QP %#x has PSN %d in flight with una %d", q.QPN(), p, una)
		}
	}
	if n := q.WIMMInFlight(); n < 0 || n > int(a.MaxWIMM) {
		h.fail("WIMM-REQ-1", "QP %#x has %d WriteIMMs in flight, max_wimm %d", q.QPN(), n, a.MaxWIMM)
	}
	h.held = q.WIMMHeld(h.held[:0])
	if len(h.held) > int(a.MaxWIMMDest) {
		h.fail("WIMM-RSP-4", "QP %#x holds %d WriteIMMs, max_wimm_dest %d", q.QPN(), len(h.held), a.MaxWIMMDest)
	}
	if b := q.InflightBytes(); b < 0 || b > int64(h.win)*int64(h.mtu) {
		h.fail("MPR-WIN-1", "QP %#x counts %d bytes in flight", q.QPN(), b)
	}
	h.evs = q.EVs(h.evs[:0])
	if len(h.evs) != h.nEVs {
		h.fail("EV-SET-2", "QP %#x has %d EVs, its profile %d", q.QPN(), len(h.evs), h.nEVs)
	}
	var per [sm.MaxPlanes]int
	for _, e := range h.evs {
		if e.Active {
			per[e.Plane]++
		}
		if e.State != r.ev[e.Value] {
			h.fail("EV-ST-1", "QP %#x EV %#x is %s, its events say %s", q.QPN(), e.Value, e.State, r.ev[e.Value])
		}
	}
	for pl, n := range per {
		if n > h.active {
			h.fail("EV-SET-5", "QP %#x has %d active EVs on plane %d, profile %d", q.QPN(), n, pl, h.active)
		}
	}
}

// place applies one placement to the responder's memory. With Check it
// first identifies the write the data belongs to (its version is in every
// word) and rejects data that is corrupt, lands at the wrong address,
// comes from a write already completed (a stale or duplicate packet), or
// repeats a chunk already placed (RSP-DUP-1).
func (h *Harness) place(r *ref, p *sm.Placement) {
	c := h.conns[r.conn]
	n := len(p.Data)
	c.Bytes += uint64(n)
	if h.opt.Bin > 0 {
		b := int(h.Sim.Now() / h.opt.Bin)
		for len(c.Series) <= b {
			c.Series = append(c.Series, 0)
		}
		c.Series[b] += uint64(n)
	}
	if !h.opt.Check || n == 0 {
		return
	}
	off := int64(p.VA) - Base
	if off < 0 || off%int64(h.mtu) != 0 || off+int64(n) > int64(h.opt.Memory) || n > h.mtu {
		h.fail("RSP-RCV-2", "placement of %d bytes at %#x, outside the chunks written", n, p.VA)
		return
	}
	chunk := int(off) / h.mtu
	if n < 8 {
		h.fail("REQ-SEG-1", "placement of %d bytes at chunk %d: too short to carry a version", n, chunk)
		return
	}
	w0 := binary.LittleEndian.Uint64(p.Data)
	v := w0 >> 24
	rec := h.live[v]
	switch {
	case rec == nil && v > 0 && v < h.nextVer:
		h.fail("RSP-DUP-1", "stale data: PSN %d placed bytes of write v%d at chunk %d after it completed", p.PSN, v, chunk)
	case rec == nil:
		h.fail("RSP-RCV-3", "PSN %d placed data of no write (word %#x) at chunk %d", p.PSN, w0, chunk)
	default:
		k := chunk - rec.chunk0
		want := min(h.mtu, rec.size-k*h.mtu)
		switch {
		case rec.node != r.node || k < 0 || k >= rec.nchunks:
			h.fail("REQ-SEG-3", "PSN %d placed write v%d at node %d chunk %d, outside its target", p.PSN, v, r.node, chunk)
		case n != want || !patternOK(p.Data, v, k*h.mtu):
			h.fail("REQ-PSN-2", "PSN %d placed %d corrupt or misplaced bytes of v%d at chunk %d", p.PSN, n, v, chunk)
		case rec.sendDone:
			h.fail("RSP-DUP-1", "stale data: PSN %d placed write v%d at chunk %d after it completed", p.PSN, v, chunk)
		case rec.placed[k/64]&(1<<(k%64)) != 0:
			h.fail("RSP-DUP-1", "PSN %d placed chunk %d of v%d a second time", p.PSN, k, v)
		default:
			rec.placed[k/64] |= 1 << (k % 64)
			rec.nplaced++
		}
	}
	copy(h.mem[r.node][off:], p.Data)
	h.last[r.node][chunk] = v
}

// sendCompletion checks a send completion: in post order (CMP-SND-2), and,
// when successful, with every byte of the write placed (CMP-SND-1); the
// chunks no later write has overwritten must hold exactly its data.
func (h *Harness) sendCompletion(r *ref, c *sm.Completion) {
	if !r.requester || len(r.posted) == 0 {
		h.fail("CMP-SND-2", "send completion of WR %d that was not outstanding", c.WRID)
		return
	}
	rec := r.posted[0]
	if rec.v != c.WRID {
		h.fail("CMP-SND-2", "send completion of WR %d, oldest outstanding is %d", c.WRID, rec.v)
		for i, x := range r.posted {
			if x.v == c.WRID {
				rec = x
				r.posted = append(r.posted[:i:i], r.posted[i+1:]...)
				break
			}
		}
	} else {
		r.posted = r.posted[1:]
	}
	cn := h.conns[r.conn]
	if c.Status != sm.StatusSuccess {
		cn.Failed++
		r.failed++
		if !h.opt.AllowErrors {
			h.fail("CMP-ERR-1", "WR %d completed with %s", c.WRID, c.Status)
		}
		h.forget(rec)
		if cn.stream != nil {
			h.Sim.At(h.Sim.Now(), cn.stream.refill)
		}
		return
	}
	cn.Completed++
	rec.sendDone = true
	if h.opt.Check {
		if rec.nplaced != rec.nchunks {
			h.fail("CMP-SND-1", "WR v%d completed with %d of %d packets placed", rec.v, rec.nplaced, rec.nchunks)
		}
		m := h.mem[rec.node]
		for k := 0; k < rec.nchunks; k++ {
			ch := rec.chunk0 + k
			if h.last[rec.node][ch] != rec.v {
				continue // a later write (another QP's) overwrote it
			}
			lo := ch * h.mtu
			if !patternOK(m[lo:lo+min(h.mtu, rec.size-k*h.mtu)], rec.v, k*h.mtu) {
				h.fail("CMP-SND-1", "WR v%d completed but chunk %d does not hold its data", rec.v, ch)
			}
		}
	}
	h.returnWrites(r, rec.v)
	if !rec.imm || rec.recvDone {
		h.forget(rec)
	}
	if cn.stream != nil {
		h.Sim.At(h.Sim.Now(), cn.stream.refill)
	}
}

// recvCompletion checks a WriteIMM receive completion: the immediate of
// the oldest WriteIMM not yet delivered, once, in send order (WIMM-RSP-2,
// CMP-RCV-1), with every earlier write of the QP placed (WIMM-RSP-1).
func (h *Harness) recvCompletion(id fabric.EndpointID, r *ref, c *sm.Completion) {
	if c.Status != sm.StatusSuccess {
		if !h.opt.AllowErrors {
			h.fail("CMP-ERR-2", "receive completion with %s", c.Status)
		}
		return
	}
	req := h.refs[r.peer]
	if len(req.wimm) == 0 {
		h.fail("CMP-RCV-1", "receive completion imm=%#x with no WriteIMM outstanding", c.Imm)
		return
	}
	rec := req.wimm[0]
	if uint32(rec.v) != c.Imm {
		h.fail("WIMM-RSP-2", "receive completion imm=%#x, the oldest WriteIMM outstanding is %#x", c.Imm, uint32(rec.v))
	}
	req.wimm = req.wimm[1:]
	rec.recvDone = true
	if h.opt.Check {
		for _, x := range req.posted {
			if x.v > rec.v {
				break
			}
			if x.nplaced != x.nchunks {
				h.fail("WIMM-RSP-1", "WriteIMM v%d completed while write v%d has %d of %d packets placed",
					rec.v, x.v, x.nplaced, x.nchunks)
			}
		}
	}
	if hist := h.opt.History; hist != nil {
		hist.Dequeue(h.clients+len(h.nodes)+req.client, uint64(req.client), c.Imm)
	}
	h.returnWrites(req, rec.v)
	if rec.sendDone {
		h.forget(rec)
	}
	// Keep the receive queue full (WIMM-RSP-3).
	h.Sim.At(h.Sim.Now(), func() {
		h.Sim.Input(id, func(now Time, out *sm.Output) {
			if r.mrc != nil {
				_ = r.mrc.PostRecv(now, c.WRID, out)
			} else {
				_ = r.rc.PostRecv(now, c.WRID, out)
			}
		})
	})
}

// returnWrites ends the history writes of every WR of r up to version v
// and reads their chunks: a completion makes a write visible, so a read
// right after it must see it or something later.
func (h *Harness) returnWrites(r *ref, v uint64) {
	hist := h.opt.History
	if hist == nil {
		return
	}
	k := 0
	for ; k < len(r.unreturned) && r.unreturned[k].v <= v; k++ {
		for _, w := range r.unreturned[k].writes {
			hist.EndWrite(w)
		}
	}
	for _, rec := range r.unreturned[:k] {
		for c := 0; c < rec.nchunks; c++ {
			h.Read(rec.node, rec.chunk0+c)
		}
	}
	r.unreturned = r.unreturned[k:]
}

func (h *Harness) forget(rec *wrRec) { delete(h.live, rec.v) }
