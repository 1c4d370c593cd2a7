package peer

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

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

type region struct {
	handle uint32
	va     uint64
	rkey   uint32
	buf    []byte
	remote bool
}

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
	cq       []control.Completion
	c        counters
	notify   statemachine.CQNotify
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
	remote map[netip.Addr]uint32
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
	a := &Agent{cfg: cfg, codec: c, ports: len(cfg.MACs)}
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
	if a.ctl, err = statemachine.NewController(dev, statemachine.CtlPolicy{}); err != nil {
		return &ConfigError{err.Error()}
	}
	a.ctlEVs = map[uint64]bool{}
	a.async, a.bat = statemachine.AsyncQueue{}, map[uint32]*statemachine.EPBatch{}
	a.hints = statemachine.NewQPHints(MaxQPHints)
	a.evp = map[uint64]statemachine.EVProfile{}
	a.ccp = map[uint64]statemachine.CCProfile{}
	a.mrs, a.nextVA, a.memory = nil, 0x7f00_0000_0000, 0
	a.qps, a.order = map[uint32]*qpEntry{}, nil
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
	switch method {
	case control.MethodHello:
		return a.hello(params)
	case control.MethodReset:
		return control.Empty{}, a.reset()
	case control.MethodSetEVProfile:
		return a.setEVProfile(params)
	case control.MethodSetCCProfile:
		return a.setCCProfile(params)
	case control.MethodRegMR:
		return a.regMR(params)
	case control.MethodWriteMR:
		return a.writeMR(params)
	case control.MethodReadMR:
		return a.readMR(params)
	case control.MethodCreateQP:
		return a.createQP(params)
	case control.MethodModifyQP:
		return a.modifyQP(now, params)
	case control.MethodQueryQP:
		return a.queryQP(params)
	case control.MethodPostSend:
		return a.postSend(now, params)
	case control.MethodPostRecv:
		return a.postRecv(now, params)
	case control.MethodPollCQ:
		return a.pollCQ(params)
	case control.MethodQueryCounters:
		return a.queryCounters(params)
	case control.MethodSetPortStatus:
		return a.setPortStatus(now, params)
	case control.MethodModifyEVState:
		return a.modifyEVState(now, params)
	case control.MethodSetResourceCondition:
		return a.setResource(params)
	case control.MethodEPSend:
		return a.epSend(now, params)
	case control.MethodEPPoll:
		return a.epPoll()
	case control.MethodModifyEVFmtProfile:
		return a.modifyEVFmtProfile(params)
	case control.MethodModifyEVProfile:
		return a.modifyEVProfileCtl(now, params)
	case control.MethodQueryEVProfile:
		return a.queryEVProfileCtl(params)
	case control.MethodModifyCCProfile:
		return a.modifyCCProfileCtl(params)
	case control.MethodQueryDeviceCtl:
		return a.queryDeviceCtl()
	case control.MethodModifyPort, control.MethodQueryPort:
		return a.portAdmin(now, params)
	case control.MethodReqNotifyCQ:
		return a.reqNotify(params)
	case control.MethodGetCQEvents:
		return a.cqEvents(params)
	case control.MethodGetAsyncEvents:
		return a.asyncEvents()
	case control.MethodQueryVersion:
		return a.queryVersion()
	case control.MethodEPBatchSend:
		return a.epBatchSend(now, params)
	case control.MethodEPBatchResult:
		return a.epBatchResult(now, params)
	case control.MethodCreateQPHint, control.MethodQueryQPHint, control.MethodDestroyQPHint:
		return a.qpHint(method, params)
	}
	return nil, control.Errorf(control.CodeUnknownMethod, "%q", method)
}

