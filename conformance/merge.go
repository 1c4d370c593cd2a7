package conformance

import (
	"bytes"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strconv"

	"github.com/openmrc/mrc/pcap"
)

// MaxReorder bounds the frames the judge holds back, by default
// (Options.Reorder), to put the frames of several capture interfaces in
// timestamp order (dumpcap writes each interface's frames in runs, out of
// time order across interfaces). A frame more than that many frames of
// other interfaces late is judged out of order, and the capture notes
// count it; a capture file is then judged again holding back as many
// frames as its latest frame needs (reorderSeen.wider).
const MaxReorder = 4096

// MaxReorderLimit bounds Options.Reorder and the window a capture file is
// judged again with.
const MaxReorderLimit = 1 << 16

// reorderBudget bounds the bytes of frames a window widened for a capture
// file holds: the window is at most this over the capture's mean frame
// length.
const reorderBudget = 64 << 20

// merger puts frames in timestamp order across capture interfaces, keeping
// each interface's own order: a k-way merge of per-interface queues over a
// bounded pool of frame copies. The streams are the interfaces the file
// declares: the earliest frame held is judged once every declared
// interface has a frame waiting (or the window is full), so runs of one
// interface written before another's earlier frames are put back in
// order. A frame more than the window late cannot be put back: it is
// judged late, and onLate is told. Steady state allocates nothing: slots
// and their buffers are reused.
type merger struct {
	// blocks hold the slots, slotBlock each: slot i is blocks[i/slotBlock]
	// [i%slotBlock], and nslots are in use or free. A block never moves, so
	// the pool grows without copying what it holds, and a slot is held by
	// its address.
	blocks []*[slotBlock]mslot
	nslots int
	free   []*mslot
	queues []mqueue // by interface ID
	held   int
	// waiting counts the queues with a frame waiting (ready's test).
	waiting int
	// order holds the waiting frames in file order while the file is in
	// timestamp order (not interleaved): the earliest frame is then the
	// first read, and emitOne takes it without comparing heads.
	order ring[orderEntry]
	// stable is set when frames stay valid after the reader's next read
	// (pcap.Reader.Retain): a waiting frame is then held by reference,
	// not copied.
	stable bool
	// te, when set, is the engine that gives frames' tie keys and capture
	// points (ties.go), an engine of the merger's own; else key and point
	// do, when set (tests). They are asked only of frames whose timestamp
	// another interface's waiting frame shares.
	te    *engine
	key   func(*pcap.Frame, *pcap.Interface) tieKey
	point func(*pcap.Frame, *pcap.Interface) string
	// interleaved is set once a frame is read with a timestamp earlier
	// than one read before it (the file is written in runs per
	// interface); maxIn is the latest timestamp read.
	interleaved bool
	maxIn       int64
	// cand holds the queues of the tick being planned, and plan the order
	// its frames are judged in from planAt on (ties.go); ts is planPoint's
	// scratch.
	cand   []tieCand
	plan   []tieRun
	planAt int
	ts     tieScratch
	// points are the capture points of the queues asked so far, by name.
	points []string
	// late counts frames judged after a frame with a later timestamp.
	late   int
	lastNs int64
	anyOut bool
	// ties counts frames judged while another interface of their capture
	// point had a frame of the same timestamp waiting: their place among
	// that interface's frames came from tie keys (ties.go).
	ties int
	// window is how many frames it holds before it emits the earliest
	// whatever the other interfaces may still hold (0: defaultReorder).
	window int
	// emitted holds, once frames were emitted for want of room (window),
	// the latest timestamp emitted so far after each frame emitted since,
	// by emission number modulo its length (nEmit counts them), so that a
	// late frame's lateness (frames emitted with a later timestamp before
	// it) is found; need is the window that would have held back every
	// frame emitted before a late one (lateness plus the window).
	emitted []int64
	nEmit   int
	need    int
	// crowded is set while push emits for want of room.
	crowded bool
	// pushed and bytes count the frames push held and their bytes.
	pushed, bytes int64
	// onLate, when set, is called with each frame of a capture of several
	// interfaces judged late, just before it is emitted: the judge then
	// knows at which capture point frames were judged out of their place
	// (engine.lateAt). A capture of one interface is judged in file
	// order, which is the order its frames were seen in, whatever their
	// timestamps say: its late frames are counted, not reported.
	onLate func(*pcap.Frame, *pcap.Interface)
}

