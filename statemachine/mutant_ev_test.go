package statemachine

// Tests written against mutants of ev.go that the package's other tests
// let live (found by applying them by hand, scripts/mutate.sh's stage 2
// applier).

import (
	"errors"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantEVProfileLimits: an EV profile at each upper limit is
// accepted and one past it refused: ports 1 to 31, port-status masks
// having bit n for port n (WIRE-ERTH-2); probe_success_threshold up to 7,
// the count the EV table holds (EV-ST-7); MaxEVs EVs, the most an 11-bit
// per-PSN EV index names.
func TestMutantEVProfileLimits(t *testing.T) {
	evs := func(n int, port uint8) []EVEntry {
		e := make([]EVEntry, n)
		for i := range e {
			e[i] = EVEntry{uint32(i + 1), port}
		}
		return e
	}
	for _, c := range []struct {
		name string
		mod  func(*EVProfile)
		ok   bool
	}{
		{"port 31", func(p *EVProfile) { p.EVs = evs(2, MaxPlanes) }, true},
		{"port 32", func(p *EVProfile) { p.EVs = evs(2, MaxPlanes+1) }, false},
		{"probe successes 7", func(p *EVProfile) { p.ProbeSuccesses = maxProbeOK }, true},
		{"probe successes 8", func(p *EVProfile) { p.ProbeSuccesses = maxProbeOK + 1 }, false},
		{"MaxEVs EVs", func(p *EVProfile) { p.EVs = evs(MaxEVs, 1) }, true},
		{"MaxEVs + 1 EVs", func(p *EVProfile) { p.EVs = evs(MaxEVs+1, 1) }, false},
	} {
		cf := testConfig(qpnA)
		c.mod(&cf.EVProfiles[0])
		_, err := cf.new()
		var ce *ConfigError
		if c.ok && err != nil || !c.ok && !errors.As(err, &ce) {
			t.Errorf("%s: error %v, want accepted %v", c.name, err, c.ok)
		}
	}
}

// TestMutantEVLookupEveryEV: feedback and the controller name an EV by its
// value, so every EV of a full profile (MaxEVs EVs over 8 planes, enough for
// the lookup table to hold collisions) is found as itself, and a value not
// in the profile is not found (EV-ST-1: the API reports UNKNOWN only for an
// EV it cannot find; EV-ST-9: the controller can set any EV to DENIED).
func TestMutantEVLookupEveryEV(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0] = GenerateEVProfile(7, 8, MaxEVs/8, 11) })
	in := map[uint32]bool{}
	for k, e := range o.q.EVs(nil) {
		in[e.Value] = true
		if k%2 == 0 {
			if err := o.q.SetEVState(0, e.Value, EVDenied, &o.out); err != nil {
				t.Fatalf("deny EV %#x: %v", e.Value, err)
			}
		}
	}
	if len(in) != MaxEVs {
		t.Fatalf("%d EVs, want %d", len(in), MaxEVs)
	}
	for k, e := range o.q.EVs(nil) {
		want := EVGood
		if k%2 == 0 {
			want = EVDenied
		}
		if st, ok := o.q.EVStateOf(e.Value); !ok || st != want || e.State != want {
			t.Errorf("EV %#x: EVStateOf %s %v, table %s; want %s", e.Value, st, ok, e.State, want)
		}
	}
	absent := 0
	for v := uint32(0); v < 8<<11; v++ {
		if in[v] {
			continue
		}
		absent++
		if st, ok := o.q.EVStateOf(v); ok || st != EVUnknown {
			t.Errorf("EV %#x is not in the profile: EVStateOf %s %v", v, st, ok)
		}
	}
	if absent == 0 {
		t.Fatal("no absent value checked")
	}
}

// TestMutantEVDefaultActiveHalf: with ActivePerPlane 0 each plane's active
// set is half its EVs, at least one, and the rest is the plane's backup set
// (EV-SET-1, EV-SET-2).
func TestMutantEVDefaultActiveHalf(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0].ActivePerPlane = 0
		c.EVProfiles[0].EVs = []EVEntry{{0x100, 1}, {0x101, 1}, {0x102, 1}, {0x103, 1}, {0x104, 1}, {0x105, 1}, {0x200, 2}}
	})
	active, backup := map[uint8]int{}, map[uint8]int{}
	for _, e := range o.q.EVs(nil) {
		if e.Active {
			active[e.Plane]++
		} else {
			backup[e.Plane]++
		}
	}
	if active[0] != 3 || backup[0] != 3 || active[1] != 1 || backup[1] != 0 {
		t.Errorf("active %v, backup %v per plane; want 3 and 3 of plane 0's six EVs, 1 and 0 of plane 1's one", active, backup)
	}
}

// TestMutantEVFloorCountsDenied: DENIED EVs count against ev_min_active as
// ASSUMED_BAD ones do: with 3 of 4 EVs required outside both states and one
// DENIED, the requester may not retire another (EV-SET-6).
func TestMutantEVFloorCountsDenied(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0].MinActive = 3 })
	if err := o.q.SetEVState(0, 0x101, EVDenied, &o.out); err != nil {
		t.Fatal(err)
	}
	o.q.begin(0, &o.out)
	retired := o.q.setEV(0, EVAssumedBad, CauseTimeout)
	o.q.end()
	if st, _ := o.q.EVStateOf(0x100); retired || st != EVGood {
		t.Errorf("EV 0x100 %s (moved %v) with 0x101 DENIED; want GOOD: 2 EVs would be left, floor 3", st, retired)
	}
}

