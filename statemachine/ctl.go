package statemachine

import (
	"fmt"
	"math/bits"
)

// The controller's objects of the OCP control API (mrc_ctl.h): the device
// attributes, port administrative state and the EV Format, EV and CC
// profiles with their INIT → OFFLINE → ONLINE lifecycle. A Controller is
// pure data driven by its methods, like a QP; it produces the explicit
// EVProfile and CCProfile values a Node is built from (spec/36-api-objects.md).

// Errno is the errno a control operation fails with, as mrc_ctl.h lists
// them per function.
type Errno uint8

// Errno values.
const (
	EINVAL Errno = iota + 1
	EBUSY
	E2BIG
	ENOENT
	EPERM
	EIO
	ENOTSUP
	ETIMEDOUT
	EAGAIN
)

var errnoNames = [...]string{"", "EINVAL", "EBUSY", "E2BIG", "ENOENT", "EPERM", "EIO", "ENOTSUP", "ETIMEDOUT", "EAGAIN"}

func (e Errno) String() string {
	if int(e) < len(errnoNames) && e != 0 {
		return errnoNames[e]
	}
	return fmt.Sprintf("Errno(%d)", uint8(e))
}

func (e Errno) Error() string { return "statemachine: " + e.String() }

// CtlError is a control operation's failure: its errno and what was wrong.
// errors.Is(err, EBUSY) tests the errno.
type CtlError struct {
	Errno Errno
	Msg   string
}

func (e *CtlError) Error() string { return "statemachine: control: " + e.Errno.String() + ": " + e.Msg }

// Unwrap returns the errno.
func (e *CtlError) Unwrap() error { return e.Errno }

func ctlErr(n Errno, format string, args ...any) error {
	return &CtlError{Errno: n, Msg: fmt.Sprintf(format, args...)}
}

// ProfileState is enum mrc_ctl_profile_state, shared by EV Format, EV and
// CC profiles (CTL-PRF-1).
type ProfileState uint8

// Profile states.
const (
	ProfileInit    ProfileState = 0 // created, ready for configuration
	ProfileOffline ProfileState = 1 // configured, not usable
	ProfileOnline  ProfileState = 2 // usable
)

func (s ProfileState) String() string {
	switch s {
	case ProfileInit:
		return "INIT"
	case ProfileOffline:
		return "OFFLINE"
	case ProfileOnline:
		return "ONLINE"
	}
	return fmt.Sprintf("ProfileState(%d)", uint8(s))
}

// checkTransition allows INIT → OFFLINE → ONLINE → OFFLINE → INIT; asking
// for the state a profile is in changes nothing (CTL-PRF-2, AMB-63).
func checkTransition(kind string, id uint64, from, to ProfileState) error {
	ok := from == to || to == from+1 || to+1 == from
	if !ok || to > ProfileOnline {
		return ctlErr(EINVAL, "%s profile %d: %s → %s is not a transition (INIT → OFFLINE → ONLINE and back)", kind, id, from, to)
	}
	return nil
}

// OptAttr is the opt_attr bitmap of struct mrc_ctl_device_attr (enum
// mrc_ctl_attr_opt).
type OptAttr uint32

// Optional control features (CTL-DEV-2).
const (
	OptEVProfileModifyOnline OptAttr = 1 << 0
	OptCCProfileModifyOnline OptAttr = 1 << 1
	OptEVEvent               OptAttr = 1 << 2
	OptEVExplicitRange       OptAttr = 1 << 3
	OptEVEventPreciseDropCnt OptAttr = 1 << 4
	OptEPOpEVProbe           OptAttr = 1 << 5
)

// EVFmtMode is enum mrc_ctl_ev_fmt_mode, a bit each.
type EVFmtMode uint32

// EV Format modes.
const (
	EVFmtSTEV EVFmtMode = 1 << 0 // EV over IPv6 flow label + UDP source port
	EVFmtSRv6 EVFmtMode = 1 << 1 // SRv6 (+ optional SRH) uSID addresses
	EVFmtUDP  EVFmtMode = 1 << 2 // EV in the UDP source port only
)

// maxBits is the widest expanded EV the mode carries (CTL-FMT-3).
func (m EVFmtMode) maxBits() int {
	switch m {
	case EVFmtSTEV:
		return 32
	case EVFmtUDP:
		return 16
	case EVFmtSRv6:
		return 8 * EVBytes
	}
	return 0
}

