package statemachine

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

func newCtl(t *testing.T, mod func(*DeviceAttr)) *Controller {
	t.Helper()
	d := DefaultDeviceAttr(2)
	if mod != nil {
		mod(&d)
	}
	c, err := NewController(d, CtlPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantErrno(t *testing.T, what string, err error, e Errno) {
	t.Helper()
	if e == 0 {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	if !errors.Is(err, e) {
		t.Fatalf("%s: err %v, want %s", what, err, e)
	}
}

// stevFmt puts EV Format profile id ONLINE in STEV mode with widths w, in
// the two steps of mrc_ctl_exp_ev.md.
func stevFmt(t *testing.T, c *Controller, id uint64, mode EVFmtMode, w ...uint8) {
	t.Helper()
	wantErrno(t, "fmt OFFLINE", c.ModifyEVFmtProfile(id, &EVFmtAttr{State: ProfileOffline, Mode: mode, Op: FieldsModify, Widths: w},
		EVFmtAttrState|EVFmtAttrMode|EVFmtAttrOp), 0)
	wantErrno(t, "fmt ONLINE", c.ModifyEVFmtProfile(id, &EVFmtAttr{State: ProfileOnline}, EVFmtAttrState), 0)
}

func stevEV(i uint32) CtlEV { return CtlEV{Val: EVValueOf(i<<16|i, 32), Port: uint8(1 + i%2)} }

// explicitProfile follows mrc_ctl_exp_ev.md: format 13 (two 16-bit STEV
// fields), EV profile 1 with count EVs, populated one REPLACE_EV of an
// unpopulated entry at a time, then ONLINE.
func explicitProfile(t *testing.T, c *Controller, count uint32) {
	t.Helper()
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	wantErrno(t, "EV OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 13,
		Count: count, MinActive: count / 4, EventMask: EVEventGood | EVEventAssumedBad},
		EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask), 0)
	wantErrno(t, "ONLINE with unpopulated entries", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), EINVAL)
	for i := uint32(0); i < count; i++ {
		wantErrno(t, "populate", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
			Entries: []EVOpEntry{{EV: CtlEV{}, New: stevEV(i), State: EVGood}}}, EVAttrEVOp), 0)
	}
	wantErrno(t, "EV ONLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
}

func TestCtlExplicitProfileLifecycle(t *testing.T) {
	// CTL-PRF-1, CTL-PRF-2, CTL-PRF-5, CTL-OP-1: the flow of
	// mrc_ctl_exp_ev.md, then the profile as a Node takes it.
	c := newCtl(t, nil)
	explicitProfile(t, c, 64)
	p, st, err := c.EVProfile(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.EVs) != 64 || p.EVs[13].Value != 13<<16|13 || p.EVs[13].Port != 2 || p.MinActive != 16 || len(st) != 64 {
		t.Fatalf("compiled profile: %d EVs, EV 13 %#x port %d, min %d", len(p.EVs), p.EVs[13].Value, p.EVs[13].Port, p.MinActive)
	}
	if _, err := NewNode(Config{EVProfiles: []EVProfile{p}, CCProfiles: []CCProfile{{ID: 1}}}); err != nil {
		t.Fatalf("a Node rejects the compiled profile: %v", err)
	}
	// Deny 13..42 (CTL-OP-5), as the example does once ONLINE.
	var deny []EVOpEntry
	for i := uint32(13); i <= 42; i++ {
		deny = append(deny, EVOpEntry{EV: stevEV(i), State: EVDenied})
	}
	wantErrno(t, "deny", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpModifyEVState, Entries: deny}, EVAttrEVOp), 0)
	q := EVProfileAttr{EVOp: EVOpQueryEVState, Entries: []EVOpEntry{{EV: stevEV(12)}, {EV: stevEV(13)}, {EV: stevEV(42)}, {EV: stevEV(43)}}}
	wantErrno(t, "query state", c.QueryEVProfile(1, &q, EVAttrEVOp), 0)
	if s := [4]EVState{q.Entries[0].State, q.Entries[1].State, q.Entries[2].State, q.Entries[3].State}; s != [4]EVState{EVGood, EVDenied, EVDenied, EVGood} {
		t.Errorf("states after deny: %v", s)
	}
	// Replace 13..42 by +128 while ONLINE (MODIFY_ONLINE advertised).
	for i := uint32(13); i <= 42; i++ {
		wantErrno(t, "replace online", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
			Entries: []EVOpEntry{{EV: stevEV(i), New: stevEV(i + 128), State: EVGood}}}, EVAttrEVOp), 0)
	}
	arr := EVProfileAttr{EVOp: EVOpQueryEVArray, Entries: make([]EVOpEntry, 10)}
	wantErrno(t, "query short array", c.QueryEVProfile(1, &arr, EVAttrEVOp), E2BIG)
	if arr.EntryCount != 64 {
		t.Errorf("E2BIG reports %d entries, want 64", arr.EntryCount)
	}
	arr.Entries = make([]EVOpEntry, 64)
	wantErrno(t, "query array", c.QueryEVProfile(1, &arr, EVAttrEVOp), 0)
	if arr.Entries[13].EV != stevEV(141) || arr.Entries[12].EV != stevEV(12) || arr.Entries[13].State != EVGood {
		t.Errorf("entry 13 after replace: %+v", arr.Entries[13])
	}
	wantErrno(t, "replace a missing EV", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: stevEV(13), New: stevEV(500)}}}, EVAttrEVOp), ENOENT)
}

