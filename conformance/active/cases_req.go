package active

import (
	"fmt"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The IUT as requester: the tester's reference QP answers the IUT's data,
// and the impairment stage drops, trims or NACKs chosen packets.

func init() { addCases(reqLossCases) }

// Loss recovery: selective retransmission, NACKs by reason, and the retry
// budget.
func reqLossCases() {
	register(Case{Role: RoleRequester, Run: reqSelective, Case: conformance.Case{
		ID: "MRC-LR-RTX-101", Title: "Selective retransmission: acknowledged PSNs are never resent",
		Assertion:    "After losses, the requester retransmits the lost PSNs and never a PSN the responder acknowledged, cumulatively or selectively (no go-back-N).",
		Requirements: []conformance.RequirementID{"LR-RTX-1", "LR-SACK-1", "LR-SACK-2", "LR-SACK-5", "LR-TMR-5"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT write 16 packets; the tester drops the first transmission of the 4th and 10th and acknowledges the rest.",
			"Wait for the completion.",
			"Check every retransmission against the time the tester acknowledged its PSN (with the reaction time), and that the dropped PSNs were resent."},
		Pass: "only unacknowledged PSNs resent, the write completes", Fail: "an acknowledged PSN resent, or a lost PSN never resent",
	}})
	register(Case{Role: RoleRequester, Run: reqRtxFlag, Case: conformance.Case{
		ID: "MRC-LR-RTX-102", Title: "Retransmissions repeat the original with rtx and the retransmit class",
		Assertion:    "A retransmission carries the original PSN, opcode, METH, RETH and payload, the BTH rtx flag and the DSCP of the profile's retransmit class; first transmissions carry rtx = 0 and DSCP_TRIMMABLE.",
		Requirements: []conformance.RequirementID{"REQ-PSN-2", "WIRE-BTH-5", "LR-RTX-3", "WIRE-DSCP-1"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT write 8 packets; the tester drops the first transmission of three of them.",
			"Compare each retransmission with the original as received."},
		Pass: "every retransmission as required", Fail: "a retransmission without rtx, in the wrong class, or with other content",
	}})
	register(Case{Role: RoleRequester, Run: reqTrimNACK, Case: conformance.Case{
		ID: "MRC-LR-NACK-101", Title: "A trim NACK is answered at once, on another EV",
		Assertion:    "On a TRIMMED NACK for an outstanding PSN the requester retransmits it without waiting for its timer, and not on the EV the NACK reflects.",
		Requirements: []conformance.RequirementID{"LR-NACK-1", "EV-ST-13"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT write 4 packets; the tester trims the first transmission of the second, so its reference QP answers TRIMMED.",
			"Time the retransmission from the NACK (bound: the smaller of the answer time and half the base timeout) and note its EV.",
			"Repeat (up to the try count) when the retransmission is not seen in time, since it may be lost."},
		Pass: "a timely retransmission on another EV", Fail: "no retransmission before the timer, or the NACKed EV reused",
	}})
	register(Case{Role: RoleRequester, Run: reqResourceNACK, Case: conformance.Case{
		ID: "MRC-LR-NACK-102", Title: "Resource NACKs are retried after base_rtt",
		Assertion:    "On a NO_PKT_BUFFER NACK for an outstanding PSN the requester retransmits it no earlier than the CC profile's base_rtt after the NACK.",
		Requirements: []conformance.RequirementID{"LR-NACK-2"},
		Level:        spec.Must,
		Steps: []string{"Give the IUT an NSCC profile with a known base_rtt; have it write 4 packets.",
			"The tester drops the first transmission of the second and answers it with NO_PKT_BUFFER.",
			"Measure from the NACK to the retransmission."},
		Pass: "the retransmission comes at least base_rtt after the NACK", Fail: "an earlier retransmission, or none",
	}})
	register(Case{Role: RoleRequester, Run: reqUnexp, Case: conformance.Case{
		ID: "MRC-LR-NACK-103", Title: "UNEXP_EVENT fails the QP: no retry, error completions",
		Assertion:    "On an UNEXP_EVENT NACK the requester retries nothing and moves the QP to ERROR; the oldest WR completes with REM_OP_ERR, the others (and later ones) with WR_FLUSH_ERR, in post order; the QP then sends nothing.",
		Requirements: []conformance.RequirementID{"LR-NACK-4", "CMP-ERR-1", "CMP-ERR-2", "QP-ST-10", "QP-ST-11"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT post three writes; answer the first data packet with UNEXP_EVENT.",
			"Poll the completions, query the QP, post one more write, and watch for data."},
		Pass: "ERROR, the right statuses in order, silence", Fail: "a retransmission, a wrong status or order, or a QP still sending",
	}})
	register(Case{Role: RoleRequester, Run: reqStaleNACK, Case: conformance.Case{
		ID: "MRC-LR-NACK-104", Title: "NACKs for PSNs not outstanding are ignored",
		Assertion:    "A NACK whose nack_psn is already acknowledged or was never sent, UNEXP_EVENT included, causes no retransmission and leaves the QP usable.",
		Requirements: []conformance.RequirementID{"LR-NACK-6"},
		Level:        spec.Must,
		Steps: []string{"Let a two-packet write complete.", "Send TRIMMED and UNEXP_EVENT NACKs for its first PSN and for a PSN 100 ahead.",
			"Watch for data; then post another write and expect it to complete."},
		Pass: "no retransmission, normal service", Fail: "a retransmission or an error",
	}})
	register(Case{Role: RoleRequester, Run: reqRetryExhaust, Case: conformance.Case{
		ID: "MRC-LR-TMR-101", Title: "An exhausted retry counter fails the QP with RETRY_EXC_ERR",
		Assertion:    "When timeouts exceed linear_cnt + exp_cnt the requester stops, moves the QP to ERROR, completes the WR with RETRY_EXC_ERR and sends nothing more.",
		Requirements: []conformance.RequirementID{"LR-TMR-7", "LR-TMR-2", "QP-ST-10", "QP-ST-11"},
		Level:        spec.Must,
		Steps: []string{"Give the IUT retry linear_cnt 1, exp_cnt 1; the tester drops everything it sends to the QP.",
			"Post one write and wait for its completion; query the QP; watch for data."},
		Pass: "RETRY_EXC_ERR, ERROR, silence", Fail: "another status, no completion, or data after the error",
	}})
}

func init() { addCases(reqWindowCases) }

// The send window, WriteIMMs in flight, send completions, and whole
// transfers under random impairments.
func reqWindowCases() {
	register(Case{Role: RoleRequester, Run: reqWindow, Case: conformance.Case{
		ID: "MRC-MPR-WIN-101", Title: "The requester stays inside the MPR window",
		Assertion:    "The requester sends a PSN, first transmission or retransmission, only when it is at most W = 128 × mpr beyond its cumulative acknowledgement.",
		Requirements: []conformance.RequirementID{"MPR-WIN-1", "REQ-TX-1"},
		Level:        spec.Must,
		Steps: []string{"With mpr = 1 and a 256-byte path MTU, have the IUT write 300 packets.",
			"The tester drops the first transmission of the first PSN, so its cumulative acknowledgement stays put while it acknowledges the rest selectively.",
			"For every data packet, compare its PSN with the tester's cumulative acknowledgement (an upper bound of the IUT's)."},
		Pass: "every PSN within the window", Fail: "a PSN beyond cack + W",
	}})
	register(Case{Role: RoleRequester, Run: reqWIMMLimit, Case: conformance.Case{
		ID: "MRC-WIMM-REQ-101", Title: "WriteIMMs in flight stay within max_wimm, in post order",
		Assertion:    "At most max_wimm WriteIMMs are in flight (first packet sent, not yet completed); a WriteIMM the limit does not admit waits with every later message, so PSNs stay in post order.",
		Requirements: []conformance.RequirementID{"WIMM-REQ-1", "WIMM-REQ-3", "REQ-OP-3"},
		Level:        spec.Must,
		Steps: []string{"With max_wimm = 2, have the IUT post WriteIMM, WriteIMM, write, WriteIMM, WriteIMM, WriteIMM (two packets each).",
			"The tester drops the first transmission of the first PSN, holding every completion back for a timeout.",
			"Count WriteIMMs in flight at each message start; check PSNs against post order."},
		Pass: "never more than two, PSNs in post order", Fail: "a third WriteIMM started, or PSNs out of post order",
	}})
	register(Case{Role: RoleRequester, Run: reqCompletions, Case: conformance.Case{
		ID: "MRC-CMP-SND-101", Title: "Send completions follow the cumulative ACK, in post order",
		Assertion:    "A send WR completes only when the cumulative acknowledgement covers its last PSN (a selective acknowledgement is not enough), and send completions come in post order.",
		Requirements: []conformance.RequirementID{"CMP-SND-1", "CMP-SND-2", "CMP-SND-3"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT post a 4-packet write then a 1-packet write; the tester drops the first transmission of the first PSN.",
			"Poll completions as the exchange runs; compare with the tester's cumulative acknowledgements."},
		Pass: "completions in order, each after its cumulative ACK", Fail: "an early or out-of-order completion",
	}})
	register(Case{Role: RoleRequester, Run: reqStress, Case: conformance.Case{
		ID: "MRC-LR-RTX-103", Title: "Transfers complete correctly under random impairments",
		Assertion:    "Under seeded random loss, trimming and ECN marks of data and loss of feedback, every write completes successfully in post order with its data intact, and no acknowledged PSN is resent.",
		Requirements: []conformance.RequirementID{"LR-RTX-1", "LR-NACK-1", "CMP-SND-1", "CMP-SND-2", "REQ-PSN-2"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT post 12 writes (some WriteIMMs) of 1 to 9 packets.",
			"The tester drops 5 %, trims 5 % and CE-marks 5 % of the IUT's data, and drops 5 % of its own SACKs (seeded).",
			"Wait for every completion; check statuses, order, the tester's memory and the retransmissions."},
		Pass: "everything completes intact", Fail: "a failed, missing or out-of-order completion, corrupt data, or an acknowledged PSN resent",
	}})
}

// sightings maps each PSN to the indices of c.Sent that carried it.
func sightings(c *Conn) map[uint32][]int {
	m := map[uint32][]int{}
	for i, s := range c.Sent {
		m[s.PSN] = append(m[s.PSN], i)
	}
	return m
}

// checkNoAckedRtx fails LR-RTX-1 for every data packet sent again after the
// tester acknowledged its PSN.
func checkNoAckedRtx(t *T, c *Conn) {
	seen := map[uint32]bool{}
	for _, s := range c.Sent {
		if seen[s.PSN] || s.Rtx {
			if c.Acked(s.PSN, s.F.At) {
				t.Fail("LR-RTX-1", At(s.F), fmt.Sprintf("no retransmission of PSN %d, acknowledged at %.3f ms", s.PSN, float64(c.AckedAt[s.PSN])/1e6),
					"%s at %.3f ms", describe(s.F), float64(s.F.At)/1e6)
			} else {
				t.OK(1)
			}
		}
		seen[s.PSN] = true
	}
}

// firstTxDrop returns an In hook that drops the first transmission of the
// given PSNs.
func firstTxDrop(psns ...uint32) func(*RxFrame) Impair {
	todo := map[uint32]bool{}
	for _, p := range psns {
		todo[p] = true
	}
	return func(f *RxFrame) Impair {
		if isData(f) && todo[f.Pkt.BTH.PSN] {
			delete(todo, f.Pkt.BTH.PSN)
			return Impair{Drop: true}
		}
		return Impair{}
	}
}

func (c *Conn) successes(req conformance.RequirementID, comps []control.Completion, want int) {
	t := c.t
	sends := 0
	for _, cp := range comps {
		if cp.Recv {
			continue
		}
		sends++
		t.Check(cp.Status == control.WCSuccess, req, Evidence{}, fmt.Sprintf("WR %d completes SUCCESS", cp.WRID), "status %s", cp.Status)
	}
	t.Check(sends >= want, req, Evidence{}, fmt.Sprintf("%d send completions", want), "%d", sends)
}

func reqSelective(t *T) {
	c := t.NewConn(ConnOptions{})
	lost := []uint32{wire.PSNAdd(c.SQPSN, 3), wire.PSNAdd(c.SQPSN, 9)}
	c.In = firstTxDrop(lost...)
	c.Post(1, control.OpRDMAWrite, 16*1024, 0)
	comps := c.WaitSends(1, t.s.tim.Transfer)
	c.successes("LR-TMR-5", comps, 1)
	checkNoAckedRtx(t, c)
	sg := sightings(c)
	for _, p := range lost {
		t.Check(len(sg[p]) >= 2, "LR-TMR-5", Evidence{PSN: ptrU32(p)}, fmt.Sprintf("the dropped PSN %d sent again", p), "sent %d times", len(sg[p]))
	}
	c.CheckMem("REQ-PSN-2")
}

func reqRtxFlag(t *T) {
	c := t.NewConn(ConnOptions{})
	c.In = firstTxDrop(wire.PSNAdd(c.SQPSN, 1), wire.PSNAdd(c.SQPSN, 4), wire.PSNAdd(c.SQPSN, 6))
	c.Post(1, control.OpRDMAWrite, 8*1024, 0)
	c.successes("LR-RTX-3", c.WaitSends(1, t.s.tim.Transfer), 1)
	d := t.s.codec.Profile().DSCP
	rtxClass := d.TrimmableRetx
	if t.s.codec.Profile().Retransmit == spec.RetransmitControl {
		rtxClass = d.Control
	}
	orig := map[uint32]*RxFrame{}
	for _, s := range c.Sent {
		p := &s.F.Pkt
		o, seen := orig[s.PSN]
		if !seen {
			orig[s.PSN] = s.F
			if t.Lossless() { // the first sighting is the first transmission only on a lossless link
				t.Check(!p.BTH.Retransmit, "WIRE-BTH-5", At(s.F), "rtx = 0 on a first transmission", describe(s.F))
			}
			if !p.BTH.Retransmit {
				t.Check(p.DSCP() == d.Trimmable, "WIRE-DSCP-1", At(s.F), fmt.Sprintf("DSCP_TRIMMABLE (%d) on a first transmission", d.Trimmable), "DSCP %d", p.DSCP())
			}
			continue
		}
		t.Check(p.BTH.Retransmit, "WIRE-BTH-5", At(s.F), fmt.Sprintf("rtx = 1 on a retransmission of PSN %d", s.PSN), describe(s.F))
		t.Check(p.DSCP() == rtxClass, "LR-RTX-3", At(s.F), fmt.Sprintf("the retransmit class's DSCP %d", rtxClass), "DSCP %d", p.DSCP())
		q := &o.Pkt
		same := p.BTH.Opcode == q.BTH.Opcode && p.METH == q.METH && p.RETH == q.RETH && p.ImmDt == q.ImmDt &&
			string(p.Payload) == string(q.Payload)
		t.Check(same, "REQ-PSN-2", At(s.F), fmt.Sprintf("the content of the original (frame %d)", o.Seq), "a different opcode, METH, RETH or payload")
	}
	if len(c.Sent) <= 8 {
		t.Inconclusive("no retransmission was seen")
	}
}

func reqTrimNACK(t *T) {
	c := t.NewConn(ConnOptions{})
	bound := min(t.s.tim.Answer, t.s.tim.BaseTimeout()/2)
	timely := false
	for try := 0; try < t.s.tim.Tries && !timely; try++ {
		base := wire.PSNAdd(c.SQPSN, 4*try)
		victim := wire.PSNAdd(base, 1)
		var nackEV uint32
		nackAt := Time(-1)
		trimmed := false
		c.In = func(f *RxFrame) Impair {
			if isData(f) && f.Pkt.BTH.PSN == victim && !trimmed {
				trimmed, nackEV = true, f.EV
				return Impair{Trim: true}
			}
			return Impair{}
		}
		c.Out = func(o *statemachine.Outgoing) Impair {
			if o.Pkt.BTH.Opcode == wire.OpNACK && o.Pkt.NETH.NACKPSN == victim && nackAt < 0 {
				nackAt = t.Now()
			}
			return Impair{}
		}
		c.Post(uint64(10+try), control.OpRDMAWrite, 4*1024, 0)
		c.WaitSends(try+1, t.s.tim.Transfer)
		if nackAt < 0 {
			t.Inconclusive("try %d: the IUT's PSN %d was never seen, so not trimmed", try, victim)
			continue
		}
		var rtx *DataTx
		for i := range c.Sent {
			if s := &c.Sent[i]; s.PSN == victim && s.F.At > nackAt {
				rtx = s
				break
			}
		}
		if rtx == nil {
			continue
		}
		if rtx.F.At-nackAt <= bound {
			// The NACK's own retransmission (a later one may follow a
			// timeout of a retransmission the fabric lost, and may use any
			// EV).
			timely = true
			t.Check(rtx.EV != nackEV, "EV-ST-13", At(rtx.F), fmt.Sprintf("an EV other than %#x, which the NACK reflected", nackEV), describe(rtx.F))
		} else {
			t.Logf("try %d: retransmission %.3f ms after the NACK (bound %.3f ms)", try, float64(rtx.F.At-nackAt)/1e6, float64(bound)/1e6)
		}
	}
	t.Check(timely, "LR-NACK-1", Evidence{}, fmt.Sprintf("a retransmission within %.3f ms of a TRIMMED NACK, before the timer", float64(bound)/1e6),
		"none in %d tries", t.s.tim.Tries)
}

func reqResourceNACK(t *T) {
	br := t.s.tim.BaseRTT
	c := t.NewConn(ConnOptions{NSCC: br})
	victim := wire.PSNAdd(c.SQPSN, 1)
	nackAt := Time(-1)
	c.In = func(f *RxFrame) Impair {
		if isData(f) && f.Pkt.BTH.PSN == victim && nackAt < 0 {
			nackAt = t.Now()
			c.NACK(victim, f.EV, wire.NACKNoPktBuffer, f.Plane)
			return Impair{Drop: true}
		}
		return Impair{}
	}
	c.Post(1, control.OpRDMAWrite, 4*1024, 0)
	c.successes("LR-NACK-2", c.WaitSends(1, t.s.tim.Transfer), 1)
	if nackAt < 0 {
		t.Inconclusive("PSN %d was never seen", victim)
		return
	}
	for _, s := range c.Sent {
		if s.PSN == victim && s.F.At > nackAt {
			t.Check(s.F.At-nackAt >= br, "LR-NACK-2", At(s.F), fmt.Sprintf("the retransmission no earlier than base_rtt (%.3f ms) after the NACK", float64(br)/1e6),
				"%.3f ms after", float64(s.F.At-nackAt)/1e6)
			return
		}
	}
	t.Fail("LR-NACK-2", Evidence{PSN: &victim}, "a retransmission after the resource NACK", "none")
}

func reqUnexp(t *T) {
	c := t.NewConn(ConnOptions{})
	nackAt := Time(-1)
	c.In = func(f *RxFrame) Impair {
		if isData(f) && nackAt < 0 {
			nackAt = t.Now()
			c.NACK(f.Pkt.BTH.PSN, f.EV, wire.NACKUnexpEvent, f.Plane)
		}
		if nackAt >= 0 {
			return Impair{Drop: true}
		}
		return Impair{}
	}
	c.Post(1, control.OpRDMAWrite, 4*1024, 0)
	c.Post(2, control.OpRDMAWrite, 1024, 0)
	c.Post(3, control.OpRDMAWriteWithImm, 1024, 7)
	comps := c.WaitSends(3, t.s.tim.Transfer)
	st := c.QueryQP()
	t.Check(st.State == control.StateError, "QP-ST-10", Evidence{}, "QP state ERROR after UNEXP_EVENT", "state %s", st.State)
	want := []string{control.WCRemOpErr, control.WCFlushErr, control.WCFlushErr}
	if t.Check(len(comps) == 3, "CMP-ERR-1", Evidence{}, "three send completions", "%d: %+v", len(comps), comps) {
		for i, cp := range comps {
			req := conformance.RequirementID("CMP-ERR-1")
			if i == 0 {
				req = "CMP-ERR-2"
			}
			t.Check(cp.WRID == uint64(i+1) && cp.Status == want[i], req, Evidence{}, fmt.Sprintf("WR %d %s", i+1, want[i]), "WR %d %s", cp.WRID, cp.Status)
		}
	}
	if err := t.TryCall(control.MethodPostSend, control.PostSendParams{QPN: c.IUT, WRID: 4, Opcode: control.OpRDMAWrite,
		Local: &control.SGE{MR: c.SrcMR.MR, Length: 64}, Remote: control.Remote{VA: testerVA, RKey: testerRKey}}, nil); err == nil {
		late := c.WaitSends(4, t.s.tim.Answer)
		if t.Check(len(late) == 4, "CMP-ERR-1", Evidence{}, "a completion for a WR posted in ERROR", "none") {
			t.Check(late[3].WRID == 4 && late[3].Status == control.WCFlushErr, "CMP-ERR-1", Evidence{}, "WR 4 WR_FLUSH_ERR", "WR %d %s", late[3].WRID, late[3].Status)
		}
	}
	// Frames the IUT sent before it took the NACK may be read from the
	// tap only now: judge by arrival time, as LR-NACK-4 does.
	after := c.Collect(t.s.tim.Settle, func(f *RxFrame) bool { return isData(f) && f.At > nackAt+t.s.tim.Reaction })
	for _, s := range c.Sent {
		if s.F.At > nackAt+t.s.tim.Reaction {
			t.Fail("LR-NACK-4", At(s.F), "no data after the UNEXP_EVENT NACK", describe(s.F))
		} else {
			t.OK(1)
		}
	}
	t.Check(len(after) == 0, "QP-ST-11", Evidence{}, "no data from a QP in ERROR", "%d packets, first %s", len(after), describe(first(after)))
}

func reqStaleNACK(t *T) {
	c := t.NewConn(ConnOptions{})
	c.Post(1, control.OpRDMAWrite, 2*1024, 0)
	c.successes("LR-NACK-6", c.WaitSends(1, t.s.tim.Transfer), 1)
	n := len(c.Sent)
	if n == 0 {
		t.Inconclusive("no data packet of the write arrived: no EV to NACK on")
		return
	}
	for _, r := range []wire.NACKReason{wire.NACKTrimmed, wire.NACKUnexpEvent} {
		c.NACK(c.SQPSN, c.Sent[0].EV, r, 0)
		c.NACK(wire.PSNAdd(c.SQPSN, 100), c.Sent[0].EV, r, 0)
	}
	after := c.Collect(t.s.tim.Settle, isData)
	t.Check(len(after) == 0 && len(c.Sent) == n, "LR-NACK-6", Evidence{}, "no data in answer to NACKs for PSNs not outstanding",
		"%d packets, first %s", len(after), describe(first(after)))
	st := c.QueryQP()
	t.Check(st.State == control.StateRTS, "LR-NACK-6", Evidence{}, "the QP still in RTS", "state %s", st.State)
	c.Post(2, control.OpRDMAWrite, 1024, 0)
	c.successes("LR-NACK-6", c.WaitSends(2, t.s.tim.Transfer), 2)
}

func reqRetryExhaust(t *T) {
	c := t.NewConn(ConnOptions{Retry: control.Retry{LinearCnt: 1, ExpCnt: 1}})
	c.In = func(f *RxFrame) Impair { return Impair{Drop: toTester(f)} }
	c.Post(1, control.OpRDMAWrite, 1024, 0)
	comps := c.WaitSends(1, 300*t.s.tim.BaseTimeout())
	doneAt := t.Now()

	if !t.Check(len(comps) == 1, "LR-TMR-7", Evidence{}, "a completion once the retry budget is spent", "none after %d base timeouts", 300) {
		return
	}
	t.Check(comps[0].Status == control.WCRetryExcErr, "LR-TMR-7", Evidence{}, "RETRY_EXC_ERR", "%s", comps[0].Status)
	st := c.QueryQP()
	t.Check(st.State == control.StateError, "QP-ST-10", Evidence{}, "QP state ERROR", "state %s", st.State)
	n := 0
	for _, s := range c.Sent {
		if s.PSN == c.SQPSN {
			n++
		}
	}
	// On a lossy link some transmissions never reach the tester: count
	// them only on the lossless synthetic fabric.
	if t.Lossless() {
		t.Check(n >= 2 && n <= 1+1+1+8, "LR-TMR-2", Evidence{}, "a few transmissions (linear_cnt 1 + exp_cnt 1 retries, plus timeouts not counted on ASSUMED_BAD EVs)", "%d transmissions", n)
	}
	after := c.Collect(t.s.tim.Settle, func(f *RxFrame) bool { return isData(f) && f.At > doneAt+t.s.tim.Reaction })
	for _, s := range c.Sent {
		if s.F.At > doneAt+t.s.tim.Reaction {
			t.Fail("QP-ST-11", At(s.F), "no data after the error completion", describe(s.F))
		}
	}
	t.Check(len(after) == 0, "QP-ST-11", Evidence{}, "no data from a QP in ERROR", "%d packets", len(after))
}

func reqWindow(t *T) {
	c := t.NewConn(ConnOptions{MPR: 1, MPRDest: 1, PathMTU: 256})
	const w = 128
	c.In = firstTxDrop(c.SQPSN)
	maxAhead := int32(0)
	c.Watch = func(f *RxFrame) {
		if !isData(f) {
			return
		}
		// The tester's cumulative ACK bounds the IUT's from above, so only
		// a PSN beyond it + W is certainly outside the IUT's window (PSNs
		// behind it are judged by LR-RTX-1, with the reaction time).
		d := wire.PSNDiff(f.Pkt.BTH.PSN, c.LastCack())
		maxAhead = max(maxAhead, d)
		t.Check(d <= w, "MPR-WIN-1", At(f), fmt.Sprintf("PSN at most cack+%d (tester cack %d)", w, c.LastCack()), "%s is cack+%d", describe(f), d)
	}
	c.Post(1, control.OpRDMAWrite, 300*256, 0)
	c.successes("REQ-TX-1", c.WaitSends(1, t.s.tim.Transfer), 1)
	if maxAhead < w/2 {
		t.Inconclusive("the window was never filled (at most cack+%d)", maxAhead)
	}
}

func reqWIMMLimit(t *T) {
	const maxWIMM = 2
	c := t.NewConn(ConnOptions{MaxWIMM: maxWIMM})
	kinds := []string{control.OpRDMAWriteWithImm, control.OpRDMAWriteWithImm, control.OpRDMAWrite,
		control.OpRDMAWriteWithImm, control.OpRDMAWriteWithImm, control.OpRDMAWriteWithImm}
	c.In = firstTxDrop(c.SQPSN)
	started := map[int]bool{}
	maxIn := 0
	c.Watch = func(f *RxFrame) {
		if !isData(f) {
			return
		}
		k := int(f.Pkt.METH.MSN) // MSNs start at 0 (REQ-PSN-3)
		if k >= len(kinds) {
			t.Fail("REQ-OP-3", At(f), "MSN 0 to 5", describe(f))
			return
		}
		off := wire.PSNDiff(f.Pkt.BTH.PSN, c.SQPSN)
		t.Check(off == int32(2*k) || off == int32(2*k+1), "REQ-OP-3", At(f),
			fmt.Sprintf("message %d on PSNs %d and %d (post order)", k, wire.PSNAdd(c.SQPSN, 2*k), wire.PSNAdd(c.SQPSN, 2*k+1)), describe(f))
		if started[k] || kinds[k] != control.OpRDMAWriteWithImm {
			started[k] = true
			return
		}
		started[k] = true
		in := 0
		for j := range kinds {
			if started[j] && kinds[j] == control.OpRDMAWriteWithImm {
				last := wire.PSNAdd(c.SQPSN, 2*j+1)
				// Completed as far as the IUT can know once the tester's
				// cumulative ACK left before this packet arrived.
				if at, ok := c.CumAt[last]; !ok || at >= f.At {
					in++
				}
			}
		}
		maxIn = max(maxIn, in)
		t.Check(in <= maxWIMM, "WIMM-REQ-1", At(f), fmt.Sprintf("at most %d WriteIMMs in flight", maxWIMM), "%d when message %d started", in, k)
	}
	for i, k := range kinds {
		c.Post(uint64(i+1), k, 2*1024, uint32(0xC0+i))
	}
	c.successes("WIMM-REQ-3", c.WaitSends(len(kinds), t.s.tim.Transfer), len(kinds))
	if maxIn < maxWIMM {
		t.Inconclusive("the limit was never reached (at most %d WriteIMMs in flight)", maxIn)
	}
}

func reqCompletions(t *T) {
	c := t.NewConn(ConnOptions{})
	c.In = firstTxDrop(c.SQPSN)
	c.Post(1, control.OpRDMAWrite, 4*1024, 0)
	c.Post(2, control.OpRDMAWrite, 1024, 0)
	last := map[uint64]uint32{1: wire.PSNAdd(c.SQPSN, 3), 2: wire.PSNAdd(c.SQPSN, 4)}
	end := t.Now() + t.s.tim.Transfer
	for len(c.Sends()) < 2 && t.Now() < end {
		for _, cp := range c.Poll() {
			at, ok := c.CumAt[last[cp.WRID]]
			t.Check(ok && at <= t.Now(), "CMP-SND-1", Evidence{}, fmt.Sprintf("WR %d completes after the cumulative ACK of PSN %d", cp.WRID, last[cp.WRID]),
				"completed at %.3f ms, cumulative ACK %v", float64(t.Now())/1e6, ok)
		}
		c.Run(t.Now()+t.s.tim.Poll, nil)
	}
	if t.Check(len(c.Sends()) == 2, "CMP-SND-2", Evidence{}, "two completions", "%d", len(c.Sends())) {
		t.Check(c.comps[0].WRID == 1 && c.comps[1].WRID == 2, "CMP-SND-2", Evidence{}, "WR 1 then WR 2", "WR %d then WR %d", c.comps[0].WRID, c.comps[1].WRID)
		t.Check(c.comps[0].Opcode == control.OpRDMAWrite && c.comps[0].Status == control.WCSuccess && c.comps[0].ByteLen == 4096,
			"CMP-SND-3", Evidence{}, "RDMA_WRITE SUCCESS byte_len 4096", "%+v", c.comps[0])
	}
}

func reqStress(t *T) {
	c := t.NewConn(ConnOptions{})
	r := t.rng
	c.In = func(f *RxFrame) Impair {
		if !isData(f) {
			return Impair{}
		}
		switch x := r.IntN(100); {
		case x < 5:
			return Impair{Drop: true}
		case x < 10:
			return Impair{Trim: true}
		case x < 15:
			return Impair{CE: true}
		}
		return Impair{}
	}
	c.Out = func(o *statemachine.Outgoing) Impair {
		return Impair{Drop: o.Pkt.BTH.Opcode == wire.OpSACK && r.IntN(100) < 5}
	}
	const n = 12
	for i := 0; i < n; i++ {
		op := control.OpRDMAWrite
		if i%3 == 2 {
			op = control.OpRDMAWriteWithImm
		}
		c.Post(uint64(i+1), op, 1+r.IntN(9*1024), uint32(i))
	}
	comps := c.WaitSends(n, t.s.tim.Transfer)
	c.successes("CMP-SND-1", comps, n)
	for i, cp := range comps {
		t.Check(cp.WRID == uint64(i+1), "CMP-SND-2", Evidence{}, fmt.Sprintf("WR %d in position %d", i+1, i+1), "WR %d", cp.WRID)
	}
	checkNoAckedRtx(t, c)
	c.CheckMem("REQ-PSN-2")
}