// orderEntry is a waiting frame in merger.order: its timestamp and
// interface, all that ordered and pair read of it, kept here so that
// they do not look its slot up.
type orderEntry struct {
	ns int64
	id int
}

type mslot struct {
	f   pcap.Frame
	ns  int64           // f.Timestamp in Unix nanoseconds
	in  *pcap.Interface // as push was given it
	buf []byte          // the copy of f.Data when frames are not stable
	// own is set when f.Data is not the reader's (a copy): unpinOldest skips
	// it.
	own bool
}

// ipDst returns a frame's IP destination address for plain encapsulations
// (up to two VLAN tags, then IPv4 or IPv6), or false.
func ipDst(b []byte) (netip.Addr, bool) {
	_, dst, ok := ipAddrs(b)
	return dst, ok
}

// ring is a ring of values. Its length is a power of two (16, then
// doubled), so that a position wraps with a mask, not a division.
type ring[T any] struct {
	idx        []T
	head, size int
}

// mqueue is a ring of slots, an interface's waiting frames. A slot is
// held by its address (its block never moves), not looked up by number.
type mqueue struct {
	ring[*mslot]
	// rank is 1 + the place of the capture point of the queue's interface
	// among the points met (merger.points, by name), 0 until asked
	// (pointRank); cand is 1 + the queue's index in merger.cand while a
	// tick is planned, else 0.
	rank int
	cand int
}

func (q *ring[T]) push(i T) {
	if q.size == len(q.idx) {
		n := make([]T, max(16, 2*len(q.idx)))
		for k := 0; k < q.size; k++ {
			n[k] = q.idx[(q.head+k)&(len(q.idx)-1)]
		}
		q.idx, q.head = n, 0
	}
	q.idx[(q.head+q.size)&(len(q.idx)-1)] = i
	q.size++
}

func (q *ring[T]) front() T { return q.idx[q.head] }

func (q *ring[T]) pop() T {
	i := q.idx[q.head]
	q.head = (q.head + 1) & (len(q.idx) - 1)
	q.size--
	return i
}

// push takes a frame of a file that declares declared interfaces and
// calls emit for every frame now due, in timestamp order. f is copied
// when it must wait, unless frames are stable: its data belongs to the
// reader. in is kept as it is: it must not change while f waits (see
// ifaceTable).
func (m *merger) push(f *pcap.Frame, in *pcap.Interface, declared int, emit func(*pcap.Frame, *pcap.Interface)) {
	id := f.Interface
	ns := f.Timestamp.UnixNano()
	if declared <= 1 || id < 0 || id >= MaxInterfaces {
		m.flush(emit) // one stream, or beyond the bound: file order
		if m.note(ns) && declared > 1 && m.onLate != nil {
			m.onLate(f, in)
		}
		emit(f, in)
		return
	}
	for len(m.queues) <= id || len(m.queues) < min(declared, MaxInterfaces) {
		m.queues = append(m.queues, mqueue{})
	}
	m.pushed++
	m.bytes += int64(len(f.Data))
	s := m.slot()
	s.f = *f
	s.f.Comments = nil
	if s.own = !m.stable; s.own {
		s.buf = append(s.buf[:0], f.Data...)
		s.f.Data = s.buf
	}
	s.ns = ns
	s.in = in
	if ns < m.maxIn {
		m.interleaved = true
		m.order = ring[orderEntry]{}
	} else {
		m.maxIn = ns
	}
	if !m.interleaved {
		m.order.push(orderEntry{ns, id})
	}
	q := &m.queues[id]
	if q.size == 0 {
		m.waiting++
	}
	q.push(s)
	m.held++
	w := m.win()
	for m.held > w || m.waiting == len(m.queues) {
		m.crowded = m.held > w
		if !m.emitOne(emit, m.crowded) {
			break
		}
	}
	m.crowded = false
}

// win returns how many frames the merger holds back (window).
func (m *merger) win() int {
	if m.window > 0 {
		return m.window
	}
	return defaultReorder
}

// defaultReorder is the window when Options.Reorder is 0: MaxReorder,
// which tests lower to judge small captures written in long runs.
var defaultReorder = MaxReorder

// record keeps the latest timestamp emitted after an emission, once
// frames were emitted for want of room (crowded), and, for a late frame of
// timestamp ns, raises need to the window that would have held back the
// frames emitted before it with later timestamps. Binary search over the
// running maxima, which never decrease: a few steps per late frame.
func (m *merger) record(late bool, ns int64) {
	if m.emitted != nil || m.crowded {
		m.keep(late, ns)
	}
}