func (a *Agent) hello(params json.RawMessage) (any, error) {
	var p control.HelloParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
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

func (a *Agent) setEVProfile(params json.RawMessage) (any, error) {
	var p control.EVProfile
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
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

func (a *Agent) setCCProfile(params json.RawMessage) (any, error) {
	var p control.CCProfile
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	if _, ok := a.ccp[p.ID]; !ok && len(a.ccp) >= maxProfiles {
		return nil, control.Errorf(control.CodeResourceExhausted, "at most %d CC profiles", maxProfiles)
	}
	sp := statemachine.CCProfile{ID: p.ID}
	switch p.Algorithm {
	case control.CCNone, "":
		sp.Algorithm = statemachine.CCAlgNone
	case control.CCNSCC:
		sp.Algorithm = statemachine.CCAlgNSCC
		sp.NSCC = statemachine.DefaultNSCC()
		if n := p.NSCC; n != nil {
			if n.BaseRTTNs < 0 || n.TargetDelayNs < 0 || n.MaxCwnd < 0 || n.BaseRTTNs > 1<<32-1 || n.TargetDelayNs > 1<<32-1 || n.MaxCwnd > 1<<32-1 {
				return nil, control.Errorf(control.CodeInvalidArgument, "NSCC values must fit 32 bits")
			}
			if n.BaseRTTNs > 0 {
				sp.NSCC.BaseRTT = uint32(n.BaseRTTNs)
			}
			if n.TargetDelayNs > 0 {
				sp.NSCC.TargetDelay = uint32(n.TargetDelayNs)
			}
			if n.MaxCwnd > 0 {
				sp.NSCC.MaxCwnd = uint32(n.MaxCwnd)
			}
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

func (a *Agent) regMR(params json.RawMessage) (any, error) {
	var p control.RegMRParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	if p.Length == 0 || p.Length > maxMemory || a.memory+p.Length > maxMemory || len(a.mrs) >= maxMRs {
		return nil, control.Errorf(control.CodeResourceExhausted, "region of %d bytes: this peer holds at most %d bytes in %d regions", p.Length, maxMemory, maxMRs)
	}
	r := &region{handle: uint32(len(a.mrs) + 1), va: a.nextVA, buf: make([]byte, p.Length)}
	r.rkey = r.handle<<8 | 0x5A
	for _, f := range p.Access {
		switch f {
		case control.AccessRemoteWrite:
			r.remote = true
		case control.AccessLocalWrite:
		default:
			return nil, control.Errorf(control.CodeUnsupported, "access flag %q", f)
		}
	}
	a.nextVA += (p.Length + 0xFFFF) &^ 0xFFFF
	a.memory += p.Length
	a.mrs = append(a.mrs, r)
	return control.MR{MR: r.handle, VA: r.va, RKey: r.rkey, Length: p.Length}, nil
}

func (a *Agent) region(h uint32, off, n uint64) (*region, error) {
	if h == 0 || int(h) > len(a.mrs) {
		return nil, control.Errorf(control.CodeNotFound, "memory region %d", h)
	}
	r := a.mrs[h-1]
	if off > uint64(len(r.buf)) || n > uint64(len(r.buf))-off {
		return nil, control.Errorf(control.CodeInvalidArgument, "bytes %d..%d outside region %d of %d bytes", off, off+n, h, len(r.buf))
	}
	return r, nil
}

func (a *Agent) writeMR(params json.RawMessage) (any, error) {
	var p control.WriteMRParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	r, err := a.region(p.MR, p.Offset, uint64(len(p.Data)))
	if err != nil {
		return nil, err
	}
	copy(r.buf[p.Offset:], p.Data)
	return control.Empty{}, nil
}

func (a *Agent) readMR(params json.RawMessage) (any, error) {
	var p control.ReadMRParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	if p.Length > control.MaxData {
		return nil, control.Errorf(control.CodeInvalidArgument, "read of %d bytes, at most %d", p.Length, control.MaxData)
	}
	r, err := a.region(p.MR, p.Offset, p.Length)
	if err != nil {
		return nil, err
	}
	return control.ReadMRResult{Data: slices.Clone(r.buf[p.Offset : p.Offset+p.Length])}, nil
}

func (a *Agent) createQP(params json.RawMessage) (any, error) {
	var p control.CreateQPParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	if len(a.qps) >= maxQPs {
		return nil, control.Errorf(control.CodeResourceExhausted, "at most %d QPs", maxQPs)
	}
	if p.MaxSendWR < 0 || p.MaxSendWR > maxQueue || p.MaxRecvWR < 0 || p.MaxRecvWR > maxQueue {
		return nil, control.Errorf(control.CodeInvalidArgument, "queue depths %d/%d: at most %d", p.MaxSendWR, p.MaxRecvWR, maxQueue)
	}
	qpn := firstQPN + a.qpSeq%(wire.PSNMask-firstQPN)
	a.qpSeq++
	a.qps[qpn] = &qpEntry{qpn: qpn, create: p}
	a.order = append(a.order, qpn)
	return control.QPNResult{QPN: qpn}, nil
}

func (a *Agent) entry(qpn uint32) (*qpEntry, error) {
	e, ok := a.qps[qpn]
	if !ok {
		return nil, control.Errorf(control.CodeNotFound, "QP %#x", qpn)
	}
	return e, nil
}

// nodeConfig is the statemachine configuration of a new QP: the profiles
// and remotely writable regions known now.
func (a *Agent) nodeConfig(e *qpEntry) statemachine.Config {
	c := statemachine.Config{Profile: a.cfg.Profile, MaxSendWR: e.create.MaxSendWR, MaxRecvWR: e.create.MaxRecvWR,
		Timestamps: e.create.Timestamps, Faults: a.cfg.Faults.sm,
		MaxMPRDevice: maxMPR, MaxWIMMDevice: maxWIMM, MaxWIMMDestDevice: maxWIMM}
	for _, id := range sortedKeys(a.evp) {
		c.EVProfiles = append(c.EVProfiles, a.evp[id])
	}
	for _, id := range sortedKeys(a.ccp) {
		c.CCProfiles = append(c.CCProfiles, a.ccp[id])
	}
	for _, r := range a.mrs {
		if r.remote {
			c.MRs = append(c.MRs, statemachine.MemoryRegion{RKey: r.rkey, VA: r.va, Len: uint64(len(r.buf))})
		}
	}
	if len(c.MRs) == 0 {
		// No region is remotely writable: a region no write can reach,
		// because an empty list would make every address writable.
		c.MRs = []statemachine.MemoryRegion{{RKey: 0, VA: 1 << 63, Len: 1}}
	}
	return c
}

var stateNames = map[string]statemachine.QPState{
	control.StateReset: statemachine.StateReset, control.StateInit: statemachine.StateInit,
	control.StateRTR: statemachine.StateRTR, control.StateRTS: statemachine.StateRTS, control.StateError: statemachine.StateError,
}

// parseMAC parses a destination MAC the control session gives: a
// unicast one only, as the peer sends to one node, never to a group.
func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return m, control.Errorf(control.CodeInvalidArgument, "MAC %q", s)
	}
	if hw[0]&1 != 0 {
		return m, control.Errorf(control.CodeInvalidArgument, "MAC %q is not unicast: the peer sends to one node only", s)
	}
	copy(m[:], hw)
	return m, nil
}

// parseDstIP parses a destination IP address the control session gives:
// a unicast one of the node's IP version only.
func (a *Agent) parseDstIP(s string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Is4() != a.cfg.IP.Is4() || !(ip.IsGlobalUnicast() || ip.IsLoopback() || ip.IsLinkLocalUnicast()) {
		return ip, control.Errorf(control.CodeInvalidArgument, "IP %q: want a unicast address of the node's IP version", s)
	}
	return ip, nil
}

// attrOf converts control attributes to statemachine ones and their mask.
func attrOf(c *control.QPAttr) (statemachine.Attr, statemachine.AttrMask, error) {
	var a statemachine.Attr
	var m statemachine.AttrMask
	bad := func(name string, v int) error {
		return control.Errorf(control.CodeInvalidArgument, "%s = %d is out of range", name, v)
	}
	small := func(name string, v *int, lim int, dst func(int)) error {
		if v == nil {
			return nil
		}
		if *v < 0 || *v > lim {
			return bad(name, *v)
		}
		dst(*v)
		return nil
	}
	if c.EVProfileID != nil {
		a.EVProfileID, m = *c.EVProfileID, m|statemachine.AttrEVProfileID
	}
	if c.CCProfileID != nil {
		a.CCProfileID, m = *c.CCProfileID, m|statemachine.AttrCCProfileID
	}
	for _, f := range []error{
		small("pkey_index", c.PKeyIndex, 0xFFFF, func(v int) { a.PKeyIndex, m = uint16(v), m|statemachine.AttrPKeyIndex }),
		small("access_flags", c.AccessFlags, 1<<31-1, func(v int) { a.AccessFlags, m = uint32(v), m|statemachine.AttrAccessFlags }),
		small("max_wimm_dest", c.MaxWIMMDest, 0xFFFF, func(v int) { a.MaxWIMMDest, m = uint16(v), m|statemachine.AttrMaxWIMMDest }),
		small("mpr_dest", c.MPRDest, 255, func(v int) { a.MPRDest, m = uint8(v), m|statemachine.AttrMPRDest }),
		small("path_mtu", c.PathMTU, 0xFFFF, func(v int) { a.PathMTU, m = uint16(v), m|statemachine.AttrPathMTU }),
		small("max_wimm", c.MaxWIMM, 0xFFFF, func(v int) { a.MaxWIMM, m = uint16(v), m|statemachine.AttrMaxWIMM }),
		small("mpr", c.MPR, 255, func(v int) { a.MPR, m = uint8(v), m|statemachine.AttrMPR }),
		small("timeout", c.Timeout, 255, func(v int) { a.Timeout, m = uint8(v), m|statemachine.AttrTimeout }),
	} {
		if f != nil {
			return a, 0, f
		}
	}
	if c.Cap != nil {
		m |= statemachine.AttrCap
		for _, s := range *c.Cap {
			switch s {
			case control.CapTrimNACKDestUnsupported:
				a.Cap |= statemachine.CapTrimNACKDestUnsupported
			case control.CapDynamicMPR:
				a.Cap |= statemachine.CapDynamicMPR
			case control.CapSvcTimeDestUnsupported:
				a.Cap |= statemachine.CapSvcTimeDestUnsupported
			default:
				return a, 0, control.Errorf(control.CodeInvalidArgument, "unknown QP cap %q", s)
			}
		}
	}
	if c.DestQPN != nil {
		a.DestQPN, m = *c.DestQPN, m|statemachine.AttrDestQPN
	}
	if c.RQPSN != nil {
		a.RQPSN, m = *c.RQPSN, m|statemachine.AttrRQPSN
	}
	if c.SQPSN != nil {
		a.SQPSN, m = *c.SQPSN, m|statemachine.AttrSQPSN
	}
	if c.Retry != nil {
		if c.Retry.LinearCnt < 0 || c.Retry.LinearCnt > 255 || c.Retry.ExpCnt < 0 || c.Retry.ExpCnt > 255 {
			return a, 0, bad("retry", c.Retry.LinearCnt<<8|c.Retry.ExpCnt)
		}
		a.Retry = statemachine.Retry{LinearCnt: uint8(c.Retry.LinearCnt), ExpCnt: uint8(c.Retry.ExpCnt)}
		m |= statemachine.AttrRetryCnt
	}
	if c.AV != nil {
		m |= statemachine.AttrAV
	}
	if c.Hint != nil {
		a.Hint = *c.Hint
	}
	if c.VendorCfg != nil {
		b, err := hex.DecodeString(*c.VendorCfg)
		if err != nil || len(b) > statemachine.VendorCfgSize {
			return a, 0, control.Errorf(control.CodeInvalidArgument, "vendor_cfg: at most %d bytes in hex", statemachine.VendorCfgSize)
		}
		copy(a.VendorCfg[:], b)
		m |= statemachine.AttrVendorCfg
	}
	return a, m, nil
}

func smErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, statemachine.ErrUnknownProfile), errors.Is(err, statemachine.ErrUnknownEV):
		return control.Errorf(control.CodeNotFound, "%v", err)
	case errors.Is(err, statemachine.ErrInvalidTransition), errors.Is(err, statemachine.ErrQPState):
		return control.Errorf(control.CodeInvalidState, "%v", err)
	case errors.Is(err, statemachine.ErrSendQueueFull), errors.Is(err, statemachine.ErrRecvQueueFull),
		errors.Is(err, statemachine.ErrTooManyRequests):
		return control.Errorf(control.CodeResourceExhausted, "%v", err)
	}
	return control.Errorf(control.CodeInvalidArgument, "%v", err)
}

