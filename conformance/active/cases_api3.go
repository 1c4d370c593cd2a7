package active

import (
	"errors"
	"fmt"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// QP asynchronous events and contexts through the control channel
// (spec/36-api-objects.md: CTL-AEV-4, CTL-AEV-5, CTL-VER-2, CTL-VER-3).

func init() { addCases(api3Cases) }

func api3Cases() {
	register(Case{Role: RoleResponder, Run: ctlQPEvents, Case: conformance.Case{
		ID: "MRC-CTL-AEV-101", Title: "IBV_EVENT_COMM_EST and IBV_EVENT_QP_FATAL",
		Assertion:    "A QP in RTR raises IBV_EVENT_COMM_EST when the first request packet reaches it, once; in RTS with nothing outstanding, an AETH NAK moves it to ERROR and, no completion reporting the error, raises IBV_EVENT_QP_FATAL.",
		Requirements: []conformance.RequirementID{"CTL-AEV-4", "CTL-AEV-5", "CTL-AEV-3"},
		Level:        spec.Must,
		Steps: []string{"Bring the IUT's QP to RTR only; the tester writes 64 bytes twice.",
			"get_async_events: exactly one COMM_EST naming the QP.",
			"Move the QP to RTS; the tester sends an AETH NAK (remote access error) for the IUT's next PSN, nothing being posted.",
			"query_qp: ERROR; get_async_events: QP_FATAL naming the QP."},
		Pass: "one COMM_EST, then QP_FATAL", Fail: "no COMM_EST, more than one, or no QP_FATAL for an error no completion reports",
	}})
	register(Case{Role: RoleRequester, Run: ctlCompChannel, Case: conformance.Case{
		ID: "MRC-CTL-CQ-102", Title: "A completion channel shared by two CQs",
		Assertion:    "The CQ events of two CQs created on one completion channel come out of get_cq_event in the order they were raised, each naming its CQ and counting on it only once got; the channel cannot be destroyed while CQs are on it.",
		Requirements: []conformance.RequirementID{"CTL-CQ-5", "CTL-CQ-6", "CTL-CQ-1"},
		Level:        spec.Must,
		Steps: []string{"Create a completion channel and the IUT's QP A on it; create QP B on it too, bring B to INIT and post a receive WR.",
			"Arm both CQs; move B to ERROR (a flush completion: an event for B); then the IUT writes on A (a send completion: an event for A).",
			"get_cq_events on A before any get_cq_event: 0.",
			"get_cq_event: B, then A, then none; get_cq_events on A: 1.",
			"destroy_comp_channel: refused (EBUSY) while A and B are on it."},
		Pass: "B then A, counted once got, the channel kept", Fail: "an event missing, out of order, counted before it was got, or the channel destroyed under its CQs",
	}})
	register(Case{Role: RoleRequester, Run: ctlSQD, Case: conformance.Case{
		ID: "MRC-CTL-AEV-102", Title: "SQD drains the send queue and raises IBV_EVENT_SQ_DRAINED",
		Assertion:    "A QP moved to SQD with IBV_QP_EN_SQD_ASYNC_NOTIFY finishes the message it started, starts none posted later, raises IBV_EVENT_SQ_DRAINED once the message is acknowledged, and sends the waiting message once back in RTS.",
		Requirements: []conformance.RequirementID{"QP-ST-12", "CTL-AEV-6"},
		Level:        spec.Must,
		Steps: []string{"The IUT posts a 256 KiB write (twice its MPR window); while it is partly sent, move the QP to SQD with en_sqd_async_notify and post a 1 KiB write.",
			"Until the first write completes and the IUT settles: every data packet belongs to the first write; only it completes.",
			"get_async_events: SQ_DRAINED naming the QP.",
			"Move the QP to RTS: the second write is sent and completes."},
		Pass: "the started message finished, the new one held until RTS, SQ_DRAINED raised", Fail: "a new message started in SQD, the started one stalled, or no SQ_DRAINED",
	}})
	register(Case{Role: RoleControl, Run: ctlContexts, Case: conformance.Case{
		ID: "MRC-CTL-VER-102", Title: "Contexts: API version selection and query_device_ex",
		Assertion:    "create_context with API version 0 uses the current one; a version beyond the current is refused; a context using 1.0.0 has no query_device_ex, one using 1.0.1 has it.",
		Requirements: []conformance.RequirementID{"CTL-VER-2", "CTL-VER-3"},
		Level:        spec.Must,
		Steps: []string{"query_version; create_context with versions 0: the context must use the current MRC and vendor versions.",
			"create_context with the current version's subminor plus one: invalid_argument.",
			"query_device_ex on the first context: success; on a context created for 1.0.0: unsupported (ENOTSUP)."},
		Pass: "versions selected and gated as the API says", Fail: "a version beyond the current accepted, or query_device_ex on the wrong contexts",
	}})
}

func ctlQPEvents(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{StopAtRTR: true})
	c.testerWrite(41, statemachine.OpWrite, false)
	c.testerWrite(42, statemachine.OpWrite, false)
	var ae control.AsyncEventsResult
	if err := t.TryCall(control.MethodGetAsyncEvents, nil, &ae); err != nil {
		t.Require(err, "get_async_events")
	}
	est := 0
	for _, e := range ae.Events {
		if e.Type == control.AsyncCommEst && e.QPN == c.IUT {
			est++
		}
	}
	t.Check(est == 1, "CTL-AEV-4", Evidence{}, "one COMM_EST for the QP after two writes in RTR", "%d", est)

	c.ToRTS()
	p := &wire.Packet{}
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: c.IUT, PSN: c.SQPSN}
	p.AETH = wire.AETH{Syndrome: wire.AETHTypeNAK<<5 | 2, MSN: 0} // NAK code 2: remote access error
	c.Send(p, 0, c.TEV(0, 0), Impair{})
	t.Sleep(tim.Settle)
	q := c.QueryQP()
	t.Check(q.State == control.StateError, "CTL-AEV-5", Evidence{}, "the QP in ERROR after the AETH NAK", "%s", q.State)
	fatal, ok := asyncEvent(t, control.AsyncQPFatal, c.IUT, 0)
	if !ok {
		t.Inconclusive("get_async_events failed")
	}
	t.Check(fatal, "CTL-AEV-5", Evidence{}, "QP_FATAL for the QP: no work request reported the error", "none")
}

