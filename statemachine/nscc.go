package statemachine

import (
	"math"
	"math/bits"
)

// nscc is the UET NSCC congestion window of one QP (CC-GEN-2, CC-NSCC-1);
// this implementation gives each QP its own QPCC (CC-GEN-3) and keeps one
// window per QP, never per EV (CC-GEN-4). It computes in integers: the
// float parameters of the CC profile become 16.16 fixed point once, so
// every platform computes the same window bit for bit (Go may fuse
// floating-point operations differently per architecture).
//
// How this project reads struct mrc_ctl_cc_nscc_cfg (CC-NSCC-1 to
// CC-NSCC-7, CC-RSP-1, CC-RSP-2; the free choices are CC-SM-1 in
// spec/21-statemachine-decisions.md):
//
//   - delay = RTT − base_rtt; avg_delay is its EWMA with weight 1/8.
//   - No ECN, delay < target: proportional increase
//     inc += MTU·acked·(target−delay)/target, plus the fair increase.
//   - No ECN, delay ≥ target: fair increase inc += fi·MTU·acked.
//   - ECN, delay ≥ target: multiplicative decrease, only when avg_delay >
//     target and at most once per base_rtt:
//     cwnd ×= max(1 − gamma·(avg_delay−target)/avg_delay, max_md_jump).
//   - ECN, delay < target: no change (left to EV load balancing).
//   - Fast increase: once more than a whole window has been acknowledged
//     with delay below target/8, cwnd += fi_scale·acked on every such SACK.
//   - Every adjust_bytes_threshold acknowledged bytes or
//     adjust_period_threshold ns: cwnd += min(adjust_bytes_threshold,
//     inc/cwnd); every adjust_period_threshold ns: cwnd += eta bytes.
//   - Quick adapt (unless disable_qa): once per base_rtt+target window,
//     after a trim NACK or timeout or when avg_delay > qa_threshold, and
//     while the bytes acknowledged in the window are below max_cwnd >>
//     qa_gate and below cwnd, cwnd drops to those bytes.
//   - A trim NACK or a timeout takes the lost payload off cwnd.
//   - rcv_cwnd_pen k > 0: no increase for that SACK, cwnd limited to the
//     bytes in flight and reduced by k/128 of the acknowledged bytes; r_c
//     restores the window held before the penalties began.
//   - MTU ≤ cwnd ≤ max_cwnd; the window starts at max_cwnd.
type nscc struct {
	on                     bool
	mtu, cwnd, maxCwnd     int64
	baseRTT, target        Time
	eta                    int64
	fi, fiScale            int64 // 16.16
	gamma, maxMD           int64 // 16.16
	adjBytes               int64
	adjPeriod              Time
	qaOn                   bool
	qaGate                 uint8
	qaThresh               Time
	avgDelay               Time
	haveAvg                bool
	inc                    int64 // accumulated increase, bytes²
	sinceAdj               int64
	fastBytes              int64 // bytes acknowledged at near-zero delay in a row
	lastAdj, lastMD, lastE Time
	qaEnd                  Time
	qaStarted              bool
	achieved               int64
	trigQA                 bool
	penalized              bool
	saved                  int64
}

const fxOne = 1 << 16

func fx(v float32) int64 { return int64(math.Round(float64(v) * fxOne)) }

func (c *nscc) init(p *CCProfile, mtu int, now Time) {
	*c = nscc{mtu: int64(mtu)}
	if p.Algorithm != CCAlgNSCC {
		return
	}
	n := &p.NSCC
	*c = nscc{
		on: true, mtu: int64(mtu), maxCwnd: max(int64(n.MaxCwnd), int64(mtu)),
		baseRTT: Time(n.BaseRTT), target: Time(n.TargetDelay), eta: int64(math.Round(float64(n.Eta))),
		fi: fx(n.FI), fiScale: fx(n.FIScale), gamma: fx(n.Gamma), maxMD: fx(n.MaxMDJump),
		adjBytes: int64(n.AdjustBytesThreshold), adjPeriod: Time(n.AdjustPeriodThreshold),
		qaOn: !n.DisableQA, qaGate: n.QAGate, qaThresh: Time(n.QAThreshold),
		lastAdj: now, lastE: now, lastMD: now - Time(n.BaseRTT),
	}
	c.cwnd = c.maxCwnd // CC-NSCC-7
}

// allow reports whether a packet of n payload bytes may leave with inflight
// bytes outstanding (CC-GEN-2). One packet may always be outstanding, so a
// window below one packet cannot stall the QP.
func (c *nscc) allow(inflight, n int64) bool {
	return !c.on || inflight == 0 || inflight+n <= c.cwnd
}

