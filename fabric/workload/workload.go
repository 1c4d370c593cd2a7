package workload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/rc"
	"github.com/openmrc/mrc/linearize"
	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
)

// Time is synthetic time in nanoseconds.
type Time = sm.Time

// Base is the virtual address of chunk 0 of every node's memory.
const Base = 0x1000_0000

// Transport selects what a connection runs.
type Transport uint8

// Transports.
const (
	MRC Transport = iota // one statemachine QP pair, sprayed over the EV profile
	RC                   // RC baseline QP pairs (fabric/rc), one path each
)

func (t Transport) String() string {
	if t == RC {
		return "RC"
	}
	return "MRC"
}

// Options configures a harness.
type Options struct {
	// Fabric is the simulator configuration.
	Fabric fabric.Config
	// MRC is every node's statemachine configuration; without EV
	// profiles it takes statemachine.DefaultConfig's EV profiles (and CC
	// profiles, if it has none either). Its Profile, when set, must be
	// the fabric's.
	MRC sm.Config
	// QP and Attr are the templates of every MRC QP: the harness assigns
	// QPN, Seed, Addr.SrcIP, Addr.DstIP and DestQPN, which must be left
	// zero (ErrTemplateField), and keeps the rest. A zero Attr means
	// DefaultAttr.
	QP   sm.QPConfig
	Attr sm.Attr
	// RC is the template of every RC baseline QP; the harness assigns
	// QPN, DestQPN, EV, Plane, SrcIP and DstIP, which must be left zero.
	// RCQPs is the number of
	// RC QPs per connection, one per plane round-robin (0 means one per
	// plane), so that RC may use every NIC port as NCCL's multiple QPs do.
	RC    rc.Config
	RCQPs int
	// QPNSpan separates the nodes' QP numbers: node n numbers its QPs
	// from 0x101 + n·QPNSpan. 0 numbers every node's from 0x101, so the
	// two ends of a connection may share a number; 0x100 gives them
	// different numbers (0x101 and 0x201), which a capture then tells
	// apart.
	QPNSpan uint32
	// Memory is each node's memory in bytes; 0 means 4 MiB.
	Memory int
	// Check turns on data patterns, memory and invariant checking. Off,
	// the harness only counts placed bytes (throughput runs).
	Check bool
	// BoundsEvery checks the requester-state bounds every n-th step of a
	// QP; 0 means every step.
	BoundsEvery int
	// History, when set, records operations for linearize.
	History *linearize.History
	// AllowErrors makes a QP error (or an unsuccessful completion) not a
	// violation, for runs that expect one.
	AllowErrors bool
	// Bin is the width of the per-connection goodput time series; 0 means
	// none.
	Bin Time
	// Wrap wraps endpoints before they are attached (tests use it to
	// break responders deliberately); nil attaches them as they are.
	Wrap func(conn int, requester bool, ep fabric.Endpoint) fabric.Endpoint
}

// DefaultAttr is the QP attribute set of the simulations: 4 KiB MTU, MPR
// 8 (a 1024-PSN window), 64 WriteIMMs in flight, timeout 6 (65.5 µs, a few
// loaded RTTs of the default fabric) and infinite exponential retries, so
// that only a broken peer fails a QP.
func DefaultAttr() sm.Attr {
	return sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 8, MPRDest: 8, MaxWIMM: 64, MaxWIMMDest: 64,
		Timeout: 6, Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 4096}
}

// Violation is a broken invariant, with the requirement it breaks.
type Violation struct {
	Time Time
	Req  string
	Msg  string
}

func (v Violation) Error() string { return fmt.Sprintf("t=%d %s: %s", v.Time, v.Req, v.Msg) }

