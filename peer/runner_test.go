package peer

import (
	"context"
	"testing"
	"time"

	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/statemachine"
)

// pendingStub is a transport that holds unread frames when pending.
type pendingStub struct {
	tunnelStub
	pending bool
}

func (s *pendingStub) Pending() bool { return s.pending }

// TestTimerWaitsForFramesHeld: an expired timer waits while the transport
// holds frames its reader has not taken in (a SACK waiting in the socket
// of a descheduled peer must stop the retransmission, LR-RTX-1), at most
// maxFramesFirst; with nothing held, or a transport that cannot tell, it
// fires at once.
func TestTimerWaitsForFramesHeld(t *testing.T) {
	a, _ := newAgent(t)
	if r := NewRunner(a, &tunnelStub{}); r.framesFirst(0, 0) {
		t.Error("a transport that cannot tell what it holds delayed the timer")
	}
	c := &pendingStub{}
	r := NewRunner(a, c)
	if r.framesFirst(0, 0) {
		t.Error("the timer waited with nothing held")
	}
	c.pending = true
	const t0 = 10 * statemachine.Millisecond
	for _, at := range []statemachine.Time{t0, t0 + maxFramesFirst/2, t0 + maxFramesFirst - 1} {
		if !r.framesFirst(at, t0) {
			t.Errorf("%v after the deadline, frames held: the timer did not wait", time.Duration(at-t0))
		}
	}
	if r.framesFirst(t0+maxFramesFirst, t0) {
		t.Errorf("the timer waited past maxFramesFirst (%v)", time.Duration(maxFramesFirst))
	}
	// Frames taken in end the wait; the next expiry waits afresh.
	c.pending = false
	if r.framesFirst(t0+2*maxFramesFirst, t0+2*maxFramesFirst) {
		t.Error("the timer waited once the frames were taken in")
	}
	c.pending = true
	if !r.framesFirst(t0+3*maxFramesFirst, t0+3*maxFramesFirst) {
		t.Error("a later expiry with frames held did not wait")
	}
	// A frame taken in stops the timer during the wait; the next expiry
	// waits its own maxFramesFirst.
	r = NewRunner(a, c)
	const t1, t2 = 100 * ms, 150 * ms
	if !r.framesFirst(t1, t1) {
		t.Fatal("an expiry with frames held did not wait")
	}
	if r.framesFirst(t1+ms, t2) {
		t.Error("a timer not yet due waited")
	}
	if !r.framesFirst(t2, t2) {
		t.Error("the next expiry with frames held did not wait: the wait the stopped timer left still counted")
	}
}

// planeStub is a transport that tells per plane whether frames are
// pending (netio.AFPacket).
type planeStub struct {
	tunnelStub
	pending [2]bool
}

func (s *planeStub) Pending() bool            { return s.pending[0] || s.pending[1] }
func (s *planeStub) PendingOn(plane int) bool { return s.pending[plane] }

const ms = statemachine.Millisecond

// newPlaneRunner returns a runner over a planeStub, started a second ago:
// the arrivals the tests stamp, up to then, are in the past.
func newPlaneRunner(t *testing.T) (*Runner, *planeStub) {
	a, _ := newAgent(t)
	c := &planeStub{}
	r := NewRunner(a, c)
	r.start = r.start.Add(-time.Second)
	return r, c
}

// applyArrived has r's reader apply a frame (one the agent drops) on
// plane that reached the transport at at on r's clock, stamped as the
// kernel stamps it: wall clock, no monotonic reading.
func applyArrived(r *Runner, plane int, at statemachine.Time) {
	r.receive(netio.Frame{Plane: plane, Data: []byte{1, 2, 3}, At: r.start.Round(0).Add(time.Duration(at))})
}

// TestTimerWaitsForFramesArrivedBefore: the reader of a loaded peer is
// 60 ms behind; frames that reached the socket before the timer's
// deadline (the tester's SACKs) are still pending. The timer waits for
// them, past maxFramesFirst, until the reader has applied a frame that
// arrived after the deadline; the planted reader delay made the peer
// resend PSNs SACKed long before (LR-SACK-2) when it fired after 5 ms.
func TestTimerWaitsForFramesArrivedBefore(t *testing.T) {
	r, c := newPlaneRunner(t)
	const d = 200 * ms // the timer's deadline
	c.pending[0] = true
	if !r.framesFirst(d, d) {
		t.Error("the timer did not wait for plane 0's frames, none applied yet")
	}
	applyArrived(r, 0, d-60*ms)
	for _, late := range []statemachine.Time{0, maxFramesFirst, 30 * ms, 60 * ms} {
		if !r.framesFirst(d+late, d) {
			t.Errorf("%v after the deadline, with frames pending on a plane whose last frame applied arrived 60 ms before it: the timer did not wait", time.Duration(late))
		}
	}
	applyArrived(r, 0, d-ms)
	if !r.framesFirst(d+61*ms, d) {
		t.Error("the timer stopped waiting with the reader still behind the deadline")
	}
	applyArrived(r, 0, d+2*ms)
	if r.framesFirst(d+62*ms, d) {
		t.Error("the timer waited once the reader had applied a frame that arrived after its deadline")
	}
}

