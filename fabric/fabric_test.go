package fabric_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

const us = sm.Microsecond

// sink is a bare endpoint that records what reaches it; tests inject
// packets through Sim.Input on another sink.
type sink struct {
	got []rx
}

type rx struct {
	t    sm.Time
	port int
	dscp uint8
	ecn  uint8
	n    int
	psn  uint32
}

func (k *sink) Receive(now sm.Time, port int, p *wire.Packet, out *sm.Output) {
	k.got = append(k.got, rx{t: now, port: port, dscp: p.DSCP(), ecn: p.ECN(), n: len(p.Payload), psn: p.BTH.PSN})
}
func (k *sink) Advance(sm.Time, *sm.Output) {}
func (k *sink) NextDeadline() sm.Time       { return sm.Never }

var dscp = spec.DefaultProfile().DSCP

// data is a 4 KiB trimmable, ECN-capable write to QP qpn.
func data(qpn, psn uint32, ev uint32, plane uint8) sm.Outgoing {
	o := sm.Outgoing{EV: ev, Plane: plane, Class: sm.ClassTrimmable}
	p := &o.Pkt
	p.IP4.TOS = dscp.Trimmable<<2 | 2
	p.IP4.Src, p.IP4.Dst = [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	p.SetEV(ev, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: qpn, PSN: psn}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 1, DMALength: 4096}
	p.Payload = make([]byte, 4096)
	return o
}

func newSim(t *testing.T, c fabric.Config, n int) (*fabric.Sim, []*sink, []fabric.EndpointID) {
	t.Helper()
	c.Nodes = n
	s, err := fabric.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ks := make([]*sink, n)
	ids := make([]fabric.EndpointID, n)
	for i := range ks {
		ks[i] = &sink{}
		// Node i's sink (QPN 0x10) sends to node n−1.
		if ids[i], err = s.Attach(i, 0x10, n-1, ks[i]); err != nil {
			t.Fatal(err)
		}
	}
	return s, ks, ids
}

func send(s *fabric.Sim, from fabric.EndpointID, pkts ...sm.Outgoing) {
	s.Input(from, func(now sm.Time, out *sm.Output) { out.Packets = append(out.Packets, pkts...) })
}

// TestLinkTiming: a train of back-to-back packets leaves at line rate and
// crosses four hops: the k-th arrives after (k+1) serialisations plus the
// three downstream store-and-forward serialisations and four hop delays.
func TestLinkTiming(t *testing.T) {
	s, ks, ids := newSim(t, fabric.Config{HopDelay: 500}, 2)
	var pkts []sm.Outgoing
	for k := 0; k < 10; k++ {
		pkts = append(pkts, data(0x10, uint32(k), 0x100, 0))
	}
	send(s, ids[0], pkts...)
	s.Run(sm.Never)
	got := ks[1].got
	if len(got) != 10 {
		t.Fatalf("%d packets delivered, want 10", len(got))
	}
	// 4096 payload + 14 Eth + 20 IPv4 + 8 UDP + 12 BTH + 4 METH + 16 RETH
	// + 4 ICRC + 4 FCS + 20 preamble/IFG = 4198 bytes = 335.84 ns at 100G.
	const ser = 4198 * 80 // ps
	for k, g := range got {
		want := sm.Time((int64(k+1)*ser+999)/1000) + 4*500 + 3*((ser+999)/1000)
		if d := g.t - want; d < -3 || d > 3 {
			t.Errorf("packet %d arrived at %d ns, want %d ± 3", k, g.t, want)
		}
		if g.port != 1 || g.n != 4096 {
			t.Errorf("packet %d on port %d with %d bytes", k, g.port, g.n)
		}
	}
}