// Errors of Post; test with errors.Is.
var (
	ErrBusy      = errors.New("workload: send queue full")
	ErrQPFailed  = errors.New("workload: every QP of the connection is in ERROR")
	ErrNoConn    = errors.New("workload: no such connection")
	ErrOutOfMem  = errors.New("workload: write outside node memory")
	ErrBadLength = errors.New("workload: a write's last packet must carry 0 or at least 8 bytes")
	// ErrTemplateField: a QP template sets a field the harness assigns.
	ErrTemplateField = errors.New("workload: the harness assigns this template field; leave it zero")
	// ErrProfileMismatch: the MRC or RC template's wire profile is not
	// the fabric's, so endpoints and switches would disagree on DSCPs.
	ErrProfileMismatch = errors.New("workload: an endpoint profile differs from Fabric.Profile")
)

// Conn is one connection: work requests posted on it are written from
// node From to node To's memory.
type Conn struct {
	ID        int
	From, To  int
	Transport Transport
	Req, Rsp  []fabric.EndpointID
	// Bytes is the payload placed at To; Series the same per Bin.
	Bytes  uint64
	Series []uint64
	// Posted, Completed and Failed count work requests.
	Posted, Completed, Failed uint64
	rr                        int
	stream                    *stream
	sqDrained                 int // SQ_DRAINED events of its requester QPs (drain.go)
}

// ref is what the harness keeps per endpoint.
type ref struct {
	conn      int
	requester bool
	client    int // porcupine client / queue number of the requester QP
	peer      fabric.EndpointID
	mrc       *sm.QP
	rc        *rc.QP
	node      int
	// Requester side: work in post order.
	posted     []*wrRec // not yet send-completed
	wimm       []*wrRec // WriteIMMs awaiting their receive completion
	unreturned []*wrRec // history writes not yet returned
	failed     int
	// MRC event mirror.
	ev        map[uint32]sm.EVState
	planeDown uint32
	avoid     map[uint32]uint32
	steps     int
	drain     drainRec // requester: its SQ drains (drain.go)
}

// wrRec is a posted work request.
type wrRec struct {
	v        uint64
	req      fabric.EndpointID
	imm      bool
	node     int
	va       uint64
	size     int
	chunk0   int
	nchunks  int
	placed   []uint64
	nplaced  int
	sendDone bool
	recvDone bool
	writes   []linearize.WriteID
}

// Harness runs work over a fabric and checks it.
type Harness struct {
	Sim     *fabric.Sim
	opt     Options
	mtu     int
	conns   []*Conn
	refs    []*ref
	nodes   []*sm.Node
	qpn     []uint32
	mem     [][]byte
	last    [][]uint64 // per node and chunk: version last placed
	live    map[uint64]*wrRec
	nextVer uint64
	viol    []Violation
	bulk    []byte
	clients int
	win     uint32
	active  int // active EVs per plane of the profile
	nEVs    int
	scratch []uint32
	evs     []sm.EVInfo
	held    []uint16
}

// New builds a harness with an empty fabric.
func New(opt Options) (*Harness, error) {
	if d := sm.DefaultConfig(opt.Fabric.Seed); opt.MRC.EVProfiles == nil {
		opt.MRC.EVProfiles = d.EVProfiles
		if opt.MRC.CCProfiles == nil {
			opt.MRC.CCProfiles = d.CCProfiles
		}
	}
	if opt.Attr == (sm.Attr{}) {
		opt.Attr = DefaultAttr()
	}
	if opt.Memory == 0 {
		opt.Memory = 4 << 20
	}
	if opt.Check {
		opt.Fabric.EndpointEvents = true
	}
	if err := checkTemplates(&opt); err != nil {
		return nil, err
	}
	s, err := fabric.New(opt.Fabric)
	if err != nil {
		return nil, err
	}
	fc := s.Config()
	for _, p := range []**spec.Profile{&opt.MRC.Profile, &opt.RC.Profile} {
		if *p == nil {
			*p = fc.Profile
		} else if !reflect.DeepEqual(**p, *fc.Profile) {
			return nil, fmt.Errorf("%w: %q against %q", ErrProfileMismatch, (*p).Name, fc.Profile.Name)
		}
	}
	h := &Harness{Sim: s, opt: opt, mtu: int(opt.Attr.PathMTU), live: map[uint64]*wrRec{}, nextVer: 1}
	if h.mtu < 256 {
		return nil, fmt.Errorf("workload: path MTU %d", h.mtu)
	}
	unit := opt.MRC.Test.MPRUnit
	if unit == 0 {
		unit = 128
	}
	h.win = uint32(opt.Attr.MPR) * uint32(unit)
	for _, p := range opt.MRC.EVProfiles {
		if p.ID == opt.Attr.EVProfileID {
			h.nEVs = len(p.EVs)
			h.active = p.ActivePerPlane
			if h.active <= 0 {
				h.active = max(1, len(p.EVs)/max(1, fc.Planes)/2)
			}
		}
	}
	h.nodes = make([]*sm.Node, fc.Nodes)
	h.qpn = make([]uint32, fc.Nodes)
	h.mem = make([][]byte, fc.Nodes)
	h.last = make([][]uint64, fc.Nodes)
	for i := range h.nodes {
		if h.nodes[i], err = sm.NewNode(opt.MRC); err != nil {
			return nil, err
		}
		h.qpn[i] = 0x100 + uint32(i)*opt.QPNSpan
		if opt.Check {
			h.mem[i] = make([]byte, opt.Memory)
			h.last[i] = make([]uint64, opt.Memory/h.mtu)
		}
	}
	s.Observe(h)
	return h, nil
}

