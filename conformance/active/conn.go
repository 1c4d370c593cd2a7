package active

import (
	"bytes"
	"fmt"
	"net"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// ConnOptions shape the QP pair of a case. Zero fields take the defaults
// noted.
type ConnOptions struct {
	MPR, MPRDest         int // units of 128 PSNs; default 1
	MaxWIMM, MaxWIMMDest int // default 8
	PathMTU              int // default 1024
	Recvs                int // receive WRs posted at the IUT; default 16
	// Retry is the IUT's retry budget; the zero value means linear 7,
	// exponential unlimited.
	Retry control.Retry
	// EVsPerPlane, Active and MinActive shape the IUT's EV profile;
	// defaults 4, 2 and 1.
	EVsPerPlane, Active, MinActive int
	// ProbeInterval and ProbeSuccesses of the IUT's EV profile (0: the
	// IUT's defaults).
	ProbeInterval  Time
	ProbeSuccesses int
	// NSCC gives the IUT an NSCC profile with this base_rtt instead of
	// no congestion control.
	NSCC Time
	// Caps are MRC_QP_CAP_* names for the IUT's QP.
	Caps []string
	// PSNs, when set, are the IUT's first send and receive PSNs; by
	// default they are drawn from the case's seed (some near 2^24, to
	// cross the wrap).
	PSNs *[2]uint32
	// EVProfile, when set, gives the IUT EV profile 1 through the control
	// API's object methods instead of set_ev_profile (the case puts it
	// ONLINE); IUTEVs is then left empty.
	EVProfile func(t *T)
	// StopAtRTR leaves the IUT's QP in RTR; the case moves it to RTS
	// with ToRTS.
	StopAtRTR bool
	// CompChannel creates a completion channel (Conn.Channel) and the
	// IUT's QP on it.
	CompChannel bool
}

// The tester's side of a QP pair.
const (
	testerQPNs = 0x7E0000 // the tester's QPs are 0x7E0001, 0x7E0002, ...: one per case, so connections stay apart in a capture
	testerRKey = 0x7E57_0001
	testerVA   = 0x5000_0000
	memSize    = 1 << 20
)

// DataTx is one data packet the IUT sent, as the tester received it.
type DataTx struct {
	F     *RxFrame
	PSN   uint32
	EV    uint32
	Plane int
	Rtx   bool
	DSCP  uint8
}

// Conn is a QP pair between the tester and the IUT: the IUT's QP, set up
// through the control channel, and the tester's reference QP (package
// statemachine), which answers the IUT's data and can send data of its
// own. Hooks let a case impair or observe the traffic.
type Conn struct {
	t   *T
	Opt ConnOptions
	// Channel is the IUT's completion channel (ConnOptions.CompChannel).
	Channel uint32
	// IUT is the IUT's QP number; TQPN the tester's.
	IUT, TQPN uint32
	// DstMR is the IUT region the tester writes; SrcMR the IUT region the
	// IUT's own writes read from.
	DstMR, SrcMR control.MR
	// SQPSN and RQPSN are the IUT's first send and receive PSNs.
	SQPSN, RQPSN uint32
	// IUTEVs are the IUT's EVs, per plane; TEVs the tester's.
	IUTEVs, TEVs [][]uint32

	ref *statemachine.QP
	out statemachine.Output
	ep  *statemachine.Endpoint
	// Mem is the tester's memory, which the IUT writes.
	Mem []byte

	// In decides the fate of each frame from the IUT before the
	// reference QP sees it; Out of each packet the reference QP sends.
	In  func(f *RxFrame) Impair
	Out func(o *statemachine.Outgoing) Impair
	// Watch sees every frame from the IUT.
	Watch func(f *RxFrame)

	// Sent lists the IUT's data packets in arrival order.
	Sent []DataTx
	// AckedAt is when the tester first told the IUT that a PSN was
	// received (by cumulative ACK or SACK bitmap).
	AckedAt map[uint32]Time
	// CumAt is when the tester's cumulative acknowledgement first covered
	// a PSN.
	CumAt    map[uint32]Time
	lastCack uint32
	// EPEvents are the tester endpoint's events (responses, port masks).
	EPEvents []statemachine.Event
	// RefEvents are the reference QP's events (placements, ...).
	RefEvents []statemachine.Event
	// RefComps are the reference QP's completions.
	RefComps []statemachine.Completion

	srcOff uint64
	posted []posted
	comps  []control.Completion
}

type posted struct {
	wrid uint64
	off  uint64
	n    int
	op   string
	imm  uint32
}

// NewConn sets the IUT up from reset: EV and CC profiles, two memory
// regions, one QP moved to RTS against the tester's reference QP, and
// receive WRs.
func (t *T) NewConn(o ConnOptions) *Conn {
	o.setDefaults()
	c := &Conn{t: t, Opt: o, AckedAt: map[uint32]Time{}, CumAt: map[uint32]Time{}, Mem: make([]byte, memSize)}
	if o.PSNs != nil {
		c.SQPSN, c.RQPSN = o.PSNs[0], o.PSNs[1]
	} else {
		c.SQPSN, c.RQPSN = c.randPSN(), c.randPSN()
	}
	t.Call(control.MethodReset, nil, nil)
	t.Sleep(2 * t.s.tim.Reaction) // frames of an earlier case still in flight
	tevs := c.setEVProfiles()
	c.setUpIUT()
	c.setUpReference(tevs)
	t.Logf("QP pair: IUT QPN %#x (send PSN %d, receive PSN %d), tester QPN %#x, %d planes", c.IUT, c.SQPSN, c.RQPSN, c.TQPN, t.Planes())
	return c
}

// setDefaults gives the zero fields their defaults (see ConnOptions).
func (o *ConnOptions) setDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MPR, 1)
	def(&o.MPRDest, 1)
	def(&o.MaxWIMM, 8)
	def(&o.MaxWIMMDest, 8)
	def(&o.PathMTU, 1024)
	def(&o.Recvs, 16)
	def(&o.EVsPerPlane, 4)
	def(&o.Active, 2)
	def(&o.MinActive, 1)
	if o.Retry == (control.Retry{}) {
		o.Retry = control.Retry{LinearCnt: 7, ExpCnt: 25}
	}
}

