package statemachine

// Tests written against mutants of requester.go that the package's other
// tests let live (found by applying them by hand, scripts/mutate.sh's
// stage 2 applier).

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantRetriesResetOnlyWhenUnaAdvances (LR-TMR-6): the retry counter
// is reset when una advances, and only then: a SACK whose cack_psn does
// not move una (its bitmap acknowledges a later PSN) and a transport ACK
// for a PSN already covered leave it as it is.
func TestMutantRetriesResetOnlyWhenUnaAdvances(t *testing.T) {
	o := newOne(t, nil) // timeout 4: T = 16384 ns
	o.write(1, 3*1024, false)
	o.take()
	o.advance(16384) // every PSN times out; only PSN 0's timeout counts
	o.take()
	if o.q.Retries() != 1 {
		t.Fatalf("retries %d after the timeout of una, want 1", o.q.Retries())
	}
	o.recv(1, sackPkt(1<<24-1, 2, 0, 0b100, 0x100, wire.MNone)) // PSN 2 selectively, una stays 0
	if o.q.Retries() != 1 {
		t.Errorf("retries %d after a SACK that left una where it was, want 1", o.q.Retries())
	}
	o.recv(1, aethPkt(1<<24-1, 0x1F)) // an ACK for cack 2^24 − 1: nothing new
	if o.q.Retries() != 1 {
		t.Errorf("retries %d after an ACK that left una where it was, want 1", o.q.Retries())
	}
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone))
	if o.q.Retries() != 0 {
		t.Errorf("retries %d after una advanced, want 0", o.q.Retries())
	}
}

// TestMutantRTTSampleRange (CC-SIG-3): without TSETH, a SACK answering the
// oldest outstanding PSN, sent once, gives an RTT sample from its send
// time; one naming the next PSN to send gives none, even when the window
// is full and that PSN's ring slot is the oldest one's.
func TestMutantRTTSampleRange(t *testing.T) {
	o := newOne(t, nil) // W = 128, a ring of 128 slots
	o.write(1, 128*1024, false)
	if n := len(o.take()); n != 128 {
		t.Fatalf("%d packets sent, want the full window of 128", n)
	}
	o.q.now = 3000
	if rtt := o.q.rttSample(&sackPkt(1<<24-1, 0, 0, 0, 0x100, wire.MNone).SETH); rtt != 3000 {
		t.Errorf("RTT %d from a SACK answering una, want 3000", rtt)
	}
	if rtt := o.q.rttSample(&sackPkt(1<<24-1, 128, 0, 0, 0x100, wire.MNone).SETH); rtt != -1 {
		t.Errorf("RTT %d from a SACK answering PSN 128, never sent, want none", rtt)
	}
}

// TestMutantFaultBeyondMPRReach (MPR-WIN-1): the seeded fault beyond-mpr
// breaks MPR-WIN-1 by what it documents and no more: it sends PSNs up to
// twice the window ahead of una (the ring it keeps holds 2W), never 2W + 1.
func TestMutantFaultBeyondMPRReach(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Test.Faults = FaultBeyondMPR }) // W = 128
	o.write(1, 300*1024, false)
	if n := len(o.take()); n != 256 {
		t.Errorf("%d packets sent under beyond-mpr with W = 128, want 2W = 256", n)
	}
}

// queuedRetransmissions counts the PSNs of [una, nxt) marked lost, the
// queue nLost counts.
func queuedRetransmissions(q *QP) int {
	r, n := &q.req, 0
	for p := r.una; p != r.nxt; p = wire.PSNAdd(p, 1) {
		if r.ring.fl[p&r.ring.mask]&txLost != 0 {
			n++
		}
	}
	return n
}

