package statemachine

import (
	"fmt"
	"strings"

	"github.com/openmrc/mrc/wire"
)

// Retry is the linear + exponential retry budget (mrc_qp_attr.retry).
type Retry struct {
	// LinearCnt retries use the fixed timeout; at most 7.
	LinearCnt uint8
	// ExpCnt further retries double the timeout each time; at most 25,
	// and 25 means infinite.
	ExpCnt uint8
}

// RetryInfinite is the ExpCnt that never exhausts the budget.
const RetryInfinite = 25

// QPCap holds the MRC_QP_CAP_* bits given with AttrCap (QP-ATTR-3, AMB-22).
type QPCap uint8

// QP capability bits.
const (
	// CapTrimNACKDestUnsupported (MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED):
	// the peer cannot send trim NACKs, so every write packet goes out as
	// DSCP_NO_TRIM (WIRE-DSCP-5).
	CapTrimNACKDestUnsupported QPCap = 1 << iota
	// CapDynamicMPR (MRC_QP_CAP_DYNAMIC_MPR) enables dynamic MPR in both roles; it is in effect
	// only when the peer enables it too (MPR-DYN-1).
	CapDynamicMPR
	// CapSvcTimeDestUnsupported (MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED):
	// the peer does not report service time.
	CapSvcTimeDestUnsupported
)

// Attr mirrors struct mrc_qp_attr plus the verbs attributes an MRC QP
// still needs (QP-ST-6).
type Attr struct {
	EVProfileID uint64
	CCProfileID uint64
	MPR         uint8 // requester MPR, units of 128 PSNs
	MPRDest     uint8 // responder MPR, units of 128 PSNs
	Cap         QPCap
	MaxWIMM     uint16
	MaxWIMMDest uint16
	Timeout     uint8 // local ACK timeout 1.024 µs × 2^Timeout, at most 24
	Retry       Retry
	// Verbs attributes.
	PKeyIndex   uint16 // recorded; the P_Key itself is QPConfig.Addr.PKey
	AccessFlags uint32 // recorded; remote write access is checked against Config.MRs
	PathMTU     uint16 // bytes: 256, 512, 1024, 2048 or 4096
	DestQPN     uint32 // IBV_QP_DEST_QPN
	RQPSN       uint32 // IBV_QP_RQ_PSN: first PSN the responder expects
	SQPSN       uint32 // IBV_QP_SQ_PSN: first PSN the requester sends
	// Hint is MRC_QP_HINT: the handle of a QPHints entry, 0 for NULL.
	// Hints are advisory; the reference behaves the same with any
	// (CTL-QPH-2, AMB-72).
	Hint uint32
	// VendorCfg is MRC_QP_VENDOR_CFG: opaque, kept and returned, never
	// interpreted (CTL-QPH-3).
	VendorCfg [VendorCfgSize]byte
	// SQDNotify is IBV_QP_EN_SQD_ASYNC_NOTIFY at RTS→SQD: raise
	// IBV_EVENT_SQ_DRAINED once the send queue is drained (CTL-AEV-6).
	SQDNotify bool
}

// AttrMask selects attributes: mrc_modify_qp's two masks in one word. The
// low 32 bits are enum mrc_qp_attr_mask with mrc.h's values (pinned in
// spec/api); the high 32 bits are enum ibv_qp_attr_mask (libibverbs'
// values) shifted left by 32, for the verbs attributes an MRC QP keeps or
// rejects. MRC_QP_CAP carries dynamic MPR at INIT→RTR (AMB-22).
type AttrMask uint64

// verbsAttr places an ibv_qp_attr_mask bit in the high word.
const verbsAttr = 32