// Conns returns the connections.
func (h *Harness) Conns() []*Conn { return h.conns }

// Chunks returns the number of MTU-sized chunks of each node's memory.
func (h *Harness) Chunks() int { return h.opt.Memory / h.mtu }

// MTU returns the path MTU, which is also the chunk size.
func (h *Harness) MTU() int { return h.mtu }

// nodeIP is node n's address: 10.x.y.z, or with per-plane addressing
// (fabric.Config.PlaneAddresses) its IPv6 plane-0 address, which the
// fabric replaces with the address of the plane each packet takes.
func (h *Harness) nodeIP(n int) netip.Addr {
	if h.opt.Fabric.PlaneAddresses {
		return fabric.PlaneAddr(n, 0, true)
	}
	return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
}

func (h *Harness) newQPN(node int) uint32 {
	h.qpn[node]++
	return h.qpn[node]
}

func (h *Harness) attach(c *Conn, node, peer int, qpn uint32, ep fabric.Endpoint, r *ref) (fabric.EndpointID, error) {
	if h.opt.Wrap != nil {
		ep = h.opt.Wrap(c.ID, r.requester, ep)
	}
	id, err := h.Sim.Attach(node, qpn, peer, ep)
	if err != nil {
		return -1, err
	}
	r.node = node
	for len(h.refs) <= int(id) {
		h.refs = append(h.refs, nil)
	}
	h.refs[id] = r
	return id, nil
}

// Connect adds a connection from node from to node to.
func (h *Harness) Connect(from, to int, t Transport) (*Conn, error) {
	c := &Conn{ID: len(h.conns), From: from, To: to, Transport: t}
	if from < 0 || to < 0 || from >= len(h.nodes) || to >= len(h.nodes) {
		return nil, fmt.Errorf("%w: %d → %d", fabric.ErrUnknownNode, from, to)
	}
	var err error
	if t == RC {
		err = h.connectRC(c)
	} else {
		err = h.connectMRC(c)
	}
	if err != nil {
		return nil, err
	}
	h.conns = append(h.conns, c)
	return c, nil
}

// checkTemplates refuses templates that set what the harness assigns.
func checkTemplates(o *Options) error {
	q, a, r := &o.QP, &o.Attr, &o.RC
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"QP.QPN", q.QPN != 0}, {"QP.Seed", q.Seed != 0}, {"QP.Addr.SrcIP", q.Addr.SrcIP.IsValid()},
		{"QP.Addr.DstIP", q.Addr.DstIP.IsValid()}, {"Attr.DestQPN", a.DestQPN != 0},
		{"RC.QPN", r.QPN != 0}, {"RC.DestQPN", r.DestQPN != 0}, {"RC.EV", r.EV != 0}, {"RC.Plane", r.Plane != 0},
		{"RC.SrcIP", r.SrcIP.IsValid()}, {"RC.DstIP", r.DstIP.IsValid()},
	} {
		if f.set {
			return fmt.Errorf("%w: %s", ErrTemplateField, f.name)
		}
	}
	return nil
}

