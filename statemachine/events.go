package statemachine

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// DSCPClass names the traffic class of an outgoing packet; the profile maps
// it to a DSCP value (spec.Profile.DSCP).
type DSCPClass uint8

// Traffic classes.
const (
	ClassTrimmable     DSCPClass = iota // first transmissions of data
	ClassNoTrim                         // data that must not be trimmed, probes
	ClassTrimmableRetx                  // retransmitted data
	ClassControl                        // SACK, NACK, transport ACK
	ClassEndpoint                       // endpoint operations: the caller's req_tc
)

func (c DSCPClass) String() string {
	switch c {
	case ClassTrimmable:
		return "TRIMMABLE"
	case ClassNoTrim:
		return "NO_TRIM"
	case ClassTrimmableRetx:
		return "TRIMMABLE_RETX"
	case ClassControl:
		return "CONTROL"
	case ClassEndpoint:
		return "ENDPOINT"
	}
	return fmt.Sprintf("DSCPClass(%d)", uint8(c))
}

// Outgoing is a packet to transmit. Pkt has every header filled except the
// fields wire.Codec.Append derives (lengths, checksums, ICRC). EV is already
// written into Pkt (UDP source port / flow label); Plane is the 0-based
// plane (NIC port − 1) the packet must leave on.
type Outgoing struct {
	Pkt   wire.Packet
	EV    uint32
	Plane uint8
	Class DSCPClass
}

// Placement is one packet's data written into (abstract) responder memory.
// Data aliases the received packet's payload; copy it before reusing the
// packet buffer.
type Placement struct {
	VA   uint64
	RKey uint32
	Data []byte
	PSN  uint32
	MSN  uint16
}

// Status is a completion status; the names follow ibv_wc_status.
type Status uint8

// Completion statuses.
const (
	StatusSuccess          Status = iota
	StatusFlushError              // flushed because the QP entered ERROR
	StatusRetryExceeded           // the shared retry budget ran out
	StatusRemoteOpError           // the peer answered UNEXP_EVENT
	StatusRemoteInvalidReq        // the peer answered AETH NAK Invalid Request
	StatusRemoteAccessErr         // the peer answered AETH NAK remote access error
)