// TestSlowLink: a last hop at a quarter of the rate delivers a train four
// times slower.
func TestSlowLink(t *testing.T) {
	s, ks, ids := newSim(t, fabric.Config{}, 2)
	if err := s.SetLinkRate(fabric.LinkLastHop, 0, 1, 0, 25e9); err != nil {
		t.Fatal(err)
	}
	var pkts []sm.Outgoing
	for k := 0; k < 10; k++ {
		pkts = append(pkts, data(0x10, uint32(k), 0x100, 0))
	}
	send(s, ids[0], pkts...)
	s.Run(sm.Never)
	got := ks[1].got
	if gap := got[9].t - got[8].t; gap < 4*335 || gap > 4*337 {
		t.Errorf("packets %d ns apart on a 25G last hop, want 4 × 336", gap)
	}
	if err := s.SetLinkRate(fabric.LinkLastHop, 0, 1, 0, 1); err == nil {
		t.Error("a 1 b/s link accepted")
	}
}

// TestIncastTrimsAtLastHop: 4 senders at line rate into one port overflow
// the last hop. Trimmable packets beyond TrimBytes arrive as headers with
// DSCP TRIMMED_LASTHOP (WIRE-DSCP-2); nothing is ECN-marked on the last hop
// (WP §2.1) and nothing is lost.
func TestIncastTrimsAtLastHop(t *testing.T) {
	// One T0 for all: the last hop is the only shared link.
	s, ks, ids := newSim(t, fabric.Config{TrimBytes: 64 << 10, NodesPerT0: 5}, 5)
	for n := 0; n < 4; n++ {
		var pkts []sm.Outgoing
		for k := 0; k < 200; k++ {
			pkts = append(pkts, data(0x10, uint32(n*1000+k), uint32(0x100+n), 0))
		}
		send(s, ids[n], pkts...)
	}
	s.Run(sm.Never)
	var full, trimmed int
	for _, g := range ks[4].got {
		switch {
		case g.dscp == dscp.TrimmedLastHop && g.n == 0:
			trimmed++
		case g.dscp == dscp.Trimmable && g.n == 4096:
			full++
		default:
			t.Fatalf("unexpected arrival %+v", g)
		}
		if g.ecn == 3 {
			t.Errorf("CE mark on the last hop: %+v", g)
		}
	}
	st := s.Stats()
	if full+trimmed != 800 || trimmed == 0 || st.TotalDropped() != 0 {
		t.Errorf("%d full, %d trimmed, stats %+v", full, trimmed, st)
	}
	if st.TrimmedLastHop != uint64(trimmed) || st.Trimmed != 0 {
		t.Errorf("stats count %d last-hop and %d mid-fabric trims, saw %d", st.TrimmedLastHop, st.Trimmed, trimmed)
	}
}

