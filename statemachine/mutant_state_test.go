package statemachine

import (
	"reflect"
	"slices"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantResponderObservers: the responder's observation API agrees with
// what it received (RSP-RCV-6). With PSN 0 and PSN 2 received, cack is 0:
// ResponderHas is true at cack, for PSN 2 (in the bitmap) and for the PSN
// 2^23 behind the next expected one, false for PSN 1 and PSN 2^23 - 1; AbstractState lists PSN 2
// as received beyond cack; the state hash changes with the state.
func TestMutantResponderObservers(t *testing.T) {
	o := newOne(t, nil)
	h0 := o.q.StateHash()
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100))
	o.recv(1, dataPkt(2, wire.OpWriteMiddle, 1024, 0x100))
	if cack := o.q.ResponderCumulativeACK(); cack != 0 {
		t.Fatalf("cack %d, want 0", cack)
	}
	for psn, want := range map[uint32]bool{0: true, 1: false, 2: true, 3: false, 1 << 23: true, 1<<23 - 1: false} {
		if got := o.q.ResponderHas(psn); got != want {
			t.Errorf("ResponderHas(%d) = %v, want %v", psn, got, want)
		}
	}
	if got := o.q.AbstractState().Received; !slices.Equal(got, []uint32{2}) {
		t.Errorf("AbstractState().Received = %v, want [2]", got)
	}
	if o.q.StateHash() == h0 {
		t.Error("the state hash did not change with two PSNs received")
	}
}

// TestMutantPSNStateOfBounds: a PSN is outstanding from the cumulative ACK
// + 1 up to the last PSN sent; the next PSN to send is not (the model
// checker's view of the requester; no requirement names it).
func TestMutantPSNStateOfBounds(t *testing.T) {
	o := newOne(t, nil)
	if err := o.q.Post(0, WorkRequest{WRID: 1, Opcode: OpWrite, RemoteVA: baseVA, RKey: 1, Data: make([]byte, 2048)}, &o.out); err != nil {
		t.Fatal(err)
	}
	for psn, want := range map[uint32]PSNState{0: PSNInFlight, 1: PSNInFlight, 2: PSNNotOutstanding} {
		if got := o.q.PSNStateOf(psn); got != want {
			t.Errorf("PSNStateOf(%d) = %v, want %v", psn, got, want)
		}
	}
}

// TestMutantAvoidedEV: a PSN queued for retransmission after a NACK avoids
// the EV the NACK reflected (EV-ST-13), even the profile's first EV; a PSN
// in flight avoids none, and once the stall timer has expired the queued
// PSN may take any usable EV (LR-SM-3, AMB-44).
func TestMutantAvoidedEV(t *testing.T) {
	o := nackedOnOnlyEV(t, nil) // PSN 0 NACKed on 0x100, the only usable EV
	if evs := o.q.EVs(nil); len(evs) == 0 || evs[0].Value != 0x100 {
		t.Fatalf("EV table %v, want 0x100 first", evs)
	}
	o.write(2, 1024, false) // PSN 1 waits behind PSN 0, unsent
	if ev, ok := o.q.AvoidedEV(0); !ok || ev != 0x100 {
		t.Errorf("AvoidedEV(0) = %#x, %v; want 0x100, true", ev, ok)
	}
	if ev, ok := o.q.AvoidedEV(1); ok {
		t.Errorf("AvoidedEV(1), a PSN not sent = %#x, true", ev)
	}
	o.advance(o.q.NextDeadline()) // the stall timer expires: PSN 0 goes on 0x100
	if st := o.events(EvStallTimeout); len(st) != 1 {
		t.Fatalf("stall events %v, want one", st)
	}
	if ev, ok := o.q.AvoidedEV(0); ok {
		t.Errorf("AvoidedEV(0) after the stall expiry = %#x, true", ev)
	}
}

// TestMutantResponderHasWindowEnd: the PSN cack + W, the last of the
// responder's window, counts as received once it arrives (RSP-RCV-6).
func TestMutantResponderHasWindowEnd(t *testing.T) {
	o := newOne(t, nil) // cack = 2^24 − 1, W = 128
	o.recv(1, dataPkt(127, wire.OpWriteMiddle, 1024, 0x100))
	if !o.q.ResponderHas(127) || o.q.ResponderHas(126) {
		t.Errorf("ResponderHas: 127 %v, 126 %v; want true, false", o.q.ResponderHas(127), o.q.ResponderHas(126))
	}
	if got := o.q.AbstractState().Received; !slices.Equal(got, []uint32{127}) {
		t.Errorf("AbstractState().Received = %v, want [127]", got)
	}
}

// TestMutantStateHashPSNStates: two states that differ only in one
// outstanding PSN's requester state (in flight, then selectively
// acknowledged, LR-SACK-2) hash differently.
func TestMutantStateHashPSNStates(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 2048, false)
	o.take()
	before := o.q.AbstractState()
	h := o.q.StateHash()
	o.recv(1, sackPkt(1<<24-1, 1, 0, 0b10, 0x100, wire.MNone))
	after := o.q.AbstractState()
	if !slices.Equal(after.PSNs, []PSNState{PSNInFlight, PSNSACKed}) {
		t.Fatalf("PSN states %v after the SACK of PSN 1, want in flight, SACKed", after.PSNs)
	}
	before.PSNs, after.PSNs = nil, nil
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the SACK changed more than the PSN states: %+v, then %+v", before, after)
	}
	if o.q.StateHash() == h {
		t.Error("StateHash did not change with PSN 1 selectively acknowledged")
	}
}

// TestMutantStateHashHeldWIMM: two responders that each hold one WriteIMM
// at the same PSN, with different RQMSNs, hash differently: the held
// WriteIMMs are part of the state (WIMM-RSP-1).
func TestMutantStateHashHeldWIMM(t *testing.T) {
	var h [2]uint64
	for i, rqmsn := range []uint16{1, 2} {
		o := newOne(t, nil)
		o.recv(1, imm(2, rqmsn))
		if held := o.q.WIMMHeld(nil); !slices.Equal(held, []uint16{rqmsn}) {
			t.Fatalf("held %v, want [%d]", held, rqmsn)
		}
		h[i] = o.q.StateHash()
	}
	if h[0] == h[1] {
		t.Error("StateHash is the same with RQMSN 1 or 2 held")
	}
}