func (s Status) String() string {
	switch s {
	case StatusSuccess:
		return "SUCCESS"
	case StatusFlushError:
		return "WR_FLUSH_ERR"
	case StatusRetryExceeded:
		return "RETRY_EXC_ERR"
	case StatusRemoteOpError:
		return "REM_OP_ERR"
	case StatusRemoteInvalidReq:
		return "REM_INV_REQ_ERR"
	case StatusRemoteAccessErr:
		return "REM_ACCESS_ERR"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Completion is a completion queue entry. Send completions carry the WRID
// of the posted work request; receive completions (Recv) carry the
// immediate data of a WRITE_WITH_IMM, delivered in send order.
type Completion struct {
	QPN     uint32
	WRID    uint64
	Status  Status
	Opcode  Opcode
	Recv    bool
	ByteLen uint32
	Imm     uint32
	MSN     uint16
	RQMSN   uint16
	// Solicited: a receive completion of a WriteImm sent with
	// IBV_SEND_SOLICITED (the se flag), which wakes a CQ armed for
	// solicited events only (CTL-CQ-2).
	Solicited bool
}

// EventKind says what an Event records.
type EventKind uint8

// Event kinds. State-change kinds are always reported; the per-packet kinds
// (marked "trace") only when Output.TracePackets is set.
const (
	EvNone           EventKind = iota
	EvQPState                  // From, To: QPState
	EvQPError                  // Reason: ErrorCause; Value: Status
	EvEVState                  // EV, Plane, From, To: EVState; Reason: EVCause
	EvEVReplaced               // EV left the active set; Value: the backup EV that took its place
	EvEVRestored               // EV rejoined the active set
	EvPlane                    // Plane; From, To: 1 up, 0 down
	EvTimeout                  // PSN, EV: an outstanding packet timed out
	EvRetry                    // Value: the retry counter after an increment
	EvCompleted                // Value: WRID; MSN; Reason: Status
	EvIMMDelivered             // MSN, Value: RQMSN; immediate data released
	EvCwnd                     // Value: new cwnd in bytes; Reason: CCCause
	EvIgnored                  // Reason: IgnoreReason; PSN, EV of the input
	EvProbeSent                // EV: reliability probe sent on an ASSUMED_BAD EV
	EvProbeResult              // EV; Reason: wire.Multipath of the answer
	EvEPResponse               // an endpoint request was answered; PSN: req_id; Reason: op; Value: RTT ns, with adj_svc_time 0 (EP-PRB-3)
	EvEPTimeout                // an endpoint request timed out; PSN: req_id; Reason: op
	EvRemotePortMask           // a peer's port-status update; Value: mask
	EvPacketSent               // trace: PSN, EV, Plane; Reason: opcode; Flags: FlagRetransmit
	EvPacketReceived           // trace: PSN, EV; Reason: opcode
	EvPlaced                   // trace: PSN, MSN; Value: bytes
	EvDuplicate                // trace: PSN; a duplicate was re-acknowledged
	EvSACKSent                 // trace: PSN (cumulative ACK), EV (reflected); Reason: m
	EvNACKSent                 // trace: PSN, EV (reflected); Reason: NACK reason
	EvACKSent                  // trace: PSN, MSN of the transport ACK
	EvSACKReceived             // trace: PSN (cumulative ACK), EV; Reason: m
	EvNACKReceived             // trace: PSN, EV; Reason: NACK reason
	EvLost                     // trace: PSN marked for retransmission; Reason: LossCause
	EvStallTimeout             // PSN, EV: the stall timer of a queued PSN no EV may carry expired (LR-SM-3); EV: the EV it avoided, 0 if it avoided none (an earlier expiry freed it, AMB-44)
	EvCommEst                  // PSN: the QP, in RTR, accepted its first request packet (IBV_EVENT_COMM_EST, CTL-AEV-4)
	EvSQDrained                // the QP, in SQD, drained its send queue (IBV_EVENT_SQ_DRAINED, CTL-AEV-6)
)

var evKindNames = [...]string{
	"None", "QPState", "QPError", "EVState", "EVReplaced", "EVRestored", "Plane", "Timeout", "Retry",
	"Completed", "IMMDelivered", "Cwnd", "Ignored", "ProbeSent", "ProbeResult", "EPResponse", "EPTimeout",
	"RemotePortMask", "PacketSent", "PacketReceived", "Placed", "Duplicate", "SACKSent", "NACKSent",
	"ACKSent", "SACKReceived", "NACKReceived", "Lost", "StallTimeout", "CommEst", "SQDrained",
}

func (k EventKind) String() string {
	if int(k) < len(evKindNames) {
		return evKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event flags.
const (
	FlagRetransmit   uint8 = 1 << iota // PacketSent: the BTH RTX flag is set
	FlagProbe                          // SACKSent/SACKReceived: a probe response (PR)
	FlagNoCompletion                   // QPError: no work request completed with the error's status (CTL-AEV-5)
)

// Event is one abstract step of a QP or endpoint. It is flat and
// comparable so that traces can be diffed and serialised (NDJSON for TLA+
// trace validation) without reflection.
type Event struct {
	Kind   EventKind
	Time   Time
	QPN    uint32
	PSN    uint32
	EV     uint32
	MSN    uint16
	Plane  uint8
	From   uint8
	To     uint8
	Reason uint8
	Flags  uint8
	Value  uint64
}

func (e Event) String() string {
	return fmt.Sprintf("t=%d qp=%d %s psn=%d ev=%#x msn=%d plane=%d from=%d to=%d reason=%d flags=%d value=%d",
		e.Time, e.QPN, e.Kind, e.PSN, e.EV, e.MSN, e.Plane, e.From, e.To, e.Reason, e.Flags, e.Value)
}

// EVCause says why an EV changed state: the vocabulary's evstate.Cause.
type EVCause = evstate.Cause

// EV state-change causes.
const (
	CauseNone         = evstate.CauseNone
	CauseSkipOnce     = evstate.CauseSkipOnce     // SACK m = SKIP_ONCE
	CauseTrimmed      = evstate.CauseTrimmed      // NACK TRIMMED
	CauseAlwaysSkip   = evstate.CauseAlwaysSkip   // SACK m = ALWAYS_SKIP
	CauseTimeout      = evstate.CauseTimeout      // an untrimmed packet on the EV timed out
	CauseRotation     = evstate.CauseRotation     // end of the rotation: SKIP → GOOD
	CauseProbeOK      = evstate.CauseProbeOK      // enough probes answered with m = NONE
	CauseProbeSkip    = evstate.CauseProbeSkip    // a probe answered with m = SKIP_ONCE
	CauseController   = evstate.CauseController   // control-plane MODIFY_EV_STATE
	CauseInferredLoss = evstate.CauseInferredLoss // a packet on the EV was inferred lost from SACKs (EV-SM-5)
)

// IgnoreReason says why an input was dropped without effect.
type IgnoreReason uint8

// Reasons for EvIgnored.
const (
	IgnoreNone          IgnoreReason = iota
	IgnoreQPState                    // the QP is not in a state that accepts the input
	IgnoreWrongQP                    // the destination QPN is not this QP
	IgnoreStaleAck                   // a SACK/ACK/NACK for PSNs no longer outstanding
	IgnoreInvalidAck                 // a cumulative ACK beyond the next PSN to send
	IgnoreUnknownEV                  // feedback names an EV not in the QP's table
	IgnoreUnknownReason              // a NACK reason this implementation does not know
	IgnoreMalformed                  // a packet missing the headers its opcode needs
	IgnoreUnexpectedOp               // an opcode this side of the QP does not handle
	IgnoreUnknownProbe               // a probe answer or endpoint response for no outstanding request
	IgnoreWIMMConflict               // a second WriteIMM with an RQMSN already held
	IgnoreTrimmed                    // a trimmed packet this responder cannot NACK
	IgnoreBadLength                  // a write payload of a size its opcode forbids
)

// LossCause says why a PSN was queued for retransmission.
type LossCause uint8

// Loss causes.
const (
	LossNone    LossCause = iota
	LossNACK              // a recoverable NACK
	LossTimeout           // the retransmission timeout
	LossReorder           // the SACK bitmap shows later PSNs received (reorder guard)
	LossGoBackN           // FaultGoBackN only
)

// CCCause says why the congestion window changed.
type CCCause uint8

// Congestion-window change causes.
const (
	CCNone       CCCause = iota
	CCIncrease           // accumulated fair/proportional increase applied
	CCDecrease           // multiplicative decrease (ECN and delay ≥ target)
	CCQuickAdapt         // quick adapt to the achieved bytes
	CCNACK               // a trim NACK
	CCPenalty            // responder rcv_cwnd_pen
	CCRestore            // responder restore flag
)

// Output collects everything a step produced. The caller owns it: reuse it
// across steps (call Reset) so that steady-state steps do not allocate.
type Output struct {
	Packets     []Outgoing
	Placements  []Placement
	Completions []Completion
	Events      []Event
	// TracePackets asks for the per-packet trace events as well.
	TracePackets bool
}

// Reset empties every list, keeping capacity.
func (o *Output) Reset() {
	o.Packets = o.Packets[:0]
	o.Placements = o.Placements[:0]
	o.Completions = o.Completions[:0]
	o.Events = o.Events[:0]
}

// newPacket appends a zeroed Outgoing and returns it. Growing in place
// avoids copying a 600-byte wire.Packet through append.
func (o *Output) newPacket() *Outgoing {
	n := len(o.Packets)
	if n < cap(o.Packets) {
		o.Packets = o.Packets[:n+1]
		o.Packets[n] = Outgoing{}
	} else {
		o.Packets = append(o.Packets, Outgoing{})
	}
	return &o.Packets[n]
}

func (o *Output) event(e Event) { o.Events = append(o.Events, e) }
