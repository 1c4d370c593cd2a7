package peer

import (
	"encoding/json"
	"errors"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

func ctlAgent(t *testing.T) *Agent {
	t.Helper()
	a, err := New(Config{MACs: [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}, IP: netip.MustParseAddr("10.0.0.2")})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func call(t *testing.T, a *Agent, now statemachine.Time, m string, p any) (any, error) {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return a.Handle(now, m, b)
}

// TestControlObjectsBounded: what the control API's object methods can
// grow is bounded — endpoint batches waiting (MaxBatches), asynchronous
// events queued (statemachine.MaxAsyncEvents, the rest counted as
// dropped), QP hints (MaxQPHints, CTL-QPH-1), EV operation entries and EV
// fields per call, and EV profiles usable at once (CTL-DEV-1).
func TestControlObjectsBounded(t *testing.T) {
	a := ctlAgent(t)
	dst := control.Peer{MAC: "02:00:00:00:00:09", IP: "10.0.0.9"}
	for i := 0; i <= MaxBatches; i++ {
		_, err := call(t, a, 0, control.MethodEPBatchSend, control.EPBatchSendParams{Op: control.EPEVProbe, TimeoutNs: 1e9,
			Requests: []control.EPSendParams{{Op: control.EPEVProbe, ReqID: uint16(i), Dst: dst, Port: 1}}})
		if i < MaxBatches && err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if i == MaxBatches && !errors.Is(err, control.ErrResourceExhausted) {
			t.Fatalf("batch %d of %d: %v", i+1, MaxBatches, err)
		}
	}
	for i := 0; i < statemachine.MaxAsyncEvents; i++ {
		for _, on := range []bool{false, true} {
			if _, err := call(t, a, 0, control.MethodModifyPort, control.PortAdminParams{Port: 2, Enabled: &on}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := a.Handle(0, control.MethodGetAsyncEvents, nil)
	if ev := r.(control.AsyncEventsResult); err != nil || len(ev.Events) != statemachine.MaxAsyncEvents || ev.Dropped != statemachine.MaxAsyncEvents {
		t.Fatalf("async events: %d returned, %d dropped, %v", len(ev.Events), ev.Dropped, err)
	}
	many := control.EVOp{Op: control.EVOpReplace, Entries: make([]control.EVOpEntry, statemachine.MaxEVs+1)}
	if _, err := call(t, a, 0, control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &many}); !errors.Is(err, control.ErrResourceExhausted) {
		t.Errorf("%d EV op entries: %v", len(many.Entries), err)
	}
	if _, err := call(t, a, 0, control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, Fields: make([]control.EVField, 65)}); !errors.Is(err, control.ErrInvalidArgument) {
		t.Errorf("65 EV fields: %v", err)
	}
	for i := 0; i <= MaxQPHints; i++ {
		_, err := call(t, a, 0, control.MethodCreateQPHint, control.QPHint{NumSendPeers: 1})
		if (i < MaxQPHints) != (err == nil) || i == MaxQPHints && !errors.Is(err, control.ErrResourceExhausted) {
			t.Fatalf("QP hint %d of %d: %v", i+1, MaxQPHints, err)
		}
	}
	st, mode := control.ProfileOffline, control.FmtSTEV
	for id := uint64(0); id < 2*maxProfiles; id++ {
		_, err := call(t, a, 0, control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: id, State: &st, Mode: &mode, Widths: []int{16}})
		if id >= maxProfiles && !errors.Is(err, control.ErrResourceExhausted) {
			t.Fatalf("format profile %d: %v", id, err)
		}
	}
}
