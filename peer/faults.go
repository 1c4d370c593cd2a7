package peer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openmrc/mrc/control"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The reference peer's own seeded faults: they live in the agent's ingress
// or egress stage, or in its control handlers, and touch packets or
// answers only. Each is a statemachine.Faults value, the one mechanism for
// every seeded fault, overriding the one rule of rules.go it breaks.
var (
	faultNoRtxFlag = sm.NewFault("no-rtx-flag", "WIRE-BTH-5", "sends retransmissions without the BTH rtx flag",
		func(r *ruleSet) { r.rtxFlag = func(bool) bool { return false } })
	faultBadICRC = sm.NewFault("bad-icrc", "WIRE-ICRC-1", "sends every packet with a wrong ICRC",
		func(r *ruleSet) {
			seal := r.seal
			r.seal = func(a *Agent, b []byte, p *wire.Packet) {
				if seal(a, b, p); !p.Trimmed {
					b[len(b)-1] ^= 0xA5
				}
			}
		})
	faultIgnoreECN = sm.NewFault("ignore-ecn", "RSP-SACK-3", "answers CE-marked packets and probes with m = NONE",
		func(r *ruleSet) { r.answerVerdict = func(wire.Multipath) wire.Multipath { return wire.MNone } })
	faultNoProbeAnswer = sm.NewFault("no-probe-answer", "RSP-PRB-1", "never answers reliability probes",
		func(r *ruleSet) {
			r.sends = unless(r.sends, func(p *wire.Packet) bool { return p.BTH.Opcode == wire.OpSACK && p.SETH.PR })
		})
	faultIgnoreMVerdict = sm.NewFault("ignore-m-verdict", "EV-ST-4", "ignores the m verdict (SKIP_ONCE, ALWAYS_SKIP) of SACKs",
		func(r *ruleSet) { r.sackVerdict = verdictAs(r.sackVerdict, false, 0, wire.MNone, true) })
	faultIgnorePortStatus = sm.NewFault("ignore-port-status", "EV-PORT-2", "ignores peers' port status updates and keeps using their down planes",
		func(r *ruleSet) { r.heedsPortStatus = func() bool { return false } })
	faultNoEPResponse = sm.NewFault("no-ep-response", "EP-GEN-5", "never answers endpoint requests",
		func(r *ruleSet) {
			r.sends = unless(r.sends, func(p *wire.Packet) bool { return p.BTH.Opcode == wire.OpEndpointResp })
		})
	faultAcceptBadICRC = sm.NewFault("accept-bad-icrc", "RSP-RCV-1", "accepts packets whose ICRC is wrong",
		func(r *ruleSet) { r.acceptsBadICRC = func() bool { return true } })
	faultNoOORNACK = sm.NewFault("no-oor-nack", "RSP-NACK-4", "drops out-of-window PSNs without the PSN_OOR_WINDOW NACK",
		func(r *ruleSet) {
			r.sends = unless(r.sends, func(p *wire.Packet) bool {
				return p.BTH.Opcode == wire.OpNACK && p.NETH.Reason == wire.NACKPSNOutOfWindow
			})
		})
	faultImmByteSwap = sm.NewFault("imm-byte-swap", "WIRE-GEN-1", "sends the immediate data least significant byte first",
		func(r *ruleSet) {
			seal := r.seal
			r.seal = func(a *Agent, b []byte, p *wire.Packet) {
				if seal(a, b, p); p.BTH.Opcode.HasImm() {
					a.swapImm(b)
				}
			}
		})
	faultFixedSport = sm.NewFault("fixed-udp-sport", "WIRE-UDP-2", "sends every packet from one UDP source port instead of its EV's",
		func(r *ruleSet) { r.udpSrcPort = func(uint16) uint16 { return 0xC0DE } })
	faultNoSRv6Decap = sm.NewFault("no-srv6-decap", "WIRE-ENC-3", "drops SRv6-encapsulated packets instead of processing the inner packet",
		func(r *ruleSet) { r.decapsSRv6 = func() bool { return false } })
	faultIgnoreSkipOnce = sm.NewFault("ignore-skip-once", "EV-ST-2", "keeps an EV GOOD when a SACK reflecting it says SKIP_ONCE",
		func(r *ruleSet) { r.sackVerdict = verdictAs(r.sackVerdict, false, wire.MSkipOnce, wire.MNone, false) })
	faultSkipOnceRetires = sm.NewFault("skip-once-retires", "EV-ST-6", "retires an EV (ASSUMED_BAD) on SKIP_ONCE instead of skipping it for the rotation",
		func(r *ruleSet) {
			r.sackVerdict = verdictAs(r.sackVerdict, false, wire.MSkipOnce, wire.MAlwaysSkip, false)
		})
	faultIgnoreTrimEV = sm.NewFault("ignore-trim-ev", "EV-ST-3", "keeps an EV GOOD when a TRIMMED NACK reflects it (treats it as TRIMMED_LASTHOP)",
		func(r *ruleSet) {
			r.nackReason = func(n wire.NACKReason) wire.NACKReason {
				if n == wire.NACKTrimmed {
					return wire.NACKTrimmedLastHop
				}
				return n
			}
		})
	faultProbeSkipBad = sm.NewFault("ignore-probe-skip", "EV-ST-8", "keeps an ASSUMED_BAD EV retired when its probe is answered with SKIP_ONCE",
		func(r *ruleSet) {
			r.sackVerdict = verdictAs(r.sackVerdict, true, wire.MSkipOnce, wire.MAlwaysSkip, false)
		})
	faultNoReplacement = sm.NewFault("no-replacement", "EV-REP-1", "does not replace a retired active EV from its plane's backup set",
		func(r *ruleSet) { r.replacesEV = func() bool { return false } })
	faultReplaceEVNoop = sm.NewFault("replace-ev-noop", "CTL-OP-3", "accepts REPLACE_EV on an ONLINE EV profile but keeps sending on the replaced EVs",
		func(r *ruleSet) { r.appliesReplaceEV = func() bool { return false } })
	faultGenRaw = sm.NewFault("gen-ev-unexpanded", "CTL-GEN-3", "puts a GEN profile's compact EVs on the wire instead of their expansions",
		func(r *ruleSet) { r.expandsGenEVs = func() bool { return false } })
	faultIgnorePortAdmin = sm.NewFault("ignore-port-admin", "CTL-PORT-2", "records a port administratively disabled but keeps sending on it and never tells peers",
		func(r *ruleSet) { r.enabledPorts = func(_ *sm.Controller, m uint32) uint32 { return m } })
	faultNoSolicited = sm.NewFault("no-solicited-flag", "CTL-CQ-2", "never sets the BTH se flag, even on a WriteImm posted with IBV_SEND_SOLICITED",
		func(r *ruleSet) { r.seFlag = func(bool) bool { return false } })
	faultNotifyAny = sm.NewFault("notify-any", "CTL-CQ-1", "raises a CQ event on any completion when armed for solicited ones only",
		func(r *ruleSet) { r.solicitedOnly = func(bool) bool { return false } })
	faultNoPortAsync = sm.NewFault("no-port-async-event", "CTL-AEV-2", "raises no IBV_EVENT_PORT_ERR or PORT_ACTIVE when a port goes down or up",
		func(r *ruleSet) { r.raisesAsync = unlessEvent(r.raisesAsync, sm.AsyncPortErr, sm.AsyncPortActive) })
	faultBatchSorted = sm.NewFault("batch-sorted", "CTL-BAT-3", "returns an endpoint batch's responses sorted by request id instead of in arrival order",
		func(r *ruleSet) {
			r.orderBatch = func(rs []control.EPResponse) {
				slices.SortFunc(rs, func(x, y control.EPResponse) int { return int(x.ReqID) - int(y.ReqID) })
			}
		})
	faultVersionSwap = sm.NewFault("version-swapped", "CTL-VER-1", "reports current and last supported API versions the wrong way round",
		func(r *ruleSet) {
			r.versions = func(v sm.Versions) sm.Versions {
				v.Current, v.LastSupported = v.LastSupported, v.Current
				return v
			}
		})
	faultVendorCfgDropped = sm.NewFault("vendor-cfg-dropped", "CTL-QPH-3", "accepts MRC_QP_VENDOR_CFG but returns none in query_qp",
		func(r *ruleSet) { r.reportsVendorCfg = func() bool { return false } })
	faultAdjSvcTime = sm.NewFault("adj-svc-time-set", "CTL-SVC-1", "reports adj_svc_time on endpoint responses though no service time travels",
		func(r *ruleSet) { r.adjSvcTime = func(bool) bool { return true } })
	faultNoSRv6Encap = sm.NewFault("no-srv6-encap", "CTL-EVX-6", "sends the packets of an SRv6 EV profile without the outer SRv6 header",
		func(r *ruleSet) { r.encapsSRv6 = func() bool { return false } })
	faultNoCommEst = sm.NewFault("no-comm-est", "CTL-AEV-4", "raises no IBV_EVENT_COMM_EST when a QP in RTR receives its first request packet",
		func(r *ruleSet) { r.raisesAsync = unlessEvent(r.raisesAsync, sm.AsyncCommEst) })
	faultNoQPFatal = sm.NewFault("no-qp-fatal", "CTL-AEV-5", "raises no IBV_EVENT_QP_FATAL when an error no completion reports moves a QP to ERROR",
		func(r *ruleSet) { r.raisesAsync = unlessEvent(r.raisesAsync, sm.AsyncQPFatal) })
	faultContextAnyVersion = sm.NewFault("context-any-version", "CTL-VER-2", "creates a context whatever API version it asks for",
		func(r *ruleSet) { r.checksContextVersion = func() bool { return false } })
	faultChannelUnwired = sm.NewFault("channel-unwired", "CTL-CQ-5", "accepts a completion channel for a QP's CQ but raises its CQ events on the CQ alone, never through the channel",
		func(r *ruleSet) { r.wiresChannel = func() bool { return false } })
	faultNoSQDrained = sm.NewFault("no-sq-drained", "CTL-AEV-6", "raises no IBV_EVENT_SQ_DRAINED when a QP in SQD has drained its send queue",
		func(r *ruleSet) { r.raisesAsync = unlessEvent(r.raisesAsync, sm.AsyncSQDrained) })
	faultRangeUnchecked = sm.NewFault("ev-range-unchecked", "CTL-OP-6", "advertises MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE but takes explicit EVs off one range",
		func(r *ruleSet) { r.checksExplicitRange = func() bool { return false } })
)

