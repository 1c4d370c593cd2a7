// Package statemachine is the reference MRC endpoint as a pure state
// machine, in the style of etcd's raft: a QP (requester and responder
// halves sharing one EV table and one NSCC window) and a node's endpoint
// agent, driven only by inputs, with everything they produce collected in
// an Output. There are no goroutines, channels, clocks, sockets or mutable
// global state (the fault names NewFault records are written only while
// packages initialise); time is an input (Time, in nanoseconds) and randomness comes
// from a PCG seeded from the configuration, so the same inputs give the same
// outputs bit for bit, on every platform (congestion control computes in
// integers).
//
// # Inputs and outputs
//
// Every input method takes the current time and a non-nil *Output to append
// to:
//
//   - QP.Post / QP.PostRecv: post a send or receive work request.
//   - QP.Receive: a packet from the network, as decoded by wire.Codec.Decode.
//   - QP.Advance: time has passed; timers fire and the windows are filled.
//   - QP.Modify, SetPortStatus, SetEVState, SetReceivePenalty,
//     SetResourceCondition, SetDynamicMPR: control-plane commands.
//   - Endpoint.Send / Receive / Advance: endpoint operations (QP 0x2).
//
// An Output holds the packets to transmit (wire.Packet headers filled, EV
// written with Packet.SetEV, with the EV, plane and DSCP class alongside),
// the memory placements of the responder (aliasing the received payload),
// the completions, and events. NextDeadline says when Advance next has work.
// The caller encodes packets with wire.Codec.Append. Reuse one Output across
// steps (Reset it after consuming) and the steady state allocates nothing.
//
// Events are flat, comparable structs with a Kind: QP and EV state changes,
// timeouts, retries, completions, probes and, when Output.TracePackets is
// set, one event per packet sent, received, placed or acknowledged. They are
// the abstract trace that TLA+ trace validation consumes.
//
// # State, memory and checking
//
// A QP keeps its state in plain fields and slices sized once, at the
// transitions to RTR and RTS, from its attributes (MPR windows, queue
// depths, max_wimm_dest): nothing a peer sends makes it grow. Per PSN of the
// requester's window it keeps 11 bytes; a QP with a 256-EV profile and a
// 1024-PSN window takes about 15 KiB when its profiles are shared through a
// Node. Clone copies a QP for a model checker's search, StateHash hashes its
// abstract state, AbstractState exposes it, and accessors such as
// CumulativeACK, PSNStateOf, EVStateOf, Retries and WIMMHeld answer the
// questions invariants ask.
//
// # Configuration
//
// A Node is one NIC: NewNode takes a Config, which holds what every QP of
// the NIC shares: the wire profile, the Device (mrc_device_attr limits,
// capabilities, GID table), the controller's ONLINE EV and CC profiles,
// the registered memory peers may write (MRs), the Policy (the choices
// the specification leaves open: reorder guard, retiring EVs on inferred
// loss, avoidance after a stall, acknowledgement coalescing) and
// TestKnobs. Node.NewQP takes a QPConfig, what is the QP's own: QP
// number, seed, address vector, queue depths, protocol version and
// timestamps. New makes a QP on a Node of its own.
//
// TestKnobs.Faults seeds known bugs for testing checkers; it is zero in
// any real use. The reference code never asks for a fault: at each point
// a fault can break, it asks a rule of rules.go, whose default is the
// specification's rule, cited there. Every seeded fault is a Faults value
// made by NewFault (the Fault* variables of faults.go) with its name, the
// requirement it breaks, a one-line description and the one rule it
// overrides; the reference peer adds its own the same way.
//
// # Control-plane objects
//
// Controller models the objects of the OCP control API (mrc_ctl.h) that
// sit above the QP: EV Format, EV and CC profiles with their INIT →
// OFFLINE → ONLINE lifecycle and errno rules, EV modes AUTO, EXP and GEN,
// EV expansion from profile fields (ExpandEV, GenerateEVs) so that a
// 32-byte SRv6 EV is an EV identity, REPLACE_EV with ALL_COPIES, device
// attributes and port administrative state. Its ONLINE profiles are the
// EVProfile and CCProfile values a Node is built from
// (spec/36-api-objects.md).
//
// # Bringing a QP up
//
// New takes a Config and a QPConfig (DefaultConfig gives one EV profile and
// one NSCC profile, both ID 1; DefaultQPConfig an IPv4 address vector);
// BringUp then walks RESET → INIT → RTR → RTS with an
// Attr, mrc_modify_qp's attributes. Every field, with the values two
// nodes on one fabric use:
//
//	attr := statemachine.Attr{
//		EVProfileID: 1,    // an EVProfile of the Config
//		CCProfileID: 1,    // a CCProfile of the Config
//		MPR:         8,    // requester window, units of 128 PSNs
//		MPRDest:     8,    // responder window: the peer's MPR
//		Cap:         0,    // QPCap bits: trim NACKs on, dynamic MPR off
//		MaxWIMM:     16,   // WriteIMMs outstanding as requester
//		MaxWIMMDest: 16,   // WriteIMMs held as responder
//		Timeout:     8,    // ACK timeout 1.024 µs × 2^8
//		Retry:       statemachine.Retry{LinearCnt: 7, ExpCnt: statemachine.RetryInfinite},
//		PKeyIndex:   0,    // recorded; the P_Key is QPConfig.Addr.PKey
//		AccessFlags: 0,    // recorded; remote writes are checked against Config.MRs
//		PathMTU:     4096, // bytes
//		DestQPN:     peerQPN,
//		RQPSN:       0,    // first PSN expected as responder
//		SQPSN:       0,    // first PSN sent as requester
//	}
//	err := qp.BringUp(now, attr, &out)
//
// Modify makes single transitions with an AttrMask instead. The package
// Example runs two QPs through a 64 KiB WriteIMM.
//
// # Requirements and decisions
//
// The behaviour follows spec/20-requester.md to spec/26-endpoint.md; code
// comments cite the requirement IDs they implement. Where those leave a
// detail open, the choice made here is a requirement of
// spec/21-statemachine-decisions.md (IDs *-SM-n). The main ones:
//
//   - Sequence numbers: cack_psn and una are inclusive (AMB-26); PSNs, MSNs
//     and RQMSNs start at the QP's SQ_PSN/RQ_PSN and 0 (REQ-PSN-3).
//   - Send completions are written, in post order, when the cumulative ACK
//     covers the whole message (CMP-SND-1, CMP-SND-2); receive completions
//     of WriteIMMs when every PSN up to the WriteIMM's last is received,
//     in RQMSN order, each consuming a posted receive WR (WIMM-RSP-1 to
//     WIMM-RSP-3).
//   - Loss recovery: per-packet timers armed with T × 2^max(0, c −
//     linear_cnt), one retry counter for timeouts and recoverable NACKs,
//     reset when the cumulative ACK advances (LR-TMR-4, LR-TMR-6); losses
//     inferred from SACKs beyond a reorder guard (LR-RTX-4, LR-SM-1);
//     retransmissions before new data, oldest first, never on the EV a NACK
//     or timeout named (REQ-TX-2, LR-RTX-2, EV-ST-13); a retransmission no
//     other EV can carry waits under a stall timer whose expiries charge
//     the retry counter, so the wait ends in ERROR at worst, and after
//     whose first expiry it may take the EV it avoided (LR-SM-3, AMB-44).
//   - Paths: a random active subset per plane, a pseudo-random rotation
//     reshuffled each pass, SKIP until the rotation ends, ASSUMED_BAD
//     replaced from the same plane's backups and probed once per base
//     timeout (EV-SET-*, EV-ST-*, EV-PRB-2, EV-SM-1).
//   - Acknowledgement: one SACK per packet by default, with optional
//     coalescing (RSP-SACK-5, RSP-SM-1); a transport ACK when cack passes an
//     ack_req PSN (RSP-ACK-1).
//   - NSCC in fixed point with the parameter meanings of CC-SM-1.
package statemachine