// TestMutantLostCountFollowsQueue (LR-RTX-2): the count of PSNs queued for
// retransmission, which pump's loop over the oldest lost PSN relies on,
// follows the queue: up on a NACK, down when the retransmission is sent or
// a SACK acknowledges the queued PSN.
func TestMutantLostCountFollowsQueue(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 }) // base_rtt 10 µs
	o.write(1, 3*1024, false)
	ps := o.take()
	check := func(when string, want int) {
		t.Helper()
		if o.q.req.nLost != want || queuedRetransmissions(o.q) != want {
			t.Errorf("%s: nLost %d, %d PSNs queued, want %d", when, o.q.req.nLost, queuedRetransmissions(o.q), want)
		}
	}
	o.recv(1, nackPkt(1, ps[1].EV(wire.EVModeSTEV), wire.NACKTrimmedLastHop))
	if n := len(o.take()); n != 1 {
		t.Fatalf("%d packets after the NACK of PSN 1, want its retransmission", n)
	}
	check("PSN 1 retransmitted", 0)
	o.recv(1, nackPkt(2, ps[2].EV(wire.EVModeSTEV), wire.NACKNoResource)) // held for base_rtt
	check("PSN 2 held", 1)
	o.recv(1, sackPkt(1<<24-1, 2, 0, 0b100, 0x100, wire.MNone))
	check("PSN 2 selectively acknowledged", 0)
}

// TestMutantFaultNoBackoffBudget (LR-TMR-4, LR-TMR-7): the seeded fault
// no-backoff breaks LR-TMR-4 by what it documents and no more: exp_cnt's
// retries are spent as linear ones, every timer running T, and the budget
// stays linear_cnt + exp_cnt, so the QP fails at the fourth timeout with
// linear_cnt 1 and exp_cnt 2.
func TestMutantFaultNoBackoffBudget(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.Test.Faults = FaultNoBackoff
		a.Retry = Retry{LinearCnt: 1, ExpCnt: 2}
		c.EVProfiles[0].MinActive = 4 // keep EVs GOOD so that every timeout counts
	})
	o.write(1, 10, false)
	o.take()
	T := Timeout(4)
	for i := 1; i <= 4; i++ {
		d := o.q.NextDeadline()
		if d != Time(i)*T {
			t.Fatalf("timer %d expires at %d, want %d: no-backoff keeps the RTO at T", i, d, Time(i)*T)
		}
		o.advance(d)
		if want := map[bool]QPState{true: StateError, false: StateRTS}[i == 4]; o.q.State() != want {
			t.Fatalf("after timeout %d the QP is %s, want %s (budget linear_cnt + exp_cnt = 3)", i, o.q.State(), want)
		}
	}
}

// TestMutantFaultStallDequeues (LR-SM-3, LR-RTX-1): the seeded fault
// stall-dequeues breaks them by what it documents: at the stall timer's
// expiry the waiting PSN leaves the retransmission queue and counts as in
// flight, its timer armed, and nothing is sent.
func TestMutantFaultStallDequeues(t *testing.T) {
	o := nackedOnOnlyEV(t, func(c *testCfg, a *Attr) { c.Test.Faults = FaultStallDequeues })
	o.take()
	o.advance(o.q.NextDeadline())
	if ps := o.take(); len(ps) != 0 {
		t.Fatalf("sent %v at the stall expiry under stall-dequeues, want nothing", summarize(ps))
	}
	if r := &o.q.req; r.nLost != 0 || queuedRetransmissions(o.q) != 0 || r.inflight != 1024 || r.timerAt == Never {
		t.Errorf("after the stall expiry: nLost %d, %d queued, %d bytes in flight, timer %v; want 0, 0, 1024 and a timer",
			r.nLost, queuedRetransmissions(o.q), r.inflight, r.timerAt)
	}
}

// TestMutantAETHAckOfLastSentPSN (RSP-ACK-2, CMP-SND-1): a transport ACK
// for the last PSN sent acknowledges every PSN and completes the WR; only
// one past it is invalid.
func TestMutantAETHAckOfLastSentPSN(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 2048, false) // PSNs 0, 1
	o.take()
	o.recv(1, aethPkt(1, 0x1F))
	if o.q.CumulativeACK() != 1 || len(o.out.Completions) != 1 || o.out.Completions[0].Status != StatusSuccess {
		t.Errorf("after an ACK for PSN 1, the last sent: cumulative ACK %d, completions %+v; want 1 and WR 1 done",
			o.q.CumulativeACK(), o.out.Completions)
	}
}

