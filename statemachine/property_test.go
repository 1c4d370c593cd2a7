package statemachine

import (
	"fmt"
	"testing"

	"github.com/openmrc/mrc/wire"
	"pgregory.net/rapid"
)

// checker watches a sim and records violations of the core invariants:
//
//   - no PSN is placed twice (RSP-DUP-1);
//   - every PSN in flight lies within una + W (MPR-WIN-1);
//   - WriteIMM completions come once each, in RQMSN order, after every
//     earlier PSN (WIMM-RSP-1, WIMM-RSP-2);
//   - a PSN named in a NACK is not retransmitted on the EV the NACK
//     reflects (EV-ST-13).
type checker struct {
	s          *sim
	placed     map[uint32]int
	nextRQMSN  uint16
	avoid      map[uint32]uint32
	violations []string
}

func watch(s *sim) *checker {
	c := &checker{s: s, placed: map[uint32]int{}, avoid: map[uint32]uint32{}}
	return c
}

func (c *checker) fail(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf("t=%d ", c.s.now)+fmt.Sprintf(format, args...))
}

// step checks the events QP i produced since the last call and the QPs'
// states now.
func (c *checker) step(i int, from int) {
	s := c.s
	for _, e := range s.events[i][from:] {
		switch {
		case i == 1 && e.Kind == EvPlaced:
			if c.placed[e.PSN]++; c.placed[e.PSN] > 1 {
				c.fail("PSN %d placed %d times (RSP-DUP-1)", e.PSN, c.placed[e.PSN])
			}
		case i == 1 && e.Kind == EvIMMDelivered:
			if uint16(e.Value) != c.nextRQMSN {
				c.fail("WriteIMM RQMSN %d delivered, want %d (WIMM-RSP-2)", e.Value, c.nextRQMSN)
			}
			c.nextRQMSN = uint16(e.Value) + 1
			if cack := s.qp[1].ResponderCumulativeACK(); wire.PSNLess(cack, e.PSN) {
				c.fail("WriteIMM with last PSN %d delivered with cack %d (WIMM-RSP-1)", e.PSN, cack)
			}
		case i == 0 && e.Kind == EvNACKReceived:
			c.avoid[e.PSN] = e.EV
		case i == 0 && e.Kind == EvStallTimeout:
			delete(c.avoid, e.PSN) // the wait's expiry ends the avoidance (LR-SM-3, AMB-44)
		case i == 0 && e.Kind == EvPacketSent && e.Flags&FlagRetransmit != 0:
			if ev, ok := c.avoid[e.PSN]; ok && ev == e.EV {
				c.fail("PSN %d retransmitted on the NACKed EV %#x (EV-ST-13)", e.PSN, ev)
			}
			delete(c.avoid, e.PSN)
		}
	}
	a := s.qp[0]
	una := a.CumulativeACK()
	w := uint32(a.attr.MPR) * 128
	for _, p := range a.AppendInFlight(nil) {
		if d := uint32(wire.PSNDiff(p, una)); d < 1 || d > w {
			c.fail("PSN %d in flight with una %d, W %d (MPR-WIN-1)", p, una, w)
		}
	}
}

// runChecked runs the sim like sim.run, checking after every step.
func (c *checker) run(until Time) {
	s := c.s
	n := [2]int{len(s.events[0]), len(s.events[1])}
	check := func() {
		for i := range n {
			c.step(i, n[i])
			n[i] = len(s.events[i])
		}
	}
	for {
		next := Never
		if len(s.q) > 0 {
			next = s.q[0].at
		}
		for _, q := range s.qp {
			next = min(next, q.NextDeadline())
		}
		if next == Never || next > until {
			return
		}
		s.now = max(s.now, next)
		for len(s.q) > 0 && s.q[0].at <= s.now {
			f := s.q[0]
			s.q = s.q[1:]
			s.qp[f.to].Receive(s.now, f.port, &f.pkt, &s.out)
			s.collect(f.to)
			check()
		}
		for i, q := range s.qp {
			if q.NextDeadline() <= s.now {
				q.Advance(s.now, &s.out)
				s.collect(i)
				check()
			}
		}
	}
}

