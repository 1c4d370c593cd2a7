package conformance

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// One address per plane. A node may own one address per fabric plane, one
// NIC port per plane (the deployment the white paper describes). The PICS
// can name them (nodes); for the nodes it does not, the traffic ties them:
// a write on an address pair the judge has not named yet that continues,
// on another plane at the same capture point, a message another pair's
// connection is sending makes the two pairs one QP's planes. The PICS may
// declare one end alone (the node whose ports are captured): its
// addresses come from the PICS, and the other end's are tied. The proof
// is all of:
//
//   - each address of the new pair is unnamed (no earlier frame used it)
//     and undeclared (the PICS's nodes do not list it), and then is tied,
//     or is declared as the node of the connection's end; at least one is
//     tied;
//   - the capture point knows the frame's plane, and the connection has not
//     been seen on that plane;
//   - the same responder QP number (dest_qp);
//   - a MIDDLE or LAST packet of the connection's message in progress: the
//     same r_key and dma_length, a PSN within the message, and a VA at
//     exactly its PSN's offset in the message (path MTU bytes per PSN);
//   - each tied address differs from the one it is tied to only in its
//     network part: the same interface identifier (IPv6 low 64 bits) or
//     the same low 16 bits (IPv4), so that a parallel judge (Options.Jobs)
//     gives both pairs to one worker (a declared node goes by its name).
//
// The tied addresses then name the connection's nodes (the first pair
// seen), for every later frame in either direction. Frames before the tie
// keep the names they had; a tie the capture's first learnWindow frames
// show is learnt before any frame is judged (below), so none does.

// tiePlanes ties a write's address pair to a connection on another plane
// (see above); it runs before the frame's addresses are named.
// Most writes pass here, from the source last found untied (untiedSrc):
// tested inline, before tieFrom builds the pair.
func (e *engine) tiePlanes(pt *point, p *wire.Packet) {
	if p.BTH.Opcode.IsFirst() || pt.curPlane < 0 || len(e.addrNode)+2 > MaxNodes {
		return
	}
	if ip, _, _ := p.Offsets(); ip != 0 && !p.IsIPv6 && netip.AddrFrom4(p.IP4.Src) == pt.untiedSrc {
		return
	}
	e.tieFrom(pt, p)
}

// tieFrom is tiePlanes past its inline tests.
func (e *engine) tieFrom(pt *point, p *wire.Packet) {
	src, dst, ok := ipPair(p)
	if !ok || src == pt.untiedSrc {
		return
	}
	// An address already named keeps its name: it may only be a declared
	// node's, matched with the connection's end.
	tieSrc := !e.named(src)
	if !tieSrc && !e.pics.declared(src) {
		// Named stays named (addrNode only grows) and the PICS does not
		// change: every later write from src returns here (untiedSrc).
		pt.untiedSrc = src
		return
	}
	tieDst := !e.named(dst)
	if !tieDst && (!tieSrc || !e.pics.declared(dst)) {
		return
	}
	for _, fl := range pt.flows {
		if fl.key.qpn != p.BTH.DestQP || fl.key.partial || fl.planes[pt.curPlane] || !e.inMessage(fl, p) {
			continue
		}
		if !e.sameEnd(src, tieSrc, fl.key.req) || !e.sameEnd(dst, tieDst, fl.key.rsp) {
			continue
		}
		var tied []string
		if tieSrc {
			e.cacheNode(src, fl.key.req)
			tied = append(tied, fmt.Sprintf("address %s taken as node %s", src, fl.key.req))
		}
		if tieDst {
			e.cacheNode(dst, fl.key.rsp)
			tied = append(tied, fmt.Sprintf("address %s taken as node %s", dst, fl.key.rsp))
		}
		e.note("%s: it carries connection %s on plane %d (one address per plane, tied by the traffic; declare nodes in the PICS to be sure)",
			strings.Join(tied, " and "), fl.key, pt.curPlane)
		return
	}
}

// sameEnd reports whether address a may stand for a connection's end node
// on another plane: an address to tie (tie) that differs from the node's
// (an undeclared address) in its network part alone, or an address the
// PICS declares for node.
func (e *engine) sameEnd(a netip.Addr, tie bool, node string) bool {
	if tie {
		return sameHost(a, e.addrOf(node))
	}
	return e.pics.nodeOf(a) == node
}