// keep is record once frames were emitted for want of room: record is
// the test alone, so that it is inlined (a capture in time order never
// fills the window).
func (m *merger) keep(late bool, ns int64) {
	if m.emitted == nil {
		m.emitted = make([]int64, MaxReorderLimit)
	}
	n := min(m.nEmit, len(m.emitted))
	if late {
		// The first of the last n emissions whose running maximum is
		// past ns: every emission from it on came before this frame.
		k := sort.Search(n, func(i int) bool { return m.emitted[(m.nEmit-n+i)%len(m.emitted)] > ns })
		lateness := n - k
		if k == 0 {
			// Later than every emission recorded, and maybe than those
			// before: taken as late as the ring is long, the widest window.
			lateness = len(m.emitted)
		}
		m.need = max(m.need, lateness+m.win())
	}
	m.emitted[m.nEmit%len(m.emitted)] = m.lastNs
	m.nEmit++
}

// unpinOldest copies the waiting frames held by reference that start
// before pin, so that the reader can release them (see pinSpan), and
// returns the smallest file offset of a waiting frame still held by
// reference, or limit when none is smaller: the reader may release what
// is before it. The copy is the frame's own: a worker's batch may hold it
// after the slot is reused. A frame waits that long only when its
// interface's clock is far ahead of the others'. One pass over the
// frames held, a few hundred in a capture in time order, once a chunk.
func (m *merger) unpinOldest(pin, limit int64) int64 {
	for id := range m.queues {
		q := &m.queues[id]
		for k := 0; k < q.size; k++ {
			s := q.idx[(q.head+k)&(len(q.idx)-1)]
			switch {
			case s.own:
			case s.f.Offset < pin:
				s.f.Data, s.own = bytes.Clone(s.f.Data), true
			default:
				limit = min(limit, s.f.Offset)
			}
		}
	}
	return limit
}

func (m *merger) slot() *mslot {
	if n := len(m.free); n > 0 {
		s := m.free[n-1]
		m.free = m.free[:n-1]
		return s
	}
	if m.nslots == len(m.blocks)*slotBlock {
		m.blocks = append(m.blocks, new([slotBlock]mslot))
	}
	m.nslots++
	return &m.blocks[(m.nslots-1)/slotBlock][(m.nslots-1)%slotBlock]
}

// slotBlock is how many slots the merger adds at a time. One slice of
// slots (168 bytes each) doubled as a capture's first frames wait would
// write each slot again at every doubling, into fresh pages (about 15 us
// each on this VM): 1.4 MB for the 2,940 frames the incast capture holds
// before its receivers' first frame, against 0.5 MB in blocks.
const slotBlock = 128

// emitOne emits the earliest head; false when nothing is held, or when
// frames of one tick wait on two interfaces and one of them may still
// receive more of that tick, unless force.
func (m *merger) emitOne(emit func(*pcap.Frame, *pcap.Interface), force bool) bool {
	if m.held == 0 {
		return false
	}
	bq := m.next(force)
	if bq == nil {
		return false
	}
	bs := bq.pop()
	if bq.size == 0 {
		m.waiting--
	}
	m.held--
	late := m.note(bs.ns)
	m.record(late, bs.ns)
	if late && m.onLate != nil {
		m.onLate(&bs.f, bs.in)
	}
	emit(&bs.f, bs.in)
	m.free = append(m.free, bs)
	return true
}

// next returns the queue whose head is judged next: the plan's while one
// is under way, else the earliest head's (ordered, earliest); nil when
// the earliest tick may still receive frames.
func (m *merger) next(force bool) *mqueue {
	if m.planAt < len(m.plan) {
		r := &m.plan[m.planAt]
		if r.n--; r.n == 0 {
			m.planAt++
		}
		return &m.queues[r.q]
	}
	if !m.interleaved {
		return m.ordered(force)
	}
	return m.earliest(force)
}

