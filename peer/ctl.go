package peer

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire/evstate"
)

// The control API's objects on the reference device: EV Format, EV and CC
// profiles through a statemachine.Controller, whose ONLINE profiles join
// the ones set_ev_profile and set_cc_profile install, and port
// administrative state (spec/36-api-objects.md).

// ctlCode maps an errno of the control API to a protocol error code.
func ctlErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *statemachine.CtlError
	if !errors.As(err, &ce) {
		return control.Errorf(control.CodeInvalidArgument, "%v", err)
	}
	code := map[statemachine.Errno]control.Code{statemachine.EINVAL: control.CodeInvalidArgument,
		statemachine.EBUSY: control.CodeInvalidState, statemachine.E2BIG: control.CodeResourceExhausted,
		statemachine.ENOENT: control.CodeNotFound, statemachine.ENOTSUP: control.CodeUnsupported}[ce.Errno]
	if code == "" {
		code = control.CodeInternal
	}
	return control.Errorf(code, "%s: %s", ce.Errno, ce.Msg)
}

var (
	profileStates = map[string]statemachine.ProfileState{control.ProfileInit: statemachine.ProfileInit,
		control.ProfileOffline: statemachine.ProfileOffline, control.ProfileOnline: statemachine.ProfileOnline}
	fmtModes = map[string]statemachine.EVFmtMode{control.FmtSTEV: statemachine.EVFmtSTEV,
		control.FmtSRv6: statemachine.EVFmtSRv6, control.FmtUDP: statemachine.EVFmtUDP}
	evModes = map[string]statemachine.EVGenMode{control.EVModeAuto: statemachine.EVModeAuto,
		control.EVModeExplicit: statemachine.EVModeExplicit, control.EVModeGenerated: statemachine.EVModeGenerated}
)

func lookup[V any](m map[string]V, what, k string) (V, error) {
	v, ok := m[k]
	if !ok {
		return v, control.Errorf(control.CodeInvalidArgument, "%s %q", what, k)
	}
	return v, nil
}

func ctlEV(e control.CtlEV) (statemachine.CtlEV, error) {
	var out statemachine.CtlEV
	if len(e.Val) > 2*statemachine.EVBytes {
		return out, control.Errorf(control.CodeInvalidArgument, "EV value of %d hex digits: at most %d", len(e.Val), 2*statemachine.EVBytes)
	}
	v := e.Val
	if len(v)%2 == 1 {
		v += "0"
	}
	b, err := hex.DecodeString(v)
	if err != nil || e.Port < 0 || e.Port > statemachine.MaxPlanes {
		return out, control.Errorf(control.CodeInvalidArgument, "EV %q port %d", e.Val, e.Port)
	}
	copy(out.Val[:], b)
	out.Port = uint8(e.Port)
	return out, nil
}

func (a *Agent) modifyEVFmtProfile(p *control.ModifyEVFmtProfileParams) (any, error) {
	var at statemachine.EVFmtAttr
	var m statemachine.EVFmtAttrMask
	var err error
	if p.State != nil {
		m |= statemachine.EVFmtAttrState
		if at.State, err = lookup(profileStates, "state", *p.State); err != nil {
			return nil, err
		}
	}
	if p.Mode != nil {
		m |= statemachine.EVFmtAttrMode
		if at.Mode, err = lookup(fmtModes, "format mode", *p.Mode); err != nil {
			return nil, err
		}
	}
	if p.Widths != nil {
		m |= statemachine.EVFmtAttrOp
		if len(p.Widths) > 64 {
			return nil, control.Errorf(control.CodeInvalidArgument, "%d format fields: at most 64", len(p.Widths))
		}
		for _, w := range p.Widths {
			if w < 0 || w > 255 {
				return nil, control.Errorf(control.CodeInvalidArgument, "format field width %d", w)
			}
			at.Widths = append(at.Widths, uint8(w))
		}
	}
	return control.Empty{}, ctlErr(a.ctl.ModifyEVFmtProfile(p.ID, &at, m))
}

