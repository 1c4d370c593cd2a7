package active

import (
	"fmt"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The control API's objects where they reach the wire: the EVs a GEN
// profile generates, REPLACE_EV on an ONLINE profile, and a port disabled
// administratively (spec/36-api-objects.md).

func init() { addCases(apiCases) }

func apiCases() {
	register(Case{Role: RoleRequester, Run: ctlGenProfile, Case: conformance.Case{
		ID: "MRC-CTL-GEN-101", Title: "A GEN-mode EV profile's EVs on the wire",
		Assertion:    "An EV profile in GEN mode goes ONLINE without REPLACE_EV, and every data packet carries the expansion of one of its generated EVs: the field's init_val with the generated bits overlaid on its mask.",
		Requirements: []conformance.RequirementID{"CTL-GEN-3", "CTL-GEN-1", "CTL-EVX-3", "CTL-PRF-5"},
		Level:        spec.Must,
		Steps: []string{"Put EV Format profile 13 ONLINE: STEV, one 16-bit field.",
			"Put EV profile 1 ONLINE in GEN mode with one field: width 16, init_val 0xA500, min 0, max 255, mask 0x00FF, and ev_count 16 per port.",
			"Query the profile's EV array; then have the IUT send writes on a QP using it.",
			"Every data packet's EV must be 0xA5nn with nn below ev_count, and at least two of them must be used."},
		Pass: "only expansions of generated EVs on the wire", Fail: "an EV outside the generated set, or the profile refused",
	}})
	register(Case{Role: RoleRequester, Run: ctlReplaceEV, Case: conformance.Case{
		ID: "MRC-CTL-OP-101", Title: "REPLACE_EV takes effect on an ONLINE profile",
		Assertion:    "EVs put into an explicit profile by REPLACE_EV are the ones on the wire, and after REPLACE_EV with ALL_COPIES on the ONLINE profile (MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE) no data packet carries a replaced EV.",
		Requirements: []conformance.RequirementID{"CTL-OP-3", "CTL-OP-1", "CTL-OP-2", "CTL-PRF-4"},
		Level:        spec.Must,
		Steps: []string{"Put EV Format profile 13 ONLINE: STEV, one 16-bit field.",
			"Put EV profile 1 OFFLINE in EXP mode with four EVs per port, fill every unpopulated entry with REPLACE_EV (old set: entry k holds 0x5100 + k, one range), and put it ONLINE.",
			"Have the IUT send writes: every EV must be of the old set.",
			"REPLACE_EV every old EV by 0x6100 + k with ALL_COPIES; keep the IUT sending: after the reaction time every data packet's EV must be of the new set.",
			"On a device advertising MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE no entry of a range can change alone (CTL-OP-6): the case ends NOT-SUPPORTED before the replacement."},
		Pass: "the old set, then only the new set", Fail: "an EV outside the set the profile holds at the time",
	}})
	register(Case{Role: RoleRequester, Run: ctlPortAdmin, MinPlanes: 2, Case: conformance.Case{
		ID: "MRC-CTL-PORT-101", Title: "An administratively disabled port sends nothing",
		Assertion:    "After modify_port disables port 2, query_port reports it disabled, the IUT sends nothing on it and tells the tester it is down; enabled again, it carries data again.",
		Requirements: []conformance.RequirementID{"CTL-PORT-2", "CTL-PORT-1", "CTL-AEV-2"},
		Level:        spec.Must,
		Steps: []string{"Keep the IUT sending on a QP with EVs on every port.",
			"Disable port 2 with modify_port; query_port must say disabled.",
			"After the reaction time: no frame on plane 1, and a PORT_STATUS_UPDATE without bit 2 on another plane.",
			"get_async_events: IBV_EVENT_PORT_ERR for port 2 (when the IUT offers the method).",
			"Enable port 2 again: data on plane 1 again, and IBV_EVENT_PORT_ACTIVE for port 2."},
		Pass: "port 2 silent while disabled, used again once enabled", Fail: "a frame on the disabled port, no update, or the port unused after enabling",
	}})
}

func str(s string) *string { return &s }

// ctlFmt16 puts EV Format profile 13 ONLINE: STEV with one 16-bit field,
// so the whole EV is in the UDP source port over IPv4 and IPv6 alike.
func ctlFmt16(t *T) {
	t.Call(control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: 13, State: str(control.ProfileOffline),
		Mode: str(control.FmtSTEV), Widths: []int{16}}, nil)
	t.Call(control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: 13, State: str(control.ProfileOnline)}, nil)
}

