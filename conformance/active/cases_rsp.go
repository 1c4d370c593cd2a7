package active

import (
	"bytes"
	"fmt"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// The IUT as responder: the tester crafts the data packets and judges the
// answers, the memory and the receive completions.

func init() { addCases(rspReceiveCases) }

// Reception: placement in any order, duplicates, NACKs for trimmed and
// out-of-window packets, ECN marks, probes, and frames failing a wire check.
func rspReceiveCases() {
	register(Case{Role: RoleResponder, Run: rspOutOfOrder, Case: conformance.Case{
		ID: "MRC-RSP-RCV-101", Title: "Out-of-order placement, cumulative point and SACK bitmap",
		Assertion:    "Write packets are placed when they arrive, in any PSN order; every SACK reports the current cack, the triggering PSN and EV, and a bitmap with exactly the PSNs received beyond cack.",
		Requirements: []conformance.RequirementID{"RSP-RCV-3", "RSP-RCV-4", "RSP-RCV-5", "RSP-SACK-1", "RSP-SACK-2", "WIRE-SETH-6", "WIRE-EV-5"},
		Level:        spec.Must,
		Steps: []string{"Set up a QP pair (initial PSNs from the seed, some crossing 2^24).",
			"Send six one-packet writes with distinct payloads in the order 2, 0, 4, 1, 5, 3, each on its own EV.",
			"For each, wait for the SACK it triggers (repeating the packet, a duplicate, when the SACK is lost) and compare cack_psn, ack_psn, entropy and bitmap with the tester's model.",
			"Read the IUT's memory back through the control channel."},
		Pass: "every SACK matches the model and every payload is in memory", Fail: "a SACK field differs from the model, or a payload is missing or wrong",
	}})
	register(Case{Role: RoleResponder, Run: rspDuplicates, Case: conformance.Case{
		ID: "MRC-RSP-DUP-101", Title: "Duplicates are re-acknowledged and never placed twice",
		Assertion:    "A duplicate write packet (behind cack or already in the bitmap, with or without rtx) is answered with a SACK reflecting its EV, is not placed again, does not count in rcvd_bytes and completes no second WriteIMM.",
		Requirements: []conformance.RequirementID{"RSP-DUP-1", "RSP-DUP-2", "RSP-DUP-3"},
		Level:        spec.Must,
		Steps: []string{"Send a write at PSN p with payload A and a WriteIMM at p+1; let both complete.",
			"Resend PSN p with payload B on another EV, once without and once with rtx; resend p+1 (the WriteIMM).",
			"Send p+3 (leaving p+2 missing), then resend p+3 with payload B.",
			"Check each duplicate's SACK, the memory (still A), rcvd_bytes and the receive completions."},
		Pass: "duplicates acknowledged, memory and completions unchanged", Fail: "a duplicate placed, counted, completed again, or not acknowledged",
	}})
	register(Case{Role: RoleResponder, Run: rspTrim, Case: conformance.Case{
		ID: "MRC-RSP-NACK-101", Title: "Trimmed packets are NACKed and not placed",
		Assertion:    "A trimmed write packet is answered with a TRIMMED (or TRIMMED_LASTHOP) NACK naming its PSN, reflecting its EV and TSETH timestamp, sent with DSCP_CONTROL; cack does not advance and nothing is placed until the full packet arrives.",
		Requirements: []conformance.RequirementID{"RSP-NACK-1", "WIRE-NETH-3", "RSP-NACK-6", "WIRE-EV-5"},
		Level:        spec.Must, Features: []string{"trim_nack"},
		Steps: []string{"Send a write at the next PSN, trimmed by the tester's impairment stage (DSCP_TRIMMED, no payload), with a TSETH.",
			"Expect a TRIMMED NACK; repeat the trimmed packet when it is lost.",
			"Do the same with a last-hop trim and expect TRIMMED_LASTHOP.",
			"Probe the responder: cack unchanged; then send the packet whole and expect it placed."},
		Pass: "NACKs as required, no placement of the trimmed packet", Fail: "no NACK, a wrong field, or cack advanced by a trimmed packet",
	}})
	register(Case{Role: RoleResponder, Run: rspOutOfWindow, Case: conformance.Case{
		ID: "MRC-RSP-NACK-102", Title: "Out-of-window PSNs get PSN_OOR_WINDOW and are not placed",
		Assertion:    "A write PSN more than W = 128 × mpr_dest beyond cack (and less than 2^23 beyond) is answered with a PSN_OOR_WINDOW NACK and not placed; cack + W is still in the window.",
		Requirements: []conformance.RequirementID{"RSP-NACK-4", "MPR-WIN-4", "RSP-RCV-6"},
		Level:        spec.Must,
		Steps: []string{"With mpr_dest = 1 (W = 128), send writes at cack+W+1 and cack+2^23−1.",
			"Expect a PSN_OOR_WINDOW NACK for each (repeating the packet when the NACK is lost).",
			"Send a write at cack+W and expect a SACK.",
			"Check that the out-of-window payloads were not placed."},
		Pass: "both out-of-window PSNs NACKed and not placed, the edge accepted", Fail: "a missing or wrong NACK, a placement, or the edge refused",
	}})
	register(Case{Role: RoleResponder, Run: rspECN, Case: conformance.Case{
		ID: "MRC-RSP-SACK-101", Title: "ECN CE marks become SKIP_ONCE for the marked EV",
		Assertion:    "A SACK answering a CE-marked packet or probe carries m = SKIP_ONCE (or ALWAYS_SKIP) for the packet's EV; a SACK answering an unmarked packet carries m = NONE.",
		Requirements: []conformance.RequirementID{"RSP-SACK-3", "RSP-PRB-2", "CC-SIG-2"},
		Level:        spec.Must,
		Steps: []string{"Send a write unmarked, then one CE-marked on another EV, then a CE-marked probe.",
			"Check m and entropy of each answer."},
		Pass: "m as required", Fail: "m = NONE for a marked packet, or a mark for an unmarked one",
	}})
	register(Case{Role: RoleResponder, Run: rspProbe, Case: conformance.Case{
		ID: "MRC-RSP-PRB-101", Title: "Probes are answered and change nothing",
		Assertion:    "A RELIABILITY_PROBE_REQ is answered with a SACK with pr = 1, the probe's probe_id in ack_psn_offset, the probe's EV and tx_timestamp reflected, and the current cack and bitmap; the probe places nothing and changes no tracking state.",
		Requirements: []conformance.RequirementID{"RSP-PRB-1", "WIRE-SETH-7"},
		Level:        spec.Must,
		Steps: []string{"Send writes at p and p+2 (p+1 missing).",
			"Send probes on two EVs of every plane and check their answers.",
			"Send p+1 and check that cack then covers p+2."},
		Pass: "every probe answered as required", Fail: "a probe unanswered, a wrong answer, or a state change",
	}})
	register(Case{Role: RoleResponder, Run: rspDiscard, Case: conformance.Case{
		ID: "MRC-RSP-RCV-102", Title: "Frames failing a wire check are discarded silently",
		Assertion:    "A write with a wrong ICRC, an opcode outside the MRC table, a wrong P_Key, or a QP number that does not exist causes no SACK, NACK, placement or state change; the QP stays usable.",
		Requirements: []conformance.RequirementID{"RSP-RCV-1", "WIRE-ICRC-5", "WIRE-BTH-2", "WIRE-BTH-12"},
		Level:        spec.Must,
		Steps: []string{"Send a write at the next PSN with a corrupted ICRC, then with opcode 0xC4, then with P_Key 0x7FFF, then to a QP number the IUT does not have.",
			"Watch for any answer; probe the responder: cack unchanged, nothing placed.",
			"Send the write correctly and expect it acknowledged and placed."},
		Pass: "no reaction to the bad frames, normal service after", Fail: "an answer to, or a placement of, a bad frame",
	}})
}

func init() { addCases(rspCompleteCases) }

// What the responder completes or refuses: WriteIMM ordering and its limit,
// memory access, a WriteIMM without a receive WR, and the transport ACK.
func rspCompleteCases() {
	register(Case{Role: RoleResponder, Run: rspWIMMOrder, Case: conformance.Case{
		ID: "MRC-WIMM-RSP-101", Title: "WriteIMM completes after every earlier PSN, in RQMSN order",
		Assertion:    "A WriteIMM's receive completion is delivered only when every PSN up to its last has arrived, WriteIMMs complete in RQMSN order with their immediate data and dma_length, each consuming the oldest receive WR, and plain writes complete nothing.",
		Requirements: []conformance.RequirementID{"WIMM-RSP-1", "WIMM-RSP-2", "WIMM-RSP-3", "CMP-RCV-1", "WIMM-RSP-5"},
		Level:        spec.Must,
		Steps: []string{"Send a two-packet plain write at p, p+1, then WriteIMMs at p+2 (rqmsn 0) and p+3 (rqmsn 1), in the order p+3, p+2, p+1.",
			"Wait and poll: no completion may appear while p is missing.",
			"Send p; poll: two completions, rqmsn 0 then 1."},
		Pass: "completions only after the gap is filled, in order, with the right fields", Fail: "an early, missing, extra or out-of-order completion",
	}})
	register(Case{Role: RoleResponder, Run: rspWIMMLimit, Case: conformance.Case{
		ID: "MRC-WIMM-RSP-102", Title: "A WriteIMM over max_wimm_dest is refused",
		Assertion:    "With max_wimm_dest WriteIMMs held, one more is not placed, is answered as the profile's wimm_limit_signal says (AETH NAK invalid request, or UNEXP_EVENT NACK) and the QP enters ERROR.",
		Requirements: []conformance.RequirementID{"WIMM-RSP-4", "QP-ST-10"},
		Level:        spec.Must,
		Steps: []string{"With max_wimm_dest = 2, leave PSN p missing and send WriteIMMs at p+1 and p+2 (held).",
			"Send a third WriteIMM at p+3.",
			"Expect the refusal; query the QP: ERROR; check the third payload was not placed."},
		Pass: "refused, ERROR, not placed", Fail: "accepted, placed, or the QP still usable",
	}})
	register(Case{Role: RoleResponder, Run: rspAccess, Case: conformance.Case{
		ID: "MRC-RSP-RCV-103", Title: "Writes outside a registered region are refused",
		Assertion:    "A write whose r_key names no remotely writable region is answered with an AETH NAK remote access error, is not placed, and moves the QP to ERROR.",
		Requirements: []conformance.RequirementID{"RSP-RCV-2", "QP-ST-10", "CTL-AEV-1"},
		Level:        spec.Must,
		Steps:        []string{"Send a write at the next PSN with a wrong r_key.", "Expect the NAK; query the QP."},
		Pass:         "NAK code 2 and ERROR", Fail: "accepted, or no ERROR",
	}})
	register(Case{Role: RoleResponder, Run: rspNoRecv, Case: conformance.Case{
		ID: "MRC-RSP-NACK-103", Title: "A WriteIMM without a receive WR fails the QP",
		Assertion:    "A WriteIMM that completes while no receive work request is posted is answered with an UNEXP_EVENT NACK and moves the QP to ERROR.",
		Requirements: []conformance.RequirementID{"RSP-NACK-5", "WIMM-RSP-3", "CTL-AEV-1"},
		Level:        spec.Must,
		Steps: []string{"Set up the QP with no receive WR.", "Send a WriteIMM.", "Expect UNEXP_EVENT; query the QP.",
			"get_async_events: IBV_EVENT_QP_REQ_ERR for the QP (when the IUT offers the method)."},
		Pass: "UNEXP_EVENT and ERROR", Fail: "no NACK, or the QP still usable",
	}})
	register(Case{Role: RoleResponder, Run: rspTransportACK, Case: conformance.Case{
		ID: "MRC-RSP-ACK-101", Title: "Transport ACK when cack passes an ack_req PSN",
		Assertion:    "When cack reaches a PSN that carried ack_req, the responder sends an ACKNOWLEDGE whose BTH psn is cack, syndrome 0x1F and msn the number of complete messages.",
		Requirements: []conformance.RequirementID{"RSP-ACK-1", "WIRE-AETH-2"},
		Level:        spec.Must,
		Steps: []string{"Send a two-packet message (ack_req on the last) in reverse order, then a one-packet message.",
			"Expect an ACKNOWLEDGE after each message is complete; check psn, syndrome and msn."},
		Pass: "ACKs as required", Fail: "a missing ACK or a wrong field",
	}})
}

// sendWrite sends a one-packet write (WRITE_ONLY) at psn with payload at
// off, MSN msn, on plane pl and EV ev.
func (c *Conn) sendWrite(psn uint32, msn uint16, off uint64, payload []byte, pl int, ev uint32, im Impair) *wire.Packet {
	p := c.Data(psn, wire.OpWriteOnly, off, payload, len(payload))
	p.METH.MSN = msn
	c.Send(p, pl, ev, im)
	return p
}

// model is the tester's view of the responder's received PSNs.
type model struct {
	cack uint32
	got  map[uint32]bool
}

func newModel(rq uint32) *model { return &model{cack: wire.PSNAdd(rq, -1), got: map[uint32]bool{}} }

func (m *model) add(psn uint32) {
	m.got[psn] = true
	for m.got[wire.PSNAdd(m.cack, 1)] {
		m.cack = wire.PSNAdd(m.cack, 1)
		delete(m.got, m.cack)
	}
}

// bitmap is the expected 64-bit window from base.
func (m *model) bitmap(base uint32) uint64 {
	var b uint64
	for k := 0; k < 64; k++ {
		if m.got[wire.PSNAdd(base, k)] {
			b |= 1 << k
		}
	}
	return b
}

// checkSACK compares a SACK with the model.
func (c *Conn) checkSACK(f *RxFrame, m *model, trig, ev uint32) {
	t := c.t
	s := &f.Pkt.SETH
	t.Check(s.CACKPSN == m.cack, "RSP-RCV-4", At(f), fmt.Sprintf("cack_psn %d", m.cack), describe(f))
	t.Check(s.AckPSN() == trig, "RSP-SACK-1", At(f), fmt.Sprintf("ack_psn %d (the triggering PSN)", trig), describe(f))
	t.Check(s.Entropy == ev, "WIRE-EV-5", At(f), fmt.Sprintf("entropy %#x (the triggering packet's EV)", ev), describe(f))
	base := s.BitmapBase()
	d := wire.PSNDiff(trig, m.cack)
	t.Check(d <= 0 || (wire.PSNDiff(trig, base) >= 0 && wire.PSNDiff(trig, base) < 64), "RSP-SACK-2", At(f),
		"a bitmap window covering the triggering PSN "+fmt.Sprint(trig), describe(f))
	t.Check(wire.PSNDiff(base, m.cack) >= 1, "RSP-SACK-2", At(f), fmt.Sprintf("a bitmap base after cack %d", m.cack), describe(f))
	want := m.bitmap(base)
	t.Check(s.SACKBitmap == want, "WIRE-SETH-6", At(f), fmt.Sprintf("bitmap %#x from %d", want, base), describe(f))
}

func rspOutOfOrder(t *T) {
	c := t.NewConn(ConnOptions{})
	m := newModel(c.RQPSN)
	order := []int{2, 0, 4, 1, 5, 3}
	for i, k := range order {
		psn := wire.PSNAdd(c.RQPSN, k)
		pl := i % t.Planes()
		ev := c.TEV(pl, i)
		payload := fill(k, 512)
		m.add(psn)
		f := c.Exchange(func(try int) { c.sendWrite(psn, uint16(k), uint64(k)*4096, payload, pl, ev, Impair{}) }, sackFor(psn))
		if f == nil {
			t.Fail("RSP-SACK-1", Evidence{PSN: ptrU32(psn)}, "a SACK for PSN "+fmt.Sprint(psn), "no SACK after %d tries", t.s.tim.Tries)
			continue
		}
		c.checkSACK(f, m, psn, ev)
	}
	for _, k := range order {
		got := c.ReadIUT(uint64(k)*4096, 512)
		t.Check(bytes.Equal(got, fill(k, 512)), "RSP-RCV-3", Evidence{PSN: ptrU32(wire.PSNAdd(c.RQPSN, k))},
			fmt.Sprintf("payload of PSN %d placed at offset %d", wire.PSNAdd(c.RQPSN, k), k*4096), "memory differs")
	}
	if f, ok := c.ProbeState(0); ok {
		t.Check(f.Pkt.SETH.CACKPSN == m.cack, "RSP-RCV-4", At(f), fmt.Sprintf("cack_psn %d after every PSN arrived", m.cack), describe(f))
	}
}

func rspDuplicates(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	a, b := fill(1, 1024), fill(2, 1024)
	m := newModel(c.RQPSN)
	var last *RxFrame
	send := func(psn uint32, op wire.Opcode, msn, rqmsn uint16, payload []byte, pl int, ev uint32, rtx bool) *RxFrame {
		f := c.Exchange(func(int) {
			q := c.Data(psn, op, uint64(wire.PSNDiff(psn, p))*4096, payload, len(payload))
			q.METH.MSN, q.METH.RQMSN, q.BTH.Retransmit = msn, rqmsn, rtx
			q.ImmDt = 0xD00D
			c.Send(q, pl, ev, Impair{})
		}, sackFor(psn))
		if f != nil {
			last = f
		}
		return f
	}
	m.add(p)
	send(p, wire.OpWriteOnly, 0, 0, a, 0, c.TEV(0, 0), false)
	m.add(wire.PSNAdd(p, 1))
	first := send(wire.PSNAdd(p, 1), wire.OpWriteOnlyImm, 1, 0, a[:64], 0, c.TEV(0, 0), false)
	comps := c.WaitCQ(1, t.s.tim.Answer)
	if first == nil || len(comps) != 1 {
		t.Inconclusive("the first messages were not acknowledged and completed (SACK %v, %d completions)", first != nil, len(comps))
		return
	}
	rcvd := first.Pkt.SETH.CC.RcvdBytes
	// Duplicates behind cack, on another EV and plane, without and with rtx.
	for i, rtx := range []bool{false, true} {
		pl := (i + 1) % t.Planes()
		ev := c.TEV(pl, 3)
		f := send(p, wire.OpWriteOnly, 0, 0, b, pl, ev, rtx)
		if !t.Check(f != nil, "RSP-DUP-2", Evidence{PSN: ptrU32(p)}, "a SACK for the duplicate of PSN "+fmt.Sprint(p), "none") {
			continue
		}
		t.Check(f.Pkt.SETH.Entropy == ev, "RSP-DUP-2", At(f), fmt.Sprintf("the duplicate's EV %#x reflected", ev), describe(f))
		t.Check(f.Pkt.SETH.CACKPSN == m.cack, "RSP-DUP-2", At(f), fmt.Sprintf("the current cack_psn %d", m.cack), describe(f))
		t.Check(f.Pkt.SETH.CC.RcvdBytes == rcvd, "RSP-DUP-1", At(f), fmt.Sprintf("rcvd_bytes unchanged (%d)", rcvd),
			"rcvd_bytes %d after a duplicate (rtx %v)", f.Pkt.SETH.CC.RcvdBytes, rtx)
	}
	// The WriteIMM again.
	send(wire.PSNAdd(p, 1), wire.OpWriteOnlyImm, 1, 0, b[:64], 1%t.Planes(), c.TEV(1%t.Planes(), 2), true)
	// A duplicate held in the bitmap.
	p3 := wire.PSNAdd(p, 3)
	m.add(p3)
	send(p3, wire.OpWriteOnly, 3, 1, a, 0, c.TEV(0, 1), false)
	f := send(p3, wire.OpWriteOnly, 3, 1, b, 0, c.TEV(0, 2), false)
	if t.Check(f != nil, "RSP-DUP-2", Evidence{PSN: ptrU32(p3)}, "a SACK for the duplicate of PSN "+fmt.Sprint(p3), "none") {
		c.checkSACK(f, m, p3, c.TEV(0, 2))
		if last != nil {
			t.Check(f.Pkt.SETH.CC.RcvdBytes == last.Pkt.SETH.CC.RcvdBytes, "RSP-DUP-1", At(f), "rcvd_bytes unchanged by the duplicate", describe(f))
		}
	}
	c.Run(t.Now()+t.s.tim.Settle, nil)
	for _, k := range []int{0, 3} {
		got := c.ReadIUT(uint64(k)*4096, 1024)
		t.Check(bytes.Equal(got, a), "RSP-DUP-1", Evidence{PSN: ptrU32(wire.PSNAdd(p, k))},
			fmt.Sprintf("the first payload of PSN %d, never the duplicate's", wire.PSNAdd(p, k)), "memory holds %s", whose(got, a, b))
	}
	got := c.ReadIUT(4096, 64)
	t.Check(bytes.Equal(got, a[:64]), "RSP-DUP-1", Evidence{PSN: ptrU32(wire.PSNAdd(p, 1))}, "the WriteIMM's first payload", "memory holds %s", whose(got, a[:64], b[:64]))
	extra := c.Poll()
	t.Check(len(extra) == 0, "RSP-DUP-1", Evidence{}, "no second receive completion for the duplicate WriteIMM", "%d completions: %v", len(extra), extra)
}

func whose(got, a, b []byte) string {
	switch {
	case bytes.Equal(got, a):
		return "the first payload"
	case bytes.Equal(got, b):
		return "the duplicate's payload"
	}
	return "neither payload"
}

func rspTrim(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	d := t.s.codec.Profile().DSCP
	for i, im := range []Impair{{Trim: true}, {TrimLastHop: true}} {
		want := wire.NACKTrimmed
		if im.TrimLastHop {
			want = wire.NACKTrimmedLastHop
		}
		psn := wire.PSNAdd(p, i)
		pl := i % t.Planes()
		ev := c.TEV(pl, i+1)
		ts := uint16(0x1234 + i)
		f := c.Exchange(func(int) {
			q := c.Data(psn, wire.OpWriteOnly, uint64(i)*4096, fill(i, 1024), 1024)
			q.METH.MSN = uint16(i)
			q.BTH.TSPresent = true
			q.TSETH = wire.TSETH{TxTimestamp: ts, FType: 1}
			c.Send(q, pl, ev, im)
		}, feedbackFor(psn))
		if !t.Check(f != nil && f.Pkt.BTH.Opcode == wire.OpNACK, "RSP-NACK-1", Evidence{PSN: &psn},
			fmt.Sprintf("a %s NACK for trimmed PSN %d", want, psn), describe(f)) {
			continue
		}
		n := &f.Pkt.NETH
		t.Check(n.Reason == want, "RSP-NACK-1", At(f), "reason "+want.String(), describe(f))
		t.Check(n.Entropy == ev, "WIRE-EV-5", At(f), fmt.Sprintf("entropy %#x", ev), describe(f))
		t.Check(n.TxTimestamp == ts, "WIRE-NETH-3", At(f), fmt.Sprintf("tx_timestamp %#x reflected", ts), "tx_timestamp %#x", n.TxTimestamp)
		t.Check(f.Pkt.DSCP() == d.Control, "RSP-NACK-6", At(f), fmt.Sprintf("DSCP_CONTROL (%d)", d.Control), "DSCP %d", f.Pkt.DSCP())
	}
	if f, ok := c.ProbeState(0); ok {
		t.Check(f.Pkt.SETH.CACKPSN == wire.PSNAdd(p, -1) && f.Pkt.SETH.SACKBitmap == 0, "RSP-NACK-6", At(f),
			fmt.Sprintf("cack_psn %d and an empty bitmap: trimmed packets are not received", wire.PSNAdd(p, -1)), describe(f))
	}
	t.Check(bytes.Equal(c.ReadIUT(0, 1024), make([]byte, 1024)), "RSP-NACK-1", Evidence{PSN: &p}, "nothing placed for a trimmed packet", "memory written")
	f := c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(0, 1024), 0, c.TEV(0, 0), Impair{}) }, sackFor(p))
	if t.Check(f != nil, "RSP-SACK-1", Evidence{PSN: &p}, "a SACK for the whole packet", describe(f)) {
		t.Check(f.Pkt.SETH.CACKPSN == p, "RSP-RCV-4", At(f), fmt.Sprintf("cack_psn %d", p), describe(f))
	}
}

