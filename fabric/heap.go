package fabric

import "math/bits"

// event is one entry of the simulator's agenda. Events are ordered by time,
// then by the sequence number they were scheduled with, so two events at
// the same instant run in the order they were created: the tie-break is a
// pure function of the run, never of map order or pointer values.
type event struct {
	t    Time
	seq  uint64
	kind eventKind
	id   int32 // flight, endpoint or callback index, by kind
}

type eventKind uint8

const (
	evArrive eventKind = iota // a flight reaches the far end of its current link
	evTimer                   // an endpoint's NextDeadline
	evCall                    // a scheduled control action
)

func (a *event) before(b *event) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

// The agenda is a timing wheel of one-nanosecond buckets covering the next
// wheelSize nanoseconds, with a heap for events beyond that horizon. Almost
// every event of a packet fabric is a hop, a few hundred nanoseconds to a
// few microseconds ahead, so pushing is an append to a bucket and popping
// a scan of a bitmap, instead of a heap's logarithmic, branchy sift.
//
// Order is exactly (time, sequence): each bucket holds one instant and is
// FIFO, and a far event moves into the wheel as soon as it comes within
// the horizon — when a pop advances the base — before any event for the
// same instant can be pushed into the wheel directly, so it keeps its
// place ahead of later ones.
const (
	wheelBits = 15
	wheelSize = 1 << wheelBits // 32.8 µs
	wheelMask = wheelSize - 1
)

type wnode struct {
	e    event
	next int32 // next node of the bucket, −1 at the tail
}

type agenda struct {
	seq   uint64
	base  Time // every wheel event has base ≤ t < base + wheelSize
	n     int  // events in the wheel
	head  []int32
	tail  []int32
	bits  []uint64 // bucket b non-empty
	sum   []uint64 // word w of bits non-zero: sparse agendas scan 8 words, not 512
	nodes []wnode
	free  []int32
	far   []event // binary heap of events at or beyond base + wheelSize
	minT  Time    // earliest wheel event, when minOK
	minOK bool
}

func (a *agenda) init() {
	a.head = make([]int32, wheelSize)
	a.tail = make([]int32, wheelSize)
	a.bits = make([]uint64, wheelSize/64)
	a.sum = make([]uint64, wheelSize/64/64)
	for i := range a.head {
		a.head[i] = -1
	}
}

func (a *agenda) len() int { return a.n + len(a.far) }

// push schedules an event; t is never before the last event popped.
func (a *agenda) push(t Time, kind eventKind, id int32) {
	if a.head == nil {
		a.init()
	}
	a.seq++
	e := event{t: t, seq: a.seq, kind: kind, id: id}
	if t-a.base >= wheelSize {
		a.farPush(e)
		return
	}
	a.insert(e)
}

func (a *agenda) insert(e event) {
	var i int32
	if k := len(a.free); k > 0 {
		i = a.free[k-1]
		a.free = a.free[:k-1]
	} else {
		i = int32(len(a.nodes))
		a.nodes = append(a.nodes, wnode{})
	}
	a.nodes[i] = wnode{e: e, next: -1}
	b := int(e.t) & wheelMask
	if a.head[b] < 0 {
		a.head[b] = i
		w := b >> 6
		if a.bits[w] == 0 {
			a.sum[w>>6] |= 1 << (w & 63)
		}
		a.bits[w] |= 1 << (b & 63)
	} else {
		a.nodes[a.tail[b]].next = i
	}
	a.tail[b] = i
	if a.n == 0 || a.minOK && e.t < a.minT {
		a.minT, a.minOK = e.t, true
	}
	a.n++
}

// scan returns the time of the earliest wheel event; the wheel is not
// empty. Buckets are searched in cyclic order from the base: the rest of
// the base's word, then the next non-empty word through the summary, which
// may be the base's own word again (its bits below the base are the far
// end of the horizon).
func (a *agenda) scan() Time {
	if a.minOK {
		return a.minT
	}
	start := int(a.base) & wheelMask
	w0 := start >> 6
	word := a.bits[w0] &^ (1<<(start&63) - 1)
	w := w0
	if word == 0 {
		w = a.nextWord(w0 + 1)
		word = a.bits[w]
	}
	b := w<<6 | bits.TrailingZeros64(word)
	a.minT, a.minOK = a.base+Time((b-start)&wheelMask), true
	return a.minT
}

// nextWord returns the first non-empty word of bits at or after from,
// cyclically.
func (a *agenda) nextWord(from int) int {
	from &= len(a.bits) - 1
	s := from >> 6
	word := a.sum[s] &^ (1<<(from&63) - 1)
	for k := 0; k <= len(a.sum); k++ {
		if word != 0 {
			return s<<6 | bits.TrailingZeros64(word)
		}
		s = (s + 1) & (len(a.sum) - 1)
		word = a.sum[s]
	}
	panic("fabric: agenda wheel count out of step with its bitmap")
}

// nextTime returns the time of the next event; the agenda is not empty.
func (a *agenda) nextTime() Time {
	if a.n == 0 {
		return a.far[0].t
	}
	return a.scan()
}

func (a *agenda) pop() event {
	if a.n == 0 {
		a.base = a.far[0].t
		a.migrate()
	}
	t := a.scan()
	b := int(t) & wheelMask
	i := a.head[b]
	nd := &a.nodes[i]
	e := nd.e
	a.head[b] = nd.next
	if nd.next < 0 {
		w := b >> 6
		if a.bits[w] &^= 1 << (b & 63); a.bits[w] == 0 {
			a.sum[w>>6] &^= 1 << (w & 63)
		}
		a.minOK = false
	}
	a.free = append(a.free, i)
	a.n--
	if t != a.base {
		a.base = t
		a.migrate()
	}
	return e
}

// migrate moves the far events that the horizon now covers into the
// wheel, in order.
func (a *agenda) migrate() {
	for len(a.far) > 0 && a.far[0].t-a.base < wheelSize {
		a.insert(a.farPop())
	}
}

func (a *agenda) farPush(e event) {
	h := append(a.far, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	a.far = h
}

func (a *agenda) farPop() event {
	h := a.far
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	if n > 0 {
		i := 0
		for {
			c := 2*i + 1
			if c >= n {
				break
			}
			if c+1 < n && h[c+1].before(&h[c]) {
				c++
			}
			if !h[c].before(&last) {
				break
			}
			h[i] = h[c]
			i = c
		}
		h[i] = last
	}
	a.far = h
	return top
}
