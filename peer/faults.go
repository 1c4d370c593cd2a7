package peer

import (
	"fmt"
	"slices"
	"strings"

	sm "github.com/openmrc/mrc/statemachine"
)

// The reference peer's own seeded faults: they live in the agent's ingress
// or egress stage, or in its control handlers, and touch packets or
// answers only. Each is a statemachine.Faults value, the one mechanism for
// every seeded fault.
var (
	faultNoRtxFlag         = sm.NewFault("no-rtx-flag", "sends retransmissions without the BTH rtx flag")
	faultBadICRC           = sm.NewFault("bad-icrc", "sends every packet with a wrong ICRC")
	faultIgnoreECN         = sm.NewFault("ignore-ecn", "answers CE-marked packets and probes with m = NONE")
	faultNoProbeAnswer     = sm.NewFault("no-probe-answer", "never answers reliability probes")
	faultIgnoreMVerdict    = sm.NewFault("ignore-m-verdict", "ignores the m verdict (SKIP_ONCE, ALWAYS_SKIP) of SACKs")
	faultIgnorePortStatus  = sm.NewFault("ignore-port-status", "ignores peers' port status updates and keeps using their down planes")
	faultNoEPResponse      = sm.NewFault("no-ep-response", "never answers endpoint requests")
	faultAcceptBadICRC     = sm.NewFault("accept-bad-icrc", "accepts packets whose ICRC is wrong")
	faultNoOORNACK         = sm.NewFault("no-oor-nack", "drops out-of-window PSNs without the PSN_OOR_WINDOW NACK")
	faultImmByteSwap       = sm.NewFault("imm-byte-swap", "sends the immediate data least significant byte first")
	faultFixedSport        = sm.NewFault("fixed-udp-sport", "sends every packet from one UDP source port instead of its EV's")
	faultNoSRv6Decap       = sm.NewFault("no-srv6-decap", "drops SRv6-encapsulated packets instead of processing the inner packet")
	faultIgnoreSkipOnce    = sm.NewFault("ignore-skip-once", "keeps an EV GOOD when a SACK reflecting it says SKIP_ONCE")
	faultSkipOnceRetires   = sm.NewFault("skip-once-retires", "retires an EV (ASSUMED_BAD) on SKIP_ONCE instead of skipping it for the rotation")
	faultIgnoreTrimEV      = sm.NewFault("ignore-trim-ev", "keeps an EV GOOD when a TRIMMED NACK reflects it (treats it as TRIMMED_LASTHOP)")
	faultProbeSkipBad      = sm.NewFault("ignore-probe-skip", "keeps an ASSUMED_BAD EV retired when its probe is answered with SKIP_ONCE")
	faultNoReplacement     = sm.NewFault("no-replacement", "does not replace a retired active EV from its plane's backup set")
	faultReplaceEVNoop     = sm.NewFault("replace-ev-noop", "accepts REPLACE_EV on an ONLINE EV profile but keeps sending on the replaced EVs")
	faultGenRaw            = sm.NewFault("gen-ev-unexpanded", "puts a GEN profile's compact EVs on the wire instead of their expansions")
	faultIgnorePortAdmin   = sm.NewFault("ignore-port-admin", "records a port administratively disabled but keeps sending on it and never tells peers")
	faultNoSolicited       = sm.NewFault("no-solicited-flag", "never sets the BTH se flag, even on a WriteImm posted with IBV_SEND_SOLICITED")
	faultNotifyAny         = sm.NewFault("notify-any", "raises a CQ event on any completion when armed for solicited ones only")
	faultNoPortAsync       = sm.NewFault("no-port-async-event", "raises no IBV_EVENT_PORT_ERR or PORT_ACTIVE when a port goes down or up")
	faultBatchSorted       = sm.NewFault("batch-sorted", "returns an endpoint batch's responses sorted by request id instead of in arrival order")
	faultVersionSwap       = sm.NewFault("version-swapped", "reports current and last supported API versions the wrong way round")
	faultVendorCfgDropped  = sm.NewFault("vendor-cfg-dropped", "accepts MRC_QP_VENDOR_CFG but returns none in query_qp")
	faultAdjSvcTime        = sm.NewFault("adj-svc-time-set", "reports adj_svc_time on endpoint responses though no service time travels")
	faultNoSRv6Encap       = sm.NewFault("no-srv6-encap", "sends the packets of an SRv6 EV profile without the outer SRv6 header")
	faultNoCommEst         = sm.NewFault("no-comm-est", "raises no IBV_EVENT_COMM_EST when a QP in RTR receives its first request packet")
	faultNoQPFatal         = sm.NewFault("no-qp-fatal", "raises no IBV_EVENT_QP_FATAL when an error no completion reports moves a QP to ERROR")
	faultContextAnyVersion = sm.NewFault("context-any-version", "creates a context whatever API version it asks for")
	faultChannelUnwired    = sm.NewFault("channel-unwired", "accepts a completion channel for a QP's CQ but raises its CQ events on the CQ alone, never through the channel")
	faultNoSQDrained       = sm.NewFault("no-sq-drained", "raises no IBV_EVENT_SQ_DRAINED when a QP in SQD has drained its send queue")
	faultRangeUnchecked    = sm.NewFault("ev-range-unchecked", "advertises MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE but takes explicit EVs off one range")
)

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

// Names returns the faults of the set, sorted.
func (s FaultSet) Names() []string { return s.f.Names() }

// Empty reports whether the set seeds no fault.
func (s FaultSet) Empty() bool { return s.f == 0 }

func (s FaultSet) has(f sm.Faults) bool { return s.f&f != 0 }
