package statemachine

import (
	"errors"
	"testing"

	"github.com/openmrc/mrc/wire"
)

func TestSolicitedWriteImm(t *testing.T) {
	// WIRE-BTH-10, CTL-CQ-2: IBV_SEND_SOLICITED sets se on the last
	// packet of a WriteImm only; the responder's receive completion is
	// solicited and wakes a CQ armed for solicited events, an unsolicited
	// one does not.
	s := newPair(t)
	var se []wire.Opcode
	s.tap = func(o *Outgoing) {
		if o.Pkt.BTH.Opcode.IsWrite() && o.Pkt.BTH.SE {
			se = append(se, o.Pkt.BTH.Opcode)
		}
	}
	data := make([]byte, 3000)
	s.post(0, WorkRequest{WRID: 1, Opcode: OpWriteImm, RemoteVA: baseVA, RKey: 1, Data: data, Imm: 7, Solicited: true})
	s.post(0, WorkRequest{WRID: 2, Opcode: OpWriteImm, RemoteVA: baseVA, RKey: 1, Data: data[:10], Imm: 8})
	s.post(0, WorkRequest{WRID: 3, Opcode: OpWrite, RemoteVA: baseVA, RKey: 1, Data: data[:10], Solicited: true})
	s.run(Never)
	if len(se) != 1 || se[0] != wire.OpWriteLastImm {
		t.Fatalf("se set on %v, want the WRITE_LAST_IMM of WR 1 only", se)
	}
	var recv []Completion
	for _, c := range s.comps[1] {
		if c.Recv {
			recv = append(recv, c)
		}
	}
	if len(recv) != 2 || !recv[0].Solicited || recv[1].Solicited {
		t.Fatalf("receive completions %+v", recv)
	}
	var n CQNotify
	n.ReqNotify(true)
	if n.Offer(recv[1]) {
		t.Error("an unsolicited completion woke a CQ armed for solicited events")
	}
	if !n.Offer(recv[0]) || n.Events() != 1 {
		t.Error("a solicited completion did not wake the CQ")
	}
	if n.Offer(recv[0]) {
		t.Error("a second event without re-arming")
	}
}

func TestCQNotify(t *testing.T) {
	// CTL-CQ-1, CTL-CQ-3: one event per arming; arming for any widens a
	// solicited arming; an error completion wakes a solicited arming;
	// events are acknowledged before the CQ can go.
	var n CQNotify
	ok := Completion{Status: StatusSuccess}
	if n.Offer(ok) {
		t.Fatal("an event on an unarmed CQ")
	}
	n.ReqNotify(true)
	n.ReqNotify(false)
	if !n.Offer(ok) {
		t.Fatal("armed for any completion (widened), no event")
	}
	n.ReqNotify(false)
	n.ReqNotify(true) // does not narrow
	if !n.Offer(ok) {
		t.Fatal("armed for any completion, then solicited: the arming narrowed")
	}
	n.ReqNotify(true)
	if !n.Offer(Completion{Status: StatusRetryExceeded}) {
		t.Fatal("an error completion did not wake a solicited arming")
	}
	if n.Events() != 3 {
		t.Fatalf("%d events", n.Events())
	}
	if err := n.Destroy(); !errors.Is(err, EBUSY) {
		t.Errorf("destroy with 3 unacknowledged events: %v", err)
	}
	if err := n.Ack(4); !errors.Is(err, EINVAL) {
		t.Errorf("ack of 4 of 3: %v", err)
	}
	if err := n.Ack(3); err != nil || n.Destroy() != nil {
		t.Errorf("ack 3 then destroy: %v %v", err, n.Destroy())
	}
}

func TestAsyncEvents(t *testing.T) {
	// CTL-AEV-1: responder-detected errors raise QP_REQ_ERR or
	// QP_ACCESS_ERR; requester-side errors none. CTL-AEV-2: port
	// changes. CTL-AEV-3: the queue and its acknowledgements.
	var out Output
	for _, c := range []ErrorCause{CauseNoRecvWR, CauseAccess, CauseRetryExceeded, CauseRemoteAccess, CauseModify, CauseWIMMLimit} {
		out.Events = append(out.Events, Event{Kind: EvQPError, QPN: uint32(c), Reason: uint8(c)})
	}
	got := AsyncEventsOf(&out, nil)
	want := []AsyncEvent{{Type: AsyncQPReqErr, QPN: uint32(CauseNoRecvWR)}, {Type: AsyncQPAccessErr, QPN: uint32(CauseAccess)},
		{Type: AsyncQPReqErr, QPN: uint32(CauseWIMMLimit)}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("async events %+v, want %+v", got, want)
	}
	pe := PortEvents(0b0110, 0b1010, nil)
	if len(pe) != 2 || pe[0] != (AsyncEvent{Type: AsyncPortErr, Port: 2}) || pe[1] != (AsyncEvent{Type: AsyncPortActive, Port: 3}) {
		t.Fatalf("port events %+v", pe)
	}
	q := AsyncQueue{Cap: 2}
	q.Add(pe...)
	q.Add(want...)
	if q.Dropped != 3 {
		t.Errorf("dropped %d, want 3 beyond the cap of 2", q.Dropped)
	}
	if e, ok := q.Get(); !ok || e != pe[0] {
		t.Errorf("first event %+v", e)
	}
	if err := q.Ack(); err != nil || q.Ack() == nil {
		t.Errorf("one get, two acks: the second must fail")
	}
	q.Get()
	if _, ok := q.Get(); ok || q.Unacked() != 1 {
		t.Errorf("queue not empty, or %d unacked", q.Unacked())
	}
}