func rspOutOfWindow(t *T) {
	c := t.NewConn(ConnOptions{MPRDest: 1})
	cack := wire.PSNAdd(c.RQPSN, -1)
	const w = 128
	// The window's last PSN first: it is accepted, and its SACK shows the
	// cack the next two PSNs are out of window from.
	edge := wire.PSNAdd(cack, w)
	f := c.Exchange(func(int) { c.sendWrite(edge, 0, 0, fill(9, 256), 0, c.TEV(0, 0), Impair{}) }, feedbackFor(edge))
	t.Check(f != nil && f.Pkt.BTH.Opcode == wire.OpSACK, "MPR-WIN-4", Evidence{PSN: &edge},
		fmt.Sprintf("a SACK for PSN cack+%d, the window's last", w), describe(f))
	for i, d := range []int{w + 1, 1<<23 - 1} {
		psn := wire.PSNAdd(cack, d)
		pl := i % t.Planes()
		f := c.Exchange(func(int) { c.sendWrite(psn, 0, uint64(i+1)*4096, fill(i, 256), pl, c.TEV(pl, i), Impair{}) }, feedbackFor(psn))
		if !t.Check(f != nil && f.Pkt.BTH.Opcode == wire.OpNACK, "RSP-NACK-4", Evidence{PSN: &psn},
			fmt.Sprintf("a PSN_OOR_WINDOW NACK for PSN cack+%d", d), describe(f)) {
			continue
		}
		t.Check(f.Pkt.NETH.Reason == wire.NACKPSNOutOfWindow, "RSP-NACK-4", At(f), "reason PSN_OOR_WINDOW", describe(f))
	}
	for i := range 2 {
		t.Check(bytes.Equal(c.ReadIUT(uint64(i+1)*4096, 256), make([]byte, 256)), "MPR-WIN-4", Evidence{},
			"no placement of an out-of-window PSN", "memory written at offset %d", (i+1)*4096)
	}
	t.Check(bytes.Equal(c.ReadIUT(0, 256), fill(9, 256)), "RSP-RCV-3", Evidence{PSN: &edge}, "the in-window packet placed", "memory differs")
}

