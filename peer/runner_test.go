package peer

import (
	"testing"

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