// qpConfig is the QP template with QP number qpn, seed and the addresses
// of nodes from and to.
func (h *Harness) qpConfig(qpn uint32, seed uint64, from, to int) sm.QPConfig {
	c := h.opt.QP
	c.QPN, c.Seed = qpn, seed
	c.Addr.SrcIP, c.Addr.DstIP = h.nodeIP(from), h.nodeIP(to)
	return c
}

func (h *Harness) connectMRC(c *Conn) error {
	qa, qb := h.newQPN(c.From), h.newQPN(c.To)
	seed := h.opt.Fabric.Seed*1_000_003 + uint64(c.ID)*2
	a, err := h.nodes[c.From].NewQP(h.qpConfig(qa, seed+1, c.From, c.To))
	if err != nil {
		return err
	}
	b, err := h.nodes[c.To].NewQP(h.qpConfig(qb, seed+2, c.To, c.From))
	if err != nil {
		return err
	}
	var out sm.Output
	aa, ab := h.opt.Attr, h.opt.Attr
	aa.DestQPN, ab.DestQPN = qb, qa
	if err := a.BringUp(h.Sim.Now(), aa, &out); err != nil {
		return err
	}
	if err := b.BringUp(h.Sim.Now(), ab, &out); err != nil {
		return err
	}
	ra := &ref{conn: c.ID, requester: true, client: h.clients, mrc: a, ev: map[uint32]sm.EVState{}, avoid: map[uint32]uint32{}}
	rb := &ref{conn: c.ID, mrc: b, ev: map[uint32]sm.EVState{}, avoid: map[uint32]uint32{}}
	h.clients++
	for _, r := range []*ref{ra, rb} {
		for _, e := range r.mrc.EVs(nil) {
			r.ev[e.Value] = e.State
		}
	}
	idb, err := h.attachPair(c, qa, qb, a, b, ra, rb)
	if err != nil {
		return err
	}
	h.fillRecv(idb, h.opt.QP.MaxRecvWR)
	return nil
}

// attachPair attaches the requester QP a (qpn qa, on c.From) and the
// responder QP b (qb, on c.To) of connection c, each the other's peer, and
// returns the responder's endpoint.
func (h *Harness) attachPair(c *Conn, qa, qb uint32, a, b fabric.Endpoint, ra, rb *ref) (fabric.EndpointID, error) {
	ida, err := h.attach(c, c.From, c.To, qa, a, ra)
	if err != nil {
		return 0, err
	}
	idb, err := h.attach(c, c.To, c.From, qb, b, rb)
	if err != nil {
		return 0, err
	}
	ra.peer, rb.peer = idb, ida
	c.Req, c.Rsp = append(c.Req, ida), append(c.Rsp, idb)
	return idb, nil
}

func (h *Harness) connectRC(c *Conn) error {
	fc := h.Sim.Config()
	n := h.opt.RCQPs
	if n == 0 {
		n = fc.Planes
	}
	for i := 0; i < n; i++ {
		qa, qb := h.newQPN(c.From), h.newQPN(c.To)
		tmpl := h.opt.RC
		if tmpl.MTU == 0 {
			tmpl.MTU = h.mtu
		}
		plane := uint8(i % fc.Planes)
		// The flow entropy of a RoCE QP is its UDP source port; give each
		// QP a different one so ECMP spreads them as it would.
		ev := uint32(plane)<<11 | uint32(mix(uint64(c.ID)<<16|uint64(i)+fc.Seed)&0xFF)
		ca, cb := tmpl, tmpl
		ca.QPN, ca.DestQPN, ca.EV, ca.Plane, ca.SrcIP, ca.DstIP = qa, qb, ev, plane, h.nodeIP(c.From), h.nodeIP(c.To)
		cb.QPN, cb.DestQPN, cb.EV, cb.Plane, cb.SrcIP, cb.DstIP = qb, qa, ev, plane, h.nodeIP(c.To), h.nodeIP(c.From)
		a, err := rc.New(ca)
		if err != nil {
			return err
		}
		b, err := rc.New(cb)
		if err != nil {
			return err
		}
		ra := &ref{conn: c.ID, requester: true, client: h.clients, rc: a}
		rb := &ref{conn: c.ID, rc: b}
		h.clients++
		idb, err := h.attachPair(c, qa, qb, a, b, ra, rb)
		if err != nil {
			return err
		}
		h.fillRecv(idb, max(tmpl.MaxRecvWR, 64))
	}
	return nil
}