// TestMutantSACKBitmapBelowUna (LR-SACK-2): a SACK whose bitmap starts
// before una, arriving after a later SACK moved una, still acknowledges
// selectively the PSNs from una on whose bits are set.
func TestMutantSACKBitmapBelowUna(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 4*1024, false) // PSNs 0 to 3
	o.take()
	o.recv(1, sackPkt(1, 1, 2, 0, 0x100, wire.MNone))            // cack_psn 1: una is 2
	o.recv(1, sackPkt(1<<24-1, 3, 0, 0b1100, 0x100, wire.MNone)) // an older SACK: bits for PSNs 2 and 3
	for _, p := range []uint32{2, 3} {
		if s := o.q.PSNStateOf(p); s != PSNSACKed {
			t.Errorf("PSN %d: %v, want selectively acknowledged", p, s)
		}
	}
}

// TestMutantSACKBitPastNextPSN (LR-SACK-2, LR-RTX-4, LR-RTX-1): a bitmap
// bit for a PSN not yet sent acknowledges nothing and does not count as
// the highest PSN acknowledged: with reorder_guard 1, a SACK of PSNs 1 and
// 3 when PSNs 0 to 2 are sent makes only PSN 0 lost, not PSN 2.
func TestMutantSACKBitPastNextPSN(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Policy.ReorderThreshold = 1 })
	o.write(1, 3*1024, false) // PSNs 0 to 2
	o.take()
	o.recv(1, sackPkt(1<<24-1, 1, 0, 0b1010, 0x100, wire.MNone))
	var rtx []uint32
	for _, p := range o.take() {
		if p.BTH.Retransmit {
			rtx = append(rtx, p.BTH.PSN)
		}
	}
	if len(rtx) != 1 || rtx[0] != 0 || o.q.PSNStateOf(2) != PSNInFlight {
		t.Errorf("retransmitted %v, PSN 2 %v; want PSN 0 only, PSN 2 in flight", rtx, o.q.PSNStateOf(2))
	}
}

// TestMutantLostCountCumulativeAck (LR-RTX-2, LR-RTX-1): a PSN queued for
// retransmission that a cumulative ACK covers leaves the queue: the count
// pump relies on drops with it.
func TestMutantLostCountCumulativeAck(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 }) // base_rtt 10 µs
	o.write(1, 2*1024, false)
	ps := o.take()
	o.recv(1, nackPkt(0, ps[0].EV(wire.EVModeSTEV), wire.NACKNoResource)) // held for base_rtt
	if o.q.req.nLost != 1 {
		t.Fatalf("nLost %d with PSN 0 held, want 1", o.q.req.nLost)
	}
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone))
	if o.q.req.nLost != 0 || queuedRetransmissions(o.q) != 0 {
		t.Errorf("after the cumulative ACK of PSN 0: nLost %d, %d queued, want 0", o.q.req.nLost, queuedRetransmissions(o.q))
	}
}

// TestMutantFaultIgnoreSACKedUnexp (LR-NACK-4, LR-NACK-6): the seeded
// fault ignore-sacked-unexp breaks LR-NACK-4 by what it documents and no
// more: it ignores an UNEXP_EVENT NACK naming a selectively acknowledged
// PSN, and one naming a PSN still in flight fails the QP as without it.
func TestMutantFaultIgnoreSACKedUnexp(t *testing.T) {
	for _, c := range []struct {
		psn   uint32
		state QPState
	}{{2, StateRTS}, {1, StateError}} {
		o := newOne(t, func(c *testCfg, a *Attr) { c.Test.Faults = FaultIgnoreSACKedUnexp })
		o.write(1, 3*1024, true)
		ps := o.take()
		ev := ps[2].EV(wire.EVModeSTEV)
		o.recv(1, sackPkt(0, 2, 1, 0b10, ev, wire.MNone)) // PSN 0 cumulatively, PSN 2 selectively acked
		o.recv(1, nackPkt(c.psn, ev, wire.NACKUnexpEvent))
		if o.q.State() != c.state {
			t.Errorf("ignore-sacked-unexp: state %s after UNEXP_EVENT for PSN %d, want %s", o.q.State(), c.psn, c.state)
		}
	}
}

// TestMutantRTTSampleFromSendTime (CC-SIG-3): without TSETH the RTT
// sample is the time since the answered PSN was sent, not since time 0.
func TestMutantRTTSampleFromSendTime(t *testing.T) {
	o := newOne(t, nil)
	o.now = 1000
	o.write(1, 1024, false) // PSN 0 sent at 1000
	o.take()
	o.q.now = 4000
	if rtt := o.q.rttSample(&sackPkt(0, 0, 1, 0, 0x100, wire.MNone).SETH); rtt != 3000 {
		t.Errorf("RTT %d from a SACK at 4000 answering a PSN sent at 1000, want 3000", rtt)
	}
}

