package statemachine

// Tests written against mutants of nscc.go that the package's other tests
// let live (applied by hand, as scripts/mutate.sh's stage 2 does). The
// defaults: MTU 4096, base_rtt 10 µs, target 5 µs, adjust thresholds 32 KiB
// and 10 µs, eta 256 bytes, fi 5; quick adapt off.

import "testing"

// atMTU is an NSCC window brought down to one MTU, so increases show.
func atMTU(t *testing.T) *nscc {
	c := newNSCC(nil)
	c.onLoss(1 << 30)
	if c.cwnd != 4096 {
		t.Fatalf("cwnd %d after a large loss, want the MTU", c.cwnd)
	}
	return c
}

// TestMutantNSCCDecreaseBounds: with ECN, a delay exactly at target is in
// the decrease quadrant, and a second multiplicative decrease may come
// exactly one base_rtt after the first (CC-NSCC-1, CC-NSCC-2).
func TestMutantNSCCDecreaseBounds(t *testing.T) {
	c := newNSCC(nil)
	if cause := c.onAck(0, 4096, true, 10_000+10_000, 0, false, 1<<20); cause != CCDecrease {
		t.Fatalf("first ECN SACK at twice the target: %v, want a decrease", cause)
	}
	before := c.cwnd
	if cause := c.onAck(10_000, 4096, true, 10_000+5_000, 0, false, 1<<20); cause != CCDecrease || c.cwnd >= before {
		t.Errorf("ECN, delay = target, avg_delay above it, one base_rtt later: %v, cwnd %d -> %d; want a decrease", cause, before, c.cwnd)
	}
}

// TestMutantNSCCNoDecreaseAtTarget: a multiplicative decrease needs
// avg_delay above target; at target none applies, so none is spent: half a
// base_rtt later, with avg_delay above target, the decrease comes
// (CC-NSCC-2).
func TestMutantNSCCNoDecreaseAtTarget(t *testing.T) {
	c := newNSCC(nil)
	if cause := c.onAck(0, 4096, true, 10_000+5_000, 0, false, 1<<20); cause == CCDecrease {
		t.Errorf("ECN with avg_delay = target: %v, cwnd %d; want no decrease", cause, c.cwnd)
	}
	if cause := c.onAck(5_000, 4096, true, 10_000+15_000, 0, false, 1<<20); cause != CCDecrease {
		t.Errorf("ECN with avg_delay above target, no decrease before: %v, want a decrease", cause)
	}
}

// TestMutantNSCCAdjustAtBytes: the accumulated increase is applied when
// exactly adjust_bytes_threshold bytes have been acknowledged (CC-NSCC-3).
func TestMutantNSCCAdjustAtBytes(t *testing.T) {
	c := atMTU(t)
	c.onAck(0, 32*1024, false, 10_000+2_500, 0, false, 0)
	if c.cwnd <= 4096 {
		t.Errorf("cwnd %d after 32 KiB acknowledged below target, want it increased", c.cwnd)
	}
}

// TestMutantNSCCAdjustAtPeriod: exactly adjust_period_threshold after the
// last adjustment the accumulated increase is applied and eta bytes are
// added; with ECN below target nothing accumulates and the window grows by
// eta alone (CC-NSCC-3).
func TestMutantNSCCAdjustAtPeriod(t *testing.T) {
	c := atMTU(t)
	c.onAck(10_000, 1024, false, 10_000+2_500, 0, false, 0)
	if c.cwnd <= 4096+256 {
		t.Errorf("cwnd %d one adjustment period on, want more than eta above the MTU", c.cwnd)
	}
	c = atMTU(t)
	c.onAck(10_000, 1024, true, 10_000+2_500, 0, false, 0)
	if c.cwnd != 4096+256 {
		t.Errorf("cwnd %d one adjustment period on with ECN below target, want %d (eta)", c.cwnd, 4096+256)
	}
}

// TestMutantNSCCZeroDelay: an RTT sample of 0 (no delay at all) earns the
// whole proportional increase, MTU × acked, beside the fair increase of
// fi × MTU × acked (CC-SM-1, CC-NSCC-3): one period on, 1024 bytes add
// (1 + 5) × 1024 to the window of one MTU, and eta.
func TestMutantNSCCZeroDelay(t *testing.T) {
	c := atMTU(t)
	c.onAck(10_000, 1024, false, 0, 0, false, 0)
	if want := int64(4096 + 6*1024 + 256); c.cwnd != want {
		t.Errorf("cwnd %d, want %d", c.cwnd, want)
	}
}