var goodBad = &[]string{control.EVGood, control.EVAssumedBad}

func ctlGenProfile(t *T) {
	count := uint32(16 * t.Planes())
	setup := func(t *T) {
		ctlFmt16(t)
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOffline),
			Mode: str(control.EVModeGenerated), FmtID: ptr(uint64(13)), Count: &count, MinActive: ptrU32(1), EventMask: goodBad,
			Fields: []control.EVField{{Width: 16, InitVal: 0xA500, MaxVal: 255, Mask: 0xFF}}}, nil)
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOnline)}, nil)
	}
	c := t.NewConn(ConnOptions{EVProfile: setup})
	var q control.QueryEVProfileResult
	if err := t.TryCall(control.MethodQueryEVProfile, control.IDParams{ID: 1}, &q); err == nil {
		t.Check(len(q.EVs) == int(count), "CTL-GEN-1", Evidence{}, fmt.Sprintf("%d generated EVs", count), "%d", len(q.EVs))
	}
	c.Traffic(2*t.s.tim.Settle, 4, 2048, nil)
	used := map[uint32]bool{}
	bad := 0
	for _, d := range c.Sent {
		if d.EV&0xFF00 != 0xA500 || d.EV&0xFF >= count {
			if bad++; bad == 1 {
				t.Fail("CTL-GEN-3", At(d.F), fmt.Sprintf("an expansion 0xA5nn, nn < %d", count), "EV %#x", d.EV)
			}
			continue
		}
		used[d.EV] = true
	}
	if len(c.Sent) == 0 {
		t.Inconclusive("the IUT sent no data")
	}
	t.Check(bad == 0, "CTL-EVX-3", Evidence{}, "every data packet on a generated EV's expansion", "%d of %d not", bad, len(c.Sent))
	t.Check(len(used) >= 2, "CTL-GEN-1", Evidence{}, "at least two generated EVs in use", "%d", len(used))
	c.WaitSends(len(c.posted), t.s.tim.Transfer)
}

// ctlEVSet is per EVs on each of ports ports, base + k for entry k: one
// range, which a device with MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE requires
// (CTL-OP-6).
func ctlEVSet(base uint32, ports, per int) []control.CtlEV {
	var out []control.CtlEV
	for p := 1; p <= ports; p++ {
		for i := 0; i < per; i++ {
			out = append(out, control.CtlEV{Val: fmt.Sprintf("%04x", base+uint32(len(out))), Port: p})
		}
	}
	return out
}

func ctlReplaceEV(t *T) {
	tim := t.s.tim
	planes := t.Planes()
	olds, news := ctlEVSet(0x5100, planes, 4), ctlEVSet(0x6100, planes, 4)
	count := uint32(len(olds))
	setup := func(t *T) {
		ctlFmt16(t)
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOffline),
			Mode: str(control.EVModeExplicit), FmtID: ptr(uint64(13)), Count: &count, MinActive: ptrU32(1), EventMask: goodBad}, nil)
		op := control.EVOp{Op: control.EVOpReplace}
		for i := range olds {
			op.Entries = append(op.Entries, control.EVOpEntry{New: &olds[i], State: control.EVGood})
		}
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &op}, nil)
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOnline)}, nil)
	}
	c := t.NewConn(ConnOptions{EVProfile: setup})
	in := func(set []control.CtlEV, ev uint32) bool {
		for _, e := range set {
			if e.Val == fmt.Sprintf("%04x", ev) {
				return true
			}
		}
		return false
	}
	replacedAt := Time(-1)
	badOld, badNew, after := 0, 0, 0
	c.Watch = func(f *RxFrame) {
		switch {
		case !isData(f):
		case replacedAt < 0:
			if !in(olds, f.EV) {
				if badOld++; badOld == 1 {
					t.Fail("CTL-OP-1", At(f), "an EV REPLACE_EV put into the profile (0x5100 + k)", describe(f))
				}
			}
		case f.At > replacedAt+tim.Reaction:
			after++
			if !in(news, f.EV) {
				if badNew++; badNew == 1 {
					t.Fail("CTL-OP-3", At(f), "only replacement EVs (0x6100 + k) after the REPLACE_EV", describe(f))
				}
			}
		}
	}
	c.Traffic(tim.Settle, 4, 2048, nil)
	if ok, _ := explicitRange(t); ok {
		c.WaitSends(len(c.posted), tim.Transfer)
		t.NotSupported("REPLACE_EV cannot move an explicit range's EVs one entry at a time (MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE, CTL-OP-6)")
	}
	op := control.EVOp{Op: control.EVOpReplace}
	for i := range olds {
		op.Entries = append(op.Entries, control.EVOpEntry{EV: olds[i], New: &news[i], State: control.EVGood, AllCopies: true})
	}
	err := t.TryCall(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &op}, nil)
	if err != nil {
		t.NotSupported("REPLACE_EV on an ONLINE profile (MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE): %v", err)
	}
	replacedAt = t.Now()
	c.TrafficUntil(2*tim.Settle, func() bool { return after > 0 })
	if after == 0 {
		t.Inconclusive("no data after the REPLACE_EV")
	}
	t.Check(badNew == 0, "CTL-OP-2", Evidence{}, "no replaced EV on the wire (ALL_COPIES)", "%d data packets of %d on old EVs", badNew, after)
	c.WaitSends(len(c.posted), tim.Transfer)
}

