package statemachine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

type pktSummary struct {
	Op         wire.Opcode
	PSN        uint32
	MSN, RQMSN uint16
	VA         uint64
	DMALen     uint32
	Len        int
	AckReq     bool
	Imm        uint32
}

func summarize(ps []wire.Packet) []pktSummary {
	var s []pktSummary
	for i := range ps {
		p := &ps[i]
		s = append(s, pktSummary{p.BTH.Opcode, p.BTH.PSN, p.METH.MSN, p.METH.RQMSN, p.RETH.VA, p.RETH.DMALength,
			len(p.Payload), p.BTH.AckReq, p.ImmDt})
	}
	return s
}

// TestSegmentation: one PSN per packet from SQ_PSN, opcodes by position,
// a RETH with the packet's own VA in every packet, MSN per message and
// RQMSN counting WriteIMMs, ImmDt only in the last packet of a WriteIMM,
// ack_req only on a message's last packet (REQ-SEG-1, REQ-SEG-2,
// REQ-SEG-3, REQ-PSN-1, REQ-PSN-3, REQ-OP-3, WIRE-RETH-1, WIRE-RETH-2,
// WIRE-RETH-3, WIRE-METH-1, WIRE-METH-2, WIRE-METH-3, WIRE-IMM-1,
// WIRE-PAY-1, WIRE-PAY-2, WIRE-BTH-14, REQ-HDR-3).
func TestSegmentation(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.SQPSN = 1<<24 - 1 })
	o.post(WorkRequest{WRID: 1, Opcode: OpWriteImm, RemoteVA: 0x1000, Data: nil, Imm: 7})
	o.post(WorkRequest{WRID: 2, Opcode: OpWrite, RemoteVA: 0x2000, Data: make([]byte, 1024)})
	o.post(WorkRequest{WRID: 3, Opcode: OpWriteImm, RemoteVA: 0x3000, Data: make([]byte, 2500), Imm: 9})
	o.post(WorkRequest{WRID: 4, Opcode: OpWrite, RemoteVA: 0x4000, Data: make([]byte, 1)})
	got := summarize(o.take())
	want := []pktSummary{
		{wire.OpWriteOnlyImm, 1<<24 - 1, 0, 0, 0x1000, 0, 0, true, 7},
		{wire.OpWriteOnly, 0, 1, 1, 0x2000, 1024, 1024, true, 0},
		{wire.OpWriteFirst, 1, 2, 1, 0x3000, 2500, 1024, false, 0},
		{wire.OpWriteMiddle, 2, 2, 1, 0x3400, 2500, 1024, false, 0},
		{wire.OpWriteLastImm, 3, 2, 1, 0x3800, 2500, 452, true, 9},
		{wire.OpWriteOnly, 4, 3, 2, 0x4000, 1, 1, true, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// TestHeaders: the cap bits of QP-ATTR-3 as they shape headers; TSETH when
// configured (REQ-HDR-1, WIRE-TSETH-2,
// WIRE-BTH-6), DSCP and ECN per class (WIRE-DSCP-1, WIRE-DSCP-3), rtx flag
// and retransmit class on retransmissions (WIRE-BTH-5, LR-RTX-3), the QP's
// P_Key (WIRE-BTH-12) and the EV in the UDP source port (WIRE-UDP-2).
func TestHeaders(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Timestamps = true; c.Addr.PKey = 0x8001 })
	o.now = 1280
	o.write(1, 10, false)
	p := o.take()[0]
	if !p.BTH.TSPresent || p.TSETH.TxTimestamp != 10 || p.TSETH.FType != 1 || p.TSETH.TSR {
		t.Errorf("TSETH %+v, ts flag %v: want timestamp 10 (1280 ns / 128), ftype 1", p.TSETH, p.BTH.TSPresent)
	}
	if p.DSCP() != 4 || p.ECN() != 2 || p.BTH.Retransmit || p.BTH.PKey != 0x8001 {
		t.Errorf("first transmission: DSCP %d ECN %d rtx %v pkey %#x; want 4, ECT(0), false, 0x8001", p.DSCP(), p.ECN(), p.BTH.Retransmit, p.BTH.PKey)
	}
	if ev := p.EV(wire.EVModeSTEV); ev != 0x100 && ev != 0x201 || uint32(p.UDP.SrcPort) != ev {
		t.Errorf("EV %#x in source port %#x", ev, p.UDP.SrcPort)
	}
	o.recv(1, nackPkt(0, p.EV(wire.EVModeSTEV), wire.NACKTrimmed))
	r := o.take()[0]
	if !r.BTH.Retransmit || r.DSCP() != 8 || r.ECN() != 2 || !r.BTH.TSPresent {
		t.Errorf("retransmission: rtx %v DSCP %d ECN %d ts %v; want true, 8, ECT(0), true", r.BTH.Retransmit, r.DSCP(), r.ECN(), r.BTH.TSPresent)
	}

	// The control class for retransmissions, and NO_TRIM when the peer
	// cannot NACK trims (WIRE-DSCP-5).
	o = newOne(t, func(c *testCfg, a *Attr) {
		p := spec.DefaultProfile()
		p.Retransmit = spec.RetransmitControl
		c.Profile = &p
	})
	o.write(1, 10, false)
	p = o.take()[0]
	o.recv(1, nackPkt(0, p.EV(wire.EVModeSTEV), wire.NACKTrimmed))
	if r := o.take()[0]; r.DSCP() != 46 || r.ECN() != 2 {
		t.Errorf("control-class retransmission: DSCP %d ECN %d, want 46, ECT(0)", r.DSCP(), r.ECN())
	}
	o = newOne(t, func(c *testCfg, a *Attr) { a.Cap = CapTrimNACKDestUnsupported })
	o.write(1, 10, false)
	p = o.take()[0]
	o.recv(1, nackPkt(0, p.EV(wire.EVModeSTEV), wire.NACKTrimmedLastHop))
	if r := o.take()[0]; p.DSCP() != 0 || r.DSCP() != 0 {
		t.Errorf("peer without trim NACKs: DSCP %d then %d, want 0 (NO_TRIM) for both", p.DSCP(), r.DSCP())
	}
}

