package conformance

import (
	"slices"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// TestFrameOpsDeclared checks the opcodes a check's frame hook declares
// (check.frameOps, by which wireChecks skips it): on a frame of any other
// opcode, with every field set to a value its checks would reject, the
// hook records nothing, so skipping it cannot change a verdict.
func TestFrameOpsDeclared(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.frame == nil || len(c.frameOps) == 0 {
			continue
		}
		n++
		for op := range 256 {
			if slices.Contains(c.frameOps, wire.Opcode(op)) {
				continue
			}
			e := newEngine(DefaultPICS())
			pt := newPoint("p")
			var r pcap.Record
			p := &r.Packet
			p.BTH.Opcode, p.BTH.PKey, p.BTH.DestQP = wire.Opcode(op), 0x1234, 0x12345
			p.IP4.TOS, p.IP6.TrafficClass = 0xff, 0xff
			p.SETH = wire.SETH{Type: 1, NextHeader: 1, CCType: 1, CCFlags: 1, MPR: 7, DPDCID: 1}
			p.NETH = wire.NETH{Type: 1, NextHeader: 1, CCType: 9, CCFlags: 1, DPDCID: 1}
			p.PETH = wire.PETH{Type: 1, NextHeader: 1, TSR: true, DPDCID: 1}
			p.AETH.Syndrome = 0x20
			x := &frameCtx{pt: pt, src: "n", r: &r, p: p, op: wire.Opcode(op),
				control: op == int(wire.OpSACK) || op == int(wire.OpNACK) || op == int(wire.OpAcknowledge) || op == int(wire.OpEndpointResp)}
			if c.frame(e, x); len(e.failedCases) > 0 || len(e.rows) > 0 {
				t.Errorf("%s: its frame hook judges opcode %d, which its frameOps %v leave out", c.cs, op, c.frameOps)
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d checks declare frameOps, want the opcode-specific ones (at least 5)", n)
	}
}

// TestFrameOnDeclared checks the frame kinds a check's frame hook declares
// (check.frameOn, by which wireChecks skips it): on a frame of each other
// kind and each opcode it judges, with every field set to a value its
// checks would reject, the hook records nothing, so skipping it cannot
// change a verdict.
func TestFrameOnDeclared(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.frame == nil || c.frameOn == 0 {
			continue
		}
		n++
		for k := range frameKind(numKinds) {
			valid := k.is(kTrimmed) != k.is(kUntrimmed) && (!k.is(kSRv6) || k.is(kIPv6))
			if !valid || k.is(c.frameOn) {
				continue
			}
			for op := range 256 {
				if len(c.frameOps) > 0 && !slices.Contains(c.frameOps, wire.Opcode(op)) || !wire.Opcode(op).Valid() {
					continue
				}
				e := newEngine(DefaultPICS())
				pt := newPoint("p")
				var r pcap.Record
				p := &r.Packet
				p.Trimmed, p.IsIPv6, p.SRv6 = k.is(kTrimmed), k.is(kIPv6), k.is(kSRv6)
				if k.is(kTSETH) {
					p.Decoded |= wire.HasTSETH
				}
				p.BTH.Opcode, p.BTH.PKey, p.BTH.DestQP, p.BTH.Variant = wire.Opcode(op), 0x1234, 0x12345, 0x55
				p.BTH.AckReq, p.BTH.SE, p.BTH.M = !wire.Opcode(op).IsLast(), true, true
				p.IP4.TOS, p.IP6.TrafficClass, p.Outer.TrafficClass, p.IP6.FlowLabel = 0xfd, 0xfd, 0x01, 0xfffff
				p.TSETH = wire.TSETH{TSR: true, FType: 3}
				x := &frameCtx{pt: pt, src: "n", r: &r, p: p, op: wire.Opcode(op), atSender: true,
					control: op == int(wire.OpSACK) || op == int(wire.OpNACK) || op == int(wire.OpAcknowledge) || op == int(wire.OpEndpointResp)}
				if c.frame(e, x); len(e.failedCases) > 0 || len(e.rows) > 0 {
					t.Errorf("%s: its frame hook judges a frame of kinds %05b, opcode %s, outside its frameOn %05b (%d failures, %d rows)",
						c.cs, k, wire.Opcode(op), c.frameOn, len(e.failedCases), len(e.rows))
				}
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d checks declare frameOn, want the kind-specific ones (at least 5)", n)
	}
}

// TestResentSkipsFirstTransmissions checks the checks whose hook is
// resent (not called for first transmissions, by which sendWrite skips
// them for most writes): shown a first transmission, on a connection with
// NACKs pending, retired EVs and its retries exhausted, under a PICS that
// declares the timers, each records nothing, so skipping it cannot change
// a verdict.
func TestResentSkipsFirstTransmissions(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.resent == nil {
			continue
		}
		n++
		p := DefaultPICS()
		to, lin, exp := 10, 1, 1
		p.Parameters.Timeout, p.Parameters.LinearCnt, p.Parameters.ExpCnt = &to, &lin, &exp
		e := newEngine(p)
		pt := newPoint("p")
		fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
		fl.anchored, fl.haveMax, fl.maxSent, fl.haveUna, fl.una = true, true, 99, true, 50
		fl.nackPend[100] = pendingNACK{frame: 1, reason: wire.NACKTrimmed}
		fl.bad[7] = badEV{frame: 1, cause: evstate.CauseAlwaysSkip}
		fl.exhausted, fl.fatal = true, true
		var r pcap.Record
		pk := &r.Packet
		pk.BTH.Opcode, pk.BTH.PSN, pk.BTH.Retransmit = wire.OpWriteOnly, 100, true
		e.now, e.frameNo = 1<<40, 5
		x := &sentCtx{judgedRow: judgedRow{new(obsRow)}, pt: pt, fl: fl, req: "a", r: &r, p: pk, psn: 100, ev: 7, t: e.now, isNew: true}
		c.resent(e, x)
		if len(e.rows) > 0 || e.lastRow.row != nil || rowUsed(x.row) {
			t.Errorf("%s: its resent hook judged a first transmission", c.cs)
		}
	}
	if n < 8 {
		t.Fatalf("%d checks declare resent, want the resend checks (at least 8)", n)
	}
}

// TestFeedbackOpsDeclared checks the opcodes a check's feedback hook
// declares (check.feedbackOps, by which runFeedback skips it): shown
// feedback of another opcode, judged, on a connection with arrivals
// pending, with the ack_req PSNs and WriteIMMs it answers that the engine
// finds for that opcode (an ACK covers PSNs, a NACK or NAK refuses
// WriteIMMs), each records nothing, so skipping it cannot change a
// verdict.
func TestFeedbackOpsDeclared(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.feedback == nil || len(c.feedbackOps) == 0 {
			continue
		}
		n++
		for _, op := range []wire.Opcode{wire.OpSACK, wire.OpNACK, wire.OpAcknowledge} {
			if slices.Contains(c.feedbackOps, op) {
				continue
			}
			e := newEngine(DefaultPICS())
			pt := newPoint("p")
			fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
			fl.rKnown, fl.haveCack, fl.lastCack, fl.rcum = true, true, 10, 10
			fl.trimPend[12] = arrival{psn: 12, trimmed: true}
			fl.oorPend[12] = arrival{psn: 12}
			var r pcap.Record
			pk := &r.Packet
			pk.BTH.Opcode = op
			pk.NETH = wire.NETH{NACKPSN: 12, Reason: wire.NACKTrimmed}
			pk.SETH = wire.SETH{CACKPSN: 10}
			x := &fbCtx{judgedRow: judgedRow{new(obsRow)}, pt: pt, fl: fl, rsp: "b", p: pk, op: op, judged: true, pend: &arrival{psn: 12, trimmed: true}, hasPend: true}
			if op == wire.OpAcknowledge {
				x.acksCovered = 1
			}
			if op == wire.OpAcknowledge || op == wire.OpNACK {
				x.wimmRefused = 1
			}
			c.feedback(e, x)
			if len(e.rows) > 0 || e.lastRow.row != nil || rowUsed(x.row) {
				t.Errorf("%s: its feedback hook judges %s, which its feedbackOps %v leave out", c.cs, op, c.feedbackOps)
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d checks declare feedbackOps, want the NACK-only and ACK-only ones (at least 5)", n)
	}
}

// rowUsed reports whether a hook recorded an observation in row (the
// judged node's row of its context, judgedRow.pass).
func rowUsed(row *obsRow) bool {
	for i := range row {
		if row[i].used {
			return true
		}
	}
	return false
}

// TestArrivedOnDeclared checks the kinds of arrival a check's arrived hook
// declares (check.arrivedOn, by which arrive skips it): shown an arrival of
// none of them (a valid, in-window PSN, or a trimmed one when it does not
// declare aTrimmed), each records nothing, so skipping it cannot change a
// verdict.
func TestArrivedOnDeclared(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.arrived == nil || c.arrivedOn == 0 {
			continue
		}
		n++
		for _, class := range []arrivalClass{arrOther, arrTrimmed} {
			k := arriveKind(0)
			if class == arrTrimmed {
				k |= aTrimmed
			}
			if k&c.arrivedOn != 0 {
				continue
			}
			e := newEngine(DefaultPICS())
			pt := newPoint("p")
			fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
			fl.rKnown, fl.rcum = true, 10
			x := &arriveCtx{pt: pt, fl: fl, rsp: "b", class: class,
				a: arrival{psn: 11, frame: 2, ns: 10, valid: class != arrTrimmed, inWindow: true, trimmed: class == arrTrimmed}}
			e.now, e.frameNo = 10, 2
			c.arrived(e, x)
			if len(e.rows) > 0 || e.lastRow.row != nil {
				t.Errorf("%s: its arrived hook acts on an arrival of kinds %02b, outside its arrivedOn %02b", c.cs, k, c.arrivedOn)
			}
		}
	}
	if n < 1 {
		t.Fatalf("%d checks declare arrivedOn: the test checks nothing", n)
	}
}

// TestAnswerOnDeclared checks the kinds of answer a check's answer hook
// declares (check.answerOn, by which runAnswer skips it): shown an answer
// of any other kind, with an arrival answered on another plane, with a
// CE mark the SACK's m does not follow and a timestamp it does not
// reflect, and no probe of the answer's id, each records nothing, so
// skipping it cannot change a verdict.
func TestAnswerOnDeclared(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.answer == nil || c.answerOn == 0 {
			continue
		}
		n++
		for k := ansTrigger; k <= ansOOR; k++ {
			if c.answerOn&(1<<k) != 0 {
				continue
			}
			e := newEngine(DefaultPICS())
			pt := newPoint("p")
			pt.curPlane = 1
			fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
			fl.rKnown, fl.rcum = true, 10
			s := &wire.SETH{CACKPSN: 10, AckPSNOffset: 2, CC: wire.CCState{TxTimestamp: 7}}
			a := &arrival{psn: 12, frame: 2, ev: 5, ce: true, ts: 3, hasTS: true, probe: k == ansProbe, plane: 0}
			x := &answerCtx{judgedRow: judgedRow{new(obsRow)}, kind: k, pt: pt, fl: fl, rsp: "b", s: s, ev: 5, what: "SACK", a: a,
				neededAnswer: true}
			if k == ansProbeUnmatched {
				x.a = nil
			}
			e.now, e.frameNo = 10, 3
			c.answer(e, x)
			if len(e.rows) > 0 || e.lastRow.row != nil || rowUsed(x.row) {
				t.Errorf("%s: its answer hook judges an answer of kind %d, which its answerOn %06b leaves out", c.cs, k, c.answerOn)
			}
		}
	}
	if n < 4 {
		t.Fatalf("%d checks declare answerOn, want at least 4", n)
	}
}
