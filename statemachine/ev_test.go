package statemachine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openmrc/mrc/wire"
)

// TestEVStateTable checks every (state, event) pair against the path-state
// table and its extension (EV-ST-2 to EV-ST-10): events the table does not
// list leave the EV alone, and a DENIED EV moves only by the controller.
func TestEVStateTable(t *testing.T) {
	states := []EVState{EVGood, EVSkip, EVAssumedBad, EVDenied}
	causes := []EVCause{CauseSkipOnce, CauseTrimmed, CauseAlwaysSkip, CauseTimeout, CauseRotation, CauseProbeOK, CauseProbeSkip}
	target := map[EVCause]EVState{CauseSkipOnce: EVSkip, CauseTrimmed: EVSkip, CauseAlwaysSkip: EVAssumedBad,
		CauseTimeout: EVAssumedBad, CauseRotation: EVGood, CauseProbeOK: EVGood, CauseProbeSkip: EVSkip}
	want := map[[2]uint8]EVState{
		{uint8(EVGood), uint8(CauseSkipOnce)}:        EVSkip,       // EV-ST-2
		{uint8(EVGood), uint8(CauseTrimmed)}:         EVSkip,       // EV-ST-3
		{uint8(EVGood), uint8(CauseAlwaysSkip)}:      EVAssumedBad, // EV-ST-4
		{uint8(EVGood), uint8(CauseTimeout)}:         EVAssumedBad, // EV-ST-5
		{uint8(EVSkip), uint8(CauseRotation)}:        EVGood,       // EV-ST-6
		{uint8(EVAssumedBad), uint8(CauseProbeOK)}:   EVGood,       // EV-ST-7
		{uint8(EVAssumedBad), uint8(CauseProbeSkip)}: EVSkip,       // EV-ST-8
		{uint8(EVSkip), uint8(CauseAlwaysSkip)}:      EVAssumedBad, // EV-ST-10
		{uint8(EVSkip), uint8(CauseTimeout)}:         EVAssumedBad, // EV-ST-10
	}
	for _, from := range states {
		for _, c := range causes {
			q, _ := testConfig(qpnA).new()
			var out Output
			if err := q.BringUp(0, testAttr(qpnB), &out); err != nil {
				t.Fatal(err)
			}
			q.begin(0, &out)
			q.ev.e[0] = q.ev.e[0]&^evStateMask | uint8(from)
			q.ev.count(EVGood, -1)
			q.ev.count(from, +1)
			q.setEV(0, target[c], c)
			q.end()
			w, ok := want[[2]uint8{uint8(from), uint8(c)}]
			if !ok {
				w = from
			}
			if got := q.ev.state(0); got != w {
				t.Errorf("%s on cause %d: %s, want %s", from, c, got, w)
			}
		}
	}
	// The controller moves any state to DENIED and back (EV-ST-9).
	o := newOne(t, nil)
	for _, s := range []EVState{EVDenied, EVGood, EVAssumedBad, EVDenied, EVGood} {
		if err := o.q.SetEVState(0, 0x100, s, &o.out); err != nil {
			t.Fatal(err)
		}
		if got, _ := o.q.EVStateOf(0x100); got != s {
			t.Errorf("controller set %s, EV is %s", s, got)
		}
	}
	wantErr(t, o.q.SetEVState(0, 0x100, EVSkip, &o.out), ErrInvalidAttr)
	wantErr(t, o.q.SetEVState(0, 0x999, EVDenied, &o.out), ErrUnknownEV)
}