// TestCoreCongestionMarksAndTrims: all senders pinned to one path of one
// plane congest the T1 downlink: packets are CE-marked there and, beyond
// the trim threshold, trimmed with DSCP TRIMMED (not last hop).
func TestCoreCongestionMarksAndTrims(t *testing.T) {
	s, ks, ids := newSim(t, fabric.Config{PathsPerPlane: 1, TrimBytes: 96 << 10}, 5)
	for n := 0; n < 4; n++ {
		var pkts []sm.Outgoing
		for k := 0; k < 100; k++ {
			pkts = append(pkts, data(0x10, uint32(n*1000+k), uint32(0x100+n), 0))
		}
		send(s, ids[n], pkts...)
	}
	s.Run(sm.Never)
	var ce, trimmed int
	for _, g := range ks[4].got {
		if g.ecn == 3 {
			ce++
		}
		if g.dscp == dscp.Trimmed {
			trimmed++
		}
	}
	if ce == 0 || trimmed == 0 {
		t.Errorf("%d CE marks and %d mid-fabric trims, want both (stats %+v)", ce, trimmed, s.Stats())
	}
	l, err := s.Link(fabric.LinkT1Down, 0, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.PeakQueue < 96<<10 {
		t.Errorf("T1 downlink peak queue %d bytes, want beyond the trim threshold", l.PeakQueue)
	}
}

// TestOverflowDrops: a packet that cannot be trimmed (DSCP NO_TRIM) is
// dropped when the queue is full.
func TestOverflowDrops(t *testing.T) {
	s, ks, ids := newSim(t, fabric.Config{QueueBytes: 32 << 10}, 3)
	for n := 0; n < 2; n++ {
		var pkts []sm.Outgoing
		for k := 0; k < 50; k++ {
			o := data(0x10, uint32(k), 0x100, 0)
			o.Pkt.IP4.TOS = dscp.NoTrim<<2 | 2
			pkts = append(pkts, o)
		}
		send(s, ids[n], pkts...)
	}
	s.Run(sm.Never)
	st := s.Stats()
	if st.Dropped[fabric.DropOverflow] == 0 || len(ks[2].got)+int(st.Dropped[fabric.DropOverflow]) != 100 {
		t.Errorf("%d delivered, stats %+v", len(ks[2].got), st)
	}
}

// TestRules: loss, duplication, EV and class matching, and Limit.
func TestRules(t *testing.T) {
	s, ks, ids := newSim(t, fabric.Config{Seed: 7}, 2)
	r := fabric.NewRule()
	r.MatchEV, r.EV, r.Drop = true, 0x101, 1 // blackhole one flow
	if _, err := s.AddRule(r); err != nil {
		t.Fatal(err)
	}
	r = fabric.NewRule()
	r.MatchEV, r.EV, r.Dup, r.Limit = true, 0x102, 1, 3
	if _, err := s.AddRule(r); err != nil {
		t.Fatal(err)
	}
	r = fabric.NewRule()
	r.Class, r.Drop = fabric.ControlPackets, 1 // data passes
	if _, err := s.AddRule(r); err != nil {
		t.Fatal(err)
	}
	var pkts []sm.Outgoing
	for k := 0; k < 30; k++ {
		pkts = append(pkts, data(0x10, uint32(k), uint32(0x100+k%3), 0))
	}
	send(s, ids[0], pkts...)
	s.Run(sm.Never)
	n := map[uint32]int{}
	for _, g := range ks[1].got {
		n[g.psn%3]++
	}
	if n[0] != 10 || n[1] != 0 || n[2] != 13 {
		t.Errorf("arrivals per flow %v, want 10, 0 and 13 (3 duplicates)", n)
	}
	if _, err := s.AddRule(fabric.Rule{Plane: 9}); !errors.Is(err, fabric.ErrBadPlane) {
		t.Errorf("a rule on plane 9: %v, want ErrBadPlane", err)
	}
}

// TestRandomLossRate: a 10 % loss rule drops close to 10 % of many packets.
func TestRandomLossRate(t *testing.T) {
	s, ks, ids := newSim(t, fabric.Config{Seed: 11}, 2)
	r := fabric.NewRule()
	r.Drop = 0.1
	_, _ = s.AddRule(r)
	for b := 0; b < 20; b++ {
		var pkts []sm.Outgoing
		for k := 0; k < 100; k++ {
			pkts = append(pkts, data(0x10, uint32(k), uint32(0x100+k), uint8(k%8)))
		}
		send(s, ids[0], pkts...)
		s.Run(s.Now() + 100*us)
	}
	if n := len(ks[1].got); n < 1700 || n > 1900 {
		t.Errorf("%d of 2000 delivered with 10 %% loss", n)
	}
}

// TestSRv6Mapper: the path is the EV's T0-uplink field read back out of the
// uSID path the template builds (WP §2.3).
func TestSRv6Mapper(t *testing.T) {
	m, err := fabric.NewSRv6Mapper(fabric.DefaultSRv6Template())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ev    uint32
		plane int
		want  int
	}{{0x0000, 0, 0}, {0x0003, 0, 3}, {0x0805, 1, 1}, {0x38FE, 7, 2}, {0x3807, 7, 3}} {
		if got := m.Path(c.ev, c.plane, 0, 1, 4); got != c.want {
			t.Errorf("EV %#x: path %d, want %d", c.ev, got, c.want)
		}
	}
	if m.Mismatches != 0 {
		t.Errorf("%d plane mismatches", m.Mismatches)
	}
	m.Path(0x0800, 0, 0, 1, 4) // EV of plane 1 sent on port 1 (plane 0)
	if m.Mismatches != 1 {
		t.Errorf("a plane mismatch went uncounted")
	}
	h := fabric.HashMapper{Seed: 1}
	seen := map[int]bool{}
	for ev := uint32(0); ev < 256; ev++ {
		p := h.Path(ev, 0, 0, 1, 4)
		if p != h.Path(ev, 0, 0, 1, 4) || p < 0 || p >= 4 {
			t.Fatalf("hash path %d for EV %d", p, ev)
		}
		seen[p] = true
	}
	if len(seen) != 4 {
		t.Errorf("256 EVs hash onto %d of 4 paths", len(seen))
	}
}