func (a *Agent) modifyEVProfileCtl(now statemachine.Time, p *control.ModifyEVProfileParams) (any, error) {
	at, m, err := evAttrOf(p)
	if err != nil {
		return nil, err
	}
	online := a.ctlOnline(p.ID)
	if online && m&statemachine.EVAttrEVOp != 0 && at.EVOp == statemachine.EVOpReplaceEV && !a.rules.appliesReplaceEV() {
		return control.Empty{}, nil // accepted, never applied
	}
	if online && m&statemachine.EVAttrState != 0 && at.State != statemachine.ProfileOnline {
		for _, e := range a.qps {
			if e.qp != nil && e.initAttr.EVProfileID == p.ID {
				return nil, control.Errorf(control.CodeInvalidState, "EBUSY: EV profile %d: QP %#x uses it", p.ID, e.qpn)
			}
		}
	}
	var refused error
	err = a.ctl.ModifyEVProfileBound(p.ID, &at, m, func(np statemachine.EVProfile) error {
		refused = a.checkRebind(np)
		return refused
	})
	switch {
	case refused != nil:
		return nil, refused // nothing changed: controller and QPs still agree
	case err != nil && online && m&statemachine.EVAttrEVOp != 0:
		// The entries before a failing one stay (CTL-OP-4): the QPs take them too.
		if serr := a.syncEVProfile(now, p.ID); serr != nil {
			return nil, serr
		}
		return nil, ctlErr(err)
	case err != nil:
		return nil, ctlErr(err)
	}
	return control.Empty{}, a.syncEVProfile(now, p.ID)
}

// checkRebind reports whether every QP using EV profile p.ID can rebind
// to p, before the controller commits a change to it (CTL-OP-3).
func (a *Agent) checkRebind(p statemachine.EVProfile) error {
	for _, qpn := range a.order {
		e := a.qps[qpn]
		if e.qp == nil || e.initAttr.EVProfileID != p.ID {
			continue
		}
		if err := e.qp.CheckRebindEVProfile(p); err != nil {
			return control.Errorf(control.CodeInvalidArgument, "QP %#x cannot take the modified EV profile %d: %v", qpn, p.ID, err)
		}
	}
	return nil
}

// evEvents are the EV states ev_event_mask may name (EV-ST-12).
var evEvents = map[string]statemachine.EVEventMask{control.EVGood: statemachine.EVEventGood,
	control.EVAssumedBad: statemachine.EVEventAssumedBad, control.EVDenied: statemachine.EVEventDenied}

func evAttrOf(p *control.ModifyEVProfileParams) (statemachine.EVProfileAttr, statemachine.EVProfileAttrMask, error) {
	var at statemachine.EVProfileAttr
	var m statemachine.EVProfileAttrMask
	var err error
	if p.State != nil {
		m |= statemachine.EVAttrState
		if at.State, err = lookup(profileStates, "state", *p.State); err != nil {
			return at, m, err
		}
	}
	if p.Mode != nil {
		m |= statemachine.EVAttrMode
		if at.Mode, err = lookup(evModes, "EV mode", *p.Mode); err != nil {
			return at, m, err
		}
	}
	if p.FmtID != nil {
		m, at.FmtProfileID = m|statemachine.EVAttrFmtID, *p.FmtID
	}
	if p.Count != nil {
		m, at.Count = m|statemachine.EVAttrCount, *p.Count
	}
	if p.MinActive != nil {
		m, at.MinActive = m|statemachine.EVAttrMinActive, *p.MinActive
	}
	if p.EventMask != nil {
		m |= statemachine.EVAttrEventMask
		var err error
		if at.EventMask, err = flagsOf(*p.EventMask, evEvents, "event mask state"); err != nil {
			return at, m, err
		}
	}
	if p.Fields != nil {
		m |= statemachine.EVAttrFieldsOp
		if len(p.Fields) > 64 {
			return at, m, control.Errorf(control.CodeInvalidArgument, "%d EV fields: at most 64", len(p.Fields))
		}
		for _, f := range p.Fields {
			at.Fields = append(at.Fields, statemachine.EVField(f))
		}
	}
	if p.EVOp != nil {
		m |= statemachine.EVAttrEVOp
		if err := evOpOf(p.EVOp, &at); err != nil {
			return at, m, err
		}
	}
	return at, m, nil
}