// Attribute mask bits.
const (
	AttrMaxWIMM     AttrMask = 1 << 0 // MRC_QP_MAX_WIMM
	AttrMaxWIMMDest AttrMask = 1 << 1 // MRC_QP_MAX_WIMM_DEST
	AttrMPR         AttrMask = 1 << 2 // MRC_QP_MPR
	AttrMPRDest     AttrMask = 1 << 3 // MRC_QP_MPR_DEST
	AttrTimeout     AttrMask = 1 << 4 // MRC_QP_TIMEOUT
	AttrEVProfileID AttrMask = 1 << 5 // MRC_QP_EV_PROFILE_ID
	AttrCCProfileID AttrMask = 1 << 6 // MRC_QP_CC_PROFILE_ID
	AttrQPHint      AttrMask = 1 << 7 // MRC_QP_HINT: Attr.Hint
	AttrRetryCnt    AttrMask = 1 << 8 // MRC_QP_RETRY_CNT
	AttrCap         AttrMask = 1 << 9 // MRC_QP_CAP
	// AttrVendorCfg is MRC_QP_VENDOR_CFG: Attr.VendorCfg, settable on
	// every transition (AMB-72).
	AttrVendorCfg AttrMask = 1 << 31

	AttrEnSQDAsyncNotify AttrMask = 1 << (verbsAttr + 2)  // IBV_QP_EN_SQD_ASYNC_NOTIFY: Attr.SQDNotify, at RTS→SQD
	AttrAccessFlags      AttrMask = 1 << (verbsAttr + 3)  // IBV_QP_ACCESS_FLAGS; checked against Config.MRs
	AttrPKeyIndex        AttrMask = 1 << (verbsAttr + 4)  // IBV_QP_PKEY_INDEX; the P_Key itself is QPConfig.Addr.PKey
	AttrAV               AttrMask = 1 << (verbsAttr + 7)  // IBV_QP_AV; the address vector is QPConfig.Addr
	AttrPathMTU          AttrMask = 1 << (verbsAttr + 8)  // IBV_QP_PATH_MTU
	AttrRQPSN            AttrMask = 1 << (verbsAttr + 12) // IBV_QP_RQ_PSN
	AttrSQPSN            AttrMask = 1 << (verbsAttr + 16) // IBV_QP_SQ_PSN
	AttrDestQPN          AttrMask = 1 << (verbsAttr + 20) // IBV_QP_DEST_QPN
	// Verbs attributes an MRC QP does not have: mrc_modify_qp rejects
	// them on every transition (QP-ST-7). MRC's own TIMEOUT and RETRY_CNT
	// replace the verbs ones.
	AttrVerbsPort            AttrMask = 1 << (verbsAttr + 5)  // IBV_QP_PORT
	AttrVerbsTimeout         AttrMask = 1 << (verbsAttr + 9)  // IBV_QP_TIMEOUT
	AttrVerbsRetryCnt        AttrMask = 1 << (verbsAttr + 10) // IBV_QP_RETRY_CNT
	AttrVerbsRNRRetry        AttrMask = 1 << (verbsAttr + 11) // IBV_QP_RNR_RETRY
	AttrVerbsMaxQPRdAtomic   AttrMask = 1 << (verbsAttr + 13) // IBV_QP_MAX_QP_RD_ATOMIC
	AttrVerbsAltPath         AttrMask = 1 << (verbsAttr + 14) // IBV_QP_ALT_PATH
	AttrVerbsMinRNRTimer     AttrMask = 1 << (verbsAttr + 15) // IBV_QP_MIN_RNR_TIMER
	AttrVerbsMaxDestRdAtomic AttrMask = 1 << (verbsAttr + 17) // IBV_QP_MAX_DEST_RD_ATOMIC
	AttrVerbsPathMigState    AttrMask = 1 << (verbsAttr + 18) // IBV_QP_PATH_MIG_STATE
	// AttrVerbsRejected is every verbs attribute QP-ST-7 names.
	AttrVerbsRejected = AttrVerbsPort | AttrVerbsTimeout | AttrVerbsRetryCnt | AttrVerbsRNRRetry | AttrVerbsMinRNRTimer |
		AttrVerbsMaxQPRdAtomic | AttrVerbsMaxDestRdAtomic | AttrVerbsAltPath | AttrVerbsPathMigState
)

var attrNames = []struct {
	m    AttrMask
	name string
}{
	{AttrMaxWIMM, "MAX_WIMM"}, {AttrMaxWIMMDest, "MAX_WIMM_DEST"}, {AttrMPR, "MPR"}, {AttrMPRDest, "MPR_DEST"},
	{AttrCap, "CAP"}, {AttrTimeout, "TIMEOUT"}, {AttrEVProfileID, "EV_PROFILE_ID"}, {AttrCCProfileID, "CC_PROFILE_ID"},
	{AttrQPHint, "QP_HINT"}, {AttrRetryCnt, "RETRY_CNT"}, {AttrPKeyIndex, "PKEY_INDEX"}, {AttrAccessFlags, "ACCESS_FLAGS"},
	{AttrAV, "AV"}, {AttrPathMTU, "PATH_MTU"}, {AttrDestQPN, "DEST_QPN"}, {AttrRQPSN, "RQ_PSN"}, {AttrSQPSN, "SQ_PSN"},
	{AttrVerbsPort, "IBV_QP_PORT"}, {AttrVerbsTimeout, "IBV_QP_TIMEOUT"}, {AttrVerbsRetryCnt, "IBV_QP_RETRY_CNT"},
	{AttrVerbsRNRRetry, "IBV_QP_RNR_RETRY"}, {AttrVerbsMinRNRTimer, "IBV_QP_MIN_RNR_TIMER"},
	{AttrVerbsMaxQPRdAtomic, "IBV_QP_MAX_QP_RD_ATOMIC"}, {AttrVerbsMaxDestRdAtomic, "IBV_QP_MAX_DEST_RD_ATOMIC"},
	{AttrVerbsAltPath, "IBV_QP_ALT_PATH"}, {AttrVerbsPathMigState, "IBV_QP_PATH_MIG_STATE"}, {AttrVendorCfg, "VENDOR_CFG"},
	{AttrEnSQDAsyncNotify, "EN_SQD_ASYNC_NOTIFY"},
}