func (a *Agent) modifyQP(now statemachine.Time, params json.RawMessage) (any, error) {
	var p control.ModifyQPParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	to, ok := stateNames[p.State]
	if !ok {
		return nil, control.Errorf(control.CodeInvalidArgument, "state %q", p.State)
	}
	attr, mask, err := attrOf(&p.Attr)
	if err != nil {
		return nil, err
	}
	from := statemachine.StateReset
	if e.qp != nil {
		from = e.qp.State()
	}
	switch {
	case to == statemachine.StateInit && from == statemachine.StateReset:
		// The QP is created here, with a placeholder address vector: the
		// statemachine fixes the AV at creation and the real one comes
		// with the move to RTR, when the QP is created again and this
		// transition replayed.
		mask |= statemachine.AttrQPHint
		if err := a.hints.Use(attr.Hint); err != nil {
			return nil, ctlErr(err)
		}
		made := false
		defer func() {
			if !made {
				a.hints.Release(attr.Hint) // the QP was refused: it names no hint
			}
		}()
		n, err := statemachine.NewNode(a.nodeConfig(e))
		if err != nil {
			return nil, control.Errorf(control.CodeInvalidState, "no usable EV and CC profiles: %v", err)
		}
		q, err := n.NewQP(e.qpn, a.cfg.Seed^uint64(e.qpn)*0x9E3779B97F4A7C15,
			statemachine.Addressing{SrcIP: a.cfg.IP, DstIP: a.cfg.IP, EVMode: a.cfg.EVMode})
		if err != nil {
			return nil, smErr(err)
		}
		if err := q.Modify(now, to, attr, mask, &a.out); err != nil {
			return nil, smErr(err)
		}
		e.node, e.qp, e.initAttr, e.initMask, e.recvs = n, q, attr, mask, nil
		made = true
	case to == statemachine.StateRTR && from == statemachine.StateInit && p.Attr.AV != nil:
		mac, err := parseMAC(p.Attr.AV.MAC)
		if err != nil {
			return nil, err
		}
		ip, err := a.parseDstIP(p.Attr.AV.IP)
		if err != nil {
			return nil, err
		}
		if p.Attr.AV.HopLimit < 0 || p.Attr.AV.HopLimit > 255 {
			return nil, control.Errorf(control.CodeInvalidArgument, "hop limit %d", p.Attr.AV.HopLimit)
		}
		q, err := e.node.NewQP(e.qpn, a.cfg.Seed^uint64(e.qpn)*0x9E3779B97F4A7C15, statemachine.Addressing{
			SrcMAC: a.cfg.MACs[0], DstMAC: mac, SrcIP: a.cfg.IP, DstIP: ip, HopLimit: uint8(p.Attr.AV.HopLimit), EVMode: a.cfg.EVMode})
		if err != nil {
			return nil, smErr(err)
		}
		var scratch statemachine.Output
		if err := q.Modify(now, statemachine.StateInit, e.initAttr, e.initMask, &scratch); err != nil {
			return nil, smErr(err)
		}
		for _, w := range e.recvs {
			if err := q.PostRecv(now, w, &scratch); err != nil {
				return nil, smErr(err)
			}
		}
		if err := q.Modify(now, to, attr, mask, &a.out); err != nil {
			return nil, smErr(err)
		}
		e.qp, e.peer, e.peerMAC = q, ip, mac
		q.SetPortStatus(now, a.localUp(), a.remoteOf(ip), &a.out)
	case e.qp == nil:
		if to == statemachine.StateReset {
			return control.Empty{}, nil
		}
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET: %s→%s is not allowed", e.qpn, p.State, "RESET")
	default:
		if err := e.qp.Modify(now, to, attr, mask, &a.out); err != nil {
			return nil, smErr(err)
		}
		if to == statemachine.StateReset {
			a.hints.Release(e.initAttr.Hint) // a QP back in RESET names no hint
			e.qp, e.node, e.recvs = nil, nil, nil
		}
	}
	return control.Empty{}, nil
}