func ctlContexts(t *T) {
	var v control.QueryVersionResult
	t.Call(control.MethodQueryVersion, nil, &v)
	var r control.ContextResult
	t.Call(control.MethodCreateContext, control.CreateContextParams{}, &r)
	t.Check(r.APIVersion == v.MRC.Current && r.VendorVersion == v.MRC.Vendor, "CTL-VER-2", Evidence{},
		"versions 0 select the current ones", "API %#x vendor %#x, current %#x %#x", r.APIVersion, r.VendorVersion, v.MRC.Current, v.MRC.Vendor)
	err := t.TryCall(control.MethodCreateContext, control.CreateContextParams{APIVersion: v.MRC.Current + 1}, nil)
	t.Check(errors.Is(err, control.ErrInvalidArgument), "CTL-VER-2", Evidence{}, "a version beyond the current refused (invalid_argument)", "%v", err)
	if err := t.TryCall(control.MethodQueryDeviceEx, control.ContextParams{Context: r.Context}, nil); err != nil {
		t.Require(err, "query_device_ex on a current context")
	}
	var old control.ContextResult
	if err := t.TryCall(control.MethodCreateContext, control.CreateContextParams{APIVersion: statemachine.APIVersion(1, 0, 0)}, &old); err != nil {
		t.Check(v.MRC.LastSupported > statemachine.APIVersion(1, 0, 0), "CTL-VER-2", Evidence{}, "1.0.0 accepted while supported", "%v", err)
		return
	}
	err = t.TryCall(control.MethodQueryDeviceEx, control.ContextParams{Context: old.Context}, nil)
	t.Check(errors.Is(err, control.ErrUnsupported), "CTL-VER-3", Evidence{}, "no query_device_ex on a 1.0.0 context (unsupported)", "%v", err)
	t.Call(control.MethodDestroyContext, control.ContextParams{Context: old.Context}, nil)
	t.Call(control.MethodDestroyContext, control.ContextParams{Context: r.Context}, nil)
}