// TestPropertyReliableDelivery drives a requester and a responder through
// random losses, trims, CE marks, duplicates, delays and responder resource
// shortages, with random messages, window sizes, coalescing and starting
// PSNs near the wrap. The invariants of checker hold at every step, every
// message completes successfully in post order, WriteIMMs are delivered
// once each in order, and the data lands intact.
func TestPropertyReliableDelivery(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := randomPair(rt)
		s.rule = fairAdversary(rt, s)
		c := watch(s)
		sizes, imms := postRandomWrites(rt, s)
		c.run(200 * Second) // the RTO is capped at 1.024 µs × 2^24 ≈ 17 s
		checkDelivered(rt, s, c, sizes, imms)
	})
}

// randomPair is a requester (0) and a responder (1) with random reorder
// guard, ACK coalescing, max_wimm, CC profile and a starting PSN near the
// wrap.
func randomPair(rt *rapid.T) *sim {
	ca, cb := testConfig(qpnA), testConfig(qpnB)
	ca.Policy.ReorderThreshold = rapid.IntRange(0, 8).Draw(rt, "reorder_guard")
	cb.Policy.Ack.Coalesce = rapid.IntRange(1, 4).Draw(rt, "ack_coalesce")
	aa, ab := testAttr(qpnB), testAttr(qpnA)
	aa.MaxWIMM = uint16(rapid.IntRange(1, 4).Draw(rt, "max_wimm"))
	psn := uint32(rapid.IntRange(1<<24-40, 1<<24-1).Draw(rt, "sq_psn"))
	aa.SQPSN, ab.RQPSN = psn, psn
	if rapid.Bool().Draw(rt, "nscc") {
		aa.CCProfileID = 10
	}
	s := newSim(rt, ca, cb, aa, ab)
	s.quiet = !testing.Verbose()
	return s
}

// fairAdversary returns a rule that loses, trims, marks, duplicates and
// delays packets at random and makes the responder short of resources,
// within fairness bounds that leave progress possible.
func fairAdversary(rt *rapid.T, s *sim) func(from int, o *Outgoing) action {
	dropP := rapid.IntRange(0, 25).Draw(rt, "drop%")
	fate := func(from int, o *Outgoing) action {
		f := rapid.IntRange(0, 99).Draw(rt, "fate")
		switch {
		case f < dropP:
			return action{drop: true}
		case from == 0 && o.Pkt.BTH.Opcode.IsWrite() && f < dropP+10:
			return action{trim: true, lastHop: f%2 == 0}
		case f < dropP+15:
			return action{ce: true}
		case f < dropP+20:
			return action{dup: true}
		case f < dropP+35:
			return action{extra: Time(rapid.IntRange(1, 5000).Draw(rt, "delay"))}
		}
		return action{}
	}
	// Fairness bounds the adversary so that progress is possible: a
	// data PSN is lost at most twice, at most two other packets in a
	// row are lost in each direction, and the responder is short of a
	// resource at most twice, for three packets each time.
	lostPSN := map[uint32]int{}
	var lostRun [2]int
	badLeft, episodes := 0, 0 // packets the responder stays short of a resource; shortages so far
	return func(from int, o *Outgoing) action {
		if from == 0 && o.Pkt.BTH.Opcode.IsWrite() {
			if badLeft > 0 {
				if badLeft--; badLeft == 0 {
					s.qp[1].SetResourceCondition(ResourcesOK)
				}
			} else if episodes < 2 && rapid.IntRange(0, 99).Draw(rt, "resource") < 3 {
				episodes++
				s.qp[1].SetResourceCondition(ResourceCondition(rapid.IntRange(1, 3).Draw(rt, "condition")))
				badLeft = 3
			}
		}
		a := fate(from, o)
		if !a.drop && !a.trim {
			lostRun[from] = 0
			return a
		}
		if from == 0 && o.Pkt.BTH.Opcode.IsWrite() {
			if lostPSN[o.Pkt.BTH.PSN]++; lostPSN[o.Pkt.BTH.PSN] > 2 {
				return action{}
			}
			return a
		}
		if lostRun[from]++; lostRun[from] > 2 {
			lostRun[from] = 0
			return action{}
		}
		return a
	}
}

