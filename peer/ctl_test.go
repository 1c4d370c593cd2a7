package peer

import (
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"strings"
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

// boundEVProfile brings controller EV profile 1 (format 13, one 16-bit
// STEV field) ONLINE with evs and a QP using it to RTR.
func boundEVProfile(t *testing.T, a *Agent, evs []control.CtlEV) *qpEntry {
	t.Helper()
	str := func(s string) *string { return &s }
	fmtID, count, one, zero, acc, mtu, dest, minActive := uint64(13), uint32(len(evs)), uint64(1), 0, 0xF, 1024, uint32(0x20001), uint32(1)
	op := control.EVOp{Op: control.EVOpReplace}
	for i := range evs {
		op.Entries = append(op.Entries, control.EVOpEntry{New: &evs[i], State: control.EVGood})
	}
	av := control.AV{MAC: "02:00:00:00:00:09", IP: "10.0.0.9"}
	caps, psn, mpr, wimm := []string{}, uint32(0), 2, 4
	for _, c := range []struct {
		m string
		p any
	}{
		{control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: 13, State: str(control.ProfileOffline), Mode: str(control.FmtSTEV), Widths: []int{16}}},
		{control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: 13, State: str(control.ProfileOnline)}},
		{control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOffline), Mode: str(control.EVModeExplicit), FmtID: &fmtID, Count: &count,
			MinActive: &minActive, EventMask: &[]string{control.EVGood}}},
		{control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &op}},
		{control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOnline)}},
		{control.MethodSetCCProfile, control.CCProfile{ID: 1, Algorithm: control.CCNone}},
		{control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 8, MaxRecvWR: 8}},
		{control.MethodModifyQP, control.ModifyQPParams{QPN: firstQPN, State: control.StateInit,
			Attr: control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: &acc}}},
		{control.MethodModifyQP, control.ModifyQPParams{QPN: firstQPN, State: control.StateRTR,
			Attr: control.QPAttr{PathMTU: &mtu, DestQPN: &dest, AV: &av, MPRDest: &mpr, MaxWIMMDest: &wimm, Cap: &caps, RQPSN: &psn}}},
	} {
		if _, err := call(t, a, 0, c.m, c.p); err != nil {
			t.Fatalf("%s %+v: %v", c.m, c.p, err)
		}
	}
	e := a.qps[firstQPN]
	if e == nil || e.qp == nil {
		t.Fatal("no QP in RTR")
	}
	return e
}

// TestReplaceEVRefusedChangesNothing: CTL-OP-3 in the peer. A REPLACE_EV
// on an ONLINE profile that a QP cannot take (an EV on another port, or
// one that leaves fewer distinct EVs) is refused with invalid_argument
// and changes neither the controller's profile nor the QP; one it can
// take changes both.
func TestReplaceEVRefusedChangesNothing(t *testing.T) {
	a := ctlAgent(t)
	evs := []control.CtlEV{{Val: "5110", Port: 1}, {Val: "5111", Port: 1}, {Val: "5120", Port: 2}, {Val: "5121", Port: 2}}
	e := boundEVProfile(t, a, evs)
	keys := func() []uint32 {
		pevs, err := a.ctl.ProfileEVs(1)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint32
		for _, x := range pevs {
			out = append(out, x.Key)
		}
		return out
	}
	before := keys()
	replace := func(old, new control.CtlEV) error {
		op := control.EVOp{Op: control.EVOpReplace, Entries: []control.EVOpEntry{{EV: old, New: &new, State: control.EVGood}}}
		_, err := call(t, a, 0, control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &op})
		return err
	}
	for _, tc := range []struct {
		name string
		new  control.CtlEV
	}{{"another port", control.CtlEV{Val: "5130", Port: 1}}, {"fewer distinct EVs", evs[3]}} {
		if err := replace(evs[2], tc.new); !errors.Is(err, control.ErrInvalidArgument) {
			t.Fatalf("%s: %v, want invalid_argument", tc.name, err)
		}
		if got := keys(); !slices.Equal(got, before) {
			t.Fatalf("%s: the refused REPLACE_EV changed the controller's profile: %#x, was %#x", tc.name, got, before)
		}
		if _, ok := e.qp.EVStateOf(0x5120); !ok {
			t.Fatalf("%s: the QP lost EV 0x5120", tc.name)
		}
	}
	if err := replace(evs[2], control.CtlEV{Val: "5122", Port: 2}); err != nil {
		t.Fatalf("REPLACE_EV on the same port: %v", err)
	}
	if got := keys(); got[2] != 0x5122 {
		t.Fatalf("accepted REPLACE_EV: the controller's EVs %#x", got)
	}
	if _, ok := e.qp.EVStateOf(0x5122); !ok {
		t.Fatal("accepted REPLACE_EV: the QP does not use 0x5122")
	}
	if _, ok := e.qp.EVStateOf(0x5120); ok {
		t.Fatal("accepted REPLACE_EV: the QP still uses 0x5120")
	}
	// CTL-OP-4: entries before a failing one stay, in the controller and
	// in the QPs alike.
	n1, n2 := control.CtlEV{Val: "5112", Port: 1}, control.CtlEV{Val: "5999", Port: 1}
	op := control.EVOp{Op: control.EVOpReplace, Entries: []control.EVOpEntry{{EV: evs[0], New: &n1}, {EV: control.CtlEV{Val: "5777", Port: 1}, New: &n2}}}
	if _, err := call(t, a, 0, control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &op}); err == nil {
		t.Fatal("REPLACE_EV of an EV not in the profile accepted")
	}
	if got := keys(); got[0] != 0x5112 {
		t.Fatalf("the entry before the failing one: controller EVs %#x", got)
	}
	if _, ok := e.qp.EVStateOf(0x5112); !ok {
		t.Fatal("the entry before the failing one is in the controller, not in the QP")
	}
}

// TestFlagsOf: a list of names becomes the flags they name, for QP caps
// and EV event masks alike; a name not in the table (SKIP is no event
// mask state, EV-ST-12) is invalid_argument naming it.
func TestFlagsOf(t *testing.T) {
	c, err := flagsOf([]string{control.CapDynamicMPR, control.CapTrimNACKDestUnsupported}, qpCaps, "unknown QP cap")
	if err != nil || c != statemachine.CapDynamicMPR|statemachine.CapTrimNACKDestUnsupported {
		t.Errorf("caps %#x, %v", c, err)
	}
	m, err := flagsOf([]string{control.EVGood, control.EVDenied}, evEvents, "event mask state")
	if err != nil || m != statemachine.EVEventGood|statemachine.EVEventDenied {
		t.Errorf("event mask %#x, %v", m, err)
	}
	var ce *control.Error
	if _, err := flagsOf([]string{control.EVGood, control.EVSkip}, evEvents, "event mask state"); !errors.As(err, &ce) ||
		ce.Code != control.CodeInvalidArgument || !strings.Contains(err.Error(), control.EVSkip) {
		t.Errorf("SKIP in an event mask: %v", err)
	}
}