// inMessage reports whether write p is a packet of fl's message in
// progress: same r_key and dma_length, a PSN within the message and the
// VA of its offset.
func (e *engine) inMessage(fl *flow, p *wire.Packet) bool {
	m := &fl.msg
	if !m.active || p.RETH.RKey != m.rkey || p.RETH.DMALength != m.dmaLen {
		return false
	}
	mtu := fl.mtu
	if v := e.pics.Parameters.PathMTU; v != nil {
		mtu = *v
	}
	k := uint64(psnDist(p.BTH.PSN, m.firstPSN))
	if mtu <= 0 || k == 0 || k >= 1<<23 || k*uint64(mtu) >= uint64(m.dmaLen) {
		return false
	}
	return p.RETH.VA == m.va0+k*uint64(mtu)
}

// named reports whether an address was named already, or is declared.
func (e *engine) named(a netip.Addr) bool {
	for i := range e.lastAddr {
		if l := &e.lastAddr[i]; l.ok && l.a == a {
			return true
		}
	}
	if _, ok := e.addrNode[a]; ok {
		return true
	}
	_, ok := e.pics.byAddr[a.Unmap()]
	return ok
}

// addrOf returns the address a node name stands for when the name is an
// undeclared address (the invalid address otherwise).
func (e *engine) addrOf(node string) netip.Addr {
	a, err := netip.ParseAddr(node)
	if err != nil {
		return netip.Addr{}
	}
	return a
}

// sameHost reports whether two addresses of one family share their host
// part: the IPv6 interface identifier, the IPv4 low 16 bits.
func sameHost(a, b netip.Addr) bool {
	a, b = a.Unmap(), b.Unmap()
	switch {
	case a.Is6() && b.Is6():
		x, y := a.As16(), b.As16()
		return [8]byte(x[8:]) == [8]byte(y[8:])
	case a.Is4() && b.Is4():
		x, y := a.As4(), b.As4()
		return x[2] == y[2] && x[3] == y[3]
	}
	return false
}

// ipPair returns a decoded packet's inner source and destination.
func ipPair(p *wire.Packet) (src, dst netip.Addr, ok bool) {
	if ip, _, _ := p.Offsets(); ip == 0 {
		return src, dst, false
	}
	if p.IsIPv6 {
		return netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst), true
	}
	return netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst), true
}

// Planes learnt before judging. A capture with two or more interfaces is
// read learnWindow frames ahead before any frame is judged (lookahead),
// and those frames say, with the same proof as tiePlanes (a MIDDLE or
// LAST write continuing, at its PSN's offset, a message whose FIRST
// packet another interface carried: same dest_qp, r_key and dma_length):
//
//   - which interfaces are one node's ports, one per plane, when neither
//     the PICS (capture.points) nor their names place them: those
//     interfaces become one capture point, named by the first the file
//     declares, each a plane in the file's order (dumpcap -i eth1 -i eth2
//     at a receiver). Interfaces on which one first transmission (the
//     same addresses, QP and PSN, rtx clear) was seen twice are two
//     points on a path, never one, nor in one group through others;
//   - which addresses are one node's on each plane of a capture point:
//     each address of the later-seen pair is tied to the node of the
//     earlier-seen one, from the first frame on, so that no frame keeps a
//     plane's own names. Only addresses the PICS does not declare are
//     tied, and never two ends of one pair, nor two addresses that differ
//     in their host part (as in tiePlanes: two hosts may write alike, the
//     same QP number, r_key, VAs and PSNs, as incast senders do), nor so
//     that a node holds two addresses seen on one plane (a node has one
//     address per plane: those are two hosts', and none of them is tied);
//     an end the PICS declares on both planes, as one node, ties nothing
//     and does not stop the other end's tie (the PICS may declare only
//     the node whose ports are captured). An end declared on one plane
//     alone ties its other address to the declared node (the PICS may
//     list a node's address on one plane only); an end declared as two
//     nodes says the pairs are not one QP's planes.

// learnWindow bounds the frames read ahead to learn planes.
const learnWindow = 1024

// maxPlaneEvidence bounds the continued messages kept from those frames:
// each pair of a FIRST and a later packet may be one, and a capture made
// to be read gives far more than a real one does (one per QP, pair of
// planes and address pairs).
const maxPlaneEvidence = learnWindow