// TestControllerTargets: MODIFY_EV_STATE sets GOOD, ASSUMED_BAD or DENIED
// from any state and nothing else (EV-ST-9, EV-ST-14). Its ASSUMED_BAD
// ignores the ev_min_active floor (EV-SET-6 binds the requester's own
// inferences), replaces the EV from the plane's backups (EV-REP-1) and is
// probed (EV-PRB-1); its GOOD needs no probe and sends the EV back to the
// backup set (EV-REP-2); the state the EV already has changes nothing.
func TestControllerTargets(t *testing.T) {
	for _, from := range []EVState{EVGood, EVSkip, EVAssumedBad, EVDenied} {
		for _, to := range []EVState{EVGood, EVAssumedBad, EVDenied} {
			o := newOne(t, nil)
			o.q.begin(0, &o.out)
			switch from {
			case EVSkip:
				o.q.setEV(0, EVSkip, CauseTrimmed)
			case EVAssumedBad:
				o.q.setEV(0, EVAssumedBad, CauseTimeout)
			case EVDenied:
				o.q.setEV(0, EVDenied, CauseController)
			}
			o.q.end()
			v := o.q.ev.set.values[0]
			if got, _ := o.q.EVStateOf(v); got != from {
				t.Fatalf("setup: EV %#x is %s, want %s", v, got, from)
			}
			o.out.Reset()
			if err := o.q.SetEVState(0, v, to, &o.out); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			if got, _ := o.q.EVStateOf(v); got != to {
				t.Errorf("controller %s -> %s: EV is %s", from, to, got)
			}
			if ev := o.events(EvEVState); (len(ev) == 1) != (from != to) {
				t.Errorf("controller %s -> %s: EVState events %v", from, to, ev)
			}
		}
	}
	// The floor: ev_min_active 3 of 4 EVs, one already ASSUMED_BAD by a
	// timeout. The requester may not retire another; the controller may.
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0].MinActive = 3 })
	o.q.begin(0, &o.out)
	o.q.setEV(0, EVAssumedBad, CauseTimeout)
	if o.q.setEV(1, EVAssumedBad, CauseTimeout) {
		t.Fatal("the requester retired an EV below ev_min_active (EV-SET-6)")
	}
	o.q.end()
	v := o.q.ev.set.values[1]
	if err := o.q.SetEVState(0, v, EVAssumedBad, &o.out); err != nil {
		t.Fatal(err)
	}
	if got, _ := o.q.EVStateOf(v); got != EVAssumedBad {
		t.Errorf("controller ASSUMED_BAD below ev_min_active: EV is %s, want ASSUMED_BAD (EV-ST-14)", got)
	}
	if o.q.ev.active(1) && len(o.events(EvEVReplaced)) == 0 {
		t.Error("a controller-retired active EV stayed in the active set with a backup available (EV-REP-1)")
	}
	o.out.Reset()
	o.advance(o.q.NextDeadline())
	probed := false
	for _, e := range o.events(EvProbeSent) {
		probed = probed || e.EV == v
	}
	if !probed {
		t.Error("a controller-retired EV is not probed (EV-PRB-1)")
	}
	if err := o.q.SetEVState(o.now, v, EVGood, &o.out); err != nil {
		t.Fatal(err)
	}
	if got, _ := o.q.EVStateOf(v); got != EVGood {
		t.Errorf("controller GOOD: EV is %s, want GOOD at once (EV-ST-14)", got)
	}
	for _, s := range []EVState{EVSkip, EVUnknown} {
		wantErr(t, o.q.SetEVState(o.now, v, s, &o.out), ErrInvalidAttr)
	}
}

