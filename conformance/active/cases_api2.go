package active

import (
	"fmt"
	"net"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The notification side of the API through the control channel and the
// wire: solicited events and CQ notification, asynchronous port events,
// API versions, vendor_cfg, and mrc_ctl_ep_batch_send_wait
// (spec/36-api-objects.md).

func init() { addCases(api2Cases) }

func api2Cases() {
	register(Case{Role: RoleRequester, Run: ctlSolicited, Case: conformance.Case{
		ID: "MRC-CTL-CQ-101", Title: "Solicited events: the se flag and CQ notification",
		Assertion:    "A WriteImm posted with IBV_SEND_SOLICITED carries se on its last packet only, one posted without carries none; a CQ armed for solicited events raises no event for an unsolicited WriteImm's receive completion and one for a solicited one.",
		Requirements: []conformance.RequirementID{"CTL-CQ-2", "CTL-CQ-1", "WIRE-BTH-10"},
		Level:        spec.Must,
		Steps: []string{"The IUT posts a 3000-byte WriteImm with solicited and one without; record the se flag of every data packet.",
			"Arm the IUT's CQ for solicited events (req_notify_cq solicited_only); the tester writes a WriteImm without se: no CQ event.",
			"The tester writes a WriteImm with se: one CQ event; acknowledge it."},
		Pass: "se exactly on the solicited WriteImm's last packet, an event only for it", Fail: "se missing or misplaced, or an event for an unsolicited completion",
	}})
	register(Case{Role: RoleControl, Run: ctlVersionsVendor, Case: conformance.Case{
		ID: "MRC-CTL-VER-101", Title: "API versions and vendor_cfg through the control channel",
		Assertion:    "query_version reports each API's current version at or above its last supported one, in the MAJOR<<24|MINOR<<16|SUBMINOR encoding; MRC_QP_VENDOR_CFG given at INIT is returned by query_qp.",
		Requirements: []conformance.RequirementID{"CTL-VER-1", "CTL-QPH-3", "CTL-QPH-1"},
		Level:        spec.Must,
		Steps: []string{"Query the versions: current ≥ last supported, vendor current ≥ vendor last supported, for the MRC and the control API.",
			"Create a QP hint and a QP naming it with vendor_cfg a5c3 at INIT; destroy_qp_hint must be refused while the QP names it; query_qp must return a5c3 (when the IUT accepts vendor_cfg)."},
		Pass: "consistent versions, vendor_cfg returned", Fail: "versions the wrong way round, or vendor_cfg lost",
	}})
	register(Case{Role: RoleEndpoint, Run: ctlBatch, Case: conformance.Case{
		ID: "MRC-CTL-BAT-101", Title: "mrc_ctl_ep_batch_send_wait: arrival order, timeout, no mixing",
		Assertion:    "A batch mixing operation types is refused before anything is sent; a batch of three EV probes returns, after the timeout, the two answered in the order the answers arrived, ETIMEDOUT for the third, and adj_svc_time 0.",
		Requirements: []conformance.RequirementID{"CTL-BAT-3", "CTL-BAT-1", "CTL-BAT-4", "CTL-SVC-1"},
		Level:        spec.Must, Features: []string{"endpoint_ops"},
		Steps: []string{"ep_batch_send an EV probe with a PORT_STATUS_UPDATE: refused, no frame.",
			"ep_batch_send probes 0x301, 0x302, 0x303 with a 2 ms timeout; the tester answers 0x303, then 0x301, and never 0x302.",
			"ep_batch_result after the timeout: done, ETIMEDOUT, responses 0x303 then 0x301, adj_svc_time 0."},
		Pass: "arrival order, ETIMEDOUT, nothing else", Fail: "a mixed batch sent, responses reordered or invented, no timeout, or adj_svc_time set",
	}})
}

// asyncEvent reports whether get_async_events returns an event of type
// typ for qpn (0: any) and port (0: any); ok is false when the IUT lacks
// the method.
func asyncEvent(t *T, typ string, qpn uint32, port int) (found, ok bool) {
	var ae control.AsyncEventsResult
	if err := t.TryCall(control.MethodGetAsyncEvents, nil, &ae); err != nil {
		return false, false
	}
	for _, e := range ae.Events {
		if e.Type == typ && (qpn == 0 || e.QPN == qpn) && (port == 0 || e.Port == port) {
			return true, true
		}
	}
	return false, true
}

func ctlSolicited(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	var se []*RxFrame
	var lastImm *RxFrame
	c.Watch = func(f *RxFrame) {
		if !isData(f) {
			return
		}
		if f.Pkt.BTH.SE {
			se = append(se, f)
		}
		if f.Pkt.BTH.Opcode == wire.OpWriteLastImm || f.Pkt.BTH.Opcode == wire.OpWriteOnlyImm {
			if f.Pkt.ImmDt == 0x5011 {
				lastImm = f
			}
		}
	}
	c.Post(7001, control.OpRDMAWriteWithImm, 3000, 0x5011)
	// Conn.Post has no solicited flag: post the solicited WriteImm
	// directly.
	t.Call(control.MethodPostSend, control.PostSendParams{QPN: c.IUT, WRID: 7002, Opcode: control.OpRDMAWriteWithImm,
		Local: &control.SGE{MR: c.SrcMR.MR, Offset: 0, Length: 3000}, Remote: control.Remote{VA: testerVA + 8192, RKey: testerRKey},
		Imm: 0x5012, Solicited: true}, nil)
	c.posted = append(c.posted, posted{wrid: 7002, off: 0, n: 3000, op: control.OpRDMAWriteWithImm, imm: 0x5012})
	c.WaitSends(2, tim.Transfer)
	good := 0
	for _, f := range se {
		ok := f.Pkt.BTH.Opcode == wire.OpWriteLastImm && f.Pkt.ImmDt == 0x5012
		if t.Check(ok, "CTL-CQ-2", At(f), "se only on the solicited WriteImm's last packet", describe(f)) {
			good++
		}
	}
	t.Check(good > 0, "CTL-CQ-2", Evidence{}, "se on the last packet of the WriteImm posted with IBV_SEND_SOLICITED", "no packet with se")
	if lastImm == nil {
		t.Inconclusive("the unsolicited WriteImm's last packet was not seen")
	}

	// The IUT as responder.
	if err := t.TryCall(control.MethodReqNotifyCQ, control.ReqNotifyParams{QPN: c.IUT, SolicitedOnly: true}, nil); err != nil {
		t.Require(err, "req_notify_cq")
	}
	write := func(wrid uint64, solicited bool) { c.testerWrite(wrid, statemachine.OpWriteImm, solicited) }
	var ev control.CQEventsResult
	write(31, false)
	t.Call(control.MethodGetCQEvents, control.CQEventsParams{QPN: c.IUT}, &ev)
	t.Check(ev.Events == 0, "CTL-CQ-1", Evidence{}, "no CQ event for an unsolicited receive completion (armed solicited only)", "%d events", ev.Events)
	write(32, true)
	t.Call(control.MethodGetCQEvents, control.CQEventsParams{QPN: c.IUT, Ack: true}, &ev)
	t.Check(ev.Events == 1, "CTL-CQ-1", Evidence{}, "one CQ event for the solicited WriteImm", "%d events", ev.Events)
	c.Poll()
	sol := 0
	for _, cp := range c.comps {
		if cp.Recv && cp.Imm == 32 && cp.Solicited {
			sol++
		}
	}
	t.Check(sol == 1, "CTL-CQ-2", Evidence{}, "the solicited WriteImm's receive completion marked solicited", "%d", sol)
}

func ctlVersionsVendor(t *T) {
	var v control.QueryVersionResult
	if err := t.TryCall(control.MethodQueryVersion, nil, &v); err != nil {
		t.Require(err, "query_version")
	}
	for name, x := range map[string]control.Versions{"MRC": v.MRC, "control": v.Ctl} {
		t.Check(x.Current >= x.LastSupported && x.Current != 0, "CTL-VER-1", Evidence{},
			fmt.Sprintf("%s API: current ≥ last supported, current set", name), "current %#x, last supported %#x", x.Current, x.LastSupported)
		t.Check(x.Vendor >= x.LastSupportedVendor, "CTL-VER-1", Evidence{},
			fmt.Sprintf("%s vendor API: current ≥ last supported", name), "vendor %#x, last supported %#x", x.Vendor, x.LastSupportedVendor)
	}
	t.Call(control.MethodReset, nil, nil)
	prof := control.EVProfile{ID: 1, EVs: []control.EV{{Value: 0x4101, Port: 1}, {Value: 0x4102, Port: 1}}}
	t.Call(control.MethodSetEVProfile, prof, nil)
	t.Call(control.MethodSetCCProfile, control.CCProfile{ID: 1, Algorithm: control.CCNone}, nil)
	var q control.QPNResult
	t.Call(control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 8, MaxRecvWR: 8}, &q)
	var hint control.QPHintResult
	hintErr := t.TryCall(control.MethodCreateQPHint, control.QPHint{NumQPsPerPeer: 2, NumSendPeers: 8}, &hint)
	one, zero, vc := uint64(1), 0, "a5c3"
	err := t.TryCall(control.MethodModifyQP, control.ModifyQPParams{QPN: q.QPN, State: control.StateInit,
		Attr: control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: ptr(0xF), VendorCfg: &vc, Hint: &hint.Hint}}, nil)
	if err == nil && hintErr == nil {
		err := t.TryCall(control.MethodDestroyQPHint, control.QPHintParams(hint), nil)
		t.Check(err != nil, "CTL-QPH-1", Evidence{}, "destroy_qp_hint refused (EBUSY) while a QP names the hint", "destroyed")
	}
	if err != nil {
		t.Logf("vendor_cfg refused at INIT (%v): the IUT defines none", err)
		return
	}
	s := t.s
	tq := uint32(testerQPNs | 0xFFFF)
	av := control.AV{MAC: net.HardwareAddr(s.tester.MACs[0][:]).String(), IP: s.tester.IP.String()}
	mtu, w, m, psn := 1024, 8, 1, uint32(100)
	caps := []string{}
	t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: q.QPN, State: control.StateRTR, Attr: control.QPAttr{
		MaxWIMMDest: &w, MPRDest: &m, Cap: &caps, PathMTU: &mtu, DestQPN: &tq, RQPSN: &psn, AV: &av}}, nil)
	var r control.QueryQPResult
	t.Call(control.MethodQueryQP, control.QPNParams(q), &r)
	t.Check(r.VendorCfg == vc, "CTL-QPH-3", Evidence{}, "query_qp returns vendor_cfg a5c3", "%q", r.VendorCfg)
	t.Call(control.MethodReset, nil, nil)
}

