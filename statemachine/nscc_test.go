package statemachine

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

func newNSCC(mod func(*NSCCConfig)) *nscc {
	p := CCProfile{ID: 1, Algorithm: CCAlgNSCC, NSCC: DefaultNSCC()}
	p.NSCC.DisableQA = true
	if mod != nil {
		mod(&p.NSCC)
	}
	c := &nscc{}
	c.init(&p, 4096, 0)
	return c
}

// TestNSCCStart: a new window is max_cwnd (CC-NSCC-7) and stays within
// [MTU, max_cwnd] (CC-NSCC-4); a NULL algorithm gates nothing (CC-GEN-1);
// the defaults are the UET reference values (CC-PAR-1, CC-PAR-2).
func TestNSCCStart(t *testing.T) {
	c := newNSCC(nil)
	if c.cwnd != 1_500_000 {
		t.Errorf("initial cwnd %d, want max_cwnd", c.cwnd)
	}
	for i := 0; i < 100; i++ {
		c.onAck(Time(i)*Microsecond*20, 1<<20, false, 10_000, 0, false, 0)
	}
	if c.cwnd != c.maxCwnd {
		t.Errorf("cwnd %d above max_cwnd %d", c.cwnd, c.maxCwnd)
	}
	for i := 0; i < 100; i++ {
		c.onLoss(1 << 20)
	}
	if c.cwnd != 4096 {
		t.Errorf("cwnd %d, want the floor of one MTU", c.cwnd)
	}
	d := DefaultNSCC()
	if d.Gamma != 0.8 || d.MaxMDJump != 0.5 || d.FI != 5 {
		t.Errorf("defaults %+v", d)
	}
	var off nscc
	off.init(&CCProfile{Algorithm: CCAlgNone}, 4096, 0)
	if !off.allow(1<<40, 4096) {
		t.Error("a NULL CC algorithm gated a packet")
	}
}

// TestNSCCQuadrants: the four-quadrant rule on ECN × delay (CC-NSCC-1,
// CC-SIG-2, CC-NSCC-3): increases below target or without ECN, a
// multiplicative decrease with ECN at or above target, nothing with ECN
// below target.
func TestNSCCQuadrants(t *testing.T) {
	const base, target = 10_000, 5_000
	cases := []struct {
		name  string
		ecn   bool
		delay Time
		want  int // sign of the change
	}{
		{"no ECN, below target", false, 1_000, +1},
		{"no ECN, above target", false, 8_000, +1},
		{"ECN, above target", true, 8_000, -1},
		{"ECN, below target", true, 1_000, 0},
	}
	for _, c := range cases {
		n := newNSCC(func(p *NSCCConfig) { p.Eta = 0 })
		n.cwnd = 500_000
		n.avgDelay, n.haveAvg = c.delay, true
		before := n.cwnd
		// Two SACKs an adjustment period apart, so the increase is applied.
		n.onAck(base, 64*1024, c.ecn, base+c.delay, 0, false, 0)
		n.onAck(3*base, 64*1024, c.ecn, base+c.delay, 0, false, 0)
		d := n.cwnd - before
		if (c.want > 0) != (d > 0) || (c.want < 0) != (d < 0) {
			t.Errorf("%s: cwnd %d → %d", c.name, before, n.cwnd)
		}
		_ = target
	}
}