func (a *Agent) remoteOf(ip netip.Addr) uint32 {
	if m, ok := a.remote[ip]; ok && !a.cfg.Faults.has(agIgnorePortStatus) {
		return m
	}
	return 0xFFFFFFFE
}

var evStateNames = map[statemachine.EVState]string{statemachine.EVGood: control.EVGood, statemachine.EVSkip: control.EVSkip,
	statemachine.EVAssumedBad: control.EVAssumedBad, statemachine.EVDenied: control.EVDenied}

var causeNames = map[statemachine.ErrorCause]string{
	statemachine.CauseModify: "modify", statemachine.CauseRetryExceeded: "retry_exceeded",
	statemachine.CauseRemoteUnexp: "remote_unexp_event", statemachine.CauseRemoteInvalid: "remote_invalid_request",
	statemachine.CauseRemoteAccess: "remote_access_error", statemachine.CauseRemoteOp: "remote_operational_error",
	statemachine.CauseWIMMLimit: "wimm_limit", statemachine.CauseNoRecvWR: "no_receive_wr", statemachine.CauseAccess: "access_error",
}

func (a *Agent) queryQP(params json.RawMessage) (any, error) {
	var p control.QPNParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return control.QueryQPResult{State: control.StateReset}, nil
	}
	r := control.QueryQPResult{State: e.qp.State().String(), ErrorCause: causeNames[e.qp.ErrorCause()]}
	if at, _ := e.qp.Attr(); !a.cfg.Faults.has(agVendorCfgDropped) {
		r.VendorCfg = strings.TrimRight(hex.EncodeToString(at.VendorCfg[:]), "0")
		if len(r.VendorCfg)%2 == 1 {
			r.VendorCfg += "0"
		}
	}
	for _, v := range e.qp.EVs(nil) {
		r.EVs = append(r.EVs, control.EVInfo{Value: v.Value, Port: int(v.Plane) + 1, State: evStateNames[v.State], Active: v.Active})
	}
	return r, nil
}

