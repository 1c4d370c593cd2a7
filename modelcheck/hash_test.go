package modelcheck

import (
	"reflect"
	"strings"
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// TestFingerprintCoversQP walks QPs in every state the package can create
// them in, with and without congestion control: the reflective
// fingerprint must know every field (it panics on a field it cannot
// classify).
func TestFingerprintCoversQP(t *testing.T) {
	q, err := sm.New(sm.DefaultConfig(1), sm.DefaultQPConfig(0x11, 1)) // NSCC on: its time fields are walked too
	if err != nil {
		t.Fatal(err)
	}
	var out sm.Output
	h0 := fingerprint(q, 0) // RESET: no tables yet
	a := sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 1, MPRDest: 1, MaxWIMM: 1, MaxWIMMDest: 1, Timeout: 4,
		Retry: sm.Retry{LinearCnt: 7, ExpCnt: 7}, PathMTU: 1024, DestQPN: 0x22}
	if err := q.BringUp(0, a, &out); err != nil {
		t.Fatal(err)
	}
	h1 := fingerprint(q, 0)
	if err := q.Post(0, sm.WorkRequest{WRID: 1, Opcode: sm.OpWrite, RemoteVA: 0x1000, RKey: 1, Data: make([]byte, 3000)}, &out); err != nil {
		t.Fatal(err)
	}
	h2 := fingerprint(q, 0)
	q.Advance(sm.Timeout(4)*2, &out)
	h3 := fingerprint(q, sm.Timeout(4)*2)
	if h0 == h1 || h1 == h2 || h2 == h3 {
		t.Errorf("fingerprints do not tell states apart: %x %x %x %x", h0, h1, h2, h3)
	}
	// Every world of a small search fingerprints without panicking.
	c := base("walk")
	c.Bounds = Bounds{Trims: 1, Timers: 1}
	if _, err := Check(c); err != nil {
		t.Fatal(err)
	}
}

// TestFingerprintTimeShift: the same inputs at a later time give the same
// state (time points are hashed relative to now), and a different delay
// between two inputs gives a different one.
func TestFingerprintTimeShift(t *testing.T) {
	cfg := base("shift")
	cfg.MPR = 3 // the second WR goes out when posted
	c, err := newChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := func(start sm.Time, acts ...action) *world {
		w, err := c.initial()
		if err != nil {
			t.Fatal(err)
		}
		w.now = start
		for _, a := range acts {
			if w, err = c.apply(w, a); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	post, tick := action{kind: actPost}, action{kind: actTick}
	w1 := run(0, post, post, tick)
	w2 := run(5*sm.Microsecond, post, post, tick)
	w3 := run(0, post, tick, post)
	h1, _ := w1.hash(nil)
	h2, _ := w2.hash(nil)
	h3, _ := w3.hash(nil)
	if h1 != h2 {
		t.Error("a shift in time changed the state")
	}
	if h1 == h3 {
		t.Error("a different delay between the posts did not change the state")
	}
}

// TestTxRingFlagLayout pins the flag bits the fingerprint reads in the
// requester's per-PSN ring (statemachine/window.go) against PSNStateOf.
func TestTxRingFlagLayout(t *testing.T) {
	c, err := newChecker(base("flags"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.initial()
	if err != nil {
		t.Fatal(err)
	}
	step := func(a action) {
		t.Helper()
		if w, err = c.apply(w, a); err != nil {
			t.Fatal(err)
		}
	}
	find := func(from int, pred func(*packet) bool) uint16 {
		t.Helper()
		for i, k := range w.net {
			if int(k.from) == from && pred(k) {
				return uint16(i)
			}
		}
		t.Fatal("no such packet")
		return 0
	}
	fl := func(psn uint32) uint64 {
		r := reflect.ValueOf(w.qp[0]).Elem().FieldByName("req").FieldByName("ring")
		return r.FieldByName("fl").Index(int(psn & uint32(r.FieldByName("mask").Uint()))).Uint()
	}
	step(action{kind: actPost})
	step(action{kind: actDeliver, idx: find(0, func(k *packet) bool { return k.isData() && k.p.BTH.PSN == 1 })})
	step(action{kind: actDeliver, idx: find(1, func(k *packet) bool { return k.op() == wire.OpSACK })})
	if w.qp[0].PSNStateOf(0) != sm.PSNInFlight || fl(0)&^txRetxBit != txInFlight {
		t.Errorf("PSN 0 in flight: flags %#x", fl(0))
	}
	if w.qp[0].PSNStateOf(1) != sm.PSNSACKed || fl(1)&^txRetxBit != txSACKed {
		t.Errorf("PSN 1 SACKed: flags %#x", fl(1))
	}
	// Both paths fail and the timers expire: PSN 0 stays queued (finding F1).
	step(action{kind: actFail, idx: 0})
	step(action{kind: actFail, idx: 1})
	step(action{kind: actTimer})
	step(action{kind: actTimer})
	if w.qp[0].PSNStateOf(0) != sm.PSNLost || fl(0)&^txRetxBit != txLost {
		t.Errorf("PSN 0 lost: state %v flags %#x", w.qp[0].PSNStateOf(0), fl(0))
	}
}

const txRetxBit = 1 << 3

func TestFingerprintRejectsUnknownFields(t *testing.T) {
	type withMap struct{ m map[int]int } //lint:ignore U1000 the field's kind is what the test feeds the fingerprinter
	type withTime struct{ when sm.Time } //lint:ignore U1000 as above
	type withPtr struct{ p *int }        //lint:ignore U1000 as above
	for _, v := range []any{withMap{}, withTime{}, withPtr{}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "modelcheck:") {
					t.Errorf("%T: no panic (%v)", v, r)
				}
			}()
			h := qpHasher{hasher: newHasher()}
			h.value(reflect.ValueOf(v), "x")
		}()
	}
}
