package modelcheck

import (
	"fmt"
	"net/netip"
	"slices"

	sm "github.com/openmrc/mrc/statemachine"
)

// Msg is one send work request a QP posts.
type Msg struct {
	Packets int  // packets of PathMTU (256) bytes each, at least 1
	Imm     bool // RDMA WRITE WITH IMM; otherwise RDMA WRITE
	// Unsignaled suppresses the WR's success completion (CMP-SND-3).
	Unsignaled bool
	// BadAddress targets memory the responder has not registered: when a
	// WR has it, the responder registers only the other WRs' buffers
	// (Config.MRs, RSP-RCV-2).
	BadAddress bool
}

// Bounds are the budgets that keep the state space finite. Each is a
// counter in the state: an action is enabled only while its counter is
// below its bound.
type Bounds struct {
	Drops, Dups, Trims, CEs int // network faults of each kind
	// NetFaults bounds drops+dups+trims+CE marks together; 0 means no
	// bound beyond the per-kind ones.
	NetFaults int
	// MaxCopies bounds the copies of one packet the network holds through
	// duplication; 0 means 2.
	MaxCopies  int
	PathFails  int // EV paths that fail for good (black holes)
	Timers     int // timer firings (time jumps to the next deadline)
	Ticks      int // time advances that stop short of the next deadline
	PortFlaps  int // control plane: a plane (port) goes down or comes back up
	Controller int // control plane: MODIFY_EV_STATE on one EV
	Modify     int // the application moves a QP to ERROR (mrc_modify_qp)
	Resource   int // a responder's resource condition changes (RSP-NACK-3)
	DynMPR     int // a responder changes its dynamic MPR (MPR-DYN-2); needs Config.DynamicMPR
	Penalty    int // a responder's host backpressure (rcv_cwnd_pen, restore) changes (CC-RSP-3)
	Injects    int // packets the adversarial requester sends (Config.Adversary)
	Drains     int // the application moves a sending QP from RTS to SQD (sqd.go)
	// MaxBag is a state constraint: states with more packets in flight are
	// checked but not expanded; 0 means no constraint.
	MaxBag int
}

