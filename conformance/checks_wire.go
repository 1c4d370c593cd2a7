package conformance

import (
	"fmt"
	"slices"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// The cases of this file's checks (their catalog entries are in cases.go).
var (
	cWireENC = passiveCase(Case{
		ID: "MRC-WIRE-ENC-001", Title: "Encapsulation and lengths",
		Assertion:    "Every MRC frame is Ethernet, IPv4 (IHL 5, DF set, unfragmented) or IPv6 (or SRv6 IPv6-in-IPv6 with an optional SRH), UDP to an MRC port, the BTH and the opcode's headers, with IP and UDP lengths that agree with the frame.",
		Requirements: []RequirementID{"WIRE-ENC-1", "WIRE-ENC-2", "WIRE-ENC-5", "WIRE-LEN-1", "WIRE-GEN-3", "WIRE-UDP-1"},
		Level:        spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Report every decode error and every WIRE-ENC/WIRE-LEN finding of a frame on an MRC UDP port."},
		Pass:  "at least one MRC frame and no finding", Fail: "a frame sent by a judged node breaks the encapsulation or length rules",
		Inconclusive: "no MRC frame in the capture",
	})
	cWireUDP = passiveCase(Case{
		ID: "MRC-WIRE-UDP-001", Title: "UDP checksum is zero",
		Assertion:    "Encoders send a UDP checksum of 0.",
		Requirements: []RequirementID{"WIRE-UDP-3"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check the UDP checksum of every MRC frame."},
		Pass:  "every checksum is 0", Fail: "a non-zero UDP checksum",
	})
	cWireICRC = passiveCase(Case{
		ID: "MRC-WIRE-ICRC-001", Title: "ICRC is correct",
		Assertion:    "Every untrimmed MRC frame ends in the RoCEv2 invariant CRC computed over the masked pseudo-packet (inner headers only in SRv6 mode; UDP source port covered unless the profile masks it).",
		Requirements: []RequirementID{"WIRE-ICRC-1", "WIRE-ICRC-2", "WIRE-ICRC-3", "WIRE-ICRC-4"},
		Level:        spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Recompute the ICRC of every untrimmed MRC frame and compare."},
		Pass:  "every ICRC matches", Fail: "an ICRC differs from the computed one on a frame captured nearest its sender",
	})
	cWireGEN = passiveCase(Case{
		ID: "MRC-WIRE-GEN-001", Title: "Reserved bits are zero",
		Assertion:    "Encoders set every reserved bit to 0 (BTH byte 8, TSETH, SETH, CC_STATE, NETH, PETH, ERTH, EETH), and the variant BTH byte 4 to 0 as sent.",
		Requirements: []RequirementID{"WIRE-GEN-2", "WIRE-BTH-7", "WIRE-BTH-13"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Report every non-zero reserved field the strict check finds.", "At capture points the PICS places at the sender, report a non-zero reserved_variant (switches may change it in transit)."},
		Pass:  "no reserved bit set", Fail: "a reserved field is non-zero",
	})
	cWireBTH1 = passiveCase(Case{
		ID: "MRC-WIRE-BTH-001", Title: "BTH version, opcode and header stack",
		Assertion:    "The BTH is 12 bytes with tver 0, its opcode is in the MRC table, and exactly the opcode's headers follow.",
		Requirements: []RequirementID{"WIRE-BTH-1", "WIRE-BTH-2", "WIRE-BTH-3", "WIRE-OP-1", "WIRE-METH-1", "WIRE-TSETH-1", "WIRE-RETH-1", "WIRE-IMM-1"},
		Level:        spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Report frames whose tver is not 0, whose opcode is not an MRC opcode while the frame belongs to an MRC connection, or whose header stack is truncated."},
		Pass:  "every frame has a valid BTH and stack", Fail: "a bad tver, an unknown opcode on an MRC connection, or a truncated header stack",
	})
	cWireBTH2 = passiveCase(Case{
		ID: "MRC-WIRE-BTH-002", Title: "QP 0x2 is for endpoint operations only",
		Assertion:    "Endpoint opcodes go to QPN 0x2 with PSN bits 23:16 zero, and no other opcode goes to QPN 0x2.",
		Requirements: []RequirementID{"WIRE-BTH-8", "WIRE-EP-1"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check dest_qp against the opcode."},
		Pass:  "no finding", Fail: "an endpoint opcode elsewhere, another opcode to 0x2, or a request id wider than 16 bits",
	})
	cWireBTH3 = passiveCase(Case{
		ID: "MRC-WIRE-BTH-003", Title: "Pad count and pad bytes",
		Assertion:    "pad_cnt makes the payload a multiple of 4 with zero bytes, and is 0 in packets without payload.",
		Requirements: []RequirementID{"WIRE-BTH-9"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check pad_cnt against the payload length and the pad bytes' value."},
		Pass:  "no finding", Fail: "a wrong pad count or a non-zero pad byte",
	})
	cWireBTH4 = passiveCase(Case{
		ID: "MRC-WIRE-BTH-004", Title: "TS flag only on writes",
		Assertion:    "The ts flag is set if and only if a TSETH follows, and only write packets carry it.",
		Requirements: []RequirementID{"WIRE-BTH-6"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Report every non-write packet with ts = 1."},
		Pass:  "no finding", Fail: "ts = 1 on a non-write packet",
	})
	cWireFlags = passiveCase(Case{
		ID: "MRC-WIRE-BTH-005", Title: "BTH flags: ack_req, se, m, rtx on control packets",
		Assertion:    "ack_req is set in the last packet of every message and in no other packet; se only in the last packet of a WriteIMM; m is 0; control packets, probes and endpoint operations carry rtx = 0.",
		Requirements: []RequirementID{"WIRE-BTH-14", "REQ-HDR-3", "WIRE-BTH-10", "WIRE-BTH-11", "WIRE-BTH-5"},
		Level:        spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check ack_req against the opcode (0xC8-0xCB), se against the *_IMM last opcodes, m = 0, and rtx = 0 on every non-write packet."},
		Pass:  "no finding", Fail: "a flag set where it must not be, or ack_req missing on a last packet",
	})
	cWirePKey = passiveCase(Case{
		ID: "MRC-WIRE-BTH-006", Title: "P_Key is constant per connection",
		Assertion:    "Every packet of a connection, data and control, carries the same P_Key; endpoint operations carry 0xFFFF.",
		Requirements: []RequirementID{"WIRE-BTH-12"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, stepReconstr, "Compare each packet's P_Key with the first one seen on its connection."},
		Pass:  "no finding", Fail: "a P_Key change within a connection or an endpoint operation with P_Key other than 0xFFFF",
	})
	cWireOP = passiveCase(Case{
		ID: "MRC-WIRE-OP-001", Title: "Control packets carry no payload",
		Assertion:    "ACK, SACK, NACK, probe and endpoint packets end with their last header, followed only by the ICRC.",
		Requirements: []RequirementID{"WIRE-OP-2"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Report control packets with bytes between the last header and the ICRC."},
		Pass:  "no finding", Fail: "a control packet with trailing bytes",
	})
	cWirePAY = passiveCase(Case{
		ID: "MRC-WIRE-PAY-001", Title: "Payload sizes follow the path MTU",
		Assertion:    "FIRST and MIDDLE packets carry exactly one path MTU, LAST 1 to path MTU bytes, ONLY 0 to path MTU bytes.",
		Requirements: []RequirementID{"WIRE-PAY-1"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Compare the payload length of every untrimmed write with the PICS path_mtu; without it, require every FIRST and MIDDLE of a connection to have the same non-zero size and no payload to exceed it or 4096."},
		Pass:  "every write's payload fits", Fail: "a write with a payload size its opcode does not allow",
		Inconclusive: "no untrimmed write",
	})
	cWireMSG = passiveCase(Case{
		ID: "MRC-WIRE-MSG-001", Title: "Message segmentation and RETH",
		Assertion:    "A message is FIRST, MIDDLE…, LAST (or ONLY) on consecutive PSNs; every packet carries a RETH whose va advances by the payload of the previous packets, with r_key and dma_length unchanged, and the payloads sum to dma_length.",
		Requirements: []RequirementID{"WIRE-RETH-2", "WIRE-RETH-3", "WIRE-PAY-2", "REQ-SEG-1", "REQ-SEG-2", "REQ-SEG-3"},
		Level:        spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Walk the first transmission of every PSN in PSN order, assembling messages; check opcode order, RETH fields and lengths."},
		Pass:  "every complete message is well formed", Fail: "an opcode out of order, a RETH field that changes, a va that does not advance, or lengths that do not add up",
		Inconclusive: "no complete message seen from its first packet",
	})
	cWireMETH = passiveCase(Case{
		ID: "MRC-WIRE-METH-001", Title: "MSN discipline",
		Assertion:    "msn is the same in every packet of a message and increases by one from one message to the next; with the capture from QP start, the first message has MSN 0 and RQMSN 0.",
		Requirements: []RequirementID{"WIRE-METH-2", "REQ-PSN-3"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Walk messages in PSN order and compare consecutive MSNs."},
		Pass:  "MSNs are consistent", Fail: "an MSN that changes within a message or skips between messages",
		Inconclusive: "fewer than two messages seen",
	})
	cWIMMOrd = passiveCase(Case{
		ID: "MRC-WIMM-ORD-001", Title: "WriteIMM order is kept (RQMSN)",
		Assertion:    "rqmsn is the same in every packet of a message and grows by one after each WriteIMM in post (PSN) order, so the responder completes WriteIMMs in send order.",
		Requirements: []RequirementID{"WIRE-METH-3", "WIMM-REQ-3", "REQ-OP-3", "WIMM-RSP-2"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReq,
		Steps: []string{stepDecode, stepReconstr, "Walk messages in PSN order; expected rqmsn of the next message = rqmsn + 1 after a WriteIMM, unchanged after a plain write."},
		Pass:  "every message's RQMSN is as expected", Fail: "a WriteIMM whose RQMSN would make the responder complete it out of send order",
		Inconclusive: "fewer than two messages, or no WriteIMM",
	})
	cWireTSETH = passiveCase(Case{
		ID: "MRC-WIRE-TSETH-001", Title: "TSETH format",
		Assertion:    "A TSETH carries the requester clock in profile units with tsr = 0 and ftype = 1.",
		Requirements: []RequirementID{"WIRE-TSETH-1", "WIRE-TSETH-2"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Features: []string{"tseth"},
		Steps:    []string{stepDecode, stepAttr, "Check tsr and ftype of every TSETH."},
		Pass:     "every TSETH is well formed", Fail: "tsr = 1 or ftype ≠ 1", Inconclusive: "no TSETH in the capture",
	})
	cWireAETH = passiveCase(Case{
		ID: "MRC-WIRE-AETH-001", Title: "AETH syndrome",
		Assertion:    "ACKs carry syndrome 0x1F; responders send no RNR NAK and no PSN-sequence-error NAK; the syndrome's reserved bit is 0.",
		Requirements: []RequirementID{"WIRE-AETH-1", "WIRE-AETH-2", "WIRE-AETH-3"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check the syndrome of every ACKNOWLEDGE packet."},
		Pass:  "every AETH is allowed", Fail: "a credit other than 0x1F, an RNR NAK, a NAK code 0, or the reserved bit set",
		Inconclusive: "no ACKNOWLEDGE packet",
	})
	cWireSETH = passiveCase(Case{
		ID: "MRC-WIRE-SETH-001", Title: "SETH fields",
		Assertion:    "SACKs carry m ≠ 3, type/next_header/cc_type/cc_flags 0, BTH psn = cack_psn with ack_req/rtx/ts clear, and mpr 0 unless dynamic MPR is in effect (then 1 ≤ mpr ≤ mpr_dest).",
		Requirements: []RequirementID{"WIRE-SETH-1", "WIRE-SETH-2", "WIRE-SETH-3", "WIRE-SETH-4", "WIRE-SETH-8", "WIRE-SETH-10", "MPR-DYN-2"},
		Level:        spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check every RELIABILITY_SACK's SETH and BTH fields."},
		Pass:  "every SACK is well formed", Fail: "a field outside its allowed values", Inconclusive: "no SACK",
	})
	cWireDCID = passiveCase(Case{
		ID: "MRC-WIRE-SETH-002", Title: "spdcid and dpdcid name the QPs",
		Assertion:    "In SETH, NETH and PETH, dpdcid is bits 15:0 of the BTH dest_qp and spdcid bits 15:0 of the sender's QP number (learned from the reverse direction); SACKs, NACKs and ACKs go to the requester's QP.",
		Requirements: []RequirementID{"WIRE-SETH-9", "RSP-SACK-6", "RSP-ACK-1"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, stepReconstr, "Compare dpdcid with dest_qp, and spdcid with the QPN the peer addresses the sender by; compare the dest_qp of SACKs, NACKs and ACKs with the requester's QP as the PICS's qp_pairs, its probes or the responder's other feedback name it."},
		Pass:  "every identifier matches", Fail: "a mismatch", Inconclusive: "no SACK, NACK, ACK or probe",
	})
	cWireNETH = passiveCase(Case{
		ID: "MRC-WIRE-NETH-001", Title: "NETH fields",
		Assertion:    "NACKs carry a reason from the table, BTH psn = nack_psn, and type/next_header/cc_type/cc_flags 0.",
		Requirements: []RequirementID{"WIRE-NETH-1", "WIRE-NETH-2", "WIRE-NETH-4", "WIRE-SETH-8"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check every RELIABILITY_NACK."},
		Pass:  "every NACK is well formed", Fail: "an unknown reason, a BTH psn ≠ nack_psn, or a non-zero type field", Inconclusive: "no NACK",
	})
	cWirePETH = passiveCase(Case{
		ID: "MRC-WIRE-PETH-001", Title: "Probe header",
		Assertion:    "Probes carry BTH psn 0, tsr 0, ftype 1 and zero type fields.",
		Requirements: []RequirementID{"WIRE-PETH-1", "WIRE-PETH-2", "WIRE-SETH-8", "EV-PRB-3"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check every RELIABILITY_PROBE_REQ."},
		Pass:  "every probe is well formed", Fail: "a probe that consumes a PSN or has a bad timestamp format", Inconclusive: "no probe",
	})
	cDSCP = passiveCase(Case{
		ID: "MRC-WIRE-DSCP-001", Title: "Traffic classes",
		Assertion:    "SACK, NACK, ACK and endpoint responses use DSCP_CONTROL; first transmissions DSCP_TRIMMABLE; retransmissions the retransmit class; probes DSCP_NO_TRIM; without trim-NACK support every write uses DSCP_NO_TRIM.",
		Requirements: []RequirementID{"WIRE-DSCP-1", "WIRE-DSCP-5", "RSP-SACK-6", "RSP-NACK-6", "EP-GEN-4"},
		Level:        spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, stepReconstr, "Classify every untrimmed packet (control, first transmission, retransmission, probe) and compare its DSCP with the profile's."},
		Pass:  "every DSCP matches its class", Fail: "a packet with another class's DSCP",
	})
	cECN = passiveCase(Case{
		ID: "MRC-WIRE-DSCP-002", Title: "ECN marking",
		Assertion:    "Writes and probes are sent ECT(0) (CE after marking); control packets are Not-ECT.",
		Requirements: []RequirementID{"WIRE-DSCP-3"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check the ECN field of every packet."},
		Pass:  "no finding", Fail: "a write or probe that is not ECN-capable, or an ECN-capable control packet",
	})
	cDSCPSRv6 = passiveCase(Case{
		ID: "MRC-WIRE-DSCP-003", Title: "SRv6 outer and inner traffic class agree",
		Assertion:    "In SRv6 mode the outer and inner IPv6 headers carry the same DSCP and ECN when sent.",
		Requirements: []RequirementID{"WIRE-DSCP-6"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Features: []string{"srv6"},
		Steps:    []string{stepDecode, stepAttr, "Compare the traffic class of the outer and inner IPv6 headers of every SRv6 frame."},
		Pass:     "they agree", Fail: "they differ on a frame captured nearest its sender", Inconclusive: "no SRv6 frame",
	})
	cDSCPTrim = passiveCase(Case{
		ID: "MRC-WIRE-DSCP-004", Title: "End points never send trimmed code points",
		Assertion:    "Only switches set DSCP_TRIMMED and DSCP_TRIMMED_LASTHOP, and only on write packets.",
		Requirements: []RequirementID{"WIRE-DSCP-4", "WIRE-TRIM-1", "WIRE-DSCP-2"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny + ", the PICS declaring which node each capture point is at",
		Steps: []string{stepDecode, stepAttr, "At capture points the PICS places at a node, report frames that node sent with a trimmed DSCP; anywhere, report trimmed non-write packets."},
		Pass:  "no finding", Fail: "a trimmed DSCP on a frame as its sender sent it, or on a non-write packet",
	})
	cEVEnc = passiveCase(Case{
		ID: "MRC-WIRE-EV-001", Title: "EV encoding in the flow label",
		Assertion:    "In STEV mode flow-label bits 19:16 are 0; in UDP mode the flow label is 0.",
		Requirements: []RequirementID{"WIRE-EV-1", "WIRE-EV-6", "WIRE-EV-2"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoAny,
		Steps: []string{stepDecode, stepAttr, "Check the inner IPv6 flow label of every IPv6 frame against the PICS EV mode."},
		Pass:  "no finding", Fail: "flow-label bits that the EV mode does not allow", Inconclusive: "no IPv6 frame",
	})
)

// The requirements this file's checks cite, each made for its case
// (caseID.req) and declared by its check (check.reqs).
var (
	rWireICRC_WIRE_ICRC_1   = cWireICRC.req("WIRE-ICRC-1")
	rWireGEN_WIRE_BTH_13    = cWireGEN.req("WIRE-BTH-13")
	rWireFlags_WIRE_BTH_14  = cWireFlags.req("WIRE-BTH-14")
	rWireFlags_WIRE_BTH_10  = cWireFlags.req("WIRE-BTH-10")
	rWireFlags_WIRE_BTH_11  = cWireFlags.req("WIRE-BTH-11")
	rECN_WIRE_DSCP_3        = cECN.req("WIRE-DSCP-3")
	rDSCPTrim_WIRE_DSCP_4   = cDSCPTrim.req("WIRE-DSCP-4")
	rDSCPSRv6_WIRE_DSCP_6   = cDSCPSRv6.req("WIRE-DSCP-6")
	rEVEnc_WIRE_EV_2        = cEVEnc.req("WIRE-EV-2")
	rEVEnc_WIRE_EV_6        = cEVEnc.req("WIRE-EV-6")
	rWireTSETH_WIRE_TSETH_2 = cWireTSETH.req("WIRE-TSETH-2")
	rWireAETH_WIRE_AETH_1   = cWireAETH.req("WIRE-AETH-1")
	rWireAETH_WIRE_AETH_3   = cWireAETH.req("WIRE-AETH-3")
	rWireSETH_WIRE_SETH_8   = cWireSETH.req("WIRE-SETH-8")
	rWireSETH_MPR_DYN_2     = cWireSETH.req("MPR-DYN-2")
	rWireSETH_WIRE_SETH_4   = cWireSETH.req("WIRE-SETH-4")
	rWireNETH_WIRE_SETH_8   = cWireNETH.req("WIRE-SETH-8")
	rWirePETH_WIRE_SETH_8   = cWirePETH.req("WIRE-SETH-8")
	rWirePETH_WIRE_PETH_1   = cWirePETH.req("WIRE-PETH-1")
	rWirePAY_WIRE_PAY_1     = cWirePAY.req("WIRE-PAY-1")
	rDSCP_WIRE_DSCP_1       = cDSCP.req("WIRE-DSCP-1")
	rDSCP_WIRE_DSCP_5       = cDSCP.req("WIRE-DSCP-5")
	rDSCP_EP_GEN_4          = cDSCP.req("EP-GEN-4")
	rWireDCID_WIRE_SETH_9   = cWireDCID.req("WIRE-SETH-9")
	rWireDCID_RSP_SACK_6    = cWireDCID.req("RSP-SACK-6")
	rWireDCID_RSP_ACK_1     = cWireDCID.req("RSP-ACK-1")
	rWirePKey_WIRE_BTH_12   = cWirePKey.req("WIRE-BTH-12")
	rWireMSG_REQ_SEG_2      = cWireMSG.req("REQ-SEG-2")
	rWireMSG_WIRE_RETH_2    = cWireMSG.req("WIRE-RETH-2")
	rWireMSG_WIRE_PAY_2     = cWireMSG.req("WIRE-PAY-2")
	rWireMETH_WIRE_METH_2   = cWireMETH.req("WIRE-METH-2")
	rWireMETH_REQ_PSN_3     = cWireMETH.req("REQ-PSN-3")
	rWIMMOrd_WIRE_METH_3    = cWIMMOrd.req("WIRE-METH-3")
)

// frameCtx is what the frame hook of a check sees: a decoded frame with a
// good ICRC (or trimmed), judged as its sender sent it.
type frameCtx struct {
	pt       *point
	src      string
	r        *pcap.Record
	p        *wire.Packet
	op       wire.Opcode
	control  bool // SACK, NACK, ACKNOWLEDGE or ENDPOINT_RESPONSE
	atSender bool // the PICS places the capture point at the frame's sender
}

// bad records a failure of requirement req, under its case, by the current
// frame, decided from the frame alone (onFrame); text gives the finding's
// expected and observed text, and is called only when the finding is kept
// (failWhy).
func (e *engine) bad(req caseReq, x *frameCtx, text func() (exp, obs string)) {
	e.failedCases = append(e.failedCases, req.cs())
	e.failWhy(req, x.pt, x.src, onFrame, func(f *Finding) {
		f.PSN, f.EV = u32p(x.p.BTH.PSN), u32p(x.r.EV)
		f.Expected, f.Observed = text()
	})
}

// icrcBad: a frame whose ICRC is bad is one WIRE-ICRC-1 finding against
// its sender.
func icrcBad(e *engine, x *badCtx) {
	p := &x.r.Packet
	e.failWhy(rWireICRC_WIRE_ICRC_1, x.pt, x.src, onFrame, func(f *Finding) {
		f.PSN, f.EV, f.Expected, f.Observed = u32p(p.BTH.PSN), u32p(x.r.EV), "the ICRC of the frame's contents", "a bad ICRC"
		for i := range x.r.Violations {
			if v := &x.r.Violations[i]; v.Header == "ICRC" {
				f.Observed = violationText(v)
				break
			}
		}
	})
}

// dcidState is MRC-WIRE-SETH-002's state on a connection: the
// requester's QP as its first passing probe names it (bits 15:0), and the
// feedback held until its dest_qp can be judged (at most two dest_qp
// groups of pendSample frames' evidence each).
type dcidState struct {
	self      uint16
	selfFrame int        // 0: none seen
	pend      *qpPending // nil until feedback is held
	// declared is the requester's QP as qp_pairs declares it
	// (declaredOK), looked up once the connection's key is whole
	// (declaredSet): the PICS and a whole key stay as they are while it is
	// judged, while a partial key is completed by the connection's first
	// write (dataFlow).
	declared                uint32
	declaredOK, declaredSet bool
}

// declaredReqQP is engine.declaredReqQP of st's connection fl.
func (st *dcidState) declaredReqQP(e *engine, fl *flow) (uint32, bool) {
	if !st.declaredSet {
		d, ok := e.declaredReqQP(fl)
		if fl.key.partial {
			return d, ok
		}
		st.declared, st.declaredOK, st.declaredSet = d, ok, true
	}
	return st.declared, st.declaredOK
}

// entries: pend is bounded where qpPending is declared.
func (*dcidState) entries() int { return 0 }

var dcidOf = newConnState(func() *dcidState { return &dcidState{} })

// pendSample is how many held feedback frames of one dest_qp keep their
// evidence: as many as a case's findings, so that a held frame's finding
// is kept as one judged at once would be.
const pendSample = MaxFindings

// qpPending holds feedback frames not yet judged, grouped by their
// dest_qp: two numbers at most, and the evidence of the first pendSample
// frames of each; feedback to a third number is not held (it stays
// passed).
type qpPending struct {
	groups [2]pendGroup
}

type pendGroup struct {
	dest   uint32
	n      int // frames held, with or without their evidence
	passed int // of the frames beyond the sample, those counted as a pass
	sample []pendFrame
}

type pendFrame struct {
	frame  int
	ns     int64
	plane  int
	op     wire.Opcode // SACK, NACK or ACKNOWLEDGE
	passed bool        // counted as a pass when it arrived (not failed otherwise)
}

// destVerdict is what the judge can say of a feedback frame's dest_qp.
type destVerdict uint8

const (
	destUndecided destVerdict = iota
	destRight
	destWrong
)

// selfTrusted reports whether the requester's own naming decides: it
// named a QP, and not the responder's number while the responder
// addresses it by another.
func selfTrusted(fl *flow, st *dcidState) bool {
	return st.selfFrame != 0 && (st.self != uint16(fl.key.qpn) || fl.qp.namedFrame == 0)
}

// judgeDest judges a feedback dest_qp by what is known now. st is the
// check's state on fl.
func (e *engine) judgeDest(fl *flow, st *dcidState, dest uint32) destVerdict {
	if d, ok := st.declaredReqQP(e, fl); ok {
		return verdictOf(dest == d)
	}
	if fl.qp.namedFrame != 0 && ownQP(fl, dest) {
		return destWrong
	}
	if selfTrusted(fl, st) && st.self != uint16(fl.key.qpn) {
		return verdictOf(uint16(dest) == st.self)
	}
	return destUndecided
}

func verdictOf(ok bool) destVerdict {
	if ok {
		return destRight
	}
	return destWrong
}

// expectedDest describes the requester's QP a misaddressed feedback frame
// should have gone to, and the frame that names it (0: none).
func (e *engine) expectedDest(fl *flow) (string, int) {
	if d, ok := e.declaredReqQP(fl); ok {
		return fmt.Sprintf("dest_qp 0x%06x, the requester's QP as the PICS's qp_pairs declares it", d), 0
	}
	if st := dcidOf.of(fl); selfTrusted(fl, st) && st.self != uint16(fl.key.qpn) {
		return fmt.Sprintf("dest_qp with bits 15:0 0x%04x, the requester's QP as its probe (frame %d) names it", st.self, st.selfFrame), st.selfFrame
	}
	v := &fl.qp
	return fmt.Sprintf("dest_qp 0x%06x, the requester's QP as the responder's own %s (frame %d) addresses it", v.named, v.namedBy, v.namedFrame), v.namedFrame
}

// hold keeps a feedback frame whose dest_qp cannot be judged yet in st,
// the check's state on its connection.
func (e *engine) hold(st *dcidState, dest uint32, op wire.Opcode, passed bool, plane int) {
	if st.pend == nil {
		st.pend = &qpPending{}
	}
	g := st.pend.group(dest)
	if g == nil {
		return // a third number: not held
	}
	g.dest = dest
	g.n++
	if len(g.sample) < pendSample {
		if g.sample == nil {
			g.sample = make([]pendFrame, 0, pendSample)
		}
		g.sample = append(g.sample, pendFrame{frame: e.frameNo, ns: e.now, plane: plane, op: op, passed: passed})
	} else if passed {
		g.passed++
	}
}

// group returns the group of dest_qp dest, or an empty one; nil when two
// other numbers are held.
func (p *qpPending) group(dest uint32) *pendGroup {
	var free *pendGroup
	for i := range p.groups {
		g := &p.groups[i]
		if g.n > 0 && g.dest == dest {
			return g
		}
		if g.n == 0 && free == nil {
			free = g
		}
	}
	return free
}

// feedbackQP judges the QP numbers of a SACK, NACK or ACK: its dest_qp
// against the requester's QP (held when not yet known) and, for a SACK
// or NACK (dcid), its spdcid against the responder's (dcid).
func (e *engine) feedbackQP(x *fbCtx, spdcid uint16, dcid bool) {
	fl, dest := x.fl, x.p.BTH.DestQP
	e.settleNamed(x.pt, fl)
	st := dcidOf.of(fl)
	verdict := e.judgeDest(fl, st, dest)
	if !dcid && verdict != destRight && usedElsewhere(x.pt, fl, dest) {
		// An ACK names no QP but its dest_qp (no spdcid): to a QP its
		// destination uses in another connection, it may be that
		// connection's, not misaddressed feedback of this one.
		return
	}
	if verdict == destWrong {
		e.failedCases = append(e.failedCases, cWireDCID)
		e.misaddressed(x.pt, fl, dest, x.op)
		return // one finding for the frame
	}
	passed := !e.frameFailed(cWireDCID) && !x.mismatch
	if dcid {
		e.dcid(x.judgedRow, x.pt, fl, x.rsp, x.mismatch, spdcid)
	} else {
		x.pass(cWireDCID, false)
	}
	if verdict == destUndecided {
		e.hold(st, dest, x.op, passed, x.pt.curPlane)
	}
}

// usedElsewhere reports whether QP q is one fl's requester node uses in
// another connection at pt: the responder QP of a flow it is the
// responder of, or the requester QP feedback addressed on another flow.
func usedElsewhere(pt *point, fl *flow, q uint32) bool {
	for _, f := range pt.pairs[[2]string{fl.key.rsp, fl.key.req}] {
		if f.key.qpn == q || f.key.partial && f.key.qpn == q&0xFFFF {
			return true
		}
	}
	for _, f := range pt.pairs[[2]string{fl.key.req, fl.key.rsp}] {
		if f != fl && f.haveReqQPN && f.reqQPN == q {
			return true
		}
	}
	return false
}

// misaddressed records a feedback frame sent to the wrong QP.
func (e *engine) misaddressed(pt *point, fl *flow, dest uint32, op wire.Opcode) {
	req, what := rWireDCID_RSP_SACK_6, "SACK"
	switch op {
	case wire.OpNACK:
		req, what = rWireDCID_WIRE_SETH_9, "NACK"
	case wire.OpAcknowledge:
		req, what = rWireDCID_RSP_ACK_1, "ACK"
	}
	e.failWhy(req, pt, fl.key.rsp, 0, func(f *Finding) {
		exp, frame := e.expectedDest(fl)
		if frame != 0 {
			f.Related = []int{frame}
		}
		f.Expected = exp
		f.Observed = fmt.Sprintf("%s to dest_qp 0x%06x", what, dest)
		if ownQP(fl, dest) {
			f.Observed += ", the responder's own QP"
		}
	})
}

// settleNamed judges the held feedback of fl when this frame named its
// requester's QP first (responderNames).
func (e *engine) settleNamed(pt *point, fl *flow) {
	if fl.qp.namedFrame == e.frameNo {
		e.settle(pt, fl)
	}
}

// settle judges the held feedback of fl that what is known now decides:
// misaddressed frames turn from a pass into a failure, with their own
// frame, time and plane; the others stay passed.
func (e *engine) settle(pt *point, fl *flow) {
	st := dcidOf.of(fl)
	if st.pend == nil {
		return
	}
	for i := range st.pend.groups {
		g := &st.pend.groups[i]
		if g.n == 0 {
			continue
		}
		switch e.judgeDest(fl, st, g.dest) {
		case destUndecided:
			continue
		case destWrong:
			e.failHeld(pt, fl, g)
		}
		g.n, g.passed, g.sample = 0, 0, g.sample[:0]
	}
}

// failHeld turns a group of held feedback frames into failures. A held
// frame's finding is placed as at its own frame; the frames beyond the
// sample are counted, without a finding, as their findings would not
// have been kept.
func (e *engine) failHeld(pt *point, fl *flow, g *pendGroup) {
	o := e.count(cWireDCID, pt, fl.key.rsp)
	now, plane, cur := e.now, pt.curPlane, pt.curFlow
	pt.curFlow = fl
	for _, h := range g.sample {
		if h.passed {
			o.ok--
		}
		e.now, pt.curPlane = h.ns, h.plane
		e.misaddressedAt(pt, fl, g.dest, h)
	}
	e.now, pt.curPlane, pt.curFlow = now, plane, cur
	rest := g.n - len(g.sample)
	o.ok -= g.passed
	o.bad += rest
	o.total += rest
}

// misaddressedAt records held feedback frame h as misaddressed.
func (e *engine) misaddressedAt(pt *point, fl *flow, dest uint32, h pendFrame) {
	frameNo := e.frameNo
	e.frameNo = h.frame
	e.misaddressed(pt, fl, dest, h.op)
	e.frameNo = frameNo
}

// What a probe's spdcid is judged against (probeQP).
const (
	byNone      = iota
	byPICS      // qp_pairs
	byResponder // the QP the responder addresses the requester by
	bySelf      // the requester's first probe
)

// probeQP judges the spdcid of a probe, the prober's own QP number
// (WIRE-SETH-9), and learns what the probe names: the prober's QP for
// its flow, and its peer's QP (dest_qp) for the flows it answers as
// responder.
func (e *engine) probeQP(x *probeCtx) {
	fl, spdcid := x.fl, x.p.PETH.SPDCID
	for _, f := range x.peerFlows() {
		e.settleNamed(x.pt, f)
	}
	if e.frameFailed(cWireDCID) {
		return // the frame's dpdcid finding covers WIRE-SETH-9 already
	}
	v, st := &fl.qp, dcidOf.of(fl)
	want, by := spdcid, byNone
	switch d, ok := e.declaredReqQP(fl); {
	case ok:
		want, by = uint16(d), byPICS
	case v.namedFrame != 0 && spdcid == uint16(fl.key.qpn) && uint16(v.named) != spdcid:
		want, by = uint16(v.named), byResponder
	case st.selfFrame != 0:
		want, by = st.self, bySelf
	}
	if spdcid != want {
		e.failWhy(rWireDCID_WIRE_SETH_9, x.pt, x.req, 0, func(f *Finding) {
			basis := "as the PICS's qp_pairs declares it"
			switch by {
			case byResponder:
				basis = fmt.Sprintf("as the responder's %s (frame %d) addresses it, not the responder's own QP", v.namedBy, v.namedFrame)
				f.Related = []int{v.namedFrame}
			case bySelf:
				basis = fmt.Sprintf("as its probe of frame %d names it", st.selfFrame)
				f.Related = []int{st.selfFrame}
			}
			f.Expected = fmt.Sprintf("spdcid 0x%04x, the requester's QP %s", want, basis)
			f.Observed = fmt.Sprintf("spdcid 0x%04x", spdcid)
		})
		return
	}
	judgedRow{e.row(x.pt, x.req)}.pass(cWireDCID, false)
	if st.selfFrame == 0 {
		st.self, st.selfFrame = spdcid, e.frameNo
		e.settle(x.pt, fl)
	}
}

// feedbackDCID checks the QP numbers of a SACK or NACK (feedbackQP) and
// learns what an ACK's dest_qp names.
func feedbackDCID(e *engine, x *fbCtx) {
	switch x.op {
	case wire.OpSACK:
		e.feedbackQP(x, x.p.SETH.SPDCID, true)
	case wire.OpNACK:
		e.feedbackQP(x, x.p.NETH.SPDCID, true)
	case wire.OpAcknowledge:
		e.feedbackQP(x, 0, false)
	}
}

func probeDCID(e *engine, x *probeCtx) { e.probeQP(x) }

// dcid judges a SACK's or NACK's spdcid against the responder's QP
// (WIRE-SETH-9) and passes the frame.
func (e *engine) dcid(j judgedRow, pt *point, fl *flow, node string, mismatch bool, spdcid uint16) {
	if e.frameFailed(cWireDCID) {
		return // the frame's dpdcid finding covers WIRE-SETH-9 already
	}
	if mismatch {
		e.failWhy(rWireDCID_WIRE_SETH_9, pt, node, 0, func(f *Finding) {
			f.Expected = fmt.Sprintf("spdcid 0x%04x (bits 15:0 of the sending QP 0x%06x)", uint16(fl.key.qpn), fl.key.qpn)
			f.Observed = fmt.Sprintf("spdcid 0x%04x", spdcid)
		})
		return
	}
	j.pass(cWireDCID, false)
}

// The wire-format checks: per-packet rules, the codec's strict findings
// (codec) and the profile-dependent rules the codec cannot know (traffic
// classes, flags, EV encoding).
func init() {
	addChecks(
		check{cs: cWireENC, codec: []wire.ReqID{wire.ReqENC1, wire.ReqENC2, wire.ReqENC5, wire.ReqLEN1, wire.ReqUDP1}, everyFrame: true},
		check{cs: cWireUDP, codec: []wire.ReqID{wire.ReqUDP3}, everyFrame: true},
		check{cs: cWireICRC, codec: []wire.ReqID{wire.ReqICRC1}, reqs: []caseReq{rWireICRC_WIRE_ICRC_1}, everyFrame: true, everyOn: kUntrimmed | kWhole, badICRC: icrcBad},
		check{cs: cWireGEN, codec: []wire.ReqID{wire.ReqGEN2, wire.ReqBTH7}, reqs: []caseReq{rWireGEN_WIRE_BTH_13}, frame: variantZero},
		check{cs: cWireBTH1, codec: []wire.ReqID{wire.ReqBTH1, wire.ReqBTH2, wire.ReqBTH3, wire.ReqOP1, wire.ReqMETH1, wire.ReqTSETH1, wire.ReqRETH1, wire.ReqIMM1}, everyFrame: true},
		check{cs: cWireBTH2, codec: []wire.ReqID{wire.ReqBTH8, wire.ReqEP1}, everyFrame: true},
		check{cs: cWireBTH3, codec: []wire.ReqID{wire.ReqBTH9}, everyFrame: true, everyOn: kWhole},
		check{cs: cWireBTH4, codec: []wire.ReqID{wire.ReqBTH6}, everyFrame: true},
		check{cs: cWireFlags, codec: []wire.ReqID{wire.ReqBTH5}, reqs: []caseReq{rWireFlags_WIRE_BTH_14, rWireFlags_WIRE_BTH_10, rWireFlags_WIRE_BTH_11}, frame: flags},
		check{cs: cWireOP, codec: []wire.ReqID{wire.ReqOP2}, everyFrame: true, everyOn: kUntrimmed,
			frameOps: []wire.Opcode{wire.OpAcknowledge, wire.OpEndpointReq, wire.OpEndpointResp, wire.OpSACK, wire.OpNACK, wire.OpProbe}}, // the opcodes without a payload
		check{cs: cECN, reqs: []caseReq{rECN_WIRE_DSCP_3}, frame: ecn, frameOn: kUntrimmed, frameOps: ecnOps},
		check{cs: cDSCPTrim, codec: []wire.ReqID{wire.ReqTRIM1, wire.ReqDSCP2}, reqs: []caseReq{rDSCPTrim_WIRE_DSCP_4}, frame: trimmedCodePoint, frameOn: kTrimmed, frameSelf: true, everyFrame: true, everyOn: kUntrimmed},
		check{cs: cDSCPSRv6, reqs: []caseReq{rDSCPSRv6_WIRE_DSCP_6}, frame: srv6Class, frameOn: kSRv6},
		check{cs: cEVEnc, reqs: []caseReq{rEVEnc_WIRE_EV_2, rEVEnc_WIRE_EV_6}, frame: evEncoding, frameOn: kIPv6},
		check{cs: cWireTSETH, reqs: []caseReq{rWireTSETH_WIRE_TSETH_2}, frame: tseth, frameOn: kTSETH},
		check{cs: cWireAETH, codec: []wire.ReqID{wire.ReqAETH1, wire.ReqAETH2}, reqs: []caseReq{rWireAETH_WIRE_AETH_1, rWireAETH_WIRE_AETH_3}, frame: aethSyndrome, frameOps: []wire.Opcode{wire.OpAcknowledge}},
		check{cs: cWireSETH, codec: []wire.ReqID{wire.ReqSETH1, wire.ReqSETH3, wire.ReqSETH10}, reqs: []caseReq{rWireSETH_WIRE_SETH_8, rWireSETH_MPR_DYN_2, rWireSETH_WIRE_SETH_4}, frame: sethFields, frameOps: []wire.Opcode{wire.OpSACK}},
		check{cs: cWireNETH, codec: []wire.ReqID{wire.ReqNETH1, wire.ReqNETH2, wire.ReqNETH4}, reqs: []caseReq{rWireNETH_WIRE_SETH_8}, frame: nethFields, frameOps: []wire.Opcode{wire.OpNACK}},
		check{cs: cWirePETH, codec: []wire.ReqID{wire.ReqPETH1, wire.ReqPETH2}, reqs: []caseReq{rWirePETH_WIRE_SETH_8, rWirePETH_WIRE_PETH_1}, frame: pethFields, frameOps: []wire.Opcode{wire.OpProbe}},
	)
}

// ecnOps are the opcodes whose ECN codepoint WIRE-DSCP-3 sets: control
// packets, probes and writes.
var ecnOps = []wire.Opcode{wire.OpSACK, wire.OpNACK, wire.OpAcknowledge, wire.OpEndpointResp, wire.OpProbe,
	wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteLastImm, wire.OpWriteOnly, wire.OpWriteOnlyImm}

// variantZero: the variant byte is 0 as sent; switches may change it
// (WIRE-BTH-13).
func variantZero(e *engine, x *frameCtx) {
	if x.atSender && x.p.BTH.Variant != 0 {
		e.bad(rWireGEN_WIRE_BTH_13, x, func() (string, string) {
			return "reserved_variant 0 as sent", fmt.Sprintf("reserved_variant 0x%02x", x.p.BTH.Variant)
		})
	}
}

// flags checks WIRE-BTH-14, WIRE-BTH-10 and WIRE-BTH-11.
func flags(e *engine, x *frameCtx) {
	p, op := x.p, x.op
	switch {
	case op.IsWrite() && p.BTH.AckReq != op.IsLast():
		e.bad(rWireFlags_WIRE_BTH_14, x, func() (string, string) {
			return fmt.Sprintf("ack_req = %v on %s", op.IsLast(), op), fmt.Sprintf("ack_req = %v", p.BTH.AckReq)
		})
	case !op.IsWrite() && op != wire.OpSACK && p.BTH.AckReq:
		e.bad(rWireFlags_WIRE_BTH_14, x, func() (string, string) { return "ack_req = 0 on " + op.String(), "ack_req = 1" })
	}
	if p.BTH.SE && !op.HasImm() {
		e.bad(rWireFlags_WIRE_BTH_10, x, func() (string, string) {
			return "se only on RDMA_WRITE_LAST_IMM and RDMA_WRITE_ONLY_IMM", "se = 1 on " + op.String()
		})
	}
	if p.BTH.M {
		e.bad(rWireFlags_WIRE_BTH_11, x, func() (string, string) { return "m = 0 (MRC has no path migration)", "m = 1" })
	}
}

// controlClass checks the traffic class of control packets and probes
// (WIRE-DSCP-1, EP-GEN-4); dscpWrite judges writes'.
func controlClass(e *engine, x *frameCtx) {
	if x.p.Trimmed {
		return
	}
	prof := e.prof
	switch d := x.p.DSCP(); {
	case x.control:
		if d != prof.DSCP.Control {
			req := rDSCP_WIRE_DSCP_1
			if x.op == wire.OpEndpointResp {
				req = rDSCP_EP_GEN_4
			}
			e.bad(req, x, func() (string, string) {
				return fmt.Sprintf("DSCP %d (DSCP_CONTROL) on %s", prof.DSCP.Control, x.op), fmt.Sprintf("DSCP %d", d)
			})
		}
	case x.op == wire.OpProbe:
		if d != prof.DSCP.NoTrim {
			e.bad(rDSCP_WIRE_DSCP_1, x, func() (string, string) {
				return fmt.Sprintf("DSCP %d (DSCP_NO_TRIM) on a probe", prof.DSCP.NoTrim), fmt.Sprintf("DSCP %d", d)
			})
		}
	}
}

// ecn checks WIRE-DSCP-3: Not-ECT on control packets, ECT(0) on probes
// and writes.
func ecn(e *engine, x *frameCtx) {
	if x.p.Trimmed {
		return
	}
	switch c := x.p.ECN(); {
	case x.control:
		if c != 0 {
			e.bad(rECN_WIRE_DSCP_3, x, func() (string, string) { return "Not-ECT (00) on a control packet", fmt.Sprintf("ECN %02b", c) })
		}
	case x.op == wire.OpProbe:
		if c < 2 {
			e.bad(rECN_WIRE_DSCP_3, x, func() (string, string) { return "ECT(0) (10) on a probe", fmt.Sprintf("ECN %02b", c) })
		}
	case x.op.IsWrite():
		if c < 2 {
			e.bad(rECN_WIRE_DSCP_3, x, func() (string, string) { return "ECT(0) (10) on a write", fmt.Sprintf("ECN %02b", c) })
		}
	}
}

// trimmedCodePoint: trimmed code points come from switches only
// (WIRE-DSCP-4).
func trimmedCodePoint(e *engine, x *frameCtx) {
	if !x.p.Trimmed {
		return
	}
	if x.atSender {
		e.bad(rDSCPTrim_WIRE_DSCP_4, x, func() (string, string) {
			return "no trimmed DSCP on a frame captured at its sender", fmt.Sprintf("DSCP %d", x.p.DSCP())
		})
	} else if !e.frameFailed(cDSCPTrim) {
		e.undecided(cDSCPTrim, x.pt, x.src, "a trimmed frame at a capture point the PICS does not place at its sender")
	}
}

// srv6Class: the inner traffic class equals the outer (WIRE-DSCP-6).
func srv6Class(e *engine, x *frameCtx) {
	p := x.p
	if !p.SRv6 {
		return
	}
	if p.Outer.TrafficClass != p.IP6.TrafficClass {
		e.bad(rDSCPSRv6_WIRE_DSCP_6, x, func() (string, string) {
			return fmt.Sprintf("inner traffic class 0x%02x equal to the outer", p.Outer.TrafficClass), fmt.Sprintf("0x%02x", p.IP6.TrafficClass)
		})
	}
}

// evEncoding checks the EV encoding in the flow label (WIRE-EV-6,
// WIRE-EV-2).
func evEncoding(e *engine, x *frameCtx) {
	if !x.p.IsIPv6 {
		return
	}
	fl := x.p.IP6.FlowLabel
	switch e.mode {
	case wire.EVModeUDP:
		if fl != 0 {
			e.bad(rEVEnc_WIRE_EV_2, x, func() (string, string) { return "flow label 0 in UDP EV mode", fmt.Sprintf("flow label 0x%05x", fl) })
		}
	default:
		if fl>>16 != 0 {
			e.bad(rEVEnc_WIRE_EV_6, x, func() (string, string) { return "flow label bits 19:16 zero", fmt.Sprintf("flow label 0x%05x", fl) })
		}
	}
}

// tseth checks WIRE-TSETH-2.
func tseth(e *engine, x *frameCtx) {
	p := x.p
	if p.Decoded&wire.HasTSETH == 0 {
		return
	}
	if p.TSETH.TSR || p.TSETH.FType != 1 {
		e.bad(rWireTSETH_WIRE_TSETH_2, x, func() (string, string) {
			return "tsr = 0, ftype = 1", fmt.Sprintf("tsr = %v, ftype = %d", p.TSETH.TSR, p.TSETH.FType)
		})
	}
}

// aethSyndrome checks an ACKNOWLEDGE's syndrome (WIRE-AETH-1, WIRE-AETH-3).
func aethSyndrome(e *engine, x *frameCtx) {
	if x.op != wire.OpAcknowledge {
		return
	}
	a := &x.p.AETH
	switch t, v := a.Type(), a.Value(); {
	case t == wire.AETHTypeRNR:
		e.bad(rWireAETH_WIRE_AETH_3, x, func() (string, string) {
			return "no RNR NAK (MRC has no RNR)", fmt.Sprintf("syndrome 0x%02x", a.Syndrome)
		})
	case t == wire.AETHTypeNAK && (v == 0 || v > 3):
		e.bad(rWireAETH_WIRE_AETH_3, x, func() (string, string) { return "NAK codes 1, 2 or 3 only", fmt.Sprintf("NAK code %d", v) })
	case t == 2:
		e.bad(rWireAETH_WIRE_AETH_1, x, func() (string, string) {
			return "syndrome type ACK or NAK", fmt.Sprintf("reserved type in syndrome 0x%02x", a.Syndrome)
		})
	}
}

// sethFields checks a SACK's fixed fields and its mpr (WIRE-SETH-8,
// WIRE-SETH-4, MPR-DYN-2).
func sethFields(e *engine, x *frameCtx) {
	if x.op != wire.OpSACK {
		return
	}
	s := &x.p.SETH
	if s.Type != 0 || s.NextHeader != 0 || s.CCType != 0 || s.CCFlags != 0 {
		e.bad(rWireSETH_WIRE_SETH_8, x, func() (string, string) {
			return "type, next_header, cc_type, cc_flags 0", fmt.Sprintf("%d, %d, %d, %d", s.Type, s.NextHeader, s.CCType, s.CCFlags)
		})
	}
	if e.dynMPR {
		hi := 255
		if m := e.pics.Parameters.MPRDest; m != nil {
			hi = *m
		}
		if int(s.MPR) < 1 || int(s.MPR) > hi {
			e.bad(rWireSETH_MPR_DYN_2, x, func() (string, string) {
				return fmt.Sprintf("mpr between 1 and mpr_dest %d with dynamic MPR", hi), fmt.Sprintf("mpr %d", s.MPR)
			})
		}
	} else if s.MPR != 0 {
		e.bad(rWireSETH_WIRE_SETH_4, x, func() (string, string) { return "mpr 0 without dynamic MPR", fmt.Sprintf("mpr %d", s.MPR) })
	}
}

// nethFields checks a NACK's fixed fields; cc_type per profile (AMB-34).
func nethFields(e *engine, x *frameCtx) {
	if x.op != wire.OpNACK {
		return
	}
	n, prof := &x.p.NETH, e.prof
	if n.Type != 0 || n.NextHeader != 0 || n.CCType != prof.NETHCCType || n.CCFlags != 0 {
		e.bad(rWireNETH_WIRE_SETH_8, x, func() (string, string) {
			return fmt.Sprintf("type, next_header 0, cc_type %d, cc_flags 0", prof.NETHCCType), fmt.Sprintf("%d, %d, %d, %d", n.Type, n.NextHeader, n.CCType, n.CCFlags)
		})
	}
}

// pethFields checks a probe's fixed fields (WIRE-SETH-8, WIRE-PETH-1).
func pethFields(e *engine, x *frameCtx) {
	if x.op != wire.OpProbe {
		return
	}
	q := &x.p.PETH
	if q.Type != 0 || q.NextHeader != 0 {
		e.bad(rWirePETH_WIRE_SETH_8, x, func() (string, string) { return "type and next_header 0", fmt.Sprintf("%d, %d", q.Type, q.NextHeader) })
	}
	if q.TSR || q.FType != 1 {
		e.bad(rWirePETH_WIRE_PETH_1, x, func() (string, string) {
			return "tsr = 0, ftype = 1", fmt.Sprintf("tsr = %v, ftype = %d", q.TSR, q.FType)
		})
	}
}

// dpdcid checks that feedback and probes name their destination QP's low
// 16 bits in dpdcid (WIRE-SETH-9).
func dpdcid(e *engine, x *frameCtx) {
	var got uint16
	switch x.op {
	case wire.OpSACK:
		got = x.p.SETH.DPDCID
	case wire.OpNACK:
		got = x.p.NETH.DPDCID
	case wire.OpProbe:
		got = x.p.PETH.DPDCID
	default:
		return
	}
	if want := uint16(x.p.BTH.DestQP); got != want {
		e.bad(rWireDCID_WIRE_SETH_9, x, func() (string, string) {
			return fmt.Sprintf("dpdcid 0x%04x (dest_qp bits 15:0)", want), fmt.Sprintf("dpdcid 0x%04x", got)
		})
	}
}

// endpointPKey: endpoint operations carry P_Key 0xFFFF (WIRE-BTH-12).
func endpointPKey(e *engine, x *frameCtx) {
	if x.op != wire.OpEndpointReq && x.op != wire.OpEndpointResp {
		return
	}
	if x.p.BTH.PKey != 0xFFFF {
		e.failWhy(rWirePKey_WIRE_BTH_12, x.pt, x.src, 0, func(f *Finding) {
			f.Expected, f.Observed = "P_Key 0xFFFF on endpoint operations", fmt.Sprintf("P_Key 0x%04x", x.p.BTH.PKey)
		})
	} else {
		e.ok(cWirePKey, x.pt, x.src, false)
	}
}

// The wire rules judged on a write as sent, on its message, or on the
// connection's frames.
func init() {
	addChecks(
		check{cs: cWirePAY, codec: []wire.ReqID{wire.ReqPAY1}, reqs: []caseReq{rWirePAY_WIRE_PAY_1}, sent: payloadSize},
		check{cs: cDSCP, reqs: []caseReq{rDSCP_WIRE_DSCP_1, rDSCP_WIRE_DSCP_5, rDSCP_EP_GEN_4}, frame: controlClass, frameOn: kUntrimmed, frameOps: []wire.Opcode{wire.OpSACK, wire.OpNACK, wire.OpAcknowledge, wire.OpEndpointResp, wire.OpProbe}, sent: dscpWrite},
		check{cs: cWireDCID, framesShow: true, reqs: []caseReq{rWireDCID_WIRE_SETH_9, rWireDCID_RSP_SACK_6, rWireDCID_RSP_ACK_1}, frame: dpdcid, frameOps: []wire.Opcode{wire.OpSACK, wire.OpNACK, wire.OpProbe}, feedback: feedbackDCID, probe: probeDCID, state: dcidOf.slot},
		check{cs: cWirePKey, framesShow: true, reqs: []caseReq{rWirePKey_WIRE_BTH_12}, frame: endpointPKey, frameSelf: true, frameOps: []wire.Opcode{wire.OpEndpointReq, wire.OpEndpointResp}, sent: writePKey, feedback: feedbackPKey, probe: probePKey, state: pkeyState.slot},
		check{cs: cWireMSG, codec: []wire.ReqID{wire.ReqPAY2}, reqs: []caseReq{rWireMSG_REQ_SEG_2, rWireMSG_WIRE_RETH_2, rWireMSG_WIRE_PAY_2}, msg: messageShape},
		check{cs: cWireMETH, reqs: []caseReq{rWireMETH_WIRE_METH_2, rWireMETH_REQ_PSN_3}, msg: messageMSN},
		check{cs: cWIMMOrd, reqs: []caseReq{rWIMMOrd_WIRE_METH_3}, msg: messageRQMSN},
	)
}

// sizeFault is what a write's payload size breaks. It is found once per
// write (sendWrite) and reported once, by the codec or by payloadSize;
// the checks that add a message's sizes up (messageShape) or compare a
// resend's payload (resendSame) pass over a write whose size is a
// finding, so that one wrong pad count or size is one finding.
type sizeFault uint8

const (
	sizeOK      sizeFault = iota
	sizePad               // the codec found the pad count wrong (WIRE-BTH-9): the payload's length is unknown
	sizeNone              // the codec found a FIRST or MIDDLE without payload (WIRE-PAY-1)
	sizeDMA               // the codec found the payload beyond the message's dma_length (WIRE-PAY-2)
	sizeNotMTU            // a FIRST or MIDDLE of other than one path MTU (WIRE-PAY-1)
	sizeEmpty             // a LAST without payload (WIRE-PAY-1)
	sizeOverMTU           // more than the path MTU (WIRE-PAY-1)
)

// writeSize returns the sizeFault of a write, against the path MTU
// (pathMTU); before the connection shows one, a FIRST or MIDDLE must carry
// one of the sizes a path MTU can have.
func (e *engine) writeSize(fl *flow, r *pcap.Record) sizeFault {
	p := &r.Packet
	if p.Trimmed {
		return sizeOK
	}
	for i := range r.Violations {
		switch r.Violations[i].Req {
		case wire.ReqBTH9:
			return sizePad
		case wire.ReqPAY1:
			return sizeNone
		case wire.ReqPAY2:
			return sizeDMA
		}
	}
	n, mtu := len(p.Payload), e.pathMTU(fl)
	switch p.BTH.Opcode {
	case wire.OpWriteFirst, wire.OpWriteMiddle:
		if n != mtu && (mtu != 0 || !slices.Contains(pathMTUs, n)) {
			return sizeNotMTU
		}
	case wire.OpWriteLast, wire.OpWriteLastImm:
		if n == 0 {
			return sizeEmpty
		}
	}
	if n > payloadLimit(mtu) {
		return sizeOverMTU
	}
	return sizeOK
}

// payloadLimit is the most payload a write may carry: the path MTU, or
// the largest a path MTU can be when it is not known.
func payloadLimit(mtu int) int {
	if mtu > 0 {
		return mtu
	}
	return pathMTUs[len(pathMTUs)-1]
}

// pathMTUs are the sizes a path MTU can have (IBV_QP_PATH_MTU).
var pathMTUs = []int{256, 512, 1024, 2048, 4096}

// pathMTU returns the connection's path MTU: the PICS's, else the one
// inferred from its FIRST and MIDDLE packets (flow.mtu), else 0.
func (e *engine) pathMTU(fl *flow) int {
	if m := e.pics.Parameters.PathMTU; m != nil {
		return *m
	}
	return fl.mtu
}

// payloadSize checks WIRE-PAY-1 on the write's sizeFault, unless the
// codec reported it. Without a path MTU in the PICS, sizes are judged
// against the one the connection is seen to use (flow.mtu, learnMTU).
func payloadSize(e *engine, x *sentCtx) {
	p, fl := x.p, x.fl
	if !sizeJudged(x) {
		return
	}
	n, op := len(p.Payload), p.BTH.Opcode
	declared := e.pics.Parameters.PathMTU != nil
	if x.size == sizeOK {
		x.pass(cWirePAY, false)
		return
	}
	mtu := e.pathMTU(fl)
	e.failWhy(rWirePAY_WIRE_PAY_1, x.pt, x.req, 0, func(f *Finding) {
		f.PSN, f.Expected = u32p(p.BTH.PSN), "a payload size the opcode allows"
		if !declared {
			f.Expected += " (path MTU inferred from the connection's FIRST/MIDDLE packets)"
		}
		switch {
		case x.size == sizeNotMTU && mtu == 0:
			f.Observed = fmt.Sprintf("%s with %d bytes, which is no path MTU (256, 512, 1024, 2048 or 4096)", op, n)
		case x.size == sizeNotMTU:
			f.Observed = fmt.Sprintf("%s with %d bytes, want exactly the path MTU %d", op, n, mtu)
		case x.size == sizeEmpty:
			f.Observed = fmt.Sprintf("%s with no payload", op)
		default:
			f.Observed = fmt.Sprintf("%s with %d bytes, more than the path MTU %d", op, n, payloadLimit(mtu))
		}
	})
}

// dscpWrite checks a write's traffic class (WIRE-DSCP-1, WIRE-DSCP-5).
func dscpWrite(e *engine, x *sentCtx) {
	p := x.p
	if p.Trimmed {
		return
	}
	resend := !x.isNew
	prof := e.prof
	rtxClass, rtxName := prof.DSCP.TrimmableRetx, "DSCP_TRIMMABLE_RETX (retransmission)"
	if prof.Retransmit == 1 {
		rtxClass, rtxName = prof.DSCP.Control, "DSCP_CONTROL (retransmission, retransmit_class control)"
	}
	want, class := prof.DSCP.Trimmable, "DSCP_TRIMMABLE (first transmission)"
	if resend {
		want, class = rtxClass, rtxName
	}
	req := rDSCP_WIRE_DSCP_1
	got := p.DSCP()
	switch v, declared := e.trimNack, e.trimNackDeclared; {
	case declared && !v:
		want, class, req = prof.DSCP.NoTrim, "DSCP_NO_TRIM (peer without trim NACKs)", rDSCP_WIRE_DSCP_5
	case !declared && got == prof.DSCP.NoTrim:
		want = got // trim_nack undeclared: DSCP_NO_TRIM is allowed too
	}
	if got == want {
		x.pass(cDSCP, false)
		return
	}
	// A first sighting flagged and classed as a retransmission: its first
	// transmission may have been lost before the capture point. A PSN
	// first seen behind the highest one sent may be a first transmission
	// overtaken on another plane, and a copy of the first transmission on
	// its EV a duplicate the fabric made (copyLike).
	reordered := resend && x.st == nil
	how := failHow(0)
	if !resend && p.BTH.Retransmit && got == rtxClass || reordered && !p.BTH.Retransmit || x.copyLike {
		how = onAbsence
	}
	e.failWhy(req, x.pt, x.req, how, func(f *Finding) {
		if !e.trimNackDeclared {
			class += " or DSCP_NO_TRIM (trim_nack not declared)"
		}
		f.PSN, f.EV = u32p(p.BTH.PSN), u32p(x.ev)
		f.Expected, f.Observed = fmt.Sprintf("DSCP %d, %s", want, class), fmt.Sprintf("DSCP %d", got)
	})
}

// connPKey is WIRE-BTH-12's state on a connection: its P_Key, taken from
// its first packet whose P_Key the responder accepts, and that frame. It
// holds no container.
type connPKey struct {
	pkey  uint16
	have  bool
	frame int
}

func (*connPKey) entries() int { return 0 }

var pkeyState = newConnState(func() *connPKey { return &connPKey{} })

// same reports whether p carries its connection's P_Key (most
// packets): a pass of WIRE-BTH-12, which the hooks record inlined;
// pkeyCheck judges the others.
func (s *connPKey) same(p *wire.Packet) bool { return s.have && p.BTH.PKey == s.pkey }

// pkeyCheck checks WIRE-BTH-12 on a packet of a connection with no P_Key
// yet, or of another P_Key than the connection's (connPKey.same): a
// connection's packets carry one P_Key, the responder's QP's. s is the
// connection's state, j node's row at pt.
func (e *engine) pkeyCheck(s *connPKey, j judgedRow, pt *point, fl *flow, node string, p *wire.Packet) {
	if !s.have {
		// A P_Key the responder discards (a tester's crafted frame, say)
		// cannot be the connection's: it is judged against the
		// responder's key and does not become the reference.
		if !e.pkeyOK(fl, p.BTH.PKey) {
			e.failWhy(rWirePKey_WIRE_BTH_12, pt, node, 0, func(f *Finding) {
				f.Expected, f.Observed = "the P_Key of the responder's QP", fmt.Sprintf("P_Key 0x%04x", p.BTH.PKey)
			})
			return
		}
		s.pkey, s.have, s.frame = p.BTH.PKey, true, e.frameNo
		j.pass(cWirePKey, false)
		return
	}
	e.failWhy(rWirePKey_WIRE_BTH_12, pt, node, 0, func(f *Finding) {
		f.Related = []int{s.frame}
		f.Expected = fmt.Sprintf("P_Key 0x%04x, as in frame %d of this connection", s.pkey, s.frame)
		f.Observed = fmt.Sprintf("P_Key 0x%04x", p.BTH.PKey)
	})
}

func writePKey(e *engine, x *sentCtx) {
	if s := pkeyState.of(x.fl); s.same(x.p) {
		x.pass(cWirePKey, false)
	} else {
		e.pkeyCheck(s, x.judgedRow, x.pt, x.fl, x.req, x.p)
	}
}

func feedbackPKey(e *engine, x *fbCtx) {
	if s := pkeyState.of(x.fl); s.same(x.p) {
		x.pass(cWirePKey, false)
	} else {
		e.pkeyCheck(s, x.judgedRow, x.pt, x.fl, x.rsp, x.p)
	}
}

func probePKey(e *engine, x *probeCtx) {
	j := judgedRow{e.row(x.pt, x.req)}
	if s := pkeyState.of(x.fl); s.same(x.p) {
		j.pass(cWirePKey, false)
	} else {
		e.pkeyCheck(s, j, x.pt, x.fl, x.req, x.p)
	}
}

// messageShape checks a message's segmentation and RETH (REQ-SEG-2,
// WIRE-RETH-2, WIRE-PAY-2).
func messageShape(e *engine, c *msgCtx) {
	m, p := c.m, c.p
	switch c.phase {
	case msgBroken:
		c.fail(e, rWireMSG_REQ_SEG_2, func() (string, string) {
			return "RDMA_WRITE_MIDDLE or a LAST opcode inside a message", p.BTH.Opcode.String()
		})
	case msgInside:
		if p.RETH.RKey != m.rkey || p.RETH.DMALength != m.dmaLen {
			c.fail(e, rWireMSG_WIRE_RETH_2, func() (string, string) {
				return fmt.Sprintf("r_key 0x%x, dma_length %d as in the first packet", m.rkey, m.dmaLen), fmt.Sprintf("r_key 0x%x, dma_length %d", p.RETH.RKey, p.RETH.DMALength)
			})
		}
		if want, ok := misplaced(e, c); ok {
			c.fail(e, rWireMSG_WIRE_RETH_2, func() (string, string) { return want, fmt.Sprintf("va 0x%x", p.RETH.VA) })
		}
	case msgEnd:
		if n, ok := missized(e, c); ok {
			c.fail(e, rWireMSG_WIRE_PAY_2, func() (string, string) {
				return fmt.Sprintf("payloads summing to dma_length %d", m.dmaLen), fmt.Sprintf("%d bytes", n)
			})
			return
		}
		e.ok(cWireMSG, c.pt, c.node, false)
	}
}

// msgMTUs returns the path MTUs by which packet k of the message may be
// placed, 0 for each not known: the PICS's, the one the connection's
// FIRST and MIDDLE packets show (flow.mtu), and the distance between the
// va of the message's first two packets, once the second's is judged
// (msgState.stride). When they differ, the packets of the wrong size are
// WIRE-PAY-1 findings of their own, and a packet placed by any of them
// is not failed again.
func msgMTUs(e *engine, c *msgCtx) [3]uint64 {
	var out [3]uint64
	if m := e.pics.Parameters.PathMTU; m != nil {
		out[0] = uint64(*m)
	}
	out[1], out[2] = uint64(c.fl.mtu), c.m.stride
	return out
}

// misplaced reports whether the write's va is not where packet k of its
// message belongs (WIRE-RETH-2), and where it would be: the message's va
// plus the payload bytes of packets 0 to k-1 (c.bytes, known when no
// packet before was trimmed), which is k path MTUs (msgMTUs) when each of
// those carries one. When one of them did not (c.sizeSeen: its size is a
// finding of its own), the sum alone judges nothing: a packet after it
// is not failed for it.
func misplaced(e *engine, c *msgCtx) (string, bool) {
	va, va0, k := c.p.RETH.VA, c.m.va0, uint64(wire.PSNDiff(c.psn, c.m.firstPSN))
	if c.bytesOK && va == va0+c.bytes {
		return "", false
	}
	want := ""
	if c.bytesOK && !c.sizeSeen {
		want = fmt.Sprintf("va 0x%x (start + %d bytes)", va0+c.bytes, c.bytes)
	}
	for _, mtu := range msgMTUs(e, c) {
		switch {
		case mtu == 0:
		case va == va0+k*mtu:
			return "", false
		case want == "":
			want = fmt.Sprintf("va 0x%x (start + %d × path MTU %d)", va0+k*mtu, k, mtu)
		}
	}
	return want, want != ""
}

// missized reports whether the payloads of the message ending now do not
// sum to its dma_length (WIRE-PAY-2), and the bytes they sum to: the
// payloads seen (when none was trimmed), or k path MTUs (msgMTUs) and
// the last packet's, which is the same unless a packet before the last
// had the wrong size, a finding of its own (c.sizeSeen); then either
// summing to dma_length is taken. An ONLY's payload against its
// dma_length, and a packet's beyond it, are the codec's findings
// (sizeDMA), and a last packet whose size is a finding is not judged
// again.
func missized(e *engine, c *msgCtx) (uint64, bool) {
	m, p := c.m, c.p
	k, want := uint64(wire.PSNDiff(c.psn, m.firstPSN)), uint64(m.dmaLen)
	if k == 0 || m.dmaSeen || c.size != sizeOK || p.Trimmed || (m.bytesOK && m.bytes == want) {
		return 0, false
	}
	n, judged := m.bytes, m.bytesOK && !c.sizeSeen
	for _, mtu := range msgMTUs(e, c) {
		if mtu == 0 {
			continue
		}
		x := k*mtu + uint64(len(p.Payload))
		if x == want {
			return 0, false
		}
		if !judged {
			n, judged = x, true
		}
	}
	return n, judged
}

// messageMSN checks WIRE-METH-2 (one MSN per message, +1 per message) and
// REQ-PSN-3 (MSN 0 on the QP's first message).
func messageMSN(e *engine, c *msgCtx) {
	m, p := c.m, c.p
	switch {
	case c.phase == msgStart && c.follows:
		if want := m.prevMSN + 1; p.METH.MSN != want {
			c.fail(e, rWireMETH_WIRE_METH_2, func() (string, string) {
				return fmt.Sprintf("MSN %d (previous message %d + 1)", want, m.prevMSN), fmt.Sprintf("MSN %d", p.METH.MSN)
			})
		} else {
			e.ok(cWireMETH, c.pt, c.node, false)
		}
	case c.phase == msgStart && c.qpFirst:
		if p.METH.MSN != 0 || p.METH.RQMSN != 0 {
			c.fail(e, rWireMETH_REQ_PSN_3, func() (string, string) {
				return "MSN 0 and RQMSN 0 on the QP's first message", fmt.Sprintf("MSN %d, RQMSN %d", p.METH.MSN, p.METH.RQMSN)
			})
		} else {
			e.ok(cWireMETH, c.pt, c.node, false)
		}
	case c.phase == msgInside && p.METH.MSN != m.msn:
		c.fail(e, rWireMETH_WIRE_METH_2, func() (string, string) {
			return fmt.Sprintf("MSN %d, as in the message's first packet", m.msn), fmt.Sprintf("MSN %d", p.METH.MSN)
		})
	}
}

// messageRQMSN checks WIRE-METH-3: RQMSN counts the WriteIMMs before the
// message, so that the responder completes them in send order.
func messageRQMSN(e *engine, c *msgCtx) {
	m, p := c.m, c.p
	switch {
	case c.phase == msgStart && c.follows:
		want, prev := m.prevRQMSN, "a plain write"
		if m.prevIMM {
			want, prev = want+1, "a WriteIMM"
		}
		if p.METH.RQMSN != want {
			c.fail(e, rWIMMOrd_WIRE_METH_3, func() (string, string) {
				return fmt.Sprintf("RQMSN %d (previous message %d, %s)", want, m.prevRQMSN, prev), fmt.Sprintf("RQMSN %d: the responder would complete WriteIMMs out of send order", p.METH.RQMSN)
			})
		} else {
			e.ok(cWIMMOrd, c.pt, c.node, false)
		}
	case c.phase == msgInside && p.METH.RQMSN != m.rqmsn:
		c.fail(e, rWIMMOrd_WIRE_METH_3, func() (string, string) {
			return fmt.Sprintf("RQMSN %d, as in the message's first packet", m.rqmsn), fmt.Sprintf("RQMSN %d", p.METH.RQMSN)
		})
	}
}

// fail records a failure about the message; text gives the finding's
// expected and observed text, when it is kept (failWhy).
func (c *msgCtx) fail(e *engine, req caseReq, text func() (exp, obs string)) {
	e.failWhy(req, c.pt, c.node, 0, func(f *Finding) {
		f.PSN, f.Related = u32p(c.psn), nonZero(c.m.firstFr)
		f.Expected, f.Observed = text()
	})
}
