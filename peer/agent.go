package peer

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Config configures an Agent.
type Config struct {
	// MACs are the MAC addresses of the node's ports, in port order
	// (port n = MACs[n-1], plane n-1). At least one.
	MACs [][6]byte
	// IP is the node's address on every port.
	IP netip.Addr
	// Seed seeds every QP's random choices.
	Seed uint64
	// Faults seeds bugs; the zero value is the reference behaviour.
	Faults FaultSet
	// Profile is the wire profile; nil means the default (spec.OrDefault).
	Profile *spec.Profile
	// EVMode is the EV wire format.
	EVMode wire.EVMode
	// Implementation identifies the agent in hello.
	Implementation control.Implementation
	// Features are the PICS features hello declares; nil means
	// DefaultFeatures.
	Features []string
	// ExplicitRange makes the device advertise and enforce
	// MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE: an EXP profile's EV array is one
	// contiguous range (CTL-OP-6; mrc-peer --explicit-range). Off, the
	// reference takes any explicit EVs.
	ExplicitRange bool
	// Trace, when set, receives every statemachine event (mrc-peer
	// --trace).
	Trace func(statemachine.Event)
}

// DefaultFeatures are the PICS features the reference declares.
var DefaultFeatures = []string{"endpoint_ops", "ipv4", "trim_nack"}

// Tx is a frame the agent transmits on a plane (0-based).
type Tx struct {
	Plane int
	Frame []byte
}

// Device limits the agent advertises.
const (
	maxMPR      = 255
	maxWIMM     = 1024
	maxQueue    = 4096
	maxMemory   = 256 << 20
	maxQPs      = 1024
	maxProfiles = 64
	maxMRs      = 1024
	firstQPN    = 0x100
	psuRetry    = statemachine.Millisecond // EP-PSU-4: at most once per millisecond
	psuTries    = 10
	psuIDBase   = 0xF000 // request ids of NIC-initiated port status updates
	// epTimeout is rsp_timeout: how long an endpoint request waits for its
	// answer. Generous, so that a slow peer's answers still count.
	epTimeout = statemachine.Second
)

// counters of a QP or of the node. The JSON names are the counter names
// of control-protocol.md.
type counters struct {
	TxPackets  uint64 `json:"tx_packets"`
	TxData     uint64 `json:"tx_data"`
	TxRetx     uint64 `json:"tx_retransmissions"`
	TxSACKs    uint64 `json:"tx_sacks"`
	TxNACKs    uint64 `json:"tx_nacks"`
	TxACKs     uint64 `json:"tx_acks"`
	TxProbes   uint64 `json:"tx_probes"`
	TxEP       uint64 `json:"tx_endpoint"`
	RxPackets  uint64 `json:"rx_packets"`
	RxDropped  uint64 `json:"rx_dropped"`
	RxBadICRC  uint64 `json:"rx_bad_icrc"`
	RxUnknown  uint64 `json:"rx_unknown_qp"`
	RxDup      uint64 `json:"rx_duplicates"`
	RxIgnored  uint64 `json:"rx_ignored"`
	Timeouts   uint64 `json:"timeouts"`
	Retries    uint64 `json:"retries"`
	PlacedByte uint64 `json:"placed_bytes"`
}

func (c *counters) asMap() map[string]uint64 {
	b, _ := json.Marshal(c)
	m := map[string]uint64{}
	_ = json.Unmarshal(b, &m)
	return m
}

type qpEntry struct {
	qpn      uint32
	create   control.CreateQPParams
	node     *statemachine.Node
	qp       *statemachine.QP
	initAttr statemachine.Attr
	initMask statemachine.AttrMask
	recvs    []uint64 // receive WRs posted before RTR, replayed on the real QP
	peer     netip.Addr
	peerMAC  [6]byte
	cq       []control.Completion // at most MaxCQEntries
	cqFull   bool                 // a completion was lost to a full CQ since the last poll
	c        counters
	notify   statemachine.CQNotify
	channel  *statemachine.CompChannel // the completion channel the QP's CQ is on, if any
}

type psuPending struct {
	peer   netip.Addr
	mac    [6]byte
	mask   uint32
	next   statemachine.Time
	tries  int
	reqID  uint16
	answer bool
}

