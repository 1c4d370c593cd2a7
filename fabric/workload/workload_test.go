package workload

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/rc"
	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
)

// small is a 4-plane fabric with 1 KiB MTU and 4 EVs per plane.
func small(t *testing.T, f sm.Faults, mod func(*Options)) *Harness {
	t.Helper()
	mc := sm.DefaultConfig(5)
	prof := sm.GenerateEVProfile(1, 4, 4, 5)
	prof.ActivePerPlane, prof.MinActive = 2, 1
	mc.EVProfiles, mc.Test.Faults = []sm.EVProfile{prof}, f
	o := Options{Fabric: fabric.Config{Seed: 5, Planes: 4, PathsPerPlane: 2}, MRC: mc, Check: true, Memory: 256 << 10,
		Attr: sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 1, MPRDest: 1, MaxWIMM: 4, MaxWIMMDest: 4, Timeout: 5,
			Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 1024}}
	if mod != nil {
		mod(&o)
	}
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Connect(0, 1, MRC); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestInvariantsCatchFaults: every seeded statemachine fault with a safety
// consequence breaks an invariant the harness checks, and the correct
// statemachine breaks none under the same schedule. The checks are not
// vacuous.
func TestInvariantsCatchFaults(t *testing.T) {
	for _, c := range []struct {
		fault sm.Faults
		req   string // the requirement the violation cites
		mod   func(*Options)
		setup func(h *Harness)
	}{
		{sm.FaultBeyondMPR, "MPR-WIN-1", nil, func(h *Harness) { // 200 packets, window 128
			_, _ = h.Post(WR{Conn: 0, Chunk: 0, Size: 200 << 10})
		}},
		{sm.FaultReuseNACKedEV, "EV-ST-13", func(o *Options) {
			o.Fabric.TrimBytes = 1 // a burst is trimmed behind its first packet: TRIMMED NACKs
		}, func(h *Harness) {
			_, _ = h.Post(WR{Conn: 0, Chunk: 0, Size: 16 << 10})
		}},
		{sm.FaultPlaceDuplicates, "RSP-DUP-1", nil, func(h *Harness) {
			r := fabric.NewRule()
			r.Src, r.Class, r.Dup = 0, fabric.DataPackets, 1
			_, _ = h.Sim.AddRule(r)
			_, _ = h.Post(WR{Conn: 0, Chunk: 0, Size: 4 << 10})
		}},
		{sm.FaultEarlyWIMM, "WIMM-RSP-1", nil, func(h *Harness) {
			r := fabric.NewRule()
			r.Src, r.Class, r.MatchPSN, r.PSN, r.Delay, r.DelayBy = 0, fabric.DataPackets, true, 0, 1, 20*sm.Microsecond
			_, _ = h.Sim.AddRule(r)
			_, _ = h.Post(WR{Conn: 0, Chunk: 0, Size: 2 << 10})
			_, _ = h.Post(WR{Conn: 0, Imm: true, Chunk: 4, Size: 100})
		}},
	} {
		for _, f := range []sm.Faults{0, c.fault} {
			t.Run(fmt.Sprintf("%s/fault=%#x", c.req, uint32(f)), func(t *testing.T) {
				h := small(t, f, c.mod)
				c.setup(h)
				h.Sim.Run(2 * sm.Millisecond)
				found := false
				for _, v := range h.Violations() {
					found = found || v.Req == c.req
					if f == 0 {
						t.Errorf("correct run: %v", v)
					}
				}
				if f != 0 && !found {
					t.Errorf("fault %#x went unnoticed; violations: %v", uint32(f), h.Violations())
				}
			})
		}
	}
}

// TestRCConnection: the RC baseline runs through the same harness and
// invariants, one QP per plane.
func TestRCConnection(t *testing.T) {
	h, err := New(Options{Fabric: fabric.Config{Seed: 3}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.Connect(0, 1, RC)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Req) != 8 {
		t.Fatalf("%d RC QPs, want one per plane", len(c.Req))
	}
	r := fabric.NewRule()
	r.Drop = 0.01
	_, _ = h.Sim.AddRule(r)
	if err := h.Stream(c.ID, 64<<10, 16, 3); err != nil {
		t.Fatal(err)
	}
	h.Sim.Run(300 * sm.Microsecond)
	h.StopStreams()
	if !h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, sm.Second) {
		t.Fatalf("%d outstanding", h.Outstanding())
	}
	for _, v := range h.Violations() {
		t.Error(v)
	}
	if c.Completed == 0 || c.Failed != 0 {
		t.Errorf("%d completed, %d failed", c.Completed, c.Failed)
	}
	if d := h.Dump(); !strings.Contains(d, "RC QP") {
		t.Errorf("dump: %s", d)
	}
}