func TestCtlModifyOnlineNeedsCapability(t *testing.T) {
	// CTL-PRF-3, CTL-PRF-4, CTL-DEV-2: without
	// MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE an ONLINE profile takes
	// only STATE and MODIFY_EV_STATE.
	c := newCtl(t, func(d *DeviceAttr) { d.OptAttr &^= OptEVProfileModifyOnline | OptCCProfileModifyOnline })
	explicitProfile(t, c, 8)
	wantErrno(t, "REPLACE_EV online", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: stevEV(1), New: stevEV(100)}}}, EVAttrEVOp), EINVAL)
	wantErrno(t, "EVENT_MASK online", c.ModifyEVProfile(1, &EVProfileAttr{EventMask: EVEventGood}, EVAttrEventMask), EINVAL)
	wantErrno(t, "COUNT online", c.ModifyEVProfile(1, &EVProfileAttr{Count: 16}, EVAttrCount), EINVAL)
	wantErrno(t, "MODIFY_EV_STATE online", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpModifyEVState,
		Entries: []EVOpEntry{{EV: stevEV(1), State: EVDenied}}}, EVAttrEVOp), 0)
	c2 := newCtl(t, nil)
	explicitProfile(t, c2, 8)
	wantErrno(t, "EVENT_MASK online with the capability", c2.ModifyEVProfile(1, &EVProfileAttr{EventMask: EVEventGood}, EVAttrEventMask), 0)
}