// ordered returns the queue whose head is judged next while the file is
// in timestamp order: the first frame read, unless the frames after it
// in the file share its timestamp, when the tick is planned (planTick)
// once it is whole, that is once a later frame is read (the frames of
// the tick are then the first in order and at the heads of their
// queues). nil while the tick may still grow.
func (m *merger) ordered(force bool) *mqueue {
	o := &m.order
	s := o.front()
	if o.size == 1 || o.idx[(o.head+1)&(len(o.idx)-1)].ns != s.ns {
		o.pop()
		return &m.queues[s.id]
	}
	if !force && m.maxIn == s.ns {
		return nil
	}
	if q := m.pair(s); q != nil {
		return q
	}
	m.cand = m.cand[:0]
	for o.size > 0 {
		t := o.front()
		if t.ns != s.ns {
			break
		}
		o.pop()
		q := &m.queues[t.id]
		if q.cand == 0 {
			m.cand = append(m.cand, tieCand{id: t.id})
			q.cand = len(m.cand)
		}
		m.cand[q.cand-1].n++
	}
	m.planTick()
	return m.next(force)
}

// pair returns the queue judged next when the tick of s, the first frame
// in order, holds just one more frame, of another interface: the
// simulator's usual tick, a frame sent at one point seen arriving at
// another, or two frames of one point on two planes. The points' ranks
// order the two, and at one point the frames' keys (pairFirst), as
// planTick would, and the second is judged first by a plan of one run.
// nil for any other tick.
func (m *merger) pair(s orderEntry) *mqueue {
	o := &m.order
	t := o.idx[(o.head+1)&(len(o.idx)-1)]
	if o.size > 2 && o.idx[(o.head+2)&(len(o.idx)-1)].ns == s.ns || t.id == s.id {
		return nil
	}
	a, b := s.id, t.id
	m.pointRank(a)
	m.pointRank(b)
	ra, rb := m.queues[a].rank, m.queues[b].rank
	if ra > rb || ra == rb && !m.pairFirst(a, b) {
		a, b = b, a
	}
	if ra == rb {
		m.ties++ // as planPoint counts the first of two frames at one point
	}
	o.pop()
	if ra < rb {
		return &m.queues[a]
	}
	o.pop()
	m.plan, m.planAt = append(m.plan[:0], tieRun{b, 1}), 0
	return &m.queues[a]
}

// earliest returns the queue whose head is judged next in a file not in
// timestamp order: the earliest head, and when heads of several queues
// share its tick, the plan of the tick (planTick); nil when a queue of
// the tick may still receive frames of it (it holds none after it),
// unless force.
func (m *merger) earliest(force bool) *mqueue {
	var bns int64
	m.cand = m.cand[:0]
	for id := range m.queues {
		q := &m.queues[id]
		if q.size == 0 {
			continue
		}
		switch ns := q.front().ns; {
		case len(m.cand) == 0 || ns < bns:
			bns = ns
			m.cand = append(m.cand[:0], tieCand{id: id})
		case ns == bns:
			m.cand = append(m.cand, tieCand{id: id})
		}
	}
	if len(m.cand) == 1 {
		return &m.queues[m.cand[0].id]
	}
	for i := range m.cand {
		c := &m.cand[i]
		q := &m.queues[c.id]
		for c.n < q.size && q.idx[(q.head+c.n)&(len(q.idx)-1)].ns == bns {
			c.n++
		}
		if c.n == q.size && !force {
			return nil
		}
	}
	m.planTick()
	return m.next(force)
}

// note counts a frame emitted behind one already emitted, and reports
// whether it is one.
func (m *merger) note(ns int64) bool {
	late := m.anyOut && ns < m.lastNs
	if late {
		m.late++
	}
	if !m.anyOut || ns > m.lastNs {
		m.lastNs = ns
	}
	m.anyOut = true
	return late
}

// flush emits every frame held.
func (m *merger) flush(emit func(*pcap.Frame, *pcap.Interface)) {
	for m.emitOne(emit, true) {
	}
}

// releaseStep is how far the judge reads a retaining capture Reader (a
// capture file) before it releases the frames nobody holds any more: one
// chunk (pcap's 256 KiB), so that the chunks in use stay about as many
// as the frames held need, each one reused as soon as it is free, not
// four megabytes of fresh pages later. A release visits the frames held,
// a few hundred at most in a capture in time order, once a chunk.
// pinSpan is how far behind the frame just read a frame stays held by
// reference: at each release, an older one waiting in the merger is
// copied, a worker's batch holding one is sent, and the reader waits for
// a worker judging one. The Reader's chunks then stay within about
// pinSpan+releaseStep and a block, below pcap.MaxRetained. pinSpan is
// learnSpan, what the lookahead holds by reference anyway: a capture
// whose receiving interfaces are silent until its first frames cross the
// fabric (the incast simulator capture: 2,940 frames, 11.8 MiB, before
// the first frame of a receiver) keeps them by reference until they are
// judged. At 8 MiB its first 4 MB were copied, 1,000 fresh pages (about
// 15 ms of CPU here) before any frame was judged.
const (
	releaseStep = 256 << 10
	pinSpan     = learnSpan
)