func (m AttrMask) String() string {
	var s []string
	for _, a := range attrNames {
		if m&a.m != 0 {
			s = append(s, a.name)
		}
	}
	if len(s) == 0 {
		return "0"
	}
	return strings.Join(s, "|")
}

// The transitions and the attributes each requires and may also set:
// mrc.h's table plus the verbs attributes of an RC QP (QP-ST-2 to QP-ST-6).
var transitions = map[[2]QPState]struct{ need, may AttrMask }{
	{StateReset, StateInit}: {need: AttrQPHint | AttrEVProfileID | AttrCCProfileID | AttrPKeyIndex | AttrAccessFlags, may: AttrVendorCfg},
	{StateInit, StateRTR}: {need: AttrMaxWIMMDest | AttrMPRDest | AttrCap | AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN,
		may: AttrMPR | AttrMaxWIMM | AttrVendorCfg},
	{StateRTR, StateRTS}: {need: AttrMaxWIMM | AttrMPR | AttrRetryCnt | AttrTimeout | AttrSQPSN, may: AttrVendorCfg},
	{StateRTS, StateSQD}: {may: AttrEnSQDAsyncNotify | AttrVendorCfg},
	{StateSQD, StateRTS}: {may: AttrVendorCfg},
}

// AttrError is a rejected Modify: which transition, which attribute, why.
type AttrError struct {
	From, To QPState
	Attr     AttrMask
	Value    uint64
	Err      error // ErrMissingAttr, ErrInvalidAttr, ErrUnknownProfile or ErrInvalidTransition
	Reason   string
}

func (e *AttrError) Error() string {
	s := fmt.Sprintf("statemachine: modify %s→%s", e.From, e.To)
	if e.Attr != 0 {
		s += fmt.Sprintf(": %s = %d", e.Attr, e.Value)
	}
	return s + ": " + e.Err.Error() + ": " + e.Reason
}

// Unwrap returns the error class.
func (e *AttrError) Unwrap() error { return e.Err }

