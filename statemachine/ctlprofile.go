package statemachine

import (
	"math/bits"
	"slices"
)

// EVFmtAttrMask is enum mrc_ctl_ev_fmt_profile_attr_mask.
type EVFmtAttrMask uint32

// EV Format profile attribute mask bits.
const (
	EVFmtAttrState     EVFmtAttrMask = 1 << 0
	EVFmtAttrCurState  EVFmtAttrMask = 1 << 1
	EVFmtAttrMode      EVFmtAttrMask = 1 << 2 // MRC_CTL_EV_FMT_PROFILE_MODE
	EVFmtAttrOp        EVFmtAttrMask = 1 << 3
	EVFmtAttrVendorCfg EVFmtAttrMask = 1 << 31
)

// FieldsOp is enum mrc_ctl_ev_fmt_op and enum mrc_ctl_ev_fields_op (the
// same two values).
type FieldsOp uint8

// Field operations.
const (
	FieldsModify FieldsOp = 0
	FieldsQuery  FieldsOp = 1
)

// VendorCfgSize is MRC_CTL_MAX_VENDOR_CFG_SIZE.
const VendorCfgSize = 128

// EVFmtAttr is struct mrc_ctl_ev_fmt_profile_attr.
type EVFmtAttr struct {
	State    ProfileState // move the profile to this state
	CurState ProfileState // filled by a query
	Mode     EVFmtMode
	Op       FieldsOp
	// Widths is the format fields' widths (MODIFY_FIELDS), or room for
	// them (QUERY_FIELDS: filled; E2BIG with FieldCount the number
	// needed when it is too short).
	Widths     []uint8
	FieldCount int
	VendorCfg  [VendorCfgSize]byte
}

type fmtProfile struct {
	state  ProfileState
	mode   EVFmtMode
	widths []uint8
	vendor [VendorCfgSize]byte
}

// ModifyEVFmtProfile is mrc_ctl_modify_ev_fmt_profile (CTL-FMT-1 to
// CTL-FMT-4). A profile ID not seen before is a profile in INIT.
func (c *Controller) ModifyEVFmtProfile(id uint64, a *EVFmtAttr, mask EVFmtAttrMask) error {
	p := c.fmts[id]
	if p == nil {
		if len(c.fmts) >= int(c.dev.EVMaxFmtProfiles) {
			return ctlErr(E2BIG, "EV Format profile %d: the device holds %d", id, c.dev.EVMaxFmtProfiles)
		}
		p = &fmtProfile{}
	}
	if mask&EVFmtAttrCurState != 0 || mask&^(EVFmtAttrState|EVFmtAttrMode|EVFmtAttrOp|EVFmtAttrVendorCfg|EVFmtAttrCurState) != 0 {
		return ctlErr(EINVAL, "EV Format profile %d: mask %#x: CUR_STATE and unknown bits cannot be modified", id, uint32(mask))
	}
	if mask&EVFmtAttrOp != 0 && a.Op == FieldsQuery {
		if err := c.queryFmtFields(id, p, a); err != nil {
			return err
		}
		if mask &^= EVFmtAttrOp; mask == 0 {
			return nil
		}
	}
	if p.state == ProfileOnline && mask&^EVFmtAttrState != 0 {
		return ctlErr(EINVAL, "EV Format profile %d is ONLINE: only STATE(OFFLINE) and QUERY_FIELDS", id)
	}
	if c.fmtInUse(id) {
		return ctlErr(EBUSY, "EV Format profile %d: an EV profile using it is ONLINE", id)
	}
	n := *p
	if mask&EVFmtAttrMode != 0 {
		if bits.OnesCount32(uint32(a.Mode)) != 1 || c.dev.EVFmtModeMask&a.Mode == 0 {
			return ctlErr(EINVAL, "EV Format profile %d: mode %s not in ev_fmt_mode_mask %#x", id, a.Mode, uint32(c.dev.EVFmtModeMask))
		}
		n.mode = a.Mode
	}
	if mask&EVFmtAttrOp != 0 {
		if a.Op != FieldsModify {
			return ctlErr(EINVAL, "EV Format profile %d: op %d", id, a.Op)
		}
		n.widths = slices.Clone(a.Widths)
	}
	if mask&EVFmtAttrVendorCfg != 0 {
		n.vendor = a.VendorCfg
	}
	if n.widths != nil || mask&EVFmtAttrOp != 0 {
		if err := checkFmtWidths(id, n.mode, n.widths); err != nil {
			return err
		}
	}
	if mask&EVFmtAttrState != 0 {
		if err := checkTransition("EV Format", id, p.state, a.State); err != nil {
			return err
		}
		switch {
		case a.State == ProfileOffline && p.state == ProfileInit && n.mode == 0:
			return ctlErr(EINVAL, "EV Format profile %d: OFFLINE needs MODE", id)
		case a.State == ProfileOnline && n.widths == nil:
			return ctlErr(EINVAL, "EV Format profile %d: ONLINE needs MODIFY_FIELDS", id)
		case a.State == ProfileInit:
			n = fmtProfile{}
		}
		n.state = a.State
	}
	c.fmts[id] = &n
	return nil
}

func checkFmtWidths(id uint64, mode EVFmtMode, w []uint8) error {
	if len(w) == 0 {
		return ctlErr(EINVAL, "EV Format profile %d: no format fields", id)
	}
	sum := 0
	for i, x := range w {
		if x == 0 {
			return ctlErr(EINVAL, "EV Format profile %d: field %d has width 0", id, i)
		}
		sum += int(x)
	}
	if mode != 0 && sum > mode.maxBits() {
		return ctlErr(E2BIG, "EV Format profile %d: fields total %d bits, %s carries %d", id, sum, mode, mode.maxBits())
	}
	if sum > 8*EVBytes {
		return ctlErr(E2BIG, "EV Format profile %d: fields total %d bits, an EV holds %d", id, sum, 8*EVBytes)
	}
	return nil
}

func (c *Controller) queryFmtFields(id uint64, p *fmtProfile, a *EVFmtAttr) error {
	a.FieldCount = len(p.widths)
	if len(a.Widths) < len(p.widths) {
		return ctlErr(E2BIG, "EV Format profile %d: %d fields, room for %d", id, len(p.widths), len(a.Widths))
	}
	copy(a.Widths, p.widths)
	a.Widths = a.Widths[:len(p.widths)]
	return nil
}

// QueryEVFmtProfile is mrc_ctl_query_ev_fmt_profile.
func (c *Controller) QueryEVFmtProfile(id uint64, a *EVFmtAttr, mask EVFmtAttrMask) error {
	p := c.fmts[id]
	if p == nil {
		return ctlErr(EINVAL, "EV Format profile %d does not exist", id)
	}
	if mask&EVFmtAttrOp != 0 && a.Op != FieldsQuery {
		return ctlErr(EINVAL, "EV Format profile %d: MODIFY_FIELDS in a query", id)
	}
	a.State, a.CurState, a.Mode, a.VendorCfg = p.state, p.state, p.mode, p.vendor
	if mask&EVFmtAttrOp != 0 {
		return c.queryFmtFields(id, p, a)
	}
	return nil
}

func (c *Controller) fmtInUse(id uint64) bool {
	for _, e := range c.evs {
		if e.state == ProfileOnline && e.mode != EVModeAuto && e.fmtID == id {
			return true
		}
	}
	return false
}