func TestCtlBusyProfiles(t *testing.T) {
	// CTL-PRF-6: a profile a QP uses cannot leave ONLINE, nor can the
	// format profile of an ONLINE EV profile change; CTL-PRF-8: a CC
	// profile needs its CONFIG for ONLINE; CTL-PRF-9: a QP takes only
	// ONLINE profiles.
	c := newCtl(t, nil)
	explicitProfile(t, c, 8)
	wantErrno(t, "CC OFFLINE", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileOffline, Algorithm: CCAlgNSCC}, CCAttrState|CCAttrAlgorithm), 0)
	wantErrno(t, "CC ONLINE without CONFIG", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileOnline}, CCAttrState), EINVAL)
	wantErrno(t, "CC ONLINE", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileOnline, Config: DefaultNSCC()}, CCAttrState|CCAttrConfig), 0)
	wantErrno(t, "attach", c.AttachQP(1, 1), 0)
	wantErrno(t, "EV OFFLINE in use", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline}, EVAttrState), EBUSY)
	wantErrno(t, "CC OFFLINE in use", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileOffline}, CCAttrState), EBUSY)
	wantErrno(t, "fmt OFFLINE under an ONLINE EV profile", c.ModifyEVFmtProfile(13, &EVFmtAttr{State: ProfileOffline}, EVFmtAttrState), EBUSY)
	c.DetachQP(1, 1)
	wantErrno(t, "EV OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline}, EVAttrState), 0)
	wantErrno(t, "EV INIT", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileInit}, EVAttrState), 0)
	wantErrno(t, "fmt OFFLINE", c.ModifyEVFmtProfile(13, &EVFmtAttr{State: ProfileOffline}, EVFmtAttrState), 0)
	wantErrno(t, "fmt INIT", c.ModifyEVFmtProfile(13, &EVFmtAttr{State: ProfileInit}, EVFmtAttrState), 0)
	wantErrno(t, "attach to an INIT profile", c.AttachQP(1, 1), EINVAL)
	if d := c.QueryDevice(); d.EVFreeCount != d.EVMaxCount {
		t.Errorf("ev_free_count %d after INIT, want %d", d.EVFreeCount, d.EVMaxCount)
	}
}

func TestCtlTransitionRules(t *testing.T) {
	// CTL-PRF-2, CTL-PRF-3 (CUR_STATE), CTL-PRF-5, CTL-PRF-7, CTL-FMT-1,
	// CTL-FMT-2, CTL-FMT-3 (STEV over 32 bits), CTL-FMT-4 (a format not
	// ONLINE).
	c := newCtl(t, nil)
	wantErrno(t, "fmt INIT→ONLINE", c.ModifyEVFmtProfile(2, &EVFmtAttr{State: ProfileOnline, Mode: EVFmtSTEV, Widths: widths(32)},
		EVFmtAttrState|EVFmtAttrMode|EVFmtAttrOp), EINVAL)
	wantErrno(t, "fmt OFFLINE without MODE", c.ModifyEVFmtProfile(2, &EVFmtAttr{State: ProfileOffline}, EVFmtAttrState), EINVAL)
	wantErrno(t, "STEV wider than 32 bits", c.ModifyEVFmtProfile(2, &EVFmtAttr{State: ProfileOffline, Mode: EVFmtSTEV, Widths: widths(32, 8)},
		EVFmtAttrState|EVFmtAttrMode|EVFmtAttrOp), E2BIG)
	wantErrno(t, "fmt CUR_STATE in a modify", c.ModifyEVFmtProfile(2, &EVFmtAttr{}, EVFmtAttrCurState), EINVAL)
	wantErrno(t, "fmt OFFLINE", c.ModifyEVFmtProfile(2, &EVFmtAttr{State: ProfileOffline, Mode: EVFmtUDP}, EVFmtAttrState|EVFmtAttrMode), 0)
	wantErrno(t, "fmt ONLINE without fields", c.ModifyEVFmtProfile(2, &EVFmtAttr{State: ProfileOnline}, EVFmtAttrState), EINVAL)
	// The SRv6 and SRv6+SRH formats of the examples: 96 and 224 bits.
	stevFmt(t, c, 14, EVFmtSRv6, 32, 16, 16, 16, 16)
	stevFmt(t, c, 15, EVFmtSRv6, 32, 16, 16, 16, 16, 16, 16, 32, 16, 16, 16, 16)
	q := EVFmtAttr{Op: FieldsQuery, Widths: make([]uint8, 3)}
	wantErrno(t, "query short fields", c.QueryEVFmtProfile(15, &q, EVFmtAttrOp), E2BIG)
	if q.FieldCount != 12 {
		t.Errorf("E2BIG reports %d format fields, want 12", q.FieldCount)
	}
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	base := EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 13, Count: 8, MinActive: 2, EventMask: EVEventGood}
	m := EVAttrState | EVAttrMode | EVAttrFmtID | EVAttrCount | EVAttrMinActive | EVAttrEventMask
	for _, x := range []struct {
		name  string
		mod   func(*EVProfileAttr)
		mask  EVProfileAttrMask
		errno Errno
	}{
		{"no MODE", nil, m &^ EVAttrMode, EINVAL},
		{"no FMT_ID", nil, m &^ EVAttrFmtID, EINVAL},
		{"format not ONLINE", func(a *EVProfileAttr) { a.FmtProfileID = 2 }, m, EINVAL},
		{"DENIED in the event mask", func(a *EVProfileAttr) { a.EventMask = EVEventDenied }, m, EINVAL},
		{"min_active above count", func(a *EVProfileAttr) { a.MinActive = 9 }, m, EINVAL},
		{"count above ev_max_count_profile", func(a *EVProfileAttr) { a.Count = MaxEVs + 1 }, m, E2BIG},
		{"GEN without fields", func(a *EVProfileAttr) { a.Mode = EVModeGenerated }, m, EINVAL},
		{"EV_OP and EV_FIELDS_OP", nil, m | EVAttrEVOp | EVAttrFieldsOp, EINVAL},
		{"EV_OP in INIT", nil, m | EVAttrEVOp, EINVAL},
		{"two modes", func(a *EVProfileAttr) { a.Mode = EVModeExplicit | EVModeGenerated }, m, EINVAL},
	} {
		a := base
		if x.mod != nil {
			x.mod(&a)
		}
		wantErrno(t, x.name, c.ModifyEVProfile(7, &a, x.mask), x.errno)
	}
	wantErrno(t, "EV OFFLINE", c.ModifyEVProfile(7, &base, m), 0)
	wantErrno(t, "EV OFFLINE→OFFLINE", c.ModifyEVProfile(7, &EVProfileAttr{State: ProfileOffline}, EVAttrState), 0)
}

