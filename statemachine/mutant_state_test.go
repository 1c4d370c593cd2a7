package statemachine

import (
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
