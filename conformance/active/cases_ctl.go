package active

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Verbs semantics through the control channel, the wire format of
// everything the IUT sends, and the responder under random impairments.

// wireRequirements are the requirements the strict wire checks report.
var wireRequirements = []conformance.RequirementID{
	"WIRE-ENC-1", "WIRE-ENC-5", "WIRE-LEN-1", "WIRE-UDP-1", "WIRE-UDP-3", "WIRE-BTH-1", "WIRE-BTH-2", "WIRE-BTH-3",
	"WIRE-BTH-5", "WIRE-BTH-6", "WIRE-BTH-7", "WIRE-BTH-8", "WIRE-BTH-9", "WIRE-EP-1", "WIRE-TRIM-1", "WIRE-OP-1",
	"WIRE-OP-2", "WIRE-ICRC-1", "WIRE-PAY-1", "WIRE-PAY-2", "WIRE-GEN-2", "WIRE-AETH-1", "WIRE-AETH-2", "WIRE-SETH-3",
	"WIRE-SETH-10", "WIRE-NETH-2", "WIRE-NETH-4", "WIRE-PETH-2", "WIRE-ERTH-1", "WIRE-EETH-1",
}

func init() { addCases(ctlCases) }

func ctlCases() {
	register(Case{Role: RoleControl, Run: ctlOpcodes, Case: conformance.Case{
		ID: "MRC-REQ-OP-101", Title: "Only RDMA WRITE and WRITE WITH IMM are accepted",
		Assertion:    "post_send refuses SEND, SEND_WITH_IMM, RDMA_READ and atomics, and nothing is sent for them.",
		Requirements: []conformance.RequirementID{"REQ-OP-1"},
		Level:        spec.Must,
		Steps:        []string{"Post one work request of each unsupported opcode.", "Expect each refused and no packet; then post an RDMA WRITE and expect it to complete."},
		Pass:         "every unsupported opcode refused", Fail: "an unsupported opcode accepted or sent",
	}})
	register(Case{Role: RoleControl, Run: ctlAttributes, Case: conformance.Case{
		ID: "MRC-QP-ATTR-101", Title: "modify_qp enforces transitions and attribute limits",
		Assertion:    "Transitions other than RESET→INIT→RTR→RTS are refused; mpr and mpr_dest of 0 or above max_mpr, timeout above 24, linear_cnt above 7 and exp_cnt above 25 are refused; send WRs are refused before RTS while receive WRs are accepted from INIT.",
		Requirements: []conformance.RequirementID{"QP-ATTR-1", "MPR-WIN-3", "LR-TMR-1", "QP-ST-2", "QP-ST-9"},
		Level:        spec.Must,
		Steps: []string{"Create a QP; try RESET→RTS; move to INIT and post a receive WR.",
			"Try RTR with mpr_dest 0 and max_mpr+1, then RTR correctly; try post_send in RTR.",
			"Try RTS with timeout 25, linear_cnt 8, exp_cnt 26, mpr 0; then RTS correctly."},
		Pass: "every invalid request refused, the valid ones accepted", Fail: "an invalid request accepted or a valid one refused",
	}})
	register(Case{Role: RoleWire, Run: wireTraffic, Case: conformance.Case{
		ID: WireCaseID, Title: "Every frame the IUT sends passes the strict wire checks",
		Assertion:    "Every frame the IUT sent during the whole run decodes and passes the codec's strict checks: encapsulation, lengths, UDP checksum 0, BTH fields and flags, reserved bits, pad, header stacks, ICRC.",
		Requirements: wireRequirements,
		Level:        spec.Must,
		Steps: []string{"Exchange every kind of packet with the IUT: data with losses and trims (retransmissions, SACKs, NACKs, ACKs), probes and endpoint requests.",
			"Decode and strictly check every frame the IUT sends, in this case and in every other case of the run."},
		Pass: "every frame passes", Fail: "a frame that does not decode or breaks a rule",
	}})
	register(Case{Role: RoleResponder, Run: rspStress, Case: conformance.Case{
		ID: "MRC-RSP-RCV-104", Title: "The responder under random impairments",
		Assertion:    "Under seeded random loss, duplication, reordering, trimming and ECN marks of the data and loss of its feedback, the responder places every message intact, never places a duplicate over newer data, and completes each WriteIMM exactly once, in order.",
		Requirements: []conformance.RequirementID{"RSP-RCV-3", "RSP-DUP-1", "WIMM-RSP-1", "WIMM-RSP-2", "RSP-NACK-1"},
		Level:        spec.Must, Features: []string{"trim_nack"},
		Steps: []string{"The tester's reference QP writes 16 messages (every fourth a WriteIMM) to the IUT.",
			"The impairment stage drops 5 %, duplicates 5 %, delays 10 %, trims 5 % and CE-marks 5 % of the data, and drops 5 % of the IUT's feedback.",
			"When the tester's writes complete, read the IUT's memory and poll its receive completions."},
		Pass: "memory and completions as sent", Fail: "corrupt memory, or a missing, extra or out-of-order completion",
	}})
}