// TestMutantNSCCFastIncreaseBounds: the fast increase takes delays below
// target / 8, zero included, and not target / 8 itself: after more than a
// window (two MTUs on a window of one) acknowledged, fi_scale × acked is
// added at once (CC-SM-1, CC-NSCC-3).
func TestMutantNSCCFastIncreaseBounds(t *testing.T) {
	for _, c := range []struct {
		delay Time
		want  int64
	}{{0, 4096 + 4096}, {624, 4096 + 4096}, {625, 4096}} {
		n := atMTU(t)
		n.onAck(0, 8192, false, 10_000+c.delay, 0, false, 0)
		if n.cwnd != c.want {
			t.Errorf("delay %d ns: cwnd %d, want %d", c.delay, n.cwnd, c.want)
		}
	}
}

// TestMutantNSCCMulDivSaturates: a·b/d whose quotient does not fit 64 bits
// saturates rather than fault, so a window computed from extreme
// parameters stays a bound (CC-SM-1, CC-NSCC-4).
func TestMutantNSCCMulDivSaturates(t *testing.T) {
	if got := mulDiv(1<<32, 1<<32, 1); got != 1<<63-1 {
		t.Errorf("2^64 / 1 = %d, want MaxInt64", got)
	}
	if got := mulDiv(1<<32, 1<<32, 3); got != (1<<64-1)/3 {
		t.Errorf("2^64 / 3 = %d, want %d", got, uint64(1<<64-1)/3)
	}
}

// TestMutantNSCCQuickAdaptBounds: quick adapt runs when its period (base_rtt
// + target) has fully elapsed, on a loss or an avg_delay above (not at)
// qa_threshold, and only while the bytes acknowledged in the period are
// below (not at) max_cwnd >> qa_gate (CC-NSCC-5).
func TestMutantNSCCQuickAdaptBounds(t *testing.T) {
	const end = 10_000 + 5_000 // the first period's end
	for _, c := range []struct {
		name  string
		loss  bool
		rtt   Time
		acked int64
		fire  bool
	}{
		{"a loss, at the period's end", true, 10_000, 4096, true},
		{"avg_delay at qa_threshold", false, 10_000 + 40_000, 4096, false},
		{"avg_delay above qa_threshold", false, 10_000 + 40_001, 4096, true},
		{"acknowledged max_cwnd >> qa_gate", true, 10_000, 1_500_000 >> 3, false},
	} {
		n := newNSCC(func(p *NSCCConfig) { p.DisableQA = false })
		n.onAck(0, 4096, false, c.rtt, 0, false, 0) // starts the period
		if c.loss {
			n.onLoss(1)
		}
		if cause := n.onAck(end, c.acked, false, c.rtt, 0, false, 0); (cause == CCQuickAdapt) != c.fire {
			t.Errorf("%s: %v, want quick adapt %v", c.name, cause, c.fire)
		}
	}
}

// TestMutantNSCCFastIncreaseAfterWindow: the fast increase starts once the
// bytes acknowledged in a row near zero delay exceed cwnd, not when they
// reach it: on a window of one MTU, a first SACK of exactly 4096 bytes
// leaves it, a second adds fi_scale × acked (CC-SM-1, CC-NSCC-3).
func TestMutantNSCCFastIncreaseAfterWindow(t *testing.T) {
	c := atMTU(t)
	c.onAck(0, 4096, false, 10_000, 0, false, 0)
	if c.cwnd != 4096 {
		t.Errorf("cwnd %d after exactly one window acknowledged at delay 0, want 4096 (no fast increase yet)", c.cwnd)
	}
	c.onAck(0, 4096, false, 10_000, 0, false, 0)
	if c.cwnd != 4096+2048 {
		t.Errorf("cwnd %d after two windows acknowledged at delay 0, want %d (fi_scale 0.5 × 4096)", c.cwnd, 4096+2048)
	}
}