func rspECN(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	pl1 := 1 % t.Planes()
	e0, e1 := c.TEV(0, 0), c.TEV(pl1, 1)
	f := c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(0, 256), 0, e0, Impair{}) }, sackFor(p))
	if t.Check(f != nil, "RSP-SACK-1", Evidence{PSN: &p}, "a SACK", "none") {
		t.Check(f.Pkt.SETH.M == wire.MNone, "RSP-SACK-3", At(f), "m = NONE for an unmarked packet", describe(f))
	}
	p1 := wire.PSNAdd(p, 1)
	f = c.Exchange(func(int) { c.sendWrite(p1, 1, 4096, fill(1, 256), pl1, e1, Impair{CE: true}) }, sackFor(p1))
	if t.Check(f != nil, "RSP-SACK-1", Evidence{PSN: &p1}, "a SACK", "none") {
		t.Check(f.Pkt.SETH.M == wire.MSkipOnce || f.Pkt.SETH.M == wire.MAlwaysSkip, "RSP-SACK-3", At(f),
			"m = SKIP_ONCE (or ALWAYS_SKIP) for a CE-marked packet", describe(f))
		t.Check(f.Pkt.SETH.Entropy == e1, "CC-SIG-2", At(f), fmt.Sprintf("the mark reported for the marked EV %#x", e1), describe(f))
	}
	id := uint16(0x6123)
	f = c.Exchange(func(int) { c.Probe(id, 0, e0, Impair{CE: true}) }, func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpSACK && f.Pkt.SETH.PR && uint16(f.Pkt.SETH.AckPSNOffset) == id
	})
	if t.Check(f != nil, "RSP-PRB-1", Evidence{}, "an answer to the probe", "none") {
		t.Check(f.Pkt.SETH.M == wire.MSkipOnce || f.Pkt.SETH.M == wire.MAlwaysSkip, "RSP-PRB-2", At(f),
			"m = SKIP_ONCE for a CE-marked probe", describe(f))
	}
}

