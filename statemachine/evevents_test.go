package statemachine

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openmrc/mrc/wire"
)

// TestEVEventCQ: transitions into the states the profile's ev_event_mask
// selects reach the EV event CQ, from the protocol (a SACK with m =
// ALWAYS_SKIP) and from the controller; others do not (EV-ST-12).
func TestEVEventCQ(t *testing.T) {
	o := newOne(t, func(c *testCfg, _ *Attr) { c.EVProfiles[0].EventMask = EVEventGood | EVEventAssumedBad })
	cq, err := NewEVEventCQ(8, true)
	if err != nil {
		t.Fatal(err)
	}
	step := func(f func()) {
		o.out.Reset()
		f()
		cq.Collect(o.q, &o.out)
	}
	ev := uint32(0x100)
	step(func() { o.write(1, 1024, false) })
	step(func() { o.recv(1, sackPkt(0, 0, 0, 0, ev, wire.MAlwaysSkip)) }) // GOOD → ASSUMED_BAD
	step(func() { _ = o.q.SetEVState(o.now, ev, EVDenied, &o.out) })      // not selected
	step(func() { _ = o.q.SetEVState(o.now, ev, EVGood, &o.out) })        // DENIED → GOOD
	got := make([]EVEvent, 8)
	n := cq.Poll(got)
	want := []EVEvent{{ProfileID: 7, EV: ev, Port: 1, State: EVAssumedBad}, {ProfileID: 7, EV: ev, Port: 1, State: EVGood}}
	if d := cmp.Diff(want, got[:n]); d != "" {
		t.Errorf("EV events (-want +got):\n%s", d)
	}
	if cq.Len() != 0 || cq.Poll(got) != 0 {
		t.Error("the CQ is not empty after polling everything")
	}
}

// TestEVEventCQOverflow: a full CQ drops events and reports how many in
// the drop_count of the next event it accepts: exactly with precise drop
// counting, else as 1 (EV-ST-12).
func TestEVEventCQOverflow(t *testing.T) {
	for _, precise := range []bool{true, false} {
		cq, _ := NewEVEventCQ(2, precise)
		for i := range 5 {
			cq.push(EVEvent{EV: uint32(i)})
		}
		got := make([]EVEvent, 4)
		if n := cq.Poll(got); n != 2 || got[0].EV != 0 || got[1].EV != 1 || got[0].DropCount+got[1].DropCount != 0 {
			t.Fatalf("precise=%v: first poll %v", precise, got[:n])
		}
		cq.push(EVEvent{EV: 9})
		want := uint32(3)
		if !precise {
			want = 1
		}
		if n := cq.Poll(got); n != 1 || got[0].EV != 9 || got[0].DropCount != want {
			t.Errorf("precise=%v: after 3 drops got %+v, want drop_count %d", precise, got[:n], want)
		}
	}
	if _, err := NewEVEventCQ(0, false); err == nil {
		t.Error("a CQ of 0 entries was created")
	}
	for _, m := range []EVEventMask{0x10, EVEventDenied, EVEventGood | EVEventDenied} {
		c := testConfig(qpnA)
		c.EVProfiles[0].EventMask = m
		var ce *ConfigError
		if _, err := c.new(); !errors.As(err, &ce) || !strings.HasSuffix(ce.Field, ".EventMask") {
			t.Errorf("ev_event_mask %#x: %v; only GOOD and ASSUMED_BAD may be selected (EV-ST-12, AMB-41)", m, err)
		}
	}
}

// TestSetProfileEVState: the controller's MODIFY_EV_STATE on a profile
// reaches every QP using it and no other; each QP keeps its own path
// state afterwards (EV-ST-11, EV-ST-9).
func TestSetProfileEVState(t *testing.T) {
	c := testConfig(qpnA)
	c.EVProfiles = append(c.EVProfiles, EVProfile{ID: 8, EVs: testEVs, ActivePerPlane: 1})
	n, err := NewNode(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	mk := func(qpn uint32, profile uint64) *QP {
		q, err := n.NewQP(QPConfig{QPN: qpn, Seed: uint64(qpn), Addr: c.Addr})
		if err != nil {
			t.Fatal(err)
		}
		a := testAttr(qpnB)
		a.EVProfileID = profile
		if err := q.BringUp(0, a, &out); err != nil {
			t.Fatal(err)
		}
		return q
	}
	a1, a2, b := mk(0x31, 7), mk(0x32, 7), mk(0x33, 8)
	ev := uint32(0x201)
	k, err := n.SetProfileEVState(0, []*QP{a1, a2, b}, 7, ev, EVDenied, &out)
	if err != nil || k != 2 {
		t.Fatalf("changed %d QPs, err %v; want 2", k, err)
	}
	state := func(q *QP) EVState { s, _ := q.EVStateOf(ev); return s }
	if state(a1) != EVDenied || state(a2) != EVDenied || state(b) != EVGood {
		t.Errorf("after DENIED on profile 7: %s %s %s", state(a1), state(a2), state(b))
	}
	if err := a1.SetEVState(0, ev, EVGood, &out); err != nil {
		t.Fatal(err)
	}
	if state(a1) != EVGood || state(a2) != EVDenied {
		t.Errorf("path state is not per QP: %s %s", state(a1), state(a2))
	}
	other, _ := c.new()
	if _, err := n.SetProfileEVState(0, []*QP{a1, other}, 7, ev, EVGood, &out); !errors.Is(err, ErrInvalidAttr) {
		t.Errorf("a QP of another Node: %v", err)
	}
}