func mix(x uint64) uint64 {
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	x *= 0x81dadef4bc2dd44d
	return x ^ x>>33
}

// fillRecv posts n receive WRs on a responder endpoint.
func (h *Harness) fillRecv(id fabric.EndpointID, n int) {
	if n <= 0 {
		n = 16
	}
	r := h.refs[id]
	h.Sim.Input(id, func(now Time, out *sm.Output) {
		for k := 0; k < n; k++ {
			var err error
			if r.mrc != nil {
				err = r.mrc.PostRecv(now, uint64(k), out)
			} else {
				err = r.rc.PostRecv(now, uint64(k), out)
			}
			if err != nil {
				return
			}
		}
	})
}

// WR is a work request to post.
type WR struct {
	Conn int
	Imm  bool // RDMA WRITE WITH IMM
	// Chunk is the first target chunk of To's memory; Size the length.
	Chunk, Size int
}

// word is the data pattern: the 8-byte word at byte offset o of the
// write of version v. Its top 40 bits are the version, so reading any
// chunk's first word says which write placed it.
func word(v uint64, o int) uint64 { return v<<24 | uint64(o/8)&0xFFFFFF }

func fillPattern(b []byte, v uint64, off int) {
	var w [8]byte
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], word(v, off+i))
	}
	if i < len(b) {
		binary.LittleEndian.PutUint64(w[:], word(v, off+i))
		copy(b[i:], w[:])
	}
}

// patternOK reports whether b is bytes [off, off+len(b)) of version v.
func patternOK(b []byte, v uint64, off int) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:]) != word(v, off+i) {
			return false
		}
	}
	if i < len(b) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], word(v, off+i))
		for k := i; k < len(b); k++ {
			if b[k] != w[k-i] {
				return false
			}
		}
	}
	return true
}

