package statemachine

import (
	"errors"
	"fmt"
	"math"
	"net/netip"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Opcode is a work-request opcode; the values follow enum ibv_wr_opcode so
// that a verbs shim can pass them through.
type Opcode uint8

// Work-request opcodes. MRC supports only OpWrite and OpWriteImm; the others
// exist so that Post can reject them by name (REQ-OP-1).
const (
	OpWrite          Opcode = 0 // IBV_WR_RDMA_WRITE
	OpWriteImm       Opcode = 1 // IBV_WR_RDMA_WRITE_WITH_IMM
	OpSend           Opcode = 2 // IBV_WR_SEND: not in MRC
	OpSendImm        Opcode = 3 // IBV_WR_SEND_WITH_IMM: not in MRC
	OpRead           Opcode = 4 // IBV_WR_RDMA_READ: not in MRC
	OpAtomicCmpSwap  Opcode = 5 // IBV_WR_ATOMIC_CMP_AND_SWP: not in MRC
	OpAtomicFetchAdd Opcode = 6 // IBV_WR_ATOMIC_FETCH_AND_ADD: not in MRC
	// OpRecvWriteImm marks a receive completion of an incoming WRITE_WITH_IMM.
	OpRecvWriteImm Opcode = 0x80
)

func (o Opcode) String() string {
	switch o {
	case OpWrite:
		return "RDMA_WRITE"
	case OpWriteImm:
		return "RDMA_WRITE_WITH_IMM"
	case OpSend:
		return "SEND"
	case OpSendImm:
		return "SEND_WITH_IMM"
	case OpRead:
		return "RDMA_READ"
	case OpAtomicCmpSwap:
		return "ATOMIC_CMP_AND_SWP"
	case OpAtomicFetchAdd:
		return "ATOMIC_FETCH_AND_ADD"
	case OpRecvWriteImm:
		return "RECV_RDMA_WITH_IMM"
	}
	return fmt.Sprintf("Opcode(%d)", uint8(o))
}

// WorkRequest is one send work request (ibv_send_wr with one SGE).
type WorkRequest struct {
	WRID   uint64
	Opcode Opcode
	// RemoteVA and RKey name the target buffer (RETH).
	RemoteVA uint64
	RKey     uint32
	// Data is the local source buffer; its length is the message length.
	// The QP keeps a reference until the WR completes and never writes it.
	Data []byte
	// Imm is the immediate data of OpWriteImm.
	Imm uint32
	// Unsignaled suppresses the success completion (IBV_SEND_SIGNALED
	// clear on a QP without sq_sig_all). Error completions are always
	// written (CMP-SND-3).
	Unsignaled bool
	// Solicited is IBV_SEND_SOLICITED: on an OpWriteImm the last packet
	// carries the BTH se flag, so the responder's receive completion is a
	// solicited event (WIRE-BTH-10, CTL-CQ-2); other opcodes ignore it.
	Solicited bool
}

// MaxMessageLen is the longest message a WR may carry (2^31 bytes, as in
// IBTA; RETH DMALength is 32 bits).
const MaxMessageLen = 1 << 31

// Addressing is everything the QP writes into the Ethernet, IP and UDP
// headers other than the EV (the IBV_QP_AV of the RTR transition). SRv6
// encapsulation is the caller's job.
type Addressing struct {
	SrcMAC, DstMAC [6]byte
	// SrcIP and DstIP are both IPv4 or both IPv6.
	SrcIP, DstIP netip.Addr
	// HopLimit is the IPv4 TTL or IPv6 hop limit; 0 means 64.
	HopLimit uint8
	// PKey is the QP's partition key; 0 means 0xFFFF (WIRE-BTH-12).
	PKey uint16
	// EVMode says how the EV reaches the wire (wire.SetEV).
	EVMode wire.EVMode
	// SGIDIndex selects the source GID in Config.Device.GIDs, when the Node has a
	// GID table (QP-ST-8).
	SGIDIndex int
}

// EVEntry is one EV of an EV profile with the 1-based NIC port (plane + 1)
// it leaves on, as struct mrc_ctl_ev.
type EVEntry struct {
	Value uint32
	Port  uint8
}

// EVProfile is an explicit EV profile as a controller programs it
// (mrc_ctl_ev_profile_attr). Each QP draws its active set from it at random,
// ActivePerPlane per plane; the rest of each plane's EVs are that plane's
// backup set (EV-SET-1, EV-SET-2).
type EVProfile struct {
	ID  uint64
	EVs []EVEntry
	// ActivePerPlane is the number of active EVs per plane; 0 means half
	// of each plane's EVs (at least one).
	ActivePerPlane int
	// MinActive is ev_min_active (EV-SET-6).
	MinActive int
	// ProbeInterval is the period of reliability probes on ASSUMED_BAD
	// EVs; 0 means one base timeout of the QP (EV-PRB-2).
	ProbeInterval Time
	// ProbeSuccesses is probe_success_threshold: consecutive probes
	// answered with m = NONE that restore an ASSUMED_BAD EV, at most 7; 0
	// means 1 (EV-ST-7).
	ProbeSuccesses int
	// EventMask is ev_event_mask: the EV states whose entry is reported
	// on an EV event CQ (EV-ST-12); 0 reports none.
	EventMask EVEventMask
	// SRv6, when set, holds each EV's SRv6 path (aligned with EVs): an
	// IPv6 QP then sends every packet on the EV encapsulated in an outer
	// IPv6 header to Addr, with a one-segment SRH when HasSegment
	// (CTL-EVX-6); the EV value stays the key feedback reflects.
	SRv6 []SRv6Path
}

// SRv6Path is an SRv6 EV's expansion: the outer destination (an SRv6
// uSID address) and, for SRv6+SRH formats, the SRH's one segment.
type SRv6Path struct {
	Addr       [16]byte
	Segment    [16]byte
	HasSegment bool
}

// MaxPlanes is the largest number of planes (NIC ports) a profile may use;
// port-status masks are 32 bits with bit n for port n, bit 0 unused
// (WIRE-ERTH-2), so ports run from 1 to 31.
const MaxPlanes = 31

// MaxEVs bounds an EV profile: EV indices fit in 11 bits, which is what
// the requester's per-PSN record reserves for them.
const MaxEVs = 2048

// GenerateEVProfile returns a profile with perPlane EVs on each of planes
// planes (perPlane ≤ 2048). EV values are distinct, drawn from a PCG seeded
// with seed, fit in 16 bits so that they survive IPv4 and UDP mode
// (WIRE-EV-3), and carry the plane in bits 15-11 so that traces are easy to
// read.
func GenerateEVProfile(id uint64, planes, perPlane int, seed uint64) EVProfile {
	p := EVProfile{ID: id}
	if planes < 1 || planes > MaxPlanes || perPlane < 1 || planes*perPlane > MaxEVs {
		return p
	}
	r := newRNG(seed)
	seen := make(map[uint32]bool, planes*perPlane)
	for pl := 0; pl < planes; pl++ {
		for i := 0; i < perPlane; {
			v := uint32(pl)<<11 | uint32(r.next()&0x7FF)
			if seen[v] {
				continue
			}
			seen[v] = true
			p.EVs = append(p.EVs, EVEntry{Value: v, Port: uint8(pl + 1)})
			i++
		}
	}
	return p
}

// CC algorithm names (mrc_ctl_cc_profile_attr.cc_algorithm).
const (
	CCAlgNSCC = "uet-1.0-nscc"
	// CCAlgNone (NULL) disables congestion control (CC-GEN-1): the window
	// is limited by the MPR window only.
	CCAlgNone = ""
)

// NSCCConfig mirrors struct mrc_ctl_cc_nscc_cfg (CC-PAR-1). The meaning this
// project gives each field is documented on nscc and in
// spec/21-statemachine-decisions.md.
type NSCCConfig struct {
	DisableQA             bool
	AdjustBytesThreshold  uint32 // bytes
	AdjustPeriodThreshold uint32 // ns
	BaseRTT               uint32 // ns
	Eta                   float32
	FI                    float32
	FIScale               float32
	Gamma                 float32
	MaxMDJump             float32
	MaxCwnd               uint32 // bytes
	QAGate                uint8
	QAThreshold           uint32 // ns
	TargetDelay           uint32 // ns
}

// DefaultNSCC returns the project's default NSCC parameters. Gamma,
// MaxMDJump, FI and a max_cwnd of 1.5 BDP (800 Gb/s × 10 µs) are the UET
// 1.0.3 reference values (CC-PAR-2); the rest are project choices.
func DefaultNSCC() NSCCConfig {
	return NSCCConfig{
		AdjustBytesThreshold:  32 * 1024,
		AdjustPeriodThreshold: 10_000,
		BaseRTT:               10_000,
		Eta:                   256,
		FI:                    5,
		FIScale:               0.5,
		Gamma:                 0.8,
		MaxMDJump:             0.5,
		MaxCwnd:               1_500_000,
		QAGate:                3,
		QAThreshold:           40_000,
		TargetDelay:           5_000,
	}
}

// CCProfile is a congestion-control profile (mrc_ctl_cc_profile_attr).
type CCProfile struct {
	ID        uint64
	Algorithm string // CCAlgNSCC or CCAlgNone
	NSCC      NSCCConfig
}

// AckPolicy is the responder's acknowledgement policy (RSP-SACK-5).
type AckPolicy struct {
	// Coalesce is ack_coalesce: the in-order data packets one SACK may
	// cover; 0 or 1 acknowledges every packet. CE-marked, out-of-order,
	// duplicate, ack_req, rtx and last-of-message packets and probes are
	// always acknowledged at once.
	Coalesce int
	// Delay bounds how long a coalesced SACK is held; 0 means 2 µs.
	Delay Time
	// AlwaysSkipAfter is always_skip_threshold: m = ALWAYS_SKIP after this
	// many consecutive CE-marked arrivals on one EV (RSP-SACK-4); 0 means
	// 16, a negative value never answers ALWAYS_SKIP.
	AlwaysSkipAfter int
}

// MemoryRegion is a registered region the peer may write (RSP-RCV-2).
type MemoryRegion struct {
	RKey uint32
	VA   uint64
	Len  uint64
}

// Config is what one NIC fixes for every QP a Node makes: the wire
// profile, the device, the controller's ONLINE profiles, the memory peers
// may write, the implementation's policies and, for tests of checkers only,
// seeded faults. What differs between QPs is a QPConfig.
type Config struct {
	// Profile holds the wire choices (DSCP values, timestamp units,
	// WriteIMM-limit signalling); nil means the default (spec.OrDefault).
	Profile *spec.Profile
	// Device is the device's limits, capabilities and GID table.
	Device Device
	// EVProfiles and CCProfiles are the profiles the controller has put
	// ONLINE; the INIT transition picks one of each by ID.
	EVProfiles []EVProfile
	CCProfiles []CCProfile
	// MRs are the regions the peer may write; with none, every address is
	// writable (the abstract memory of tests and simulations).
	MRs []MemoryRegion
	// Policy holds the choices the specification leaves to an
	// implementation.
	Policy Policy
	// Test holds knobs for tests of checkers; zero in any real use.
	Test TestKnobs
}

// Device is what struct mrc_device_attr and the verbs device fix.
type Device struct {
	// MaxWIMM, MaxWIMMDest, MaxMPR and MPRResolution are
	// wimm_attr.max_wimm, wimm_attr.max_wimm_dest, mpr_attr.max_mpr and
	// mpr_attr.mpr_resolution; 0 means 1024, 1024, 255 and 1.
	MaxWIMM       int
	MaxWIMMDest   int
	MaxMPR        int
	MPRResolution int
	// CapMissing lists the mrc_device_cap features the device lacks; zero
	// is a device with all three. Without DevCapTrimNACK the responder
	// sends no trim NACKs (as NoTrimNACK); without DevCapDynamicMPR a QP
	// cannot enable dynamic MPR; without DevCapSvcTime no QP uses service
	// time (CTL-DEV-3, CTL-SVC-1).
	CapMissing DeviceCap
	// NoTrimNACK: this responder cannot send trim NACKs and silently
	// discards trimmed packets (RSP-NACK-2).
	NoTrimNACK bool
	// GIDs is the device's verbs GID table; when set, a QP's source
	// address is its Addr.SGIDIndex's entry, which must be RoCEv2
	// (QP-ST-8).
	GIDs []GID
}

// Policy holds what the specification leaves to an implementation: how
// eagerly losses are inferred and paths retired, and how the responder
// acknowledges.
type Policy struct {
	// ReorderThreshold is reorder_guard: a PSN counts as lost once a PSN
	// this many packets after it is acknowledged; 0 means the congestion
	// window in packets (LR-RTX-4).
	ReorderThreshold int
	// KeepEVOnInferredLoss: a packet inferred lost from SACKs (LR-RTX-4)
	// is retransmitted but leaves the EV it was sent on alone, so only
	// timeouts retire EVs. By default (false) an inferred loss of an
	// untrimmed packet retires its EV as a timeout does (EV-SM-5, AMB-43).
	KeepEVOnInferredLoss bool
	// KeepAvoidAfterStall: a queued PSN never goes on the EV its NACK or
	// timeout named, however long it waits (EV-ST-13 read as never
	// relaxed). With that EV the only one that works, the stall timer then
	// spends the retry budget and the QP ends in ERROR, or with exp_cnt
	// infinite waits for good (fabric finding F4). By default (false) the
	// stall timer's first expiry lets the PSN take any usable EV (LR-SM-3,
	// AMB-44).
	KeepAvoidAfterStall bool
	// Ack is the responder's acknowledgement policy.
	Ack AckPolicy
}

// TestKnobs change the reference for tests of checkers; any real use
// leaves them zero.
type TestKnobs struct {
	// Faults seeds known bugs (NewFault): each overrides one rule of
	// rules.go, and a fault of another package (peer) overrides none here.
	Faults Faults
	// MPRUnit is the number of PSNs in one MPR unit: 0 means 128, the
	// unit of MPR-WIN-2. A model checker sets it to 1 so that MPR windows
	// of a few PSNs (as in the TLA+ model) are reachable with a few
	// packets.
	MPRUnit int
}

// QPConfig is what one QP is created with (ibv_qp_init_attr and
// mrc_qp_init_attr) and its address vector.
type QPConfig struct {
	// QPN is the local QP number (24 bits; 0-2 are reserved).
	QPN uint32
	// Seed seeds the PCG behind EV choice and rotation order.
	Seed uint64
	// Addr is the address vector (IBV_QP_AV); the RTR transition needs
	// the AV attribute bit, whose value this is.
	Addr Addressing
	// MaxSendWR and MaxRecvWR are the queue depths (ibv_qp_cap); 0 means
	// 16 each.
	MaxSendWR int
	MaxRecvWR int
	// ProtocolVersion is mrc_qp_init_attr.protocol_version: one version
	// bit, or 0 for the default. ProtocolVersion1 (MRC_PROTOCOL_VERSION_1),
	// the wire format of spec/, is the only one (QP-ATTR-4).
	ProtocolVersion uint32
	// Timestamps adds a TSETH to every data packet (REQ-HDR-1).
	Timestamps bool
}

// DefaultConfig returns a working node configuration: 8 planes with 32 EVs
// each (16 active and 16 backup per plane: 128 active, 256 in all) drawn
// from seed, NSCC with DefaultNSCC, and profile IDs 1.
func DefaultConfig(seed uint64) Config {
	p := GenerateEVProfile(1, 8, 32, seed^0x5eed)
	p.ActivePerPlane = 16
	p.MinActive = 8
	return Config{
		EVProfiles: []EVProfile{p},
		CCProfiles: []CCProfile{{ID: 1, Algorithm: CCAlgNSCC, NSCC: DefaultNSCC()}},
	}
}

// DefaultQPConfig returns a QP numbered qpn, seeded with seed, sending from
// 10.0.0.1 to 10.0.0.2.
func DefaultQPConfig(qpn uint32, seed uint64) QPConfig {
	return QPConfig{QPN: qpn, Seed: seed, Addr: Addressing{
		SrcIP: netip.AddrFrom4([4]byte{10, 0, 0, 1}),
		DstIP: netip.AddrFrom4([4]byte{10, 0, 0, 2}),
	}}
}

// ConfigError reports a bad Config field.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return "statemachine: config " + e.Field + ": " + e.Reason
}

func cfgErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// DeviceCap is the cap bitmap of struct mrc_device_attr (is enum
// mrc_device_cap).
type DeviceCap uint32

// Device capabilities.
const (
	DevCapTrimNACK   DeviceCap = 1 << 0 // MRC_DEVICE_CAP_TRIM_NACK
	DevCapDynamicMPR DeviceCap = 1 << 1 // MRC_DEVICE_CAP_DYNAMIC_MPR
	DevCapSvcTime    DeviceCap = 1 << 2 // MRC_DEVICE_CAP_SVC_TIME
)

// ProtocolVersion1 is MRC_PROTOCOL_VERSION_1 (bit 0 of protocol_version).
const ProtocolVersion1 uint32 = 1 << 0

// normalized fills defaults into a copy of c and checks it.
func (c Config) normalized() (Config, error) {
	c.Profile = spec.OrDefault(c.Profile)
	if err := c.Profile.Validate(); err != nil {
		return c, &ConfigError{Field: "Profile", Reason: err.Error()}
	}
	if err := c.Device.normalize(); err != nil {
		return c, err
	}
	if err := c.Policy.normalize(); err != nil {
		return c, err
	}
	if c.Test.MPRUnit == 0 {
		c.Test.MPRUnit = 128
	}
	if c.Test.MPRUnit < 1 || c.Test.MPRUnit > 128 {
		return c, cfgErr("Test.MPRUnit", "%d: want [1, 128]", c.Test.MPRUnit)
	}
	for i, m := range c.MRs {
		if m.Len == 0 || m.VA+m.Len < m.VA {
			return c, cfgErr(fmt.Sprintf("MRs[%d]", i), "empty or wrapping region va=%#x len=%d", m.VA, m.Len)
		}
	}
	if len(c.EVProfiles) == 0 || len(c.CCProfiles) == 0 {
		return c, cfgErr("EVProfiles/CCProfiles", "at least one EV profile and one CC profile are needed")
	}
	for i := range c.EVProfiles {
		if _, err := buildEVSet(&c.EVProfiles[i]); err != nil {
			return c, err
		}
	}
	for i := range c.CCProfiles {
		if err := checkCC(&c.CCProfiles[i]); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (d *Device) normalize() error {
	if d.CapMissing&^(DevCapTrimNACK|DevCapDynamicMPR|DevCapSvcTime) != 0 {
		return cfgErr("Device.CapMissing", "%#x: only MRC_DEVICE_CAP_* bits", uint32(d.CapMissing))
	}
	if d.CapMissing&DevCapTrimNACK != 0 {
		d.NoTrimNACK = true // CTL-DEV-3
	}
	if d.MPRResolution == 0 {
		d.MPRResolution = 1
	}
	if d.MPRResolution < 1 || d.MPRResolution > 255 {
		return cfgErr("Device.MPRResolution", "%d: want [1, 255]", d.MPRResolution)
	}
	if d.MaxWIMM == 0 {
		d.MaxWIMM = 1024
	}
	if d.MaxWIMMDest == 0 {
		d.MaxWIMMDest = 1024
	}
	if d.MaxWIMM < 1 || d.MaxWIMM > math.MaxUint16 || d.MaxWIMMDest < 1 || d.MaxWIMMDest > math.MaxUint16 {
		return cfgErr("Device.MaxWIMM/MaxWIMMDest", "%d/%d: want [1, 65535]", d.MaxWIMM, d.MaxWIMMDest)
	}
	if d.MaxMPR == 0 {
		d.MaxMPR = 255
	}
	if d.MaxMPR < 1 || d.MaxMPR > 255 {
		return cfgErr("Device.MaxMPR", "%d: want [1, 255]", d.MaxMPR)
	}
	return nil
}

func (p *Policy) normalize() error {
	if p.ReorderThreshold < 0 || p.ReorderThreshold > 1<<15 {
		return cfgErr("Policy.ReorderThreshold", "%d: want [0, 32768]", p.ReorderThreshold)
	}
	a := &p.Ack
	if a.Coalesce <= 0 {
		a.Coalesce = 1
	}
	if a.Delay == 0 {
		a.Delay = 2 * Microsecond
	}
	if a.AlwaysSkipAfter == 0 {
		a.AlwaysSkipAfter = 16
	}
	if a.Delay < 0 || a.Coalesce > 1<<15 || a.AlwaysSkipAfter > 0xFFFF {
		return cfgErr("Policy.Ack", "negative delay, coalescing above 32768 or always-skip threshold above 65535")
	}
	return nil
}

// normalized fills defaults into a copy of c and checks what needs no
// Node; NewQP checks the address vector against the Node.
func (c QPConfig) normalized() (QPConfig, error) {
	if c.QPN > wire.PSNMask || c.QPN <= wire.EndpointQPN {
		return c, cfgErr("QPN", "%#x is not a usable 24-bit QP number (0-2 are reserved, WIRE-BTH-8)", c.QPN)
	}
	switch v := c.ProtocolVersion; {
	case v == 0:
		c.ProtocolVersion = ProtocolVersion1
	case v&(v-1) != 0:
		return c, cfgErr("ProtocolVersion", "%#x requests more than one version (QP-ATTR-4)", v)
	case v != ProtocolVersion1:
		return c, cfgErr("ProtocolVersion", "%#x is not a version this implementation speaks (only MRC_PROTOCOL_VERSION_1)", v)
	}
	if c.MaxSendWR == 0 {
		c.MaxSendWR = 16
	}
	if c.MaxSendWR < 1 || c.MaxSendWR > 1<<15 {
		return c, cfgErr("MaxSendWR", "%d: want [1, 32768]", c.MaxSendWR)
	}
	if c.MaxRecvWR == 0 {
		c.MaxRecvWR = 16
	}
	if c.MaxRecvWR < 1 || c.MaxRecvWR > 1<<15 {
		return c, cfgErr("MaxRecvWR", "%d: want [1, 32768]", c.MaxRecvWR)
	}
	if c.Addr.EVMode > wire.EVModeSRv6 {
		return c, cfgErr("Addr.EVMode", "unknown mode %d", c.Addr.EVMode)
	}
	return c, nil
}

func checkCC(p *CCProfile) error {
	f := fmt.Sprintf("CCProfiles[id=%d]", p.ID)
	switch p.Algorithm {
	case CCAlgNone:
		return nil
	case CCAlgNSCC:
	default:
		return cfgErr(f+".Algorithm", "%q: want %q or \"\" (none)", p.Algorithm, CCAlgNSCC)
	}
	n := &p.NSCC
	bad := func(name string, v float32, lo, hi float64) error {
		x := float64(v)
		if math.IsNaN(x) || x < lo || x > hi {
			return cfgErr(f+".NSCC."+name, "%v outside [%v, %v]", v, lo, hi)
		}
		return nil
	}
	for _, e := range []error{
		bad("Eta", n.Eta, 0, 1<<20), bad("FI", n.FI, 0, 1<<10), bad("FIScale", n.FIScale, 0, 1<<10),
		bad("Gamma", n.Gamma, 0, 1), bad("MaxMDJump", n.MaxMDJump, 0.01, 1),
	} {
		if e != nil {
			return e
		}
	}
	if n.BaseRTT == 0 || n.TargetDelay == 0 || n.MaxCwnd == 0 || n.AdjustPeriodThreshold == 0 {
		return cfgErr(f+".NSCC", "base_rtt, target_delay, max_cwnd and adjust_period_threshold must be non-zero")
	}
	if n.QAGate > 16 {
		return cfgErr(f+".NSCC.QAGate", "%d: want [0, 16]", n.QAGate)
	}
	return nil
}

// Errors returned by Post and Modify; test with errors.Is.
var (
	ErrUnsupportedOpcode = errors.New("statemachine: MRC supports only RDMA WRITE and RDMA WRITE WITH IMM")
	ErrMessageTooLong    = errors.New("statemachine: message longer than 2^31 bytes")
	ErrSendQueueFull     = errors.New("statemachine: send queue full")
	ErrQPState           = errors.New("statemachine: operation not allowed in the QP's current state")
	ErrInvalidTransition = errors.New("statemachine: invalid QP state transition")
	ErrMissingAttr       = errors.New("statemachine: required attribute missing")
	ErrInvalidAttr       = errors.New("statemachine: invalid attribute value")
	ErrUnknownProfile    = errors.New("statemachine: unknown EV or CC profile ID")
	ErrUnknownEV         = errors.New("statemachine: EV not in the QP's EV table")
	ErrTooManyRequests   = errors.New("statemachine: too many outstanding endpoint requests")
	ErrRecvQueueFull     = errors.New("statemachine: receive queue full")
)

// OpError wraps a Post error with the work request it refers to.
type OpError struct {
	WRID   uint64
	Opcode Opcode
	Err    error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("statemachine: post WR %d (%s): %v", e.WRID, e.Opcode, e.Err)
}

// Unwrap returns the underlying error.
func (e *OpError) Unwrap() error { return e.Err }