var opcodes = map[string]statemachine.Opcode{
	control.OpRDMAWrite: statemachine.OpWrite, control.OpRDMAWriteWithImm: statemachine.OpWriteImm,
	control.OpSend: statemachine.OpSend, control.OpSendWithImm: statemachine.OpSendImm, control.OpRDMARead: statemachine.OpRead,
	control.OpAtomicCmpSwap: statemachine.OpAtomicCmpSwap, control.OpAtomicFetchAdd: statemachine.OpAtomicFetchAdd,
}

func (a *Agent) postSend(now statemachine.Time, params json.RawMessage) (any, error) {
	var p control.PostSendParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	op, ok := opcodes[p.Opcode]
	if !ok {
		return nil, control.Errorf(control.CodeInvalidArgument, "opcode %q", p.Opcode)
	}
	wr := statemachine.WorkRequest{WRID: p.WRID, Opcode: op, RemoteVA: p.Remote.VA, RKey: p.Remote.RKey, Imm: p.Imm,
		Unsignaled: p.Unsignaled, Solicited: p.Solicited}
	if p.Local != nil && p.Local.Length > 0 {
		r, err := a.region(p.Local.MR, p.Local.Offset, p.Local.Length)
		if err != nil {
			return nil, err
		}
		wr.Data = slices.Clone(r.buf[p.Local.Offset : p.Local.Offset+p.Local.Length])
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	a.cur = &e.c
	return control.Empty{}, smErr(e.qp.Post(now, wr, &a.out))
}

func (a *Agent) postRecv(now statemachine.Time, params json.RawMessage) (any, error) {
	var p control.PostRecvParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	if err := e.qp.PostRecv(now, p.WRID, &a.out); err != nil {
		return nil, smErr(err)
	}
	if e.qp.State() == statemachine.StateInit {
		e.recvs = append(e.recvs, p.WRID)
	}
	return control.Empty{}, nil
}

func (a *Agent) pollCQ(params json.RawMessage) (any, error) {
	var p control.PollCQParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	n := len(e.cq)
	if p.Max > 0 && p.Max < n {
		n = p.Max
	}
	n = min(n, control.MaxCQPoll)
	r := control.PollCQResult{Completions: slices.Clone(e.cq[:n])}
	if r.Completions == nil {
		r.Completions = []control.Completion{}
	}
	e.cq = slices.Delete(e.cq, 0, n)
	return r, nil
}

func (a *Agent) queryCounters(params json.RawMessage) (any, error) {
	var p control.QueryCountersParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	if p.QPN == nil {
		return control.CountersResult{Counters: a.node.asMap()}, nil
	}
	e, err := a.entry(*p.QPN)
	if err != nil {
		return nil, err
	}
	return control.CountersResult{Counters: e.c.asMap()}, nil
}

func (a *Agent) setPortStatus(now statemachine.Time, params json.RawMessage) (any, error) {
	var p control.SetPortStatusParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	if p.Mask&1 != 0 || p.Mask>>(a.ports+1) != 0 {
		return nil, control.Errorf(control.CodeInvalidArgument, "mask %#x: bit 0 is unused and this node has ports 1 to %d", p.Mask, a.ports)
	}
	a.local = p.Mask
	a.applyPorts(now)
	return control.Empty{}, nil
}

// applyPorts gives every QP the local port-status mask and tells every
// peer with QPs.
func (a *Agent) applyPorts(now statemachine.Time) {
	if up := a.localUp(); up != a.lastUp {
		if !a.cfg.Faults.has(agNoPortAsync) {
			a.async.Add(statemachine.PortEvents(a.lastUp, up, nil)...) // CTL-AEV-2
		}
		a.lastUp = up
	}
	peers := map[netip.Addr][6]byte{}
	var order []netip.Addr
	for _, qpn := range a.order {
		e := a.qps[qpn]
		if e.qp == nil || !e.peer.IsValid() {
			continue
		}
		e.qp.SetPortStatus(now, a.localUp(), a.remoteOf(e.peer), &a.out)
		if _, ok := peers[e.peer]; !ok {
			peers[e.peer] = e.peerMAC
			order = append(order, e.peer)
		}
	}
	// Tell every peer with QPs (EP-PSU-1, EP-PSU-2), repeating until
	// answered (EP-PSU-4).
	a.psu = a.psu[:0]
	for _, ip := range order {
		a.psu = append(a.psu, psuPending{peer: ip, mac: peers[ip], mask: a.localUp(), next: now})
	}
	a.sendPSU(now)
}

func (a *Agent) sendPSU(now statemachine.Time) {
	port := 0
	for n := 1; n <= a.ports; n++ {
		if a.localUp()&(1<<n) != 0 {
			port = n
			break
		}
	}
	if port == 0 {
		return // no port up: nothing can be sent
	}
	for i := range a.psu {
		u := &a.psu[i]
		if u.answer || u.tries >= psuTries || u.next > now {
			continue
		}
		a.psuID++
		u.reqID = psuIDBase | a.psuID&0x0FFF
		u.tries++
		u.next = now + psuRetry
		err := a.ep.Send(now, statemachine.EPRequest{ReqID: u.reqID, Op: wire.EPPortStatusUpdate,
			Dst: statemachine.Peer{MAC: u.mac, IP: u.peer}, EV: 0xC000 | uint32(port), Port: uint8(port),
			NICInitiated: true, PortStatus: u.mask}, &a.out)
		if err != nil {
			u.tries = psuTries
		}
	}
}

func (a *Agent) psuDeadline() statemachine.Time {
	d := statemachine.Never
	for _, u := range a.psu {
		if !u.answer && u.tries < psuTries {
			d = min(d, u.next)
		}
	}
	return d
}

func (a *Agent) modifyEVState(now statemachine.Time, params json.RawMessage) (any, error) {
	var p control.ModifyEVStateParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	var s statemachine.EVState
	for k, v := range evStateNames {
		if v == p.State {
			s = k
		}
	}
	if s == statemachine.EVUnknown || s == statemachine.EVSkip {
		return nil, control.Errorf(control.CodeInvalidArgument, "EV state %q: the controller sets GOOD, ASSUMED_BAD or DENIED", p.State)
	}
	return control.Empty{}, smErr(e.qp.SetEVState(now, p.EV, s, &a.out))
}

func (a *Agent) setResource(params json.RawMessage) (any, error) {
	var p control.SetResourceConditionParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	c, ok := map[string]statemachine.ResourceCondition{control.ResourcesOK: statemachine.ResourcesOK,
		control.ResNoBitmap: statemachine.NoTrackingBitmap, control.ResNoPktBuffer: statemachine.NoPacketBuffer,
		control.ResNoResource: statemachine.NoOtherResource}[p.Condition]
	if !ok {
		return nil, control.Errorf(control.CodeInvalidArgument, "condition %q", p.Condition)
	}
	e.qp.SetResourceCondition(c)
	return control.Empty{}, nil
}

func (a *Agent) epSend(now statemachine.Time, params json.RawMessage) (any, error) {
	var p control.EPSendParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	rq, err := a.epRequestOf(&p)
	if err != nil {
		return nil, err
	}
	return control.Empty{}, smErr(a.ep.Send(now, rq, &a.out))
}

// epRequestOf checks and converts one endpoint request of ep_send or
// ep_batch_send.
func (a *Agent) epRequestOf(p *control.EPSendParams) (statemachine.EPRequest, error) {
	var op wire.EndpointOp
	switch p.Op {
	case control.EPEVProbe:
		op = wire.EPEVProbe
	case control.EPPortStatus:
		op = wire.EPPortStatusUpdate
	default:
		return statemachine.EPRequest{}, control.Errorf(control.CodeInvalidArgument, "endpoint op %q", p.Op)
	}
	if p.ReqID >= psuIDBase {
		return statemachine.EPRequest{}, control.Errorf(control.CodeInvalidArgument, "request ids from %#x are this peer's own", psuIDBase)
	}
	mac, err := parseMAC(p.Dst.MAC)
	if err != nil {
		return statemachine.EPRequest{}, err
	}
	ip, err := a.parseDstIP(p.Dst.IP)
	if err != nil {
		return statemachine.EPRequest{}, err
	}
	if p.Port < 1 || p.Port > a.ports || p.DSCP < 0 || p.DSCP > 63 {
		return statemachine.EPRequest{}, control.Errorf(control.CodeInvalidArgument, "port %d or DSCP %d out of range", p.Port, p.DSCP)
	}
	return statemachine.EPRequest{ReqID: p.ReqID, Op: op, Dst: statemachine.Peer{MAC: mac, IP: ip},
		EV: p.EV, Port: uint8(p.Port), DSCP: uint8(p.DSCP), PortStatus: p.PortStatus}, nil
}

func (a *Agent) epPoll() (any, error) {
	r := control.EPPollResult{Responses: a.epRsp, Timeouts: a.epTO}
	if r.Responses == nil {
		r.Responses = []control.EPResponse{}
	}
	if r.Timeouts == nil {
		r.Timeouts = []uint16{}
	}
	a.epRsp, a.epTO = nil, nil
	return r, nil
}

// MaxNeighbours bounds the peers whose MAC the agent learns per plane
// (the README's "Resource limits"): frames from further source addresses
// are still handled, their MAC is not kept.
const MaxNeighbours = 256

// learn records the MAC that ip's frames come from on plane, so that
// answers go back to it; a multicast or broadcast source MAC is never
// learned, and neither is a new address once MaxNeighbours are known.
func (a *Agent) learn(plane int, ip netip.Addr, mac [6]byte) {
	if mac[0]&1 != 0 {
		return
	}
	if _, known := a.neigh[plane][ip]; known || len(a.neigh[plane]) < MaxNeighbours {
		a.neigh[plane][ip] = mac
	}
}

// Receive hands the agent one frame that arrived on plane (0-based) at
// time now. Frames that fail a wire check, are not for this node or name
// no QP are dropped and counted (RSP-RCV-1).
func (a *Agent) Receive(now statemachine.Time, plane int, frame []byte) {
	defer a.collect()
	a.node.RxPackets++
	if plane < 0 || plane >= a.ports {
		a.node.RxDropped++
		return
	}
	p := &a.pkt
	if err := a.codec.Decode(frame, p); err != nil {
		a.node.RxDropped++
		return
	}
	a.viol = a.codec.Check(frame, p, a.viol[:0])
	for _, v := range a.viol {
		if v.Req == "WIRE-ICRC-1" {
			a.node.RxBadICRC++
			if a.cfg.Faults.has(agAcceptBadICRC) {
				continue
			}
		}
		a.node.RxDropped++
		return
	}
	var src, dst netip.Addr
	if p.IsIPv6 {
		src, dst = netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst)
	} else {
		src, dst = netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst)
	}
	if dst != a.cfg.IP || (p.SRv6 && a.cfg.Faults.has(agNoSRv6Decap)) {
		a.node.RxDropped++
		return
	}
	a.learn(plane, src, p.Eth.Src)
	if p.BTH.DestQP == wire.EndpointQPN {
		a.curSrc = src
		a.ep.Receive(now, plane+1, p, &a.out)
		return
	}
	e, ok := a.qps[p.BTH.DestQP]
	if !ok || e.qp == nil {
		a.node.RxUnknown++
		return
	}
	e.c.RxPackets++
	a.cur = &e.c
	f := a.cfg.Faults
	switch {
	case p.BTH.Opcode == wire.OpSACK && !p.SETH.PR && f.has(agIgnoreMVerdict):
		p.SETH.M = wire.MNone
	case p.BTH.Opcode == wire.OpSACK && !p.SETH.PR && p.SETH.M == wire.MSkipOnce && f.has(agIgnoreSkipOnce):
		p.SETH.M = wire.MNone
	case p.BTH.Opcode == wire.OpSACK && !p.SETH.PR && p.SETH.M == wire.MSkipOnce && f.has(agSkipOnceRetires):
		p.SETH.M = wire.MAlwaysSkip
	case p.BTH.Opcode == wire.OpSACK && p.SETH.PR && p.SETH.M == wire.MSkipOnce && f.has(agProbeSkipBad):
		p.SETH.M = wire.MAlwaysSkip
	case p.BTH.Opcode == wire.OpNACK && p.NETH.Reason == wire.NACKTrimmed && f.has(agIgnoreTrimEV):
		p.NETH.Reason = wire.NACKTrimmedLastHop
	}
	e.qp.Receive(now, plane+1, p, &a.out)
}

