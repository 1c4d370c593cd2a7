// Package modelcheck is an exhaustive model checker for the real MRC state
// machine: it explores, breadth-first, every interleaving of two
// statemachine.QPs (A = QPN 0x11, B = 0x22) joined by a nondeterministic
// network, within stated bounds, and checks the invariants of the TLA+
// model (tla/MRC.tla) in every state and on every step.
//
// # The model
//
// A state (a world) is the two QPs, the current time, the network and a few
// counters. The network is a bag of packets: any packet in flight may be
// delivered next, so every reordering is explored. The transitions are:
//
//   - post: a QP posts its next work request (Config.Msgs);
//   - deliver, drop, duplicate, trim (mid-path or last hop: the payload is
//     stripped and the DSCP becomes DSCP_TRIMMED or DSCP_TRIMMED_LASTHOP),
//     CE-mark: on any packet in flight, the faults within Bounds;
//   - path failure: an EV black-holes, for good, what its QP sends on it;
//   - timer: time jumps to the earliest deadline of either QP and the QPs
//     whose deadline it is Advance (timeouts, probes, reverse-path probes,
//     delayed SACKs, hold-offs); tick: time advances a quarter timeout
//     without reaching a deadline;
//   - control: a plane goes down or up at both QPs (SetPortStatus), the
//     controller sets an EV's state (SetEVState), the application moves a
//     QP to ERROR (Modify), a responder runs short of resources
//     (SetResourceCondition), changes its dynamic MPR (SetDynamicMPR) or its
//     host backpressure (SetReceivePenalty).
//
// Each kind of fault and event has a budget (Bounds) that is a counter in
// the state, so the state space is finite. Config.SilentTimeouts lets a
// timer fire only when the packets that expire and their answers are no
// longer in flight, as the TLA+ model does by default; without it the
// network may delay any packet beyond any timeout (spurious timeouts).
//
// # State hashing
//
// The visited set is keyed by a 64-bit fingerprint of the whole state:
// both QPs walked field by field by reflection (hash.go: time points
// relative to the current time, stale ring slots and pure caches left out,
// any field of an unknown kind a panic), the multiset of packets in flight
// and the counters. QP.StateHash covers only the abstract state (it leaves
// out timers, the random stream, the EV rotation, probe flags), which is not
// enough to tell states with different futures apart; the search checks
// that states with equal fingerprints have equal StateHashes.
//
// # Invariants
//
// After every transition the checker evaluates the invariants listed in
// Invariants (invariants.go), named as in the TLA+ model where it has the
// same property, each citing its requirement IDs: no duplicate placement,
// completions only after their data is placed, WriteIMM completions exactly
// once and in order, send completions in order, the MPR window, EV state
// transitions only as the path-state table allows and only for the event
// that justifies them, first transmissions and retransmissions only on
// GOOD EVs of planes that are up, no retransmission on the EV a NACK or
// timeout named, a NACKed PSN queued for retransmission, no go-back-N, the
// retry budget counted from the events and ERROR when it runs out, the
// requester's acknowledgement state backed by the responder's, the
// WriteIMM limits, the in-flight accounting, probes restoring EVs and the
// resource hold-off. A state with nothing in flight and no timer armed must
// have every work request complete (or a QP in ERROR), and a timer step
// that only repeats itself, with the work not done, is a livelock (both
// Progress).
//
// When an invariant fails, Check returns the shortest counterexample (the
// search is breadth-first), replayed into a readable list of steps and an
// NDJSON trace (statemachine/trace.go) that tla/MRCTrace.tla can check.
//
// # Seeded bugs, traces, the TLA+ model
//
// statemachine.Config.Test.Faults seeds known bugs; the tests require the
// checker to find each with a minimal counterexample. Scenarios are single
// scripted runs of the same world whose traces are checked in under
// testdata/traces and validated with TLC (go test -tags tlc) when MRC_TLA2TOOLS names a
// tla2tools.jar; Reachable projects every reachable state onto the TLA+
// model's variables for the comparison with TLC's reachable states.
// CheckEndpoint explores the endpoint agent (QP 0x2) in the same way.
//
// See README.md for the configurations, their sizes, the counterexamples
// and the agreement with the TLA+ model.
package modelcheck