// Modify moves the QP to state to, setting the attributes in mask
// (mrc_modify_qp). Each transition requires the attributes of QP-ST-3 to
// QP-ST-6; invalid values (QP-ATTR-1), missing or unexpected attributes and
// transitions QP-ST-2 does not allow leave the QP unchanged and return an
// *AttrError. Any state may move to ERROR (flushing outstanding work) or
// RESET (dropping all state).
func (q *QP) Modify(now Time, to QPState, a Attr, mask AttrMask, out *Output) error {
	q.begin(now, out)
	defer q.end()
	from := q.state
	fail := func(m AttrMask, v uint64, err error, f string, args ...any) error {
		return &AttrError{From: from, To: to, Attr: m, Value: v, Err: err, Reason: fmt.Sprintf(f, args...)}
	}
	switch to {
	case StateError:
		q.enterError(CauseModify, StatusFlushError)
		return nil
	case StateReset:
		q.reset()
		return nil
	}
	tr, ok := transitions[[2]QPState{from, to}]
	if !ok {
		return fail(0, 0, ErrInvalidTransition, "allowed: RESET→INIT→RTR→RTS⇄SQD, any→ERROR, any→RESET")
	}
	if bad := mask & AttrVerbsRejected; bad != 0 {
		return fail(bad, 0, ErrInvalidAttr, "verbs attributes an MRC QP does not have (QP-ST-7)")
	}
	if miss := tr.need &^ mask; miss != 0 {
		return fail(miss, 0, ErrMissingAttr, "this transition requires %s", tr.need)
	}
	if extra := mask &^ (tr.need | tr.may); extra != 0 {
		return fail(extra, 0, ErrInvalidAttr, "not settable on this transition (allowed: %s)", tr.need|tr.may)
	}
	cfg := &q.st.cfg
	evIdx, ccIdx := -1, -1
	if mask&AttrEVProfileID != 0 {
		for i, s := range q.st.evSets {
			if s.id == a.EVProfileID {
				evIdx = i
			}
		}
		if evIdx < 0 {
			return fail(AttrEVProfileID, a.EVProfileID, ErrUnknownProfile, "no EV profile with this ID in Config.EVProfiles")
		}
	}
	if mask&AttrCCProfileID != 0 {
		for i := range cfg.CCProfiles {
			if cfg.CCProfiles[i].ID == a.CCProfileID {
				ccIdx = i
			}
		}
		if ccIdx < 0 {
			return fail(AttrCCProfileID, a.CCProfileID, ErrUnknownProfile, "no CC profile with this ID in Config.CCProfiles")
		}
	}
	mprOK := func(v uint8) bool {
		return v >= 1 && int(v) <= cfg.Device.MaxMPR && int(v)%cfg.Device.MPRResolution == 0
	}
	mprWant := fmt.Sprintf("[1, %d], a multiple of %d (units of 128 PSNs)", cfg.Device.MaxMPR, cfg.Device.MPRResolution)
	checks := []struct {
		m    AttrMask
		v    uint64
		ok   bool
		want string
	}{
		{AttrMPR, uint64(a.MPR), mprOK(a.MPR), mprWant},
		{AttrMPRDest, uint64(a.MPRDest), mprOK(a.MPRDest), mprWant},
		{AttrMaxWIMM, uint64(a.MaxWIMM), a.MaxWIMM >= 1 && int(a.MaxWIMM) <= cfg.Device.MaxWIMM, fmt.Sprintf("[1, %d]", cfg.Device.MaxWIMM)},
		{AttrMaxWIMMDest, uint64(a.MaxWIMMDest), a.MaxWIMMDest >= 1 && int(a.MaxWIMMDest) <= cfg.Device.MaxWIMMDest, fmt.Sprintf("[1, %d]", cfg.Device.MaxWIMMDest)},
		{AttrTimeout, uint64(a.Timeout), a.Timeout <= MaxTimeout, "[0, 24]"},
		{AttrRetryCnt, uint64(a.Retry.LinearCnt)<<8 | uint64(a.Retry.ExpCnt), a.Retry.LinearCnt <= 7 && a.Retry.ExpCnt <= RetryInfinite,
			"linear_cnt ≤ 7 and exp_cnt ≤ 25 (value is linear<<8|exp)"},
		{AttrCap, uint64(a.Cap), a.Cap < 1<<3, "MRC_QP_CAP_* bits only"},
		{AttrCap, uint64(a.Cap), a.Cap&CapDynamicMPR == 0 || cfg.Device.CapMissing&DevCapDynamicMPR == 0,
			"no MRC_QP_CAP_DYNAMIC_MPR: the device lacks MRC_DEVICE_CAP_DYNAMIC_MPR (CTL-DEV-3)"},
		{AttrPathMTU, uint64(a.PathMTU), a.PathMTU >= 256 && a.PathMTU <= 4096 && a.PathMTU&(a.PathMTU-1) == 0, "256, 512, 1024, 2048 or 4096"},
		{AttrDestQPN, uint64(a.DestQPN), a.DestQPN <= wire.PSNMask && a.DestQPN > wire.EndpointQPN, "a 24-bit QPN above 2 (WIRE-BTH-8)"},
		{AttrRQPSN, uint64(a.RQPSN), a.RQPSN <= wire.PSNMask, "a 24-bit PSN"},
		{AttrSQPSN, uint64(a.SQPSN), a.SQPSN <= wire.PSNMask, "a 24-bit PSN"},
	}
	for _, c := range checks {
		if mask&c.m != 0 && !c.ok {
			return fail(c.m, c.v, ErrInvalidAttr, "want %s", c.want)
		}
	}
	q.setAttrs(a, mask)
	q.build(from, evIdx, ccIdx)
	q.setState(to)
	q.drain(from, to, a.SQDNotify && mask&AttrEnSQDAsyncNotify != 0)
	return nil
}

// drain starts or ends the drain of a move into or out of SQD
// (QP-ST-12); notify is IBV_QP_EN_SQD_ASYNC_NOTIFY of a move to SQD.
func (q *QP) drain(from, to QPState, notify bool) {
	switch {
	case to == StateSQD:
		q.attr.SQDNotify, q.drained = notify, false
		q.checkDrained(true)
	case to == StateRTS && from == StateSQD:
		q.pump() // the messages that waited start
	}
}