// Post posts a work request and returns its version (also its WRID and,
// truncated, its immediate data). ErrBusy means every send queue of the
// connection is full; post again after a completion.
func (h *Harness) Post(w WR) (uint64, error) {
	if w.Conn < 0 || w.Conn >= len(h.conns) {
		return 0, ErrNoConn
	}
	c := h.conns[w.Conn]
	n := max(1, (w.Size+h.mtu-1)/h.mtu)
	if w.Size == 0 {
		n = 0
	}
	if w.Chunk < 0 || w.Size < 0 || w.Chunk+n > h.Chunks() {
		return 0, fmt.Errorf("%w: chunks [%d, %d) of %d", ErrOutOfMem, w.Chunk, w.Chunk+n, h.Chunks())
	}
	if r := w.Size % h.mtu; h.opt.Check && r > 0 && r < 8 {
		return 0, fmt.Errorf("%w: %d bytes", ErrBadLength, w.Size)
	}
	v := h.nextVer
	var data []byte
	if h.opt.Check {
		data = make([]byte, w.Size)
		fillPattern(data, v, 0)
	} else {
		if len(h.bulk) < w.Size {
			h.bulk = make([]byte, w.Size)
		}
		data = h.bulk[:w.Size]
	}
	wr := sm.WorkRequest{WRID: v, Opcode: sm.OpWrite, RemoteVA: Base + uint64(w.Chunk)*uint64(h.mtu), RKey: 1, Data: data}
	if w.Imm {
		wr.Opcode, wr.Imm = sm.OpWriteImm, uint32(v)
	}
	alive := 0
	for tries := 0; tries < len(c.Req); tries++ {
		id := c.Req[c.rr%len(c.Req)]
		c.rr++
		r := h.refs[id]
		if r.mrc != nil && r.mrc.State() == sm.StateError || r.rc != nil && r.rc.Failed() {
			continue // posting would only flush; use the connection's other QPs
		}
		alive++
		rec := &wrRec{v: v, req: id, imm: w.Imm, node: c.To, va: wr.RemoteVA, size: w.Size, chunk0: w.Chunk, nchunks: n}
		if h.opt.Check {
			rec.placed = make([]uint64, (n+63)/64)
		}
		r.posted = append(r.posted, rec)
		if w.Imm {
			r.wimm = append(r.wimm, rec)
		}
		h.live[v] = rec
		var err error
		h.Sim.Input(id, func(now Time, out *sm.Output) {
			if r.mrc != nil {
				err = r.mrc.Post(now, wr, out)
			} else {
				err = r.rc.Post(now, wr, out)
			}
		})
		if err != nil {
			r.posted = r.posted[:len(r.posted)-1]
			if w.Imm {
				r.wimm = r.wimm[:len(r.wimm)-1]
			}
			delete(h.live, v)
			if errors.Is(err, sm.ErrSendQueueFull) || errors.Is(err, rc.ErrSendQueueFull) {
				continue
			}
			return 0, err
		}
		h.nextVer++
		c.Posted++
		if hist := h.opt.History; hist != nil {
			// Recorded after Post returns: its packets are at best on the
			// NIC now, so nothing has been placed yet, and a Post that
			// failed records nothing.
			for k := 0; k < n; k++ {
				rec.writes = append(rec.writes, hist.BeginWrite(r.client, linearize.ChunkRegister(c.To, w.Chunk+k), v))
			}
			r.unreturned = append(r.unreturned, rec)
			if w.Imm {
				hist.Enqueue(r.client, uint64(r.client), uint32(v))
			}
		}
		return v, nil
	}
	if alive == 0 {
		return 0, ErrQPFailed
	}
	return 0, ErrBusy
}

// Read reads chunk of node's memory now, as an application polling it
// would, records the read in the history and returns the version found
// (0: never written). It needs Check.
func (h *Harness) Read(node, chunk int) uint64 {
	v := h.version(node, chunk)
	if hist := h.opt.History; hist != nil {
		hist.Read(h.clients+node, linearize.ChunkRegister(node, chunk), v)
	}
	return v
}

func (h *Harness) version(node, chunk int) uint64 {
	m := h.mem[node]
	if m == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(m[chunk*h.mtu:]) >> 24
}

// Violations returns the broken invariants so far.
func (h *Harness) Violations() []Violation { return h.viol }

func (h *Harness) fail(req, format string, args ...any) {
	if len(h.viol) < 1000 { // a broken run can fail every step; keep the first ones
		h.viol = append(h.viol, Violation{Time: h.Sim.Now(), Req: req, Msg: fmt.Sprintf(format, args...)})
	}
}

// Outstanding returns the work requests posted and not yet completed.
func (h *Harness) Outstanding() int {
	n := 0
	for _, r := range h.refs {
		if r != nil && r.requester {
			n += len(r.posted)
		}
	}
	return n
}

// Live returns the work requests the harness still tracks (posted and not
// completed at both ends); it bounds the harness's memory.
func (h *Harness) Live() int { return len(h.live) }

// Finish records, for every requester whose sends have all completed
// successfully, that its WriteIMM stream is drained (FIFO model).
func (h *Harness) Finish() {
	hist := h.opt.History
	if hist == nil {
		return
	}
	for _, r := range h.refs {
		if r != nil && r.requester && len(r.posted) == 0 && r.failed == 0 {
			hist.Drained(r.client, uint64(r.client))
		}
	}
}

