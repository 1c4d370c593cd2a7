package peer

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

func newAgent(t *testing.T, faults ...string) (*Agent, *control.Client) {
	t.Helper()
	fs, err := ParseFaults(faults...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{MACs: [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}, IP: netip.MustParseAddr("10.0.0.2"), Faults: fs})
	if err != nil {
		t.Fatal(err)
	}
	var now statemachine.Time
	return a, control.NewClient(control.Local{H: a.Handler(func() statemachine.Time { return now })})
}

func TestParseFaults(t *testing.T) {
	fs, err := ParseFaults("no-restore", "bad-icrc", "no-restore")
	if err != nil || !slices.Equal(fs.Names(), []string{"bad-icrc", "no-restore"}) || fs.Empty() {
		t.Fatalf("%v %v", fs.Names(), err)
	}
	var ue *UnknownFaultError
	if _, err := ParseFaults("flaky"); !errors.As(err, &ue) {
		t.Errorf("unknown fault: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range Faults {
		if seen[f.Name()] || f.Doc() == "" || f&(f-1) != 0 {
			t.Errorf("fault %q: duplicate, undocumented, or not exactly one fault", f.Name())
		}
		seen[f.Name()] = true
	}
}

func TestNewRejects(t *testing.T) {
	for _, c := range []Config{{}, {MACs: [][6]byte{{}}}, {MACs: make([][6]byte, 32), IP: netip.MustParseAddr("10.0.0.1")}} {
		var ce *ConfigError
		if _, err := New(c); !errors.As(err, &ce) {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

// TestControlErrors: the reference answers refusals with the protocol's
// error codes.
func TestControlErrors(t *testing.T) {
	_, c := newAgent(t)
	ctx := context.Background()
	if _, err := c.Hello(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	check := func(err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("got %v, want %v", err, want)
		}
	}
	check(c.Call(ctx, "frobnicate", nil, nil), control.ErrUnknownMethod)
	check(c.Call(ctx, control.MethodQueryQP, control.QPNParams{QPN: 7}, nil), control.ErrNotFound)
	check(c.Call(ctx, control.MethodSetCCProfile, control.CCProfile{ID: 1, Algorithm: "dctcp"}, nil), control.ErrUnsupported)
	check(c.Call(ctx, control.MethodSetEVProfile, control.EVProfile{ID: 1, EVs: []control.EV{{Value: 1, Port: 3}}}, nil), control.ErrInvalidArgument)
	var q control.QPNResult
	if err := c.Call(ctx, control.MethodCreateQP, control.CreateQPParams{}, &q); err != nil {
		t.Fatal(err)
	}
	check(c.Call(ctx, control.MethodModifyQP, control.ModifyQPParams{QPN: q.QPN, State: control.StateRTS}, nil), control.ErrInvalidState)
	check(c.Call(ctx, control.MethodPostSend, control.PostSendParams{QPN: q.QPN, Opcode: control.OpRDMAWrite}, nil), control.ErrInvalidState)
	check(c.Call(ctx, control.MethodReadMR, control.ReadMRParams{MR: 9, Length: 1}, nil), control.ErrNotFound)
	var st control.QueryQPResult
	if err := c.Call(ctx, control.MethodQueryQP, control.QPNParams(q), &st); err != nil || st.State != control.StateReset {
		t.Errorf("query_qp: %v %+v", err, st)
	}
	// QP numbers are not reused after a reset.
	var q2 control.QPNResult
	_ = c.Call(ctx, control.MethodReset, nil, nil)
	if err := c.Call(ctx, control.MethodCreateQP, control.CreateQPParams{}, &q2); err != nil || q2.QPN == q.QPN {
		t.Errorf("QPN %#x after reset (was %#x): %v", q2.QPN, q.QPN, err)
	}
}

// TestMemory: regions are written, read and bounded.
func TestMemory(t *testing.T) {
	_, c := newAgent(t)
	ctx := context.Background()
	var mr control.MR
	if err := c.Call(ctx, control.MethodRegMR, control.RegMRParams{Length: 64, Access: []string{control.AccessRemoteWrite}}, &mr); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, control.MethodWriteMR, control.WriteMRParams{MR: mr.MR, Offset: 60, Data: []byte{1, 2, 3, 4}}, nil); err != nil {
		t.Fatal(err)
	}
	var r control.ReadMRResult
	if err := c.Call(ctx, control.MethodReadMR, control.ReadMRParams{MR: mr.MR, Offset: 62, Length: 2}, &r); err != nil || !slices.Equal(r.Data, []byte{3, 4}) {
		t.Errorf("read %v %v", r.Data, err)
	}
	if err := c.Call(ctx, control.MethodWriteMR, control.WriteMRParams{MR: mr.MR, Offset: 62, Data: []byte{1, 2, 3}}, nil); !errors.Is(err, control.ErrInvalidArgument) {
		t.Errorf("write past the end: %v", err)
	}
}

// TestReceiveDropsGarbage: frames that fail the wire checks are counted
// and dropped, never a panic (RSP-RCV-1).
func TestReceiveDropsGarbage(t *testing.T) {
	a, c := newAgent(t)
	for _, f := range [][]byte{nil, {1}, make([]byte, 60), make([]byte, 1500)} {
		a.Receive(0, 0, f)
		a.Receive(0, 5, f)
	}
	var r control.CountersResult
	if err := c.Call(context.Background(), control.MethodQueryCounters, control.QueryCountersParams{}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Counters["rx_packets"] != 8 || r.Counters["rx_dropped"] != 8 {
		t.Errorf("counters %v", r.Counters)
	}
	if len(a.TakeTx(nil)) != 0 {
		t.Error("garbage was answered")
	}
}

// TestEveryMethodHasAHandler: the handler table answers exactly the
// methods of the control protocol, so a method added to control.Methods
// without its entry in methods fails here rather than as unknown_method.
func TestEveryMethodHasAHandler(t *testing.T) {
	for _, m := range control.Methods {
		if methods[m] == nil {
			t.Errorf("method %s has no handler", m)
		}
	}
	if len(methods) != len(control.Methods) {
		t.Errorf("%d handlers for %d methods", len(methods), len(control.Methods))
	}
}