// planeLearning is what a capture's first frames say about its planes:
// the interfaces grouped into one point (set on the judgement's
// interface copies) and the addresses tied to another address's node.
type planeLearning struct {
	ties  []planeTie
	notes []string
	// mixed holds the interfaces that carry two capture points' frames
	// (see mixedInterfaces).
	mixed []*pcap.Interface
}

// planeTie names address a by the node of address to.
type planeTie struct{ a, to netip.Addr }

// msgKey names a message's writes: the responder QP, r_key and length.
type msgKey struct{ qpn, rkey, dmaLen uint32 }

// firstWrite is the FIRST packet of a message, where it was seen.
type firstWrite struct {
	in       *pcap.Interface
	src, dst netip.Addr
	psn      uint32
	va       uint64
	mtu      int
}

// sighting is a first transmission: its addresses, QP and PSN.
type sighting struct {
	src, dst netip.Addr
	qpn, psn uint32
}

// planeEvidence is a message to QP qpn begun on interface a that
// continues on b, between the addresses each shows.
type planeEvidence struct {
	a, b       *pcap.Interface
	srcA, dstA netip.Addr
	srcB, dstB netip.Addr
	qpn        uint32
}

// pairQP is one direction of an address pair to a QP.
type pairQP struct {
	src, dst netip.Addr
	qpn      uint32
}

// planeScan is what the held frames show, each map bounded by their
// number: the messages seen continuing on another interface, the
// interface pairs that saw one first transmission twice, each address's
// first place in judging order and interfaces, and the first
// transmissions of each address pair and QP.
type planeScan struct {
	ev     []planeEvidence
	twice  map[[2]*pcap.Interface]bool
	seen   map[netip.Addr]int
	on     map[netip.Addr][]*pcap.Interface
	sights map[sighting]*pcap.Interface
	psns   map[pairQP][]uint32

	// firsts and again count, per interface, the first transmissions seen
	// on it and those of them seen on it again (each once: repeated).
	firsts, again map[*pcap.Interface]int
	repeated      map[sighting]bool
}

// learnPlanes learns from frames (held in file order, their interfaces
// ins) which interfaces are one point's planes and which addresses are
// one node's; it sets Point and Plane of the interfaces it groups.
func learnPlanes(p *PICS, frames []pcap.Frame, ins []*pcap.Interface) *planeLearning {
	return learnPlanesAfter(p, frames, ins, nil)
}

// learnPlanesAfter is learnPlanes for the first frames of a later pcapng
// section, after the ties an earlier section's showed (prior): those
// stand, each tied address keeps its node, and a tie the new frames show
// joins their classes (tie).
func learnPlanesAfter(p *PICS, frames []pcap.Frame, ins []*pcap.Interface, prior []planeTie) *planeLearning {
	s := planeScan{twice: map[[2]*pcap.Interface]bool{}, seen: map[netip.Addr]int{}, on: map[netip.Addr][]*pcap.Interface{},
		sights: map[sighting]*pcap.Interface{}, psns: map[pairQP][]uint32{}}
	s.scan(p, frames, ins)
	ev := s.proofs()
	l := &planeLearning{mixed: s.mixedInterfaces()}
	l.group(p, ev, s.twice, ins, frames)
	l.tie(p, ev, &s, prior)
	return l
}

// scan decodes the held frames in timestamp order (then file order).
func (s *planeScan) scan(p *PICS, frames []pcap.Frame, ins []*pcap.Interface) {
	order := make([]int, len(frames))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return frames[a].Timestamp.Compare(frames[b].Timestamp) })
	starts := map[msgKey][]firstWrite{}
	found := map[planeEvidence]bool{}
	var pk wire.Packet
	var werr wire.Error
	var cut []byte // a frame cut by the snap length, rebuilt (DecodeCut)
	c := p.Codec()
	for place, i := range order {
		in := ins[i]
		if _, _, err := c.DecodeCut(frames[i].Data, frames[i].Length, &cut, &pk, &werr); err != nil || !pk.BTH.Opcode.IsWrite() {
			continue
		}
		src, dst, ok := ipPair(&pk)
		if !ok {
			continue
		}
		s.saw(src, in, place)
		s.saw(dst, in, place)
		if !pk.BTH.Retransmit {
			s.sighted(sighting{src, dst, pk.BTH.DestQP, pk.BTH.PSN}, in)
		}
		k := msgKey{pk.BTH.DestQP, pk.RETH.RKey, pk.RETH.DMALength}
		if pk.BTH.Opcode.IsFirst() {
			if !pk.BTH.Opcode.IsLast() {
				starts[k] = append(starts[k], firstWrite{in, src, dst, pk.BTH.PSN, pk.RETH.VA, len(pk.Payload)})
			}
			continue
		}
		for _, f := range starts[k] {
			e := planeEvidence{a: f.in, b: in, srcA: f.src, dstA: f.dst, srcB: src, dstB: dst, qpn: pk.BTH.DestQP}
			if f.in != in && !found[e] && len(s.ev) < maxPlaneEvidence && continues(p, &f, &pk) {
				found[e] = true
				s.ev = append(s.ev, e)
			}
		}
	}
}