func ctlBatch(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	dst := control.Peer{MAC: net.HardwareAddr(t.s.tester.MACs[0][:]).String(), IP: t.s.tester.IP.String()}
	probe := func(id uint16) control.EPSendParams {
		return control.EPSendParams{Op: control.EPEVProbe, ReqID: id, Dst: dst, EV: 0x4101, Port: 1}
	}
	mine := func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpEndpointReq && f.Pkt.BTH.PSN&0xFFFF >= 0x300 && f.Pkt.BTH.PSN&0xFFFF < 0x400
	}
	byID := map[uint32]*RxFrame{}
	c.Watch = func(f *RxFrame) {
		if mine(f) {
			byID[f.Pkt.BTH.PSN&0xFFFF] = f
		}
	}
	c.In = func(f *RxFrame) Impair { return Impair{Drop: mine(f)} } // the case answers by hand, in its order
	psu := control.EPSendParams{Op: control.EPPortStatus, ReqID: 0x3FF, Dst: dst, Port: 1, PortStatus: 2}
	err := t.TryCall(control.MethodEPBatchSend, control.EPBatchSendParams{Op: control.EPEVProbe,
		Requests: []control.EPSendParams{probe(0x3FE), psu}, TimeoutNs: int64(2 * statemachine.Millisecond)}, nil)
	if control.IsNotSupported(err) {
		t.NotSupported("ep_batch_send: %v", err)
	}
	c.Run(t.Now()+tim.Settle, nil)
	t.Check(err != nil && len(byID) == 0, "CTL-BAT-1", Evidence{}, "a batch mixing EV_PROBE and PORT_STATUS_UPDATE refused, nothing sent",
		"error %v, %d requests sent", err, len(byID))
	// Three probes; the tester answers the third, then the first, never
	// the second. A lost request (lossy link) spoils a try. The batch's
	// timeout outlasts the tester's wait for the requests and its two
	// answers on the transport's clock (2 ms expired before either answer
	// over real sockets).
	batchTO := max(2*statemachine.Millisecond, 2*(tim.Answer+tim.Reaction))
	for try := 0; try < tim.Tries; try++ {
		base := uint16(0x300 + 0x10*try)
		var b control.EPBatchSendResult
		t.Call(control.MethodEPBatchSend, control.EPBatchSendParams{Op: control.EPEVProbe,
			Requests: []control.EPSendParams{probe(base + 1), probe(base + 2), probe(base + 3)}, TimeoutNs: int64(batchTO)}, &b)
		c.Run(t.Now()+tim.Answer, func() bool { return byID[uint32(base+1)] != nil && byID[uint32(base+3)] != nil })
		f1, f3 := byID[uint32(base+1)], byID[uint32(base+3)]
		if f1 != nil && f3 != nil {
			for _, f := range []*RxFrame{f3, f1} {
				c.ep.Receive(t.Now(), f.Plane+1, &f.Pkt, &c.out)
				c.flushEP()
				c.Run(t.Now()+tim.Reaction, nil)
			}
		}
		var r control.EPBatchResult
		c.Run(t.Now()+batchTO+tim.Settle, nil)
		t.Call(control.MethodEPBatchResult, control.EPBatchResultParams(b), &r)
		if f1 == nil || f3 == nil {
			continue
		}
		ctlBatchResult(t, c, r, base, byID[uint32(base+2)], b.Batch)
		return
	}
	t.Inconclusive("the batch's requests did not arrive in %d tries", tim.Tries)
}