func (m EVFmtMode) String() string {
	switch m {
	case EVFmtSTEV:
		return "STEV"
	case EVFmtSRv6:
		return "SRV6"
	case EVFmtUDP:
		return "UDP"
	}
	return fmt.Sprintf("EVFmtMode(%#x)", uint32(m))
}

// EVGenMode is enum mrc_ctl_ev_mode: where an EV profile's EVs come from.
type EVGenMode uint32

// EV modes.
const (
	EVModeAuto      EVGenMode = 1 << 0 // the device chooses (e.g. ECMP); no EVs from the controller
	EVModeExplicit  EVGenMode = 1 << 1 // the controller supplies the EV array (REPLACE_EV)
	EVModeGenerated EVGenMode = 1 << 2 // the device generates the array from the fields
)

func (m EVGenMode) String() string {
	switch m {
	case EVModeAuto:
		return "AUTO"
	case EVModeExplicit:
		return "EXP"
	case EVModeGenerated:
		return "GEN"
	}
	return fmt.Sprintf("EVGenMode(%#x)", uint32(m))
}

// DeviceAttr is struct mrc_ctl_device_attr (CTL-DEV-1).
type DeviceAttr struct {
	ProtocolVersion uint32 // bitmap of MRC_CTL_PROTOCOL_VERSION_*
	// EV attributes.
	EVMaxFmtProfiles  uint32
	EVMaxProfiles     uint32
	EVMaxCount        uint32 // EVs across all profiles
	EVFreeCount       uint32 // EVs not yet reserved by a profile past INIT
	EVMaxCountProfile uint32
	EVCountAlign      uint32
	EVMaxWidth        uint32 // bits an EV profile's fields may total
	EVFmtModeMask     EVFmtMode
	EVModeMask        EVGenMode
	EVOpMaxEntries    uint32 // 0: no cap
	// CC attributes.
	CCMaxProfiles uint32
	CCAlgorithms  []string
	// PhyPortMask: bit n = port n (1-based) belongs to this function.
	PhyPortMask uint32
	OptAttr     OptAttr
}

// CtlProtocolVersion1 is MRC_CTL_PROTOCOL_VERSION_1.
const CtlProtocolVersion1 uint32 = 1 << 0

// DefaultDeviceAttr returns the reference device's attributes for ports
// NIC ports: every EV and format mode, 2048 EVs per profile (MaxEVs),
// alignment 1, NSCC, and every optional feature.
func DefaultDeviceAttr(ports int) DeviceAttr {
	ports = min(max(ports, 1), MaxPlanes)
	return DeviceAttr{
		ProtocolVersion:   CtlProtocolVersion1,
		EVMaxFmtProfiles:  16,
		EVMaxProfiles:     16,
		EVMaxCount:        16 * MaxEVs,
		EVMaxCountProfile: MaxEVs,
		EVCountAlign:      1,
		EVMaxWidth:        8 * EVBytes,
		EVFmtModeMask:     EVFmtSTEV | EVFmtSRv6 | EVFmtUDP,
		EVModeMask:        EVModeAuto | EVModeExplicit | EVModeGenerated,
		CCMaxProfiles:     16,
		CCAlgorithms:      []string{CCAlgNSCC},
		PhyPortMask:       (1<<ports - 1) << 1,
		OptAttr:           OptEVProfileModifyOnline | OptCCProfileModifyOnline | OptEVEvent | OptEVEventPreciseDropCnt | OptEPOpEVProbe,
	}
}

func (d *DeviceAttr) check() error {
	switch {
	case d.EVMaxCountProfile == 0 || d.EVMaxCountProfile > MaxEVs:
		return ctlErr(EINVAL, "ev_max_count_profile %d: want 1 to %d", d.EVMaxCountProfile, MaxEVs)
	case d.EVCountAlign == 0 || d.EVCountAlign > d.EVMaxCountProfile:
		return ctlErr(EINVAL, "ev_count_align %d: want 1 to ev_max_count_profile", d.EVCountAlign)
	case d.EVMaxWidth == 0 || d.EVMaxWidth > 8*EVBytes:
		return ctlErr(EINVAL, "ev_max_width %d: want 1 to %d", d.EVMaxWidth, 8*EVBytes)
	case d.PhyPortMask&1 != 0 || d.PhyPortMask == 0:
		return ctlErr(EINVAL, "phy_port_mask %#x: ports are 1-based, at least one", d.PhyPortMask)
	case d.EVMaxFmtProfiles > 1<<16 || d.EVMaxProfiles > 1<<16 || d.CCMaxProfiles > 1<<16:
		return ctlErr(EINVAL, "profile limits above 65536")
	}
	return nil
}

