package statemachine

import (
	"slices"
	"strings"
	"testing"
)

// TestMutantEVFmtProfileOps: mrc_ctl_modify_ev_fmt_profile and its query
// (CTL-FMT-1 to CTL-FMT-4). The device holds at most EVMaxFmtProfiles;
// MODIFY_FIELDS sets the widths QUERY_FIELDS returns, into room of exactly
// their number; a QUERY_FIELDS through modify on an unknown ID creates no
// profile, and with other mask bits applies them; vendor_cfg changes only
// when the mask names it; the fields may total the 256 bits of an EV, not
// one more.
func TestMutantEVFmtProfileOps(t *testing.T) {
	c := newCtl(t, func(d *DeviceAttr) { d.EVMaxFmtProfiles = 2 })
	wantErrno(t, "widths", c.ModifyEVFmtProfile(1, &EVFmtAttr{Op: FieldsModify, Widths: []uint8{8, 4}}, EVFmtAttrOp), 0)
	q := EVFmtAttr{Op: FieldsQuery, Widths: make([]uint8, 2)}
	wantErrno(t, "query in room of 2", c.QueryEVFmtProfile(1, &q, EVFmtAttrOp), 0)
	if !slices.Equal(q.Widths, []uint8{8, 4}) || q.FieldCount != 2 {
		t.Errorf("queried widths %v (%d), want [8 4]", q.Widths, q.FieldCount)
	}
	m := EVFmtAttr{Op: FieldsQuery, Widths: make([]uint8, 2), VendorCfg: [VendorCfgSize]byte{7}}
	wantErrno(t, "query and vendor_cfg through modify", c.ModifyEVFmtProfile(1, &m, EVFmtAttrOp|EVFmtAttrVendorCfg), 0)
	if !slices.Equal(m.Widths, []uint8{8, 4}) {
		t.Errorf("query through modify: %v", m.Widths)
	}
	small := EVFmtAttr{Op: FieldsQuery, Widths: make([]uint8, 1)}
	wantErrno(t, "query through modify, room of 1", c.ModifyEVFmtProfile(1, &small, EVFmtAttrOp|EVFmtAttrVendorCfg), E2BIG)
	wantErrno(t, "vendor_cfg not in the mask", c.ModifyEVFmtProfile(1, &EVFmtAttr{Mode: EVFmtUDP, VendorCfg: [VendorCfgSize]byte{9}}, EVFmtAttrMode), 0)
	var v EVFmtAttr
	wantErrno(t, "query", c.QueryEVFmtProfile(1, &v, 0), 0)
	if v.VendorCfg != [VendorCfgSize]byte{7} || v.Mode != EVFmtUDP {
		t.Errorf("vendor_cfg %v, mode %v; want the one set with its mask bit, and UDP", v.VendorCfg[:2], v.Mode)
	}
	wantErrno(t, "query through modify of an unknown ID", c.ModifyEVFmtProfile(5, &EVFmtAttr{Op: FieldsQuery}, EVFmtAttrOp), 0)
	wantErrno(t, "the unknown ID after a query", c.QueryEVFmtProfile(5, &EVFmtAttr{}, 0), EINVAL)
	wantErrno(t, "256 bits", c.ModifyEVFmtProfile(2, &EVFmtAttr{Op: FieldsModify, Widths: []uint8{255, 1}}, EVFmtAttrOp), 0)
	err := c.ModifyEVFmtProfile(2, &EVFmtAttr{Op: FieldsModify, Widths: []uint8{255, 2}}, EVFmtAttrOp)
	wantErrno(t, "257 bits", err, E2BIG)
	if err == nil || !strings.Contains(err.Error(), "an EV holds 256") {
		t.Errorf("257 bits: %v, want the error to name the EV's 256 bits", err)
	}
	wantErrno(t, "a third profile of 2", c.ModifyEVFmtProfile(3, &EVFmtAttr{Op: FieldsModify, Widths: []uint8{8}}, EVFmtAttrOp), E2BIG)
}