func ctlPortAdmin(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	offAt, onAt := Time(-1), Time(-1)
	warm, afterOn := 0, 0
	var updates []*RxFrame
	c.Watch = func(f *RxFrame) {
		if f.Pkt.BTH.Opcode == wire.OpEndpointReq && f.Pkt.ERTH.Op == wire.EPPortStatusUpdate && offAt >= 0 && onAt < 0 {
			updates = append(updates, f)
		}
		switch {
		case f.Plane != 1:
		case offAt < 0:
			if isData(f) {
				warm++
			}
		case onAt < 0 && f.At > offAt+tim.Reaction:
			t.Fail("CTL-PORT-2", At(f), "nothing on plane 1 while port 2 is disabled", describe(f))
		case onAt >= 0 && isData(f):
			afterOn++
		}
	}
	c.TrafficUntil(tim.Settle, func() bool { return warm > 0 })
	if warm == 0 {
		t.Inconclusive("the IUT sent no data on plane 1 before disabling port 2")
	}
	offAt = t.Now()
	var r control.PortAdminResult
	t.Call(control.MethodModifyPort, control.PortAdminParams{Port: 2, Enabled: ptr(false)}, &r)
	t.Call(control.MethodQueryPort, control.PortAdminParams{Port: 2}, &r)
	t.Check(!r.Enabled, "CTL-PORT-1", Evidence{}, "query_port: port 2 disabled", "enabled")
	// Updates are repeated at most once per millisecond (EP-PSU-4): give
	// a lost one time to come again.
	down := func() bool {
		for _, f := range updates {
			if f.Pkt.ERTH.PortStatusMask&(1<<2) == 0 {
				return true
			}
		}
		return false
	}
	c.Traffic(max(2*tim.Settle, 10*statemachine.Millisecond), 4, 2048, down)
	c.Traffic(2*tim.Settle, 4, 2048, nil)
	t.Check(down(), "CTL-PORT-2", Evidence{}, "a PORT_STATUS_UPDATE without port 2", "%d updates, none without it", len(updates))
	if got, ok := asyncEvent(t, control.AsyncPortErr, 0, 2); ok {
		t.Check(got, "CTL-AEV-2", Evidence{}, "IBV_EVENT_PORT_ERR for port 2", "none")
	}
	onAt = t.Now()
	t.Call(control.MethodModifyPort, control.PortAdminParams{Port: 2, Enabled: ptr(true)}, &r)
	c.TrafficUntil(2*tim.Settle, func() bool { return afterOn > 0 })
	t.Check(afterOn > 0, "CTL-PORT-1", Evidence{}, "data on plane 1 again once port 2 is enabled", "none in %.3f ms", float64(t.Now()-onAt)/1e6)
	if got, ok := asyncEvent(t, control.AsyncPortActive, 0, 2); ok {
		t.Check(got, "CTL-AEV-2", Evidence{}, "IBV_EVENT_PORT_ACTIVE for port 2", "none")
	}
	c.WaitSends(len(c.posted), tim.Transfer)
}

func init() { addCases(apiSRv6Cases) }