func TestCtlGeneratedProfile(t *testing.T) {
	// CTL-GEN-1, CTL-GEN-3: mrc_ctl_gen_ev.md's STEV tiers, ONLINE
	// without any REPLACE_EV; every EV's key is its 16-bit expansion and
	// ports alternate.
	c := newCtl(t, nil)
	stevFmt(t, c, 13, EVFmtSTEV, 8, 4, 4)
	fields := []EVField{fld(8, 0, 0, 255, 0xff), fld(4, 0, 0, 15, 0xf), fld(4, 0, 0, 15, 0xf)}
	wantErrno(t, "GEN OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeGenerated, FmtProfileID: 13,
		Count: 512, MinActive: 128, EventMask: EVEventGood | EVEventAssumedBad, FieldsOp: FieldsModify, Fields: fields},
		EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask|EVAttrFieldsOp), 0)
	wantErrno(t, "REPLACE_EV on GEN", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: CtlEV{}, New: stevEV(1)}}}, EVAttrEVOp), EINVAL)
	wantErrno(t, "GEN ONLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
	p, _, err := c.EVProfile(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.EVs) != 512 || p.EVs[0].Value != 0 || p.EVs[1].Value != 1<<8 || p.EVs[256].Value != 0x10 || p.EVs[1].Port != 2 {
		t.Errorf("generated: %d EVs, 0:%#x 1:%#x@%d 256:%#x", len(p.EVs), p.EVs[0].Value, p.EVs[1].Value, p.EVs[1].Port, p.EVs[256].Value)
	}
	qf := EVProfileAttr{FieldsOp: FieldsQuery, Fields: make([]EVField, 3)}
	wantErrno(t, "query fields", c.QueryEVProfile(1, &qf, EVAttrFieldsOp), 0)
	if qf.FieldCount != 3 || qf.Fields[0] != fields[0] {
		t.Errorf("queried fields %+v", qf.Fields)
	}
	// Changing the fields while ONLINE (MODIFY_ONLINE) regenerates the
	// array: T0 capped at 179, as the example suggests instead of denying.
	fields[0].MaxVal = 179
	wantErrno(t, "modify fields online", c.ModifyEVProfile(1, &EVProfileAttr{FieldsOp: FieldsModify, Fields: fields}, EVAttrFieldsOp), 0)
	p, _, _ = c.EVProfile(1)
	for _, e := range p.EVs {
		if e.Value>>8 > 179 {
			t.Fatalf("EV %#x has T0 above 179", e.Value)
		}
	}
}