// postRandomWrites posts 1 to 6 writes of random sizes, some with
// immediate data, and returns their sizes and how many carry immediates.
func postRandomWrites(rt *rapid.T, s *sim) (sizes []int, imms int) {
	nmsg := rapid.IntRange(1, 6).Draw(rt, "messages")
	sizes = make([]int, nmsg)
	for i := range sizes {
		sizes[i] = rapid.IntRange(0, 5000).Draw(rt, "size")
		imm := rapid.Bool().Draw(rt, "imm")
		if imm {
			imms++
		}
		s.write(0, uint64(i+1), i*8192, sizes[i], imm)
	}
	return sizes, imms
}

// checkDelivered checks the run's outcome: no invariant broken, every WR
// completed successfully in post order, each WriteIMM delivered once, and
// the data intact.
func checkDelivered(rt *rapid.T, s *sim, c *checker, sizes []int, imms int) {
	nmsg := len(sizes)
	for _, v := range c.violations {
		rt.Error(v)
	}
	var done []uint64
	for _, x := range s.comps[0] {
		if x.Status != StatusSuccess {
			rt.Fatalf("completion %+v", x)
		}
		done = append(done, x.WRID)
	}
	if len(done) != nmsg {
		if testing.Verbose() {
			for _, l := range s.log {
				rt.Log(l)
			}
		}
		rt.Fatalf("%d of %d WRs completed (A %s, una %d, nxt %d)", len(done), nmsg, s.qp[0].State(),
			s.qp[0].CumulativeACK(), s.qp[0].NextPSN())
	}
	for i, w := range done {
		if w != uint64(i+1) {
			rt.Fatalf("completion order %v (CMP-SND-2)", done)
		}
	}
	if int(c.nextRQMSN) != imms {
		rt.Fatalf("%d WriteIMMs delivered, want %d", c.nextRQMSN, imms)
	}
	for i, n := range sizes {
		for k := 0; k < n; k++ {
			if got, want := s.mem[1][i*8192+k], byte((i+1)*7+k); got != want {
				rt.Fatalf("message %d byte %d: %#x, want %#x", i+1, k, got, want)
			}
		}
	}
}

// TestFaultsAreCaught: each seeded fault breaks the behaviour its
// requirement protects, and the checks above (or the trace) see it. This
// keeps Config.Test.Faults honest for the model checker.
func TestFaultsAreCaught(t *testing.T) {
	for f, r := range faultRuns {
		t.Run(f.Name(), func(t *testing.T) {
			if r(t, 0) {
				t.Error("the correct implementation shows the bug")
			}
			if !r(t, f) {
				t.Error("the seeded fault went unnoticed")
			}
		})
	}
}

// faultRun runs a scenario under seeded faults f and reports whether the
// bug showed.
type faultRun func(t *testing.T, f Faults) bool