// TestNSCCDecrease: cwnd × max(1 − gamma·(avg−target)/avg, max_md_jump), at
// most once per base_rtt, only while avg_delay exceeds target (CC-NSCC-2).
func TestNSCCDecrease(t *testing.T) {
	n := newNSCC(func(p *NSCCConfig) { p.Eta = 0 })
	n.cwnd = 1 << 20
	n.avgDelay, n.haveAvg = 10_000, true // avg 10 µs, target 5 µs: 1 − 0.8·0.5 = 0.6
	n.onAck(20_000, 0, true, 20_000, 0, false, 0)
	if want := int64(1<<20) * 6 / 10; abs(n.cwnd-want) > want/10_000 { // 16.16 rounding
		t.Errorf("cwnd %d after a decrease, want about %d", n.cwnd, want)
	}
	c := n.cwnd
	n.onAck(25_000, 0, true, 20_000, 0, false, 0) // 5 µs later: within base_rtt
	if n.cwnd != c {
		t.Errorf("second decrease within base_rtt: %d → %d", c, n.cwnd)
	}
	n.avgDelay = 1_000_000 // huge delay: the factor floors at max_md_jump 0.5
	n.onAck(40_000, 0, true, 1_000_000, 0, false, 0)
	if abs(n.cwnd-c/2) > c/10_000 {
		t.Errorf("cwnd %d, want %d (max_md_jump)", n.cwnd, c/2)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestNSCCQuickAdapt: after a loss, at the end of the quick-adapt period
// the window drops to the bytes acknowledged in it (CC-NSCC-5,
// CC-NSCC-6); with disable_qa it does not.
func TestNSCCQuickAdapt(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		n := newNSCC(func(p *NSCCConfig) { p.DisableQA = disabled; p.QAGate = 0 })
		n.onAck(0, 0, false, -1, 0, false, 0) // starts the period
		n.onLoss(4096)
		n.onAck(10_000, 100_000, false, -1, 0, false, 0)
		n.onAck(16_000, 0, false, -1, 0, false, 0) // period (base 10 + target 5 µs) over
		if got := n.cwnd == 100_000; got == disabled {
			t.Errorf("disable_qa=%v: cwnd %d", disabled, n.cwnd)
		}
	}
}

// TestNSCCPenalty: rcv_cwnd_pen k limits cwnd to the bytes in flight and
// takes k/128 of the acknowledged bytes; r_c restores the window held
// before the penalties (CC-RSP-1, CC-RSP-2).
func TestNSCCPenalty(t *testing.T) {
	n := newNSCC(nil)
	n.cwnd = 400_000
	n.onAck(10_000, 128_000, false, 10_000, 64, false, 300_000)
	if n.cwnd != 300_000-64_000 {
		t.Errorf("cwnd %d, want 236000", n.cwnd)
	}
	n.onAck(20_000, 0, false, 10_000, 0, true, 0)
	if n.cwnd != 400_000 {
		t.Errorf("cwnd %d after restore, want 400000", n.cwnd)
	}
}

// TestRTTSamples: RTT from the reflected TSETH timestamp (CC-SIG-1), or
// without TSETH from the local send time (REQ-HDR-2); none from a zero
// timestamp or, without TSETH, from a retransmitted packet (CC-SIG-3).
func TestRTTSamples(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Timestamps = true })
	o.q.now = 128 * 100
	s := sackPkt(0, 0, 1, 0, 0x100, wire.MNone)
	s.SETH.CC.TxTimestamp = 90
	if rtt := o.q.rttSample(&s.SETH); rtt != 10*128 {
		t.Errorf("RTT %d, want 1280", rtt)
	}
	s.SETH.CC.TxTimestamp = 0
	if rtt := o.q.rttSample(&s.SETH); rtt != -1 {
		t.Errorf("RTT %d from a zero timestamp", rtt)
	}
	o = newOne(t, nil)
	o.write(1, 2048, false)
	ps := o.take()
	o.q.now = 3000
	s = sackPkt(1<<24-1, 1, 0, 0b10, 0x100, wire.MNone)
	if rtt := o.q.rttSample(&s.SETH); rtt != 3000 {
		t.Errorf("RTT %d, want 3000", rtt)
	}
	o.recv(1, nackPkt(0, ps[0].EV(wire.EVModeSTEV), wire.NACKTrimmedLastHop)) // PSN 0 retransmitted
	o.q.now = 4000
	s = sackPkt(1<<24-1, 0, 0, 0, 0x100, wire.MNone)
	if rtt := o.q.rttSample(&s.SETH); rtt != -1 {
		t.Errorf("RTT %d from a retransmitted packet", rtt)
	}
}

// TestNSCCDeterministic: the window is computed in integers, so a fixed
// input sequence gives a fixed window (CC-SM-1).
func TestNSCCDeterministic(t *testing.T) {
	run := func() int64 {
		n := newNSCC(func(p *NSCCConfig) { p.DisableQA = false })
		for i := 0; i < 1000; i++ {
			n.onAck(Time(i)*3_000, int64(4096*(i%5)), i%7 == 0, Time(10_000+(i*37)%9_000), 0, false, int64(i*100))
		}
		return n.cwnd
	}
	if a, b := run(), run(); a != b {
		t.Errorf("two runs: %d and %d", a, b)
	}
}

// TestWindowPerQP: each QP has its own congestion controller (CC-GEN-3).
func TestWindowPerQP(t *testing.T) {
	a := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 })
	b := newOne(t, func(c *testCfg, a *Attr) { a.CCProfileID = 10 })
	a.write(1, 1024, false)
	a.recv(1, nackPkt(0, a.take()[0].EV(wire.EVModeSTEV), wire.NACKTrimmed))
	if a.q.Cwnd() == b.q.Cwnd() {
		t.Error("a trim on one QP changed another QP's window")
	}
}