func evOpOf(op *control.EVOp, at *statemachine.EVProfileAttr) error {
	switch op.Op {
	case control.EVOpReplace:
		at.EVOp = statemachine.EVOpReplaceEV
	case control.EVOpModifyState:
		at.EVOp = statemachine.EVOpModifyEVState
	default:
		return control.Errorf(control.CodeInvalidArgument, "EV op %q (want %q or %q)", op.Op, control.EVOpReplace, control.EVOpModifyState)
	}
	if len(op.Entries) > statemachine.MaxEVs {
		return control.Errorf(control.CodeResourceExhausted, "%d entries: at most %d", len(op.Entries), statemachine.MaxEVs)
	}
	for _, e := range op.Entries {
		var x statemachine.EVOpEntry
		var err error
		if x.EV, err = ctlEV(e.EV); err != nil {
			return err
		}
		if e.New != nil {
			if x.New, err = ctlEV(*e.New); err != nil {
				return err
			}
		}
		if e.State != "" {
			var ok bool
			if x.State, ok = evstate.ParseState(e.State); !ok {
				return control.Errorf(control.CodeInvalidArgument, "EV state %q", e.State)
			}
		}
		if e.AllCopies {
			x.Flags = statemachine.EVOpAllCopies
		}
		at.Entries = append(at.Entries, x)
	}
	return nil
}

func (a *Agent) ctlOnline(id uint64) bool {
	var q statemachine.EVProfileAttr
	return a.ctl.QueryEVProfile(id, &q, 0) == nil && q.State == statemachine.ProfileOnline
}

// syncEVProfile installs EV profile id for QPs while it is ONLINE (and
// removes it otherwise), rebinds the QPs using it to its EVs after a
// REPLACE_EV, and applies its controller states to them.
func (a *Agent) syncEVProfile(now statemachine.Time, id uint64) error {
	p, st, err := a.ctl.EVProfile(id)
	if err != nil {
		if _, managed := a.ctlEVs[id]; managed {
			delete(a.evp, id)
			delete(a.ctlEVs, id)
		}
		return nil
	}
	var q statemachine.EVProfileAttr
	if a.ctl.QueryEVProfile(id, &q, 0); q.Mode == statemachine.EVModeGenerated && !a.rules.expandsGenEVs() {
		evs, _ := a.ctl.ProfileEVs(id)
		for i := range p.EVs {
			p.EVs[i].Value = uint32(evs[i].EV.Val[0]) // the compact EV, unexpanded
		}
	}
	if _, ok := a.evp[id]; !ok && len(a.evp) >= maxProfiles {
		return control.Errorf(control.CodeResourceExhausted, "at most %d EV profiles usable at once", maxProfiles)
	}
	a.evp[id], a.ctlEVs[id] = p, true
	for _, qpn := range a.order {
		e := a.qps[qpn]
		if e.qp == nil || e.initAttr.EVProfileID != id {
			continue
		}
		if err := e.qp.RebindEVProfile(now, p, &a.out); err != nil {
			return control.Errorf(control.CodeInvalidArgument, "QP %#x: %v", qpn, err)
		}
		for i, s := range st {
			if cur, _ := e.qp.EVStateOf(p.EVs[i].Value); cur != s && s != statemachine.EVGood {
				_ = e.qp.SetEVState(now, p.EVs[i].Value, s, &a.out)
			}
		}
	}
	return nil
}

func (a *Agent) queryEVProfileCtl(p *control.IDParams) (any, error) {
	q := statemachine.EVProfileAttr{EVOp: statemachine.EVOpQueryEVArray, Entries: make([]statemachine.EVOpEntry, statemachine.MaxEVs)}
	if err := a.ctl.QueryEVProfile(p.ID, &q, statemachine.EVAttrEVOp); err != nil {
		return nil, ctlErr(err)
	}
	r := control.QueryEVProfileResult{State: q.State.String(), FmtID: q.FmtProfileID, Count: q.Count, MinActive: q.MinActive}
	if q.Mode != 0 {
		r.Mode = q.Mode.String()
	}
	f := statemachine.EVProfileAttr{FieldsOp: statemachine.FieldsQuery, Fields: make([]statemachine.EVField, 64)}
	if a.ctl.QueryEVProfile(p.ID, &f, statemachine.EVAttrFieldsOp) == nil {
		for _, x := range f.Fields {
			r.Fields = append(r.Fields, control.EVField(x))
		}
	}
	evs, _ := a.ctl.ProfileEVs(p.ID)
	keys := map[statemachine.CtlEV]uint32{}
	for _, e := range evs {
		keys[e.EV] = e.Key
	}
	for _, e := range q.Entries {
		r.EVs = append(r.EVs, control.EVOpEntry{EV: control.CtlEV{Val: strings.TrimRight(hex.EncodeToString(e.EV.Val[:]), "0"), Port: int(e.EV.Port)},
			State: evStateName(e.State)})
		r.Wire = append(r.Wire, keys[e.EV])
	}
	return r, nil
}