func rspProbe(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	m := newModel(p)
	m.add(p)
	c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(0, 256), 0, c.TEV(0, 0), Impair{}) }, sackFor(p))
	p2 := wire.PSNAdd(p, 2)
	m.add(p2)
	c.Exchange(func(int) { c.sendWrite(p2, 2, 8192, fill(2, 256), 0, c.TEV(0, 1), Impair{}) }, sackFor(p2))
	for pl := 0; pl < t.Planes(); pl++ {
		for k := 0; k < 2; k++ {
			id := uint16(0x5100 + pl*16 + k)
			ev := c.TEV(pl, k+1)
			var ts uint16
			f := c.Exchange(func(int) { ts = c.Probe(id, pl, ev, Impair{}) },
				func(f *RxFrame) bool { return f.Pkt.BTH.Opcode == wire.OpSACK && f.Pkt.SETH.PR })
			if !t.Check(f != nil, "RSP-PRB-1", Evidence{EV: &ev}, fmt.Sprintf("an answer to probe %#x", id), "none") {
				continue
			}
			s := &f.Pkt.SETH
			t.Check(uint16(s.AckPSNOffset) == id, "WIRE-SETH-7", At(f), fmt.Sprintf("probe_id %#x in ack_psn_offset", id), describe(f))
			t.Check(s.Entropy == ev, "RSP-PRB-1", At(f), fmt.Sprintf("the probe's EV %#x reflected", ev), describe(f))
			t.Check(s.CC.TxTimestamp == ts, "RSP-PRB-1", At(f), fmt.Sprintf("the probe's tx_timestamp %#x reflected", ts), "tx_timestamp %#x", s.CC.TxTimestamp)
			t.Check(s.CACKPSN == m.cack && s.SACKBitmap == m.bitmap(s.BitmapBase()), "RSP-PRB-1", At(f),
				fmt.Sprintf("the current cack_psn %d and bitmap %#x", m.cack, m.bitmap(s.BitmapBase())), describe(f))
		}
	}
	p1 := wire.PSNAdd(p, 1)
	m.add(p1)
	f := c.Exchange(func(int) { c.sendWrite(p1, 1, 4096, fill(1, 256), 0, c.TEV(0, 2), Impair{}) }, sackFor(p1))
	if t.Check(f != nil, "RSP-SACK-1", Evidence{PSN: &p1}, "a SACK", "none") {
		t.Check(f.Pkt.SETH.CACKPSN == p2, "RSP-PRB-1", At(f), fmt.Sprintf("cack_psn %d: the probes changed no tracking state", p2), describe(f))
	}
}