func ctlCompChannel(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{CompChannel: true})
	var b control.QPNResult
	t.Call(control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 4, MaxRecvWR: 4, Channel: c.Channel}, &b)
	one, zero := uint64(1), 0
	t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: b.QPN, State: control.StateInit,
		Attr: control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: ptr(0xF)}}, nil)
	t.Call(control.MethodPostRecv, control.PostRecvParams{QPN: b.QPN, WRID: 77}, nil)
	t.Call(control.MethodReqNotifyCQ, control.ReqNotifyParams{QPN: b.QPN}, nil)
	t.Call(control.MethodReqNotifyCQ, control.ReqNotifyParams{QPN: c.IUT}, nil)
	t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: b.QPN, State: control.StateError}, nil)
	c.Post(7101, control.OpRDMAWrite, 512, 0)
	if len(c.WaitSends(1, tim.Transfer)) == 0 {
		t.Inconclusive("the IUT's write did not complete")
	}
	var n control.CQEventsResult
	t.Call(control.MethodGetCQEvents, control.CQEventsParams{QPN: c.IUT}, &n)
	t.Check(n.Events == 0, "CTL-CQ-5", Evidence{}, "no event counted on A before get_cq_event", "%d", n.Events)
	var got []uint32
	for range 3 {
		var ev control.CQEventResult
		t.Call(control.MethodGetCQEvent, control.ChannelParams{Channel: c.Channel}, &ev)
		if ev.Found {
			got = append(got, ev.QPN)
		}
	}
	t.Check(len(got) == 2 && got[0] == b.QPN && got[1] == c.IUT, "CTL-CQ-5", Evidence{},
		fmt.Sprintf("get_cq_event: %#x (B) then %#x (A), then none", b.QPN, c.IUT), "%#x", got)
	t.Call(control.MethodGetCQEvents, control.CQEventsParams{QPN: c.IUT, Ack: true}, &n)
	t.Check(n.Events == 1, "CTL-CQ-5", Evidence{}, "one event counted on A once got", "%d", n.Events)
	err := t.TryCall(control.MethodDestroyCompChannel, control.ChannelParams{Channel: c.Channel}, nil)
	t.Check(errors.Is(err, control.ErrInvalidState), "CTL-CQ-6", Evidence{}, "destroy_comp_channel refused while CQs are on it (invalid_state)", "%v", err)
}

// testerWrite has the tester's QP write 64 bytes to the IUT at wrid*64
// (a WriteImm carries wrid as its immediate data) and waits for its
// completion, then lets the IUT settle.
func (c *Conn) testerWrite(wrid uint64, op statemachine.Opcode, solicited bool) {
	t, tim := c.t, c.t.s.tim
	wr := statemachine.WorkRequest{WRID: wrid, Opcode: op, RemoteVA: c.DstMR.VA + wrid*64,
		RKey: c.DstMR.RKey, Data: fill(int(wrid), 64), Solicited: solicited}
	if op == statemachine.OpWriteImm {
		wr.Imm = uint32(wrid)
	}
	if err := c.ref.Post(t.Now(), wr, &c.out); err != nil {
		t.Fatalf("tester post: %v", err)
	}
	c.flush()
	n := len(c.RefComps)
	c.Run(t.Now()+tim.Transfer, func() bool { return len(c.RefComps) > n })
	c.Run(t.Now()+tim.Settle, nil)
}

func ctlSQD(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	firstMSN, inSQD, late := -1, true, 0
	c.Watch = func(f *RxFrame) {
		if !isData(f) {
			return
		}
		if firstMSN < 0 {
			firstMSN = int(f.Pkt.METH.MSN)
		}
		if inSQD && int(f.Pkt.METH.MSN) != firstMSN {
			if late++; late == 1 {
				t.Fail("QP-ST-12", At(f), "only the message started before SQD", "%s", describe(f))
			}
		}
	}
	c.Post(7201, control.OpRDMAWrite, 256<<10, 0)
	yes := true
	err := t.TryCall(control.MethodModifyQP, control.ModifyQPParams{QPN: c.IUT, State: control.StateSQD, Attr: control.QPAttr{SQDNotify: &yes}}, nil)
	if errors.Is(err, control.ErrInvalidArgument) || errors.Is(err, control.ErrInvalidState) {
		t.NotSupported("modify_qp to SQD: %v", err)
	}
	t.Require(err, "modify_qp to SQD")
	c.Post(7202, control.OpRDMAWrite, 1024, 0)
	c.WaitSends(1, tim.Transfer)
	c.Run(t.Now()+tim.Settle, nil)
	c.Poll()
	s := c.Sends()
	t.Check(len(s) == 1 && s[0].WRID == 7201 && s[0].Status == control.WCSuccess, "QP-ST-12", Evidence{},
		"in SQD the started write completes and the later one waits", "%+v", s)
	drained, ok := asyncEvent(t, control.AsyncSQDrained, c.IUT, 0)
	if !ok {
		t.Inconclusive("get_async_events failed")
	}
	t.Check(drained, "CTL-AEV-6", Evidence{}, "SQ_DRAINED for the QP", "none")
	inSQD = false
	t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: c.IUT, State: control.StateRTS}, nil)
	s = c.WaitSends(2, tim.Transfer)
	t.Check(len(s) == 2 && s[1].WRID == 7202 && s[1].Status == control.WCSuccess, "QP-ST-12", Evidence{},
		"back in RTS the waiting write is sent and completes", "%+v", s)
	c.CheckMem("QP-ST-12")
}