// Config is one model-checking configuration: two QPs, A (0x11) and B
// (0x22), joined by a network that is a bag of packets.
type Config struct {
	Name string
	// Planes, EVsPerPlane and BackupsPerPlane shape the EV profile both QPs
	// use: EV (plane+1)<<8 | k, EVsPerPlane of each plane active.
	Planes, EVsPerPlane, BackupsPerPlane int
	// Msgs are the WRs A (index 0) and B (index 1) post, in order; B's
	// list is empty for one-way traffic.
	Msgs [2][]Msg
	// PostUpfront posts every WR in the initial state instead of making
	// each post an action.
	PostUpfront bool
	// MPR is the MPR window in PSNs of both QPs, both roles
	// (statemachine.Config.Test.MPRUnit = 1, Attr.MPR = Attr.MPRDest = MPR).
	MPR int
	// LinearCnt and ExpCnt are the retry attribute; the QP fails when its
	// retry counter exceeds their sum (ExpCnt 25: never).
	LinearCnt, ExpCnt int
	// TimeoutAttr is the timeout attribute t: T = 1.024 µs × 2^t.
	TimeoutAttr          uint8
	MaxWIMM, MaxWIMMDest int
	MinActive            int
	ProbeSuccesses       int
	// AlwaysSkipAfter is always_skip_threshold; 0 means never ALWAYS_SKIP.
	AlwaysSkipAfter  int
	ReorderThreshold int
	// FailableEVs are the EV values whose path may fail (PathFails); nil
	// means every EV.
	FailableEVs []uint32
	// SilentTimeouts lets a timer fire only when no copy of a PSN that
	// expires, and no answer about it, is in flight (as the TLA+ model with
	// SpuriousTimeouts = FALSE). Off, the network may delay packets beyond
	// any timeout.
	SilentTimeouts bool
	// Faults seeds statemachine bugs (statemachine.Config.Test.Faults).
	Faults sm.Faults
	// Seed is added to each QP's random seed (its QPN by default): the EV
	// rotation order and reverse-EV picks come from it.
	Seed uint64
	// only, when set, makes the search stop only for violations of that
	// invariant (tests: what one check catches on its own).
	only string
	// evMask, when set, replaces the ev_event_mask of the QPs' EV profile
	// (tests: a mask the check does not expect must fail it).
	evMask sm.EVEventMask
	// NSCC turns congestion control on: statemachine.DefaultNSCC with a
	// base RTT and target delay of one timer quantum and max_cwnd of
	// MaxCwnd bytes (0: two packets).
	NSCC    bool
	MaxCwnd int
	// DynamicMPR enables dynamic MPR on both QPs (CapDynamicMPR, MPR-DYN-1).
	DynamicMPR bool
	// RecvWRs is how many receive WRs each QP posts: 0 means one per
	// WriteIMM its peer sends, −1 none (WIMM-RSP-3).
	RecvWRs int
	// Coalesce is the responders' ack_coalesce (RSP-SACK-5); Timestamps
	// puts a TSETH in every data packet (REQ-HDR-1).
	Coalesce   int
	Timestamps bool
	// NoTrimNACK: the responders cannot NACK trims (statemachine.Config.Device.NoTrimNACK), and
	// the requesters know it (CapTrimNACKDestUnsupported): data goes out
	// as DSCP_NO_TRIM and the network cannot trim it (RSP-NACK-2,
	// WIRE-DSCP-5).
	NoTrimNACK bool
	// Adversary replaces A's requester by an adversary that sends any of
	// the data packets of A's WRs (PSN 0 … n−1, first transmissions made
	// by a real requester with the largest window), in any order, any
	// number of times within Bounds.Injects, in or out of B's window; what
	// B answers is consumed. It checks B's responder on its own.
	Adversary bool
	// AdversaryMoves adds moves to the adversary's first transmissions.
	AdversaryMoves AdvMoves
	// SharedNode makes both QPs on one statemachine.Node (one NIC with two
	// GIDs, a QP on each, looped back): they share its EV profile, the
	// controller's MODIFY_EV_STATE is the profile operation
	// (Node.SetProfileEVState) reaching both QPs at once, and each keeps its
	// own path state (EV-ST-11).
	SharedNode bool
	// RTRStart leaves B in RTR at the start, for the application to move
	// to RTS at any moment (commest.go); B posts no WRs.
	RTRStart bool
	// StartPSN is both QPs' first PSN (SQ_PSN = RQ_PSN): near 2^24 the
	// traffic wraps (WIRE-BTH-4, RSP-RCV-5).
	StartPSN uint32
	Bounds   Bounds
	// MaxDistinct aborts the search with an error beyond this many
	// distinct states; 0 means 4 000 000.
	MaxDistinct int
}

// AdvMoves are the adversarial requester's moves beyond the first
// transmissions of A's WRs (Config.Adversary), one bit each.
type AdvMoves uint8

const (
	// AdvResend sends each PSN again as a retransmission: the BTH rtx flag,
	// the retransmit DSCP class, on the next EV of the profile (RSP-DUP-3,
	// EV-SM-6).
	AdvResend AdvMoves = 1 << iota
	// AdvForge sends PSN 0's packet under PSNs of no WR, each far out of
	// the window in its own way: the first PSN − 1 (the initial cumulative
	// ACK), the first PSN + 65 (beyond the window, the tracking ring's alias
	// of PSN 1) and the first PSN − 1 + 2^23 (half the PSN space from the
	// initial cumulative ACK: a duplicate by RSP-RCV-6).
	AdvForge
	// AdvTrim sends each PSN's first transmission trimmed as well, once as
	// a mid-fabric switch trims it (DSCP_TRIMMED) and once as the last hop
	// does (DSCP_TRIMMED_LASTHOP), its payload removed: new, duplicate or
	// out of the window, as the responder's state makes it (RSP-NACK-1,
	// RSP-DUP-2, RSP-SM-3).
	AdvTrim
	// AdvCE sends each PSN's first transmission CE-marked as well
	// (RSP-SACK-3, RSP-SACK-5).
	AdvCE
	// AdvForgeIMM sends the WriteIMM's packet (the last PSN of A's WRs)
	// under the PSNs of AdvForge, and the same WriteIMM carrying an RQMSN
	// one beyond its own; and the packet of the PSN before it as a
	// WriteIMM (its own bytes and address) carrying the WriteIMM's RQMSN
	// (WIMM-SM-1, WIMM-RSP-1, WIMM-RSP-2).
	AdvForgeIMM
)