func ctlOpcodes(t *T) {
	c := t.NewConn(ConnOptions{})
	for i, op := range []string{control.OpSend, control.OpSendWithImm, control.OpRDMARead, control.OpAtomicCmpSwap, control.OpAtomicFetchAdd} {
		err := t.TryCall(control.MethodPostSend, control.PostSendParams{QPN: c.IUT, WRID: uint64(100 + i), Opcode: op,
			Local: &control.SGE{MR: c.SrcMR.MR, Length: 64}, Remote: control.Remote{VA: testerVA, RKey: testerRKey}}, nil)
		var ce *control.Error
		refused := err != nil && asControl(err, &ce)
		t.Check(refused, "REQ-OP-1", Evidence{}, "post_send refuses "+op, "%v", orAccepted(err))
	}
	data := c.Collect(t.s.tim.Settle, isData)
	t.Check(len(data) == 0, "REQ-OP-1", Evidence{}, "no packet for an unsupported opcode", "%d data packets, first %s", len(data), describe(first(data)))
	c.Poll()
	for _, cp := range c.Sends() {
		t.Fail("REQ-OP-1", Evidence{}, "no completion for a refused work request", "completion %+v", cp)
	}
	c.Post(1, control.OpRDMAWrite, 512, 0)
	c.successes("REQ-OP-1", c.WaitSends(1, t.s.tim.Transfer), 1)
}

func asControl(err error, ce **control.Error) bool {
	e, ok := err.(*control.Error)
	if ok {
		*ce = e
	}
	return ok
}

func orAccepted(err error) string {
	if err == nil {
		return "accepted"
	}
	return err.Error()
}

