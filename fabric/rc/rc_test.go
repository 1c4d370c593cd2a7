package rc_test

import (
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/rc"
	sm "github.com/openmrc/mrc/statemachine"
)

const us = sm.Microsecond

type pair struct {
	s      *fabric.Sim
	a, b   *rc.QP
	ia, ib fabric.EndpointID
	comp   map[fabric.EndpointID][]sm.Completion
	placed []uint32 // PSNs placed at b, in order
}

func newPair(t *testing.T, c fabric.Config, mod func(*rc.Config)) *pair {
	t.Helper()
	s, err := fabric.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ip := func(n byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, n}) }
	ca := rc.Config{QPN: 0x11, DestQPN: 0x22, EV: 0x123, Plane: 2, SrcIP: ip(1), DstIP: ip(2), Window: 32}
	cb := rc.Config{QPN: 0x22, DestQPN: 0x11, EV: 0x123, Plane: 2, SrcIP: ip(2), DstIP: ip(1)}
	if mod != nil {
		mod(&ca)
	}
	p := &pair{s: s, comp: map[fabric.EndpointID][]sm.Completion{}}
	if p.a, err = rc.New(ca); err != nil {
		t.Fatal(err)
	}
	if p.b, err = rc.New(cb); err != nil {
		t.Fatal(err)
	}
	p.ia, _ = s.Attach(0, 0x11, 1, p.a)
	p.ib, _ = s.Attach(1, 0x22, 0, p.b)
	s.Observe(obs(func(now sm.Time, id fabric.EndpointID, out *sm.Output) {
		p.comp[id] = append(p.comp[id], out.Completions...)
		if id == p.ib {
			for _, pl := range out.Placements {
				p.placed = append(p.placed, pl.PSN)
			}
		}
		for _, o := range out.Packets {
			if (id == p.ia || id == p.ib) && (o.Plane != 2 || o.EV != 0x123) {
				t.Errorf("RC packet on plane %d EV %#x: an RC QP has one path", o.Plane, o.EV)
			}
		}
	}))
	s.Input(p.ib, func(now sm.Time, out *sm.Output) {
		for k := 0; k < 8; k++ {
			_ = p.b.PostRecv(now, uint64(k), out)
		}
	})
	return p
}

func (p *pair) write(t *testing.T, wrid uint64, n int, imm bool) {
	t.Helper()
	wr := sm.WorkRequest{WRID: wrid, Opcode: sm.OpWrite, RemoteVA: 0x1000, RKey: 1, Data: make([]byte, n)}
	if imm {
		wr.Opcode, wr.Imm = sm.OpWriteImm, uint32(wrid)
	}
	var err error
	p.s.Input(p.ia, func(now sm.Time, out *sm.Output) { err = p.a.Post(now, wr, out) })
	if err != nil {
		t.Fatal(err)
	}
}

type obs func(now sm.Time, id fabric.EndpointID, out *sm.Output)

func (f obs) Observe(now sm.Time, id fabric.EndpointID, out *sm.Output) { f(now, id, out) }

// TestLossless: writes complete in order, data is placed in PSN order, and
// the WriteIMM's receive completion carries its immediate.
func TestLossless(t *testing.T) {
	p := newPair(t, fabric.Config{}, nil)
	p.write(t, 1, 40_000, false)
	p.write(t, 2, 100, true)
	p.s.Run(sm.Millisecond)
	if len(p.comp[p.ia]) != 2 || p.comp[p.ia][0].WRID != 1 || p.comp[p.ia][1].WRID != 2 {
		t.Fatalf("send completions %+v", p.comp[p.ia])
	}
	if c := p.comp[p.ib]; len(c) != 1 || !c[0].Recv || c[0].Imm != 2 {
		t.Fatalf("receive completions %+v", c)
	}
	for i, psn := range p.placed {
		if psn != uint32(i) {
			t.Fatalf("placement %d has PSN %d: RC places in order", i, psn)
		}
	}
}