// setEVProfiles gives each side EVsPerPlane EVs per plane: the IUT's
// (0x4000 | plane+1 << 8 | i) in its EV profile 1, unless the case sets
// that profile itself (ConnOptions.EVProfile), and the tester's
// (0x2000 | ...), which it returns for the reference QP's profile.
func (c *Conn) setEVProfiles() []statemachine.EVEntry {
	t, o := c.t, &c.Opt
	planes := t.Planes()
	prof := control.EVProfile{ID: 1, ActivePerPlane: o.Active, MinActive: o.MinActive,
		ProbeIntervalNs: int64(o.ProbeInterval), ProbeSuccesses: o.ProbeSuccesses}
	c.IUTEVs = make([][]uint32, planes)
	c.TEVs = make([][]uint32, planes)
	var tevs []statemachine.EVEntry
	for pl := 0; pl < planes; pl++ {
		for i := 0; i < o.EVsPerPlane; i++ {
			v := uint32(0x4000 | (pl+1)<<8 | i)
			prof.EVs = append(prof.EVs, control.EV{Value: v, Port: pl + 1})
			c.IUTEVs[pl] = append(c.IUTEVs[pl], v)
			tv := uint32(0x2000 | (pl+1)<<8 | i)
			c.TEVs[pl] = append(c.TEVs[pl], tv)
			tevs = append(tevs, statemachine.EVEntry{Value: tv, Port: uint8(pl + 1)})
		}
	}
	if o.EVProfile != nil {
		o.EVProfile(t)
		c.IUTEVs = make([][]uint32, planes)
	} else {
		t.Call(control.MethodSetEVProfile, prof, nil)
	}
	return tevs
}