func ctlAttributes(t *T) {
	t.Call(control.MethodReset, nil, nil)
	t.Sleep(2 * t.s.tim.Reaction)
	t.Call(control.MethodSetEVProfile, control.EVProfile{ID: 1, EVs: []control.EV{{Value: 0x4101, Port: 1}, {Value: 0x4102, Port: 1}}}, nil)
	t.Call(control.MethodSetCCProfile, control.CCProfile{ID: 1, Algorithm: control.CCNone}, nil)
	var mr control.MR
	t.Call(control.MethodRegMR, control.RegMRParams{Length: 4096, Access: []string{control.AccessLocalWrite}}, &mr)
	var q control.QPNResult
	t.Call(control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 8, MaxRecvWR: 8}, &q)
	one, zero := uint64(1), 0
	dev := t.s.hello.Device
	maxMPR := dev.MaxMPR
	if maxMPR == 0 {
		maxMPR = 255
	}
	tq := uint32(testerQPNs | 0xFFFF)
	psn := uint32(0)
	av := &control.AV{MAC: "02:00:00:00:00:01", IP: t.s.tester.IP.String()}
	rtr := func(mprDest int) control.QPAttr {
		return control.QPAttr{MaxWIMMDest: ptr(4), MPRDest: &mprDest, Cap: &[]string{}, PathMTU: ptr(1024), DestQPN: &tq, RQPSN: &psn, AV: av}
	}
	rts := func(mod func(*control.QPAttr)) control.QPAttr {
		a := control.QPAttr{MaxWIMM: ptr(4), MPR: ptr(1), Retry: &control.Retry{LinearCnt: 7, ExpCnt: 25}, Timeout: ptr(int(t.s.tim.Timeout)), SQPSN: &psn}
		if mod != nil {
			mod(&a)
		}
		return a
	}
	refuse := func(req conformance.RequirementID, what, state string, a control.QPAttr) {
		err := t.TryCall(control.MethodModifyQP, control.ModifyQPParams{QPN: q.QPN, State: state, Attr: a}, nil)
		var ce *control.Error
		t.Check(err != nil && asControl(err, &ce), req, Evidence{}, "modify_qp refuses "+what, "%s", orAccepted(err))
	}
	accept := func(req conformance.RequirementID, what, state string, a control.QPAttr) bool {
		err := t.TryCall(control.MethodModifyQP, control.ModifyQPParams{QPN: q.QPN, State: state, Attr: a}, nil)
		if control.IsNotSupported(err) {
			t.NotSupported("modify_qp: %v", err)
		}
		return t.Check(err == nil, req, Evidence{}, "modify_qp accepts "+what, "%v", err)
	}
	refuse("QP-ST-2", "RESET→RTS", control.StateRTS, rts(nil))
	if !accept("QP-ST-2", "RESET→INIT", control.StateInit, control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: ptr(0xF)}) {
		return
	}
	err := t.TryCall(control.MethodPostRecv, control.PostRecvParams{QPN: q.QPN, WRID: 1}, nil)
	t.Check(err == nil, "QP-ST-9", Evidence{}, "post_recv accepted in INIT", "%v", err)
	refuse("MPR-WIN-3", "mpr_dest 0", control.StateRTR, rtr(0))
	refuse("MPR-WIN-3", fmt.Sprintf("mpr_dest %d (above max_mpr)", maxMPR+1), control.StateRTR, rtr(maxMPR+1))
	if !accept("QP-ST-2", "INIT→RTR", control.StateRTR, rtr(1)) {
		return
	}
	err = t.TryCall(control.MethodPostSend, control.PostSendParams{QPN: q.QPN, WRID: 2, Opcode: control.OpRDMAWrite,
		Local: &control.SGE{MR: mr.MR, Length: 64}, Remote: control.Remote{VA: testerVA, RKey: testerRKey}}, nil)
	t.Check(err != nil, "QP-ST-9", Evidence{}, "post_send refused in RTR", "%s", orAccepted(err))
	refuse("LR-TMR-1", "timeout 25", control.StateRTS, rts(func(a *control.QPAttr) { a.Timeout = ptr(25) }))
	refuse("QP-ATTR-1", "retry.linear_cnt 8", control.StateRTS, rts(func(a *control.QPAttr) { a.Retry = &control.Retry{LinearCnt: 8, ExpCnt: 1} }))
	refuse("QP-ATTR-1", "retry.exp_cnt 26", control.StateRTS, rts(func(a *control.QPAttr) { a.Retry = &control.Retry{LinearCnt: 1, ExpCnt: 26} }))
	refuse("MPR-WIN-3", "mpr 0", control.StateRTS, rts(func(a *control.QPAttr) { a.MPR = ptr(0) }))
	if accept("QP-ST-2", "RTR→RTS", control.StateRTS, rts(nil)) {
		var r control.QueryQPResult
		t.Call(control.MethodQueryQP, control.QPNParams(q), &r)
		t.Check(r.State == control.StateRTS, "QP-ST-2", Evidence{}, "state RTS", "%s", r.State)
	}
}