// Advance runs the timers due at now.
func (a *Agent) Advance(now statemachine.Time) {
	defer a.collect()
	for _, qpn := range a.order {
		if e := a.qps[qpn]; e.qp != nil && e.qp.NextDeadline() <= now {
			a.cur = &e.c
			e.qp.Advance(now, &a.out)
			a.collect()
		}
	}
	if a.ep.NextDeadline() <= now {
		a.ep.Advance(now, &a.out)
	}
	if a.psuDeadline() <= now {
		a.sendPSU(now)
	}
}

// NextDeadline is when Advance next has work, or statemachine.Never.
func (a *Agent) NextDeadline() statemachine.Time {
	d := min(a.ep.NextDeadline(), a.psuDeadline())
	for _, qpn := range a.order {
		if e := a.qps[qpn]; e.qp != nil {
			d = min(d, e.qp.NextDeadline())
		}
	}
	return d
}

// collect turns the statemachine's output into frames, memory writes,
// completions and counters.
func (a *Agent) collect() {
	o := &a.out
	for _, c := range o.Completions {
		if e, ok := a.qps[c.QPN]; ok {
			e.cq = append(e.cq, completion(c))
			e.notify.Offer(c)
		}
	}
	a.async.Add(statemachine.AsyncEventsOf(o, nil)...)
	for _, b := range a.bat {
		b.Collect(o)
	}
	for _, pl := range o.Placements {
		for _, r := range a.mrs {
			if r.rkey == pl.RKey && pl.VA >= r.va && pl.VA-r.va <= uint64(len(r.buf)) && uint64(len(pl.Data)) <= uint64(len(r.buf))-(pl.VA-r.va) {
				copy(r.buf[pl.VA-r.va:], pl.Data)
				a.node.PlacedByte += uint64(len(pl.Data))
				break
			}
		}
	}
	for _, ev := range o.Events {
		if a.cfg.Trace != nil {
			a.cfg.Trace(ev)
		}
		c := &a.node
		if e, ok := a.qps[ev.QPN]; ok {
			c = &e.c
			a.count(ev)
		}
		switch ev.Kind {
		case statemachine.EvDuplicate:
			c.RxDup++
		case statemachine.EvIgnored:
			c.RxIgnored++
		case statemachine.EvTimeout:
			c.Timeouts++
		case statemachine.EvRetry:
			c.Retries++
		case statemachine.EvRemotePortMask:
			a.remotePortMask(ev)
		case statemachine.EvEVReplaced:
			if a.cfg.Faults.has(agNoReplacement) {
				a.denyReplacement(ev)
			}
		case statemachine.EvEPResponse:
			a.epResponse(ev)
		case statemachine.EvEPTimeout:
			if uint16(ev.PSN) < psuIDBase {
				a.epTO = append(a.epTO, uint16(ev.PSN))
			}
		}
	}
	for i := range o.Packets {
		a.transmit(&o.Packets[i])
	}
	o.Reset()
	a.cur = nil
}