// setUpIUT makes the IUT's side through the control channel: its CC
// profile, the memory regions, the QP (on a completion channel if asked)
// moved to RTR with receive WRs posted, then to RTS unless the case stops
// at RTR.
func (c *Conn) setUpIUT() {
	t, o, s := c.t, &c.Opt, c.t.s
	cc := control.CCProfile{ID: 1, Algorithm: control.CCNone}
	if o.NSCC > 0 {
		cc = control.CCProfile{ID: 1, Algorithm: control.CCNSCC, NSCC: &control.NSCC{BaseRTTNs: int64(o.NSCC)}}
	}
	t.Call(control.MethodSetCCProfile, cc, nil)
	t.Call(control.MethodRegMR, control.RegMRParams{Length: memSize, Access: []string{control.AccessLocalWrite, control.AccessRemoteWrite}}, &c.DstMR)
	t.Call(control.MethodRegMR, control.RegMRParams{Length: memSize, Access: []string{control.AccessLocalWrite}}, &c.SrcMR)
	if o.CompChannel {
		var ch control.ChannelParams
		t.Call(control.MethodCreateCompChannel, nil, &ch)
		c.Channel = ch.Channel
	}
	var q control.QPNResult
	t.Call(control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 64, MaxRecvWR: 64, Channel: c.Channel}, &q)
	c.IUT = q.QPN
	one := uint64(1)
	zero := 0
	t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: c.IUT, State: control.StateInit,
		Attr: control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: ptr(0xF)}}, nil)
	for i := 0; i < o.Recvs; i++ {
		t.Call(control.MethodPostRecv, control.PostRecvParams{QPN: c.IUT, WRID: uint64(9000 + i)}, nil)
	}
	caps := append([]string{}, o.Caps...)
	s.tqpn++
	c.TQPN = testerQPNs | s.tqpn&0xFFFF
	tq := c.TQPN
	av := control.AV{MAC: net.HardwareAddr(s.tester.MACs[0][:]).String(), IP: s.tester.IP.String()}
	t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: c.IUT, State: control.StateRTR, Attr: control.QPAttr{
		MaxWIMMDest: &o.MaxWIMMDest, MPRDest: &o.MPRDest, Cap: &caps, PathMTU: &o.PathMTU, DestQPN: &tq,
		RQPSN: &c.RQPSN, AV: &av}}, nil)
	if !o.StopAtRTR {
		c.ToRTS()
	}
}

// setUpReference makes the tester's side: its reference QP, which mirrors
// the IUT's attributes, on the tester's EVs tevs, brought up to RTS with
// receive WRs posted, and its endpoint.
func (c *Conn) setUpReference(tevs []statemachine.EVEntry) {
	t, o, s := c.t, &c.Opt, c.t.s
	cfg := statemachine.Config{Profile: ptrProfile(s.codec),
		EVProfiles: []statemachine.EVProfile{{ID: 1, EVs: tevs, ActivePerPlane: 2, MinActive: 1}},
		CCProfiles: []statemachine.CCProfile{{ID: 1, Algorithm: statemachine.CCAlgNone}},
		MRs:        []statemachine.MemoryRegion{{RKey: testerRKey, VA: testerVA, Len: memSize}},
	}
	ref, err := statemachine.New(cfg, statemachine.QPConfig{QPN: c.TQPN, Seed: t.seed,
		Addr: statemachine.Addressing{SrcMAC: s.tester.MACs[0], DstMAC: s.iut.MACs[0], SrcIP: s.tester.IP, DstIP: s.iut.IP,
			EVMode: s.mode},
		MaxSendWR: 64, MaxRecvWR: 64})
	if err != nil {
		t.Fatalf("tester QP: %v", err)
	}
	c.ref = ref
	c.out.TracePackets = true
	a := statemachine.Attr{EVProfileID: 1, CCProfileID: 1, MPR: uint8(o.MPRDest), MPRDest: uint8(o.MPR),
		MaxWIMM: uint16(o.MaxWIMMDest), MaxWIMMDest: 64, Timeout: s.tim.Timeout,
		Retry: statemachine.Retry{LinearCnt: 7, ExpCnt: statemachine.RetryInfinite}, PathMTU: uint16(o.PathMTU),
		DestQPN: c.IUT, RQPSN: c.SQPSN, SQPSN: c.RQPSN}
	if err := ref.BringUp(t.Now(), a, &c.out); err != nil {
		t.Fatalf("tester QP: %v", err)
	}
	for i := 0; i < 64; i++ {
		_ = ref.PostRecv(t.Now(), uint64(i), &c.out)
	}
	c.out.Reset()
	c.lastCack = wire.PSNAdd(c.SQPSN, -1)
	ep, err := statemachine.NewEndpoint(statemachine.EndpointConfig{Profile: ptrProfile(s.codec), SrcMAC: s.tester.MACs[0],
		SrcIP: s.tester.IP, EVMode: s.mode})
	if err != nil {
		t.Fatalf("tester endpoint: %v", err)
	}
	c.ep = ep
}

