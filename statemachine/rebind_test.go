package statemachine

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestReplaceEVBoundIsAtomic: CTL-OP-3. A REPLACE_EV on an ONLINE profile
// a QP uses is asked of the QP before the controller commits it: one the
// QP cannot take (an EV on another port, or one that makes two entries
// the same EV, changing the number of distinct EVs) is refused and
// changes neither the controller's array nor the QP; one it can take is
// committed and the QP rebinds to it.
func TestReplaceEVBoundIsAtomic(t *testing.T) {
	c := newCtl(t, nil)
	explicitProfile(t, c, 8)
	p, _, err := c.EVProfile(1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(qpnA)
	cfg.EVProfiles, cfg.Addr.EVMode = []EVProfile{p}, wire.EVModeSTEV // 32-bit EVs: IPv6 STEV
	cfg.Addr.SrcIP, cfg.Addr.DstIP = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	q, err := cfg.new()
	if err != nil {
		t.Fatal(err)
	}
	at := testAttr(qpnB)
	at.EVProfileID = 1
	var out Output
	if err := q.BringUp(0, at, &out); err != nil {
		t.Fatal(err)
	}
	asked := 0
	rebind := func(np EVProfile) error { asked++; return q.CheckRebindEVProfile(np) }
	array := func() []EVOpEntry {
		a := EVProfileAttr{EVOp: EVOpQueryEVArray, Entries: make([]EVOpEntry, 8)}
		wantErrno(t, "query array", c.QueryEVProfile(1, &a, EVAttrEVOp), 0)
		return a.Entries
	}
	before := array()
	for _, tc := range []struct {
		name string
		new  CtlEV
	}{
		{"another port", CtlEV{Val: stevEV(101).Val, Port: 1}}, // stevEV(1) is on port 2
		{"fewer distinct EVs", stevEV(3)},                      // already in the profile, on port 2
	} {
		asked = 0
		err := c.ModifyEVProfileBound(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
			Entries: []EVOpEntry{{EV: stevEV(1), New: tc.new, State: EVGood}}}, EVAttrEVOp, rebind)
		if !errors.Is(err, ErrInvalidAttr) || asked != 1 {
			t.Fatalf("%s: err %v after %d rebind checks, want the QP's refusal", tc.name, err, asked)
		}
		if got := array(); !slices.Equal(got, before) {
			t.Fatalf("%s: a refused REPLACE_EV changed the array: %v, was %v", tc.name, got, before)
		}
		if _, ok := q.EVStateOf(1<<16 | 1); !ok {
			t.Fatalf("%s: the QP no longer has EV 1", tc.name)
		}
	}
	// A failing entry after a refused one keeps nothing either (CTL-OP-4
	// keeps entries before a failure only when the QPs can take them).
	err = c.ModifyEVProfileBound(1, &EVProfileAttr{EVOp: EVOpReplaceEV, Entries: []EVOpEntry{
		{EV: stevEV(1), New: CtlEV{Val: stevEV(101).Val, Port: 1}}, {EV: stevEV(77), New: stevEV(78)}}}, EVAttrEVOp, rebind)
	if !errors.Is(err, ErrInvalidAttr) || !slices.Equal(array(), before) {
		t.Fatalf("partial REPLACE_EV with a refused entry: %v; array changed: %v", err, !slices.Equal(array(), before))
	}
	asked = 0
	wantErrno(t, "accepted REPLACE_EV", c.ModifyEVProfileBound(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: stevEV(1), New: stevEV(101), State: EVGood}}}, EVAttrEVOp, rebind), 0)
	if asked != 1 || array()[1].EV != stevEV(101) {
		t.Fatalf("accepted REPLACE_EV: %d rebind checks, entry 1 %+v", asked, array()[1].EV)
	}
	np, _, err := c.EVProfile(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.RebindEVProfile(0, np, &out); err != nil {
		t.Fatalf("the QP refuses the profile its check accepted: %v", err)
	}
	if _, ok := q.EVStateOf(101<<16 | 101); !ok {
		t.Fatal("the QP does not use the replacement EV")
	}
	asked = 0
	wantErrno(t, "MODIFY_EV_STATE asks no rebind", c.ModifyEVProfileBound(1, &EVProfileAttr{EVOp: EVOpModifyEVState,
		Entries: []EVOpEntry{{EV: stevEV(2), State: EVDenied}}}, EVAttrEVOp, rebind), 0)
	if asked != 0 {
		t.Fatalf("MODIFY_EV_STATE asked %d rebind checks", asked)
	}
}