// unless is the rule sends that also holds back the packets drop picks.
func unless(sends, drop func(*wire.Packet) bool) func(*wire.Packet) bool {
	return func(p *wire.Packet) bool { return !drop(p) && sends(p) }
}

// unlessEvent is the rule raises that also keeps back events of the types ts.
func unlessEvent(raises func(sm.AsyncEventType) bool, ts ...sm.AsyncEventType) func(sm.AsyncEventType) bool {
	return func(t sm.AsyncEventType) bool { return !slices.Contains(ts, t) && raises(t) }
}

// verdictAs is the rule heeds that takes the verdict from of a SACK (a
// probe's answer when probe) for to; all makes it take every verdict.
func verdictAs(heeds func(wire.Multipath, bool) wire.Multipath, probe bool, from, to wire.Multipath, all bool) func(wire.Multipath, bool) wire.Multipath {
	return func(m wire.Multipath, pr bool) wire.Multipath {
		if pr == probe && (all || m == from) {
			return to
		}
		return heeds(m, pr)
	}
}

// Faults lists every fault the peer can seed (mrc-peer --fault), in the
// order the detection matrix shows them: the statemachine's that the
// conformance suite must catch, then the peer's own.
var Faults = []sm.Faults{
	sm.FaultGoBackN, sm.FaultIgnoreTrim, sm.FaultReuseNACKedEV, sm.FaultEarlyWIMM,
	sm.FaultPlaceDuplicates, sm.FaultBeyondMPR, sm.FaultNoRestore, sm.FaultNoHoldOff,
	faultNoRtxFlag, faultBadICRC, faultIgnoreECN, faultNoProbeAnswer, faultIgnoreMVerdict, faultIgnorePortStatus,
	faultNoEPResponse, faultAcceptBadICRC, faultNoOORNACK, faultImmByteSwap, faultFixedSport, faultNoSRv6Decap,
	faultIgnoreSkipOnce, faultSkipOnceRetires, faultIgnoreTrimEV, faultProbeSkipBad, faultNoReplacement,
	faultReplaceEVNoop, faultGenRaw, faultIgnorePortAdmin, faultNoSolicited, faultNotifyAny, faultNoPortAsync,
	faultBatchSorted, faultVersionSwap, faultVendorCfgDropped, faultAdjSvcTime, faultNoSRv6Encap,
	faultNoCommEst, faultNoQPFatal, faultContextAnyVersion, faultChannelUnwired, faultNoSQDrained, faultRangeUnchecked,
	sm.FaultIgnoreSACKedUnexp,
}