func (a *Agent) modifyCCProfileCtl(p *control.ModifyCCProfileParams) (any, error) {
	var at statemachine.CCProfileAttr
	var m statemachine.CCProfileAttrMask
	var err error
	if p.State != nil {
		m |= statemachine.CCAttrState
		if at.State, err = lookup(profileStates, "state", *p.State); err != nil {
			return nil, err
		}
	}
	if p.Algorithm != nil {
		m |= statemachine.CCAttrAlgorithm
		at.Algorithm = map[string]string{control.CCNone: statemachine.CCAlgNone, control.CCNSCC: statemachine.CCAlgNSCC}[*p.Algorithm]
		if at.Algorithm == "" && *p.Algorithm != control.CCNone {
			return nil, control.Errorf(control.CodeUnsupported, "CC algorithm %q", *p.Algorithm)
		}
	}
	if p.NSCC != nil {
		m |= statemachine.CCAttrConfig
		var err error
		if at.Config, err = nsccOf(p.NSCC); err != nil {
			return nil, err
		}
	}
	if q, err := a.ctl.QueryCCProfile(p.ID); err == nil && q.State == statemachine.ProfileOnline && m&statemachine.CCAttrState != 0 && at.State != statemachine.ProfileOnline {
		for _, e := range a.qps {
			if e.qp != nil && e.initAttr.CCProfileID == p.ID {
				return nil, control.Errorf(control.CodeInvalidState, "EBUSY: CC profile %d: QP %#x uses it", p.ID, e.qpn)
			}
		}
	}
	if err := ctlErr(a.ctl.ModifyCCProfile(p.ID, &at, m)); err != nil {
		return nil, err
	}
	if cp, err := a.ctl.CCProfile(p.ID); err == nil {
		if _, ok := a.ccp[p.ID]; !ok && len(a.ccp) >= maxProfiles {
			return nil, control.Errorf(control.CodeResourceExhausted, "at most %d CC profiles usable at once", maxProfiles)
		}
		a.ccp[p.ID] = cp
	} else if q, _ := a.ctl.QueryCCProfile(p.ID); q.State != statemachine.ProfileOnline {
		delete(a.ccp, p.ID)
	}
	return control.Empty{}, nil
}

func (a *Agent) queryDeviceCtl() (any, error) {
	d := a.ctl.QueryDevice()
	if a.cfg.ExplicitRange || !a.rules.checksExplicitRange() {
		d.OptAttr |= statemachine.OptEVExplicitRange // advertised; the Controller checks it when checksExplicitRange
	}
	return control.DeviceCtl{ProtocolVersion: d.ProtocolVersion, EVMaxFmtProfiles: d.EVMaxFmtProfiles, EVMaxProfiles: d.EVMaxProfiles,
		EVMaxCount: d.EVMaxCount, EVFreeCount: d.EVFreeCount, EVMaxCountProfile: d.EVMaxCountProfile, EVCountAlign: d.EVCountAlign,
		EVMaxWidth: d.EVMaxWidth, EVFmtModeMask: uint32(d.EVFmtModeMask), EVModeMask: uint32(d.EVModeMask),
		EVOpMaxEntries: d.EVOpMaxEntries, CCMaxProfiles: d.CCMaxProfiles, CCAlgorithms: d.CCAlgorithms,
		PhyPortMask: d.PhyPortMask, OptAttr: uint32(d.OptAttr)}, nil
}

// portAdmin is mrc_ctl_modify_port / mrc_ctl_query_port. Disabling a port
// takes it down for every QP and tells the peers, as a link going down
// does (CTL-PORT-2).
func (a *Agent) portAdmin(now statemachine.Time, p *control.PortAdminParams) (any, error) {
	if p.Port < 1 || p.Port > a.ports {
		return nil, control.Errorf(control.CodeInvalidArgument, "EINVAL: port %d: this node has ports 1 to %d", p.Port, a.ports)
	}
	if p.Enabled != nil {
		if err := a.ctl.ModifyPort(uint8(p.Port), *p.Enabled); err != nil {
			return nil, ctlErr(err)
		}
		a.applyPorts(now)
	}
	up, err := a.ctl.QueryPort(uint8(p.Port))
	return control.PortAdminResult{Port: p.Port, Enabled: up}, ctlErr(err)
}

// localUp is the local port-status mask QPs and peers see: the link
// state set by set_port_status, less the administratively disabled ports.
func (a *Agent) localUp() uint32 {
	return a.rules.enabledPorts(a.ctl, a.local)
}