// craft encodes a write at psn and lets mutate change the bytes; the ICRC
// is recomputed after the change unless keepICRC.
func (c *Conn) craft(psn uint32, pl int, mutate func(b []byte, bth int), keepICRC bool) []byte {
	t := c.t
	q := c.Data(psn, wire.OpWriteOnly, 0, fill(7, 256), 256)
	t.fillL2L3(q, pl, t.s.codec.Profile().DSCP.Trimmable, true, c.TEV(pl, 0))
	b, err := t.s.codec.Append(nil, q)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	var dec wire.Packet
	if err := t.s.codec.Decode(b, &dec); err != nil {
		t.Fatalf("decoding the tester's own frame: %v", err)
	}
	_, _, bth := dec.Offsets()
	mutate(b, bth)
	if !keepICRC {
		v := t.s.codec.ComputeICRC(b, &dec)
		n := len(b)
		b[n-4], b[n-3], b[n-2], b[n-1] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return b
}

func rspDiscard(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	bad := []struct {
		what string
		req  conformance.RequirementID
		b    []byte
	}{
		{"a wrong ICRC", "WIRE-ICRC-5", c.craft(p, 0, func(b []byte, _ int) { b[len(b)-1] ^= 0x5A }, true)},
		{"opcode 0xC4, outside the MRC table", "WIRE-BTH-2", c.craft(p, 0, func(b []byte, bth int) { b[bth] = 0xC4 }, false)},
		{"P_Key 0x7FFF, not the QP's", "WIRE-BTH-12", c.craft(p, 0, func(b []byte, bth int) { b[bth+2], b[bth+3] = 0x7F, 0xFF }, false)},
		{"a QP number the IUT does not have", "RSP-RCV-1", c.craft(p, 0, func(b []byte, bth int) { b[bth+5], b[bth+6], b[bth+7] = 0x00, 0x0F, 0xEE }, false)},
	}
	before, counted := discardCount(t)
	for _, x := range bad {
		t.SendFrame(0, x.b, 0, 0)
		got := c.Collect(t.s.tim.Settle, func(f *RxFrame) bool {
			return f.Pkt.BTH.Opcode != wire.OpProbe && !isData(f) && f.Pkt.BTH.DestQP != wire.EndpointQPN
		})
		t.Check(len(got) == 0, x.req, Evidence{PSN: &p}, "no answer to a write with "+x.what, "%d answers, first %s", len(got), describe(first(got)))
	}
	// The answer to a probe sent after the discarded frames, on their
	// plane, shows that the IUT has taken them in: only then are its
	// counters read (on a loaded machine an IUT process may not have got
	// to frames sent a settle time ago when the control request comes).
	f, answered := c.ProbeState(0)
	if answered {
		t.Check(f.Pkt.SETH.CACKPSN == wire.PSNAdd(p, -1) && f.Pkt.SETH.SACKBitmap == 0, "RSP-RCV-1", At(f),
			"no state change from the discarded frames", describe(f))
	} else {
		t.Inconclusive("the IUT answered no probe: the state after the discarded frames is unknown")
	}
	if after, ok := discardCount(t); ok && counted && answered {
		t.Check(after-before >= uint64(len(bad)), "RSP-RCV-1", Evidence{}, fmt.Sprintf("the %d discarded frames counted (rx_dropped + rx_ignored + rx_unknown_qp)", len(bad)),
			"the counters grew by %d", after-before)
	}
	t.Check(bytes.Equal(c.ReadIUT(0, 256), make([]byte, 256)), "RSP-RCV-1", Evidence{PSN: &p}, "nothing placed from a discarded frame", "memory written")
	f = c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(3, 256), 0, c.TEV(0, 1), Impair{}) }, sackFor(p))
	if t.Check(f != nil, "RSP-RCV-1", Evidence{PSN: &p}, "normal service after the discarded frames", "no SACK") {
		t.Check(bytes.Equal(c.ReadIUT(0, 256), fill(3, 256)), "RSP-RCV-3", At(f), "the valid write placed", "memory differs")
	}
}