func ptr[V any](v V) *V { return &v }

func ptrProfile(c *wire.Codec) *spec.Profile {
	p := c.Profile()
	return &p
}

func (c *Conn) randPSN() uint32 {
	r := c.t.rng
	if r.IntN(3) == 0 {
		return wire.PSNMask - uint32(r.IntN(40)) // cross the 24-bit wrap during the case (RSP-RCV-5)
	}
	return uint32(r.IntN(1 << 20))
}

// Ref returns the tester's reference QP.
func (c *Conn) Ref() *statemachine.QP { return c.ref }

// Run runs the exchange until until, or until stop returns true (checked
// after every frame and timer); it reports whether stop ended it.
func (c *Conn) Run(until Time, stop func() bool) bool {
	t := c.t
	for {
		if stop != nil && stop() {
			return true
		}
		now := t.Now()
		if now >= until {
			return false
		}
		d := min(until, c.ref.NextDeadline(), c.ep.NextDeadline())
		if f, ok := t.Recv(d); ok {
			c.frame(f)
		}
		now = t.Now()
		if c.ref.NextDeadline() <= now {
			c.ref.Advance(now, &c.out)
			c.flush()
		}
		if c.ep.NextDeadline() <= now {
			c.ep.Advance(now, &c.out)
			c.flushEP()
		}
	}
}

// frame handles one frame from the IUT.
func (c *Conn) frame(f *RxFrame) {
	t := c.t
	if c.Watch != nil {
		c.Watch(f)
	}
	p := &f.Pkt
	op := p.BTH.Opcode
	if op.IsWrite() && p.BTH.DestQP == c.TQPN {
		c.Sent = append(c.Sent, DataTx{F: f, PSN: p.BTH.PSN, EV: f.EV, Plane: f.Plane, Rtx: p.BTH.Retransmit, DSCP: p.DSCP()})
	}
	var im Impair
	if c.In != nil {
		im = c.In(f)
	}
	if im.Drop {
		return
	}
	if im.Trim || im.TrimLastHop || im.CE {
		q := f.Pkt // a copy: the evidence keeps the frame as received
		im.apply(t.s.codec, &q)
		if im.Trim || im.TrimLastHop {
			q.Trimmed, q.TrimmedLastHop = true, im.TrimLastHop
		}
		p = &q
	}
	now := t.Now()
	switch p.BTH.DestQP {
	case c.TQPN:
		c.ref.Receive(now, f.Plane+1, p, &c.out)
		c.flush()
	case wire.EndpointQPN:
		c.ep.Receive(now, f.Plane+1, p, &c.out)
		c.flushEP()
	}
}

