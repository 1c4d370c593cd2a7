package statemachine

import (
	"slices"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// asyncOf returns the asynchronous events of o's output so far.
func asyncOf(o *Output) []AsyncEvent { return AsyncEventsOf(o, nil) }

// TestCommEst: a QP in RTR raises IBV_EVENT_COMM_EST when it accepts its
// first request packet, once; a packet it drops (another partition)
// raises none, a QP in RTS raises none, and RESET starts over (CTL-AEV-4,
// AMB-96).
func TestCommEst(t *testing.T) {
	q, err := testConfig(qpnA).new()
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	a := testAttr(qpnB)
	toRTR := func() {
		t.Helper()
		for _, s := range []struct {
			to QPState
			m  AttrMask
		}{{StateInit, MaskInit}, {StateRTR, MaskRTR}} {
			if err := q.Modify(0, s.to, a, s.m, &out); err != nil {
				t.Fatal(err)
			}
		}
		out.Reset()
	}
	toRTR()
	bad := dataPkt(0, wire.OpWriteOnly, 64, 0x100)
	bad.BTH.PKey = 0x7FFF
	q.Receive(1, 1, bad, &out)
	if ev := asyncOf(&out); len(ev) != 0 {
		t.Fatalf("a packet of another partition raised %+v", ev)
	}
	q.Receive(2, 1, dataPkt(0, wire.OpWriteOnly, 64, 0x100), &out)
	q.Receive(3, 1, dataPkt(1, wire.OpWriteOnly, 64, 0x100), &out)
	want := []AsyncEvent{{Type: AsyncCommEst, QPN: qpnA}}
	if ev := asyncOf(&out); !slices.Equal(ev, want) {
		t.Fatalf("two packets in RTR raised %+v, want %+v once", ev, want)
	}
	out.Reset()
	if err := q.Modify(4, StateRTS, a, MaskRTS, &out); err != nil {
		t.Fatal(err)
	}
	q.Receive(5, 1, dataPkt(2, wire.OpWriteOnly, 64, 0x100), &out)
	if ev := asyncOf(&out); len(ev) != 0 {
		t.Fatalf("a packet in RTS raised %+v", ev)
	}
	if err := q.Modify(6, StateReset, a, 0, &out); err != nil {
		t.Fatal(err)
	}
	toRTR()
	q.Receive(7, 1, probePkt(9, 0x100), &out)
	if ev := asyncOf(&out); !slices.Equal(ev, want) {
		t.Fatalf("a probe after RESET and RTR raised %+v, want %+v", ev, want)
	}
}

// TestQPFatal: an error the requester meets raises IBV_EVENT_QP_FATAL only
// when no work request completes with it; with one outstanding its
// completion reports the error and no event is raised; the application's
// modify to ERROR raises none (CTL-AEV-5, CTL-AEV-1, AMB-70).
func TestQPFatal(t *testing.T) {
	fatal := []AsyncEvent{{Type: AsyncQPFatal, QPN: qpnA}}
	for _, c := range []struct {
		name string
		busy bool
		pkt  *wire.Packet
		want []AsyncEvent
	}{
		{"AETH NAK access idle", false, aethPkt(0, 0x60|aethNAKRemoteAccess), fatal},
		{"AETH NAK invalid idle", false, aethPkt(0, 0x60|wire.AETHNAKInvalidRequest), fatal},
		{"AETH NAK busy", true, aethPkt(0, 0x60|aethNAKRemoteAccess), nil},
		{"UNEXP_EVENT busy", true, nackPkt(0, 0x100, wire.NACKUnexpEvent), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOne(t, nil)
			if c.busy {
				o.write(1, 1024, false)
				o.take()
			}
			o.recv(1, c.pkt)
			if o.q.State() != StateError {
				t.Fatalf("state %s, want ERROR", o.q.State())
			}
			if ev := asyncOf(&o.out); !slices.Equal(ev, c.want) {
				t.Errorf("async events %+v, want %+v", ev, c.want)
			}
			if c.busy && (len(o.out.Completions) == 0 || o.out.Completions[0].Status == StatusFlushError) {
				t.Errorf("completions %+v: the WR must report the error", o.out.Completions)
			}
		})
	}
	o := newOne(t, nil)
	if err := o.q.Modify(0, StateError, Attr{}, 0, &o.out); err != nil {
		t.Fatal(err)
	}
	if ev := asyncOf(&o.out); len(ev) != 0 {
		t.Errorf("modify to ERROR raised %+v", ev)
	}
}

