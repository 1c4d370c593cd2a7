package peer

// QPs: creation, the attribute transitions of modify_qp and query_qp.

import (
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"strings"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

func (a *Agent) createQP(p *control.CreateQPParams) (any, error) {
	if len(a.qps) >= maxQPs {
		return nil, control.Errorf(control.CodeResourceExhausted, "at most %d QPs", maxQPs)
	}
	if p.MaxSendWR < 0 || p.MaxSendWR > maxQueue || p.MaxRecvWR < 0 || p.MaxRecvWR > maxQueue {
		return nil, control.Errorf(control.CodeInvalidArgument, "queue depths %d/%d: at most %d", p.MaxSendWR, p.MaxRecvWR, maxQueue)
	}
	var ch *statemachine.CompChannel
	if p.Channel != 0 {
		if ch = a.chans[p.Channel]; ch == nil {
			return nil, control.Errorf(control.CodeNotFound, "completion channel %d", p.Channel)
		}
	}
	qpn := firstQPN + a.qpSeq%(wire.PSNMask-firstQPN)
	a.qpSeq++
	e := &qpEntry{qpn: qpn, create: *p, channel: ch}
	if ch != nil {
		if err := ch.Attach(qpn, &e.notify); err != nil {
			return nil, ctlErr(err)
		}
	}
	a.qps[qpn] = e
	a.order = append(a.order, qpn)
	return control.QPNResult{QPN: qpn}, nil
}

func (a *Agent) entry(qpn uint32) (*qpEntry, error) {
	e, ok := a.qps[qpn]
	if !ok {
		return nil, control.Errorf(control.CodeNotFound, "QP %#x", qpn)
	}
	return e, nil
}

// qpConfig is the statemachine configuration of QP e with address vector
// addr: its number, a seed drawn from the agent's, and what create_qp set.
func (a *Agent) qpConfig(e *qpEntry, addr statemachine.Addressing) statemachine.QPConfig {
	return statemachine.QPConfig{QPN: e.qpn, Seed: a.cfg.Seed ^ uint64(e.qpn)*0x9E3779B97F4A7C15, Addr: addr,
		MaxSendWR: e.create.MaxSendWR, MaxRecvWR: e.create.MaxRecvWR, Timestamps: e.create.Timestamps}
}

// nodeConfig is the statemachine node configuration of a new QP: the
// profiles and remotely writable regions known now.
func (a *Agent) nodeConfig() statemachine.Config {
	c := statemachine.Config{Profile: a.cfg.Profile, Test: statemachine.TestKnobs{Faults: a.cfg.Faults.f},
		Device: statemachine.Device{MaxMPR: maxMPR, MaxWIMM: maxWIMM, MaxWIMMDest: maxWIMM}}
	for _, id := range sortedKeys(a.evp) {
		c.EVProfiles = append(c.EVProfiles, a.evp[id])
	}
	for _, id := range sortedKeys(a.ccp) {
		c.CCProfiles = append(c.CCProfiles, a.ccp[id])
	}
	for _, r := range a.mrs {
		if r.remote {
			c.MRs = append(c.MRs, statemachine.MemoryRegion{RKey: r.rkey, VA: r.va, Len: uint64(len(r.buf))})
		}
	}
	if len(c.MRs) == 0 {
		// No region is remotely writable: a region no write can reach,
		// because an empty list would make every address writable.
		c.MRs = []statemachine.MemoryRegion{{RKey: 0, VA: 1 << 63, Len: 1}}
	}
	return c
}

var stateNames = map[string]statemachine.QPState{
	control.StateReset: statemachine.StateReset, control.StateInit: statemachine.StateInit,
	control.StateRTR: statemachine.StateRTR, control.StateRTS: statemachine.StateRTS, control.StateError: statemachine.StateError,
	control.StateSQD: statemachine.StateSQD,
}

// parseMAC parses a destination MAC the control session gives: a
// unicast one only, as the peer sends to one node, never to a group.
func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return m, control.Errorf(control.CodeInvalidArgument, "MAC %q", s)
	}
	if hw[0]&1 != 0 {
		return m, control.Errorf(control.CodeInvalidArgument, "MAC %q is not unicast: the peer sends to one node only", s)
	}
	copy(m[:], hw)
	return m, nil
}

