package statemachine

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/openmrc/mrc/wire"
)

// Faults is a set of seeded bugs, one bit per fault. A seeded fault turns
// one correct behaviour into a known-wrong one, so that tests can show that
// a checker (the model checker, trace validation, the conformance suite)
// catches it. Every fault, whichever package's code it breaks, is one value
// made by NewFault in the faults.go of that package, found by its name,
// with the requirement it breaks and the one rule it overrides. The code
// it breaks asks that package's rules (BreakRules), whose default is the
// specification's rule. The zero value seeds nothing and is what any real
// use has.
type Faults uint64

// faultInfo describes the faults NewFault has made, by bit. It is written
// only while packages initialise and read-only after.
var faultInfo []struct {
	name, req, doc string
	breaks         any // a func(*R) for the rules type R of the package it breaks
}

// NewFault makes a fault: a Faults with one bit of its own, named name,
// breaking requirement req as doc describes by overriding one rule of a
// package's rules R (breaks sets that rule's function). It is meant for
// package-level variables; a name used twice, no name, no requirement or a
// 65th fault panics while the program initialises.
func NewFault[R any](name, req, doc string, breaks func(*R)) Faults {
	if _, ok := FaultNamed(name); ok || name == "" || req == "" || breaks == nil || len(faultInfo) == 64 {
		panic(fmt.Sprintf("statemachine: fault %q: no name, requirement or rule, used twice, or beyond 64 faults", name))
	}
	faultInfo = append(faultInfo, struct {
		name, req, doc string
		breaks         any
	}{name, req, doc, breaks})
	return 1 << (len(faultInfo) - 1)
}

// BreakRules returns the rules R with the overrides of the faults of s that
// break R applied to spec, in bit order, or nil when none of them breaks an
// R: the reference code asks spec's rules when it is nil, so that an
// unseeded decision costs one predicted branch.
func BreakRules[R any](s Faults, spec R) *R {
	var out *R
	for v := uint64(s); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i >= len(faultInfo) {
			continue
		}
		if f, ok := faultInfo[i].breaks.(func(*R)); ok {
			if out == nil {
				out = &spec
			}
			f(out)
		}
	}
	return out
}

