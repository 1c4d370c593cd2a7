package conformance

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"slices"

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
// therefore ordered by what their interfaces hold of the tick (planPoint):
// a head waits while another interface of its point holds an earlier
// frame of its sequence (same kind, nodes and destination QP) further
// back, so that a SACK sent ahead of arrivals on one plane goes before
// the other plane's arrivals of higher PSNs, not after them. Only frames
// of one sequence decide so, since the order of unrelated frames says
// nothing about each other; among the heads that need not wait, the
// heads' keys decide.
//
// A tick is planned once, when it is whole (a later frame is read, or a
// queue holds one after it), and its frames then judged by the plan:
// most ticks of a simulator capture hold one frame sent at one point and
// its arrival at another, which the points' names order with no key.

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
func (k *tieKey) before(o *tieKey) bool { return k.cmp(o) < 0 }

// cmp returns -1 when k goes before o, 1 when o goes before k, else 0.
func (k *tieKey) cmp(o *tieKey) int {
	switch {
	case k.rank != o.rank:
		return sign(k.rank < o.rank)
	case k.mrc != o.mrc:
		return sign(k.mrc)
	case psnAfter(o.pos, k.pos):
		return -1
	case psnAfter(k.pos, o.pos):
		return 1
	case k.kind != o.kind:
		return sign(k.kind < o.kind)
	case k.qp != o.qp:
		return sign(k.qp < o.qp)
	case k.pair != o.pair:
		return sign(k.pair < o.pair)
	}
	return 0
}

// sign is -1 when first, else 1.
func sign(first bool) int {
	if first {
		return -1
	}
	return 1
}

// sameSeq reports whether k and o are of one sequence.
func (k *tieKey) sameSeq(o *tieKey) bool {
	return k.mrc && o.mrc && k.kind == o.kind && k.qp == o.qp && k.pair == o.pair
}