// faultRuns holds, per seeded fault, the scenario that shows it.
var faultRuns = map[Faults]faultRun{
	FaultPlaceDuplicates: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		s.rule = func(from int, o *Outgoing) action { return action{dup: from == 0 && o.Pkt.BTH.Opcode.IsWrite()} }
		c := watch(s)
		s.write(0, 1, 0, 2048, false)
		c.run(Millisecond)
		return len(c.violations) > 0
	},
	FaultBeyondMPR: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		c := watch(s)
		s.write(0, 1, 0, 200*1024, false)
		c.step(0, 0)
		return len(c.violations) > 0
	},
	FaultEarlyWIMM: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		s.rule = func(from int, o *Outgoing) action {
			return action{extra: map[bool]Time{true: 5 * Microsecond}[from == 0 && o.Pkt.BTH.PSN == 0 && o.Pkt.BTH.Opcode.IsWrite()]}
		}
		c := watch(s)
		s.write(0, 1, 0, 1024, false)
		s.write(0, 2, 1024, 10, true)
		c.run(Millisecond)
		return len(c.violations) > 0
	},
	FaultReuseNACKedEV: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		s.rule = func(from int, o *Outgoing) action {
			return action{trim: from == 0 && o.Pkt.BTH.Opcode.IsWrite() && !o.Pkt.BTH.Retransmit}
		}
		c := watch(s)
		s.write(0, 1, 0, 1024, false)
		c.run(Millisecond)
		return len(c.violations) > 0
	},
	FaultIgnoreTrim: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		s.rule = func(from int, o *Outgoing) action {
			return action{trim: from == 0 && o.Pkt.BTH.Opcode.IsWrite() && !o.Pkt.BTH.Retransmit}
		}
		s.write(0, 1, 0, 1024, false)
		s.run(5 * Microsecond)
		return len(s.comps[0]) == 0 // no NACK-driven retransmission within an RTT or two (LR-NACK-1)
	},
	FaultNoRestore: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		if err := s.qp[0].SetEVState(s.now, 0x100, EVAssumedBad, &s.out); err != nil {
			t.Fatal(err)
		}
		s.collect(0)
		s.run(Millisecond)
		st, _ := s.qp[0].EVStateOf(0x100)
		return st != EVGood // answered probes restore the EV (EV-ST-7)
	},
	FaultNoHoldOff: func(t *testing.T, f Faults) bool {
		o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10; c.Test.Faults = f })
		o.write(1, 512, false)
		sent := o.take()
		if len(sent) != 1 {
			t.Fatalf("%d packets sent, want 1", len(sent))
		}
		o.recv(1, nackPkt(sent[0].BTH.PSN, 0x100, wire.NACKNoPktBuffer))
		return len(o.take()) > 0 // retransmitted before base_rtt (LR-NACK-2)
	},
	FaultNoStallTimer: func(t *testing.T, f Faults) bool {
		o := nackedOnOnlyEV(t, func(c *testCfg, a *Attr) { a.Retry = Retry{LinearCnt: 1, ExpCnt: 0}; c.Test.Faults = f })
		for k := 0; k < 4 && o.q.NextDeadline() != Never; k++ {
			o.advance(o.q.NextDeadline())
		}
		return o.q.State() == StateRTS // hangs: no timer, no retry, no ERROR (LR-SM-3, LR-TMR-7)
	},
	FaultGoBackN: func(t *testing.T, f Faults) bool {
		s := faultPair(t, f)
		s.rule = func(from int, o *Outgoing) action {
			return action{drop: from == 0 && o.Pkt.BTH.PSN == 0 && o.Pkt.BTH.Opcode.IsWrite() && !o.Pkt.BTH.Retransmit}
		}
		s.write(0, 1, 0, 4*1024, false)
		s.run(Millisecond)
		rtx := 0
		for _, e := range s.events[0] {
			if e.Kind == EvPacketSent && e.Flags&FlagRetransmit != 0 {
				rtx++
			}
		}
		return rtx > 1 // PSNs 1-3 were acknowledged, yet resent (LR-RTX-1)
	},
}

func faultPair(t *testing.T, f Faults) *sim {
	ca := testConfig(qpnA)
	cb := testConfig(qpnB)
	ca.Test.Faults, cb.Test.Faults = f, f
	s := newSim(t, ca, cb, testAttr(qpnB), testAttr(qpnA))
	s.quiet = true
	return s
}