// saw notes address a on interface in at place.
func (s *planeScan) saw(a netip.Addr, in *pcap.Interface, place int) {
	if _, ok := s.seen[a]; !ok {
		s.seen[a] = place
	}
	if !slices.Contains(s.on[a], in) {
		s.on[a] = append(s.on[a], in)
	}
}

// sighted notes a first transmission seen on interface in.
func (s *planeScan) sighted(t sighting, in *pcap.Interface) {
	if s.firsts == nil {
		s.firsts, s.again, s.repeated = map[*pcap.Interface]int{}, map[*pcap.Interface]int{}, map[sighting]bool{}
	}
	o, ok := s.sights[t]
	switch {
	case !ok:
		s.sights[t] = in
		s.firsts[in]++
		k := pairQP{t.src, t.dst, t.qpn}
		s.psns[k] = append(s.psns[k], t.psn)
	case o != in:
		s.twice[[2]*pcap.Interface{o, in}], s.twice[[2]*pcap.Interface{in, o}] = true, true
	case !s.repeated[t]:
		s.repeated[t] = true
		s.again[in]++
	}
}

// Two capture points on one interface. A capture of each of two hosts
// whose interfaces have the same names (dumpcap -i eth1 -i eth2 on each),
// merged by mergecap, which by default makes interfaces alike one, holds
// on one interface both what one host sent and what the other received:
// each frame twice, once as each host saw it. The frames say nothing of
// which host saw which copy, so the judge cannot put them apart; it says
// so (a capture note), and a failure there not decided from a frame alone
// is INCONCLUSIVE (point.mixed). A network duplicates some packets, and a
// capture point sees those twice too; an interface is taken as two points'
// when it saw a second time at least minMixed first transmissions (rtx
// clear), each a PSN of its own, and at least half of the distinct ones it
// saw, far more than any network duplicates.
const minMixed = 8

// The capture's first frames may show no such copies (the other host's
// capture began later, or the first frames are other traffic), so the
// judge also counts, for each connection and interface, its first
// transmissions in runs of copyRun, and the ones seen again as they were
// (a resend repeating the first transmission, rtx clear: copyLike): an
// interface is taken as two points' as well when in one such run at
// least minMixed were, and at least half of the run (mixedRun). Counted
// per connection, it is the same for any number of workers.
const copyRun = 256

// ifaceCopies counts, on one interface, a connection's first
// transmissions in its current run of copyRun, and the writes of the run
// that repeated one (copyLike); twice is set once a run held enough of
// them (mixedRun).
type ifaceCopies struct {
	g              int // capture-wide interface number
	firsts, copies int
	twice          bool
}

// mixedRun reports whether a run of firsts first transmissions, copies of
// them seen again as they were, shows an interface carrying two capture
// points' frames.
func mixedRun(firsts, copies int) bool { return copies >= minMixed && 2*copies >= firsts }

// countCopy counts a write of the flow on interface g: a first
// transmission (first) or one seen again as it was. Interfaces past
// MaxInterfaces are not counted.
func (fl *flow) countCopy(g int, first bool) {
	if g < 0 || g >= MaxInterfaces {
		return
	}
	if fl.copyAt[g] == 0 {
		fl.copies = append(fl.copies, ifaceCopies{g: g})
		fl.copyAt[g] = uint16(len(fl.copies)) // at most MaxInterfaces entries, one per g
	}
	c := &fl.copies[fl.copyAt[g]-1]
	if !first {
		c.copies++
		return
	}
	if c.firsts++; c.firsts == copyRun {
		c.twice = c.twice || mixedRun(c.firsts, c.copies)
		c.firsts, c.copies = 0, 0
	}
}