// discardCount returns the node's counters of discarded frames, when the
// IUT reports them (query_counters is optional).
func discardCount(t *T) (uint64, bool) {
	var r control.CountersResult
	if err := t.TryCall(control.MethodQueryCounters, control.QueryCountersParams{}, &r); err != nil {
		return 0, false
	}
	n, any := uint64(0), false
	for _, k := range []string{"rx_dropped", "rx_ignored", "rx_unknown_qp"} {
		if v, ok := r.Counters[k]; ok {
			n, any = n+v, true
		}
	}
	return n, any
}

func first(fs []*RxFrame) *RxFrame {
	if len(fs) == 0 {
		return nil
	}
	return fs[0]
}

func rspWIMMOrder(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	at := func(k int) uint32 { return wire.PSNAdd(p, k) }
	msg := fill(4, 2048)
	send := func(k int) {
		var q *wire.Packet
		switch k {
		case 0:
			q = c.Data(at(0), wire.OpWriteFirst, 0, msg[:1024], 2048)
		case 1:
			q = c.Data(at(1), wire.OpWriteLast, 1024, msg[1024:], 2048)
			q.RETH.VA = c.DstMR.VA + 1024
		case 2:
			q = c.Data(at(2), wire.OpWriteOnlyImm, 8192, fill(5, 100), 100)
			q.METH.MSN, q.ImmDt = 1, 0xA0A0
		case 3:
			q = c.Data(at(3), wire.OpWriteOnlyImm, 12288, fill(6, 200), 200)
			q.METH.MSN, q.METH.RQMSN, q.ImmDt = 2, 1, 0xB1B1
		}
		c.Send(q, k%t.Planes(), c.TEV(k%t.Planes(), k), Impair{})
	}
	for _, k := range []int{3, 2, 1} {
		c.Exchange(func(int) { send(k) }, sackFor(at(k)))
	}
	c.Run(t.Now()+t.s.tim.Settle, nil)
	early := c.Poll()
	t.Check(len(early) == 0, "WIMM-RSP-1", Evidence{}, fmt.Sprintf("no completion while PSN %d is missing", p), "%d completions: %+v", len(early), early)
	c.Exchange(func(int) { send(0) }, sackFor(at(0)))
	got := c.WaitCQ(2, t.s.tim.Answer+t.s.tim.Settle)
	c.Run(t.Now()+t.s.tim.Settle, nil)
	got = append(got, c.Poll()...)
	if len(early) > 0 {
		got = append(early, got...)
	}
	if !t.Check(len(got) == 2, "WIMM-RSP-1", Evidence{}, "exactly two receive completions (the WriteIMMs)", "%d: %+v", len(got), got) {
		return
	}
	want := []control.Completion{
		{WRID: 9000, Status: control.WCSuccess, Opcode: control.OpRecvRDMAWithImm, ByteLen: 100, Imm: 0xA0A0, Recv: true},
		{WRID: 9001, Status: control.WCSuccess, Opcode: control.OpRecvRDMAWithImm, ByteLen: 200, Imm: 0xB1B1, Recv: true},
	}
	t.Check(got[0].Imm == want[0].Imm && got[1].Imm == want[1].Imm, "WIMM-RSP-2", Evidence{},
		"immediate data 0xA0A0 (rqmsn 0) then 0xB1B1 (rqmsn 1)", "%#x then %#x", got[0].Imm, got[1].Imm)
	for i := range want {
		g, w := got[i], want[i]
		if g.Imm != w.Imm {
			continue
		}
		t.Check(g.Status == w.Status && g.ByteLen == w.ByteLen && g.Opcode == w.Opcode, "CMP-RCV-1", Evidence{},
			fmt.Sprintf("%s %s byte_len %d", w.Status, w.Opcode, w.ByteLen), "%s %s byte_len %d", g.Status, g.Opcode, g.ByteLen)
		t.Check(g.WRID == w.WRID, "WIMM-RSP-3", Evidence{}, fmt.Sprintf("receive WR %d (the oldest posted)", w.WRID), "wr_id %d", g.WRID)
	}
	t.Check(bytes.Equal(c.ReadIUT(0, 2048), msg), "WIMM-RSP-5", Evidence{}, "the plain write placed", "memory differs")
}