// TestMPRWindow: the requester never sends beyond una + 128 × MPR
// (MPR-WIN-1, MPR-WIN-2, REQ-TX-1); the window moves with the cumulative
// ACK.
func TestMPRWindow(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.MPR = 1 })
	o.write(1, 200*1024, false)
	ps := o.take()
	if len(ps) != 128 || ps[127].BTH.PSN != 127 {
		t.Fatalf("sent %d packets (last PSN %d), want 128 up to PSN 127", len(ps), ps[len(ps)-1].BTH.PSN)
	}
	o.recv(1, sackPkt(9, 9, 10, 0, 0x100, wire.MNone))
	ps = o.take()
	if len(ps) != 10 || ps[0].BTH.PSN != 128 || ps[9].BTH.PSN != 137 {
		t.Errorf("after cack 9: sent %d packets from PSN %d, want 10 from 128", len(ps), ps[0].BTH.PSN)
	}
	if got := o.q.CumulativeACK(); got != 9 {
		t.Errorf("una %d, want 9", got)
	}
}

// TestDynamicMPR: with dynamic MPR in effect the window is the smaller of
// MPR and the latest SACK's mpr, and mpr = 0 leaves it unchanged
// (MPR-DYN-1, MPR-DYN-3, MPR-DYN-4); without it the field is ignored
// (WIRE-SETH-4).
func TestDynamicMPR(t *testing.T) {
	for _, dyn := range []bool{true, false} {
		o := newOne(t, func(c *testCfg, a *Attr) {
			a.MPR, a.MPRDest = 2, 2
			if dyn {
				a.Cap = CapDynamicMPR
			}
		})
		sack := func(cack uint32, mpr uint8) int {
			s := sackPkt(cack, cack, cack+1, 0, 0x100, wire.MNone)
			s.SETH.MPR = mpr
			o.recv(1, s)
			return len(o.take())
		}
		o.write(1, 300*1024, false)
		if n := len(o.take()); n != 256 {
			t.Fatalf("dyn=%v: sent %d, want 256 (W = 128 × MPR 2)", dyn, n)
		}
		// una 199, mpr 1: the window ends at 327 (dynamic) or 455; the 44
		// unsent PSNs 256..299 fit either way.
		if n := sack(199, 1); n != 44 {
			t.Errorf("dyn=%v: sent %d, want 44", dyn, n)
		}
		// PSNs 300..499: 28 fit below 327 with dynamic MPR, 156 below 455.
		o.write(2, 200*1024, false)
		want := map[bool]int{true: 28, false: 156}[dyn]
		if n := len(o.take()); n != want {
			t.Errorf("dyn=%v: sent %d of the second WR, want %d", dyn, n, want)
		}
		want = map[bool]int{true: 100, false: 44}[dyn] // up to 427 (dynamic) or all
		if n := sack(299, 1); n != want {
			t.Errorf("dyn=%v: after cack 299 with mpr 1: sent %d, want %d", dyn, n, want)
		}
		if n := sack(299, 0); n != 0 {
			t.Errorf("dyn=%v: a SACK with mpr 0 opened the window: %d more sent", dyn, n)
		}
	}
}

// TestMaxWIMM: at most max_wimm WriteIMMs are in flight, from their first
// packet to their send completion; the next one waits, and everything
// posted after it waits too (WIMM-REQ-1, WIMM-REQ-3).
func TestMaxWIMM(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.MaxWIMM = 1 })
	o.write(1, 10, true)
	o.write(2, 10, true)
	o.write(3, 10, false)
	if ps := o.take(); len(ps) != 1 || o.q.WIMMInFlight() != 1 {
		t.Fatalf("sent %d packets with 1 WriteIMM in flight, want 1", len(ps))
	}
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone))
	ps := o.take()
	if len(ps) != 2 || ps[0].BTH.Opcode != wire.OpWriteOnlyImm || ps[1].BTH.PSN != 2 {
		t.Errorf("after the first WriteIMM completed: %v", summarize(ps))
	}
}

// TestSendCompletions: a WR completes when the cumulative ACK covers its
// last PSN, not on selective acknowledgement, in post order; unsignaled
// WRs complete silently (CMP-SND-1, CMP-SND-2, CMP-SND-3).
func TestSendCompletions(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 1024, false)
	o.write(2, 1024, false)
	o.post(WorkRequest{WRID: 3, Opcode: OpWrite, Data: make([]byte, 1024), Unsignaled: true})
	o.write(4, 1024, true)
	o.take()
	o.recv(1, sackPkt(1<<24-1, 3, 0, 0b1110, 0x100, wire.MNone)) // PSNs 1-3 selectively
	if len(o.out.Completions) != 0 {
		t.Fatalf("completions on selective ACK: %+v", o.out.Completions)
	}
	o.recv(1, sackPkt(3, 0, 4, 0, 0x100, wire.MNone))
	var got []uint64
	for _, c := range o.out.Completions {
		got = append(got, c.WRID)
		if c.Status != StatusSuccess || c.Recv {
			t.Errorf("completion %+v", c)
		}
	}
	if d := cmp.Diff([]uint64{1, 2, 4}, got); d != "" {
		t.Error(d)
	}
}