// TestTimerIgnoresFramesArrivedAfter: frames that reached the transport
// after the timer's deadline do not hold it, on any plane; a plane behind
// the deadline holds it whatever the other does.
func TestTimerIgnoresFramesArrivedAfter(t *testing.T) {
	r, c := newPlaneRunner(t)
	const d = 200 * ms
	applyArrived(r, 0, d+ms)
	c.pending[0] = true
	if r.framesFirst(d+2*ms, d) {
		t.Error("the timer waited for frames that arrived after its deadline (the last one applied from their plane did)")
	}
	// Plane 1 applied a frame from before the deadline and nothing of it
	// is pending: it does not hold the timer either.
	applyArrived(r, 1, d-10*ms)
	if r.framesFirst(d+3*ms, d) {
		t.Error("a plane with nothing pending held the timer")
	}
	c.pending[1] = true
	if !r.framesFirst(d+4*ms, d) {
		t.Error("the timer did not wait for plane 1, whose reader is behind its deadline, because plane 0 has caught up")
	}
}

// TestTimerWaitBound: a timer waits for frames that arrived before its
// deadline at most maxArrivedFirst, however far behind the reader stays;
// a hold that ended because the timer was stopped (a SACK came in) does
// not shorten the next expiry's wait.
func TestTimerWaitBound(t *testing.T) {
	r, c := newPlaneRunner(t)
	const d = 200 * ms
	applyArrived(r, 0, 0)
	c.pending[0] = true
	for _, at := range []statemachine.Time{d, d + maxArrivedFirst/2, d + maxArrivedFirst - 1} {
		if !r.framesFirst(at, d) {
			t.Errorf("%v after the deadline, with frames that arrived before it pending: the timer did not wait", time.Duration(at-d))
		}
	}
	if r.framesFirst(d+maxArrivedFirst, d) {
		t.Errorf("the timer waited past maxArrivedFirst (%v)", time.Duration(maxArrivedFirst))
	}
	// The next timer expires; a frame applied stops it before the wait
	// ran out; the one after waits its own maxArrivedFirst.
	const d2, d3 = 400 * ms, 460 * ms
	if !r.framesFirst(d2, d2) {
		t.Fatal("the next expiry did not wait")
	}
	if r.framesFirst(d2+ms, d3) {
		t.Error("a timer not yet due waited")
	}
	for _, at := range []statemachine.Time{d3, d3 + maxArrivedFirst/2} {
		if !r.framesFirst(at, d3) {
			t.Errorf("%v after its deadline, the next timer did not wait: the wait the stopped timer left still counted", time.Duration(at-d3))
		}
	}
}

// TestArrivalOnRunnerClock: a frame's kernel stamp (wall clock) becomes
// its arrival on the runner's clock (monotonic from start) through its
// age; a frame without a stamp counts as arrived when applied.
func TestArrivalOnRunnerClock(t *testing.T) {
	r, _ := newPlaneRunner(t)
	const age = 30 * time.Millisecond
	before := r.now()
	r.receive(netio.Frame{Plane: 1, Data: []byte{1, 2, 3}, At: time.Now().Round(0).Add(-age)})
	after := r.now()
	// One time.Now reads both clocks a little apart: a microsecond's slack.
	const slack = statemachine.Microsecond
	if got, lo, hi := r.arrived[1], before-statemachine.Time(age)-slack, after-statemachine.Time(age)+slack; got < lo || got > hi {
		t.Errorf("a frame stamped %v before it was applied arrived at %v on the runner's clock, want within [%v, %v]", age, got, lo, hi)
	}
	if r.arrived[0] != noArrival {
		t.Errorf("plane 0, none of whose frames was applied, arrived at %v, want noArrival", r.arrived[0])
	}
	before = r.now()
	r.receive(netio.Frame{Plane: 0, Data: []byte{1, 2, 3}})
	if got, after := r.arrived[0], r.now(); got < before || got > after {
		t.Errorf("a frame without a stamp arrived at %v, want when it was applied, within [%v, %v]", got, before, after)
	}
}

// readOrderStub is a transport that hands out frames and reports, at each
// ReadFrame call, how many frames the agent had taken in (a.node.RxPackets,
// read on the runner's reader goroutine, which applies them).
type readOrderStub struct {
	tunnelStub
	a      *Agent
	frames chan netio.Frame
	done   chan struct{}
	calls  chan uint64
}

func (s *readOrderStub) ReadFrame() (netio.Frame, error) {
	s.calls <- s.a.node.RxPackets
	select {
	case f := <-s.frames:
		return f, nil
	case <-s.done:
		return netio.Frame{}, netio.ErrClosed
	}
}

func (s *readOrderStub) Close() error {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	return nil
}

// TestRunnerAppliesBeforeNextRead: Run's reader calls ReadFrame again only
// once it has applied the frame ReadFrame returned last. netio.AFPacket's
// Pending counts that frame until the next call, so an expired timer waits
// for a SACK the reader holds (framesFirst); a reader that read ahead
// would let the timer fire before it.
func TestRunnerAppliesBeforeNextRead(t *testing.T) {
	a, _ := newAgent(t)
	const n = 3
	s := &readOrderStub{a: a, frames: make(chan netio.Frame, n), done: make(chan struct{}), calls: make(chan uint64, n+1)}
	for range n {
		s.frames <- netio.Frame{Data: []byte{1, 2, 3}} // dropped, but counted
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- NewRunner(a, s).Run(ctx) }()
	for i := range uint64(n + 1) {
		select {
		case applied := <-s.calls:
			if applied != i {
				t.Fatalf("ReadFrame call %d with %d frames applied, want %d: the reader read before applying", i+1, applied, i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFrame called %d times, want %d", i, n+1)
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}