// forgedPSNs are AdvForge's PSNs, relative to the first PSN.
var forgedPSNs = [...]int{-1, 65, 1<<23 - 1}

// maxPSNs bounds the PSNs of one direction (the ghost state keeps bitsets).
const maxPSNs = 16

const (
	qpnA    = 0x11
	qpnB    = 0x22
	baseVA  = 0x10000
	pathMTU = 256
)

var qpns = [2]uint32{qpnA, qpnB}

var side = [2]string{"A", "B"}

func (c *Config) validate() error {
	if c.Planes < 1 || c.Planes > 4 || c.EVsPerPlane < 1 || c.BackupsPerPlane < 0 || c.Planes*(c.EVsPerPlane+c.BackupsPerPlane) < 2 {
		return fmt.Errorf("modelcheck: %s: want 1-4 planes, at least one active EV per plane and two EVs in all", c.Name)
	}
	for s := range c.Msgs {
		n := 0
		for _, m := range c.Msgs[s] {
			if m.Packets < 1 {
				return fmt.Errorf("modelcheck: %s: a WR needs at least one packet", c.Name)
			}
			n += m.Packets
		}
		if n > maxPSNs {
			return fmt.Errorf("modelcheck: %s: %d PSNs from %s, at most %d", c.Name, n, side[s], maxPSNs)
		}
	}
	if c.MPR < 1 || c.MPR > 64 {
		return fmt.Errorf("modelcheck: %s: MPR %d outside [1, 64]", c.Name, c.MPR)
	}
	if c.Planes*(c.EVsPerPlane+c.BackupsPerPlane) > 8 {
		return fmt.Errorf("modelcheck: %s: at most 8 EVs", c.Name)
	}
	if c.RTRStart && len(c.Msgs[1]) > 0 {
		return fmt.Errorf("modelcheck: %s: RTRStart: B in RTR posts no WRs", c.Name)
	}
	if c.AdversaryMoves != 0 && !c.Adversary {
		return fmt.Errorf("modelcheck: %s: AdversaryMoves needs Adversary", c.Name)
	}
	if n := len(c.Msgs[0]); c.AdversaryMoves&AdvForgeIMM != 0 && (n < 2 || !c.Msgs[0][n-1].Imm || c.Msgs[0][n-1].Packets != 1) {
		return fmt.Errorf("modelcheck: %s: AdvForgeIMM needs A's last WR a 1-packet WriteIMM after another WR", c.Name)
	}
	if c.Bounds.DynMPR > 0 && !c.DynamicMPR {
		return fmt.Errorf("modelcheck: %s: Bounds.DynMPR needs DynamicMPR", c.Name)
	}
	if c.SharedNode && slices.ContainsFunc(append(slices.Clone(c.Msgs[0]), c.Msgs[1]...), func(m Msg) bool { return m.BadAddress }) {
		return fmt.Errorf("modelcheck: %s: SharedNode registers all memory: no BadAddress WRs", c.Name)
	}
	return nil
}

func (c *Config) evValues() []uint32 {
	var v []uint32
	for p := 0; p < c.Planes; p++ {
		for k := 0; k < c.EVsPerPlane+c.BackupsPerPlane; k++ {
			v = append(v, uint32(p+1)<<8|uint32(k))
		}
	}
	return v
}