// TestActiveSets: each QP draws a random active subset of equal size per
// plane, the rest is the plane's backup set (EV-SET-1, EV-SET-2, EV-SET-5).
func TestActiveSets(t *testing.T) {
	nd, err := NewNode(DefaultConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	var sets [2][]uint32
	for k := range sets {
		q, err := nd.NewQP(QPConfig{QPN: uint32(0x10 + k), Seed: uint64(k), Addr: DefaultQPConfig(0, 0).Addr})
		if err != nil {
			t.Fatal(err)
		}
		var out Output
		if err := q.BringUp(0, benchAttr(qpnB), &out); err != nil {
			t.Fatal(err)
		}
		perPlane := map[uint8]int{}
		for _, e := range q.EVs(nil) {
			if e.Active {
				perPlane[e.Plane]++
				sets[k] = append(sets[k], e.Value)
			}
		}
		if len(perPlane) != 8 {
			t.Errorf("active EVs on %d planes, want 8", len(perPlane))
		}
		for pl, n := range perPlane {
			if n != 16 {
				t.Errorf("plane %d: %d active EVs, want 16", pl, n)
			}
		}
	}
	if cmp.Equal(sets[0], sets[1]) {
		t.Error("two QPs with different seeds drew the same active set")
	}
}

// TestRotation: over one rotation every active GOOD EV carries exactly one
// packet, the order is reshuffled for the next, and a SKIP EV is passed
// over until its rotation ends (EV-SET-3, EV-SET-4, EV-ST-1, EV-ST-6).
func TestRotation(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0] = GenerateEVProfile(7, 2, 8, 3)
		c.EVProfiles[0].ActivePerPlane = 4
	})
	n := 8
	o.write(1, 4*n*1024, false)
	ps := o.take()
	var rot [4][]uint32
	for i, p := range ps {
		rot[i/n] = append(rot[i/n], p.EV(wire.EVModeSTEV))
	}
	for r := range rot {
		seen := map[uint32]bool{}
		for _, ev := range rot[r] {
			if seen[ev] {
				t.Errorf("rotation %d used EV %#x twice", r, ev)
			}
			seen[ev] = true
		}
	}
	if cmp.Equal(rot[0], rot[1]) && cmp.Equal(rot[1], rot[2]) {
		t.Error("the rotation order was never reshuffled")
	}
	// Start a fifth rotation with one packet, then skip an EV it has not
	// used yet: the remaining six draws of the rotation pass over it.
	o.write(2, 1024, false)
	first := o.take()[0].EV(wire.EVModeSTEV)
	skip := rot[3][0]
	if skip == first {
		skip = rot[3][1]
	}
	o.recv(1, sackPkt(0, 0, 1, 0, skip, wire.MSkipOnce))
	o.write(3, (n-2)*1024, false)
	for _, p := range o.take() {
		if p.BTH.Opcode.IsWrite() && p.EV(wire.EVModeSTEV) == skip {
			t.Errorf("SKIP EV %#x used within its rotation", skip)
		}
	}
	if st, _ := o.q.EVStateOf(skip); st != EVSkip {
		t.Fatalf("EV %s, want SKIP until the rotation ends", st)
	}
	o.write(4, 1024, false) // the rotation is exhausted: the next draw starts a new one
	if st, _ := o.q.EVStateOf(skip); st != EVGood {
		t.Errorf("EV %s after its rotation ended, want GOOD", st)
	}
}

// TestReplacement: an active EV that goes ASSUMED_BAD or DENIED is
// replaced by a GOOD backup of its plane; with none left the plane's active
// set shrinks; a recovered EV rejoins the backups, or an active slot held by
// a failed EV (EV-REP-1, EV-REP-2, EV-SET-5).
func TestReplacement(t *testing.T) {
	o := newOne(t, nil) // plane 0: 0x100, 0x101; plane 1: 0x200, 0x201; one active each
	active := func() []uint32 {
		var a []uint32
		for _, e := range o.q.EVs(nil) {
			if e.Active {
				a = append(a, e.Value)
			}
		}
		return a
	}
	if d := cmp.Diff([]uint32{0x100, 0x201}, active()); d != "" {
		t.Fatalf("initial active set: %s", d)
	}
	if err := o.q.SetEVState(0, 0x100, EVDenied, &o.out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint32{0x101, 0x201}, active()); d != "" {
		t.Errorf("after denying 0x100 (-want +got): %s", d)
	}
	if err := o.q.SetEVState(0, 0x101, EVDenied, &o.out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint32{0x101, 0x201}, active()); d != "" {
		t.Errorf("no backup left, the slot keeps the failed EV: %s", d)
	}
	if err := o.q.SetEVState(0, 0x100, EVGood, &o.out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint32{0x100, 0x201}, active()); d != "" {
		t.Errorf("0x100 back to GOOD takes the failed EV's slot: %s", d)
	}
	if err := o.q.SetEVState(0, 0x101, EVGood, &o.out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint32{0x100, 0x201}, active()); d != "" {
		t.Errorf("0x101 back to GOOD joins the backups: %s", d)
	}
}