// TestNACKReasons: each reason code's effect on retransmission, EV state,
// retry counter and QP state (LR-NACK-1, LR-NACK-2, LR-NACK-3, LR-NACK-4,
// LR-NACK-5, LR-NACK-7, EV-ST-3, EV-ST-13, LR-SM-2, CMP-ERR-2).
func TestNACKReasons(t *testing.T) {
	cases := []struct {
		r       wire.NACKReason
		rtxAt   Time // -1: never
		evState EVState
		retries int
		qp      QPState
	}{
		{wire.NACKTrimmed, 0, EVSkip, 1, StateRTS},
		{wire.NACKTrimmedLastHop, 0, EVGood, 1, StateRTS},
		{wire.NACKNoBitmap, 10_000, EVGood, 1, StateRTS},
		{wire.NACKNoPktBuffer, 10_000, EVGood, 1, StateRTS},
		{wire.NACKNoResource, 10_000, EVGood, 1, StateRTS},
		{wire.NACKPSNOutOfWindow, 0, EVGood, 1, StateRTS},
		{wire.NACKUnexpEvent, -1, EVGood, 0, StateError},
		{wire.NACKReason(0x55), -1, EVGood, 0, StateRTS},
	}
	for _, c := range cases {
		t.Run(c.r.String(), func(t *testing.T) {
			o := newOne(t, func(cf *testCfg, a *Attr) { a.CCProfileID = 10 }) // NSCC: base_rtt 10 µs
			o.write(1, 1024, false)
			ev := o.take()[0].EV(wire.EVModeSTEV)
			o.recv(1, nackPkt(0, ev, c.r))
			comps := append([]Completion(nil), o.out.Completions...)
			ps := o.take()
			if c.rtxAt == 0 != (len(ps) == 1) {
				t.Fatalf("retransmitted %d packets at once", len(ps))
			}
			if c.rtxAt > 0 {
				if d := o.q.NextDeadline(); d != c.rtxAt {
					t.Errorf("next deadline %d, want the hold-off at %d", d, c.rtxAt)
				}
				o.advance(c.rtxAt - 1)
				if n := len(o.take()); n != 0 {
					t.Fatalf("retransmitted before base_rtt")
				}
				o.advance(c.rtxAt)
				ps = o.take()
				if len(ps) != 1 {
					t.Fatalf("not retransmitted after base_rtt")
				}
				if d := o.q.NextDeadline(); d <= o.now {
					t.Errorf("next deadline %d not after now %d once the hold-off is over", d, o.now)
				}
			}
			if len(ps) == 1 && (!ps[0].BTH.Retransmit || ps[0].EV(wire.EVModeSTEV) == ev) {
				t.Errorf("retransmission rtx=%v on EV %#x, NACKed EV %#x", ps[0].BTH.Retransmit, ps[0].EV(wire.EVModeSTEV), ev)
			}
			if st, _ := o.q.EVStateOf(ev); st != c.evState {
				t.Errorf("EV %s, want %s", st, c.evState)
			}
			if o.q.Retries() != c.retries || o.q.State() != c.qp {
				t.Errorf("retries %d, state %s; want %d, %s", o.q.Retries(), o.q.State(), c.retries, c.qp)
			}
			if c.r == wire.NACKUnexpEvent && (len(comps) == 0 || comps[0].WRID != 1 || comps[0].Status != StatusRemoteOpError) {
				t.Errorf("UNEXP_EVENT completions %+v, want WR 1 with REM_OP_ERR (LR-NACK-4)", comps)
			}
		})
	}
}

// TestNACKNotOutstanding: a NACK for an acknowledged or never-sent PSN
// changes nothing (LR-NACK-6).
func TestNACKNotOutstanding(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 2048, false)
	ps := o.take()
	ev := ps[1].EV(wire.EVModeSTEV)
	o.recv(1, sackPkt(1<<24-1, 1, 0, 0b10, ev, wire.MNone)) // PSN 1 selectively acked
	for _, psn := range []uint32{1, 2, 1 << 23} {
		o.recv(1, nackPkt(psn, ev, wire.NACKTrimmed))
	}
	if st, _ := o.q.EVStateOf(ev); st != EVGood || o.q.Retries() != 0 || len(o.take()) != 0 {
		t.Errorf("EV %s, retries %d after NACKs for PSNs not outstanding", st, o.q.Retries())
	}
}

// TestAETH: an ACK cumulatively acknowledges up to its PSN (RSP-ACK-2); NAK
// codes 1, 2 and 3 fail the QP with their statuses (RSP-ACK-3, CMP-ERR-2);
// RNR and code-0 NAKs are discarded (WIRE-AETH-3).
func TestAETH(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 2048, false)
	o.take()
	o.recv(1, aethPkt(0, wire.AETHNoCredit))
	if o.q.CumulativeACK() != 0 {
		t.Errorf("una %d after ACK of PSN 0", o.q.CumulativeACK())
	}
	for _, syn := range []uint8{1<<5 | 3, 3 << 5} { // RNR, NAK code 0
		o.recv(1, aethPkt(1, syn))
		if o.q.State() != StateRTS {
			t.Errorf("syndrome %#x moved the QP to %s", syn, o.q.State())
		}
	}
	for code, st := range map[uint8]Status{1: StatusRemoteInvalidReq, 2: StatusRemoteAccessErr, 3: StatusRemoteOpError} {
		o := newOne(t, nil)
		o.write(1, 10, false)
		o.take()
		o.recv(1, aethPkt(0, 3<<5|code))
		if o.q.State() != StateError || len(o.out.Completions) == 0 || o.out.Completions[0].Status != st {
			t.Errorf("NAK code %d: state %s, completions %+v; want ERROR, %s", code, o.q.State(), o.out.Completions, st)
		}
	}
}

