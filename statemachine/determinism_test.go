package statemachine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lossyRun runs a fixed lossy exchange and returns its trace and the
// final state hashes.
func lossyRun(t *testing.T) ([]string, [2]uint64) {
	s := newPair(t)
	k := 0
	s.rule = func(from int, o *Outgoing) action {
		k++
		return action{drop: k%5 == 0, trim: k%7 == 0, ce: k%3 == 0}
	}
	for i := uint64(1); i <= 4; i++ {
		s.write(0, i, int(i)*8192, 4000, i%2 == 0)
	}
	s.run(Millisecond)
	return s.log, [2]uint64{s.qp[0].StateHash(), s.qp[1].StateHash()}
}

// TestDeterministic: the same inputs give the same outputs and state,
// event for event (the package's raft-style contract).
func TestDeterministic(t *testing.T) {
	l1, h1 := lossyRun(t)
	l2, h2 := lossyRun(t)
	if d := cmp.Diff(l1, l2); d != "" {
		t.Errorf("two runs differ: %s", d)
	}
	if h1 != h2 {
		t.Errorf("state hashes %x and %x", h1, h2)
	}
}

// TestClone: a clone fed the same inputs as the original produces the same
// outputs, and changing the clone leaves the original alone.
func TestClone(t *testing.T) {
	s := newPair(t)
	s.write(0, 1, 0, 5000, true)
	s.run(500) // packets in flight
	a := s.qp[0]
	c := a.Clone()
	if a.StateHash() != c.StateHash() {
		t.Fatal("clone hashes differently")
	}
	var o1, o2 Output
	o1.TracePackets, o2.TracePackets = true, true
	wr := WorkRequest{WRID: 9, Opcode: OpWrite, Data: make([]byte, 3000)}
	if err := a.Post(600, wr, &o1); err != nil {
		t.Fatal(err)
	}
	if err := c.Post(600, wr, &o2); err != nil {
		t.Fatal(err)
	}
	a.Advance(100*Microsecond, &o1)
	c.Advance(100*Microsecond, &o2)
	if d := cmp.Diff(o1.Events, o2.Events); d != "" {
		t.Errorf("clone diverged: %s", d)
	}
	h := a.StateHash()
	if err := c.Modify(0, StateError, Attr{}, 0, &o2); err != nil {
		t.Fatal(err)
	}
	if a.StateHash() != h || a.State() != StateRTS {
		t.Error("changing the clone changed the original")
	}
	as := a.AbstractState()
	if as.State != StateRTS || len(as.PSNs) != int(as.NXT-as.UNA-1)&0xFFFFFF || len(as.EVStates) != 4 {
		t.Errorf("abstract state %+v", as)
	}
}

// TestNames: every enum value has a name, so traces never print numbers.
func TestNames(t *testing.T) {
	for k := EvNone; k <= EvSQDrained; k++ {
		if s := k.String(); s == "" || s[0] == 'E' && len(s) > 9 && s[:9] == "EventKind" {
			t.Errorf("event kind %d has no name", k)
		}
	}
	for _, s := range []interface{ String() string }{StateReset, StateError, EVGood, EVDenied, StatusSuccess,
		StatusRemoteAccessErr, OpWrite, OpRecvWriteImm, ClassControl, AttrMaxWIMM | AttrSQPSN} {
		if s.String() == "" {
			t.Errorf("%#v has no name", s)
		}
	}
}
