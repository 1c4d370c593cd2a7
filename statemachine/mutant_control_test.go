package statemachine

import (
	"strings"
	"testing"
)

// TestMutantControlBounds: the responder's host backpressure takes
// rcv_cwnd_pen up to 127 inclusive (CC-RSP-3), and dynamic MPR takes a
// window of exactly MPR_DEST, refusing one more unit with an error that
// names MPR_DEST in units (MPR-DYN-2).
func TestMutantControlBounds(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.MPRDest, a.Cap = 2, CapDynamicMPR })
	if err := o.q.SetReceivePenalty(127, false); err != nil {
		t.Errorf("rcv_cwnd_pen 127: %v", err)
	}
	wantErr(t, o.q.SetReceivePenalty(128, false), ErrInvalidAttr)
	if err := o.q.SetDynamicMPR(2); err != nil {
		t.Errorf("dynamic MPR of MPR_DEST (2 units): %v", err)
	}
	err := o.q.SetDynamicMPR(3)
	wantErr(t, err, ErrInvalidAttr)
	if err == nil || !strings.Contains(err.Error(), "MPR_DEST=2]") {
		t.Errorf("dynamic MPR 3: %v, want the error to name MPR_DEST=2", err)
	}
}

// TestMutantDeviceAttrLimits: mrc_ctl_device_attr's limits are inclusive
// (CTL-DEV-1): ev_max_count_profile up to MaxEVs, ev_count_align up to
// ev_max_count_profile and 65536 profiles of each
// kind are accepted, one more is refused; ev_max_width's error names the
// 256 bits of an EV. Errno values past the named ones print as numbers.
func TestMutantDeviceAttrLimits(t *testing.T) {
	ok := []func(*DeviceAttr){
		func(d *DeviceAttr) { d.EVMaxCountProfile = MaxEVs },
		func(d *DeviceAttr) { d.EVCountAlign = d.EVMaxCountProfile },
		func(d *DeviceAttr) { d.EVMaxFmtProfiles = 1 << 16 },
		func(d *DeviceAttr) { d.EVMaxProfiles = 1 << 16 },
		func(d *DeviceAttr) { d.CCMaxProfiles = 1 << 16 },
	}
	bad := []func(*DeviceAttr){
		func(d *DeviceAttr) { d.EVMaxCountProfile = MaxEVs + 1 },
		func(d *DeviceAttr) { d.EVCountAlign = d.EVMaxCountProfile + 1 },
		func(d *DeviceAttr) { d.EVMaxFmtProfiles = 1<<16 + 1 },
		func(d *DeviceAttr) { d.EVMaxProfiles = 1<<16 + 1 },
		func(d *DeviceAttr) { d.CCMaxProfiles = 1<<16 + 1 },
	}
	for i, mod := range ok {
		d := DefaultDeviceAttr(2)
		mod(&d)
		if _, err := NewController(d, CtlPolicy{}); err != nil {
			t.Errorf("limit %d at its maximum: %v", i, err)
		}
	}
	for i, mod := range bad {
		d := DefaultDeviceAttr(2)
		mod(&d)
		if _, err := NewController(d, CtlPolicy{}); err == nil {
			t.Errorf("limit %d one past its maximum accepted", i)
		}
	}
	d := DefaultDeviceAttr(2)
	d.EVMaxWidth = 8*EVBytes + 1
	if _, err := NewController(d, CtlPolicy{}); err == nil || !strings.Contains(err.Error(), "want 1 to 256") {
		t.Errorf("ev_max_width 257: %v, want an error naming 256", err)
	}
	if s := Errno(len(errnoNames)).String(); s != "Errno(10)" {
		t.Errorf("Errno past the names: %q", s)
	}
}

// TestMutantQueryPortBounds: mrc_ctl_query_port answers for every port of
// phy_port_mask, port MaxPlanes included, and refuses port 0 (CTL-PORT-1,
// CTL-PORT-2).
func TestMutantQueryPortBounds(t *testing.T) {
	c := newCtl(t, func(d *DeviceAttr) { d.PhyPortMask = 1<<1 | 1<<MaxPlanes })
	for _, p := range []uint8{1, MaxPlanes} {
		if up, err := c.QueryPort(p); err != nil || !up {
			t.Errorf("port %d: %v, %v; want enabled", p, up, err)
		}
	}
	if _, err := c.QueryPort(0); err == nil {
		t.Error("port 0 accepted")
	}
}
