package conformance

import (
	"bytes"
	"net/netip"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// Frames of one clock tick on different interfaces have no order the
// capture can show: each interface is timestamped apart, and a capture
// tool writes the interfaces in whatever order it likes (dumpcap in runs,
// mergecap -a one after the other, mergecap at equal timestamps by input
// file). The merger therefore never takes their order from the file. It
// gives them the order their traffic implies, so that the verdicts are
// the same whatever the tool wrote:
//
//   - at a capture point, a frame arriving at the node the point is at
//     goes before one it sends: what a node receives can cause what it
//     sends in the same tick, not the reverse;
//   - then by the PSN a frame stands at in its sender's sequence: writes
//     by PSN, SACKs and ACKs by their cumulative PSN (cack_psn, an ACK's
//     PSN), NACKs by the PSN they refuse; a write before feedback of the
//     same PSN, which acknowledges it;
//   - then by kind and destination QP, and by the frame's bytes, so that
//     unrelated frames, too, are ordered by what they hold.
//
// Capture points are judged apart (each has its own connections), so
// frames of one tick at different points go by the points' names, and
// only frames of one point by their traffic.
//
// Each interface keeps its own order, so a frame can go first only with
// the frames ahead of it on its interface. The interfaces' heads are
// therefore ordered by what their interfaces hold of the tick (pickTie):
// a head waits while another interface of its point holds an earlier
// frame of its sequence (same kind, nodes and destination QP) further
// back, so that a SACK sent ahead of arrivals on one plane goes before
// the other plane's arrivals of higher PSNs, not after them. Only frames
// of one sequence decide so, since the order of unrelated frames says
// nothing about each other; among the heads that need not wait, the
// heads' keys decide.

// tieScan bounds the frames of one tick of one interface that the merger
// looks at to order it against another interface's; a tick with more is
// ordered by its first tieScan frames. The simulator's incast capture
// starts with a tick of 2,928 frames, about 365 on each of 8 interfaces,
// where each sender's frames are a few apart.
const tieScan = 512

// tieKey orders a frame among frames of its timestamp on other
// interfaces (the order above).
type tieKey struct {
	rank uint8 // 0: arrives at the node its capture point is at; 1: anything else
	mrc  bool  // an MRC frame: kind, pos and qp are set
	kind seqKind
	pos  uint32 // its place in its sequence: a PSN (see seqKind)
	qp   uint32 // BTH destination QP
	// pair hashes the frame's source and destination nodes: frames of one
	// sequence share it and qp, whatever address each plane uses.
	pair uint64
}

// seqKind is the sequence a frame's pos is a place in: frames of one kind
// and destination QP are of one sequence.
type seqKind uint8

const (
	seqWrite seqKind = iota // its PSN
	seqCum                  // SACK, ACK: the cumulative PSN
	seqNACK                 // the PSN refused
	seqProbe                // the BTH PSN, as for the kinds below
	seqEndpointReq
	seqEndpointResp
)

// before reports whether k goes before o.
func (k *tieKey) before(o *tieKey) bool {
	switch {
	case k.rank != o.rank:
		return k.rank < o.rank
	case k.mrc != o.mrc:
		return k.mrc
	case psnAfter(o.pos, k.pos) || psnAfter(k.pos, o.pos):
		return psnAfter(o.pos, k.pos)
	case k.kind != o.kind:
		return k.kind < o.kind
	case k.qp != o.qp:
		return k.qp < o.qp
	}
	return k.pair < o.pair
}

// sameSeq reports whether k and o are of one sequence.
func (k *tieKey) sameSeq(o *tieKey) bool {
	return k.mrc && o.mrc && k.kind == o.kind && k.qp == o.qp && k.pair == o.pair
}

// tieKey returns frame f's tieKey.
func (e *engine) tieKey(f *pcap.Frame, in *pcap.Interface) tieKey {
	k := tieKey{rank: 1}
	if _, arrives := e.arrivesAtPoint(f, in); arrives {
		k.rank = 0
	}
	b := f.Data
	var op wire.Opcode
	if off, ok := e.plainBTH(b); ok {
		src, dst, _ := ipAddrs(b)
		k.pair = e.nodeHash(src)*31 ^ e.nodeHash(dst)
		op, k.qp, k.pos = wire.Opcode(b[off]), u24(b[off+5:]), u24(b[off+9:])
		if op == wire.OpSACK {
			if len(b) < off+wire.BTHLen+wire.SETHLen {
				return k
			}
			k.pos = u24(b[off+wire.BTHLen+13:]) // cack_psn
		}
	} else {
		p := &e.tiePkt
		if e.codec.Decode(b, p) != nil {
			return k
		}
		op, k.qp, k.pos = p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN
		if p.IsIPv6 {
			k.pair = e.nodeHash(netip.AddrFrom16(p.IP6.Src))*31 ^ e.nodeHash(netip.AddrFrom16(p.IP6.Dst))
		} else {
			k.pair = e.nodeHash(netip.AddrFrom4(p.IP4.Src))*31 ^ e.nodeHash(netip.AddrFrom4(p.IP4.Dst))
		}
		if op == wire.OpSACK {
			k.pos = p.SETH.CACKPSN
		}
	}
	if !op.Valid() {
		return k
	}
	k.mrc = true
	switch {
	case op.IsWrite():
		k.kind = seqWrite
	case op == wire.OpSACK, op == wire.OpAcknowledge:
		k.kind = seqCum
	case op == wire.OpNACK:
		k.kind = seqNACK
	case op == wire.OpProbe:
		k.kind = seqProbe
	case op == wire.OpEndpointReq:
		k.kind = seqEndpointReq
	default:
		k.kind = seqEndpointResp
	}
	return k
}

// nodeHash hashes the name of an address's node as the judge names it
// (engine.node): a tie learnt from the capture's first frames (the
// engine's place), the PICS's node, or the address itself, written into
// a scratch buffer rather than allocated. The merger's engine names no
// address while judging, so its names stay those of the lookahead.
func (e *engine) nodeHash(a netip.Addr) uint64 {
	a = a.Unmap()
	var name []byte
	if n, ok := e.addrNode[a]; ok {
		name = append(e.tieName[:0], n...)
	} else if n, ok := e.pics.byAddr[a]; ok {
		name = append(e.tieName[:0], n...)
	} else {
		name = a.AppendTo(e.tieName[:0])
	}
	e.tieName = name
	h := uint64(14695981039346656037) // FNV-1a
	for _, c := range name {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// plainBTH returns the offset of a frame's BTH when the frame is plain:
// up to two VLAN tags, IPv4, or IPv6 without extension headers, then UDP
// to a port of the codec's. Other frames are decoded whole (tieKey): a
// key needs only the BTH and a SACK's cack_psn.
func (e *engine) plainBTH(b []byte) (int, bool) {
	off, et, ok := ipHeader(b)
	if !ok {
		return 0, false
	}
	udp := off + 40
	if et == 0x0800 {
		if b[off+9] != 17 || b[off+6]&0x3F|b[off+7] != 0 {
			return 0, false // not UDP, or a fragment
		}
		udp = off + int(b[off]&0xF)*4
	} else if b[off+6] != 17 {
		return 0, false
	}
	if len(b) < udp+8+wire.BTHLen || !e.codec.AcceptsPort(uint16(b[udp+2])<<8|uint16(b[udp+3])) {
		return 0, false
	}
	return udp + 8, true
}

// u24 reads a 24-bit big-endian number.
func u24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// tiePoint returns the capture point of a frame (of interface in).
func (e *engine) tiePoint(f *pcap.Frame, in *pcap.Interface) string {
	return e.view(f.Interface, in).point
}

// pointOf returns a waiting frame's capture point, asked once.
func (m *merger) pointOf(s *mslot) string {
	if !s.pointed {
		s.point = ""
		if m.point != nil {
			s.point = m.point(&s.f, s.in)
		}
		s.pointed = true
	}
	return s.point
}

// keyOf returns a waiting frame's tieKey, asked once.
func (m *merger) keyOf(s *mslot) *tieKey {
	if !s.keyed {
		s.key = tieKey{}
		if m.key != nil {
			s.key = m.key(&s.f, s.in)
		}
		s.keyed = true
	}
	return &s.key
}

// queueAt returns the k-th frame waiting in q.
func (m *merger) queueAt(q *mqueue, k int) *mslot {
	return m.at(q.idx[(q.head+k)&(len(q.idx)-1)])
}

// tickWhole reports whether q holds all of its frames of tick ns it will
// hold (a frame after them) or tieScan of them.
func (m *merger) tickWhole(q *mqueue, ns int64) bool {
	if m.queueAt(q, q.size-1).ns != ns {
		return true
	}
	return q.size >= tieScan
}

// mustPrecede reports whether the first frame of b's sequence among q's
// frames of tick ns, from its head on (at most tieScan of them), goes
// before b. The first decides: one interface carries a sequence in its
// own order.
func (m *merger) mustPrecede(q *mqueue, ns int64, b *tieKey) bool {
	if !b.mrc {
		return false
	}
	for k := 0; k < min(q.size, tieScan); k++ {
		s := m.queueAt(q, k)
		if s.ns != ns {
			break
		}
		if key := m.keyOf(s); key.sameSeq(b) {
			return key.before(b)
		}
	}
	return false
}

// pickTie returns, among the queues cand (by ID) whose heads share the
// earliest timestamp ns, the one whose head is judged next, and counts a
// tie at one capture point: of the heads no other queue of their point
// holds an earlier frame of the sequence of (blocked), the first by
// headFirst; by headFirst alone when every head is blocked. It returns
// nil when a queue of the tick may still receive frames of it, unless
// force.
func (m *merger) pickTie(ns int64, force bool, cand []int) *mqueue {
	if !force {
		for _, id := range cand {
			if !m.tickWhole(&m.queues[id], ns) {
				return nil
			}
		}
	}
	best := -1
	for _, id := range cand {
		if !m.blocked(id, ns, cand) && (best < 0 || m.headFirst(id, best)) {
			best = id
		}
	}
	if best < 0 {
		for _, id := range cand {
			if best < 0 || m.headFirst(id, best) {
				best = id
			}
		}
	}
	pt := m.pointOf(m.queueAt(&m.queues[best], 0))
	for _, id := range cand {
		if id != best && m.pointOf(m.queueAt(&m.queues[id], 0)) == pt {
			m.ties++
			break
		}
	}
	return &m.queues[best]
}

// blocked reports whether another queue of cand at the same capture point
// as queue qi's head holds, in tick ns, an earlier frame of its head's
// sequence (mustPrecede), which the head must not overtake.
func (m *merger) blocked(qi int, ns int64, cand []int) bool {
	h := m.queueAt(&m.queues[qi], 0)
	pt, k := m.pointOf(h), m.keyOf(h)
	if !k.mrc {
		return false
	}
	for _, id := range cand {
		r := &m.queues[id]
		if id != qi && m.pointOf(m.queueAt(r, 0)) == pt && m.mustPrecede(r, ns, k) {
			return true
		}
	}
	return false
}

// headFirst reports whether the head of queue qi goes before that of
// queue ri: by capture point name, then tie key, then bytes; the
// interface declared first when nothing tells them apart.
func (m *merger) headFirst(qi, ri int) bool {
	a, b := m.queueAt(&m.queues[qi], 0), m.queueAt(&m.queues[ri], 0)
	if pa, pb := m.pointOf(a), m.pointOf(b); pa != pb {
		return pa < pb
	}
	ka, kb := m.keyOf(a), m.keyOf(b)
	if ka.before(kb) || kb.before(ka) {
		return ka.before(kb)
	}
	if c := bytes.Compare(a.f.Data, b.f.Data); c != 0 {
		return c < 0
	}
	return qi < ri
}

// noteTies notes how many frames had their order across the interfaces
// of their capture point decided by tie keys.
func (m *merger) noteTies(e *engine) {
	if m.ties > 0 {
		e.note("%d frames shared their timestamp with a frame of another interface of their capture point: they were judged in the order their traffic implies (arrivals at the point's node first, then requests by PSN and feedback by its cumulative PSN), whatever order the capture tool wrote them in", m.ties)
	}
}
