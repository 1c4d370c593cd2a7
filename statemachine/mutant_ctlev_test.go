package statemachine

import (
	"fmt"
	"testing"
)

// offlineEXP puts EV profile id OFFLINE in EXP mode on format 13 with
// count entries and the extra mask bits of a; it is the first half of
// explicitProfile.
func offlineEXP(t *testing.T, c *Controller, id uint64, count uint32, a EVProfileAttr, mask EVProfileAttrMask) error {
	t.Helper()
	a.State, a.Mode, a.FmtProfileID, a.Count = ProfileOffline, EVModeExplicit, 13, count
	return c.ModifyEVProfile(id, &a, mask|EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount)
}

func queryEV(t *testing.T, c *Controller, id uint64) EVProfileAttr {
	t.Helper()
	var q EVProfileAttr
	wantErrno(t, "query", c.QueryEVProfile(id, &q, 0), 0)
	return q
}

// TestMutantCtlEVLimits: the device's limits are bounds that may be
// reached, not passed (CTL-DEV-1): ev_max_profiles profiles (the next is
// E2BIG), an ev_count of ev_max_count_profile, and of exactly
// ev_free_count on the way to OFFLINE; and ev_min_active may equal
// ev_count (CTL-PRF-7: only above it fails).
func TestMutantCtlEVLimits(t *testing.T) {
	c := newCtl(t, func(d *DeviceAttr) { d.EVMaxProfiles, d.EVMaxCountProfile, d.EVMaxCount = 2, 8, 12 })
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	full := EVProfileAttr{MinActive: 8, EventMask: EVEventGood}
	wantErrno(t, "ev_count = ev_max_count_profile, min_active = count", offlineEXP(t, c, 1, 8, full, EVAttrMinActive|EVAttrEventMask), 0)
	wantErrno(t, "ev_count above ev_max_count_profile", c.ModifyEVProfile(1, &EVProfileAttr{Count: 9}, EVAttrCount), E2BIG)
	wantErrno(t, "min_active above count", c.ModifyEVProfile(1, &EVProfileAttr{MinActive: 9}, EVAttrMinActive), EINVAL)
	if d := c.QueryDevice(); d.EVFreeCount != 4 {
		t.Fatalf("ev_free_count %d, want 4", d.EVFreeCount)
	}
	wantErrno(t, "OFFLINE above ev_free_count", offlineEXP(t, c, 2, 5, EVProfileAttr{}, 0), E2BIG)
	wantErrno(t, "OFFLINE at ev_free_count", offlineEXP(t, c, 2, 4, EVProfileAttr{}, 0), 0)
	wantErrno(t, "a third profile of 2", c.ModifyEVProfile(3, &EVProfileAttr{Mode: EVModeExplicit}, EVAttrMode), E2BIG)
}

// TestMutantCtlEVMask: a modify applies the attributes its mask names and
// no other (CTL-PRF-3): a query EV_OP or QUERY_FIELDS fails only when the
// mask names EV_OP or EV_FIELDS_OP (EINVAL), and vendor_cfg changes only
// with its bit.
func TestMutantCtlEVMask(t *testing.T) {
	c := newCtl(t, nil)
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	wantErrno(t, "OFFLINE with vendor_cfg", offlineEXP(t, c, 1, 4, EVProfileAttr{VendorCfg: [VendorCfgSize]byte{7}}, EVAttrVendorCfg), 0)
	wantErrno(t, "QUERY_EV_STATE in a modify", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpQueryEVState}, EVAttrEVOp), EINVAL)
	wantErrno(t, "QUERY_FIELDS in a modify", c.ModifyEVProfile(1, &EVProfileAttr{FieldsOp: FieldsQuery}, EVAttrFieldsOp), EINVAL)
	a := EVProfileAttr{MinActive: 2, EVOp: EVOpQueryEVArray, FieldsOp: FieldsQuery, VendorCfg: [VendorCfgSize]byte{9}}
	wantErrno(t, "query ops and vendor_cfg outside the mask", c.ModifyEVProfile(1, &a, EVAttrMinActive), 0)
	if q := queryEV(t, c, 1); q.VendorCfg[0] != 7 || q.MinActive != 2 {
		t.Errorf("vendor_cfg %d, min_active %d; want 7 (set with its bit) and 2", q.VendorCfg[0], q.MinActive)
	}
}