// Agent is one reference MRC node. It is not safe for concurrent use.
type Agent struct {
	cfg    Config
	rules  *ruleSet // the specification's, but for the seeded faults (Config.Faults)
	codec  *wire.Codec
	ports  int
	evp    map[uint64]statemachine.EVProfile
	ccp    map[uint64]statemachine.CCProfile
	mrs    []*region
	nextVA uint64
	memory uint64
	qps    map[uint32]*qpEntry
	order  []uint32
	qpSeq  uint32 // QPs created since the agent started: numbers are not reused after reset
	ep     *statemachine.Endpoint
	local  uint32
	remote map[netip.Addr]uint32    // remote port masks, at most MaxRemotePeers (remotePortMask)
	neigh  []map[netip.Addr][6]byte // per plane: learned MAC of each peer
	psu    []psuPending
	psuID  uint16
	epRsp  []control.EPResponse
	epTO   []uint16
	out    statemachine.Output
	tx     []Tx
	pkt    wire.Packet
	viol   []wire.Violation
	node   counters
	curSrc netip.Addr
	cur    *counters // counters of the QP whose step is being collected
	ctl    *statemachine.Controller
	ctlEVs map[uint64]bool // EV profiles a.ctl put in evp
	async  statemachine.AsyncQueue
	lastUp uint32 // the local port mask last given to QPs, for port events
	bat    map[uint32]*statemachine.EPBatch
	batSeq uint32
	hints  *statemachine.QPHints
	cqHeld int // completions in all CQs, at most MaxCQEntriesTotal
	ctxs   map[uint32]*statemachine.Context
	ctxSeq uint32
	chans  map[uint32]*statemachine.CompChannel
	chSeq  uint32
}

// ConfigError reports a bad Config.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return "peer: " + e.Msg }

