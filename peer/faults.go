package peer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openmrc/mrc/statemachine"
)

// Fault is one seeded bug of the reference peer, for showing that the
// conformance suite catches broken implementations. Some are statemachine
// faults (statemachine.Faults); the others live in the agent's ingress or
// egress stage and touch packets only.
type Fault struct {
	Name string
	Doc  string
	sm   statemachine.Faults
	ag   agentFault
}

type agentFault uint32

const (
	agNoRtxFlag agentFault = 1 << iota
	agBadICRC
	agIgnoreECN
	agNoProbeAnswer
	agIgnoreMVerdict
	agIgnorePortStatus
	agNoEPResponse
	agAcceptBadICRC
	agNoOORNACK
	agImmByteSwap
	agFixedSport
	agNoSRv6Decap
	agIgnoreSkipOnce
	agSkipOnceRetires
	agIgnoreTrimEV
	agProbeSkipBad
	agNoReplacement
	agReplaceEVNoop
	agGenRaw
	agIgnorePortAdmin
	agNoSolicited
	agNotifyAny
	agNoPortAsync
	agBatchSorted
	agVersionSwap
	agVendorCfgDropped
	agAdjSvcTime
	agNoSRv6Encap
	agNoCommEst
	agNoQPFatal
	agContextAnyVersion
	agChannelUnwired
)

// Faults lists every seeded fault, by name.
var Faults = []Fault{
	{Name: "go-back-n", Doc: "retransmits every outstanding PSN from a lost one on, acknowledged or not", sm: statemachine.FaultGoBackN},
	{Name: "ignore-trim", Doc: "ignores TRIMMED NACKs (no retransmission until the timer)", sm: statemachine.FaultIgnoreTrim},
	{Name: "reuse-nacked-ev", Doc: "retransmits a NACKed PSN on the EV the NACK named", sm: statemachine.FaultReuseNACKedEV},
	{Name: "early-wimm", Doc: "completes a WriteIMM when its last packet arrives, before earlier PSNs", sm: statemachine.FaultEarlyWIMM},
	{Name: "place-duplicates", Doc: "places duplicate packets again", sm: statemachine.FaultPlaceDuplicates},
	{Name: "beyond-mpr", Doc: "sends PSNs up to twice the MPR window ahead of the cumulative ACK", sm: statemachine.FaultBeyondMPR},
	{Name: "no-restore", Doc: "never returns an ASSUMED_BAD EV to GOOD, whatever its probes say", sm: statemachine.FaultNoRestore},
	{Name: "no-hold-off", Doc: "retransmits at once after a resource NACK instead of waiting base_rtt", sm: statemachine.FaultNoHoldOff},
	{Name: "no-rtx-flag", Doc: "sends retransmissions without the BTH rtx flag", ag: agNoRtxFlag},
	{Name: "bad-icrc", Doc: "sends every packet with a wrong ICRC", ag: agBadICRC},
	{Name: "ignore-ecn", Doc: "answers CE-marked packets and probes with m = NONE", ag: agIgnoreECN},
	{Name: "no-probe-answer", Doc: "never answers reliability probes", ag: agNoProbeAnswer},
	{Name: "ignore-m-verdict", Doc: "ignores the m verdict (SKIP_ONCE, ALWAYS_SKIP) of SACKs", ag: agIgnoreMVerdict},
	{Name: "ignore-port-status", Doc: "ignores peers' port status updates and keeps using their down planes", ag: agIgnorePortStatus},
	{Name: "no-ep-response", Doc: "never answers endpoint requests", ag: agNoEPResponse},
	{Name: "accept-bad-icrc", Doc: "accepts packets whose ICRC is wrong", ag: agAcceptBadICRC},
	{Name: "no-oor-nack", Doc: "drops out-of-window PSNs without the PSN_OOR_WINDOW NACK", ag: agNoOORNACK},
	{Name: "imm-byte-swap", Doc: "sends the immediate data least significant byte first", ag: agImmByteSwap},
	{Name: "fixed-udp-sport", Doc: "sends every packet from one UDP source port instead of its EV's", ag: agFixedSport},
	{Name: "no-srv6-decap", Doc: "drops SRv6-encapsulated packets instead of processing the inner packet", ag: agNoSRv6Decap},
	{Name: "ignore-skip-once", Doc: "keeps an EV GOOD when a SACK reflecting it says SKIP_ONCE", ag: agIgnoreSkipOnce},
	{Name: "skip-once-retires", Doc: "retires an EV (ASSUMED_BAD) on SKIP_ONCE instead of skipping it for the rotation", ag: agSkipOnceRetires},
	{Name: "ignore-trim-ev", Doc: "keeps an EV GOOD when a TRIMMED NACK reflects it (treats it as TRIMMED_LASTHOP)", ag: agIgnoreTrimEV},
	{Name: "ignore-probe-skip", Doc: "keeps an ASSUMED_BAD EV retired when its probe is answered with SKIP_ONCE", ag: agProbeSkipBad},
	{Name: "no-replacement", Doc: "does not replace a retired active EV from its plane's backup set", ag: agNoReplacement},
	{Name: "replace-ev-noop", Doc: "accepts REPLACE_EV on an ONLINE EV profile but keeps sending on the replaced EVs", ag: agReplaceEVNoop},
	{Name: "gen-ev-unexpanded", Doc: "puts a GEN profile's compact EVs on the wire instead of their expansions", ag: agGenRaw},
	{Name: "ignore-port-admin", Doc: "records a port administratively disabled but keeps sending on it and never tells peers", ag: agIgnorePortAdmin},
	{Name: "no-solicited-flag", Doc: "never sets the BTH se flag, even on a WriteImm posted with IBV_SEND_SOLICITED", ag: agNoSolicited},
	{Name: "notify-any", Doc: "raises a CQ event on any completion when armed for solicited ones only", ag: agNotifyAny},
	{Name: "no-port-async-event", Doc: "raises no IBV_EVENT_PORT_ERR or PORT_ACTIVE when a port goes down or up", ag: agNoPortAsync},
	{Name: "batch-sorted", Doc: "returns an endpoint batch's responses sorted by request id instead of in arrival order", ag: agBatchSorted},
	{Name: "version-swapped", Doc: "reports current and last supported API versions the wrong way round", ag: agVersionSwap},
	{Name: "vendor-cfg-dropped", Doc: "accepts MRC_QP_VENDOR_CFG but returns none in query_qp", ag: agVendorCfgDropped},
	{Name: "adj-svc-time-set", Doc: "reports adj_svc_time on endpoint responses though no service time travels", ag: agAdjSvcTime},
	{Name: "no-srv6-encap", Doc: "sends the packets of an SRv6 EV profile without the outer SRv6 header", ag: agNoSRv6Encap},
	{Name: "no-comm-est", Doc: "raises no IBV_EVENT_COMM_EST when a QP in RTR receives its first request packet", ag: agNoCommEst},
	{Name: "no-qp-fatal", Doc: "raises no IBV_EVENT_QP_FATAL when an error no completion reports moves a QP to ERROR", ag: agNoQPFatal},
	{Name: "context-any-version", Doc: "creates a context whatever API version it asks for", ag: agContextAnyVersion},
	{Name: "channel-unwired", Doc: "accepts a completion channel for a QP's CQ but raises its CQ events on the CQ alone, never through the channel", ag: agChannelUnwired},
}