// TestSingleWorkingEV is finding F4 of fabric/README.md: every EV of the
// profile but one is black-holed in the data direction, and one data
// packet on that EV is lost. The PSN's timeout (or the loss inferred from
// the SACK bitmap) sends it away from the only working EV; the stall
// timer's first expiry lets it go back (LR-SM-3, AMB-44), so the work
// completes with exp_cnt infinite and nothing fails. With the policy
// Policy.KeepAvoidAfterStall (EV-ST-13 never relaxed) the PSN waits for
// good.
func TestSingleWorkingEV(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepAvoidAfterStall=%v", keep), func(t *testing.T) {
			h := small(t, 0, func(o *Options) { o.MRC.Policy.KeepAvoidAfterStall = keep })
			evs := h.opt.MRC.EVProfiles[0].EVs
			only := evs[0].Value
			for _, e := range evs[1:] {
				r := fabric.NewRule()
				r.Src, r.EV, r.MatchEV, r.Drop = 0, e.Value, true, 1
				if _, err := h.Sim.AddRule(r); err != nil {
					t.Fatal(err)
				}
			}
			r := fabric.NewRule()
			r.Src, r.Class, r.EV, r.MatchEV, r.Drop, r.Limit = 0, fabric.DataPackets, only, true, 1, 1
			if _, err := h.Sim.AddRule(r); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Post(WR{Conn: 0, Chunk: 0, Size: 8 << 10}); err != nil {
				t.Fatal(err)
			}
			done := h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, 2*sm.Second)
			for _, v := range h.Violations() {
				t.Errorf("violation: %v", v)
			}
			c := h.Conns()[0]
			switch {
			case !keep && (!done || c.Completed != 1 || c.Failed != 0):
				t.Fatalf("with one working EV: done %v, %d completed, %d failed at t=%v; want the WR complete\n%s",
					done, c.Completed, c.Failed, h.Sim.Now(), h.Dump())
			case keep && done:
				t.Fatalf("KeepAvoidAfterStall: the WR completed (%d completed, %d failed); F4 should strand it",
					c.Completed, c.Failed)
			case keep:
				t.Logf("stranded, as expected, at t=%v:\n%s", h.Sim.Now(), h.Dump())
			}
		})
	}
}

// TestTemplateFieldsNotIgnored: a QP template field the harness assigns is
// refused rather than silently replaced, the address vector's other fields
// reach every QP, and the endpoints' wire profile is the fabric's: taken
// from it when unset, refused when it differs.
func TestTemplateFieldsNotIgnored(t *testing.T) {
	for _, c := range []struct {
		field string
		mod   func(*Options)
	}{
		{"QP.QPN", func(o *Options) { o.QP.QPN = 5 }},
		{"QP.Seed", func(o *Options) { o.QP.Seed = 1 }},
		{"QP.Addr.SrcIP", func(o *Options) { o.QP.Addr.SrcIP = netip.AddrFrom4([4]byte{10, 0, 0, 9}) }},
		{"QP.Addr.DstIP", func(o *Options) { o.QP.Addr.DstIP = netip.AddrFrom4([4]byte{10, 0, 0, 9}) }},
		{"Attr.DestQPN", func(o *Options) { o.Attr = DefaultAttr(); o.Attr.DestQPN = 9 }},
		{"RC.QPN", func(o *Options) { o.RC.QPN = 9 }},
		{"RC.DestQPN", func(o *Options) { o.RC.DestQPN = 9 }},
		{"RC.EV", func(o *Options) { o.RC.EV = 9 }},
		{"RC.Plane", func(o *Options) { o.RC.Plane = 1 }},
		{"RC.SrcIP", func(o *Options) { o.RC.SrcIP = netip.AddrFrom4([4]byte{10, 0, 0, 9}) }},
		{"RC.DstIP", func(o *Options) { o.RC.DstIP = netip.AddrFrom4([4]byte{10, 0, 0, 9}) }},
	} {
		o := Options{Fabric: fabric.Config{Seed: 5}}
		c.mod(&o)
		if _, err := New(o); !errors.Is(err, ErrTemplateField) || !strings.HasSuffix(err.Error(), c.field) {
			t.Errorf("%s set: %v, want ErrTemplateField naming it", c.field, err)
		}
	}
	h := small(t, 0, func(o *Options) {
		o.QP.Addr.HopLimit, o.QP.Addr.PKey, o.QP.Addr.SrcMAC = 7, 0x8002, [6]byte{2, 0, 0, 0, 0, 7}
	})
	if a := h.qpConfig(0x101, 1, 0, 1).Addr; a.HopLimit != 7 || a.PKey != 0x8002 || a.SrcMAC[5] != 7 || a.SrcIP != h.nodeIP(0) {
		t.Errorf("QP address vector %+v: the template's hop limit, P_Key and MAC are lost", a)
	}
	if h.opt.MRC.Profile != h.Sim.Config().Profile || h.opt.RC.Profile != h.Sim.Config().Profile {
		t.Errorf("endpoint profiles %p, %p, fabric's %p", h.opt.MRC.Profile, h.opt.RC.Profile, h.Sim.Config().Profile)
	}
	emu := spec.EmuProfile()
	for _, o := range []Options{{MRC: sm.Config{Profile: &emu}}, {RC: rc.Config{Profile: &emu}}} {
		if _, err := New(o); !errors.Is(err, ErrProfileMismatch) {
			t.Errorf("an emu endpoint profile on a default fabric: %v, want ErrProfileMismatch", err)
		}
	}
}
