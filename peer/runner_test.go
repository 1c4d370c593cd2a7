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
	if r := NewRunner(a, &tunnelStub{}); r.framesFirst(0) {
		t.Error("a transport that cannot tell what it holds delayed the timer")
	}
	c := &pendingStub{}
	r := NewRunner(a, c)
	if r.framesFirst(0) {
		t.Error("the timer waited with nothing held")
	}
	c.pending = true
	const t0 = 10 * statemachine.Millisecond
	for _, at := range []statemachine.Time{t0, t0 + maxFramesFirst/2, t0 + maxFramesFirst - 1} {
		if !r.framesFirst(at) {
			t.Errorf("at %v, frames held since %v: the timer did not wait", at, t0)
		}
	}
	if r.framesFirst(t0 + maxFramesFirst) {
		t.Errorf("the timer waited past maxFramesFirst (%v)", maxFramesFirst)
	}
	// Frames taken in end the wait; the next expiry waits afresh.
	c.pending = false
	if r.framesFirst(t0 + 2*maxFramesFirst) {
		t.Error("the timer waited once the frames were taken in")
	}
	c.pending = true
	if !r.framesFirst(t0 + 3*maxFramesFirst) {
		t.Error("a later expiry with frames held did not wait")
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