// TestMutantCtlEVTransitions: ONLINE needs MIN_ACTIVE and EVENT_MASK
// (CTL-PRF-5); requesting OFFLINE of an OFFLINE profile changes nothing
// (CTL-PRF-2, AMB-63) and moving to INIT discards the configuration.
func TestMutantCtlEVTransitions(t *testing.T) {
	c := newCtl(t, nil)
	stevFmt(t, c, 13, EVFmtSTEV, 16, 16)
	wantErrno(t, "OFFLINE without MIN_ACTIVE", offlineEXP(t, c, 1, 2, EVProfileAttr{EventMask: EVEventGood}, EVAttrEventMask), 0)
	for i := uint32(0); i < 2; i++ {
		wantErrno(t, "populate", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
			Entries: []EVOpEntry{{New: stevEV(i)}}}, EVAttrEVOp), 0)
	}
	wantErrno(t, "ONLINE without MIN_ACTIVE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), EINVAL)
	wantErrno(t, "OFFLINE again", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline}, EVAttrState), 0)
	if q := queryEV(t, c, 1); q.State != ProfileOffline || q.Mode != EVModeExplicit || q.Count != 2 || q.FmtProfileID != 13 {
		t.Errorf("after OFFLINE → OFFLINE: %s, mode %s, count %d, fmt %d; want it unchanged", q.State, q.Mode, q.Count, q.FmtProfileID)
	}
	wantErrno(t, "ONLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline, MinActive: 1}, EVAttrState|EVAttrMinActive), 0)
	wantErrno(t, "OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline}, EVAttrState), 0)
	wantErrno(t, "INIT", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileInit}, EVAttrState), 0)
	if q := queryEV(t, c, 1); q.State != ProfileInit || q.Mode != 0 || q.Count != 0 || q.FmtProfileID != 0 || q.MinActive != 0 {
		t.Errorf("after INIT: mode %s, count %d, fmt %d, min_active %d; want the configuration discarded", q.Mode, q.Count, q.FmtProfileID, q.MinActive)
	}
}

// TestMutantCtlEVOps: MODIFY_EV_STATE works on a GEN profile, REPLACE_EV
// only on EXP (CTL-OP-1, CTL-OP-5); an EV_OP of ev_op_max_entries entries
// is taken and one more fails with E2BIG (CTL-DEV-1); REPLACE_EV puts the
// new EV in the entry's state, ASSUMED_BAD or DENIED too (CTL-OP-1).
func TestMutantCtlEVOps(t *testing.T) {
	c := newCtl(t, func(d *DeviceAttr) { d.EVOpMaxEntries = 2 })
	stevFmt(t, c, 13, EVFmtSTEV, 8, 8)
	fields := []EVField{fld(8, 0, 0, 3, 0xff), fld(8, 0, 0, 0, 0)}
	wantErrno(t, "GEN OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeGenerated, FmtProfileID: 13,
		Count: 4, MinActive: 1, EventMask: EVEventGood, FieldsOp: FieldsModify, Fields: fields},
		EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask|EVAttrFieldsOp), 0)
	arr := EVProfileAttr{EVOp: EVOpQueryEVArray, Entries: make([]EVOpEntry, 4)}
	wantErrno(t, "query array", c.QueryEVProfile(1, &arr, EVAttrEVOp), 0)
	gen := []EVOpEntry{{EV: arr.Entries[0].EV, State: EVDenied}, {EV: arr.Entries[1].EV, State: EVDenied}}
	wantErrno(t, "MODIFY_EV_STATE on GEN, ev_op_max_entries entries", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpModifyEVState, Entries: gen}, EVAttrEVOp), 0)
	wantErrno(t, "REPLACE_EV on GEN", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
		Entries: []EVOpEntry{{EV: arr.Entries[0].EV, New: arr.Entries[3].EV}}}, EVAttrEVOp), EINVAL)
	three := append(gen, EVOpEntry{EV: arr.Entries[2].EV, State: EVDenied})
	wantErrno(t, "one entry above ev_op_max_entries", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpModifyEVState, Entries: three}, EVAttrEVOp), E2BIG)

	stevFmt(t, c, 14, EVFmtSTEV, 16, 16)
	a := EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 14, Count: 2}
	wantErrno(t, "EXP OFFLINE", c.ModifyEVProfile(2, &a, EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount), 0)
	for i, st := range []EVState{EVAssumedBad, EVDenied} {
		wantErrno(t, fmt.Sprintf("REPLACE_EV in state %v", st), c.ModifyEVProfile(2, &EVProfileAttr{EVOp: EVOpReplaceEV,
			Entries: []EVOpEntry{{New: stevEV(uint32(i)), State: st}}}, EVAttrEVOp), 0)
	}
	arr = EVProfileAttr{EVOp: EVOpQueryEVArray, Entries: make([]EVOpEntry, 2)}
	wantErrno(t, "query EXP array", c.QueryEVProfile(2, &arr, EVAttrEVOp), 0)
	if arr.Entries[0].State != EVAssumedBad || arr.Entries[1].State != EVDenied {
		t.Errorf("states after REPLACE_EV: %v, %v; want ASSUMED_BAD, DENIED", arr.Entries[0].State, arr.Entries[1].State)
	}
}

// TestMutantCtlEVGenMinAboveMax: min_val and max_val bound what GEN mode
// generates (CTL-GEN-1): a GEN profile's field with min_val above max_val
// fails with EINVAL on the way to OFFLINE (CTL-PRF-5), while an EXP
// profile, which generates nothing, takes the same fields.
func TestMutantCtlEVGenMinAboveMax(t *testing.T) {
	c := newCtl(t, nil)
	stevFmt(t, c, 13, EVFmtSTEV, 8, 8)
	fields := []EVField{fld(8, 0, 5, 3, 0xff), fld(8, 0, 0, 0, 0xff)}
	for _, tc := range []struct {
		mode EVGenMode
		want Errno
	}{{EVModeGenerated, EINVAL}, {EVModeExplicit, 0}} {
		wantErrno(t, tc.mode.String()+" OFFLINE with min_val > max_val", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline,
			Mode: tc.mode, FmtProfileID: 13, Count: 4, FieldsOp: FieldsModify, Fields: fields},
			EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrFieldsOp), tc.want)
	}
}