// parseDstIP parses a destination IP address the control session gives:
// a unicast one of the node's IP version only.
func (a *Agent) parseDstIP(s string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Is4() != a.cfg.IP.Is4() || !(ip.IsGlobalUnicast() || ip.IsLoopback() || ip.IsLinkLocalUnicast()) {
		return ip, control.Errorf(control.CodeInvalidArgument, "IP %q: want a unicast address of the node's IP version", s)
	}
	return ip, nil
}

// attrOf converts control attributes to statemachine ones and their mask.
func attrOf(c *control.QPAttr) (statemachine.Attr, statemachine.AttrMask, error) {
	var a statemachine.Attr
	var m statemachine.AttrMask
	bad := func(name string, v int) error {
		return control.Errorf(control.CodeInvalidArgument, "%s = %d is out of range", name, v)
	}
	small := func(name string, v *int, lim int, dst func(int)) error {
		if v == nil {
			return nil
		}
		if *v < 0 || *v > lim {
			return bad(name, *v)
		}
		dst(*v)
		return nil
	}
	if c.EVProfileID != nil {
		a.EVProfileID, m = *c.EVProfileID, m|statemachine.AttrEVProfileID
	}
	if c.CCProfileID != nil {
		a.CCProfileID, m = *c.CCProfileID, m|statemachine.AttrCCProfileID
	}
	for _, f := range []error{
		small("pkey_index", c.PKeyIndex, 0xFFFF, func(v int) { a.PKeyIndex, m = uint16(v), m|statemachine.AttrPKeyIndex }),
		small("access_flags", c.AccessFlags, 1<<31-1, func(v int) { a.AccessFlags, m = uint32(v), m|statemachine.AttrAccessFlags }),
		small("max_wimm_dest", c.MaxWIMMDest, 0xFFFF, func(v int) { a.MaxWIMMDest, m = uint16(v), m|statemachine.AttrMaxWIMMDest }),
		small("mpr_dest", c.MPRDest, 255, func(v int) { a.MPRDest, m = uint8(v), m|statemachine.AttrMPRDest }),
		small("path_mtu", c.PathMTU, 0xFFFF, func(v int) { a.PathMTU, m = uint16(v), m|statemachine.AttrPathMTU }),
		small("max_wimm", c.MaxWIMM, 0xFFFF, func(v int) { a.MaxWIMM, m = uint16(v), m|statemachine.AttrMaxWIMM }),
		small("mpr", c.MPR, 255, func(v int) { a.MPR, m = uint8(v), m|statemachine.AttrMPR }),
		small("timeout", c.Timeout, 255, func(v int) { a.Timeout, m = uint8(v), m|statemachine.AttrTimeout }),
	} {
		if f != nil {
			return a, 0, f
		}
	}
	if c.Cap != nil {
		m |= statemachine.AttrCap
		var err error
		if a.Cap, err = flagsOf(*c.Cap, qpCaps, "unknown QP cap"); err != nil {
			return a, 0, err
		}
	}
	if c.DestQPN != nil {
		a.DestQPN, m = *c.DestQPN, m|statemachine.AttrDestQPN
	}
	if c.RQPSN != nil {
		a.RQPSN, m = *c.RQPSN, m|statemachine.AttrRQPSN
	}
	if c.SQPSN != nil {
		a.SQPSN, m = *c.SQPSN, m|statemachine.AttrSQPSN
	}
	if c.Retry != nil {
		if c.Retry.LinearCnt < 0 || c.Retry.LinearCnt > 255 || c.Retry.ExpCnt < 0 || c.Retry.ExpCnt > 255 {
			return a, 0, bad("retry", c.Retry.LinearCnt<<8|c.Retry.ExpCnt)
		}
		a.Retry = statemachine.Retry{LinearCnt: uint8(c.Retry.LinearCnt), ExpCnt: uint8(c.Retry.ExpCnt)}
		m |= statemachine.AttrRetryCnt
	}
	if c.AV != nil {
		m |= statemachine.AttrAV
	}
	if c.Hint != nil {
		a.Hint = *c.Hint
	}
	if c.SQDNotify != nil {
		a.SQDNotify, m = *c.SQDNotify, m|statemachine.AttrEnSQDAsyncNotify
	}
	if c.VendorCfg != nil {
		b, err := hex.DecodeString(*c.VendorCfg)
		if err != nil || len(b) > statemachine.VendorCfgSize {
			return a, 0, control.Errorf(control.CodeInvalidArgument, "vendor_cfg: at most %d bytes in hex", statemachine.VendorCfgSize)
		}
		copy(a.VendorCfg[:], b)
		m |= statemachine.AttrVendorCfg
	}
	return a, m, nil
}

func smErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, statemachine.ErrUnknownProfile), errors.Is(err, statemachine.ErrUnknownEV):
		return control.Errorf(control.CodeNotFound, "%v", err)
	case errors.Is(err, statemachine.ErrInvalidTransition), errors.Is(err, statemachine.ErrQPState):
		return control.Errorf(control.CodeInvalidState, "%v", err)
	case errors.Is(err, statemachine.ErrSendQueueFull), errors.Is(err, statemachine.ErrRecvQueueFull),
		errors.Is(err, statemachine.ErrTooManyRequests):
		return control.Errorf(control.CodeResourceExhausted, "%v", err)
	}
	return control.Errorf(control.CodeInvalidArgument, "%v", err)
}

func (a *Agent) modifyQP(now statemachine.Time, p *control.ModifyQPParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	to, ok := stateNames[p.State]
	if !ok {
		return nil, control.Errorf(control.CodeInvalidArgument, "state %q", p.State)
	}
	attr, mask, err := attrOf(&p.Attr)
	if err != nil {
		return nil, err
	}
	from := statemachine.StateReset
	if e.qp != nil {
		from = e.qp.State()
	}
	switch {
	case to == statemachine.StateInit && from == statemachine.StateReset:
		// The QP is created here, with a placeholder address vector: the
		// statemachine fixes the AV at creation and the real one comes
		// with the move to RTR, when the QP is created again and this
		// transition replayed.
		mask |= statemachine.AttrQPHint
		if err := a.hints.Use(attr.Hint); err != nil {
			return nil, ctlErr(err)
		}
		made := false
		defer func() {
			if !made {
				a.hints.Release(attr.Hint) // the QP was refused: it names no hint
			}
		}()
		n, err := statemachine.NewNode(a.nodeConfig())
		if err != nil {
			return nil, control.Errorf(control.CodeInvalidState, "no usable EV and CC profiles: %v", err)
		}
		q, err := n.NewQP(a.qpConfig(e, statemachine.Addressing{SrcIP: a.cfg.IP, DstIP: a.cfg.IP, EVMode: a.cfg.EVMode}))
		if err != nil {
			return nil, smErr(err)
		}
		if err := q.Modify(now, to, attr, mask, &a.out); err != nil {
			return nil, smErr(err)
		}
		e.node, e.qp, e.initAttr, e.initMask, e.recvs = n, q, attr, mask, nil
		made = true
	case to == statemachine.StateRTR && from == statemachine.StateInit && p.Attr.AV != nil:
		mac, err := parseMAC(p.Attr.AV.MAC)
		if err != nil {
			return nil, err
		}
		ip, err := a.parseDstIP(p.Attr.AV.IP)
		if err != nil {
			return nil, err
		}
		if p.Attr.AV.HopLimit < 0 || p.Attr.AV.HopLimit > 255 {
			return nil, control.Errorf(control.CodeInvalidArgument, "hop limit %d", p.Attr.AV.HopLimit)
		}
		q, err := e.node.NewQP(a.qpConfig(e, statemachine.Addressing{
			SrcMAC: a.cfg.MACs[0], DstMAC: mac, SrcIP: a.cfg.IP, DstIP: ip, HopLimit: uint8(p.Attr.AV.HopLimit), EVMode: a.cfg.EVMode}))
		if err != nil {
			return nil, smErr(err)
		}
		var scratch statemachine.Output
		if err := q.Modify(now, statemachine.StateInit, e.initAttr, e.initMask, &scratch); err != nil {
			return nil, smErr(err)
		}
		for _, w := range e.recvs {
			if err := q.PostRecv(now, w, &scratch); err != nil {
				return nil, smErr(err)
			}
		}
		if err := q.Modify(now, to, attr, mask, &a.out); err != nil {
			return nil, smErr(err)
		}
		e.qp, e.peer, e.peerMAC = q, ip, mac
		q.SetPortStatus(now, a.localUp(), a.remoteOf(ip), &a.out)
	case e.qp == nil:
		if to == statemachine.StateReset {
			return control.Empty{}, nil
		}
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET: %s→%s is not allowed", e.qpn, p.State, "RESET")
	default:
		if err := e.qp.Modify(now, to, attr, mask, &a.out); err != nil {
			return nil, smErr(err)
		}
		if to == statemachine.StateReset {
			a.hints.Release(e.initAttr.Hint) // a QP back in RESET names no hint
			e.qp, e.node, e.recvs = nil, nil, nil
		}
	}
	return control.Empty{}, nil
}