// TestMutantEVReverseUnknownPlane: data arriving on a port beyond the EV
// profile's planes is answered on usable EVs of the planes the profile has
// (EV-SM-2: an unknown arrival plane), drawn at random from the active set,
// so that one dead path does not carry every answer (AMB-35).
func TestMutantEVReverseUnknownPlane(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0].ActivePerPlane = 2 }) // planes 0 and 1, all 4 EVs active
	used := map[uint32]int{}
	for i := range 16 {
		o.recv(3, dataPkt(uint32(i), wire.OpWriteMiddle, 1024, 0x100))
		ps := o.take()
		if len(ps) != 1 {
			t.Fatalf("%d packets answer data on port 3, want 1", len(ps))
		}
		ev := ps[0].EV(wire.EVModeSTEV)
		if st, ok := o.q.EVStateOf(ev); !ok || st != EVGood {
			t.Fatalf("answer on EV %#x (%s), want a GOOD EV of the profile", ev, st)
		}
		used[ev]++
	}
	if len(used) < 2 {
		t.Errorf("16 answers on EVs %v: one EV carries them all", used)
	}
}

// TestMutantEVRotationRestart: when a QP's first rotation offers no usable
// EV (its one active EV of plane 0 SKIP, plane 1's down), the rotation ends,
// the SKIP EV is GOOD again and carries the packet, wherever the reshuffle
// put it in the new order (EV-ST-6, EV-SET-4). Sixteen seeds give the
// reshuffle both orders.
func TestMutantEVRotationRestart(t *testing.T) {
	for seed := range uint64(16) {
		o := newOne(t, func(c *testCfg, a *Attr) { c.QPConfig.Seed = seed })
		var skip uint32
		for _, e := range o.q.EVs(nil) {
			if e.Active && e.Plane == 0 {
				skip = e.Value
			}
		}
		o.q.SetPortStatus(0, 0b010, 0b110, &o.out) // port 2 down
		o.q.begin(0, &o.out)
		o.q.setEV(mustLookup(t, o.q, skip), EVSkip, CauseSkipOnce)
		o.q.end()
		o.take()
		o.write(1, 1024, false)
		ps := o.take()
		if len(ps) != 1 || ps[0].EV(wire.EVModeSTEV) != skip {
			t.Errorf("seed %d: sent %d packets, want 1 on EV %#x, GOOD again at the end of the rotation", seed, len(ps), skip)
		}
	}
}

// TestMutantEVRotationsCounted: the rotation count (BenchmarkBackToBack's
// rotations/pkt) counts each new order drawn at the end of a rotation
// (EV-SET-3): 4n packets over an active set of n GOOD EVs begin three
// rotations after the first, the next packet a fourth.
func TestMutantEVRotationsCounted(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0] = GenerateEVProfile(7, 2, 8, 3)
		c.EVProfiles[0].ActivePerPlane = 4
	})
	n := 8
	o.write(1, 4*n*1024, false)
	if got := len(o.take()); got != 4*n || o.q.ev.rotations != 3 {
		t.Fatalf("%d packets, %d rotations; want %d packets, 3 rotations", got, o.q.ev.rotations, 4*n)
	}
	o.write(2, 1024, false)
	if o.q.ev.rotations != 4 {
		t.Errorf("%d rotations after packet %d, want 4", o.q.ev.rotations, 4*n+1)
	}
}

// TestMutantEVRejoinFromAssumedBad: an EV back to GOOD from ASSUMED_BAD
// takes the active slot a failed EV of its plane holds, as one back from
// DENIED does (EV-REP-2, EV-ST-14).
func TestMutantEVRejoinFromAssumedBad(t *testing.T) {
	o := newOne(t, nil) // plane 0: 0x100 active, 0x101 backup
	for _, s := range []struct {
		ev uint32
		to EVState
	}{{0x101, EVAssumedBad}, {0x100, EVAssumedBad}, {0x101, EVGood}} {
		if err := o.q.SetEVState(0, s.ev, s.to, &o.out); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range o.q.EVs(nil) {
		if e.Plane == 0 && e.Active != (e.Value == 0x101) {
			t.Errorf("EV %#x (%s) active %v; want 0x101, GOOD again, in the slot of 0x100, ASSUMED_BAD", e.Value, e.State, e.Active)
		}
	}
}

// TestMutantEVUnknownVerdictIgnored: a SACK whose m verdict names an EV the
// QP does not have is reported as ignored, the verdict having no EV to
// apply to; with m = NONE there is no verdict to drop and nothing is
// reported (LR-SACK-3).
func TestMutantEVUnknownVerdictIgnored(t *testing.T) {
	for _, c := range []struct {
		m    wire.Multipath
		want int
	}{{wire.MSkipOnce, 1}, {wire.MNone, 0}} {
		o := newOne(t, nil)
		o.write(1, 2*1024, false)
		o.take()
		o.recv(1, sackPkt(0, 0, 1, 0, 0x999, c.m))
		n := 0
		for _, e := range o.events(EvIgnored) {
			if IgnoreReason(e.Reason) == IgnoreUnknownEV && e.EV == 0x999 {
				n++
			}
		}
		if n != c.want || o.q.CumulativeACK() != 0 {
			t.Errorf("m = %d on unknown EV 0x999: %d unknown-EV events, cack %d; want %d, cack 0", c.m, n, o.q.CumulativeACK(), c.want)
		}
	}
}