// TestPortDown: a port that goes down drops traffic at once; the QPs on
// the node learn it after LinkDetect (EV-PORT-1), the peers after another
// PortStatusDelay (EV-PORT-2); both learn of the recovery (EV-PORT-3).
func TestPortDown(t *testing.T) {
	s, err := fabric.New(fabric.Config{Planes: 2, LinkDetect: 1000, PortStatusDelay: 5000})
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := sm.DefaultConfig(1), sm.DefaultConfig(2)
	ca.EVProfiles = []sm.EVProfile{sm.GenerateEVProfile(1, 2, 4, 1)}
	cb.EVProfiles = ca.EVProfiles
	qa, _ := sm.New(ca, sm.DefaultQPConfig(0x11, 1))
	qb, _ := sm.New(cb, sm.DefaultQPConfig(0x22, 2))
	attr := sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 1, MPRDest: 1, MaxWIMM: 4, MaxWIMMDest: 4, Timeout: 6,
		Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 4096}
	var out sm.Output
	attr.DestQPN = 0x22
	_ = qa.BringUp(0, attr, &out)
	attr.DestQPN = 0x11
	_ = qb.BringUp(0, attr, &out)
	var planes [2][]sm.Time
	s.Observe(obs(func(now sm.Time, id fabric.EndpointID, o *sm.Output) {
		for _, e := range o.Events {
			if e.Kind == sm.EvPlane {
				planes[id] = append(planes[id], now)
			}
		}
	}))
	_, _ = s.Attach(0, 0x11, 1, qa)
	_, _ = s.Attach(1, 0x22, 0, qb)
	s.At(10*us, func() { _ = s.SetPortUp(1, 1, false) })
	s.At(50*us, func() { _ = s.SetPortUp(1, 1, true) })
	s.Run(100 * us)
	want := [2][]sm.Time{{16 * us, 56 * us}, {11 * us, 51 * us}}
	if fmt.Sprint(planes) != fmt.Sprint(want) {
		t.Errorf("plane events at %v, want %v", planes, want)
	}
	if !s.PortUp(1, 1) {
		t.Error("port 2 of node 1 still down")
	}
}

// TestDeterministic: the same seed gives the same trace and capture, byte
// for byte; another seed gives another trace.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) ([]byte, []byte) {
		var tr bytes.Buffer
		var cp recorder
		s, ks, ids := newSim(t, fabric.Config{Seed: seed, Trace: &tr, Frames: &cp, TraceHops: true}, 3)
		r := fabric.NewRule()
		r.Drop, r.Dup, r.Jitter = 0.1, 0.1, 2000
		_, _ = s.AddRule(r)
		for n := 0; n < 2; n++ {
			var pkts []sm.Outgoing
			for k := 0; k < 50; k++ {
				pkts = append(pkts, data(0x10, uint32(k), uint32(0x100+k), uint8(k%8)))
			}
			send(s, ids[n], pkts...)
		}
		s.Run(sm.Never)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		_ = ks
		return tr.Bytes(), cp.bytes.Bytes()
	}
	t1, c1 := run(1)
	t2, c2 := run(1)
	t3, _ := run(2)
	if !bytes.Equal(t1, t2) || !bytes.Equal(c1, c2) {
		t.Error("two runs with seed 1 differ")
	}
	if bytes.Equal(t1, t3) {
		t.Error("seeds 1 and 2 give the same trace")
	}
	if !bytes.Contains(t1, []byte(`"k":"drop"`)) || !bytes.Contains(t1, []byte(`"k":"dup"`)) || !bytes.Contains(t1, []byte(`"k":"hop"`)) {
		t.Errorf("trace lacks drop, dup or hop lines:\n%.400s", t1)
	}
}