// count adds a QP's event to the node's counters too.
func (a *Agent) count(ev statemachine.Event) {
	c := &a.node
	switch ev.Kind {
	case statemachine.EvDuplicate:
		c.RxDup++
	case statemachine.EvIgnored:
		c.RxIgnored++
	case statemachine.EvTimeout:
		c.Timeouts++
	case statemachine.EvRetry:
		c.Retries++
	}
}

func (a *Agent) remotePortMask(ev statemachine.Event) {
	src := a.curSrc
	if !src.IsValid() {
		return
	}
	a.remote[src] = uint32(ev.Value)
	if a.cfg.Faults.has(agIgnorePortStatus) {
		return
	}
	// EP-PSU-3: every QP to that node stops using the planes reported
	// down. The events of this step are being collected: apply the masks
	// into a scratch Output and collect it afterwards.
	var scratch statemachine.Output
	scratch.TracePackets = true
	for _, qpn := range a.order {
		if e := a.qps[qpn]; e.qp != nil && e.peer == src {
			e.qp.SetPortStatus(ev.Time, a.localUp(), uint32(ev.Value), &scratch)
		}
	}
	for i := range scratch.Packets {
		a.transmit(&scratch.Packets[i])
	}
}

// denyReplacement is the no-replacement fault: the backup EV that replaced
// a retired active one is put out of use (DENIED) at once, and so is
// every further replacement, so that the plane's active set shrinks.
func (a *Agent) denyReplacement(ev statemachine.Event) {
	e, ok := a.qps[ev.QPN]
	if !ok || e.qp == nil {
		return
	}
	var scratch statemachine.Output
	scratch.TracePackets = true
	next := []uint32{uint32(ev.Value)}
	for n := 0; len(next) > 0 && n < 1024; n++ {
		v := next[0]
		next = next[1:]
		scratch.Reset()
		if err := e.qp.SetEVState(ev.Time, v, statemachine.EVDenied, &scratch); err != nil {
			continue
		}
		for _, x := range scratch.Events {
			if x.Kind == statemachine.EvEVReplaced {
				next = append(next, uint32(x.Value))
			}
		}
		for i := range scratch.Packets {
			a.transmit(&scratch.Packets[i])
		}
	}
}

