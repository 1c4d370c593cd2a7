package statemachine

import "testing"

// TestCtlExplicitRange: a device advertising
// MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE takes an explicit EV array only as one
// contiguous range, entry i the base plus i; a REPLACE_EV entry off the
// range fails with EINVAL and changes nothing, so does one whose range
// would not fit the EV's bits; a device without the capability takes any
// array (CTL-OP-6, CTL-DEV-2, CTL-OP-4, AMB-97).
func TestCtlExplicitRange(t *testing.T) {
	const count = 8
	ev := func(v uint32) CtlEV { return CtlEV{Val: EVValueOf(v, 16), Port: 1} }
	setup := func(opt OptAttr) *Controller {
		c := newCtl(t, func(d *DeviceAttr) { d.OptAttr |= opt })
		stevFmt(t, c, 13, EVFmtSTEV, 16)
		wantErrno(t, "EV OFFLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline, Mode: EVModeExplicit, FmtProfileID: 13,
			Count: count, MinActive: 1, EventMask: EVEventGood | EVEventAssumedBad},
			EVAttrState|EVAttrMode|EVAttrFmtID|EVAttrCount|EVAttrMinActive|EVAttrEventMask), 0)
		return c
	}
	replace := func(c *Controller, old, new CtlEV) error {
		return c.ModifyEVProfile(1, &EVProfileAttr{EVOp: EVOpReplaceEV, Entries: []EVOpEntry{{EV: old, New: new, State: EVGood}}}, EVAttrEVOp)
	}
	array := func(c *Controller) []CtlEV {
		a := EVProfileAttr{EVOp: EVOpQueryEVArray, Entries: make([]EVOpEntry, count)}
		wantErrno(t, "query array", c.QueryEVProfile(1, &a, EVAttrEVOp), 0)
		var out []CtlEV
		for _, e := range a.Entries {
			out = append(out, e.EV)
		}
		return out
	}

	// The range 0x40..0x47 in index order: accepted, ONLINE.
	c := setup(OptEVExplicitRange)
	for i := uint32(0); i < count; i++ {
		wantErrno(t, "populate the range", replace(c, CtlEV{}, ev(0x40+i)), 0)
	}
	wantErrno(t, "ONLINE", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
	// ONLINE (MODIFY_ONLINE advertised): replacing one entry breaks the
	// range and is refused, the array unchanged.
	wantErrno(t, "replace off the range online", replace(c, ev(0x43), ev(0x90)), EINVAL)
	if a := array(c); a[3] != ev(0x43) {
		t.Fatalf("entry 3 after a refused replace: %+v", a[3])
	}

	// Off the range while OFFLINE: entry 1 must be entry 0 plus 1.
	c = setup(OptEVExplicitRange)
	wantErrno(t, "entry 0", replace(c, CtlEV{}, ev(0x40)), 0)
	wantErrno(t, "entry 1 off the range", replace(c, CtlEV{}, ev(0x50)), EINVAL)
	if a := array(c); a[0] != ev(0x40) || !a[1].Unpopulated() {
		t.Fatalf("array after a refused entry: %+v %+v", a[0], a[1])
	}
	wantErrno(t, "entry 1 on the range", replace(c, CtlEV{}, ev(0x41)), 0)
	// A value below its index has no base.
	wantErrno(t, "entry 2 below its index", replace(c, CtlEV{}, ev(1)), EINVAL)

	// A range whose last value does not fit the 16 EV bits.
	c = setup(OptEVExplicitRange)
	wantErrno(t, "base 0xFFFC, 8 entries", replace(c, CtlEV{}, ev(0xFFFC)), EINVAL)

	// Without the capability any array is taken.
	c = setup(0)
	for i := uint32(0); i < count; i++ {
		wantErrno(t, "populate any", replace(c, CtlEV{}, ev(0x40+7*i)), 0)
	}
	wantErrno(t, "ONLINE any", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOnline}, EVAttrState), 0)
}