func TestCtlAllCopies(t *testing.T) {
	// CTL-OP-2: without ALL_COPIES one occurrence is replaced, with it
	// every one; copies of an EV are one path (AMB-65).
	c := newCtl(t, nil)
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	wantErrno(t, "OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 13,
		Count: 4, MinActive: 1, EventMask: 0}, EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask), 0)
	all := []EVOpEntry{{EV: CtlEV{}, New: stevEV(1)}, {EV: CtlEV{}, New: stevEV(1)}, {EV: CtlEV{}, New: stevEV(1)}, {EV: CtlEV{}, New: stevEV(2)}}
	wantErrno(t, "populate", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV, Entries: all}, EVAttrEVOp), 0)
	count := func(e CtlEV) int {
		a := EVProfileAttr{EVOp: EVOpQueryEVArray, Entries: make([]EVOpEntry, 4)}
		wantErrno(t, "query", c.QueryEVProfile(1, &a, EVAttrEVOp), 0)
		n := 0
		for _, x := range a.Entries {
			if x.EV == e {
				n++
			}
		}
		return n
	}
	wantErrno(t, "replace one copy", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: stevEV(1), New: stevEV(3)}}}, EVAttrEVOp), 0)
	if count(stevEV(1)) != 2 || count(stevEV(3)) != 1 {
		t.Fatalf("one replace: %d copies of 1, %d of 3", count(stevEV(1)), count(stevEV(3)))
	}
	wantErrno(t, "replace all copies", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: stevEV(1), New: stevEV(5), Flags: EVOpAllCopies}}}, EVAttrEVOp), 0)
	if count(stevEV(1)) != 0 || count(stevEV(5)) != 2 {
		t.Fatalf("ALL_COPIES: %d copies of 1, %d of 5", count(stevEV(1)), count(stevEV(5)))
	}
	evs, err := c.ProfileEVs(1)
	if err != nil || len(evs) != 3 {
		t.Fatalf("distinct EVs: %d, %v", len(evs), err)
	}
	// Partial success: the first entry applies, the second fails.
	err = c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: stevEV(2), New: stevEV(6)}, {EV: stevEV(99), New: stevEV(7)}}}, EVAttrEVOp)
	wantErrno(t, "partial", err, ENOENT)
	if count(stevEV(6)) != 1 {
		t.Errorf("the entry before the failing one was not kept (CTL-OP-4)")
	}
}

func TestCtlSRv6Identity(t *testing.T) {
	// CTL-EVX-6: a 32-byte SRv6 EV is an EV identity: its expansion is
	// the outer address, its key its position.
	c := newCtl(t, nil)
	stevFmt(t, c, 14, EVFmtSRv6, 32, 16, 16, 16, 16, 16, 16, 32, 16, 16)
	f := append(append(append([]EVField{fld(32, 0xcafecafe, 0, 0, 0)}, rep(6, fld(16, 0, 0, 0, 0xffff))...),
		fld(32, 0xdecafbad, 0, 0, 0)), rep(2, fld(16, 0, 0, 0, 0xffff))...)
	wantErrno(t, "OFFLINE", c.ModifyEVProfile(3, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 14,
		Count: 2, MinActive: 1, EventMask: 0, FieldsOp: FieldsModify, Fields: f},
		EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask|EVAttrFieldsOp), 0)
	a := CtlEV{Val: evHex("0001 0002 0003 0004 0005 0006 0007 0008"), Port: 1}
	b := CtlEV{Val: evHex("0001 0002 0003 0004 0005 0006 0007 0009"), Port: 2}
	wantErrno(t, "populate", c.ModifyEVProfile(3, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{New: a}, {New: b}}}, EVAttrEVOp), 0)
	evs, err := c.ProfileEVs(3)
	if err != nil {
		t.Fatal(err)
	}
	if evs[1].Key != SRv6KeyBase+1 || evs[1].Expanded != evHex("cafecafe 0001 0002 0003 0004 0005 0006 decafbad 0007 0009") || evs[1].Bits != 192 {
		t.Errorf("SRv6 EV 1: key %d, %x (%d bits)", evs[1].Key, evs[1].Expanded, evs[1].Bits)
	}
}