// releaser releases a retaining Reader's frames behind the oldest one
// still held, every releaseStep bytes read.
type releaser struct {
	r    *pcap.Reader
	next int64
}

// due reports whether a frame at offset off is releaseStep past the last
// release.
func (rl *releaser) due(off int64) bool { return rl.r != nil && off >= rl.next }

// release releases what is before offset oldest.
func (rl *releaser) release(off, oldest int64) {
	rl.r.Release(oldest)
	rl.next = off + releaseStep
}

// ifaceTable hands out copies of a Reader's interfaces that stay as they
// are while frames wait in the merger or in a worker's batch, whatever
// sections the Reader reads next. It numbers the interfaces over the whole
// capture, section after section (base + the ID in the section, as
// Wireshark's frame.interface_id does), so that two sections' interfaces
// are two interfaces, and gives each a name of its own (names): interface
// names are whatever the capture tool wrote, and two hosts captured alike
// (dumpcap -i eth1 -i eth2 on each, their files put together) write the
// same names.
type ifaceTable struct {
	section, n int
	ifs        []*pcap.Interface
	// base is the capture-wide number of the current section's interface
	// 0: the interfaces the sections before it declared.
	base int
	// all holds every interface declared, by capture-wide number, up to
	// MaxInterfaces; written holds their names as the file wrote them.
	all     []*pcap.Interface
	written []string
	// names counts the interfaces declared per name (the names of all).
	names map[string]int
	// mixed holds the capture-wide numbers of the interfaces whose frames
	// are two capture points' (planeLearning.mixed).
	mixed []int
	// fresh is set when a section's first interfaces are declared, until
	// newSection reports it.
	fresh bool
	// bases holds base by section number (Reader.Section), for the first
	// MaxInterfaces sections.
	bases []int
	// rings counts the sections taken as later files of the same
	// interfaces (declare).
	rings int
	// cont is set while the current section continues the ones before:
	// kept, since a section may declare interfaces after its first frames.
	cont bool
	// spans holds, by capture-wide number up to MaxInterfaces, the
	// timestamps of each interface's first and last frames (split); cur
	// is the current section's part of it, by ID in the section, which
	// get updates; other spans the frames of no span (an ID not declared,
	// or past MaxInterfaces). Together they span the frames read (span).
	spans []ifaceSpan
	cur   []ifaceSpan
	other ifaceSpan
}

// ifaceSpan is the time an interface's frames span (UnixNano), once seen.
// A span not seen holds the widest bounds the other way round, so that
// add needs no test.
type ifaceSpan struct {
	first, last int64
	seen        bool
}

// noSpan is an ifaceSpan not seen.
var noSpan = ifaceSpan{first: math.MaxInt64, last: math.MinInt64}

// add widens s to timestamp ts.
func (s *ifaceSpan) add(ts int64) {
	s.first, s.last, s.seen = min(s.first, ts), max(s.last, ts), true
}

// newSection reports whether a section began since it last reported one:
// its interfaces are new, and the judge learns their planes from its
// first frames, as from the capture's.
func (t *ifaceTable) newSection() bool {
	f := t.fresh
	t.fresh = false
	return f
}

// learnt records the interfaces l found carrying two capture points'
// frames.
func (t *ifaceTable) learnt(l *planeLearning) {
	for _, in := range l.mixed {
		if g := slices.Index(t.all, in); g >= 0 && !slices.Contains(t.mixed, g) {
			t.mixed = append(t.mixed, g)
		}
	}
	slices.Sort(t.mixed)
}

// noTime is the timestamp get is given when no frame is read.
const noTime = math.MinInt64

// get returns the copy of interface id of r's current section, or nil;
// its capture-wide number is t.base+id. ts is the frame's timestamp
// (UnixNano), or noTime.
func (t *ifaceTable) get(r *pcap.Reader, id int, ts int64) *pcap.Interface {
	if all := r.Interfaces(); r.Section() != t.section || len(all) != t.n || t.ifs == nil {
		t.declare(r.Section(), all, ts)
	}
	if uint(id) < uint(len(t.cur)) && ts != noTime {
		t.cur[id].add(ts)
		return t.ifs[id]
	}
	if ts != noTime {
		if !t.other.seen {
			t.other = noSpan
		}
		t.other.add(ts)
	}
	if id < 0 || id >= len(t.ifs) {
		return nil
	}
	return t.ifs[id]
}