// FaultSet is a set of seeded faults; the zero value is a correct peer.
type FaultSet struct{ f sm.Faults }

// UnknownFaultError names a fault that does not exist.
type UnknownFaultError struct{ Name string }

func (e *UnknownFaultError) Error() string {
	return fmt.Sprintf("peer: unknown fault %q (known: %s)", e.Name, strings.Join(FaultNames(), ", "))
}

// FaultNames returns the names of every fault.
func FaultNames() []string {
	out := make([]string, len(Faults))
	for i, f := range Faults {
		out[i] = f.Name()
	}
	return out
}

// ParseFaults returns the set of the named faults.
func ParseFaults(names ...string) (FaultSet, error) {
	var s FaultSet
	for _, n := range names {
		i := slices.IndexFunc(Faults, func(f sm.Faults) bool { return f.Name() == n })
		if i < 0 {
			return FaultSet{}, &UnknownFaultError{Name: n}
		}
		s.f |= Faults[i]
	}
	return s, nil
}

// Set adds the fault called name: a FaultSet is the --fault flag of
// mrc-peer and mrc-conform run (flag.Value), repeatable.
func (s *FaultSet) Set(name string) error {
	f, err := ParseFaults(name)
	if err != nil {
		return err
	}
	s.f |= f.f
	return nil
}

// String names the faults of the set, sorted, joined by ",".
func (s *FaultSet) String() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Names(), ",")
}

// Names returns the faults of the set, sorted.
func (s FaultSet) Names() []string { return s.f.Names() }

// Empty reports whether the set seeds no fault.
func (s FaultSet) Empty() bool { return s.f == 0 }