// flush sends what the reference QP produced, through the Out hook.
func (c *Conn) flush() {
	t := c.t
	for i := range c.out.Packets {
		o := &c.out.Packets[i]
		var im Impair
		if c.Out != nil {
			im = c.Out(o)
		}
		if !im.Drop {
			c.noteAck(&o.Pkt)
		}
		pl := int(o.Plane)
		o.Pkt.Eth.Src, o.Pkt.Eth.Dst = t.s.tester.MACs[pl], t.s.iut.MACs[pl]
		t.SendPacket(pl, &o.Pkt, im)
	}
	for _, pl := range c.out.Placements {
		if off := pl.VA - testerVA; pl.VA >= testerVA && off+uint64(len(pl.Data)) <= memSize {
			copy(c.Mem[off:], pl.Data)
		}
	}
	c.RefEvents = append(c.RefEvents, c.out.Events...)
	c.RefComps = append(c.RefComps, c.out.Completions...)
	c.out.Reset()
}

func (c *Conn) flushEP() {
	t := c.t
	// A conformant peer applies the IUT's port status updates to its own
	// QP (EP-PSU-3).
	for _, e := range c.out.Events {
		if e.Kind == statemachine.EvRemotePortMask {
			c.ref.SetPortStatus(t.Now(), fullMask(t.Planes()), uint32(e.Value), &c.out)
		}
	}
	for i := range c.out.Packets {
		o := &c.out.Packets[i]
		pl := int(o.Plane)
		o.Pkt.Eth.Src, o.Pkt.Eth.Dst = t.s.tester.MACs[pl], t.s.iut.MACs[pl]
		t.SendPacket(pl, &o.Pkt, Impair{})
	}
	c.EPEvents = append(c.EPEvents, c.out.Events...)
	c.out.Reset()
}

// noteAck records the PSNs a packet of the tester acknowledges.
func (c *Conn) noteAck(p *wire.Packet) {
	now := c.t.Now()
	mark := func(psn uint32) {
		if _, ok := c.AckedAt[psn]; !ok {
			c.AckedAt[psn] = now
		}
	}
	cum := func(cack uint32) {
		for d := wire.PSNDiff(cack, c.lastCack); d > 0 && d < 1<<16; d-- {
			c.lastCack = wire.PSNAdd(c.lastCack, 1)
			mark(c.lastCack)
			c.CumAt[c.lastCack] = now
		}
	}
	switch p.BTH.Opcode {
	case wire.OpSACK:
		cum(p.SETH.CACKPSN)
		base := p.SETH.BitmapBase()
		for k := 0; k < 64; k++ {
			if p.SETH.SACKBitmap&(1<<k) != 0 {
				mark(wire.PSNAdd(base, k))
			}
		}
	case wire.OpAcknowledge:
		if p.AETH.Type() == wire.AETHTypeACK {
			cum(p.BTH.PSN)
		}
	}
}

// LastCack is the tester's cumulative acknowledgement: an upper bound of
// the IUT requester's una.
func (c *Conn) LastCack() uint32 { return c.lastCack }

// Acked reports whether the tester acknowledged psn before time at minus
// the reaction time.
func (c *Conn) Acked(psn uint32, at Time) bool {
	a, ok := c.AckedAt[psn]
	return ok && a+c.t.s.tim.Reaction < at
}

// pattern is the content of byte k of work request wrid.
func pattern(wrid uint64, k int) byte { return byte(uint64(k)*131 + wrid*7 + uint64(k>>8)) }

// Post has the IUT write n bytes (a pattern of wrid) into the tester's
// memory, with immediate data imm for RDMA_WRITE_WITH_IMM. It returns the
// offset in the tester's memory.
func (c *Conn) Post(wrid uint64, op string, n int, imm uint32) uint64 {
	t := c.t
	if c.srcOff+uint64(n) > memSize {
		c.srcOff = 0
	}
	off := c.srcOff
	c.srcOff = (c.srcOff + uint64(n) + 63) &^ 63
	data := make([]byte, n)
	for k := range data {
		data[k] = pattern(wrid, k)
	}
	for k := 0; k < n; k += control.MaxData {
		e := min(n, k+control.MaxData)
		t.Call(control.MethodWriteMR, control.WriteMRParams{MR: c.SrcMR.MR, Offset: off + uint64(k), Data: data[k:e]}, nil)
	}
	t.Call(control.MethodPostSend, control.PostSendParams{QPN: c.IUT, WRID: wrid, Opcode: op,
		Local: &control.SGE{MR: c.SrcMR.MR, Offset: off, Length: uint64(n)}, Remote: control.Remote{VA: testerVA + off, RKey: testerRKey},
		Imm: imm}, nil)
	c.posted = append(c.posted, posted{wrid: wrid, off: off, n: n, op: op, imm: imm})
	return off
}