// QP returns the MRC QP of an endpoint, or nil.
func (h *Harness) QP(id fabric.EndpointID) *sm.QP { return h.refs[id].mrc }

// RCQP returns the RC QP of an endpoint, or nil.
func (h *Harness) RCQP(id fabric.EndpointID) *rc.QP { return h.refs[id].rc }

// Failed reports whether any QP is in ERROR.
func (h *Harness) Failed() bool {
	for _, r := range h.refs {
		if r == nil {
			continue
		}
		if r.mrc != nil && r.mrc.State() == sm.StateError || r.rc != nil && r.rc.Failed() {
			return true
		}
	}
	return false
}

// Dump describes the state of every QP, for failure reports.
func (h *Harness) Dump() string {
	var b strings.Builder
	for id, r := range h.refs {
		if r == nil {
			continue
		}
		role := "responder"
		if r.requester {
			role = "requester"
		}
		fmt.Fprintf(&b, "endpoint %d (conn %d %s, node %d): ", id, r.conn, role, r.node)
		switch {
		case r.mrc != nil:
			q := r.mrc
			fmt.Fprintf(&b, "MRC QP %#x %s una=%d nxt=%d retries=%d cwnd=%d inflight=%dB wimm=%d cack=%d deadline=%d posted=%d\n",
				q.QPN(), q.State(), q.CumulativeACK(), q.NextPSN(), q.Retries(), q.Cwnd(), q.InflightBytes(), q.WIMMInFlight(),
				q.ResponderCumulativeACK(), q.NextDeadline(), len(r.posted))
			for _, p := range q.AppendInFlight(nil) {
				fmt.Fprintf(&b, "    psn %d %v\n", p, q.PSNStateOf(p))
			}
			for _, e := range q.EVs(nil) {
				fmt.Fprintf(&b, "    ev %#x plane %d %s active=%v\n", e.Value, e.Plane, e.State, e.Active)
			}
		case r.rc != nil:
			fmt.Fprintf(&b, "RC QP failed=%v outstanding=%d window=%d posted=%d\n", r.rc.Failed(), r.rc.Outstanding(), r.rc.Window(), len(r.posted))
		}
	}
	return b.String()
}

// ErrBusyConn is returned by Rebase while the connection has work
// outstanding.
var ErrBusyConn = errors.New("workload: connection has work outstanding")

// Rebase resets both QPs of an MRC connection and brings them up again
// with send and receive PSNs starting at psn, as a new incarnation of the
// connection with the same QP numbers. Tests use it to fast-forward the
// 24-bit PSN space: a connection that has sent 2^24 packets since PSN p
// holds p again, which is what re-basing to p models without simulating
// sixteen million packets.
func (h *Harness) Rebase(conn int, psn uint32) error {
	if conn < 0 || conn >= len(h.conns) {
		return ErrNoConn
	}
	c := h.conns[conn]
	if c.Transport != MRC {
		return fmt.Errorf("workload: Rebase needs an MRC connection")
	}
	if c.Posted != c.Completed+c.Failed {
		return ErrBusyConn
	}
	for i, id := range []fabric.EndpointID{c.Req[0], c.Rsp[0]} {
		r := h.refs[id]
		a := h.opt.Attr
		a.SQPSN, a.RQPSN = psn, psn
		a.DestQPN = h.refs[r.peer].mrc.QPN()
		var err error
		h.Sim.Input(id, func(now Time, out *sm.Output) {
			if err = r.mrc.Modify(now, sm.StateReset, a, 0, out); err == nil {
				err = r.mrc.BringUp(now, a, out)
			}
		})
		if err != nil {
			return err
		}
		r.planeDown, r.avoid, r.wimm = 0, map[uint32]uint32{}, nil
		for _, e := range r.mrc.EVs(nil) {
			r.ev[e.Value] = e.State
		}
		if i == 1 {
			h.fillRecv(id, h.opt.QP.MaxRecvWR)
		}
	}
	return nil
}