// TestSACKProcessing: cumulative and selective acknowledgement
// (LR-SACK-1, LR-SACK-2), the verdict applied to the reflected EV
// (LR-SACK-3), a reserved m read as NONE (WIRE-SETH-3), and SACKs that
// acknowledge unsent PSNs discarded.
func TestSACKProcessing(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 6*1024, false)
	ps := o.take()
	o.recv(1, sackPkt(6, 6, 7, 0, 0x100, wire.MNone)) // cack 6 = the next unsent PSN
	if o.q.CumulativeACK() != 1<<24-1 || len(o.events(EvIgnored)) != 1 {
		t.Fatalf("a SACK acknowledging unsent PSN 6 was not discarded")
	}
	o.recv(1, sackPkt(1, 4, 2, 0b101, 0x100, wire.MNone)) // cack 1, PSNs 2 and 4
	want := []PSNState{PSNNotOutstanding, PSNNotOutstanding, PSNSACKed, PSNInFlight, PSNSACKed, PSNInFlight}
	for psn, w := range want {
		if got := o.q.PSNStateOf(uint32(psn)); got != w {
			t.Errorf("PSN %d: %d, want %d", psn, got, w)
		}
	}
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone)) // an older cack does not move una back
	if o.q.CumulativeACK() != 1 {
		t.Errorf("una %d, want 1", o.q.CumulativeACK())
	}
	ev := ps[3].EV(wire.EVModeSTEV)
	o.recv(1, sackPkt(3, 3, 4, 0, ev, wire.MSkipOnce))
	if st, _ := o.q.EVStateOf(ev); st != EVSkip {
		t.Errorf("EV %#x %s after SKIP_ONCE, want SKIP", ev, st)
	}
	o2 := newOne(t, nil)
	o2.write(1, 1024, false)
	ev = o2.take()[0].EV(wire.EVModeSTEV)
	o2.recv(1, sackPkt(0, 0, 1, 0, ev, wire.Multipath(3)))
	if st, _ := o2.q.EVStateOf(ev); st != EVGood {
		t.Errorf("m = 3 changed the EV to %s", st)
	}
}

// TestTimeout: every packet has its own timer (LR-TMR-3) of T = 1.024 µs ×
// 2^timeout (LR-TMR-1, LR-TMR-4); on expiry the PSN is retransmitted, its EV goes ASSUMED_BAD
// and one retry is counted (LR-TMR-5, EV-ST-5); a selectively acknowledged
// packet never times out (LR-SACK-5); una advancing resets the counter
// (LR-TMR-6); a timeout on an EV already ASSUMED_BAD is not counted.
func TestTimeout(t *testing.T) {
	o := newOne(t, nil) // timeout 4: T = 16384 ns
	o.write(1, 3*1024, false)
	ps := o.take()
	o.recv(1, sackPkt(1<<24-1, 1, 0, 0b10, 0x100, wire.MNone)) // PSN 1 selectively
	if d := o.q.NextDeadline(); d != 16384 {
		t.Fatalf("deadline %d, want 16384", d)
	}
	o.advance(16383)
	if len(o.take()) != 0 {
		t.Fatal("retransmitted before the timeout")
	}
	o.advance(16384)
	rtx := o.take()
	// PSNs 0 and 2 were sent on the two active EVs in turn; PSN 1 is acked.
	var got []uint32
	for _, p := range rtx {
		if p.BTH.Opcode.IsWrite() {
			got = append(got, p.BTH.PSN)
		}
	}
	if d := cmp.Diff([]uint32{0, 2}, got); d != "" {
		t.Errorf("retransmitted PSNs (-want +got): %s", d)
	}
	// PSN 0 and 2 left on different EVs; both are now ASSUMED_BAD, but only
	// the oldest outstanding packet's timeout (PSN 0) counts (LR-TMR-6).
	wantRetries := 1
	if o.q.Retries() != wantRetries {
		t.Errorf("retries %d, want %d", o.q.Retries(), wantRetries)
	}
	for _, i := range []int{0, 2} {
		if st, _ := o.q.EVStateOf(ps[i].EV(wire.EVModeSTEV)); st != EVAssumedBad {
			t.Errorf("EV of PSN %d: %s, want ASSUMED_BAD", i, st)
		}
	}
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone))
	if o.q.Retries() != 0 {
		t.Errorf("retries %d after una advanced, want 0", o.q.Retries())
	}
}

// TestTimeoutBackoff: after linear_cnt retries the timer doubles per retry
// (LR-TMR-2, LR-TMR-4), capped at 1.024 µs × 2^24.
func TestTimeoutBackoff(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		a.Retry = Retry{LinearCnt: 1, ExpCnt: RetryInfinite}
		a.Timeout = 22
		c.EVProfiles[0].MinActive = 4 // keep EVs GOOD so that every timeout counts
	})
	o.write(1, 10, false)
	o.take()
	at := Time(0)
	for i, want := range []Time{Timeout(22), Timeout(22), 2 * Timeout(22), 4 * Timeout(22), 4 * Timeout(22)} {
		d := o.q.NextDeadline()
		if d-at != want {
			t.Fatalf("timer %d ran %d, want %d", i, d-at, want)
		}
		at = d
		o.advance(d)
		o.take()
	}
	if o.q.State() != StateRTS {
		t.Errorf("exp_cnt 25 is infinite, but the QP is %s", o.q.State())
	}
}

// TestCwndGate: the requester sends while the payload in flight plus the
// new packet fit cwnd, one window for the QP whatever EVs the packets take
// (CC-GEN-2, CC-GEN-4), and pending retransmissions go before new PSNs
// (REQ-TX-2, LR-RTX-2).
func TestCwndGate(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.CCProfiles[1].NSCC.MaxCwnd = 2048
		a.CCProfileID = 10
	})
	o.write(1, 5*1024, false)
	ps := o.take()
	if len(ps) != 2 {
		t.Fatalf("sent %d packets with cwnd 2048 and 1024-byte packets, want 2", len(ps))
	}
	// PSN_OOR_WINDOW leaves cwnd alone (CC-NSCC-6): the freed room goes to
	// the retransmission, not to PSN 2.
	o.recv(1, nackPkt(0, ps[0].EV(wire.EVModeSTEV), wire.NACKPSNOutOfWindow))
	got := summarize(o.take())
	if len(got) != 1 || got[0].PSN != 0 {
		t.Errorf("after the NACK sent %v, want the retransmission of PSN 0 only", got)
	}
}