// span returns the span of the frames read (other's when none is in
// spans: add keeps the not seen span's bounds).
func (t *ifaceTable) span() ifaceSpan {
	s := t.other
	for _, x := range t.spans {
		if x.seen {
			s.add(x.first)
			s.add(x.last)
		}
	}
	return s
}

// split returns the pairs of interfaces, by capture-wide number, that
// have one name and link type and whose frames followed one another in
// time, the later's first at or after the earlier's last, each
// interface a copy of its own (not one continued, as cat's sections are):
// one capture's files put together with mergecap -I none, whose
// interfaces of one name stay apart. Two hosts captured at once overlap.
func (t *ifaceTable) split() [][2]int {
	var out [][2]int
	for b := range t.spans {
		for a := range b {
			sa, sb := t.spans[a], t.spans[b]
			if sa.seen && sb.seen && t.written[a] == t.written[b] && t.all[a] != t.all[b] &&
				t.all[a].LinkType == t.all[b].LinkType && (sb.first >= sa.last || sa.first >= sb.last) {
				out = append(out, [2]int{a, b})
			}
		}
	}
	return out
}

// declare makes the copies of a section's interfaces, all: the ones it
// declared since the last call, or all of a new section's, whose first
// frame is at ts. A new section that begins past the middle of the frames
// before it continues them: the later files of one capture put together
// with cat (dumpcap's ring buffer), whose interfaces of names declared
// before are the same interfaces, placed as they are (one copy), not
// another host's, which captured at the same time (rename).
func (t *ifaceTable) declare(section int, all []pcap.Interface, ts int64) {
	if section != t.section {
		all := t.span()
		t.cont = all.seen && ts != noTime && ts > all.first+(all.last-all.first)/2
		if t.cont {
			t.rings++
		}
		t.base += t.n
		t.ifs, t.fresh = nil, true
	}
	for len(t.bases) <= section && section < MaxInterfaces {
		t.bases = append(t.bases, t.base)
	}
	t.section, t.n = section, len(all)
	for i := len(t.ifs); i < len(all); i++ {
		c := t.earlier(all[i])
		if c == nil {
			cp := all[i]
			c = &cp
			t.rename(c)
		}
		t.ifs = append(t.ifs, c)
		if len(t.all) < MaxInterfaces {
			t.all, t.written = append(t.all, c), append(t.written, all[i].Name)
		}
	}
	for len(t.spans) < min(t.base+len(t.ifs), MaxInterfaces) {
		t.spans = append(t.spans, noSpan)
	}
	t.cur = t.spans[min(t.base, len(t.spans)):min(t.base+len(t.ifs), len(t.spans))]
}

// earlier returns, in a section that continues the ones before (cont),
// the copy of the interface an earlier section declared by in's name and
// link type, or nil.
func (t *ifaceTable) earlier(in pcap.Interface) *pcap.Interface {
	if !t.cont {
		return nil
	}
	for g := min(t.base, len(t.all)) - 1; g >= 0; g-- {
		if t.written[g] == in.Name && t.all[g].LinkType == in.LinkType {
			return t.all[g]
		}
	}
	return nil
}

// rename gives the second and later interfaces of one name a name of
// their own, the name and its rank: eth1, then eth1#2 (capture.points
// places it by that name), and their capture point the same suffix
// (host0/plane0, then host0/plane0#2 at point host0#2), so that two hosts'
// interfaces of one name are never one capture point. Only the first
// MaxInterfaces interfaces are counted; later ones keep their names.
func (t *ifaceTable) rename(in *pcap.Interface) {
	if len(t.all) >= MaxInterfaces {
		return
	}
	if t.names == nil {
		t.names = map[string]int{}
	}
	t.names[in.Name]++
	k := t.names[in.Name]
	if k < 2 {
		return
	}
	// A name given is counted as the tool's own, so that no interface is
	// given a name another has (eth1#2 written by the tool, then a second
	// eth1 named eth1#3).
	for t.names[in.Name+"#"+strconv.Itoa(k)] > 0 {
		k++
	}
	suffix := "#" + strconv.Itoa(k)
	t.names[in.Name+suffix]++
	in.Name += suffix
	if in.Plane >= 0 {
		in.Point += suffix
	} else {
		in.Point = in.Name
	}
}