// TestMinActive: no EV moves to ASSUMED_BAD when that would leave fewer
// than ev_min_active EVs outside ASSUMED_BAD and DENIED (EV-SET-6); port
// exclusion does not count (EV-PORT-4).
func TestMinActive(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0].MinActive = 3 })
	o.q.SetPortStatus(0, 0b110, 0b010, &o.out) // plane 1 down: does not count
	o.q.begin(0, &o.out)
	ok1 := o.q.setEV(0, EVAssumedBad, CauseTimeout)
	ok2 := o.q.setEV(1, EVAssumedBad, CauseTimeout)
	o.q.end()
	if !ok1 || ok2 {
		t.Errorf("moves to ASSUMED_BAD: %v, %v; want the second refused (4 EVs, min 3)", ok1, ok2)
	}
}

// TestProbes: ASSUMED_BAD EVs are probed once per probe interval (default
// the base timeout) with a PETH that consumes no PSN and is not charged to
// cwnd or retries (EV-PRB-1, EV-PRB-2, EV-PRB-3); answers are matched by pr,
// EV and probe_id (EV-PRB-4, EV-SM-1); a probe unanswered by the next round
// resets the count of good answers; probe_success_threshold answers restore
// the EV (EV-ST-7).
func TestProbes(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0].ProbeSuccesses = 2 })
	if err := o.q.SetEVState(0, 0x100, EVAssumedBad, &o.out); err != nil {
		t.Fatal(err)
	}
	o.take()
	T := Timeout(4)
	if d := o.q.NextDeadline(); d != T {
		t.Fatalf("first probe round at %d, want %d", d, T)
	}
	round := func(at Time) wire.Packet {
		o.advance(at)
		ps := o.take()
		if len(ps) != 1 || ps[0].BTH.Opcode != wire.OpProbe {
			t.Fatalf("round at %d sent %v", at, replies(ps))
		}
		p := ps[0]
		if p.BTH.PSN != 0 || p.EV(wire.EVModeSTEV) != 0x100 || p.DSCP() != 0 || p.ECN() != 2 || o.q.NextPSN() != 0 {
			t.Errorf("probe %+v on EV %#x", p.BTH, p.EV(wire.EVModeSTEV))
		}
		return p
	}
	answer := func(p wire.Packet, id uint16) {
		s := sackPkt(1<<24-1, 0, 0, 0, 0x100, wire.MNone)
		s.SETH.PR, s.SETH.AckPSNOffset = true, int16(id)
		o.recv(1, s)
	}
	p := round(T)
	answer(p, p.PETH.ProbeID+1) // wrong id: ignored
	answer(p, p.PETH.ProbeID)   // 1 of 2
	p = round(2 * T)            // unanswered
	round(3 * T)                // counts as failed: back to 0
	p = round(4 * T)
	answer(p, p.PETH.ProbeID)
	if st, _ := o.q.EVStateOf(0x100); st != EVAssumedBad {
		t.Fatalf("EV %s after 1 good answer since a failure, want ASSUMED_BAD", st)
	}
	p = round(5 * T)
	answer(p, p.PETH.ProbeID)
	if st, _ := o.q.EVStateOf(0x100); st != EVGood {
		t.Errorf("EV %s after 2 good answers in a row, want GOOD", st)
	}
	if o.q.Retries() != 0 || o.q.InflightBytes() != 0 {
		t.Error("probes were charged to the retry counter or cwnd")
	}
	if d := o.q.NextDeadline(); d != Never {
		t.Errorf("deadline %d with no EV to probe", d)
	}
}