func wireTraffic(t *T) {
	c := t.NewConn(ConnOptions{})
	// The IUT as requester: losses and a trim give retransmissions and
	// the tester's NACKs.
	trimmed := false
	c.In = func(f *RxFrame) Impair {
		switch {
		case !isData(f):
		case f.Pkt.BTH.PSN == wire.PSNAdd(c.SQPSN, 1) && !f.Pkt.BTH.Retransmit:
			return Impair{Drop: true}
		case f.Pkt.BTH.PSN == wire.PSNAdd(c.SQPSN, 3) && !trimmed:
			trimmed = true
			return Impair{Trim: true}
		}
		return Impair{}
	}
	c.Post(1, control.OpRDMAWrite, 4*1024, 0)
	c.Post(2, control.OpRDMAWriteWithImm, 1000, 0xFEED)
	c.WaitSends(2, t.s.tim.Transfer)
	// The IUT as responder: SACKs, a NACK, an ACK and a probe answer.
	p := c.RQPSN
	c.Exchange(func(int) { c.sendWrite(wire.PSNAdd(p, 1), 1, 4096, fill(1, 300), 0, c.TEV(0, 0), Impair{}) }, sackFor(wire.PSNAdd(p, 1)))
	c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(0, 300), 0, c.TEV(0, 1), Impair{Trim: true}) }, nackFor(p))
	c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(0, 300), 0, c.TEV(0, 1), Impair{}) }, sackFor(p))
	c.ProbeState(0)
	if slices.Contains(t.Hello().Features, "endpoint_ops") {
		c.epRequest(wire.EPEVProbe, 0, 0, 0x700)
	}
	c.Run(t.Now()+t.s.tim.Settle, nil)
	t.OK(len(c.Sent))
}

func rspStress(t *T) {
	c := t.NewConn(ConnOptions{Recvs: 16})
	r := t.rng
	tim := t.s.tim
	c.Out = func(o *statemachine.Outgoing) Impair {
		if !o.Pkt.BTH.Opcode.IsWrite() {
			return Impair{}
		}
		switch x := r.IntN(100); {
		case x < 5:
			return Impair{Drop: true}
		case x < 10:
			return Impair{Dup: 1}
		case x < 20:
			return Impair{Delay: Time(1+r.IntN(3)) * tim.Reaction}
		case x < 25:
			return Impair{Trim: true}
		case x < 30:
			return Impair{CE: true}
		}
		return Impair{}
	}
	c.In = func(f *RxFrame) Impair {
		op := f.Pkt.BTH.Opcode
		return Impair{Drop: (op == wire.OpSACK || op == wire.OpNACK) && r.IntN(100) < 5}
	}
	const n = 16
	type msg struct {
		off  uint64
		data []byte
		imm  bool
	}
	var msgs []msg
	off := uint64(0)
	for i := 0; i < n; i++ {
		data := fill(100+i, 1+r.IntN(6*1024))
		m := msg{off: off, data: data, imm: i%4 == 3}
		wr := statemachine.WorkRequest{WRID: uint64(i + 1), Opcode: statemachine.OpWrite, RemoteVA: c.DstMR.VA + off,
			RKey: c.DstMR.RKey, Data: data, Imm: uint32(0x1000 + i)}
		if m.imm {
			wr.Opcode = statemachine.OpWriteImm
		}
		if err := c.ref.Post(t.Now(), wr, &c.out); err != nil {
			t.Fatalf("tester post: %v", err)
		}
		c.flush()
		msgs = append(msgs, m)
		off = (off + uint64(len(data)) + 4095) &^ 4095
	}
	c.Run(t.Now()+tim.Transfer, func() bool { return len(c.RefComps) >= n })
	if len(c.RefComps) < n {
		t.Inconclusive("the tester's writes did not complete (%d of %d): the IUT did not acknowledge them", len(c.RefComps), n)
	}
	for i, m := range msgs {
		got := c.ReadIUT(m.off, len(m.data))
		j := firstDiff(got, m.data)
		t.Check(bytes.Equal(got, m.data), "RSP-RCV-3", Evidence{}, fmt.Sprintf("message %d's %d bytes in the IUT's memory", i, len(m.data)), "byte %d differs", j)
	}
	c.Run(t.Now()+tim.Settle, nil)
	c.Poll()
	var imms []uint32
	for _, cp := range c.comps {
		if cp.Recv && cp.Status == control.WCSuccess {
			imms = append(imms, cp.Imm)
		}
	}
	var want []uint32
	for i, m := range msgs {
		if m.imm {
			want = append(want, uint32(0x1000+i))
		}
	}
	t.Check(slices.Equal(imms, want), "WIMM-RSP-2", Evidence{}, fmt.Sprintf("WriteIMM completions %#x, once each, in order", want), "%#x", imms)
}