// FaultNamed returns the fault called name.
func FaultNamed(name string) (Faults, bool) {
	for i, f := range faultInfo {
		if f.name == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// Has reports whether s seeds every fault of f.
func (s Faults) Has(f Faults) bool { return f != 0 && s&f == f }

// Name is the name of a single fault, or of each fault of s joined by ",".
func (s Faults) Name() string { return strings.Join(s.Names(), ",") }

// Doc describes a single fault.
func (s Faults) Doc() string {
	if i, ok := s.index(); ok {
		return faultInfo[i].doc
	}
	return ""
}

// Requirement is the ID of the requirement a single fault breaks.
func (s Faults) Requirement() string {
	if i, ok := s.index(); ok {
		return faultInfo[i].req
	}
	return ""
}

// index is the faultInfo index of a single fault.
func (s Faults) index() (int, bool) {
	i := bits.TrailingZeros64(uint64(s))
	return i, s != 0 && s&(s-1) == 0 && i < len(faultInfo)
}

// Names returns the names of the faults of s, sorted.
func (s Faults) Names() []string {
	var out []string
	for v := uint64(s); v != 0; v &= v - 1 {
		if i := bits.TrailingZeros64(v); i < len(faultInfo) {
			out = append(out, faultInfo[i].name)
		} else {
			out = append(out, fmt.Sprintf("fault-%d", i))
		}
	}
	slices.Sort(out)
	return out
}

func (s Faults) String() string {
	if s == 0 {
		return "none"
	}
	return s.Name()
}

// The statemachine's seeded faults, each overriding the one rule of
// rules.go it breaks. Those peer.Faults lists are also the reference
// peer's (mrc-peer --fault); the others are for the model checker and
// trace validation.
var (
	// FaultGoBackN retransmits every outstanding PSN from a lost one on.
	FaultGoBackN = NewFault("go-back-n", "LR-RTX-1", "retransmits every outstanding PSN from a lost one on, acknowledged or not",
		func(b *ruleSet) { b.alsoLost = goBackN })
	// FaultIgnoreTrim ignores TRIMMED NACKs (no retransmission, no SKIP).
	FaultIgnoreTrim = NewFault("ignore-trim", "LR-NACK-1", "ignores TRIMMED NACKs (no retransmission until the timer)",
		func(b *ruleSet) { b.heedsNACK = func(r wire.NACKReason) bool { return r != wire.NACKTrimmed } })
	// FaultReuseNACKedEV retransmits a NACKed packet on the EV the NACK named.
	FaultReuseNACKedEV = NewFault("reuse-nacked-ev", "EV-ST-13", "retransmits a NACKed PSN on the EV the NACK named",
		func(b *ruleSet) { b.avoidsNamedEV = func() bool { return false } })
	// FaultEarlyWIMM releases WriteIMM immediate data as soon as its last
	// packet arrives, before earlier messages are complete.
	FaultEarlyWIMM = NewFault("early-wimm", "WIMM-RSP-1", "completes a WriteIMM when its last packet arrives, before earlier PSNs",
		func(b *ruleSet) { b.immAtArrival = func() bool { return true } })
	// FaultPlaceDuplicates places duplicate packets again.
	FaultPlaceDuplicates = NewFault("place-duplicates", "RSP-DUP-1", "places duplicate packets again",
		func(b *ruleSet) { b.placesAgain = func() bool { return true } })
	// FaultBeyondMPR sends PSNs beyond cumulative ACK + MPR (up to twice it).
	FaultBeyondMPR = NewFault("beyond-mpr", "MPR-WIN-1", "sends PSNs up to twice the MPR window ahead of the cumulative ACK",
		func(b *ruleSet) { b.reach = func(w uint32) uint32 { return 2 * w } })
	// FaultNoRestore never returns an ASSUMED_BAD EV to GOOD, however many
	// probes are answered with m = NONE.
	FaultNoRestore = NewFault("no-restore", "EV-ST-7", "never returns an ASSUMED_BAD EV to GOOD, whatever its probes say",
		func(b *ruleSet) { b.restoresEV = func(uint8, uint8) bool { return false } })
	// FaultNoHoldOff retransmits after a resource NACK at once instead of
	// waiting base_rtt.
	FaultNoHoldOff = NewFault("no-hold-off", "LR-NACK-2", "retransmits at once after a resource NACK instead of waiting base_rtt",
		func(b *ruleSet) { b.holdOff = func(Time) Time { return 0 } })
	// FaultNoStallTimer runs no timer for a queued retransmission that no
	// EV may carry: the QP can hang in RTS forever.
	FaultNoStallTimer = NewFault("no-stall-timer", "LR-SM-3", "runs no timer for a queued retransmission no EV may carry",
		func(b *ruleSet) { b.stallTimed = func() bool { return false } })
	// FaultPlaceShifted places a packet that is not the first of its
	// message one packet length below its VA, over the packet before it:
	// the right bytes at the wrong address.
	FaultPlaceShifted = NewFault("place-shifted", "RSP-RCV-3", "places a packet that is not its message's first one packet length too low",
		func(b *ruleSet) { b.placementVA = placeShifted })
	// FaultFatalRecoverableNACK fails the QP on a recoverable NACK instead
	// of retransmitting (an unjustified ERROR; breaks LR-NACK-5 too).
	FaultFatalRecoverableNACK = NewFault("fatal-recoverable-nack", "LR-NACK-1", "moves the QP to ERROR on a recoverable NACK",
		func(b *ruleSet) { b.recoverable = func(wire.NACKReason) bool { return false } })
	// FaultResponderWindowOffByOne accepts one PSN beyond the responder's
	// MPR window (breaks RSP-NACK-4 too).
	FaultResponderWindowOffByOne = NewFault("responder-window-off-by-one", "RSP-RCV-6", "accepts one PSN beyond the responder's MPR window",
		func(b *ruleSet) { b.beyondWindow = func(d, w uint32) bool { return d > w+1 } })
	// FaultNoBackoff keeps the RTO at T: exp_cnt's retries are spent as
	// linear ones.
	FaultNoBackoff = NewFault("no-backoff", "LR-TMR-4", "spends exp_cnt's retries as linear ones, the RTO staying T",
		func(b *ruleSet) { b.retryBudget = func(linear, exp int) (int, int) { return linear + exp, 0 } })
	// FaultStallTimerKept leaves the stall timer running when the wait it
	// times ends: its later expiry spends a retry no loss caused (breaks
	// LR-TMR-6 too).
	FaultStallTimerKept = NewFault("stall-timer-kept", "LR-SM-3", "leaves the stall timer running after the wait it times ends",
		func(b *ruleSet) { b.stallTimerStops = func() bool { return false } })
	// FaultStallDequeues takes a stall timer's expiry for the waiting
	// PSN's retransmission: the PSN counts as in flight again, its timer
	// armed, and nothing is sent (breaks LR-RTX-1 too).
	FaultStallDequeues = NewFault("stall-dequeues", "LR-SM-3", "takes a stall timer's expiry for the waiting PSN's retransmission",
		func(b *ruleSet) { b.retryStalled = dequeueStalled })
	// FaultSQDrainedEarly raises IBV_EVENT_SQ_DRAINED once the started
	// message is sent, before its packets are acknowledged (breaks
	// CTL-AEV-6 too).
	FaultSQDrainedEarly = NewFault("sq-drained-early", "QP-ST-12", "raises SQ_DRAINED once the started message is sent, before it is acknowledged",
		func(b *ruleSet) { b.sqDrained = func(partlySent bool, _ int32, _ bool) bool { return !partlySent } })
	// FaultSQDStartsNew starts new messages in SQD as in RTS.
	FaultSQDStartsNew = NewFault("sqd-starts-new", "QP-ST-12", "starts new messages in SQD as in RTS",
		func(b *ruleSet) { b.startsNew = func(QPState) bool { return true } })
	// FaultSQDrainedAtMoveOnly raises IBV_EVENT_SQ_DRAINED only when the
	// QP is drained at the move to SQD, not when it drains later.
	FaultSQDrainedAtMoveOnly = NewFault("sq-drained-at-move-only", "CTL-AEV-6", "raises SQ_DRAINED only when the QP is drained at the move to SQD",
		func(b *ruleSet) {
			b.sqDrained = func(partlySent bool, outstanding int32, atMove bool) bool {
				return atMove && rules{}.sqDrained(partlySent, outstanding, atMove)
			}
		})
	// FaultIgnoreSACKedUnexp ignores an UNEXP_EVENT NACK whose PSN is
	// selectively acknowledged, as LR-NACK-6 read alone would (breaks
	// AMB-100 too).
	FaultIgnoreSACKedUnexp = NewFault("ignore-sacked-unexp", "LR-NACK-4", "ignores an UNEXP_EVENT NACK naming a selectively acknowledged PSN",
		func(b *ruleSet) { b.unexpCounts = func(sacked bool) bool { return !sacked } })
	// FaultCommEstRepeated raises IBV_EVENT_COMM_EST on every request
	// packet a QP in RTR accepts, not on the first only.
	FaultCommEstRepeated = NewFault("comm-est-repeated", "CTL-AEV-4", "raises COMM_EST on every request packet in RTR, not on the first only",
		func(b *ruleSet) { b.commEst = func(bool) bool { return true } })
	// FaultRtxTakenAsNew decides by the BTH rtx flag that a packet is no
	// duplicate, so a retransmission of a PSN already received within the
	// window is placed again (breaks RSP-DUP-1 too).
	FaultRtxTakenAsNew = NewFault("rtx-taken-as-new", "RSP-DUP-3", "takes every retransmitted packet for new, placing it again when held",
		func(b *ruleSet) {
			b.duplicate = func(r *responder, p *wire.Packet, d uint32) bool {
				return !p.BTH.Retransmit && rules{}.duplicate(r, p, d)
			}
		})
	// FaultHalfSpaceOffByOne takes the PSN half the PSN space from the
	// cumulative ACK, d = 2^23, for one ahead of the window rather than a
	// duplicate, and NACKs it out of window (breaks RSP-DUP-2 too).
	FaultHalfSpaceOffByOne = NewFault("half-space-off-by-one", "RSP-RCV-6", "takes the PSN 2^23 from the cumulative ACK for one ahead, not a duplicate",
		func(b *ruleSet) {
			b.duplicate = func(r *responder, p *wire.Packet, d uint32) bool { return d != 1<<23 && rules{}.duplicate(r, p, d) }
		})
	// FaultRingAlias looks every PSN up in the tracking ring, so one beyond
	// the window that aliases a PSN received within it is answered as a
	// duplicate instead of NACKed out of window (breaks RSP-NACK-4 too).
	FaultRingAlias = NewFault("ring-alias", "RSP-RCV-6", "answers a PSN beyond the window that aliases a received one in the ring as a duplicate",
		func(b *ruleSet) {
			b.duplicate = func(r *responder, p *wire.Packet, d uint32) bool {
				return rules{}.duplicate(r, p, d) || r.ring.get(p.BTH.PSN&wire.PSNMask)
			}
		})
	// FaultTrimBeforeWindow answers a trimmed packet for its trim before
	// classing its PSN: a trimmed duplicate or out-of-window PSN gets a
	// TRIMMED NACK (breaks RSP-DUP-2 too).
	FaultTrimBeforeWindow = NewFault("trim-before-window", "RSP-SM-3", "NACKs a trimmed packet TRIMMED before classing its PSN as duplicate or out of window",
		func(b *ruleSet) { b.classesTrimmed = func() bool { return false } })
	// FaultCEDupUnmarked answers a CE-marked duplicate with m = NONE.
	FaultCEDupUnmarked = NewFault("ce-dup-unmarked", "RSP-SACK-3", "answers a CE-marked duplicate with m = NONE",
		func(b *ruleSet) { b.dupVerdict = func(wire.Multipath) wire.Multipath { return wire.MNone } })
	// FaultWIMMConflictPlaced places a WriteIMM whose RQMSN is already
	// held as a WRITE instead of discarding it.
	FaultWIMMConflictPlaced = NewFault("wimm-conflict-placed", "WIMM-SM-1", "places a WriteIMM whose RQMSN is already held as a WRITE",
		func(b *ruleSet) { b.placesIMMAgain = func() bool { return true } })
)

// goBackN is FaultGoBackN's loss: everything after a lost PSN is resent,
// even PSNs the responder already acknowledged.
func goBackN(q *QP, psn uint32, c LossCause) {
	if c == LossGoBackN {
		return
	}
	r := &q.req
	for p := wire.PSNAdd(psn, 1); p != r.nxt; p = wire.PSNAdd(p, 1) {
		i := p & r.ring.mask
		if r.ring.fl[i]&txSACKed != 0 {
			r.ring.setFlags(i, r.ring.fl[i]&^txSACKed|txInFlight)
			r.inflight += r.pktLen(p)
		}
		q.markLost(p, LossGoBackN, r.evAt(i))
	}
}

// placeShifted is FaultPlaceShifted's VA: one packet length low for every
// packet but its message's first.
func placeShifted(p *wire.Packet) uint64 {
	if p.BTH.Opcode.IsFirst() {
		return p.RETH.VA
	}
	return p.RETH.VA - uint64(len(p.Payload))
}

// dequeueStalled is FaultStallDequeues's stall expiry: the waiting PSN is
// armed as if sent, and counts as in flight again.
func dequeueStalled(q *QP, psn uint32) {
	r := &q.req
	i := psn & r.ring.mask
	r.arm(psn, r.evAt(i), q.now)
	r.nLost--
	r.inflight += r.pktLen(psn)
}