// CtlPolicy holds the controller's choices where mrc_ctl.h leaves the
// behaviour open.
type CtlPolicy struct {
	// RejectUnalignedCount fails an ev_count that is not a multiple of
	// ev_count_align with EINVAL; by default (false) the count is rounded
	// up to the alignment and a query returns the adjusted count (AMB-64).
	RejectUnalignedCount bool
	// GenOrder is the order a GEN profile enumerates its EVs (AMB-62).
	GenOrder GenOrder
}

// Controller holds one device's control-plane objects: its attributes,
// the administrative state of its ports, and its profiles. It is not safe
// for concurrent use.
type Controller struct {
	dev    DeviceAttr
	policy CtlPolicy
	admin  uint32 // bit n: port n administratively enabled
	fmts   map[uint64]*fmtProfile
	evs    map[uint64]*evProfileObj
	ccs    map[uint64]*ccProfileObj
}

// NewController returns a controller for a device with attributes dev,
// every port enabled and no profiles.
func NewController(dev DeviceAttr, policy CtlPolicy) (*Controller, error) {
	if err := dev.check(); err != nil {
		return nil, err
	}
	dev.CCAlgorithms = append([]string(nil), dev.CCAlgorithms...)
	return &Controller{dev: dev, policy: policy, admin: dev.PhyPortMask,
		fmts: map[uint64]*fmtProfile{}, evs: map[uint64]*evProfileObj{}, ccs: map[uint64]*ccProfileObj{}}, nil
}

// QueryDevice is mrc_ctl_query_device: the attributes, with ev_free_count
// the EVs no profile past INIT reserves (CTL-DEV-1).
func (c *Controller) QueryDevice() DeviceAttr {
	d := c.dev
	d.CCAlgorithms = append([]string(nil), d.CCAlgorithms...)
	used := uint32(0)
	for _, p := range c.evs {
		if p.state != ProfileInit {
			used += p.count
		}
	}
	d.EVFreeCount = d.EVMaxCount - min(used, d.EVMaxCount)
	return d
}

func (c *Controller) hasOpt(o OptAttr) bool { return c.dev.OptAttr&o != 0 }

func (c *Controller) checkPort(port uint8) error {
	if port == 0 || port > MaxPlanes || c.dev.PhyPortMask&(1<<port) == 0 {
		return ctlErr(EINVAL, "port %d is not in phy_port_mask %#x", port, c.dev.PhyPortMask)
	}
	return nil
}

// ModifyPort is mrc_ctl_modify_port with MRC_CTL_PORT_ADMIN_STATE: it
// enables or disables port (1-based) administratively (CTL-PORT-1).
func (c *Controller) ModifyPort(port uint8, enabled bool) error {
	if err := c.checkPort(port); err != nil {
		return err
	}
	if enabled {
		c.admin |= 1 << port
	} else {
		c.admin &^= 1 << port
	}
	return nil
}

// QueryPort is mrc_ctl_query_port: whether port is administratively
// enabled.
func (c *Controller) QueryPort(port uint8) (bool, error) {
	if err := c.checkPort(port); err != nil {
		return false, err
	}
	return c.admin&(1<<port) != 0, nil
}

// PortMask filters a port-status mask (bit n = port n up) by the
// administrative state: a disabled port is down, whatever its link says,
// for ibv_query_port and for every QP and port status update (CTL-PORT-2).
func (c *Controller) PortMask(link uint32) uint32 { return link & c.admin }

// phyPorts returns the device's ports in ascending order.
func (c *Controller) phyPorts() []uint8 {
	var ps []uint8
	for m := c.dev.PhyPortMask; m != 0; m &= m - 1 {
		ps = append(ps, uint8(bits.TrailingZeros32(m)))
	}
	return ps
}