// TestMutantSACKVerdictIsECN (CC-SIG-2, LR-SACK-4): the congestion
// controller reads a SACK's m as the ECN verdict: the same SACK grows
// cwnd more with m = NONE than with m = SKIP_ONCE, which says the packet
// was CE-marked.
func TestMutantSACKVerdictIsECN(t *testing.T) {
	cwnd := func(m wire.Multipath) int64 {
		o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 })
		o.write(1, 4*1024, false)
		ps := o.take()
		o.now = 100 * Microsecond
		o.recv(1, sackPkt(0, 0, 1, 0, ps[0].EV(wire.EVModeSTEV), m))
		return o.q.Cwnd()
	}
	if none, ce := cwnd(wire.MNone), cwnd(wire.MSkipOnce); none <= ce {
		t.Errorf("cwnd %d after a SACK with m = NONE, %d with m = SKIP_ONCE (ECN): want more without ECN", none, ce)
	}
}

// TestMutantCwndEventOnChange (CC-NSCC-6): a trim NACK that shrinks cwnd
// is reported by one EvCwnd event carrying the new window; without
// congestion control a SACK reports none.
func TestMutantCwndEventOnChange(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 })
	o.write(1, 2*1024, false)
	ps := o.take()
	o.recv(1, nackPkt(0, ps[0].EV(wire.EVModeSTEV), wire.NACKTrimmed))
	if es := o.events(EvCwnd); len(es) != 1 || es[0].Value != uint64(o.q.Cwnd()) {
		t.Errorf("cwnd events %+v after a trim NACK, want one with the new cwnd %d", es, o.q.Cwnd())
	}
	o = newOne(t, nil)
	o.write(1, 1024, false)
	o.take()
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone))
	if es := o.events(EvCwnd); len(es) != 0 {
		t.Errorf("cwnd events %+v without congestion control", es)
	}
}

// TestMutantRetransmissionAtShrunkWindowEdge (MPR-DYN-3): after a SACK
// shrinks the dynamic window to [una, una + 128), a NACKed PSN at
// una + 127 is retransmitted at once and one at una + 128, outstanding
// but now outside the window, waits until a SACK moves una so that the
// window covers it.
func TestMutantRetransmissionAtShrunkWindowEdge(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		a.MPR, a.MPRDest, a.Cap = 2, 2, CapDynamicMPR
	})
	o.write(1, 256*1024, false)
	ps := o.take()
	if len(ps) != 256 {
		t.Fatalf("sent %d, want 256 (W = 128 × MPR 2)", len(ps))
	}
	sack := sackPkt(99, 99, 100, 0, 0x100, wire.MNone) // una 100, the window [100, 228)
	sack.SETH.MPR = 1
	o.recv(1, sack)
	o.take()
	resent := func(psn uint32) []uint32 {
		o.recv(1, nackPkt(psn, ps[psn].EV(wire.EVModeSTEV), wire.NACKTrimmed))
		var got []uint32
		for _, p := range o.take() {
			if p.BTH.Opcode.IsWrite() {
				got = append(got, p.BTH.PSN)
			}
		}
		return got
	}
	if got := resent(227); len(got) != 1 || got[0] != 227 {
		t.Errorf("NACK of PSN 227, inside the window: retransmitted %v, want [227]", got)
	}
	if got := resent(228); len(got) != 0 {
		t.Errorf("NACK of PSN 228, una + the window of 128: retransmitted %v, want nothing until the window covers it", got)
	}
	sack = sackPkt(100, 100, 101, 0, 0x100, wire.MNone) // una 101, the window [101, 229)
	sack.SETH.MPR = 1
	o.recv(1, sack)
	var got []uint32
	for _, p := range o.take() {
		if p.BTH.Opcode.IsWrite() {
			got = append(got, p.BTH.PSN)
		}
	}
	if len(got) != 1 || got[0] != 228 {
		t.Errorf("after una moved to 101: retransmitted %v, want [228]", got)
	}
}
