package conformance

import (
	"net/netip"

	"github.com/openmrc/mrc/pcap"
)

// MaxReorder bounds the frames the judge holds back to put the frames of
// several capture interfaces in timestamp order (dumpcap writes each
// interface's frames in runs, out of time order across interfaces). A
// frame more than MaxReorder frames of other interfaces late is judged
// out of order, and the capture notes count it.
const MaxReorder = 4096

// merger puts frames in timestamp order across capture interfaces, keeping
// each interface's own order: a k-way merge of per-interface queues over a
// bounded pool of frame copies. The streams are the interfaces the file
// declares: the earliest frame held is judged once every declared
// interface has a frame waiting (or the window is full), so runs of one
// interface written before another's earlier frames are put back in
// order. Steady state allocates nothing: slot buffers are reused.
type merger struct {
	slots  []mslot
	free   []int
	queues []mqueue // by interface ID
	held   int
	// arrival, when set, reports whether a frame is addressed to the node
	// its capture point is at (before's tie-break).
	arrival func(*pcap.Frame, *pcap.Interface) (point string, arrival bool)
	// interleaved is set once a frame is read with a timestamp earlier
	// than one read before it (before's tie-break); maxIn is the latest
	// timestamp read.
	interleaved bool
	maxIn       int64
	// late counts frames judged after a frame with a later timestamp.
	late   int
	lastNs int64
	anyOut bool
}

type mslot struct {
	f       pcap.Frame
	in      pcap.Interface
	ok      bool   // in is set
	arrival bool   // addressed to the node the capture point is at
	point   string // the capture point, when arrival
}

// before orders two waiting frames: by timestamp, then by their place in
// the file. A file in timestamp order (one writer) says in which order
// frames of one clock tick were seen, so its order decides. Once the file
// shows it was written in runs per interface (interleaved: a frame earlier
// than one read before it, as dumpcap writes), file order across
// interfaces means nothing, and at equal timestamps at one capture point a
// frame arriving at the node the point is at goes before one it sends,
// since what a node receives can cause what it sends in the same tick but
// not the reverse.
func (m *merger) before(a, b *mslot) bool {
	if !a.f.Timestamp.Equal(b.f.Timestamp) {
		return a.f.Timestamp.Before(b.f.Timestamp)
	}
	if m.interleaved && a.arrival != b.arrival && a.point == b.point {
		return a.arrival
	}
	return a.f.Number < b.f.Number
}

// ipDst returns a frame's IP destination address for plain encapsulations
// (up to two VLAN tags, then IPv4 or IPv6), or false.
func ipDst(b []byte) (netip.Addr, bool) {
	off := 12
	for k := 0; k < 2 && len(b) >= off+2 && (b[off] == 0x81 && b[off+1] == 0x00 || b[off] == 0x88 && b[off+1] == 0xa8); k++ {
		off += 4
	}
	if len(b) < off+2 {
		return netip.Addr{}, false
	}
	et := uint16(b[off])<<8 | uint16(b[off+1])
	off += 2
	switch {
	case et == 0x0800 && len(b) >= off+20:
		return netip.AddrFrom4([4]byte(b[off+16 : off+20])), true
	case et == 0x86dd && len(b) >= off+40:
		return netip.AddrFrom16([16]byte(b[off+24 : off+40])), true
	}
	return netip.Addr{}, false
}

type mqueue struct {
	idx        []int // slot indices, ring
	head, size int
}

func (q *mqueue) push(i int) {
	if q.size == len(q.idx) {
		n := make([]int, max(16, 2*len(q.idx)))
		for k := 0; k < q.size; k++ {
			n[k] = q.idx[(q.head+k)%len(q.idx)]
		}
		q.idx, q.head = n, 0
	}
	q.idx[(q.head+q.size)%len(q.idx)] = i
	q.size++
}

func (q *mqueue) front() int { return q.idx[q.head] }

func (q *mqueue) pop() int {
	i := q.idx[q.head]
	q.head = (q.head + 1) % len(q.idx)
	q.size--
	return i
}

// push takes a frame of a file that declares declared interfaces and
// calls emit for every frame now due, in timestamp order. f is copied
// when it must wait: its data belongs to the reader.
func (m *merger) push(f *pcap.Frame, in *pcap.Interface, declared int, emit func(*pcap.Frame, *pcap.Interface)) {
	id := f.Interface
	if declared <= 1 || id < 0 || id >= MaxInterfaces {
		m.flush(emit) // one stream, or beyond the bound: file order
		m.note(f)
		emit(f, in)
		return
	}
	for len(m.queues) <= id || len(m.queues) < min(declared, MaxInterfaces) {
		m.queues = append(m.queues, mqueue{})
	}
	i := m.slot()
	s := &m.slots[i]
	s.f.Number, s.f.Timestamp, s.f.Interface, s.f.Length = f.Number, f.Timestamp, f.Interface, f.Length
	s.f.Data = append(s.f.Data[:0], f.Data...)
	s.f.Comments = nil
	s.arrival, s.point = false, ""
	if m.arrival != nil {
		s.point, s.arrival = m.arrival(&s.f, in)
	}
	s.ok = in != nil
	if in != nil {
		s.in = *in
	}
	if ns := f.Timestamp.UnixNano(); ns < m.maxIn {
		m.interleaved = true
	} else {
		m.maxIn = ns
	}
	m.queues[id].push(i)
	m.held++
	for m.held > MaxReorder || m.ready() {
		if !m.emitOne(emit) {
			break
		}
	}
}

// ready reports whether every stream has a frame waiting.
func (m *merger) ready() bool {
	for i := range m.queues {
		if m.queues[i].size == 0 {
			return false
		}
	}
	return true
}

func (m *merger) slot() int {
	if n := len(m.free); n > 0 {
		i := m.free[n-1]
		m.free = m.free[:n-1]
		return i
	}
	m.slots = append(m.slots, mslot{})
	return len(m.slots) - 1
}

// emitOne emits the earliest head; false when nothing is held.
func (m *merger) emitOne(emit func(*pcap.Frame, *pcap.Interface)) bool {
	best := -1
	var bq *mqueue
	for id := range m.queues {
		q := &m.queues[id]
		if q.size == 0 {
			continue
		}
		if best < 0 || m.before(&m.slots[q.front()], &m.slots[best]) {
			best, bq = q.front(), q
		}
	}
	if best < 0 {
		return false
	}
	bq.pop()
	m.held--
	s := &m.slots[best]
	m.note(&s.f)
	var in *pcap.Interface
	if s.ok {
		in = &s.in
	}
	emit(&s.f, in)
	m.free = append(m.free, best)
	return true
}

// note counts a frame emitted behind one already emitted.
func (m *merger) note(f *pcap.Frame) {
	ns := f.Timestamp.UnixNano()
	if m.anyOut && ns < m.lastNs {
		m.late++
	}
	if !m.anyOut || ns > m.lastNs {
		m.lastNs = ns
	}
	m.anyOut = true
}

// flush emits every frame held.
func (m *merger) flush(emit func(*pcap.Frame, *pcap.Interface)) {
	for m.emitOne(emit) {
	}
}