// mulDiv returns a·b/d without intermediate overflow; a, b ≥ 0, d > 0.
func mulDiv(a, b, d int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi == 0 {
		return int64(lo / uint64(d))
	}
	if hi >= uint64(d) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	return int64(min(q, math.MaxInt64))
}

// mulShift returns a·b/2^16 for a 16.16 fixed-point factor, saturating.
func mulShift(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi>>15 != 0 {
		return math.MaxInt64
	}
	return int64(hi<<48 | lo>>16)
}

// onAck applies one SACK: acked bytes newly acknowledged, ecn (m was not
// NONE, CC-SIG-2), rtt (−1 without a sample), the responder's penalty and
// restore flag, and the bytes still in flight. It returns the cause when
// the window changed.
func (c *nscc) onAck(now Time, acked int64, ecn bool, rtt Time, pen uint8, restore bool, inflight int64) CCCause {
	if !c.on {
		return CCNone
	}
	before := c.cwnd
	cause := CCIncrease
	c.achieved += acked
	c.sinceAdj += acked
	delay := Time(-1)
	if rtt >= 0 {
		delay = max(0, rtt-c.baseRTT)
		if !c.haveAvg {
			c.avgDelay, c.haveAvg = delay, true
		} else {
			c.avgDelay += (delay - c.avgDelay) / 8
		}
	}
	switch {
	case pen > 0:
		if !c.penalized {
			c.saved, c.penalized = c.cwnd, true
		}
		c.cwnd = min(c.cwnd, max(inflight, c.mtu)) - acked*int64(pen)/128
		cause = CCPenalty
	case c.quickAdapt(now):
		cause = CCQuickAdapt
	default:
		if !ecn && delay >= 0 && delay < c.target/8 {
			if c.fastBytes += acked; c.fastBytes > c.cwnd {
				c.cwnd += mulShift(c.fiScale, acked)
			}
		} else {
			c.fastBytes = 0
		}
		switch {
		case !ecn && delay >= 0 && delay < c.target:
			c.inc += mulDiv(c.mtu*acked, int64(c.target-delay), int64(c.target))
			c.inc += mulShift(c.fi, c.mtu*acked)
		case !ecn:
			c.inc += mulShift(c.fi, c.mtu*acked)
		case delay >= c.target && c.avgDelay > c.target && now-c.lastMD >= c.baseRTT:
			f := fxOne - mulDiv(c.gamma, int64(c.avgDelay-c.target), int64(c.avgDelay))
			c.cwnd = mulShift(c.cwnd, max(f, c.maxMD))
			c.lastMD = now
			cause = CCDecrease
		}
		if c.sinceAdj >= c.adjBytes || now-c.lastAdj >= c.adjPeriod {
			c.cwnd += min(c.adjBytes, c.inc/max(c.cwnd, 1))
			c.inc, c.sinceAdj, c.lastAdj = 0, 0, now
		}
		if now-c.lastE >= c.adjPeriod {
			c.cwnd += c.eta
			c.lastE = now
		}
	}
	if restore && c.penalized {
		c.cwnd, c.penalized = max(c.cwnd, c.saved), false
		cause = CCRestore
	}
	c.clamp()
	if c.cwnd == before {
		return CCNone
	}
	return cause
}

func (c *nscc) quickAdapt(now Time) bool {
	if !c.qaOn {
		return false
	}
	if !c.qaStarted {
		c.qaStarted, c.qaEnd, c.achieved = true, now+c.baseRTT+c.target, 0
		return false
	}
	if now < c.qaEnd {
		return false
	}
	fire := (c.trigQA || c.avgDelay > c.qaThresh) &&
		(c.qaGate == 0 || c.achieved < c.maxCwnd>>c.qaGate) && c.achieved < c.cwnd
	if fire {
		c.cwnd, c.trigQA, c.inc = max(c.achieved, c.mtu), false, 0
	}
	c.achieved, c.qaEnd = 0, now+c.baseRTT+c.target
	return fire
}

// onLoss reacts to a trim NACK or a timeout: the window loses the packet's
// payload and quick adapt is armed (CC-NSCC-6).
func (c *nscc) onLoss(n int64) CCCause {
	if !c.on {
		return CCNone
	}
	before := c.cwnd
	c.cwnd -= n
	c.trigQA = true
	c.clamp()
	if c.cwnd == before {
		return CCNone
	}
	return CCNACK
}

func (c *nscc) clamp() {
	c.cwnd = min(max(c.cwnd, c.mtu), c.maxCwnd) // CC-NSCC-4
}