// TestCompChannel: two CQs on one completion channel deliver their CQ
// events through it in the order raised, each naming its CQ and counting
// on it once got; a CQ's second event while one waits is merged; a CQ
// with events got and not acknowledged, or a channel with CQs on it,
// cannot be destroyed, and a destroyed CQ's waiting event leaves the
// channel (CTL-CQ-5, CTL-CQ-6, CTL-CQ-3, AMB-98).
func TestCompChannel(t *testing.T) {
	ch := NewCompChannel()
	var a, b CQNotify
	if ch.Attach(1, &a) != nil || ch.Attach(2, &b) != nil {
		t.Fatal("attach")
	}
	if err := ch.Attach(1, &b); err == nil {
		t.Fatal("a CQ attached twice")
	}
	ok := Completion{Status: StatusSuccess}
	if _, err := ch.Get(); err == nil {
		t.Fatal("an event from an empty channel")
	}
	if ch.Offer(1, ok) {
		t.Fatal("an event from an unarmed CQ")
	}
	b.ReqNotify(false)
	a.ReqNotify(false)
	if !ch.Offer(2, ok) || !ch.Offer(1, ok) {
		t.Fatal("armed CQs raised no event")
	}
	b.ReqNotify(false)
	ch.Offer(2, ok) // merged into CQ 2's waiting event
	if ch.Waiting() != 2 || a.Events() != 0 {
		t.Fatalf("%d waiting, CQ 1 counts %d before any get", ch.Waiting(), a.Events())
	}
	for _, want := range []uint32{2, 1} {
		if cq, err := ch.Get(); err != nil || cq != want {
			t.Fatalf("get: CQ %d, %v; want CQ %d (the order raised)", cq, err, want)
		}
	}
	if a.Events() != 1 || b.Events() != 1 {
		t.Fatalf("events got: CQ 1 %d, CQ 2 %d", a.Events(), b.Events())
	}
	if err := ch.Destroy(); err == nil {
		t.Fatal("a channel with CQs on it destroyed")
	}
	if err := ch.Detach(1); err == nil {
		t.Fatal("a CQ with an unacknowledged event destroyed")
	}
	if a.Ack(1) != nil || ch.Detach(1) != nil {
		t.Fatal("ack then destroy CQ 1")
	}
	b.ReqNotify(false)
	ch.Offer(2, ok)
	if b.Ack(1) != nil || ch.Detach(2) != nil || ch.Waiting() != 0 {
		t.Fatalf("destroying CQ 2 left %d events waiting", ch.Waiting())
	}
	if ch.Destroy() != nil {
		t.Fatal("an empty channel not destroyed")
	}
}

// TestSQDrain: in SQD a QP finishes the message it started, starts no
// new one (posting still queues), raises IBV_EVENT_SQ_DRAINED once the
// last packet sent is acknowledged if the move asked for it, and sends
// the waiting message once back in RTS (QP-ST-12, CTL-AEV-6, AMB-31).
func TestSQDrain(t *testing.T) {
	for _, notify := range []bool{true, false} {
		s := newPair(t)
		maxMSN, sent := map[bool]uint16{}, map[bool]int{} // by "in SQD": the highest MSN sent, packets sent
		inSQD := false
		s.tap = func(o *Outgoing) {
			if o.Pkt.BTH.Opcode.IsWrite() && o.Pkt.BTH.DestQP == qpnB {
				maxMSN[inSQD] = max(maxMSN[inSQD], o.Pkt.METH.MSN)
				sent[inSQD]++
			}
		}
		s.write(0, 1, 0, 200*1024, false) // 200 packets: beyond the 128-PSN window, so partly sent
		inSQD = true
		a := s.qp[0]
		if err := a.Modify(s.now, StateSQD, Attr{SQDNotify: true}, map[bool]AttrMask{true: AttrEnSQDAsyncNotify}[notify], &s.out); err != nil {
			t.Fatal(err)
		}
		s.collect(0)
		s.write(0, 2, 300*1024, 1024, false) // posted in SQD: queued
		s.run(Never)
		drained := 0
		for _, e := range s.events[0] {
			if e.Kind == EvSQDrained {
				drained++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[notify]; drained != want {
			t.Fatalf("notify %v: %d SQ_DRAINED events, want %d", notify, drained, want)
		}
		if len(s.comps[0]) != 1 || s.comps[0][0].WRID != 1 || s.comps[0][0].Status != StatusSuccess {
			t.Fatalf("completions in SQD %+v: the started message must finish, the new one wait", s.comps[0])
		}
		if sent[false] == 0 || sent[true] == 0 {
			t.Fatalf("packets before SQD %d, in SQD %d: the first message must straddle the move", sent[false], sent[true])
		}
		if maxMSN[true] != maxMSN[false] {
			t.Fatalf("a new message (MSN %d) started in SQD; the started one was MSN %d", maxMSN[true], maxMSN[false])
		}
		if err := a.Modify(s.now, StateRTS, Attr{}, 0, &s.out); err != nil {
			t.Fatal(err)
		}
		s.collect(0)
		s.run(Never)
		if len(s.comps[0]) != 2 || s.comps[0][1].WRID != 2 || s.comps[0][1].Status != StatusSuccess {
			t.Fatalf("completions back in RTS %+v", s.comps[0])
		}
	}
	// Only RTS goes to SQD; SQD takes EN_SQD_ASYNC_NOTIFY only on the way in.
	o := newOne(t, nil)
	if err := o.q.Modify(0, StateSQD, Attr{}, 0, &o.out); err != nil || o.q.State() != StateSQD {
		t.Fatalf("RTS→SQD: %v", err)
	}
	if ev := asyncOf(&o.out); len(ev) != 0 {
		t.Fatalf("an idle QP drained without notify raised %+v", ev)
	}
	if err := o.q.Modify(0, StateRTS, Attr{}, AttrEnSQDAsyncNotify, &o.out); err == nil {
		t.Error("SQD→RTS took EN_SQD_ASYNC_NOTIFY")
	}
	q, _ := testConfig(qpnA).new()
	if err := q.Modify(0, StateSQD, Attr{}, 0, &o.out); err == nil {
		t.Error("RESET→SQD allowed")
	}
}