// TestPropertyGarbageInput feeds a QP with outstanding data random packets
// of every opcode with random header fields: it never panics, keeps every
// PSN in flight within its window, and holds no more state than its
// attributes allow, whatever the peer sends.
func TestPropertyGarbageInput(t *testing.T) {
	ops := []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteLastImm, wire.OpWriteOnly,
		wire.OpWriteOnlyImm, wire.OpAcknowledge, wire.OpEndpointReq, wire.OpEndpointResp, wire.OpSACK, wire.OpNACK, wire.OpProbe}
	rapid.Check(t, func(rt *rapid.T) {
		c, a := testConfig(qpnA), testAttr(qpnB)
		a.SQPSN = uint32(rapid.IntRange(0, 1<<24-1).Draw(rt, "sq_psn"))
		a.RQPSN = uint32(rapid.IntRange(0, 1<<24-1).Draw(rt, "rq_psn"))
		q, err := c.new()
		if err != nil {
			rt.Fatal(err)
		}
		var out Output
		if err := q.BringUp(0, a, &out); err != nil {
			rt.Fatal(err)
		}
		for k := 0; k < 4; k++ {
			_ = q.PostRecv(0, uint64(k), &out)
		}
		if err := q.Post(0, WorkRequest{Opcode: OpWrite, Data: make([]byte, 200*1024)}, &out); err != nil {
			rt.Fatal(err)
		}
		psn := func(label string) uint32 {
			near := a.SQPSN
			if rapid.Bool().Draw(rt, label+"_rq") {
				near = a.RQPSN
			}
			return (near + uint32(rapid.IntRange(-300, 300).Draw(rt, label))) & wire.PSNMask
		}
		now := Time(0)
		for i := rapid.IntRange(1, 200).Draw(rt, "packets"); i > 0; i-- {
			out.Reset()
			now += Time(rapid.IntRange(0, 40_000).Draw(rt, "dt"))
			if rapid.IntRange(0, 9).Draw(rt, "advance") == 0 {
				q.Advance(now, &out)
				continue
			}
			p := &wire.Packet{}
			ipv4(p, uint8(rapid.IntRange(0, 63).Draw(rt, "dscp")), uint8(rapid.IntRange(0, 3).Draw(rt, "ecn")))
			p.SetEV(uint32(rapid.IntRange(0, 0x300).Draw(rt, "ev")), wire.EVModeSTEV)
			op := rapid.SampledFrom(ops).Draw(rt, "op")
			p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: qpnA, PSN: psn("psn"),
				AckReq: rapid.Bool().Draw(rt, "ackreq"), Retransmit: rapid.Bool().Draw(rt, "rtx")}
			p.METH.RQMSN = uint16(rapid.IntRange(0, 8).Draw(rt, "rqmsn"))
			p.Payload = make([]byte, rapid.SampledFrom([]int{0, 1, 1023, 1024, 1025}).Draw(rt, "len"))
			p.RETH = wire.RETH{VA: uint64(rapid.Uint64().Draw(rt, "va")), DMALength: uint32(rapid.Uint32().Draw(rt, "dmalen"))}
			p.SETH = wire.SETH{M: wire.Multipath(rapid.IntRange(0, 3).Draw(rt, "m")), PR: rapid.Bool().Draw(rt, "pr"),
				AckPSNOffset: int16(rapid.Int16().Draw(rt, "ackoff")), Entropy: uint32(rapid.IntRange(0, 0x300).Draw(rt, "entropy")),
				CACKPSN: psn("cack"), MPR: uint8(rapid.IntRange(0, 3).Draw(rt, "mpr")), SACKOffset: int16(rapid.Int16().Draw(rt, "sackoff")),
				SACKBitmap: rapid.Uint64().Draw(rt, "bitmap")}
			p.SETH.CC.RcvCwndPen = uint8(rapid.IntRange(0, 127).Draw(rt, "pen"))
			p.NETH = wire.NETH{Reason: wire.NACKReason(rapid.IntRange(0, 0x20).Draw(rt, "reason")), NACKPSN: psn("nackpsn"),
				Entropy: uint32(rapid.IntRange(0, 0x300).Draw(rt, "nack_ev"))}
			p.AETH.Syndrome = uint8(rapid.IntRange(0, 0x7F).Draw(rt, "syndrome"))
			q.Receive(now, rapid.IntRange(-1, 40).Draw(rt, "port"), p, &out)
			if q.State() == StateError {
				return
			}
			una, w := q.CumulativeACK(), uint32(a.MPR)*128
			for _, f := range q.AppendInFlight(nil) {
				if d := uint32(wire.PSNDiff(f, una)); d < 1 || d > w {
					rt.Fatalf("PSN %d in flight with una %d (MPR-WIN-1)", f, una)
				}
			}
			if n := len(q.WIMMHeld(nil)); n > int(a.MaxWIMMDest) {
				rt.Fatalf("%d WriteIMMs held, max_wimm_dest %d (WIMM-RSP-4)", n, a.MaxWIMMDest)
			}
		}
	})
}