// TestMutantNSCCQuickAdaptNeverRaises: quick adapt applies only when the
// bytes acknowledged in its period are below cwnd. At exactly cwnd it does
// not apply: the SACK takes the normal increase, and the trigger of the
// loss stays armed, so the next period, acknowledging less, adapts without
// a new loss (CC-SM-1, CC-NSCC-5).
func TestMutantNSCCQuickAdaptNeverRaises(t *testing.T) {
	const period = 10_000 + 5_000
	c := newNSCC(func(p *NSCCConfig) { p.DisableQA = false })
	c.onLoss(1 << 30) // cwnd one MTU, quick adapt armed
	if c.cwnd != 4096 {
		t.Fatalf("cwnd %d after a large loss, want the MTU", c.cwnd)
	}
	c.onAck(0, 1024, false, 10_000+2_500, 0, false, 0) // starts the period
	if cause := c.onAck(period, 4096, false, 10_000+2_500, 0, false, 0); cause != CCIncrease || c.cwnd <= 4096 {
		t.Fatalf("period's end, acknowledged = cwnd = 4096: %v, cwnd %d; want the normal increase, no quick adapt", cause, c.cwnd)
	}
	w := c.cwnd
	if cause := c.onAck(2*period, 1024, false, 10_000+2_500, 0, false, 0); cause != CCQuickAdapt || c.cwnd != 4096 {
		t.Errorf("next period's end, 1024 bytes acknowledged, trigger still armed: %v, cwnd %d -> %d; want quick adapt to the MTU", cause, w, c.cwnd)
	}
}

// TestMutantNSCCProportionalIncrease: below target the proportional increase
// is MTU × acked × (target − delay) / target: at half the target, 1024
// bytes on a window of one MTU add 4096 × 1024 / 2 to the pending
// increase, beside the fair increase of fi × MTU × acked; one period on the
// window grows by that sum / cwnd = 512 + 5120 bytes, and eta (CC-SM-1,
// CC-NSCC-3).
func TestMutantNSCCProportionalIncrease(t *testing.T) {
	c := atMTU(t)
	c.onAck(10_000, 1024, false, 10_000+2_500, 0, false, 0)
	if want := int64(4096 + 512 + 5120 + 256); c.cwnd != want {
		t.Errorf("cwnd %d, want %d", c.cwnd, want)
	}
}

// TestMutantNSCCAdjustPeriodFromLast: the adjustment period and eta's
// period run from the last adjustment, not from time 0: 1 ns after an
// adjustment at 10 µs, a SACK below target only accumulates, and the window
// is unchanged (CC-NSCC-3).
func TestMutantNSCCAdjustPeriodFromLast(t *testing.T) {
	c := atMTU(t)
	c.onAck(10_000, 1024, false, 10_000+2_500, 0, false, 0)
	w := c.cwnd
	if w <= 4096 {
		t.Fatalf("cwnd %d one period on, want it increased", w)
	}
	c.onAck(10_001, 1024, false, 10_000+2_500, 0, false, 0)
	if c.cwnd != w {
		t.Errorf("cwnd %d -> %d 1 ns after an adjustment, want no change until the next period", w, c.cwnd)
	}
}

// TestMutantNSCCQuickAdaptNextPeriod: each quick-adapt period ends base_rtt
// + target after the previous one ended: a loss armed in the second period
// adapts at its end (30 µs), not before (CC-SM-1, CC-NSCC-5).
func TestMutantNSCCQuickAdaptNextPeriod(t *testing.T) {
	c := newNSCC(func(p *NSCCConfig) { p.DisableQA = false })
	c.onAck(0, 1024, false, 10_000, 0, false, 0)      // starts the first period
	c.onAck(15_000, 1024, false, 10_000, 0, false, 0) // its end: no trigger, the second begins
	c.onLoss(1)
	for _, now := range []Time{20_000, 29_999} {
		if cause := c.onAck(now, 1024, false, 10_000, 0, false, 0); cause == CCQuickAdapt {
			t.Fatalf("quick adapt at %d ns, before the second period ends at 30000", now)
		}
	}
	if cause := c.onAck(30_000, 1024, false, 10_000, 0, false, 0); cause != CCQuickAdapt {
		t.Errorf("at the second period's end with a loss armed: %v, want quick adapt", cause)
	}
}

// TestMutantNSCCNoRTTFairOnly: a SACK without an RTT sample earns only the
// fair increase, fi × MTU × acked: one period on, 1024 bytes add 5 × 1024
// to the window of one MTU, and eta (CC-SM-1, CC-NSCC-3).
func TestMutantNSCCNoRTTFairOnly(t *testing.T) {
	c := atMTU(t)
	c.onAck(10_000, 1024, false, -1, 0, false, 0)
	if want := int64(4096 + 5*1024 + 256); c.cwnd != want {
		t.Errorf("cwnd %d, want %d", c.cwnd, want)
	}
}
