package statemachine

import "testing"

// TestMutantCCProfileLifecycle: mrc_ctl_modify_cc_profile and its query
// (CTL-PRF-3, CTL-PRF-6, CTL-PRF-8, CTL-PRF-9). The device holds at most
// CCMaxProfiles; an algorithm the device does not list is refused, none is
// taken; vendor_cfg changes only under its mask bit; OFFLINE from INIT needs
// ALGORITHM; OFFLINE -> INIT forgets the attributes; an ONLINE profile no QP
// uses may leave ONLINE; CCProfile gives only ONLINE profiles; DetachQP
// undoes exactly one AttachQP and never counts below zero.
func TestMutantCCProfileLifecycle(t *testing.T) {
	c := newCtl(t, func(d *DeviceAttr) { d.CCMaxProfiles = 2 })
	explicitProfile(t, c, 8)
	wantErrno(t, "unknown algorithm", c.ModifyCCProfile(1, &CCProfileAttr{Algorithm: "cubic"}, CCAttrAlgorithm), EINVAL)
	wantErrno(t, "OFFLINE without ALGORITHM", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileOffline}, CCAttrState), EINVAL)
	wantErrno(t, "vendor_cfg", c.ModifyCCProfile(1, &CCProfileAttr{VendorCfg: [VendorCfgSize]byte{4}}, CCAttrVendorCfg), 0)
	wantErrno(t, "OFFLINE", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileOffline, Algorithm: CCAlgNSCC,
		VendorCfg: [VendorCfgSize]byte{5}}, CCAttrState|CCAttrAlgorithm), 0)
	a, err := c.QueryCCProfile(1)
	if err != nil || a.VendorCfg != [VendorCfgSize]byte{4} || a.Algorithm != CCAlgNSCC || a.State != ProfileOffline {
		t.Errorf("query: %+v, %v; want NSCC, OFFLINE, vendor_cfg set under its mask only", a.Algorithm, err)
	}
	if _, err := c.CCProfile(1); err == nil {
		t.Error("CCProfile of an OFFLINE profile")
	}
	wantErrno(t, "INIT", c.ModifyCCProfile(1, &CCProfileAttr{State: ProfileInit}, CCAttrState), 0)
	if a, _ := c.QueryCCProfile(1); a.Algorithm != "" || a.VendorCfg != ([VendorCfgSize]byte{}) {
		t.Errorf("after OFFLINE -> INIT: algorithm %q, vendor_cfg %v; want both cleared", a.Algorithm, a.VendorCfg[:1])
	}
	wantErrno(t, "none", c.ModifyCCProfile(2, &CCProfileAttr{State: ProfileOffline, Algorithm: CCAlgNone}, CCAttrState|CCAttrAlgorithm), 0)
	wantErrno(t, "a third profile of 2", c.ModifyCCProfile(3, &CCProfileAttr{Algorithm: CCAlgNone}, CCAttrAlgorithm), E2BIG)
	wantErrno(t, "ONLINE none", c.ModifyCCProfile(2, &CCProfileAttr{State: ProfileOnline}, CCAttrState), 0)
	if p, err := c.CCProfile(2); err != nil || p.ID != 2 || p.Algorithm != CCAlgNone {
		t.Errorf("CCProfile of an ONLINE profile: %+v, %v", p, err)
	}
	wantErrno(t, "OFFLINE, unused", c.ModifyCCProfile(2, &CCProfileAttr{State: ProfileOffline}, CCAttrState), 0)
	wantErrno(t, "ONLINE again", c.ModifyCCProfile(2, &CCProfileAttr{State: ProfileOnline}, CCAttrState), 0)
	c.DetachQP(1, 2) // never attached: counts stay at zero
	wantErrno(t, "attach", c.AttachQP(1, 2), 0)
	wantErrno(t, "EV OFFLINE in use", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline}, EVAttrState), EBUSY)
	wantErrno(t, "CC OFFLINE in use", c.ModifyCCProfile(2, &CCProfileAttr{State: ProfileOffline}, CCAttrState), EBUSY)
	c.DetachQP(1, 2)
	wantErrno(t, "CC OFFLINE after detach", c.ModifyCCProfile(2, &CCProfileAttr{State: ProfileOffline}, CCAttrState), 0)
	wantErrno(t, "EV OFFLINE after detach", c.ModifyEVProfile(1, &EVProfileAttr{State: ProfileOffline}, EVAttrState), 0)
}