// Poll returns the IUT's new completions (and keeps them in Completions).
func (c *Conn) Poll() []control.Completion {
	var r control.PollCQResult
	c.t.Call(control.MethodPollCQ, control.PollCQParams{QPN: c.IUT}, &r)
	c.comps = append(c.comps, r.Completions...)
	return r.Completions
}

// Completions returns every completion polled so far.
func (c *Conn) Completions() []control.Completion { return c.comps }

// WaitCQ runs the exchange until the IUT has produced n completions in all
// or within has passed; it returns every completion polled so far.
func (c *Conn) WaitCQ(n int, within Time) []control.Completion {
	t := c.t
	end := t.Now() + within
	for {
		c.Poll()
		if len(c.comps) >= n || t.Now() >= end {
			return c.comps
		}
		c.Run(min(end, t.Now()+t.s.tim.Poll), nil)
	}
}

// Sends returns the send completions polled so far.
func (c *Conn) Sends() []control.Completion {
	var out []control.Completion
	for _, cp := range c.comps {
		if !cp.Recv {
			out = append(out, cp)
		}
	}
	return out
}

// WaitSends runs the exchange until the IUT has produced n send
// completions or within has passed; it returns the send completions.
func (c *Conn) WaitSends(n int, within Time) []control.Completion {
	t := c.t
	end := t.Now() + within
	for {
		c.Poll()
		if s := c.Sends(); len(s) >= n || t.Now() >= end {
			return s
		}
		c.Run(min(end, t.Now()+t.s.tim.Poll), nil)
	}
}

// CheckMem checks that the tester's memory holds the data of every posted
// write that completed successfully, and returns the number checked.
func (c *Conn) CheckMem(req conformance.RequirementID) int {
	t := c.t
	okIDs := map[uint64]bool{}
	for _, cp := range c.comps {
		if !cp.Recv && cp.Status == control.WCSuccess {
			okIDs[cp.WRID] = true
		}
	}
	n := 0
	for _, p := range c.posted {
		if !okIDs[p.wrid] {
			continue
		}
		want := make([]byte, p.n)
		for k := range want {
			want[k] = pattern(p.wrid, k)
		}
		got := c.Mem[p.off : p.off+uint64(p.n)]
		i := firstDiff(got, want)
		t.Check(i < 0, req, Evidence{}, fmt.Sprintf("WR %d's %d bytes in the tester's memory", p.wrid, p.n),
			"byte %d differs (%#x, want %#x)", i, at(got, i), at(want, i))
		n++
	}
	return n
}

