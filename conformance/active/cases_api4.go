package active

import (
	"errors"
	"fmt"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
)

// MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE, on a device that advertises it
// (spec/36-api-objects.md CTL-OP-6). The reference advertises it only
// with mrc-peer --explicit-range (peer.Config.ExplicitRange).

func init() { addCases(api4Cases) }

func api4Cases() {
	register(Case{Role: RoleControl, Run: ctlExplicitRange, Case: conformance.Case{
		ID: "MRC-CTL-OP-102", Title: "An explicit EV array is one range where EXPLICIT_RANGE is advertised",
		Assertion:    "On a device advertising MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE, REPLACE_EV into an EXP profile takes EVs forming one range (entry i = base + i), refuses with EINVAL, unapplied, an EV off the range or a range whose last value does not fit the EV bits, and the profile holding one range goes ONLINE.",
		Requirements: []conformance.RequirementID{"CTL-OP-6", "CTL-OP-4"},
		Level:        spec.Must,
		Steps: []string{"query_device_ctl: NOT-SUPPORTED unless opt_attr has MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE.",
			"Put EV Format profile 13 ONLINE (STEV, one 16-bit field) and EV profile 2 OFFLINE in EXP mode with four entries.",
			"REPLACE_EV filling the entries with 0x7100 to 0x7103: accepted.",
			"REPLACE_EV of 0x7102 by 0x7109: invalid_argument, and query_ev_profile still shows 0x7102.",
			"EV profile 3, EXP, four entries: REPLACE_EV putting 0xFFFE in entry 0 (the range would end at 0x10001): invalid_argument, the entry still unpopulated.",
			"Put EV profile 2 ONLINE: accepted."},
		Pass: "one range taken, EVs off it and an overflowing range refused unapplied", Fail: "an EV off the range or an overflowing range accepted, or a range refused",
	}})
}

// explicitRange reports whether the IUT advertises
// MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE, and its opt_attr.
func explicitRange(t *T) (bool, uint32) {
	var d control.DeviceCtl
	if err := t.TryCall(control.MethodQueryDeviceCtl, control.Empty{}, &d); err != nil {
		return false, 0
	}
	return statemachine.OptAttr(d.OptAttr)&statemachine.OptEVExplicitRange != 0, d.OptAttr
}

func ctlExplicitRange(t *T) {
	if ok, opt := explicitRange(t); !ok {
		t.NotSupported("the IUT does not advertise MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE (opt_attr %#x)", opt)
	}
	t.Call(control.MethodReset, nil, nil) // no profile left by an earlier case
	ctlFmt16(t)
	count := uint32(4)
	for _, id := range []uint64{2, 3} {
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: id, State: str(control.ProfileOffline),
			Mode: str(control.EVModeExplicit), FmtID: ptr(uint64(13)), Count: &count, MinActive: ptrU32(1), EventMask: goodBad}, nil)
	}
	ev := func(v uint32) control.CtlEV { return control.CtlEV{Val: fmt.Sprintf("%04x", v), Port: 1} }
	replace := func(id uint64, entries ...control.EVOpEntry) error {
		return t.TryCall(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: id,
			EVOp: &control.EVOp{Op: control.EVOpReplace, Entries: entries}}, nil)
	}
	var fill []control.EVOpEntry
	for i := range uint32(count) {
		n := ev(0x7100 + i)
		fill = append(fill, control.EVOpEntry{New: &n, State: control.EVGood})
	}
	err := replace(2, fill...)
	t.Check(err == nil, "CTL-OP-6", Evidence{}, "EVs 0x7100 to 0x7103, one range, accepted", "%v", err)
	off := ev(0x7109)
	err = replace(2, control.EVOpEntry{EV: ev(0x7102), New: &off, State: control.EVGood})
	t.Check(errors.Is(err, control.ErrInvalidArgument), "CTL-OP-6", Evidence{}, "0x7109 in place of 0x7102 refused (invalid_argument)", "%v", err)
	var q control.QueryEVProfileResult
	t.Call(control.MethodQueryEVProfile, control.IDParams{ID: 2}, &q)
	t.Check(len(q.EVs) == int(count) && q.EVs[2].EV.Val == "7102", "CTL-OP-4", Evidence{}, "entry 2 still 0x7102", "%+v", q.EVs)
	high := ev(0xFFFE)
	err = replace(3, control.EVOpEntry{New: &high, State: control.EVGood})
	t.Check(errors.Is(err, control.ErrInvalidArgument), "CTL-OP-6", Evidence{}, "0xFFFE in entry 0 of four 16-bit EVs refused (invalid_argument)", "%v", err)
	t.Call(control.MethodQueryEVProfile, control.IDParams{ID: 3}, &q)
	populated := 0
	for _, e := range q.EVs {
		if e.EV.Val != "" && e.EV.Val != "0000" {
			populated++
		}
	}
	t.Check(populated == 0, "CTL-OP-4", Evidence{}, "profile 3 still unpopulated", "%d populated: %+v", populated, q.EVs)
	err = t.TryCall(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 2, State: str(control.ProfileOnline)}, nil)
	t.Check(err == nil, "CTL-OP-6", Evidence{}, "profile 2, one range, ONLINE", "%v", err)
}