// FaultSet is a set of seeded faults; the zero value is a correct peer.
type FaultSet struct {
	sm    statemachine.Faults
	ag    agentFault
	names []string
}

// UnknownFaultError names a fault that does not exist.
type UnknownFaultError struct{ Name string }

func (e *UnknownFaultError) Error() string {
	return fmt.Sprintf("peer: unknown fault %q (known: %s)", e.Name, strings.Join(FaultNames(), ", "))
}

// FaultNames returns the names of every fault.
func FaultNames() []string {
	out := make([]string, len(Faults))
	for i, f := range Faults {
		out[i] = f.Name
	}
	return out
}

// ParseFaults returns the set of the named faults.
func ParseFaults(names ...string) (FaultSet, error) {
	var s FaultSet
	for _, n := range names {
		i := slices.IndexFunc(Faults, func(f Fault) bool { return f.Name == n })
		if i < 0 {
			return FaultSet{}, &UnknownFaultError{Name: n}
		}
		f := Faults[i]
		s.sm |= f.sm
		s.ag |= f.ag
		if !slices.Contains(s.names, n) {
			s.names = append(s.names, n)
		}
	}
	slices.Sort(s.names)
	return s, nil
}

// Names returns the faults of the set, sorted.
func (s FaultSet) Names() []string { return slices.Clone(s.names) }

// Empty reports whether the set seeds no fault.
func (s FaultSet) Empty() bool { return s.sm == 0 && s.ag == 0 }

func (s FaultSet) has(f agentFault) bool { return s.ag&f != 0 }