func at(b []byte, i int) byte {
	if i < 0 || i >= len(b) {
		return 0
	}
	return b[i]
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// ReadIUT reads n bytes at off of the IUT's DstMR.
func (c *Conn) ReadIUT(off uint64, n int) []byte {
	var out []byte
	for k := 0; k < n; k += control.MaxData {
		e := min(n, k+control.MaxData)
		var r control.ReadMRResult
		c.t.Call(control.MethodReadMR, control.ReadMRParams{MR: c.DstMR.MR, Offset: off + uint64(k), Length: uint64(e - k)}, &r)
		out = append(out, r.Data...)
	}
	return out
}

// QueryQP returns the IUT QP's state.
func (c *Conn) QueryQP() control.QueryQPResult {
	var r control.QueryQPResult
	c.t.Call(control.MethodQueryQP, control.QPNParams{QPN: c.IUT}, &r)
	return r
}

// TEV returns tester EV i of plane pl.
// ToRTS moves the IUT's QP from RTR to RTS with the connection's
// attributes (NewConn does unless StopAtRTR).
func (c *Conn) ToRTS() {
	o := &c.Opt
	to := int(c.t.s.tim.Timeout)
	c.t.Call(control.MethodModifyQP, control.ModifyQPParams{QPN: c.IUT, State: control.StateRTS, Attr: control.QPAttr{
		MaxWIMM: &o.MaxWIMM, MPR: &o.MPR, Retry: &o.Retry, Timeout: &to, SQPSN: &c.SQPSN}}, nil)
}

func (c *Conn) TEV(pl, i int) uint32 { return c.TEVs[pl][i%len(c.TEVs[pl])] }

// Data builds a write packet from the tester to the IUT's DstMR at off.
// The caller adjusts MSN, RQMSN, flags and addressing fields as the case
// needs; plane and EV are set by Send.
func (c *Conn) Data(psn uint32, op wire.Opcode, off uint64, payload []byte, dmaLen int) *wire.Packet {
	p := &wire.Packet{}
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: c.IUT, PSN: psn & wire.PSNMask, AckReq: op.IsLast()}
	p.RETH = wire.RETH{VA: c.DstMR.VA + off, RKey: c.DstMR.RKey, DMALength: uint32(dmaLen)}
	p.Payload = payload
	return p
}

// Send sends a packet the tester built to the IUT on plane with EV ev,
// filling the addresses and the traffic class of its kind.
func (c *Conn) Send(p *wire.Packet, plane int, ev uint32, im Impair) {
	t := c.t
	d := t.s.codec.Profile().DSCP
	dscp, ect := d.Control, false
	switch op := p.BTH.Opcode; {
	case op.IsWrite():
		dscp, ect = d.Trimmable, true
		if p.BTH.Retransmit {
			dscp = d.TrimmableRetx
		}
	case op == wire.OpProbe:
		dscp, ect = d.NoTrim, true
	}
	t.fillL2L3(p, plane, dscp, ect, ev)
	t.SendPacket(plane, p, im)
}

// Probe sends a reliability probe with id on plane and EV ev; it returns
// the probe's tx_timestamp.
func (c *Conn) Probe(id uint16, plane int, ev uint32, im Impair) uint16 {
	p := &wire.Packet{}
	ts := c.ts()
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: c.IUT}
	p.PETH = wire.PETH{ProbeID: id, SPDCID: uint16(c.TQPN), DPDCID: uint16(c.IUT), TxTimestamp: ts, FType: 1}
	c.Send(p, plane, ev, im)
	return ts
}

// ts is the tester's 16-bit timestamp now.
func (c *Conn) ts() uint16 { return c.tsAt(c.t.Now()) }

// tsAt is the 16-bit timestamp of time at, in profile units.
func (c *Conn) tsAt(at Time) uint16 {
	u := Time(c.t.s.codec.Profile().TimestampUnitNs)
	return uint16(at / u)
}

// ProbeState asks the IUT's responder for its current state with a
// probe, repeating it when the answer is lost; it returns the answering
// SACK.
func (c *Conn) ProbeState(plane int) (*RxFrame, bool) {
	t := c.t
	for try := 0; try < t.s.tim.Tries+2; try++ {
		id := uint16(0x7000 + t.rng.IntN(0x0FFF))
		var got *RxFrame
		prev := c.Watch
		c.Watch = chainWatch(prev, func(f *RxFrame) {
			if f.Pkt.BTH.Opcode == wire.OpSACK && f.Pkt.SETH.PR && uint16(f.Pkt.SETH.AckPSNOffset) == id {
				got = f
			}
		})
		c.Probe(id, plane, c.TEV(plane, try), Impair{})
		c.Run(t.Now()+t.s.tim.Answer, func() bool { return got != nil })
		c.Watch = prev
		if got != nil {
			return got, true
		}
	}
	return nil, false
}

func chainWatch(a, b func(*RxFrame)) func(*RxFrame) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(f *RxFrame) { a(f); b(f) }
}