// tieKey writes frame f's tieKey to k, in place: a key returned would be
// copied twice on its way to the scratch that holds it.
func (e *engine) tieKey(f *pcap.Frame, in *pcap.Interface, k *tieKey) {
	*k = tieKey{rank: 1}
	if len(e.pics.Capture.Points) > 0 && e.arrivesHere(f, in) {
		k.rank = 0
	}
	b := f.Data
	var op wire.Opcode
	if ip, off, ok := e.plainBTH(b); ok {
		k.pair = e.pairHash(b[ip:], b[ip-2] == 0x86) // EtherType 0x86dd
		// The 24-bit fields are a 32-bit word's low three bytes, read from
		// the BTH as an array: plainBTH found it whole.
		h := (*[wire.BTHLen]byte)(b[off:])
		op, k.qp, k.pos = wire.Opcode(h[0]), binary.BigEndian.Uint32(h[4:])&0xFFFFFF, binary.BigEndian.Uint32(h[8:])&0xFFFFFF
		if op == wire.OpSACK {
			if len(b) < off+wire.BTHLen+wire.SETHLen {
				return
			}
			k.pos = binary.BigEndian.Uint32(b[off+wire.BTHLen+12:]) & 0xFFFFFF // cack_psn, SETH bytes 13-15
		}
	} else {
		p := &e.tiePkt
		if _, _, err := e.codec.DecodeCut(b, f.Length, &e.tieCut, p, &e.tieErr); err != nil {
			return
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
		return
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
}

// arrivesHere reports whether a frame is addressed to the node the PICS
// places its capture point at (false when the PICS places none). An
// address the PICS does not declare is named in a scratch buffer, not
// allocated.
func (e *engine) arrivesHere(f *pcap.Frame, in *pcap.Interface) bool {
	node, ok := e.pics.Capture.Points[e.view(f.Interface, in).point]
	if !ok {
		return false
	}
	dst, ok := ipDst(f.Data)
	if !ok {
		return false
	}
	dst = dst.Unmap()
	if n, ok := e.pics.byAddr[dst]; ok {
		return n == node
	}
	e.tieName = dst.AppendTo(e.tieName[:0])
	return string(e.tieName) == node
}

// nodeHash hashes the name of an address's node as the judge names it
// (engine.node): a tie learnt from the capture's first frames (the
// engine's place), the PICS's node, or the address itself, written into
// a scratch buffer rather than allocated. The merger's engine names no
// address while judging, so its names stay those of the lookahead, and
// a hash, once made, is kept in a small cache (tieAddrs) that place
// empties.
func (e *engine) nodeHash(a netip.Addr) uint64 {
	a = a.Unmap()
	b := a.As16()
	c := &e.tieAddrs[(b[15]^b[13]^b[11]^b[7]^b[3])%uint8(len(e.tieAddrs))]
	if c.ok && c.a == a {
		return c.h
	}
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
	*c = tieAddr{a: a, h: h, ok: true}
	return h
}

// tieAddr is a cached nodeHash.
type tieAddr struct {
	a  netip.Addr
	h  uint64
	ok bool
}

// plainBTH returns the offset of a frame's BTH when the frame is plain:
// up to two VLAN tags, IPv4, or IPv6 without extension headers, then UDP
// to a port of the codec's. Other frames are decoded whole (tieKey): a
// key needs only the BTH and a SACK's cack_psn.
func (e *engine) plainBTH(b []byte) (ip, bth int, ok bool) {
	// IPv4 of a 20-byte header, or IPv6, with no tag (the simulator's
	// frames): ipHeader's answer and the UDP header's place taken here.
	switch {
	case len(b) >= 14+20+8+wire.BTHLen && b[12] == 0x08 && b[13] == 0x00 && b[14]&0xF == 5:
		if b[23] != 17 || b[20]&0x3F|b[21] != 0 || !e.codec.AcceptsPort(uint16(b[36])<<8|uint16(b[37])) {
			return 0, 0, false
		}
		return 14, 14 + 20 + 8, true
	case len(b) >= 14+40+8+wire.BTHLen && b[12] == 0x86 && b[13] == 0xdd:
		if b[20] != 17 || !e.codec.AcceptsPort(uint16(b[56])<<8|uint16(b[57])) {
			return 0, 0, false
		}
		return 14, 14 + 40 + 8, true
	}
	return e.plainBTHAny(b)
}

// plainBTHAny is plainBTH for any frame, by ipHeader.
func (e *engine) plainBTHAny(b []byte) (ip, bth int, ok bool) {
	off, et, ok := ipHeader(b)
	if !ok {
		return 0, 0, false
	}
	udp := off + 40
	if et == 0x0800 {
		if b[off+9] != 17 || b[off+6]&0x3F|b[off+7] != 0 {
			return 0, 0, false // not UDP, or a fragment
		}
		udp = off + int(b[off]&0xF)*4
	} else if b[off+6] != 17 {
		return 0, 0, false
	}
	if len(b) < udp+8+wire.BTHLen || !e.codec.AcceptsPort(uint16(b[udp+2])<<8|uint16(b[udp+3])) {
		return 0, 0, false
	}
	return off, udp + 8, true
}

// pairHash returns the node pair hash of a plain frame whose IP header
// (IPv6 when v6, else IPv4, whole as ipHeader found it) starts h, kept in
// a small cache by the header's address bytes (tiePairs, emptied with
// tieAddrs).
func (e *engine) pairHash(h []byte, v6 bool) uint64 {
	a := h[12:20]
	if v6 {
		a = h[8:40]
	}
	n := len(a)
	x := binary.LittleEndian.Uint64(a[n-8:]) // IPv4: both addresses
	if n > 8 {
		x ^= binary.LittleEndian.Uint64(a[n/2-8:]) * 31 // the sources' low bytes
	}
	c := &e.tiePairs[(x*0x9E3779B97F4A7C15)>>58] // 64 entries
	if c.ok && bytes.Equal(c.raw[:c.n], a) {
		return c.h
	}
	var src, dst netip.Addr
	if n == 8 {
		src, dst = netip.AddrFrom4([4]byte(a[:4])), netip.AddrFrom4([4]byte(a[4:]))
	} else {
		src, dst = netip.AddrFrom16([16]byte(a[:16])), netip.AddrFrom16([16]byte(a[16:]))
	}
	c.h, c.n, c.ok = e.nodeHash(src)*31^e.nodeHash(dst), uint8(copy(c.raw[:], a)), true
	return c.h
}

// tiePair is a cached pairHash: the source and destination addresses as
// the IP header holds them.
type tiePair struct {
	raw [32]byte
	n   uint8
	ok  bool
	h   uint64
}

// tieCand is a queue holding frames of the tick being planned: the first
// n frames of queue id, whose point's rank is rank (pointRank).
type tieCand struct{ id, n, rank int }

// tieRun is a step of a tick's plan: judge the heads of queue q, n times.
type tieRun struct{ q, n int }

// pointRank returns the rank of queue id's capture point among the
// points met, by name (1 first), asked once of its head: an interface's
// point is the same for all its frames. A point met later ranks the
// queues again (a capture has a few points).
func (m *merger) pointRank(id int) int {
	if r := m.queues[id].rank; r > 0 {
		return r
	}
	return m.rankPoint(id)
}

// rankPoint is pointRank asked first of queue id: pointRank is the
// lookup alone, so that it is inlined.
func (m *merger) rankPoint(id int) int {
	q := &m.queues[id]
	pt := ""
	if s := q.front(); m.te != nil {
		pt = m.te.view(s.f.Interface, s.in).point
	} else if m.point != nil {
		pt = m.point(&s.f, s.in)
	}
	i, found := slices.BinarySearch(m.points, pt)
	if !found {
		m.points = slices.Insert(m.points, i, pt)
		for k := range m.queues {
			if r := &m.queues[k].rank; *r > i {
				*r++
			}
		}
	}
	q.rank = i + 1
	return q.rank
}

// planTick plans the order of the frames of one tick, m.cand: points by
// name, and the interfaces of one point by planPoint. A point with one
// interface in the tick keeps that interface's order, with no key asked,
// which is the usual tick of a simulator capture (a frame sent at one
// point, seen arriving at another).
func (m *merger) planTick() {
	m.plan, m.planAt = m.plan[:0], 0
	c := m.cand
	// Ranks are read once all are known: a point met now ranks the
	// others again.
	for _, x := range c {
		m.pointRank(x.id)
	}
	for i := range c {
		c[i].rank = m.queues[c[i].id].rank
	}
	for i := 1; i < len(c); i++ {
		for j := i; j > 0; j-- {
			pa, pb := c[j].rank, c[j-1].rank
			if pa > pb || pa == pb && c[j].id > c[j-1].id {
				break
			}
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	for i := 0; i < len(c); {
		j := i + 1
		for j < len(c) && c[j].rank == c[i].rank {
			j++
		}
		switch a, b := c[i].id, c[min(i+1, len(c)-1)].id; {
		case j == i+1:
			m.plan = append(m.plan, tieRun{a, c[i].n})
		case j == i+2 && c[i].n == 1 && c[i+1].n == 1:
			// Two frames at one point, planPoint's most common tick.
			if !m.pairFirst(a, b) {
				a, b = b, a
			}
			m.plan = append(m.plan, tieRun{a, 1}, tieRun{b, 1})
			m.ties++
		default:
			m.planPoint(c[i:j])
		}
		i = j
	}
	for _, x := range c {
		m.queues[x.id].cand = 0
	}
}

// tieScratch holds planPoint's arrays, reused from tick to tick. The
// frames of the point's tick are numbered queue after queue (queue g's
// from pos[g] to end[g], pos moving as they are planned); a sequence is
// numbered in the order it is first seen.
type tieScratch struct {
	keys  []tieKey
	slots []*mslot // each frame's slot
	seq   []int32  // each frame's sequence, -1 when it has none (not MRC)
	next  []int32  // the next frame of its queue and sequence, or -1
	ent   []int32  // the entry (ents) of its queue and sequence
	// ents holds, for each queue and sequence it holds, the queue's first
	// frame of the sequence not yet planned (at, -1 once none is left);
	// first[s] is sequence s's first entry, linked by nxt.
	ents     []tieEnt
	first    []int32
	rep      []int32 // a frame of each sequence
	lastQ    []int32 // per sequence: the last queue it was seen in,
	lastF    []int32 // its last frame there
	tab      []int32 // sequence+1 by hash of kind, QP and node pair
	pos, end []int32
	order    []int32 // planMerge's queues, in the order of their heads
}

type tieEnt struct{ q, at, nxt int32 }

// planPoint plans the frames of one tick at one capture point, held by
// the queues g (by ID): each step judges, of the heads no other queue
// holds an earlier frame of the sequence of (blocked), the first by key
// (tieFirst); the first by key alone when every head is blocked. Each
// frame judged while another queue of the point holds frames of the tick
// counts a tie. planScan does so for any tick, planMerge for the ticks
// mergeable says it may (most ticks).
func (m *merger) planPoint(g []tieCand) {
	m.loadTick(g)
	if m.ts.mergeable() {
		m.planMerge(g)
		return
	}
	m.ts.link()
	m.planScan(g)
}

// planScan is planPoint by firstHead and blocked, for any tick.
func (m *merger) planScan(g []tieCand) {
	ts := &m.ts
	for left := len(g); left > 0; {
		// The first head by key is usually not blocked (when the heads
		// are all of one sequence, it never is): the scan of every
		// head's blockers is needed only when it is.
		best := m.firstHead(g, false)
		if ts.blocked(best) {
			if b := m.firstHead(g, true); b >= 0 {
				best = b
			}
		}
		if left > 1 {
			m.ties++
		}
		if h := ts.pos[best]; ts.seq[h] >= 0 {
			ts.ents[ts.ent[h]].at = ts.next[h]
		}
		if !m.take(g, best) {
			left--
		}
	}
}

// mergeable reports whether planMerge plans ts's tick as planScan would:
// when the frames' PSNs (pos) are near one another and each queue's
// frames are of one sequence, as those of a queue of one frame are.
//
// PSNs within a quarter of the PSN space of the first frame's differ by
// less than half of it, so that psnAfter orders them as their distances
// from the first do, a total order. tieKey.cmp then orders keys as a
// list of fields (rank, MRC, PSN, kind, QP, node pair), which is
// transitive, and with the bytes and then the interface (distinct),
// tieFirst is a strict total order on the frames: firstHead returns the
// least head left. With one sequence per queue, the first frame of a
// sequence a queue holds is its head, so that only heads block heads:
// the least head is never blocked (its blocker would go before it by
// tieKey.cmp, hence by tieFirst). So planScan judges at each step the
// least head by tieFirst, which is what planMerge judges.
func (ts *tieScratch) mergeable() bool {
	from := ts.keys[0].pos - psnQuarter
	for i := range ts.keys {
		if psnDist(ts.keys[i].pos, from) >= 2*psnQuarter {
			return false
		}
	}
	for q, first := range ts.pos {
		for i := first + 1; i < ts.end[q]; i++ {
			if !ts.keys[i].sameSeq(&ts.keys[first]) {
				return false
			}
		}
	}
	return true
}

// psnQuarter is a quarter of the PSN space (mergeable).
const psnQuarter = 1 << 22

// planMerge is planScan for a tick mergeable says it is for: it judges
// the least head by tieFirst, step by step, holding the queues in the
// order of their heads (ts.order from lo on), each queue's next head put
// in its place.
func (m *merger) planMerge(g []tieCand) {
	ts := &m.ts
	o := ts.order[:0]
	for q := range g {
		o = m.placeHead(o, int32(q), g, 0)
	}
	for lo := 0; lo < len(o); {
		best := o[lo]
		lo++
		if lo < len(o) {
			m.ties++
		}
		if m.take(g, best) {
			o = m.placeHead(o, best, g, lo)
		}
	}
	ts.order = o
}

// placeHead puts queue q into o, whose queues from lo on are in
// tieFirst's order of their heads, at the place of its head.
func (m *merger) placeHead(o []int32, q int32, g []tieCand, lo int) []int32 {
	o = append(o, q)
	for j := len(o) - 1; j > lo && m.tieFirst(q, o[j-1], g); j-- {
		o[j], o[j-1] = o[j-1], q
	}
	return o
}

// take plans the head of queue best (of g) next, and reports whether the
// queue holds more frames of the tick.
func (m *merger) take(g []tieCand, best int32) bool {
	ts := &m.ts
	ts.pos[best]++
	if id := g[best].id; len(m.plan) > 0 && m.plan[len(m.plan)-1].q == id {
		m.plan[len(m.plan)-1].n++
	} else {
		m.plan = append(m.plan, tieRun{id, 1})
	}
	return ts.pos[best] < ts.end[best]
}

// firstHead returns the queue (of g) whose head goes first by tieFirst:
// of the heads not blocked when unblocked, else of all; -1 when none.
func (m *merger) firstHead(g []tieCand, unblocked bool) int32 {
	ts := &m.ts
	best := int32(-1)
	for gi := range ts.pos {
		q := int32(gi)
		if ts.pos[q] < ts.end[q] && (best < 0 || m.tieFirst(q, best, g)) && !(unblocked && ts.blocked(q)) {
			best = q
		}
	}
	return best
}

// loadTick fills m.ts with the frames of the queues g's tick and their
// keys.
func (m *merger) loadTick(g []tieCand) {
	ts := &m.ts
	n := 0
	for _, c := range g {
		n += c.n
	}
	ts.keys, ts.slots = grow(ts.keys, n), grow(ts.slots, n)
	ts.pos, ts.end = grow(ts.pos, len(g)), grow(ts.end, len(g))
	i := int32(0)
	for gi, c := range g {
		q := &m.queues[c.id]
		ts.pos[gi] = i
		for k := 0; k < c.n; k++ {
			si := q.idx[(q.head+k)&(len(q.idx)-1)]
			ts.slots[i] = si
			m.keyOf(si, &ts.keys[i])
			i++
		}
		ts.end[gi] = i
	}
}

// keyOf writes the tie key of the frame of slot s to k.
func (m *merger) keyOf(s *mslot, k *tieKey) {
	switch {
	case m.te != nil:
		m.te.tieKey(&s.f, s.in, k)
	case m.key != nil:
		*k = m.key(&s.f, s.in)
	default:
		*k = tieKey{}
	}
}

// pairFirst reports whether the head of queue a goes before that of
// queue b, the only frames of a tick at one point, as tieFirst orders
// them: by tie key, then bytes, then the interface declared first.
// planPoint plans such a tick so whichever way it takes: the first head
// by tieFirst is never blocked, since its blocker would go before it.
func (m *merger) pairFirst(a, b int) bool {
	sa, sb := m.queues[a].front(), m.queues[b].front()
	var ka, kb tieKey
	m.keyOf(sa, &ka)
	m.keyOf(sb, &kb)
	if c := ka.cmp(&kb); c != 0 {
		return c < 0
	}
	if c := bytes.Compare(sa.f.Data, sb.f.Data); c != 0 {
		return c < 0
	}
	return a < b
}

// grow returns s resized to n, reusing its array.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, max(n, 2*cap(s)))
	}
	return s[:n]
}

// link numbers the sequences of ts's frames and links each frame to the
// next of its queue and sequence.
func (ts *tieScratch) link() {
	n := len(ts.keys)
	ts.seq, ts.next, ts.ent = grow(ts.seq, n), grow(ts.next, n), grow(ts.ent, n)
	size := 8
	for size < 2*len(ts.keys) {
		size <<= 1
	}
	ts.tab = grow(ts.tab, size)
	clear(ts.tab)
	ts.ents, ts.first, ts.rep = ts.ents[:0], ts.first[:0], ts.rep[:0]
	ts.lastQ, ts.lastF = ts.lastQ[:0], ts.lastF[:0]
	for gi := range ts.pos {
		q := int32(gi)
		for i := ts.pos[q]; i < ts.end[q]; i++ {
			ts.next[i] = -1
			if !ts.keys[i].mrc {
				ts.seq[i] = -1
				continue
			}
			s := ts.seqOf(i)
			ts.seq[i] = s
			if ts.lastQ[s] == q {
				ts.next[ts.lastF[s]] = i
				ts.ent[i] = ts.ent[ts.lastF[s]]
			} else {
				ts.ent[i] = int32(len(ts.ents))
				ts.ents = append(ts.ents, tieEnt{q: q, at: i, nxt: ts.first[s]})
				ts.first[s], ts.lastQ[s] = ts.ent[i], q
			}
			ts.lastF[s] = i
		}
	}
}

// seqOf returns the number of frame i's sequence, numbering it when it
// is new.
func (ts *tieScratch) seqOf(i int32) int32 {
	k := &ts.keys[i]
	h := (uint64(k.kind)<<32 | uint64(k.qp)) * 0x9E3779B97F4A7C15
	h ^= k.pair * 0xC2B2AE3D27D4EB4F
	mask := uint64(len(ts.tab) - 1)
	for j := (h ^ h>>29) & mask; ; j = (j + 1) & mask {
		s := ts.tab[j] - 1
		if s < 0 {
			s = int32(len(ts.rep))
			ts.tab[j] = s + 1
			ts.rep = append(ts.rep, i)
			ts.first = append(ts.first, -1)
			ts.lastQ = append(ts.lastQ, -1)
			ts.lastF = append(ts.lastF, -1)
			return s
		}
		if ts.keys[ts.rep[s]].sameSeq(k) {
			return s
		}
	}
}

// blocked reports whether another queue holds, in the tick, an earlier
// frame of the sequence of queue q's head, which the head must not
// overtake. The queue's first frame of the sequence decides: one
// interface carries a sequence in its own order.
func (ts *tieScratch) blocked(q int32) bool {
	h := ts.pos[q]
	s := ts.seq[h]
	if s < 0 {
		return false
	}
	for e := ts.first[s]; e >= 0; e = ts.ents[e].nxt {
		if x := &ts.ents[e]; x.q != q && x.at >= 0 && ts.keys[x.at].before(&ts.keys[h]) {
			return true
		}
	}
	return false
}

// tieFirst reports whether the head of queue a (of g) goes before that
// of queue b: by tie key, then bytes; the interface declared first when
// nothing tells them apart.
func (m *merger) tieFirst(a, b int32, g []tieCand) bool {
	ts := &m.ts
	if c := ts.keys[ts.pos[a]].cmp(&ts.keys[ts.pos[b]]); c != 0 {
		return c < 0
	}
	da, db := ts.slots[ts.pos[a]].f.Data, ts.slots[ts.pos[b]].f.Data
	if c := bytes.Compare(da, db); c != 0 {
		return c < 0
	}
	return g[a].id < g[b].id
}

// noteTies notes how many frames had their order across the interfaces
// of their capture point decided by tie keys.
func (m *merger) noteTies(e *engine) {
	if m.ties > 0 {
		e.note("%d frames shared their timestamp with a frame of another interface of their capture point: they were judged in the order their traffic implies (arrivals at the point's node first, then requests by PSN and feedback by its cumulative PSN), whatever order the capture tool wrote them in", m.ties)
	}
}