func TestCtlPortAdmin(t *testing.T) {
	// CTL-PORT-1, CTL-PORT-2.
	c := newCtl(t, nil)
	wantErrno(t, "port 3 of 2", c.ModifyPort(3, false), EINVAL)
	wantErrno(t, "port 0", c.ModifyPort(0, false), EINVAL)
	wantErrno(t, "disable 2", c.ModifyPort(2, false), 0)
	if up, err := c.QueryPort(2); up || err != nil {
		t.Errorf("port 2 after disable: %v %v", up, err)
	}
	if m := c.PortMask(0b110); m != 0b010 {
		t.Errorf("PortMask(0b110) = %#b with port 2 disabled", m)
	}
	wantErrno(t, "enable 2", c.ModifyPort(2, true), 0)
	if m := c.PortMask(0b110); m != 0b110 {
		t.Errorf("PortMask(0b110) = %#b with both enabled", m)
	}
}

func TestCtlDeviceAttr(t *testing.T) {
	// CTL-DEV-1: limits and ev_free_count; CTL-DEV-2: EV events only when
	// advertised; CTL-EVX-1: the EV bit string and UNPOPULATED.
	c := newCtl(t, func(d *DeviceAttr) {
		d.EVMaxProfiles, d.EVMaxCount, d.EVCountAlign = 2, 100, 8
		d.OptAttr &^= OptEVEvent
	})
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	m := EVAttrState | EVAttrMode | EVAttrFmtID | EVAttrCount | EVAttrMinActive | EVAttrEventMask
	a := EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 13, Count: 60, MinActive: 1, EventMask: EVEventGood}
	wantErrno(t, "event mask without OPT_CAP_EV_EVENT", c.ModifyEVProfile(1, &a, m), EINVAL)
	a.EventMask = 0
	wantErrno(t, "60 EVs", c.ModifyEVProfile(1, &a, m), 0)
	q := EVProfileAttr{}
	wantErrno(t, "query", c.QueryEVProfile(1, &q, EVAttrCount), 0)
	if q.Count != 64 {
		t.Errorf("ev_count 60 with alignment 8 reads back %d, want 64 (AMB-64)", q.Count)
	}
	if d := c.QueryDevice(); d.EVFreeCount != 36 {
		t.Errorf("ev_free_count %d, want 100 - 64", d.EVFreeCount)
	}
	wantErrno(t, "beyond ev_free_count", c.ModifyEVProfile(2, &a, m), E2BIG)
	wantErrno(t, "third profile", c.ModifyEVProfile(3, &a, m), E2BIG)
	strict, _ := NewController(DefaultDeviceAttr(1), CtlPolicy{RejectUnalignedCount: true})
	strict.dev.EVCountAlign = 8
	stevFmt(t, strict, 13, EVFmtSTEV, 16, 16)
	wantErrno(t, "unaligned, strict policy", strict.ModifyEVProfile(1, &a, m), EINVAL)
	if v := EVValueOf(0x12345678, 32); v[0] != 0x12 || v[3] != 0x78 || v.Bits(4, 8) != 0x23 {
		t.Errorf("EVValueOf: %x", v[:4])
	}
	if !(CtlEV{}).Unpopulated() || (CtlEV{Port: 1}).Unpopulated() {
		t.Error("UNPOPULATED is the zero value and port 0 only")
	}
}