// copiedTwice returns the interfaces, by capture-wide number, ascending,
// on which some connection's run of first transmissions showed them
// carrying two capture points' frames (countCopy), the run under way
// included.
func (e *engine) copiedTwice() []int {
	var out []int
	for _, pt := range e.points {
		for _, fl := range pt.flows {
			for _, c := range fl.copies {
				if (c.twice || mixedRun(c.firsts, c.copies)) && !slices.Contains(out, c.g) {
					out = append(out, c.g)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// mixedInterfaces returns the interfaces that carry two capture points'
// frames (see above), in no order.
func (s *planeScan) mixedInterfaces() []*pcap.Interface {
	var out []*pcap.Interface
	for in, n := range s.again {
		if n >= minMixed && 2*n >= s.firsts[in] {
			out = append(out, in)
		}
	}
	return out
}

// proofs returns the evidence that one QP's packets are sprayed over the
// two interfaces: on one address pair (one address per node), or on pairs
// that differ in both addresses (one address per node and plane) and
// never carry one PSN's first transmission both. Identical traffic of
// two connections (the same QP numbers, r_key and VAs between other
// nodes) carries every PSN on each of its pairs.
func (s *planeScan) proofs() []planeEvidence {
	var ev []planeEvidence
	for _, e := range s.ev {
		if (e.srcA == e.srcB) != (e.dstA == e.dstB) {
			continue
		}
		if e.srcA != e.srcB && s.overlap(pairQP{e.srcA, e.dstA, e.qpn}, pairQP{e.srcB, e.dstB, e.qpn}) {
			continue
		}
		ev = append(ev, e)
	}
	return ev
}

// overlap reports whether a PSN's first transmission was seen on both
// pairs.
func (s *planeScan) overlap(a, b pairQP) bool {
	for _, psn := range s.psns[a] {
		if _, ok := s.sights[sighting{b.src, b.dst, b.qpn, psn}]; ok {
			return true
		}
	}
	return false
}

// continues reports whether write p continues the message s began: a PSN
// within it and the VA of its offset (path MTU bytes per PSN).
func continues(p *PICS, s *firstWrite, pk *wire.Packet) bool {
	mtu := s.mtu
	if v := p.Parameters.PathMTU; v != nil {
		mtu = *v
	}
	k := uint64(psnDist(pk.BTH.PSN, s.psn))
	if mtu <= 0 || k == 0 || k >= 1<<23 || k*uint64(mtu) >= uint64(pk.RETH.DMALength) {
		return false
	}
	return pk.RETH.VA == s.va+k*uint64(mtu)
}

// group makes the interfaces a message continues across one capture point
// (see above), when neither the PICS nor their names place them. A group
// never holds two interfaces that saw one first transmission: those are
// two points on a path (two hosts' ports of one plane, when the two hosts
// name their ports alike and their captures are put together), so the
// pairs are joined in the order the file declares their interfaces (the
// lower, then the higher), and a pair that would put two such interfaces
// in one group is not joined.
func (l *planeLearning) group(p *PICS, ev []planeEvidence, twice map[[2]*pcap.Interface]bool, ins []*pcap.Interface, frames []pcap.Frame) {
	id := map[*pcap.Interface]int{}
	for i, in := range ins {
		id[in] = frames[i].Interface
	}
	unplaced := func(in *pcap.Interface) bool {
		_, named := p.Capture.Points[in.Name]
		return !named && in.Plane < 0
	}
	var pairs [][2]*pcap.Interface
	for _, e := range ev {
		a, b := e.a, e.b
		if id[b] < id[a] {
			a, b = b, a
		}
		if unplaced(a) && unplaced(b) && !slices.Contains(pairs, [2]*pcap.Interface{a, b}) {
			pairs = append(pairs, [2]*pcap.Interface{a, b})
		}
	}
	slices.SortFunc(pairs, func(x, y [2]*pcap.Interface) int {
		return cmp.Or(id[x[0]]-id[y[0]], id[x[1]]-id[y[1]])
	})
	root := map[*pcap.Interface]*pcap.Interface{}
	members := map[*pcap.Interface][]*pcap.Interface{}
	find := func(in *pcap.Interface) *pcap.Interface {
		for root[in] != nil && root[in] != in {
			in = root[in]
		}
		return in
	}
	for _, pr := range pairs {
		ra, rb := find(pr[0]), find(pr[1])
		for _, r := range []*pcap.Interface{ra, rb} {
			if members[r] == nil {
				root[r], members[r] = r, []*pcap.Interface{r}
			}
		}
		if ra == rb || apart(members[ra], members[rb], twice) {
			continue
		}
		if id[rb] < id[ra] {
			ra, rb = rb, ra
		}
		root[rb] = ra
		members[ra], members[rb] = append(members[ra], members[rb]...), nil
	}
	for _, r := range sortedGroups(members, id) {
		g := members[r]
		slices.SortFunc(g, func(a, b *pcap.Interface) int { return id[a] - id[b] })
		var names []string
		for plane, in := range g {
			in.Point, in.Plane = g[0].Name, plane
			names = append(names, in.Name)
		}
		l.notes = append(l.notes, fmt.Sprintf("interfaces %s taken as planes 0 to %d of one capture point %s, in the order the file declares them (a message begun on one continues on another; declare capture.points and capture.planes in the PICS to be sure)",
			strings.Join(names, ", "), len(g)-1, g[0].Name))
	}
	slices.Sort(l.notes)
}

// apart reports whether two groups of interfaces hold two that saw one
// first transmission (group).
func apart(a, b []*pcap.Interface, twice map[[2]*pcap.Interface]bool) bool {
	for _, x := range a {
		for _, y := range b {
			if twice[[2]*pcap.Interface{x, y}] {
				return true
			}
		}
	}
	return false
}

// sortedGroups returns the roots of the groups of two or more interfaces,
// by the first interface's number.
func sortedGroups(members map[*pcap.Interface][]*pcap.Interface, id map[*pcap.Interface]int) []*pcap.Interface {
	var roots []*pcap.Interface
	for r, g := range members {
		if len(g) > 1 {
			roots = append(roots, r)
		}
	}
	slices.SortFunc(roots, func(a, b *pcap.Interface) int { return id[a] - id[b] })
	return roots
}

// tie ties the addresses of a message's pairs on two planes of one point
// (see above): each address to the first seen of those it is tied with.
func (l *planeLearning) tie(p *PICS, ev []planeEvidence, s *planeScan, prior []planeTie) {
	seen := s.seen
	root := map[netip.Addr]netip.Addr{}
	was := map[netip.Addr]netip.Addr{} // prior's ties
	named := map[netip.Addr]bool{}     // prior's roots: they name their nodes
	for _, t := range prior {
		root[t.a], root[t.to], was[t.a], named[t.to] = t.to, t.to, t.to, true
	}
	find := func(a netip.Addr) netip.Addr {
		for r, ok := root[a]; ok && r != a; r, ok = root[a] {
			a = r
		}
		return a
	}
	union := func(a, b netip.Addr) {
		ra, rb := find(a), find(b)
		pa, pb := named[ra], named[rb]
		if pa && pb && ra != rb {
			return // two nodes named already: the frames judged so far keep their names
		}
		root[ra], root[rb] = ra, ra
		// A class named already keeps its name; else a declared address
		// names its class (its node's name); else the first seen.
		if da, db := p.declared(ra), p.declared(rb); pb || !pa && (da != db && db ||
			da == db && (seen[rb] < seen[ra] || seen[rb] == seen[ra] && rb.Less(ra))) {
			root[ra], root[rb] = rb, rb
		}
	}
	var used []planeEvidence
	for _, e := range ev {
		va, vb := p.resolveInterface(e.a), p.resolveInterface(e.b)
		if va.point != vb.point || va.plane < 0 || vb.plane < 0 || va.plane == vb.plane || e.srcA == e.srcB && e.dstA == e.dstB {
			continue
		}
		tieSrc, okSrc := p.planeEnds(e.srcA, e.srcB)
		tieDst, okDst := p.planeEnds(e.dstA, e.dstB)
		if !okSrc || !okDst || !tieSrc && !tieDst || tieSrc && !sameHost(e.srcA, e.srcB) || tieDst && !sameHost(e.dstA, e.dstB) {
			continue // two hosts' writes alike (one QP number, r_key and VAs) prove no tie
		}
		if !s.onePlane(p, e.srcA, va) || !s.onePlane(p, e.dstA, va) || !s.onePlane(p, e.srcB, vb) || !s.onePlane(p, e.dstB, vb) {
			continue // an address of every plane is no plane's own
		}
		if tieSrc {
			union(e.srcA, e.srcB)
		}
		if tieDst {
			union(e.dstA, e.dstB)
		}
		used = append(used, e)
	}
	bad := map[netip.Addr]bool{}
	for a := range root {
		if r := find(a); p.declared(a) && p.nodeOf(a) != p.nodeOf(r) {
			bad[r] = true // two declared nodes, through undeclared addresses: no tie
		}
	}
	for _, e := range used {
		for _, pair := range [][2]netip.Addr{{e.srcA, e.dstA}, {e.srcB, e.dstB}} {
			if r := find(pair[0]); r == find(pair[1]) {
				bad[r] = true // both ends of one pair: no tie
			}
		}
	}
	for r, as := range s.sharedPlanes(p, root, find) {
		bad[r] = bad[r] || as
	}
	classes := map[netip.Addr][]netip.Addr{}
	for a := range root {
		if r := find(a); !bad[r] && r != a && was[a] != r {
			l.ties = append(l.ties, planeTie{a, r})
			classes[r] = append(classes[r], a)
		}
	}
	slices.SortFunc(l.ties, func(x, y planeTie) int { return x.a.Compare(y.a) })
	var notes []string
	for r, as := range classes {
		slices.SortFunc(as, func(x, y netip.Addr) int { return x.Compare(y) })
		var names []string
		for _, a := range as {
			names = append(names, a.String())
		}
		notes = append(notes, fmt.Sprintf("addresses %s taken as node %s (one address per plane, tied by the traffic: a message begun on one plane continues on another; declare nodes in the PICS to be sure)",
			strings.Join(names, ", "), p.nodeOf(r)))
	}
	slices.Sort(notes)
	l.notes = append(l.notes, notes...)
}

// sharedPlanes returns the classes of tied addresses (by their root) that
// hold two addresses seen on one plane of one capture point: a node has
// one address per plane, so those are two hosts' and tie nothing.
func (s *planeScan) sharedPlanes(p *PICS, root map[netip.Addr]netip.Addr, find func(netip.Addr) netip.Addr) map[netip.Addr]bool {
	type place struct {
		r     netip.Addr
		point string
		plane int
	}
	at := map[place]netip.Addr{}
	shared := map[netip.Addr]bool{}
	for a := range root {
		r := find(a)
		for _, in := range s.on[a] {
			v := p.resolveInterface(in)
			if v.plane < 0 {
				continue
			}
			k := place{r, v.point, v.plane}
			if b, ok := at[k]; ok && b != a {
				shared[r] = true
			}
			at[k] = a
		}
	}
	return shared
}

// onePlane reports whether address a was seen at capture point v.point on
// plane v.plane alone.
func (s *planeScan) onePlane(p *PICS, a netip.Addr, v ifaceView) bool {
	for _, in := range s.on[a] {
		if w := p.resolveInterface(in); w.point == v.point && w.plane != v.plane {
			return false
		}
	}
	return true
}

// planeEnds says what one end of a message's pairs on two planes, a and
// b, allows (see above): a tie when the PICS declares neither, or one
// alone (the other address is then its node's), none when it declares
// both as one node; ok is false when it declares two nodes.
func (p *PICS) planeEnds(a, b netip.Addr) (tie, ok bool) {
	na, da := p.byAddr[a.Unmap()]
	nb, db := p.byAddr[b.Unmap()]
	switch {
	case !da || !db:
		return true, true
	case na == nb:
		return false, true
	}
	return false, false
}

// declared reports whether the PICS's nodes list address a.
func (p *PICS) declared(a netip.Addr) bool {
	_, ok := p.byAddr[a.Unmap()]
	return ok
}

// place gives an engine what the first frames said about the planes: the
// tied addresses' nodes, and the notes (which say how they were learnt).
func (e *engine) place(l *planeLearning) {
	// The nodes' names change.
	e.tieAddrs, e.tiePairs = [len(e.tieAddrs)]tieAddr{}, [len(e.tiePairs)]tiePair{}
	for _, t := range l.ties {
		e.cacheNode(t.a, e.pics.nodeOf(t.to))
	}
	for _, n := range l.notes {
		e.note("%s", n)
	}
}