// New returns an agent in its initial state (as after reset).
func New(cfg Config) (*Agent, error) {
	if len(cfg.MACs) == 0 || len(cfg.MACs) > statemachine.MaxPlanes {
		return nil, &ConfigError{fmt.Sprintf("%d ports: want 1 to %d", len(cfg.MACs), statemachine.MaxPlanes)}
	}
	if !cfg.IP.IsValid() {
		return nil, &ConfigError{"an IP address is required"}
	}
	cfg.Profile = spec.OrDefault(cfg.Profile)
	c, err := wire.NewCodec(*cfg.Profile)
	if err != nil {
		return nil, &ConfigError{err.Error()}
	}
	if cfg.Features == nil {
		cfg.Features = DefaultFeatures
	}
	a := &Agent{cfg: cfg, rules: rulesOf(cfg.Faults), codec: c, ports: len(cfg.MACs)}
	a.out.TracePackets = true
	if err := a.reset(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Agent) reset() error {
	ep, err := statemachine.NewEndpoint(statemachine.EndpointConfig{Profile: a.cfg.Profile, SrcMAC: a.cfg.MACs[0],
		SrcIP: a.cfg.IP, EVMode: a.cfg.EVMode, Timeout: epTimeout})
	if err != nil {
		return &ConfigError{err.Error()}
	}
	a.ep = ep
	dev := statemachine.DefaultDeviceAttr(a.ports)
	dev.EVMaxProfiles, dev.CCMaxProfiles = maxProfiles, maxProfiles
	if a.cfg.ExplicitRange && a.rules.checksExplicitRange() {
		dev.OptAttr |= statemachine.OptEVExplicitRange
	}
	if a.ctl, err = statemachine.NewController(dev, statemachine.CtlPolicy{}); err != nil {
		return &ConfigError{err.Error()}
	}
	a.ctlEVs = map[uint64]bool{}
	a.async, a.bat = statemachine.AsyncQueue{}, map[uint32]*statemachine.EPBatch{}
	a.hints = statemachine.NewQPHints(MaxQPHints)
	a.ctxs = map[uint32]*statemachine.Context{}
	a.chans = map[uint32]*statemachine.CompChannel{}
	a.evp = map[uint64]statemachine.EVProfile{}
	a.ccp = map[uint64]statemachine.CCProfile{}
	a.mrs, a.nextVA, a.memory = nil, 0x7f00_0000_0000, 0
	a.qps, a.order, a.cqHeld = map[uint32]*qpEntry{}, nil, 0
	a.local = (1<<a.ports - 1) << 1
	a.lastUp = a.local
	a.remote = map[netip.Addr]uint32{}
	a.neigh = make([]map[netip.Addr][6]byte, a.ports)
	for i := range a.neigh {
		a.neigh[i] = map[netip.Addr][6]byte{}
	}
	a.psu, a.psuID, a.epRsp, a.epTO = nil, 0, nil, nil
	a.out.Reset()
	a.tx = a.tx[:0]
	a.node = counters{}
	return nil
}

// Faults returns the agent's seeded faults.
func (a *Agent) Faults() FaultSet { return a.cfg.Faults }

// TakeTx appends the frames waiting to be sent to dst and forgets them.
func (a *Agent) TakeTx(dst []Tx) []Tx {
	dst = append(dst, a.tx...)
	clear(a.tx)
	a.tx = a.tx[:0]
	return dst
}

// Handler returns a control.HandlerFunc that runs each request at the
// time now() returns.
func (a *Agent) Handler(now func() statemachine.Time) control.HandlerFunc {
	return func(method string, params json.RawMessage) (any, error) { return a.Handle(now(), method, params) }
}

// Handle answers one control request at time now.
func (a *Agent) Handle(now statemachine.Time, method string, params json.RawMessage) (any, error) {
	defer a.collect()
	h, ok := methods[method]
	if !ok {
		return nil, control.Errorf(control.CodeUnknownMethod, "%q", method)
	}
	return h(a, now, params)
}

func (a *Agent) hello(p *control.HelloParams) (any, error) {
	if p.Version != control.Version {
		return nil, control.Errorf(control.CodeVersion, "this peer speaks version %d, the client %d", control.Version, p.Version)
	}
	r := control.HelloResult{Version: control.Version, Implementation: a.cfg.Implementation,
		Methods: slices.Clone(control.Methods), Features: slices.Clone(a.cfg.Features),
		Device: control.Device{MaxMPR: maxMPR, MPRResolution: 1, MaxWIMM: maxWIMM, MaxWIMMDest: maxWIMM,
			MaxSendWR: maxQueue, MaxRecvWR: maxQueue, PathMTUs: []int{256, 512, 1024, 2048, 4096}},
		EVMode: map[wire.EVMode]string{wire.EVModeSTEV: "stev", wire.EVModeUDP: "udp", wire.EVModeSRv6: "srv6"}[a.cfg.EVMode]}
	for i, m := range a.cfg.MACs {
		r.Ports = append(r.Ports, control.Port{Port: i + 1, MAC: net.HardwareAddr(m[:]).String(), IP: a.cfg.IP.String()})
	}
	return r, nil
}

func (a *Agent) setEVProfile(p *control.EVProfile) (any, error) {
	if _, ok := a.evp[p.ID]; !ok && len(a.evp) >= maxProfiles {
		return nil, control.Errorf(control.CodeResourceExhausted, "at most %d EV profiles", maxProfiles)
	}
	sp := statemachine.EVProfile{ID: p.ID, ActivePerPlane: p.ActivePerPlane, MinActive: p.MinActive,
		ProbeInterval: statemachine.Time(p.ProbeIntervalNs), ProbeSuccesses: p.ProbeSuccesses}
	for _, e := range p.EVs {
		if e.Port < 1 || e.Port > a.ports {
			return nil, control.Errorf(control.CodeInvalidArgument, "EV %#x on port %d: this node has ports 1 to %d", e.Value, e.Port, a.ports)
		}
		sp.EVs = append(sp.EVs, statemachine.EVEntry{Value: e.Value, Port: uint8(e.Port)})
	}
	// Validate by compiling it.
	cfg := statemachine.Config{Profile: a.cfg.Profile, EVProfiles: []statemachine.EVProfile{sp},
		CCProfiles: []statemachine.CCProfile{{ID: 1}}}
	if _, err := statemachine.NewNode(cfg); err != nil {
		return nil, control.Errorf(control.CodeInvalidArgument, "%v", err)
	}
	a.evp[p.ID] = sp
	return control.Empty{}, nil
}

// nsccOf is the NSCC configuration a control request asks for: the
// defaults, with the base RTT, target delay and maximum window it sets.
func nsccOf(n *control.NSCC) (statemachine.NSCCConfig, error) {
	c := statemachine.DefaultNSCC()
	if n == nil {
		return c, nil
	}
	if n.BaseRTTNs < 0 || n.TargetDelayNs < 0 || n.MaxCwnd < 0 || n.BaseRTTNs > 1<<32-1 || n.TargetDelayNs > 1<<32-1 || n.MaxCwnd > 1<<32-1 {
		return c, control.Errorf(control.CodeInvalidArgument, "NSCC values must fit 32 bits")
	}
	if n.BaseRTTNs > 0 {
		c.BaseRTT = uint32(n.BaseRTTNs)
	}
	if n.TargetDelayNs > 0 {
		c.TargetDelay = uint32(n.TargetDelayNs)
	}
	if n.MaxCwnd > 0 {
		c.MaxCwnd = uint32(n.MaxCwnd)
	}
	return c, nil
}

func (a *Agent) setCCProfile(p *control.CCProfile) (any, error) {
	if _, ok := a.ccp[p.ID]; !ok && len(a.ccp) >= maxProfiles {
		return nil, control.Errorf(control.CodeResourceExhausted, "at most %d CC profiles", maxProfiles)
	}
	sp := statemachine.CCProfile{ID: p.ID}
	switch p.Algorithm {
	case control.CCNone, "":
		sp.Algorithm = statemachine.CCAlgNone
	case control.CCNSCC:
		sp.Algorithm = statemachine.CCAlgNSCC
		var err error
		if sp.NSCC, err = nsccOf(p.NSCC); err != nil {
			return nil, err
		}
	default:
		return nil, control.Errorf(control.CodeUnsupported, "CC algorithm %q (supported: %q, %q)", p.Algorithm, control.CCNone, control.CCNSCC)
	}
	cfg := statemachine.Config{Profile: a.cfg.Profile, EVProfiles: []statemachine.EVProfile{{ID: 1,
		EVs: []statemachine.EVEntry{{Value: 1, Port: 1}, {Value: 2, Port: 1}}}}, CCProfiles: []statemachine.CCProfile{sp}}
	if _, err := statemachine.NewNode(cfg); err != nil {
		return nil, control.Errorf(control.CodeInvalidArgument, "%v", err)
	}
	a.ccp[p.ID] = sp
	return control.Empty{}, nil
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