func TestSRv6EVOnTheWire(t *testing.T) {
	// CTL-EVX-6, WIRE-ENC-2: an IPv6 QP on a Controller's SRv6+SRH profile
	// sends every packet in an outer IPv6 header to its EV's SRv6 address
	// with the one-segment SRH (AMB-73); the inner EV is the key feedback
	// reflects, and the transfer completes through the codec.
	c := newCtl(t, func(d *DeviceAttr) { d.PhyPortMask = 0b10 })
	stevFmt(t, c, 14, EVFmtSRv6, 32, 16, 16, 16, 16, 16, 16, 32, 16, 16)
	f := append(append(append([]EVField{fld(32, 0xfc000000, 0, 0, 0)}, rep(6, fld(16, 0, 0, 0, 0xffff))...),
		fld(32, 0xfc00ff00, 0, 0, 0)), rep(2, fld(16, 0, 0, 0, 0xffff))...)
	wantErrno(t, "OFFLINE", c.ModifyEVProfile(3, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 14,
		Count: 3, MinActive: 1, FieldsOp: FieldsModify, Fields: f},
		EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask|EVAttrFieldsOp), 0)
	var ents []EVOpEntry
	for i := 1; i <= 3; i++ {
		ents = append(ents, EVOpEntry{New: CtlEV{Val: evHex("1001 2001 3001 4001 0000 0000 0" + string(rune('0'+i)) + "00 0000"), Port: 1}})
	}
	wantErrno(t, "populate", c.ModifyEVProfile(3, &EVProfileAttr{EVOp: EVOpReplaceEV, Entries: ents}, EVAttrEVOp), 0)
	wantErrno(t, "ONLINE", c.ModifyEVProfile(3, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
	p, _, err := c.EVProfile(3)
	if err != nil || len(p.SRv6) != 3 || !p.SRv6[0].HasSegment {
		t.Fatalf("compiled SRv6 profile: %+v %v", p.SRv6, err)
	}
	v6 := func(last byte) netip.Addr { return netip.AddrFrom16([16]byte{0xfd, 15: last}) }
	cfgA, cfgB := testConfig(qpnA), testConfig(qpnB)
	cfgA.Addr.SrcIP, cfgA.Addr.DstIP, cfgB.Addr.SrcIP, cfgB.Addr.DstIP = v6(1), v6(2), v6(2), v6(1)
	cfgA.EVProfiles = []EVProfile{p}
	p.ID = 7
	cfgB.EVProfiles = []EVProfile{p}
	aa := testAttr(qpnB)
	aa.EVProfileID = 3
	s := newSim(t, cfgA, cfgB, aa, testAttr(qpnA))
	want := map[uint32][16]byte{}
	for i, e := range p.EVs {
		want[e.Value] = p.SRv6[i].Addr
	}
	codec, _ := wire.NewCodec(spec.DefaultProfile())
	var seen, bad int
	s.tap = func(o *Outgoing) {
		if !o.Pkt.BTH.Opcode.IsWrite() {
			return
		}
		seen++
		b, err := codec.Append(nil, &o.Pkt)
		var d wire.Packet
		if err != nil || codec.Decode(b, &d) != nil || !d.SRv6 || !d.HasSRH || d.Outer.Dst != want[d.EV(wire.EVModeSTEV)] ||
			d.SRH.Segments[0][4] != byte(d.EV(wire.EVModeSTEV)-SRv6KeyBase+1) || d.SRH.Segments[0][3] != 0 || d.SRH.SegmentsLeft != 1 {
			bad++
		}
	}
	for i := 0; i < 4; i++ {
		s.write(0, uint64(i), i*4096, 2000, false)
	}
	s.run(Never)
	if seen == 0 || bad != 0 || len(s.comps[0]) != 4 {
		t.Fatalf("%d data packets, %d without their EV's SRv6 headers; %d completions", seen, bad, len(s.comps[0]))
	}
}
