package conformance

// caseID is a passive case of the catalog, as the checkers record it: a
// typed index, so that an observation costs no string hashing. init
// checks the names against the catalog.
type caseID uint8

// The passive cases.
const (
	cWireENC caseID = iota
	cWireUDP
	cWireICRC
	cWireGEN
	cWireBTH1
	cWireBTH2
	cWireBTH3
	cWireBTH4
	cWireFlags
	cWirePKey
	cWireOP
	cWirePAY
	cWireMSG
	cWireMETH
	cWIMMOrd
	cWireTSETH
	cWireAETH
	cWireSETH
	cWireDCID
	cWireNETH
	cWirePETH
	cWireEP
	cDSCP
	cECN
	cDSCPSRv6
	cDSCPTrim
	cEVEnc
	cEVReflect
	cPSN
	cRtxSame
	cRtxAcked
	cRtxWhy
	cRtxFlag
	cNackEV
	cNackHold
	cFatal
	cNackRecov
	cRetryLim
	cMPR
	cWIMMReq
	cTSETHAll
	cEVBad
	cEVTimeout
	cProbePace
	cClaims
	cCurrent
	cTrigger
	cMVerdict
	cCounters
	cImmediate
	cTrimNACK
	cNoTrimNak
	cOOR
	cACK
	cProbeAns
	cWIMMRsp
	cEPAnswer
	cRtxOrder
	cRtxFirst
	cPSU
	cEcho
	cRevPlane
	numCases
)

// caseNames are the catalog IDs of the passive cases.
var caseNames = [numCases]string{
	cWireENC:   "MRC-WIRE-ENC-001",
	cWireUDP:   "MRC-WIRE-UDP-001",
	cWireICRC:  "MRC-WIRE-ICRC-001",
	cWireGEN:   "MRC-WIRE-GEN-001",
	cWireBTH1:  "MRC-WIRE-BTH-001",
	cWireBTH2:  "MRC-WIRE-BTH-002",
	cWireBTH3:  "MRC-WIRE-BTH-003",
	cWireBTH4:  "MRC-WIRE-BTH-004",
	cWireFlags: "MRC-WIRE-BTH-005",
	cWirePKey:  "MRC-WIRE-BTH-006",
	cWireOP:    "MRC-WIRE-OP-001",
	cWirePAY:   "MRC-WIRE-PAY-001",
	cWireMSG:   "MRC-WIRE-MSG-001",
	cWireMETH:  "MRC-WIRE-METH-001",
	cWIMMOrd:   "MRC-WIMM-ORD-001",
	cWireTSETH: "MRC-WIRE-TSETH-001",
	cWireAETH:  "MRC-WIRE-AETH-001",
	cWireSETH:  "MRC-WIRE-SETH-001",
	cWireDCID:  "MRC-WIRE-SETH-002",
	cWireNETH:  "MRC-WIRE-NETH-001",
	cWirePETH:  "MRC-WIRE-PETH-001",
	cWireEP:    "MRC-WIRE-EP-001",
	cDSCP:      "MRC-WIRE-DSCP-001",
	cECN:       "MRC-WIRE-DSCP-002",
	cDSCPSRv6:  "MRC-WIRE-DSCP-003",
	cDSCPTrim:  "MRC-WIRE-DSCP-004",
	cEVEnc:     "MRC-WIRE-EV-001",
	cEVReflect: "MRC-WIRE-EV-002",
	cPSN:       "MRC-REQ-PSN-001",
	cRtxSame:   "MRC-REQ-PSN-002",
	cRtxAcked:  "MRC-LR-RTX-001",
	cRtxWhy:    "MRC-LR-RTX-002",
	cRtxFlag:   "MRC-LR-RTX-003",
	cNackEV:    "MRC-LR-NACK-001",
	cNackHold:  "MRC-LR-NACK-002",
	cFatal:     "MRC-LR-NACK-003",
	cNackRecov: "MRC-LR-NACK-004",
	cRetryLim:  "MRC-LR-TMR-001",
	cMPR:       "MRC-MPR-WIN-001",
	cWIMMReq:   "MRC-WIMM-REQ-001",
	cTSETHAll:  "MRC-REQ-HDR-001",
	cEVBad:     "MRC-EV-BAD-001",
	cEVTimeout: "MRC-EV-BAD-002",
	cProbePace: "MRC-EV-PRB-001",
	cClaims:    "MRC-RSP-SACK-001",
	cCurrent:   "MRC-RSP-SACK-002",
	cTrigger:   "MRC-RSP-SACK-003",
	cMVerdict:  "MRC-RSP-SACK-004",
	cCounters:  "MRC-RSP-SACK-005",
	cImmediate: "MRC-RSP-SACK-006",
	cTrimNACK:  "MRC-RSP-NACK-001",
	cNoTrimNak: "MRC-RSP-NACK-002",
	cOOR:       "MRC-RSP-NACK-003",
	cACK:       "MRC-RSP-ACK-001",
	cProbeAns:  "MRC-RSP-PRB-001",
	cWIMMRsp:   "MRC-WIMM-RSP-001",
	cEPAnswer:  "MRC-EP-GEN-001",
	cRtxOrder:  "MRC-LR-RTX-004",
	cRtxFirst:  "MRC-REQ-TX-001",
	cPSU:       "MRC-EP-PSU-001",
	cEcho:      "MRC-WIRE-EV-003",
	cRevPlane:  "MRC-EV-REV-001",
}