func rspWIMMLimit(t *T) {
	c := t.NewConn(ConnOptions{MaxWIMMDest: 2, MaxWIMM: 2})
	p := c.RQPSN
	prof := t.s.codec.Profile()
	for k := 1; k <= 2; k++ {
		psn := wire.PSNAdd(p, k)
		c.Exchange(func(int) {
			q := c.Data(psn, wire.OpWriteOnlyImm, uint64(k)*4096, fill(k, 64), 64)
			q.METH.MSN, q.METH.RQMSN = uint16(k), uint16(k-1)
			c.Send(q, 0, c.TEV(0, k), Impair{})
		}, sackFor(psn))
	}
	p3 := wire.PSNAdd(p, 3)
	refusal := func(f *RxFrame) bool {
		pk := &f.Pkt
		switch pk.BTH.Opcode {
		case wire.OpAcknowledge:
			return pk.AETH.Type() == wire.AETHTypeNAK
		case wire.OpNACK:
			return pk.NETH.NACKPSN == p3
		case wire.OpSACK:
			return !pk.SETH.PR && pk.SETH.AckPSN() == p3
		}
		return false
	}
	q := c.Data(p3, wire.OpWriteOnlyImm, 3*4096, fill(3, 64), 64)
	q.METH.MSN, q.METH.RQMSN = 3, 2
	c.Send(q, 0, c.TEV(0, 3), Impair{})
	f := c.Expect(t.s.tim.Answer, refusal)
	switch {
	case f == nil:
		if t.Lossless() {
			t.Fail("WIMM-RSP-4", Evidence{PSN: &p3}, "a refusal of the third WriteIMM", "no answer")
		}
	case prof.WIMMLimit == spec.WIMMLimitNACKUnexpEvent:
		t.Check(f.Pkt.BTH.Opcode == wire.OpNACK && f.Pkt.NETH.Reason == wire.NACKUnexpEvent, "WIMM-RSP-4", At(f),
			"an UNEXP_EVENT NACK (profile wimm_limit_signal)", describe(f))
	default:
		t.Check(f.Pkt.BTH.Opcode == wire.OpAcknowledge && f.Pkt.AETH.Syndrome == 0x61, "WIMM-RSP-4", At(f),
			"an AETH NAK invalid request (syndrome 0x61)", describe(f))
	}
	st := c.QueryQP()
	t.Check(st.State == control.StateError, "QP-ST-10", Evidence{}, "QP state ERROR after the limit was exceeded", "state %s", st.State)
	t.Check(bytes.Equal(c.ReadIUT(3*4096, 64), make([]byte, 64)), "WIMM-RSP-4", Evidence{PSN: &p3}, "the refused WriteIMM not placed", "memory written")
}