// ctlBatchResult judges a batch of base+1..3 whose answers went base+3,
// base+1, and base+2 never (until after the call returned).
func ctlBatchResult(t *T, c *Conn, r control.EPBatchResult, base uint16, f2 *RxFrame, batch uint32) {
	tim := t.s.tim
	if !t.Check(r.Done, "CTL-BAT-3", Evidence{}, "the batch done after its timeout", "not done") {
		return
	}
	var ids []uint16
	for _, x := range r.Responses {
		ids = append(ids, x.ReqID)
		t.Check(!x.AdjSvcTime, "CTL-SVC-1", Evidence{}, "adj_svc_time 0: no service time travels", "set for %#x", x.ReqID)
	}
	t.Check(len(ids) == 2 && ids[0] == base+3 && ids[1] == base+1, "CTL-BAT-3", Evidence{},
		fmt.Sprintf("responses %#x then %#x (arrival order)", base+3, base+1), "%#x", ids)
	t.Check(r.Error == "ETIMEDOUT", "CTL-BAT-3", Evidence{}, fmt.Sprintf("ETIMEDOUT: %#x unanswered", base+2), "%q", r.Error)
	// A late answer does not reach the finished batch.
	if f2 != nil {
		c.ep.Receive(t.Now(), f2.Plane+1, &f2.Pkt, &c.out)
		c.flushEP()
		c.Run(t.Now()+tim.Settle, nil)
	}
	err := t.TryCall(control.MethodEPBatchResult, control.EPBatchResultParams{Batch: batch}, &r)
	t.Check(err != nil, "CTL-BAT-4", Evidence{}, "the finished batch returns nothing more", "%+v", r)
}