func apiSRv6Cases() {
	register(Case{Role: RoleRequester, Run: ctlSRv6Profile, IPv6: true, Case: conformance.Case{
		ID: "MRC-CTL-EVX-101", Title: "An SRv6 EV profile's expansions as outer SRv6 destinations",
		Assertion:    "With an explicit EV profile on an SRv6 EV Format profile, every data packet is SRv6-encapsulated with its EV's expansion (fixed locator, then the EV's four uSIDs) as the outer destination, and the inner EV names the same EV for feedback.",
		Requirements: []conformance.RequirementID{"CTL-EVX-6", "CTL-EVX-3", "CTL-EVX-2"},
		Level:        spec.Must,
		Steps: []string{"Put EV Format profile 14 ONLINE: SRV6, a 32-bit locator and four 16-bit uSIDs.",
			"Put EV profile 1 ONLINE in EXP mode with fields: the locator fixed to fc00:7e57, four 16-bit uSIDs from the EV; four EVs per port, entry k's uSIDs 0x1000, 0x2000, 0x3000, 0x4000+k (one range); query it.",
			"Have the IUT send writes: every data packet must carry an outer IPv6 header whose destination is fc00:7e57:1000:2000:3000:40kk:: for an EV of the profile, the same EV for every packet with the same inner EV."},
		Pass: "every data packet on its EV's SRv6 path", Fail: "a data packet without SRv6 headers or on an address outside the profile",
	}})
}

func ctlSRv6Profile(t *T) {
	planes := t.Planes()
	count := uint32(4 * planes)
	var evs []control.CtlEV
	want := map[[16]byte]bool{}
	for p := 1; p <= planes; p++ {
		for range 4 {
			k := len(evs) // one range: a device may require it (CTL-OP-6)
			evs = append(evs, control.CtlEV{Val: fmt.Sprintf("100020003000%04x", 0x4000+k), Port: p})
			want[[16]byte{0xfc, 0x00, 0x7e, 0x57, 0x10, 0x00, 0x20, 0x00, 0x30, 0x00, 0x40, byte(k)}] = true
		}
	}
	setup := func(t *T) {
		t.Call(control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: 14, State: str(control.ProfileOffline),
			Mode: str(control.FmtSRv6), Widths: []int{32, 16, 16, 16, 16}}, nil)
		t.Call(control.MethodModifyEVFmtProfile, control.ModifyEVFmtProfileParams{ID: 14, State: str(control.ProfileOnline)}, nil)
		fields := []control.EVField{{Width: 32, InitVal: 0xfc007e57}}
		for k := 0; k < 4; k++ {
			fields = append(fields, control.EVField{Width: 16, Mask: 0xFFFF})
		}
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOffline),
			Mode: str(control.EVModeExplicit), FmtID: ptr(uint64(14)), Count: &count, MinActive: ptrU32(1), EventMask: goodBad, Fields: fields}, nil)
		op := control.EVOp{Op: control.EVOpReplace}
		for i := range evs {
			op.Entries = append(op.Entries, control.EVOpEntry{New: &evs[i], State: control.EVGood})
		}
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, EVOp: &op}, nil)
		t.Call(control.MethodModifyEVProfile, control.ModifyEVProfileParams{ID: 1, State: str(control.ProfileOnline)}, nil)
	}
	c := t.NewConn(ConnOptions{EVProfile: setup})
	pathOf := map[uint32][16]byte{}
	bad, n := 0, 0
	c.Watch = func(f *RxFrame) {
		if !isData(f) {
			return
		}
		n++
		p := &f.Pkt
		ok := p.SRv6 && want[p.Outer.Dst]
		if prev, seen := pathOf[f.EV]; ok && seen && prev != p.Outer.Dst {
			ok = false
		}
		if ok {
			pathOf[f.EV] = p.Outer.Dst
		} else if bad++; bad == 1 {
			t.Fail("CTL-EVX-6", At(f), "an outer destination fc00:7e57:1000:2000:3000:40kk:: of the profile, one per EV", "SRv6 %v, outer %x", p.SRv6, p.Outer.Dst)
		}
	}
	c.Traffic(2*t.s.tim.Settle, 4, 2048, nil)
	if n == 0 {
		t.Inconclusive("the IUT sent no data")
	}
	t.Check(bad == 0, "CTL-EVX-3", Evidence{}, "every data packet on its EV's expanded SRv6 path", "%d of %d not", bad, n)
	t.Check(len(pathOf) >= 2, "CTL-EVX-6", Evidence{}, "at least two SRv6 paths in use", "%d", len(pathOf))
	c.WaitSends(len(c.posted), t.s.tim.Transfer)
}
