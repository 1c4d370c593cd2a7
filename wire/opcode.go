package wire

// Opcode is the BTH opcode. MRC uses the IBTA manufacturer-specific block
// 0xC0–0xDF; the low five bits of the write and ACK opcodes equal the RC
// values (WIRE-OP-1, AMB-2).
type Opcode uint8

// MRC opcodes (WIRE-OP-1).
const (
	OpWriteFirst   Opcode = 0xC6
	OpWriteMiddle  Opcode = 0xC7
	OpWriteLast    Opcode = 0xC8
	OpWriteLastImm Opcode = 0xC9
	OpWriteOnly    Opcode = 0xCA
	OpWriteOnlyImm Opcode = 0xCB
	OpAcknowledge  Opcode = 0xD1
	OpEndpointReq  Opcode = 0xD8
	OpEndpointResp Opcode = 0xD9
	OpSACK         Opcode = 0xDC
	OpNACK         Opcode = 0xDD
	OpProbe        Opcode = 0xDE
)

// Stack names the headers that follow the BTH, as bits.
type Stack uint16

// Header bits of a Stack, and of Packet.Decoded.
const (
	HasMETH Stack = 1 << iota
	HasTSETH
	HasRETH
	HasImmDt
	HasAETH
	HasSETH // SETH and CC_STATE
	HasNETH
	HasPETH
	HasERTH
	HasEETH
	HasPayload
)

var opNames = [32]string{
	0x06: "RDMA_WRITE_FIRST", 0x07: "RDMA_WRITE_MIDDLE", 0x08: "RDMA_WRITE_LAST",
	0x09: "RDMA_WRITE_LAST_IMM", 0x0A: "RDMA_WRITE_ONLY", 0x0B: "RDMA_WRITE_ONLY_IMM",
	0x11: "ACKNOWLEDGE", 0x18: "ENDPOINT_REQUEST", 0x19: "ENDPOINT_RESPONSE",
	0x1C: "RELIABILITY_SACK", 0x1D: "RELIABILITY_NACK", 0x1E: "RELIABILITY_PROBE_REQ",
}

// Valid reports whether o is in the MRC opcode table (WIRE-BTH-2).
func (o Opcode) Valid() bool { return o&0xE0 == 0xC0 && opNames[o&0x1F] != "" }

// String returns the spec name, or "UNKNOWN(0x..)".
func (o Opcode) String() string {
	if o.Valid() {
		return opNames[o&0x1F]
	}
	const hex = "0123456789ABCDEF"
	return "UNKNOWN(0x" + string([]byte{hex[o>>4], hex[o&0xF]}) + ")"
}

// IsWrite reports whether o is one of the six RDMA WRITE opcodes.
func (o Opcode) IsWrite() bool { return o >= OpWriteFirst && o <= OpWriteOnlyImm }

// HasImm reports whether o carries ImmDt (WIRE-IMM-1).
func (o Opcode) HasImm() bool { return o == OpWriteLastImm || o == OpWriteOnlyImm }

// IsFirst reports whether o starts a message.
func (o Opcode) IsFirst() bool {
	return o == OpWriteFirst || o == OpWriteOnly || o == OpWriteOnlyImm
}

// IsLast reports whether o ends a message.
func (o Opcode) IsLast() bool {
	return o == OpWriteLast || o == OpWriteLastImm || o == OpWriteOnly || o == OpWriteOnlyImm
}

// Stack returns the headers that follow the BTH for o, not counting the
// optional TSETH, which the BTH TS flag announces (WIRE-OP-1, WIRE-BTH-6).
func (o Opcode) Stack() Stack {
	switch o {
	case OpWriteFirst, OpWriteMiddle, OpWriteLast, OpWriteOnly:
		return HasMETH | HasRETH | HasPayload
	case OpWriteLastImm, OpWriteOnlyImm:
		return HasMETH | HasRETH | HasImmDt | HasPayload
	case OpAcknowledge:
		return HasAETH
	case OpEndpointReq:
		return HasERTH
	case OpEndpointResp:
		return HasEETH
	case OpSACK:
		return HasSETH
	case OpNACK:
		return HasNETH
	case OpProbe:
		return HasPETH
	}
	return 0
}

// NACKReason is the NETH nack_reason code (WIRE-NETH-2).
type NACKReason uint8

// NACK reason codes; the values coincide with UET PDS codes.
const (
	NACKTrimmed        NACKReason = 0x01
	NACKTrimmedLastHop NACKReason = 0x02
	NACKNoBitmap       NACKReason = 0x06
	NACKNoPktBuffer    NACKReason = 0x07
	NACKNoResource     NACKReason = 0x0A
	NACKPSNOutOfWindow NACKReason = 0x0B
	NACKUnexpEvent     NACKReason = 0x19
)

// Valid reports whether r is a defined reason code.
func (r NACKReason) Valid() bool { return r.String() != "UNKNOWN" }

func (r NACKReason) String() string {
	switch r {
	case NACKTrimmed:
		return "TRIMMED"
	case NACKTrimmedLastHop:
		return "TRIMMED_LASTHOP"
	case NACKNoBitmap:
		return "NO_BITMAP"
	case NACKNoPktBuffer:
		return "NO_PKT_BUFFER"
	case NACKNoResource:
		return "NO_RESOURCE"
	case NACKPSNOutOfWindow:
		return "PSN_OOR_WINDOW"
	case NACKUnexpEvent:
		return "UNEXP_EVENT"
	}
	return "UNKNOWN"
}

// Multipath is the SETH m field: the responder's verdict on the reflected EV
// (WIRE-SETH-3).
type Multipath uint8

// Multipath verdicts.
const (
	MNone       Multipath = 0 // no verdict
	MSkipOnce   Multipath = 1 // the forward path was ECN-marked
	MAlwaysSkip Multipath = 2 // the responder judges the path persistently bad
)

func (m Multipath) String() string {
	switch m {
	case MNone:
		return "NONE"
	case MSkipOnce:
		return "SKIP_ONCE"
	case MAlwaysSkip:
		return "ALWAYS_SKIP"
	}
	return "RESERVED"
}

// EndpointOp is the ERTH/EETH op field (WIRE-ERTH-1).
type EndpointOp uint8

// Endpoint operations.
const (
	EPPortStatusUpdate EndpointOp = 0
	EPEVProbe          EndpointOp = 1
)

func (o EndpointOp) String() string {
	switch o {
	case EPPortStatusUpdate:
		return "PORT_STATUS_UPDATE"
	case EPEVProbe:
		return "EV_PROBE"
	}
	return "RESERVED"
}

// EndpointQPN is the reserved destination QPN of endpoint operations (WIRE-BTH-8).
const EndpointQPN = 0x2