func rspAccess(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	q := c.Data(p, wire.OpWriteOnly, 0, fill(1, 128), 128)
	q.RETH.RKey ^= 0xFFFF00
	c.Send(q, 0, c.TEV(0, 0), Impair{})
	f := c.Expect(t.s.tim.Answer, func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpAcknowledge || f.Pkt.BTH.Opcode == wire.OpNACK || sackFor(p)(f)
	})
	if f != nil || t.Lossless() {
		t.Check(f != nil && f.Pkt.BTH.Opcode == wire.OpAcknowledge && f.Pkt.AETH.Syndrome == 0x62, "RSP-RCV-2", At(f),
			"an AETH NAK remote access error (syndrome 0x62)", describe(f))
	}
	st := c.QueryQP()
	t.Check(st.State == control.StateError, "QP-ST-10", Evidence{}, "QP state ERROR", "state %s", st.State)
	t.Check(bytes.Equal(c.ReadIUT(0, 128), make([]byte, 128)), "RSP-RCV-2", Evidence{PSN: &p}, "nothing placed", "memory written")
	if got, ok := asyncEvent(t, control.AsyncQPAccessErr, c.IUT, 0); ok {
		t.Check(got, "CTL-AEV-1", Evidence{}, "IBV_EVENT_QP_ACCESS_ERR for the QP", "none")
	}
}

func rspNoRecv(t *T) {
	c := t.NewConn(ConnOptions{Recvs: -1})
	p := c.RQPSN
	q := c.Data(p, wire.OpWriteOnlyImm, 0, fill(1, 64), 64)
	c.Send(q, 0, c.TEV(0, 0), Impair{})
	f := c.Expect(t.s.tim.Answer, func(f *RxFrame) bool { return f.Pkt.BTH.Opcode == wire.OpNACK })
	if f != nil || t.Lossless() {
		t.Check(f != nil && f.Pkt.NETH.Reason == wire.NACKUnexpEvent, "RSP-NACK-5", At(f), "an UNEXP_EVENT NACK", describe(f))
	}
	st := c.QueryQP()
	t.Check(st.State == control.StateError, "RSP-NACK-5", Evidence{}, "QP state ERROR", "state %s", st.State)
	if got, ok := asyncEvent(t, control.AsyncQPReqErr, c.IUT, 0); ok {
		t.Check(got, "CTL-AEV-1", Evidence{}, "IBV_EVENT_QP_REQ_ERR for the QP", "none")
	}
}

func rspTransportACK(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	isACK := func(f *RxFrame) bool { return f.Pkt.BTH.Opcode == wire.OpAcknowledge }
	var acks []*RxFrame
	c.Watch = func(f *RxFrame) {
		if isACK(f) {
			acks = append(acks, f)
		}
	}
	msg := fill(1, 2048)
	last := c.Data(wire.PSNAdd(p, 1), wire.OpWriteLast, 1024, msg[1024:], 2048)
	c.Send(last, 0, c.TEV(0, 0), Impair{})
	c.Run(t.Now()+t.s.tim.Answer, nil)
	t.Check(len(acks) == 0, "RSP-ACK-1", Evidence{}, "no ACKNOWLEDGE before cack reaches the ack_req PSN", "%d", len(acks))
	firstPkt := c.Data(p, wire.OpWriteFirst, 0, msg[:1024], 2048)
	c.Send(firstPkt, 0, c.TEV(0, 1), Impair{})
	c.Run(t.Now()+t.s.tim.Answer, func() bool { return len(acks) > 0 })
	check := func(psn uint32, msn uint32) {
		if len(acks) == 0 {
			if t.Lossless() {
				t.Fail("RSP-ACK-1", Evidence{PSN: &psn}, fmt.Sprintf("an ACKNOWLEDGE with psn %d", psn), "none")
			}
			return
		}
		f := acks[len(acks)-1]
		a := &f.Pkt
		t.Check(a.BTH.PSN == psn && a.AETH.MSN == msn, "RSP-ACK-1", At(f), fmt.Sprintf("psn %d (cack) and msn %d", psn, msn), describe(f))
		t.Check(a.AETH.Syndrome == 0x1F, "WIRE-AETH-2", At(f), "syndrome 0x1F", describe(f))
	}
	check(wire.PSNAdd(p, 1), 1)
	acks = nil
	p2 := wire.PSNAdd(p, 2)
	c.sendWrite(p2, 1, 4096, fill(2, 64), 0, c.TEV(0, 2), Impair{})
	c.Run(t.Now()+t.s.tim.Answer, func() bool { return len(acks) > 0 })
	check(p2, 2)
}