func (c *Config) smConfig(s int) (sm.Config, sm.QPConfig) {
	prof := sm.EVProfile{ID: 1, ActivePerPlane: c.EVsPerPlane, MinActive: c.MinActive, ProbeSuccesses: c.ProbeSuccesses,
		EventMask: sm.EVEventGood | sm.EVEventAssumedBad} // checked by EVEventsReported
	if c.evMask != 0 {
		prof.EventMask = c.evMask
	}
	for _, v := range c.evValues() {
		prof.EVs = append(prof.EVs, sm.EVEntry{Value: v, Port: uint8(v >> 8)})
	}
	a, b := netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2})
	if s == 1 {
		a, b = b, a
	}
	imm := 0
	for _, m := range c.Msgs[1-s] {
		if m.Imm {
			imm++
		}
	}
	ask := c.AlwaysSkipAfter
	if ask == 0 {
		ask = -1
	}
	cc := sm.CCProfile{ID: 1, Algorithm: sm.CCAlgNone}
	if c.NSCC {
		n := sm.DefaultNSCC()
		t := uint32(sm.Timeout(c.TimeoutAttr))
		n.BaseRTT, n.TargetDelay, n.AdjustPeriodThreshold, n.QAThreshold = t/4, t/4, t, t
		n.MaxCwnd = uint32(max(c.MaxCwnd, 2*pathMTU))
		n.AdjustBytesThreshold = pathMTU
		cc = sm.CCProfile{ID: 1, Algorithm: sm.CCAlgNSCC, NSCC: n}
	}
	var mrs []sm.MemoryRegion
	if slices.ContainsFunc(c.Msgs[1-s], func(m Msg) bool { return m.BadAddress }) {
		var psn uint64
		for _, m := range c.Msgs[1-s] {
			if !m.BadAddress {
				mrs = append(mrs, sm.MemoryRegion{RKey: 1, VA: baseVA + psn*pathMTU, Len: uint64(m.Packets) * pathMTU})
			}
			psn += uint64(m.Packets)
		}
	}
	// The source address comes from a verbs GID table whose first entry
	// is not RoCEv2 (QP-ST-8).
	gids := []sm.GID{{IP: netip.MustParseAddr("fe80::1"), Type: sm.GIDRoCEv1}, {IP: a, Type: sm.GIDRoCEv2}}
	return sm.Config{
			Device:     sm.Device{GIDs: gids, NoTrimNACK: c.NoTrimNACK},
			EVProfiles: []sm.EVProfile{prof},
			CCProfiles: []sm.CCProfile{cc},
			MRs:        mrs,
			Policy: sm.Policy{ReorderThreshold: c.ReorderThreshold,
				Ack: sm.AckPolicy{AlwaysSkipAfter: ask, Coalesce: c.Coalesce, Delay: sm.Timeout(c.TimeoutAttr) / 4}},
			Test: sm.TestKnobs{Faults: c.Faults, MPRUnit: 1},
		}, sm.QPConfig{
			QPN: qpns[s], Seed: uint64(qpns[s]) + c.Seed,
			Addr:       sm.Addressing{DstIP: b, SGIDIndex: 1},
			MaxSendWR:  max(1, len(c.Msgs[s])),
			MaxRecvWR:  max(1, imm, c.RecvWRs),
			Timestamps: c.Timestamps,
		}
}

// nodeConfig is the configuration of the Node both QPs share
// (SharedNode): QP A's, with a GID for each QP.
func (c *Config) nodeConfig() sm.Config {
	n, _ := c.smConfig(0)
	b, _ := c.smConfig(1)
	n.Device.GIDs = append(n.Device.GIDs, b.Device.GIDs[1])
	return n
}

// recvWRs is how many receive WRs QP s posts at the start.
func (c *Config) recvWRs(s int) int {
	switch {
	case c.RecvWRs < 0:
		return 0
	case c.RecvWRs > 0:
		return c.RecvWRs
	}
	n := 0
	for _, m := range c.Msgs[1-s] {
		if m.Imm {
			n++
		}
	}
	return n
}

func (c *Config) attr(s int) sm.Attr {
	var cp sm.QPCap
	if c.DynamicMPR {
		cp |= sm.CapDynamicMPR
	}
	if c.NoTrimNACK {
		cp |= sm.CapTrimNACKDestUnsupported
	}
	return sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: uint8(c.MPR), MPRDest: uint8(c.MPR), Cap: cp, MaxWIMM: uint16(max(1, c.MaxWIMM)),
		MaxWIMMDest: uint16(max(1, c.MaxWIMMDest)), Timeout: c.TimeoutAttr,
		Retry:   sm.Retry{LinearCnt: uint8(c.LinearCnt), ExpCnt: uint8(c.ExpCnt)},
		PathMTU: pathMTU, DestQPN: qpns[1-s], SQPSN: c.StartPSN, RQPSN: c.StartPSN}
}

// baseRTT is the hold-off of a resource NACK (LR-NACK-2): the NSCC base
// RTT, or 0 without congestion control.
func (c *Config) baseRTT() sm.Time {
	if !c.NSCC {
		return 0
	}
	return sm.Timeout(c.TimeoutAttr) / 4
}

// retryLimit is linear_cnt + exp_cnt, or −1 for no limit (LR-TMR-7).
func (c *Config) retryLimit() int {
	if c.ExpCnt == sm.RetryInfinite {
		return -1
	}
	return c.LinearCnt + c.ExpCnt
}