// TestMutantCtlEVRangeEnds: an explicit range may start at 0 and end at
// the largest value its EV bits hold (CTL-OP-6).
func TestMutantCtlEVRangeEnds(t *testing.T) {
	for _, base := range []uint32{0, 0xFFFF - 7} {
		c := newCtl(t, func(d *DeviceAttr) { d.OptAttr |= OptEVExplicitRange })
		stevFmt(t, c, 13, EVFmtSTEV, 16)
		wantErrno(t, "EV OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 13,
			Count: 8, MinActive: 1, EventMask: EVEventGood}, EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask), 0)
		for i := uint32(0); i < 8; i++ {
			wantErrno(t, "populate the range", c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV,
				Entries: []EVOpEntry{{New: CtlEV{Val: EVValueOf(base+i, 16), Port: 1}}}}, EVAttrEVOp), 0)
		}
		wantErrno(t, "ONLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
	}
}

// TestMutantCtlEVStates: MODIFY_EV_STATE takes GOOD, ASSUMED_BAD and
// DENIED, and QUERY_EV_STATE finds every entry's EV, the first one too
// (CTL-OP-5).
func TestMutantCtlEVStates(t *testing.T) {
	c := newCtl(t, nil)
	explicitProfile(t, c, 4)
	for _, st := range []EVState{EVDenied, EVGood, EVAssumedBad} {
		wantErrno(t, fmt.Sprintf("MODIFY_EV_STATE to %v", st), c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpModifyEVState,
			Entries: []EVOpEntry{{EV: stevEV(0), State: st}}}, EVAttrEVOp), 0)
		q := EVProfileAttr{EVOp: EVOpQueryEVState, Entries: []EVOpEntry{{EV: stevEV(0)}, {EV: stevEV(3)}}}
		wantErrno(t, "QUERY_EV_STATE", c.QueryEVProfile(1, &q, EVAttrEVOp), 0)
		if q.Entries[0].State != st || q.Entries[1].State != EVGood {
			t.Errorf("after MODIFY_EV_STATE to %v: entry 0 %v, entry 3 %v", st, q.Entries[0].State, q.Entries[1].State)
		}
	}
}

// TestMutantCtlEVAuto: an AUTO profile goes ONLINE with the EVs the
// device picks itself, 16 per port of phy_port_mask and on no other port
// (CTL-PRF-5, AMB-66).
func TestMutantCtlEVAuto(t *testing.T) {
	c := newCtl(t, func(d *DeviceAttr) { d.PhyPortMask = 1<<1 | 1<<3 })
	wantErrno(t, "AUTO OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeAuto, MinActive: 1, EventMask: EVEventGood},
		EVAttrState|EVAttrMode|EVAttrMinActive|EVAttrEventMask), 0)
	wantErrno(t, "AUTO ONLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
	p, _, err := c.EVProfile(1)
	if err != nil {
		t.Fatal(err)
	}
	per := map[uint8]int{}
	for _, e := range p.EVs {
		per[e.Port]++
	}
	if len(per) != 2 || per[1] != 16 || per[3] != 16 {
		t.Errorf("AUTO EVs per port %v, want 16 on ports 1 and 3", per)
	}
}

// TestMutantCtlEVSRv6Address: an explicit profile without fields takes
// format fields of 32 bits, each EV as it is (AMB-61); a 128-bit SRv6 EV
// is the outer address alone, with no SRH segment (CTL-EVX-6).
func TestMutantCtlEVSRv6Address(t *testing.T) {
	c := newCtl(t, nil)
	stevFmt(t, c, 14, EVFmtSRv6, 32, 32, 32, 32)
	wantErrno(t, "OFFLINE", c.ModifyEVProfile(3, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 14,
		Count: 2, MinActive: 1, EventMask: EVEventGood}, EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask), 0)
	a := CtlEV{Val: evHex("fc00 0002 0003 0004 0005 0006 0007 0008"), Port: 1}
	b := CtlEV{Val: evHex("fc00 0002 0003 0004 0005 0006 0007 0009"), Port: 2}
	wantErrno(t, "populate", c.ModifyEVProfile(3, &EVProfileAttr{EVOp: EVOpReplaceEV, Entries: []EVOpEntry{{New: a}, {New: b}}}, EVAttrEVOp), 0)
	wantErrno(t, "ONLINE", c.ModifyEVProfile(3, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
	p, _, err := c.EVProfile(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SRv6) != 2 || p.SRv6[1].HasSegment || [16]byte(b.Val[:16]) != p.SRv6[1].Addr {
		t.Errorf("SRv6 paths %+v, want b's 128 bits as the address and no segment", p.SRv6)
	}
}
