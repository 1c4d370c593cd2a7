package statemachine

// Tests written against mutants of evevents.go that the package's other
// tests let live (scripts/mutate.sh).

import (
	"math"
	"testing"
)

// TestMutantEVEventCQSize: an EV event CQ holds 1 to 1 048 576 events;
// both ends are accepted and one past either refused, so its memory is
// bounded (EV-ST-12).
func TestMutantEVEventCQSize(t *testing.T) {
	for _, c := range []struct {
		cqe int
		ok  bool
	}{{0, false}, {1, true}, {1 << 20, true}, {1<<20 + 1, false}} {
		cq, err := NewEVEventCQ(c.cqe, false)
		if (err == nil) != c.ok {
			t.Errorf("cqe %d: error %v, want accepted %v", c.cqe, err, c.ok)
			continue
		}
		if c.ok && len(cq.ring) != c.cqe {
			t.Errorf("cqe %d: room for %d events", c.cqe, len(cq.ring))
		}
	}
	// A CQ of one event holds one and drops the next.
	cq, err := NewEVEventCQ(1, true)
	if err != nil {
		t.Fatal(err)
	}
	cq.push(EVEvent{EV: 1})
	cq.push(EVEvent{EV: 2})
	got := make([]EVEvent, 2)
	if n := cq.Poll(got); n != 1 || got[0].EV != 1 {
		t.Errorf("CQ of 1: polled %v", got[:n])
	}
}

// TestMutantEVEventDropCountSaturates: a precise drop_count stops at the
// largest value its 32 bits hold rather than wrap to 0, which would report
// no loss after the most (EV-ST-12).
func TestMutantEVEventDropCountSaturates(t *testing.T) {
	cq, err := NewEVEventCQ(1, true)
	if err != nil {
		t.Fatal(err)
	}
	cq.push(EVEvent{EV: 1})
	cq.dropped = math.MaxUint32 - 1
	cq.push(EVEvent{EV: 2}) // dropped: MaxUint32
	cq.push(EVEvent{EV: 3}) // dropped: stays MaxUint32
	got := make([]EVEvent, 1)
	cq.Poll(got)
	cq.push(EVEvent{EV: 4})
	if n := cq.Poll(got); n != 1 || got[0].EV != 4 || got[0].DropCount != math.MaxUint32 {
		t.Errorf("after 2^32 or more drops: %+v, want EV 4 with drop_count %d", got[:n], uint32(math.MaxUint32))
	}
}