func TestContextVersions(t *testing.T) {
	// CTL-VER-1, CTL-VER-2, CTL-VER-3.
	if APIVersion(1, 0, 1) != 0x01000001 || MRCVersions.Current != APIVersion(1, 0, 1) || CtlVersions.Vendor != APIVersion(1, 0, 0) {
		t.Fatalf("versions %#x %+v", APIVersion(1, 0, 1), MRCVersions)
	}
	c, err := NewContext(0, 0, MRCVersions)
	if err != nil || c.APIUsed != MRCVersions.Current || c.QueryDeviceEx() != nil {
		t.Fatalf("default context: %+v %v", c, err)
	}
	if _, err := NewContext(APIVersion(1, 0, 2), 0, MRCVersions); !errors.Is(err, EINVAL) {
		t.Errorf("a version beyond the current: %v", err)
	}
	if _, err := NewContext(0, APIVersion(2, 0, 0), MRCVersions); !errors.Is(err, EINVAL) {
		t.Errorf("a vendor version beyond the current: %v", err)
	}
	old, err := NewContext(APIVersion(1, 0, 0), 0, CtlVersions)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(old.QueryDeviceEx(), ENOTSUP) {
		t.Error("query_device_ex on a 1.0.0 context")
	}
	e := EVEvent{State: EVAssumedBad}
	if old.EVEventView(e).State != EVUnknown || c.EVEventView(e).State != EVAssumedBad {
		t.Error("the EV event state field exists from 1.0.1 only")
	}
}

func TestEPBatch(t *testing.T) {
	// CTL-BAT-1, CTL-BAT-2, CTL-BAT-3, CTL-BAT-4, EP-GEN-7.
	a, b, _, pb := endpoints(t)
	var out Output
	probe := func(id uint16) EPRequest {
		return EPRequest{ReqID: id, Op: wire.EPEVProbe, Dst: pb, EV: 0x10 + uint32(id), Port: 1}
	}
	if _, err := a.SendBatch(0, wire.EPEVProbe, nil, Millisecond, &out); !errors.Is(err, EINVAL) {
		t.Errorf("empty batch: %v", err)
	}
	psu := EPRequest{ReqID: 9, Op: wire.EPPortStatusUpdate, Dst: pb, Port: 1, PortStatus: 2}
	if _, err := a.SendBatch(0, wire.EPEVProbe, []EPRequest{probe(1), psu}, Millisecond, &out); !errors.Is(err, EINVAL) || len(out.Packets) != 0 {
		t.Errorf("mixed batch: %v, %d packets sent", err, len(out.Packets))
	}
	if _, err := a.SendBatch(0, wire.EPEVProbe, []EPRequest{probe(1), probe(1)}, Millisecond, &out); !errors.Is(err, EINVAL) {
		t.Errorf("repeated id: %v", err)
	}
	many := make([]EPRequest, 65)
	for i := range many {
		many[i] = probe(uint16(100 + i))
	}
	if _, err := a.SendBatch(0, wire.EPEVProbe, many, Millisecond, &out); !errors.Is(err, EAGAIN) {
		t.Errorf("65 requests, 64 slots: %v", err)
	}
	bt, err := a.SendBatch(0, wire.EPEVProbe, []EPRequest{probe(1), probe(2), probe(3)}, Millisecond, &out)
	if err != nil || len(out.Packets) != 3 {
		t.Fatalf("batch: %v, %d packets", err, len(out.Packets))
	}
	reqs := out.Packets
	out = Output{}
	// Answers to 3 then 1 arrive; 2 is lost.
	var rsp Output
	b.Receive(100, 1, &reqs[2].Pkt, &rsp)
	b.Receive(200, 1, &reqs[0].Pkt, &rsp)
	a.Receive(300, 1, &rsp.Packets[0].Pkt, &out)
	a.Receive(400, 1, &rsp.Packets[1].Pkt, &out)
	bt.Collect(&out)
	if bt.Done(500) {
		t.Fatal("done with request 2 unanswered before the timeout")
	}
	if !bt.Done(Millisecond) {
		t.Fatal("not done at the timeout")
	}
	rs, err := bt.Result()
	if !errors.Is(err, ETIMEDOUT) || len(rs) != 2 || rs[0].ReqID != 3 || rs[1].ReqID != 1 || rs[0].Port != 1 {
		t.Fatalf("result %+v, %v: want 3 then 1 and ETIMEDOUT", rs, err)
	}
	out = Output{}
	a.Receive(2*Millisecond, 1, &rsp.Packets[0].Pkt, &out) // late: not buffered into the closed batch
	bt.Collect(&out)
	if rs, _ := bt.Result(); len(rs) != 2 {
		t.Error("a response after the call returned joined the batch")
	}
	if _, err := a.SendBatch(0, wire.EndpointOp(7), []EPRequest{probe(5)}, Millisecond, &out); !errors.Is(err, ENOTSUP) {
		t.Errorf("unknown op: %v", err)
	}
}
