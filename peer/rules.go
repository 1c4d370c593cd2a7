package peer

import (
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// ruleSet holds the decisions of the agent that a seeded fault of the
// peer's own can break (faults.go): one function per decision, each the
// specification's rule in specRules. The agent asks a.rules, which is
// specRules unless a fault is seeded (statemachine.BreakRules); each
// seeded fault overrides the one rule it breaks.
type ruleSet struct {
	// acceptsBadICRC: a frame whose ICRC is wrong is dropped (RSP-RCV-1).
	acceptsBadICRC func() bool
	// decapsSRv6: an SRv6-encapsulated packet is processed as its inner
	// packet (WIRE-ENC-3).
	decapsSRv6 func() bool
	// sackVerdict is the m verdict of an arriving SACK (a probe's answer
	// when probe) the requester heeds: the one it carries (EV-ST-2,
	// EV-ST-4, EV-ST-6, EV-ST-8).
	sackVerdict func(m wire.Multipath, probe bool) wire.Multipath
	// nackReason is the reason of an arriving NACK the requester heeds:
	// the one it carries (EV-ST-3).
	nackReason func(r wire.NACKReason) wire.NACKReason
	// sends: every packet a QP or the endpoint builds is sent (RSP-PRB-1,
	// EP-GEN-5, RSP-NACK-4).
	sends func(p *wire.Packet) bool
	// answerVerdict is the m verdict a SACK carries: the one the
	// responder gave, CE marks included (RSP-SACK-3, RSP-PRB-2).
	answerVerdict func(m wire.Multipath) wire.Multipath
	// rtxFlag is the BTH rtx flag of a data packet: set on
	// retransmissions (WIRE-BTH-5).
	rtxFlag func(rtx bool) bool
	// udpSrcPort is a packet's UDP source port: its EV's (WIRE-UDP-2).
	udpSrcPort func(port uint16) uint16
	// seFlag is the BTH se flag: set on a WriteImm posted with
	// IBV_SEND_SOLICITED (CTL-CQ-2).
	seFlag func(se bool) bool
	// encapsSRv6: an SRv6 EV profile's packets carry the outer SRv6
	// header (CTL-EVX-6).
	encapsSRv6 func() bool
	// seal finishes an encoded frame b of packet p: it is sent as
	// encoded, its ICRC right and its immediate data in network order
	// (WIRE-ICRC-1, WIRE-GEN-1).
	seal func(a *Agent, b []byte, p *wire.Packet)
	// enabledPorts is the port-status mask m less the ports administratively
	// disabled: no packet leaves on those (CTL-PORT-2).
	enabledPorts func(c *statemachine.Controller, m uint32) uint32
	// heedsPortStatus: a peer's port status update stops the use of its
	// down planes (EV-PORT-2).
	heedsPortStatus func() bool
	// raisesAsync: every asynchronous event the device generates is raised
	// (CTL-AEV-2, CTL-AEV-4, CTL-AEV-5, CTL-AEV-6).
	raisesAsync func(t statemachine.AsyncEventType) bool
	// replacesEV: a retired active EV is replaced from its plane's backup
	// set (EV-REP-1, EV-SET-5).
	replacesEV func() bool
	// solicitedOnly is how a CQ is armed: for solicited completions only
	// when asked so (CTL-CQ-1).
	solicitedOnly func(asked bool) bool
	// versions are the API versions query_version reports (CTL-VER-1).
	versions func(v statemachine.Versions) statemachine.Versions
	// adjSvcTime is an endpoint response's adj_svc_time: set when a
	// service time travels (CTL-SVC-1).
	adjSvcTime func(set bool) bool
	// orderBatch orders an endpoint batch's responses: in arrival order,
	// as they are (CTL-BAT-3).
	orderBatch func(rs []control.EPResponse)
	// reportsVendorCfg: query_qp returns the MRC_QP_VENDOR_CFG set
	// (CTL-QPH-3).
	reportsVendorCfg func() bool
	// checksContextVersion: a context is created for a supported API
	// version only (CTL-VER-2).
	checksContextVersion func() bool
	// appliesReplaceEV: REPLACE_EV on an ONLINE EV profile is applied
	// (CTL-OP-3).
	appliesReplaceEV func() bool
	// expandsGenEVs: a GEN profile's EVs go on the wire expanded
	// (CTL-GEN-3).
	expandsGenEVs func() bool
	// wiresChannel: a CQ's events go through its completion channel
	// (CTL-CQ-5).
	wiresChannel func() bool
	// checksExplicitRange: an EXP profile's EVs are one contiguous range
	// where the device advertises MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE, and
	// the device advertises it only where it checks it (CTL-OP-6).
	checksExplicitRange func() bool
}

// specRules are the specification's rules.
var specRules = ruleSet{
	acceptsBadICRC:       func() bool { return false },
	decapsSRv6:           func() bool { return true },
	sackVerdict:          func(m wire.Multipath, _ bool) wire.Multipath { return m },
	nackReason:           func(r wire.NACKReason) wire.NACKReason { return r },
	sends:                func(*wire.Packet) bool { return true },
	answerVerdict:        func(m wire.Multipath) wire.Multipath { return m },
	rtxFlag:              func(rtx bool) bool { return rtx },
	udpSrcPort:           func(port uint16) uint16 { return port },
	seFlag:               func(se bool) bool { return se },
	encapsSRv6:           func() bool { return true },
	seal:                 func(*Agent, []byte, *wire.Packet) {},
	enabledPorts:         func(c *statemachine.Controller, m uint32) uint32 { return c.PortMask(m) },
	heedsPortStatus:      func() bool { return true },
	raisesAsync:          func(statemachine.AsyncEventType) bool { return true },
	replacesEV:           func() bool { return true },
	solicitedOnly:        func(asked bool) bool { return asked },
	versions:             func(v statemachine.Versions) statemachine.Versions { return v },
	adjSvcTime:           func(set bool) bool { return set },
	orderBatch:           func([]control.EPResponse) {},
	reportsVendorCfg:     func() bool { return true },
	checksContextVersion: func() bool { return true },
	appliesReplaceEV:     func() bool { return true },
	expandsGenEVs:        func() bool { return true },
	wiresChannel:         func() bool { return true },
	checksExplicitRange:  func() bool { return true },
}

// rulesOf returns the rules under the seeded faults s.
func rulesOf(s FaultSet) *ruleSet {
	if r := statemachine.BreakRules(s.f, specRules); r != nil {
		return r
	}
	return &specRules
}
