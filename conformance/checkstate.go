package conformance

import (
	"fmt"
	"reflect"
	"unsafe"
)

// checkState is what one check keeps of its own on one connection: the
// engine holds one per connection for each check that declares a state
// (check.state), made the first time a hook of the check asks for it
// (connState.of), and no code outside the checks reads it
// (TestChecksKeepModelReadOnly). entries is how many entries its
// containers hold, which recount adds to the connections' entries
// (MaxEntries); a state's containers are each counted there or bounded
// where they are declared (TestCheckStatesCountEveryContainer).
type checkState interface{ entries() int }

// maxConnStates bounds the checks that keep a state of their own (flow.own
// is an array of this many).
const maxConnStates = 16

// stateSlot is a check's state's place in every connection's flow.own:
// addChecks numbers the slots of the checks that declare one
// (check.state), in registration order.
type stateSlot struct {
	i    int // 1 + the index in flow.own; 0 until addChecks numbers it
	make func() checkState
}

var numConnStates int // the state slots numbered

// connState is the typed slot of a check's state S (a pointer type) on each
// connection. A checks file declares it next to its check
// (newConnState) and names its slot in the check (check.state); the
// check's hooks reach their connection's state with of.
type connState[S checkState] struct{ slot *stateSlot }

// newConnState declares the state of one check, made by mk on a
// connection's first use (package variable initialisation). S must be a
// pointer type: of reads a made state back from flow.ownP as one.
func newConnState[S checkState](mk func() S) connState[S] {
	if k := reflect.TypeFor[S]().Kind(); k != reflect.Pointer {
		panic(fmt.Sprintf("conformance: a check's connection state is a %v, not a pointer", k))
	}
	return connState[S]{slot: &stateSlot{make: func() checkState { return mk() }}}
}

// of returns the check's state on connection fl, making it on first use:
// one allocation per connection, none per frame. A made state is read as
// its pointer (flow.ownP), which inlines: no interface type test per hook.
func (s connState[S]) of(fl *flow) S {
	p := fl.ownP[s.slot.i]
	if p == nil {
		p = s.slot.makeIn(fl)
	}
	return *(*S)(unsafe.Pointer(&p))
}

// makeIn makes the slot's state on connection fl and returns its pointer.
func (sl *stateSlot) makeIn(fl *flow) unsafe.Pointer {
	v := sl.make()
	fl.own[sl.i-1] = v // a state no check declares (check.state) panics here: the checks' tests catch it
	fl.ownP[sl.i] = reflect.ValueOf(v).UnsafePointer()
	return fl.ownP[sl.i]
}

// A timer is a check's deadline on one connection: the engine calls its
// check's timer hook when capture time passes at, with the arguments the
// check armed it with (engine.arm). A check whose rule is "X within T"
// arms one when the interval starts and decides when it ends, rather
// than on a later frame or at the end of the capture.
//
// A connection's timers fire at the first frame past their deadline
// between its two nodes (at any capture point, before the frame is
// judged; fireTimers): that is the frame of the connection's node pair a
// parallel judgement's shard sees first past the deadline too, so the
// report stays identical for any number of workers. The flow's model is
// then as it stood at the deadline: none of its frames came between. The
// timers still pending when the capture ends are dropped: the finish
// hooks judge what is left.
type timer struct {
	at   int64  // the deadline, capture time (ns)
	seq  uint64 // the timers armed before it: the order of equal deadlines
	c    *check
	pt   *point
	fl   *flow
	a, b uint64 // the check's arguments
}

// maxTimers bounds the timers pending in one engine: a check whose timer
// is refused (arm returns false) judges as it would without one, on a
// later frame or at the end.
const maxTimers = 1024

// timerCtx is what a check's timer hook sees: the timer that fired, and
// the capture time it fired at (engine.now, the frame's past its
// deadline).
type timerCtx struct {
	timer
}

// timers are an engine's pending timers: a min-heap by deadline (heap),
// plus, in due, those whose deadline passed while frames of other node
// pairs were judged, which wait for a frame of their own pair.
type timers struct {
	h   timerHeap
	due []timer
	seq uint64 // timers armed
}

// timerHeap is a binary min-heap of timers by deadline, then by the
// order they were armed in (before), kept by hand:
// container/heap would box each timer in an interface.
type timerHeap []timer

// before orders timers by deadline, then by the order they were armed
// in: the timers of one node pair, armed in the same order by one engine
// and by a shard (fireTimers), fire in the same order.
func (t *timer) before(u *timer) bool { return t.at < u.at || t.at == u.at && t.seq < u.seq }

// push adds t.
func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].before(&s[up]) {
			break
		}
		s[up], s[i] = s[i], s[up]
		i = up
	}
}

// pop takes out the earliest timer.
func (h *timerHeap) pop() timer {
	s := *h
	t := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = timer{}
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].before(&s[m]) {
			m = l
		}
		if r := l + 1; r < n && s[r].before(&s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return t
}

// len returns the timers pending.
func (t *timers) len() int { return len(t.h) + len(t.due) }

// arm asks for check c's timer hook to be called with a and b once capture
// time passes at, on connection fl at point pt. It reports false when
// maxTimers are pending, or c has no timer hook: the check then judges
// without the timer.
func (e *engine) arm(c *check, pt *point, fl *flow, at int64, a, b uint64) bool {
	ts := &e.timers
	if ts.len() >= maxTimers || c.timer == nil {
		return false
	}
	if ts.h == nil {
		ts.h = make(timerHeap, 0, maxTimers) // once: pushes never grow it
		ts.due = make([]timer, 0, maxTimers)
	}
	ts.seq++
	ts.h.push(timer{at: at, seq: ts.seq, c: c, pt: pt, fl: fl, a: a, b: b})
	return true
}

// timersDue reports whether a timer may fire at the current frame: one
// deadline passed (inlined, the only cost of timers to most frames).
func (e *engine) timersDue() bool {
	ts := &e.timers
	return len(ts.due) > 0 || len(ts.h) > 0 && ts.h[0].at < e.now
}

// fireTimers calls the timer hooks of the timers due between nodes src
// and dst (either way), the current frame's, in deadline order; those of
// other pairs wait in due for a frame of theirs.
func (e *engine) fireTimers(src, dst string) {
	ts := &e.timers
	for len(ts.h) > 0 && ts.h[0].at < e.now {
		t := ts.h.pop()
		ts.due = append(ts.due, t)
	}
	k := 0
	for i := 0; i < len(ts.due); i++ {
		t := ts.due[i]
		if !t.fl.between(src, dst) {
			ts.due[k] = t
			k++
			continue
		}
		e.fire(&t)
	}
	clear(ts.due[k:])
	ts.due = ts.due[:k]
}

// between reports whether the flow's nodes are a and b, either way.
func (fl *flow) between(a, b string) bool {
	r, s := fl.key.req, fl.key.rsp
	return sameString(r, a) && sameString(s, b) || sameString(r, b) && sameString(s, a)
}

// fire calls t's check's timer hook, with its connection current at its
// point.
func (e *engine) fire(t *timer) {
	prev := t.pt.curFlow
	t.pt.curFlow = t.fl
	x := &e.tx
	x.timer = *t
	t.c.timer(e, x)
	t.pt.curFlow = prev
}