// recorder is a FrameSink that keeps every frame it is handed.
type recorder struct {
	planes int
	frames []fabric.Frame
	bytes  bytes.Buffer
}

func (r *recorder) Open(planes int) error { r.planes = planes; return nil }
func (r *recorder) Flush() error          { return nil }
func (r *recorder) Frame(f *fabric.Frame) {
	c := *f
	c.Data = slices.Clone(f.Data)
	r.frames = append(r.frames, c)
	fmt.Fprintf(&r.bytes, "%d %v %d %d %d>%d %d %v %x\n", f.At, f.Point, f.Plane, f.Packet, f.Src, f.Dst, f.Path, f.Copy, f.Data)
}

// TestFrameSink: the sink is opened with the fabric's planes and sees
// each packet where it enters (tx) and where it is delivered (rx), on its
// plane, as a frame the wire codec decodes back to the packet sent.
func TestFrameSink(t *testing.T) {
	var rec recorder
	s, _, ids := newSim(t, fabric.Config{Planes: 2, Frames: &rec}, 2)
	send(s, ids[0], data(0x10, 1, 0x100, 0), data(0x10, 2, 0x900, 1))
	s.Run(sm.Never)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.planes != 2 {
		t.Errorf("sink opened with %d planes, want 2", rec.planes)
	}
	type seen struct {
		at    fabric.Point
		plane int
		psn   uint32
	}
	want := []seen{{fabric.AtTx, 0, 1}, {fabric.AtTx, 1, 2}, {fabric.AtRx, 0, 1}, {fabric.AtRx, 1, 2}}
	if len(rec.frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(rec.frames), len(want))
	}
	for i, f := range rec.frames {
		var p wire.Packet
		if err := wire.Default.Decode(f.Data, &p); err != nil {
			t.Fatalf("frame %d does not decode: %v", i, err)
		}
		if got := (seen{f.Point, f.Plane, p.BTH.PSN}); got != want[i] {
			t.Errorf("frame %d: %+v, want %+v", i, got, want[i])
		}
		if f.Packet == 0 || f.Src != 0 || f.Dst != 1 {
			t.Errorf("frame %d: packet %d, %d>%d, want a fabric id and 0>1", i, f.Packet, f.Src, f.Dst)
		}
	}
}

// TestConfigErrors: bad configurations are typed errors.
func TestConfigErrors(t *testing.T) {
	for _, c := range []fabric.Config{{Planes: 40}, {LinkRate: 1}, {ECNMin: 10, ECNMax: 5}, {HopDelay: -1}} {
		var ce *fabric.ConfigError
		if _, err := fabric.New(c); !errors.As(err, &ce) {
			t.Errorf("%+v: %v, want *ConfigError", c, err)
		}
	}
	s, _ := fabric.New(fabric.Config{})
	if _, err := s.Attach(5, 1, 0, &sink{}); !errors.Is(err, fabric.ErrUnknownNode) {
		t.Errorf("attach to node 5: %v", err)
	}
	_, _ = s.Attach(0, 1, 1, &sink{})
	if _, err := s.Attach(0, 1, 1, &sink{}); !errors.Is(err, fabric.ErrDuplicateQPN) {
		t.Errorf("attach twice: %v", err)
	}
}

type obs func(now sm.Time, id fabric.EndpointID, o *sm.Output)

func (f obs) Observe(now sm.Time, id fabric.EndpointID, o *sm.Output) { f(now, id, o) }