func (a *Agent) epResponse(ev statemachine.Event) {
	id := uint16(ev.PSN)
	if id >= psuIDBase {
		for i := range a.psu {
			if a.psu[i].reqID == id {
				a.psu[i].answer = true
			}
		}
		return
	}
	op := control.EPEVProbe
	if wire.EndpointOp(ev.Reason) == wire.EPPortStatusUpdate {
		op = control.EPPortStatus
	}
	a.epRsp = append(a.epRsp, control.EPResponse{ReqID: id, Op: op, Port: int(ev.Plane) + 1, RTTNs: int64(ev.Value)})
}

// transmit applies the egress faults, fills the per-port MAC addresses and
// encodes one packet.
func (a *Agent) transmit(o *statemachine.Outgoing) {
	p := &o.Pkt
	op := p.BTH.Opcode
	f := a.cfg.Faults
	switch {
	case op.IsWrite() && f.has(agNoRtxFlag):
		p.BTH.Retransmit = false
	case op == wire.OpSACK && f.has(agNoProbeAnswer) && p.SETH.PR:
		return
	case op == wire.OpSACK && f.has(agIgnoreECN):
		p.SETH.M = wire.MNone
	case op == wire.OpEndpointResp && f.has(agNoEPResponse):
		return
	case op == wire.OpNACK && p.NETH.Reason == wire.NACKPSNOutOfWindow && f.has(agNoOORNACK):
		return
	}
	plane := int(o.Plane)
	if plane >= a.ports || a.ctl.PortMask(1<<(plane+1)) == 0 && !f.has(agIgnorePortAdmin) {
		a.node.RxDropped++ // an EV profile naming a port this node lacks
		return
	}
	if f.has(agFixedSport) {
		p.UDP.SrcPort = 0xC0DE
	}
	if f.has(agNoSolicited) {
		p.BTH.SE = false
	}
	p.Eth.Src = a.cfg.MACs[plane]
	dst := netip.AddrFrom4(p.IP4.Dst)
	if p.IsIPv6 {
		dst = netip.AddrFrom16(p.IP6.Dst)
	}
	if m, ok := a.neigh[plane][dst]; ok {
		p.Eth.Dst = m
	}
	b, err := a.codec.Append(nil, p)
	if err != nil {
		return
	}
	if f.has(agBadICRC) && !p.Trimmed {
		b[len(b)-1] ^= 0xA5
	}
	if f.has(agImmByteSwap) && op.HasImm() {
		a.swapImm(b)
	}
	for _, c := range []*counters{&a.node, a.cur} {
		if c == nil {
			continue
		}
		c.TxPackets++
		switch {
		case op.IsWrite():
			c.TxData++
			if p.BTH.Retransmit {
				c.TxRetx++
			}
		case op == wire.OpSACK:
			c.TxSACKs++
		case op == wire.OpNACK:
			c.TxNACKs++
		case op == wire.OpAcknowledge:
			c.TxACKs++
		case op == wire.OpProbe:
			c.TxProbes++
		default:
			c.TxEP++
		}
	}
	a.tx = append(a.tx, Tx{Plane: plane, Frame: b})
}

// swapImm reverses the bytes of an encoded packet's ImmDt and recomputes
// its ICRC: only the byte order is wrong (the imm-byte-swap fault).
func (a *Agent) swapImm(b []byte) {
	var d wire.Packet
	if a.codec.Decode(b, &d) != nil {
		return
	}
	_, _, bth := d.Offsets()
	off := bth + 12 + 4 + 16 // BTH, METH, RETH
	if d.BTH.TSPresent {
		off += 4 // TSETH
	}
	if off+4 > len(b)-4 {
		return
	}
	b[off], b[off+1], b[off+2], b[off+3] = b[off+3], b[off+2], b[off+1], b[off]
	v := a.codec.ComputeICRC(b, &d)
	n := len(b)
	b[n-4], b[n-3], b[n-2], b[n-1] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func completion(c statemachine.Completion) control.Completion {
	op := c.Opcode.String()
	if c.Recv {
		op = control.OpRecvRDMAWithImm
	}
	return control.Completion{WRID: c.WRID, Status: c.Status.String(), Opcode: op, ByteLen: c.ByteLen, Imm: c.Imm, Recv: c.Recv,
		Solicited: c.Solicited}
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
