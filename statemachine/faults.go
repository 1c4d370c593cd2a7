package statemachine

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Faults is a set of seeded bugs, one bit per fault. A seeded fault turns
// one correct behaviour into a known-wrong one, so that tests can show that
// a checker (the model checker, trace validation, the conformance suite)
// catches it. Every fault, whichever package's code it breaks, is one value
// made by NewFault in the file of that package that lists its faults, found
// by its name; the reference code asks Has at the one place each breaks.
// The zero value seeds nothing and is what any real use has.
type Faults uint64

// faultInfo names the faults NewFault has made, by bit. It is written only
// while packages initialise and read-only after.
var faultInfo []struct{ name, doc string }

// NewFault makes a fault: a Faults with one bit of its own, named name and
// described by doc. It is meant for package-level variables; a name used
// twice, or a 65th fault, panics while the program initialises.
func NewFault(name, doc string) Faults {
	if _, ok := FaultNamed(name); ok || name == "" || len(faultInfo) == 64 {
		panic(fmt.Sprintf("statemachine: fault %q: empty, used twice, or beyond 64 faults", name))
	}
	faultInfo = append(faultInfo, struct{ name, doc string }{name, doc})
	return 1 << (len(faultInfo) - 1)
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
	if i := bits.TrailingZeros64(uint64(s)); s != 0 && s&(s-1) == 0 && i < len(faultInfo) {
		return faultInfo[i].doc
	}
	return ""
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

// The statemachine's seeded faults. Those peer.Faults lists are also the
// reference peer's (mrc-peer --fault); the others are for the model checker
// and trace validation.
var (
	// FaultGoBackN retransmits every outstanding PSN from a lost one on.
	FaultGoBackN = NewFault("go-back-n", "retransmits every outstanding PSN from a lost one on, acknowledged or not")
	// FaultIgnoreTrim ignores TRIMMED NACKs (no retransmission, no SKIP).
	FaultIgnoreTrim = NewFault("ignore-trim", "ignores TRIMMED NACKs (no retransmission until the timer)")
	// FaultReuseNACKedEV retransmits a NACKed packet on the EV the NACK named.
	FaultReuseNACKedEV = NewFault("reuse-nacked-ev", "retransmits a NACKed PSN on the EV the NACK named")
	// FaultEarlyWIMM releases WriteIMM immediate data as soon as its last
	// packet arrives, before earlier messages are complete.
	FaultEarlyWIMM = NewFault("early-wimm", "completes a WriteIMM when its last packet arrives, before earlier PSNs")
	// FaultPlaceDuplicates places duplicate packets again.
	FaultPlaceDuplicates = NewFault("place-duplicates", "places duplicate packets again")
	// FaultBeyondMPR sends PSNs beyond cumulative ACK + MPR (up to twice it).
	FaultBeyondMPR = NewFault("beyond-mpr", "sends PSNs up to twice the MPR window ahead of the cumulative ACK")
	// FaultNoRestore never returns an ASSUMED_BAD EV to GOOD, however many
	// probes are answered with m = NONE (breaks EV-ST-7).
	FaultNoRestore = NewFault("no-restore", "never returns an ASSUMED_BAD EV to GOOD, whatever its probes say")
	// FaultNoHoldOff retransmits after a resource NACK at once instead of
	// waiting base_rtt (breaks LR-NACK-2).
	FaultNoHoldOff = NewFault("no-hold-off", "retransmits at once after a resource NACK instead of waiting base_rtt")
	// FaultNoStallTimer runs no timer for a queued retransmission that no
	// EV may carry: the QP can hang in RTS forever (breaks LR-SM-3).
	FaultNoStallTimer = NewFault("no-stall-timer", "runs no timer for a queued retransmission no EV may carry")
	// FaultPlaceShifted places a packet that is not the first of its
	// message one packet length below its VA, over the packet before it
	// (breaks RSP-RCV-3: the right bytes at the wrong address).
	FaultPlaceShifted = NewFault("place-shifted", "places a packet that is not its message's first one packet length too low")
	// FaultFatalRecoverableNACK fails the QP on a recoverable NACK instead
	// of retransmitting (an unjustified ERROR; breaks LR-NACK-1, LR-NACK-5).
	FaultFatalRecoverableNACK = NewFault("fatal-recoverable-nack", "moves the QP to ERROR on a recoverable NACK")
	// FaultResponderWindowOffByOne accepts one PSN beyond the responder's
	// MPR window (breaks RSP-RCV-6, RSP-NACK-4).
	FaultResponderWindowOffByOne = NewFault("responder-window-off-by-one", "accepts one PSN beyond the responder's MPR window")
	// FaultNoBackoff keeps the RTO at T: exp_cnt's retries are spent as
	// linear ones (breaks LR-TMR-4).
	FaultNoBackoff = NewFault("no-backoff", "spends exp_cnt's retries as linear ones, the RTO staying T")
	// FaultStallTimerKept leaves the stall timer running when the wait it
	// times ends: its later expiry spends a retry no loss caused (breaks
	// LR-SM-3, LR-TMR-6).
	FaultStallTimerKept = NewFault("stall-timer-kept", "leaves the stall timer running after the wait it times ends")
	// FaultStallDequeues takes a stall timer's expiry for the waiting
	// PSN's retransmission: the PSN counts as in flight again, its timer
	// armed, and nothing is sent (breaks LR-SM-3, LR-RTX-1).
	FaultStallDequeues = NewFault("stall-dequeues", "takes a stall timer's expiry for the waiting PSN's retransmission")
	// FaultSQDrainedEarly raises IBV_EVENT_SQ_DRAINED once the started
	// message is sent, before its packets are acknowledged (breaks
	// QP-ST-12, CTL-AEV-6).
	FaultSQDrainedEarly = NewFault("sq-drained-early", "raises SQ_DRAINED once the started message is sent, before it is acknowledged")
	// FaultSQDStartsNew starts new messages in SQD as in RTS (breaks
	// QP-ST-12).
	FaultSQDStartsNew = NewFault("sqd-starts-new", "starts new messages in SQD as in RTS")
	// FaultSQDrainedAtMoveOnly raises IBV_EVENT_SQ_DRAINED only when the
	// QP is drained at the move to SQD, not when it drains later (breaks
	// CTL-AEV-6).
	FaultSQDrainedAtMoveOnly = NewFault("sq-drained-at-move-only", "raises SQ_DRAINED only when the QP is drained at the move to SQD")
	// FaultIgnoreSACKedUnexp ignores an UNEXP_EVENT NACK whose PSN is
	// selectively acknowledged, as LR-NACK-6 read alone would (breaks
	// LR-NACK-4, AMB-100).
	FaultIgnoreSACKedUnexp = NewFault("ignore-sacked-unexp", "ignores an UNEXP_EVENT NACK naming a selectively acknowledged PSN")
	// FaultCommEstRepeated raises IBV_EVENT_COMM_EST on every request
	// packet a QP in RTR accepts, not on the first only (breaks CTL-AEV-4).
	FaultCommEstRepeated = NewFault("comm-est-repeated", "raises COMM_EST on every request packet in RTR, not on the first only")
	// FaultRtxTakenAsNew decides by the BTH rtx flag that a packet is no
	// duplicate, so a retransmission of a PSN already received within the
	// window is placed again (breaks RSP-DUP-3, RSP-DUP-1).
	FaultRtxTakenAsNew = NewFault("rtx-taken-as-new", "takes every retransmitted packet for new, placing it again when held")
	// FaultHalfSpaceOffByOne takes the PSN half the PSN space from the
	// cumulative ACK, d = 2^23, for one ahead of the window rather than a
	// duplicate, and NACKs it out of window (breaks RSP-RCV-6, RSP-DUP-2).
	FaultHalfSpaceOffByOne = NewFault("half-space-off-by-one", "takes the PSN 2^23 from the cumulative ACK for one ahead, not a duplicate")
	// FaultRingAlias looks every PSN up in the tracking ring, so one beyond
	// the window that aliases a PSN received within it is answered as a
	// duplicate instead of NACKed out of window (breaks RSP-RCV-6,
	// RSP-NACK-4).
	FaultRingAlias = NewFault("ring-alias", "answers a PSN beyond the window that aliases a received one in the ring as a duplicate")
)