// TestRetransmissionContent: a retransmission repeats PSN, opcode, METH,
// RETH, ImmDt and payload; only the EV, rtx, DSCP and TSETH timestamp
// change (REQ-PSN-2, LR-RTX-3).
func TestRetransmissionContent(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Timestamps = true })
	o.post(WorkRequest{WRID: 1, Opcode: OpWriteImm, RemoteVA: 0x5000, RKey: 3, Data: []byte("hello"), Imm: 0xFEED})
	first := o.take()[0]
	o.now = 5000
	o.recv(1, nackPkt(0, first.EV(wire.EVModeSTEV), wire.NACKTrimmed))
	rtx := o.take()[0]
	same := func(p wire.Packet) wire.Packet {
		p.UDP, p.IP4.TOS, p.BTH.Retransmit, p.TSETH.TxTimestamp = wire.UDP{}, 0, false, 0
		return p
	}
	if d := cmp.Diff(same(first), same(rtx), cmp.AllowUnexported(wire.Packet{})); d != "" {
		t.Errorf("retransmission differs beyond EV, rtx, DSCP and timestamp: %s", d)
	}
	if rtx.TSETH.TxTimestamp == first.TSETH.TxTimestamp || rtx.EV(wire.EVModeSTEV) == first.EV(wire.EVModeSTEV) {
		t.Error("the retransmission kept the timestamp or the EV")
	}
}

// TestOutstandingBound: even the largest MPR keeps the outstanding PSNs far
// below 2^23 (REQ-PSN-4).
func TestOutstandingBound(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.MPR, a.MPRDest = 255, 255 })
	if w := o.q.req.effWin(); w != 255*128 || w >= 1<<23 {
		t.Errorf("window %d", w)
	}
}

// TestReorderGuardDefault: without a CC window the guard is the MPR window;
// under NSCC it is cwnd in packets (LR-RTX-4, LR-SM-1).
func TestReorderGuardDefault(t *testing.T) {
	o := newOne(t, nil)
	if g := o.q.reorderGuard(); g != 128 {
		t.Errorf("guard %d without CC, want 128", g)
	}
	o = newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 })
	if g, want := o.q.reorderGuard(), int(DefaultNSCC().MaxCwnd)/1024; g != want {
		t.Errorf("guard %d under NSCC, want cwnd/MTU = %d", g, want)
	}
}

// nackedOnOnlyEV returns QP A with every EV but 0x100 DENIED, one 1 KiB
// WRITE sent and a TRIMMED_LASTHOP NACK for PSN 0 on 0x100 received: the
// retransmission's only usable EV is the one it must avoid (EV-ST-13,
// LR-SM-3). The NACK counts one retry.
func nackedOnOnlyEV(t *testing.T, mod func(*testCfg, *Attr)) *one {
	t.Helper()
	o := newOne(t, mod)
	for _, ev := range []uint32{0x101, 0x200, 0x201} {
		if err := o.q.SetEVState(0, ev, EVDenied, &o.out); err != nil {
			t.Fatal(err)
		}
	}
	o.write(1, 1024, false)
	o.take()
	o.recv(1, nackPkt(0, 0x100, wire.NACKTrimmedLastHop))
	return o
}

// TestRetransmissionWaitsForAnotherEV: when the only usable EV is the one
// the NACK named, the retransmission and everything behind it wait until
// another EV is GOOD (LR-SM-3, EV-ST-13).
func TestRetransmissionWaitsForAnotherEV(t *testing.T) {
	o := nackedOnOnlyEV(t, nil)
	o.write(2, 1024, false)
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v with only the NACKed EV usable", summarize(ps))
	}
	if err := o.q.SetEVState(0, 0x201, EVGood, &o.out); err != nil {
		t.Fatal(err)
	}
	ps := o.take()
	if len(ps) != 2 || !ps[0].BTH.Retransmit || ps[0].EV(wire.EVModeSTEV) != 0x201 {
		t.Errorf("after 0x201 came back: %v", summarize(ps))
	}
}

// TestInferredLossRetiresEV: a packet inferred lost from the SACK bitmap
// (LR-RTX-4) implicates the EV it went out on as a timeout does: GOOD →
// ASSUMED_BAD with cause CauseInferredLoss and no retry counted, subject
// to the ev_min_active floor; the policy KeepEVOnInferredLoss leaves the
// EV alone (EV-SM-5, EV-ST-5, EV-SET-6, LR-TMR-6).
func TestInferredLossRetiresEV(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(c *testCfg, a *Attr)
		want EVState
	}{
		{"default", nil, EVAssumedBad},
		{"KeepEVOnInferredLoss", func(c *testCfg, a *Attr) { c.Policy.KeepEVOnInferredLoss = true }, EVGood},
		{"ev_min_active", func(c *testCfg, a *Attr) { c.EVProfiles[0].MinActive = 4 }, EVGood},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOne(t, func(c *testCfg, a *Attr) {
				c.Policy.ReorderThreshold = 1
				a.MPR = 4
				if tc.mod != nil {
					tc.mod(c, a)
				}
			})
			o.write(1, 3*1024, false)
			ps := o.take()
			if len(ps) != 3 {
				t.Fatalf("sent %d packets, want 3", len(ps))
			}
			lost := ps[0].EV(wire.EVModeSTEV)
			// PSN 1 and 2 arrive, PSN 0 does not: one packet beyond the guard.
			o.recv(1, sackPkt(wire.PSNAdd(0, -1), 2, 1, 0b11, ps[2].EV(wire.EVModeSTEV), wire.MNone))
			st, _ := o.q.EVStateOf(lost)
			if st != tc.want {
				t.Errorf("EV %#x of the PSN inferred lost is %s, want %s", lost, st, tc.want)
			}
			var causes []EVCause
			for _, e := range o.events(EvEVState) {
				if e.EV == lost {
					causes = append(causes, EVCause(e.Reason))
				}
			}
			if (tc.want == EVAssumedBad) != (len(causes) == 1 && causes[0] == CauseInferredLoss) {
				t.Errorf("EV %#x state events with causes %v", lost, causes)
			}
			if n := len(o.events(EvRetry)); n != 0 || o.q.Retries() != 0 {
				t.Errorf("%d retry events, counter %d: an inferred loss counts no retry (LR-TMR-6)", n, o.q.Retries())
			}
			rtx := o.take()
			if len(rtx) != 1 || !rtx[0].BTH.Retransmit || rtx[0].BTH.PSN != 0 || rtx[0].EV(wire.EVModeSTEV) == lost {
				t.Errorf("after the inference sent %v, want PSN 0 retransmitted on another EV", summarize(rtx))
			}
		})
	}
}