// TestPortStatus: EVs of a plane whose local or remote port is down carry
// nothing (EV-PORT-1, EV-PORT-2) and are not probed (EV-SM-3); their states
// are untouched (EV-PORT-4) and they are used again when the port is up
// (EV-PORT-3).
func TestPortStatus(t *testing.T) {
	o := newOne(t, nil)
	if err := o.q.SetEVState(0, 0x201, EVAssumedBad, &o.out); err != nil {
		t.Fatal(err)
	}
	o.q.SetPortStatus(0, 0b010, 0b110, &o.out) // local port 2 down
	o.write(1, 4*1024, false)
	o.advance(Timeout(4)) // a probe round: plane 1 is down
	for _, p := range o.take() {
		if p.EV(wire.EVModeSTEV)>>8 == 2 {
			t.Errorf("sent %s on EV %#x of the down plane", p.BTH.Opcode, p.EV(wire.EVModeSTEV))
		}
	}
	if st, _ := o.q.EVStateOf(0x200); st != EVGood {
		t.Errorf("EV 0x200 %s while its plane was down", st)
	}
	o.q.SetPortStatus(o.now, 0b110, 0b110, &o.out)
	o.write(2, 4*1024, false)
	var plane1 int
	for _, p := range o.take() {
		if p.EV(wire.EVModeSTEV)>>8 == 2 {
			plane1++
		}
	}
	if plane1 == 0 {
		t.Error("plane 1 not used after its port came back")
	}
}

// TestReversePath: control packets leave on a reverse EV of the plane the
// packet arrived on (EV-REV-1, EV-REV-4); a SACK with m = NONE for the QP's
// own data makes its EV the reverse EV of its plane (EV-REV-3, EV-SM-2); a
// QP that receives data but sends none probes a random EV once per RTT and
// adopts an answered one (EV-REV-2).
func TestReversePath(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.EVProfiles[0].ActivePerPlane = 2 })
	for i, port := range []int{1, 2, 1, 2} {
		o.recv(port, dataPkt(uint32(i), wire.OpWriteMiddle, 1024, 0x100))
	}
	for i, p := range o.take() {
		if got, want := p.EV(wire.EVModeSTEV)>>8, uint32(1+i%2); got != want {
			t.Errorf("SACK %d on plane %d, want %d", i, got-1, want-1)
		}
	}
	o.q.begin(0, &o.out)
	o.q.adoptReverse(3) // 0x201
	o.q.end()
	o.recv(2, dataPkt(4, wire.OpWriteMiddle, 1024, 0x100))
	if ev := o.take()[0].EV(wire.EVModeSTEV); ev != 0x201 {
		t.Errorf("SACK on %#x, want the plane's reverse EV 0x201", ev)
	}
	// Receiving only: one probe per RTT (the base timeout without CC).
	o.advance(Timeout(4))
	ps := o.take()
	if len(ps) != 1 || ps[0].BTH.Opcode != wire.OpProbe {
		t.Fatalf("reverse-path probe: %v", replies(ps))
	}
	ev := ps[0].EV(wire.EVModeSTEV)
	s := sackPkt(1<<24-1, 0, 0, 0, ev, wire.MNone)
	s.SETH.PR, s.SETH.AckPSNOffset = true, int16(ps[0].PETH.ProbeID)
	o.recv(1, s)
	if got := o.q.ev.rev[o.q.ev.set.plane[mustLookup(t, o.q, ev)]]; o.q.ev.set.values[got] != ev {
		t.Errorf("answered probe on %#x not adopted as reverse EV", ev)
	}
	o.advance(2 * Timeout(4))
	if n := len(o.take()); n != 0 {
		t.Errorf("%d probes in an RTT without received data", n)
	}
}

func mustLookup(t *testing.T, q *QP, ev uint32) int {
	i, ok := q.ev.set.lookup(ev)
	if !ok {
		t.Fatalf("EV %#x not in the table", ev)
	}
	return i
}