// TestGoBackN: one lost packet draws a sequence-error NAK; the responder
// discards everything after the gap and the requester resends from the
// lost PSN on (go-back-N), so far more than one packet is sent again.
func TestGoBackN(t *testing.T) {
	p := newPair(t, fabric.Config{}, nil)
	r := fabric.NewRule()
	r.Src, r.MatchPSN, r.PSN, r.Drop, r.Limit = 0, true, 3, 1, 1
	if _, err := p.s.AddRule(r); err != nil {
		t.Fatal(err)
	}
	p.write(t, 1, 20*4096, false)
	p.s.Run(sm.Millisecond)
	if len(p.comp[p.ia]) != 1 || p.comp[p.ia][0].Status != sm.StatusSuccess {
		t.Fatalf("completions %+v", p.comp[p.ia])
	}
	if p.a.GoBackNs != 1 || p.a.Retransmitted < 10 {
		t.Errorf("%d go-back-N events resent %d packets; want 1 event resending the window after PSN 3", p.a.GoBackNs, p.a.Retransmitted)
	}
	for i, psn := range p.placed {
		if psn != uint32(i) {
			t.Fatalf("placement %d has PSN %d", i, psn)
		}
	}
}

// TestRetryExceeded: a blackholed path times out RetryCnt+1 times and the
// QP fails: RETRY_EXC_ERR for the oldest WR, flush for the rest.
func TestRetryExceeded(t *testing.T) {
	p := newPair(t, fabric.Config{}, func(c *rc.Config) { c.RetryCnt = 3 })
	r := fabric.NewRule()
	r.Src, r.Drop = 0, 1
	_, _ = p.s.AddRule(r)
	p.write(t, 1, 4096, false)
	p.write(t, 2, 4096, false)
	p.s.Run(10 * sm.Millisecond)
	if !p.a.Failed() {
		t.Fatal("QP still alive")
	}
	c := p.comp[p.ia]
	if len(c) != 2 || c[0].Status != sm.StatusRetryExceeded || c[1].Status != sm.StatusFlushError {
		t.Fatalf("completions %+v", c)
	}
	if p.a.GoBackNs != 4 {
		t.Errorf("%d timeouts before failing, want retry_cnt+1 = 4", p.a.GoBackNs)
	}
}

// TestECNHalvesWindow: CE marks echoed by the responder halve the window
// once per window of data.
func TestECNHalvesWindow(t *testing.T) {
	// Two RC QPs pinned to the same path of one plane congest its T1.
	p := newPair(t, fabric.Config{Nodes: 3, PathsPerPlane: 1, ECNMin: 1024, ECNMax: 4096}, func(c *rc.Config) { c.Window = 64 })
	ip := func(n byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, n}) }
	c, _ := rc.New(rc.Config{QPN: 0x33, DestQPN: 0x44, EV: 0x456, Plane: 2, SrcIP: ip(3), DstIP: ip(2), Window: 64})
	d, _ := rc.New(rc.Config{QPN: 0x44, DestQPN: 0x33, EV: 0x456, Plane: 2, SrcIP: ip(2), DstIP: ip(3)})
	ic, _ := p.s.Attach(2, 0x33, 1, c)
	_, _ = p.s.Attach(1, 0x44, 2, d)
	p.write(t, 1, 200*4096, false)
	p.s.Input(ic, func(now sm.Time, out *sm.Output) {
		_ = c.Post(now, sm.WorkRequest{WRID: 1, Opcode: sm.OpWrite, RemoteVA: 0x9000, RKey: 1, Data: make([]byte, 200*4096)}, out)
	})
	p.s.Run(100 * us)
	if p.a.Window() >= 64 && c.Window() >= 64 {
		t.Errorf("windows %d and %d after %d CE marks: no reaction", p.a.Window(), c.Window(), p.s.Stats().Marked)
	}
}

// TestConfig: bad configurations are rejected.
func TestConfig(t *testing.T) {
	for _, c := range []rc.Config{{}, {SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("::1")},
		{SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2"), MTU: 9000}} {
		if _, err := rc.New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
