package statemachine

import "slices"

// CCProfileAttrMask is enum mrc_ctl_cc_profile_attr_mask.
type CCProfileAttrMask uint32

// CC profile attribute mask bits.
const (
	CCAttrState     CCProfileAttrMask = 1 << 0
	CCAttrCurState  CCProfileAttrMask = 1 << 1
	CCAttrAlgorithm CCProfileAttrMask = 1 << 2
	CCAttrConfig    CCProfileAttrMask = 1 << 3
	CCAttrVendorCfg CCProfileAttrMask = 1 << 31
)

// CCProfileAttr is struct mrc_ctl_cc_profile_attr; Config stands for
// cc_config when the algorithm is NSCC.
type CCProfileAttr struct {
	State     ProfileState
	CurState  ProfileState
	Algorithm string // CCAlgNSCC, or CCAlgNone (NULL) to disable CC
	Config    NSCCConfig
	VendorCfg [VendorCfgSize]byte
}

type ccProfileObj struct {
	state ProfileState
	set   CCProfileAttrMask
	attr  CCProfileAttr
	users int
}

// ModifyCCProfile is mrc_ctl_modify_cc_profile: OFFLINE needs ALGORITHM,
// ONLINE needs CONFIG unless the algorithm is none, and an ONLINE profile
// takes CONFIG only with MRC_CTL_OPT_CAP_CC_PROFILE_MODIFY_ONLINE
// (CTL-PRF-8). Leaving ONLINE while QPs use it is EBUSY (CTL-PRF-6).
func (c *Controller) ModifyCCProfile(id uint64, a *CCProfileAttr, mask CCProfileAttrMask) error {
	p := c.ccs[id]
	if p == nil {
		if len(c.ccs) >= int(c.dev.CCMaxProfiles) {
			return ctlErr(E2BIG, "CC profile %d: the device holds %d", id, c.dev.CCMaxProfiles)
		}
		p = &ccProfileObj{}
	}
	allowed := CCAttrState | CCAttrAlgorithm | CCAttrConfig | CCAttrVendorCfg
	if p.state == ProfileOnline {
		allowed = CCAttrState
		if c.hasOpt(OptCCProfileModifyOnline) {
			allowed |= CCAttrConfig
		}
	}
	if extra := mask &^ allowed; extra != 0 {
		return ctlErr(EINVAL, "CC profile %d is %s: attributes %#x cannot be modified (CTL-PRF-3)", id, p.state, uint32(extra))
	}
	if p.state == ProfileOnline && mask&CCAttrState != 0 && a.State != ProfileOnline && p.users > 0 {
		return ctlErr(EBUSY, "CC profile %d: %d QPs use it", id, p.users)
	}
	n := *p
	n.set |= mask &^ CCAttrState
	if mask&CCAttrAlgorithm != 0 {
		if a.Algorithm != CCAlgNone && !slices.Contains(c.dev.CCAlgorithms, a.Algorithm) {
			return ctlErr(EINVAL, "CC profile %d: algorithm %q is not one the device lists", id, a.Algorithm)
		}
		n.attr.Algorithm = a.Algorithm
	}
	if mask&CCAttrConfig != 0 {
		n.attr.Config = a.Config
	}
	if mask&CCAttrVendorCfg != 0 {
		n.attr.VendorCfg = a.VendorCfg
	}
	if n.set&CCAttrConfig != 0 {
		if err := checkCC(&CCProfile{ID: id, Algorithm: n.attr.Algorithm, NSCC: n.attr.Config}); err != nil {
			return ctlErr(EINVAL, "%v", err)
		}
	}
	if mask&CCAttrState != 0 {
		if err := checkTransition("CC", id, p.state, a.State); err != nil {
			return err
		}
		switch {
		case a.State == ProfileOffline && p.state == ProfileInit && n.set&CCAttrAlgorithm == 0:
			return ctlErr(EINVAL, "CC profile %d: OFFLINE needs ALGORITHM", id)
		case a.State == ProfileOnline && p.state == ProfileOffline && n.attr.Algorithm != CCAlgNone && n.set&CCAttrConfig == 0:
			return ctlErr(EINVAL, "CC profile %d: ONLINE needs CONFIG (AMB-67)", id)
		case a.State == ProfileInit && p.state == ProfileOffline:
			n = ccProfileObj{}
		}
		n.state = a.State
	}
	c.ccs[id] = &n
	return nil
}

// QueryCCProfile is mrc_ctl_query_cc_profile.
func (c *Controller) QueryCCProfile(id uint64) (CCProfileAttr, error) {
	p := c.ccs[id]
	if p == nil {
		return CCProfileAttr{}, ctlErr(EINVAL, "CC profile %d does not exist", id)
	}
	a := p.attr
	a.State, a.CurState = p.state, p.state
	return a, nil
}

// CCProfile returns the ONLINE CC profile id as a Node takes it.
func (c *Controller) CCProfile(id uint64) (CCProfile, error) {
	p := c.ccs[id]
	if p == nil || p.state != ProfileOnline {
		return CCProfile{}, ctlErr(EINVAL, "CC profile %d is not ONLINE", id)
	}
	return CCProfile{ID: id, Algorithm: p.attr.Algorithm, NSCC: p.attr.Config}, nil
}

// AttachQP records that a QP uses EV profile ev and CC profile cc, which
// must both be ONLINE (CTL-PRF-9); while it is attached they cannot leave
// ONLINE (EBUSY, CTL-PRF-6).
func (c *Controller) AttachQP(ev, cc uint64) error {
	e, k := c.evs[ev], c.ccs[cc]
	if e == nil || e.state != ProfileOnline {
		return ctlErr(EINVAL, "EV profile %d is not ONLINE", ev)
	}
	if k == nil || k.state != ProfileOnline {
		return ctlErr(EINVAL, "CC profile %d is not ONLINE", cc)
	}
	e.users++
	k.users++
	return nil
}

// DetachQP undoes AttachQP, when the QP is destroyed or reset.
func (c *Controller) DetachQP(ev, cc uint64) {
	if e := c.evs[ev]; e != nil && e.users > 0 {
		e.users--
	}
	if k := c.ccs[cc]; k != nil && k.users > 0 {
		k.users--
	}
}