// TestStallTimerBoundsTheWait: a retransmission no EV can carry waits
// under a stall timer of RTO(c): each expiry counts one retry event and
// restarts the timer with the new counter's RTO, so the QP fails with
// RETRY_EXC_ERR when the budget runs out instead of hanging in RTS
// (LR-SM-3, LR-TMR-4, LR-TMR-6, LR-TMR-7, QP-ST-10). The first expiry
// ends the PSN's avoidance of its NACK's EV (AMB-44), so the second
// stall event names no EV.
func TestStallTimerBoundsTheWait(t *testing.T) {
	o := nackedOnOnlyEV(t, func(c *testCfg, a *Attr) { a.Retry = Retry{LinearCnt: 1, ExpCnt: 1} }) // retry 1
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v with only the NACKed EV usable (EV-ST-13)", summarize(ps))
	}
	if err := o.q.SetEVState(0, 0x100, EVDenied, &o.out); err != nil { // now no EV at all
		t.Fatal(err)
	}
	T := Timeout(4)
	if d := o.q.NextDeadline(); d != T {
		t.Fatalf("deadline %v with a stalled retransmission, want the stall timer at RTO(1) = T = %v (LR-SM-3)", d, T)
	}
	o.advance(T)
	st := o.events(EvStallTimeout)
	if len(st) != 1 || st[0].PSN != 0 || st[0].EV != 0x100 || o.q.Retries() != 2 || o.q.State() != StateRTS {
		t.Fatalf("after the first expiry: stall events %v, retries %d, %s; want one for PSN 0 avoiding 0x100, retries 2, RTS",
			st, o.q.Retries(), o.q.State())
	}
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v with every EV DENIED (EV-SET-4)", summarize(ps))
	}
	if d := o.q.NextDeadline(); d != T+2*T {
		t.Fatalf("next stall deadline %v, want now + RTO(2) = %v (exponential after linear_cnt, LR-TMR-4)", d, T+2*T)
	}
	o.advance(3 * T)
	if st := o.events(EvStallTimeout); len(st) != 1 || st[0].EV != 0 {
		t.Errorf("second expiry: stall events %v, want one naming no EV (the first expiry freed it, AMB-44)", st)
	}
	if o.q.State() != StateError || o.q.ErrorCause() != CauseRetryExceeded {
		t.Fatalf("after the second expiry: %s (%v), want ERROR, retry exceeded (LR-TMR-7)", o.q.State(), o.q.ErrorCause())
	}
	if cs := o.out.Completions; len(cs) == 0 || cs[0].WRID != 1 || cs[0].Status != StatusRetryExceeded {
		t.Errorf("completions %+v, want WR 1 with RETRY_EXC_ERR", cs)
	}
	if d := o.q.NextDeadline(); d != Never {
		t.Errorf("deadline %v in ERROR", d)
	}
}

// TestKeepAvoidAfterStallPolicy: with the policy KeepAvoidAfterStall a
// PSN whose only working EV is the one its NACK named never goes again,
// and with exp_cnt infinite the QP waits for good (fabric finding F4,
// AMB-44); by default it goes at the first stall expiry.
func TestKeepAvoidAfterStallPolicy(t *testing.T) {
	for _, keep := range []bool{false, true} {
		o := nackedOnOnlyEV(t, func(c *testCfg, a *Attr) {
			a.Retry = Retry{LinearCnt: 7, ExpCnt: RetryInfinite}
			c.Policy.KeepAvoidAfterStall = keep
		})
		for range 8 {
			o.advance(o.q.NextDeadline())
		}
		sent := 0
		for _, p := range o.take() {
			if p.BTH.Opcode.IsWrite() && p.BTH.Retransmit {
				sent++
			}
		}
		if keep != (sent == 0) || o.q.State() != StateRTS {
			t.Errorf("KeepAvoidAfterStall %v: %d retransmissions in 8 timer steps, %s", keep, sent, o.q.State())
		}
	}
}

// TestStallExpiryFreesTheAvoidedEV is finding F4 of fabric/README.md: a
// PSN whose only usable EV is the one its NACK named waits out the
// NACK's evidence (EV-ST-13) for one RTO(c), and when the stall timer
// expires it goes out on that EV, with one retry charged, instead of
// waiting for good (LR-SM-3, AMB-44). A new NACK on the retransmission
// renews the avoidance.
func TestStallExpiryFreesTheAvoidedEV(t *testing.T) {
	o := nackedOnOnlyEV(t, func(c *testCfg, a *Attr) { a.Retry = Retry{LinearCnt: 7, ExpCnt: RetryInfinite} }) // retry 1
	T := Timeout(4)
	o.advance(T - 1)
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v before the stall timer expired, on the NACKed EV (EV-ST-13)", summarize(ps))
	}
	o.advance(T)
	if st := o.events(EvStallTimeout); len(st) != 1 || st[0].EV != 0x100 || o.q.Retries() != 2 || o.q.State() != StateRTS {
		t.Fatalf("stall events %v, retries %d, %s; want one avoiding 0x100, retries 2, RTS", st, o.q.Retries(), o.q.State())
	}
	ps := o.take()
	if len(ps) != 1 || !ps[0].BTH.Retransmit || ps[0].BTH.PSN != 0 || ps[0].EV(wire.EVModeSTEV) != 0x100 {
		t.Fatalf("at the stall expiry sent %v, want PSN 0 retransmitted on 0x100 (AMB-44)", summarize(ps))
	}
	if d := o.q.NextDeadline(); d != T+T {
		t.Fatalf("deadline %v, want the retransmission's timer at now + RTO(2) = %v and no stall timer", d, T+T)
	}
	// A new NACK names 0x100 again: the PSN avoids it again and waits.
	o.recv(1, nackPkt(0, 0x100, wire.NACKTrimmedLastHop)) // retry 3
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v after a second NACK on the only usable EV (EV-ST-13)", summarize(ps))
	}
	o.advance(T + T - 1)
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v before the renewed stall timer expired (EV-ST-13)", summarize(ps))
	}
	o.advance(T + T)
	if ps := o.take(); len(ps) != 1 || ps[0].EV(wire.EVModeSTEV) != 0x100 || o.q.Retries() != 4 {
		t.Fatalf("at the second expiry sent %v, retries %d; want PSN 0 on 0x100, retries 4", summarize(ps), o.q.Retries())
	}
}