func (a *Agent) remoteOf(ip netip.Addr) uint32 {
	if m, ok := a.remote[ip]; ok && a.rules.heedsPortStatus() {
		return m
	}
	return 0xFFFFFFFE
}

var qpCaps = map[string]statemachine.QPCap{control.CapTrimNACKDestUnsupported: statemachine.CapTrimNACKDestUnsupported,
	control.CapDynamicMPR: statemachine.CapDynamicMPR, control.CapSvcTimeDestUnsupported: statemachine.CapSvcTimeDestUnsupported}

var causeNames = map[statemachine.ErrorCause]string{
	statemachine.CauseModify: "modify", statemachine.CauseRetryExceeded: "retry_exceeded",
	statemachine.CauseRemoteUnexp: "remote_unexp_event", statemachine.CauseRemoteInvalid: "remote_invalid_request",
	statemachine.CauseRemoteAccess: "remote_access_error", statemachine.CauseRemoteOp: "remote_operational_error",
	statemachine.CauseWIMMLimit: "wimm_limit", statemachine.CauseNoRecvWR: "no_receive_wr", statemachine.CauseAccess: "access_error",
}

func (a *Agent) queryQP(p *control.QPNParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return control.QueryQPResult{State: control.StateReset}, nil
	}
	r := control.QueryQPResult{State: e.qp.State().String(), ErrorCause: causeNames[e.qp.ErrorCause()]}
	if at, _ := e.qp.Attr(); a.rules.reportsVendorCfg() {
		r.VendorCfg = strings.TrimRight(hex.EncodeToString(at.VendorCfg[:]), "0")
		if len(r.VendorCfg)%2 == 1 {
			r.VendorCfg += "0"
		}
	}
	for _, v := range e.qp.EVs(nil) {
		r.EVs = append(r.EVs, control.EVInfo{Value: v.Value, Port: int(v.Plane) + 1, State: evStateName(v.State), Active: v.Active})
	}
	return r, nil
}

// evStateName is an EV state's name on the control protocol (EV-ST-1); an
// EV a query did not find (UNKNOWN) has none.
func evStateName(s statemachine.EVState) string {
	if s == statemachine.EVUnknown {
		return ""
	}
	return s.String()
}

func (a *Agent) modifyEVState(now statemachine.Time, p *control.ModifyEVStateParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	s, ok := evstate.ParseState(p.State)
	if !ok || !evstate.ControllerMay(s) { // EV-ST-14
		return nil, control.Errorf(control.CodeInvalidArgument, "EV state %q: the controller sets GOOD, ASSUMED_BAD or DENIED", p.State)
	}
	return control.Empty{}, smErr(e.qp.SetEVState(now, p.EV, s, &a.out))
}

func (a *Agent) setResource(p *control.SetResourceConditionParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	c, ok := map[string]statemachine.ResourceCondition{control.ResourcesOK: statemachine.ResourcesOK,
		control.ResNoBitmap: statemachine.NoTrackingBitmap, control.ResNoPktBuffer: statemachine.NoPacketBuffer,
		control.ResNoResource: statemachine.NoOtherResource}[p.Condition]
	if !ok {
		return nil, control.Errorf(control.CodeInvalidArgument, "condition %q", p.Condition)
	}
	e.qp.SetResourceCondition(c)
	return control.Empty{}, nil
}