// build sizes and starts what a transition from state from brings into
// being: INIT the EV table and the receive queue, RTR the responder, RTS
// congestion control and the requester. evIdx and ccIdx are the profiles
// INIT picked.
func (q *QP) build(from QPState, evIdx, ccIdx int) {
	switch from {
	case StateReset:
		q.rng = newRNG(q.st.qp.Seed)
		q.ccIdx = ccIdx
		q.ev.init(q.st.evSets[evIdx], &q.rng)
		q.rq = make([]uint64, q.st.qp.MaxRecvWR)
	case StateInit:
		q.rsp.init(&q.attr, q.st.cfg.Test.MPRUnit)
	case StateRTR:
		q.cc.init(&q.st.cfg.CCProfiles[q.ccIdx], int(q.attr.PathMTU), q.now)
		q.req.init(q.st, &q.attr, q.cc.baseRTT)
		q.ev.probeInt = q.ev.set.probeInterval
		if q.ev.probeInt == 0 {
			q.ev.probeInt = Timeout(q.attr.Timeout) // EV-PRB-2
		}
	}
}

func (q *QP) setAttrs(a Attr, m AttrMask) {
	x := &q.attr
	set := func(b AttrMask, f func()) {
		if m&b != 0 {
			f()
		}
	}
	set(AttrEVProfileID, func() { x.EVProfileID = a.EVProfileID })
	set(AttrCCProfileID, func() { x.CCProfileID = a.CCProfileID })
	set(AttrMPR, func() { x.MPR = a.MPR })
	set(AttrMPRDest, func() { x.MPRDest = a.MPRDest })
	set(AttrCap, func() { x.Cap = a.Cap })
	set(AttrMaxWIMM, func() { x.MaxWIMM = a.MaxWIMM })
	set(AttrMaxWIMMDest, func() { x.MaxWIMMDest = a.MaxWIMMDest })
	set(AttrTimeout, func() { x.Timeout = a.Timeout })
	set(AttrRetryCnt, func() { x.Retry = a.Retry })
	set(AttrPKeyIndex, func() { x.PKeyIndex = a.PKeyIndex })
	set(AttrAccessFlags, func() { x.AccessFlags = a.AccessFlags })
	set(AttrPathMTU, func() { x.PathMTU = a.PathMTU })
	set(AttrDestQPN, func() { x.DestQPN = a.DestQPN })
	set(AttrRQPSN, func() { x.RQPSN = a.RQPSN })
	set(AttrSQPSN, func() { x.SQPSN = a.SQPSN })
	set(AttrQPHint, func() { x.Hint = a.Hint })
	set(AttrVendorCfg, func() { x.VendorCfg = a.VendorCfg })
	q.mask |= m
}

// ServiceTime reports whether responder service time is in use on the QP:
// the device advertises MRC_DEVICE_CAP_SVC_TIME and the QP was not told
// MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED (CTL-SVC-1). No wire field carries
// service time (AMB-16), so it changes no packet.
func (q *QP) ServiceTime() bool {
	return q.st.cfg.Device.CapMissing&DevCapSvcTime == 0 && q.attr.Cap&CapSvcTimeDestUnsupported == 0
}

// reset drops every piece of state (→ RESET).
func (q *QP) reset() {
	q.setState(StateReset)
	*q = QP{st: q.st, rng: newRNG(q.st.qp.Seed), now: q.now, out: q.out}
}

// Mask of each transition's required attributes, for BringUp.
const (
	MaskInit = AttrQPHint | AttrEVProfileID | AttrCCProfileID | AttrPKeyIndex | AttrAccessFlags
	MaskRTR  = AttrMaxWIMMDest | AttrMPRDest | AttrCap | AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN
	MaskRTS  = AttrMaxWIMM | AttrMPR | AttrRetryCnt | AttrTimeout | AttrSQPSN
)

// BringUp drives a QP from RESET to RTS with the attributes in a, giving
// each transition exactly its required attributes.
func (q *QP) BringUp(now Time, a Attr, out *Output) error {
	for _, s := range []struct {
		to QPState
		m  AttrMask
	}{{StateInit, MaskInit}, {StateRTR, MaskRTR}, {StateRTS, MaskRTS}} {
		if s.to == StateInit && a.VendorCfg != ([VendorCfgSize]byte{}) {
			s.m |= AttrVendorCfg
		}
		if err := q.Modify(now, s.to, a, s.m, out); err != nil {
			return err
		}
	}
	return nil
}