// TestStallTimerTimesOnePSN: the stall timer times one PSN's wait. PSN 1
// waits from 0 for the only usable EV, 0x100, which its NACK named; at T/2
// PSN 0's NACK names 0x100 too and PSN 0 waits in PSN 1's place. The
// timer restarts, so PSN 0 does not go back on 0x100 at T, half a timeout
// after its NACK, but at T/2 + RTO(2) (LR-SM-3, EV-ST-13, AMB-101).
func TestStallTimerTimesOnePSN(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.Retry = Retry{LinearCnt: 7, ExpCnt: RetryInfinite} })
	for _, ev := range []uint32{0x101, 0x200, 0x201} {
		if err := o.q.SetEVState(0, ev, EVDenied, &o.out); err != nil {
			t.Fatal(err)
		}
	}
	o.write(1, 2048, false)
	if ps := o.take(); len(ps) != 2 {
		t.Fatalf("sent %v, want PSNs 0 and 1", summarize(ps))
	}
	T := Timeout(4)
	o.recv(1, nackPkt(1, 0x100, wire.NACKTrimmedLastHop)) // retry 1: PSN 1 waits, the stall timer runs to T
	o.advance(T / 2)
	o.recv(1, nackPkt(0, 0x100, wire.NACKTrimmedLastHop)) // retry 2: PSN 0 waits in its place
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v with only the NACKed EV usable (EV-ST-13)", summarize(ps))
	}
	o.advance(T)
	if st, ps := o.events(EvStallTimeout), o.take(); len(st) != 0 || len(ps) != 0 {
		t.Fatalf("at T, half a timeout after PSN 0's NACK: stall events %v, sent %v; want none (EV-ST-13, AMB-101)", st, summarize(ps))
	}
	o.advance(T/2 + T - 1)
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v before the restarted stall timer expired (EV-ST-13)", summarize(ps))
	}
	o.advance(T/2 + T) // the timer restarted for PSN 0: its NACK + RTO(2)
	st, ps := o.events(EvStallTimeout), o.take()
	if len(st) != 1 || st[0].PSN != 0 || st[0].EV != 0x100 || o.q.Retries() != 3 {
		t.Fatalf("stall events %v, retries %d; want one for PSN 0 avoiding 0x100, retries 3", st, o.q.Retries())
	}
	if len(ps) == 0 || !ps[0].BTH.Retransmit || ps[0].BTH.PSN != 0 || ps[0].EV(wire.EVModeSTEV) != 0x100 {
		t.Fatalf("at the stall expiry sent %v, want PSN 0 retransmitted on 0x100 (AMB-44)", summarize(ps))
	}
}

// TestRenewedAvoidanceRestartsStallTimer: a NACK for the PSN that waits
// renews its avoidance, and its wait begins anew: the stall timer restarts,
// so the PSN does not go back on the EV at the old deadline, less than
// RTO(c) after that NACK (LR-SM-3, EV-ST-13, AMB-101).
func TestRenewedAvoidanceRestartsStallTimer(t *testing.T) {
	o := nackedOnOnlyEV(t, func(c *testCfg, a *Attr) { a.Retry = Retry{LinearCnt: 7, ExpCnt: RetryInfinite} }) // retry 1
	T := Timeout(4)
	o.advance(T / 2)
	o.recv(1, nackPkt(0, 0x100, wire.NACKTrimmedLastHop)) // retry 2, for the queued PSN
	o.advance(T)
	if st, ps := o.events(EvStallTimeout), o.take(); len(st) != 0 || len(ps) != 0 {
		t.Fatalf("at T, half a timeout after the renewing NACK: stall events %v, sent %v; want none (AMB-101)", st, summarize(ps))
	}
	o.advance(T/2 + T)
	if ps := o.take(); len(ps) != 1 || ps[0].BTH.PSN != 0 || ps[0].EV(wire.EVModeSTEV) != 0x100 || o.q.Retries() != 3 {
		t.Fatalf("at T/2 + RTO(2) sent %v, retries %d; want PSN 0 on 0x100, retries 3", summarize(ps), o.q.Retries())
	}
}

// TestStallTimerStopsWhenAnEVReturns: the stall timer stops as soon as the
// retransmission can go out on another EV, and charges nothing (LR-SM-3).
func TestStallTimerStopsWhenAnEVReturns(t *testing.T) {
	o := nackedOnOnlyEV(t, nil)
	if o.q.NextDeadline() == Never {
		t.Fatal("no stall timer while the retransmission waits (LR-SM-3)")
	}
	if err := o.q.SetEVState(1, 0x201, EVGood, &o.out); err != nil {
		t.Fatal(err)
	}
	ps := o.take()
	if len(ps) != 1 || !ps[0].BTH.Retransmit || ps[0].EV(wire.EVModeSTEV) != 0x201 {
		t.Fatalf("after 0x201 came back: %v", summarize(ps))
	}
	o.advance(Timeout(4))
	if st := o.events(EvStallTimeout); len(st) != 0 || o.q.Retries() != 1 {
		t.Errorf("stall events %v, retries %d after the retransmission went out; want none and 1", st, o.q.Retries())
	}
}

// TestPenaltyFromSACK: the SACK's CC_STATE reaches the window (LR-SACK-4):
// rcv_cwnd_pen shrinks it to the bytes in flight and r_c restores it
// (CC-RSP-1, CC-RSP-2).
func TestPenaltyFromSACK(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 })
	o.write(1, 8*1024, false)
	o.take()
	before := o.q.Cwnd()
	s := sackPkt(0, 0, 1, 0, 0x100, wire.MNone)
	s.SETH.CC.RcvCwndPen = 64
	o.recv(1, s)
	if got, want := o.q.Cwnd(), int64(7*1024-512); got != want {
		t.Errorf("cwnd %d after a penalty of 64 with 7 KiB in flight, want %d", got, want)
	}
	s = sackPkt(1, 1, 2, 0, 0x100, wire.MNone)
	s.SETH.CC.RC = true
	o.recv(1, s)
	if got := o.q.Cwnd(); got != before {
		t.Errorf("cwnd %d after restore, want %d", got, before)
	}
}

// TestHeldRetransmissionNotSkipped: a PSN held back by a resource NACK is
// still retransmitted after a younger lost PSN went out first (LR-NACK-2,
// LR-RTX-2); found by the property test.
func TestHeldRetransmissionNotSkipped(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 }) // base_rtt 10 µs
	o.write(1, 2*1024, false)
	ps := o.take()
	o.recv(1, nackPkt(0, ps[0].EV(wire.EVModeSTEV), wire.NACKNoPktBuffer))
	o.recv(1, nackPkt(1, ps[1].EV(wire.EVModeSTEV), wire.NACKPSNOutOfWindow))
	if got := summarize(o.take()); len(got) != 1 || got[0].PSN != 1 {
		t.Fatalf("sent %v, want PSN 1 only while PSN 0 is held", got)
	}
	o.advance(o.q.NextDeadline())
	if got := summarize(o.take()); len(got) != 1 || got[0].PSN != 0 || o.now != 10*Microsecond {
		t.Errorf("at %d sent %v, want PSN 0 at 10 µs", o.now, got)
	}
}

// TestSACKedBitsetMirrorsFlags: the ring's SACKed bitset, which sackBits
// merges SACK bitmaps against a word at a time, holds exactly the slots
// whose flags say SACKed, after a lossy run and after go-back-N put SACKed
// PSNs back in flight (LR-SACK-2).
func TestSACKedBitsetMirrorsFlags(t *testing.T) {
	check := func(name string, q *QP) {
		t.Helper()
		r := &q.req.ring
		for i := range r.fl {
			if got, want := r.sacked[i>>6]>>(i&63)&1 != 0, r.fl[i]&txSACKed != 0; got != want {
				t.Fatalf("%s: slot %d: bitset %v, flags %v", name, i, got, want)
			}
		}
	}
	check("1% loss", runBackToBack(t, 20000, 100))
	o := newOne(t, func(c *testCfg, _ *Attr) { c.Test.Faults = FaultGoBackN })
	o.write(1, 8*1024, false) // PSNs 0-7
	o.recv(1, sackPkt(wire.PSNAdd(0, -1), 2, 0, 0b10100, 0x100, wire.MNone))
	check("PSNs 2 and 4 SACKed", o.q)
	if o.q.req.ring.sacked[0] != 0b10100 {
		t.Fatalf("SACKed bits %#b, want 0b10100", o.q.req.ring.sacked[0])
	}
	o.recv(1, nackPkt(0, 0x100, wire.NACKTrimmed))
	check("go-back-n", o.q)
	if o.q.req.ring.sacked[0] != 0 {
		t.Fatalf("SACKed bits %#b after go-back-N, want none", o.q.req.ring.sacked[0])
	}
}

// TestUnexpEventPSN: an UNEXP_EVENT NACK fails the QP when its nack_psn was
// sent and is not cumulatively acknowledged, even when a SACK's bitmap
// acknowledged it; one for a PSN never sent or cumulatively acknowledged is
// ignored (LR-NACK-4, LR-NACK-6, AMB-100).
func TestUnexpEventPSN(t *testing.T) {
	for _, c := range []struct {
		name  string
		psn   uint32
		state QPState
	}{
		{"selectively acknowledged", 2, StateError},
		{"outstanding", 1, StateError},
		{"cumulatively acknowledged", 0, StateRTS},
		{"never sent", 3, StateRTS},
		{"far beyond", 1 << 23, StateRTS},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOne(t, nil)
			o.write(1, 3*1024, true)
			ps := o.take()
			ev := ps[2].EV(wire.EVModeSTEV)
			o.recv(1, sackPkt(0, 2, 1, 0b10, ev, wire.MNone)) // PSN 0 cumulatively, PSN 2 selectively acked
			o.recv(1, nackPkt(c.psn, ev, wire.NACKUnexpEvent))
			if o.q.State() != c.state {
				t.Fatalf("state %s after UNEXP_EVENT for PSN %d, want %s", o.q.State(), c.psn, c.state)
			}
			if c.state == StateRTS {
				if n := len(o.take()); n != 0 || o.q.Retries() != 0 {
					t.Errorf("%d packets, %d retries after an ignored UNEXP_EVENT", n, o.q.Retries())
				}
			} else if c := o.out.Completions; len(c) == 0 || c[0].Recv || c[0].WRID != 1 || c[0].Status != StatusRemoteOpError {
				t.Errorf("completions %+v, want WR 1 with REM_OP_ERR first (CMP-ERR-2)", c)
			}
		})
	}
}
