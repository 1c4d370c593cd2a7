package conformance

import (
	"bytes"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// probePICS: the point at D, T's QP with timeout 4 (base timeout 16,384
// ns), a tolerance of 1,000 ns.
const probePICS = `{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["T"],
	"nodes": {"T": ["fd00::1"], "D": ["fd00::2"]}, "parameters": {"mpr": 1, "timeout": 4},
	"capture": {"points": {"D": "D"}, "reaction_time_ns": 1000, "timer_tolerance_ns": 1000}}`

// probeOn is T's probe with id on EV ev, gap ns after the last frame, with
// no answer.
func (s *scene) probeOn(id uint16, ev uint32, gap int64) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 2
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: sceneDQP}
	p.PETH = wire.PETH{ProbeID: id, SPDCID: sceneTQP, DPDCID: sceneDQP, FType: 1}
	p.SetEV(ev, wire.EVModeSTEV)
	return s.emit(sceneT, sceneD, p, gap)
}

// retiredEVScene is a scene in which D's ALWAYS_SKIP SACK retired EV bad.
func retiredEVScene(t *testing.T, bad uint32) *scene {
	s := newScene(t, probePICS)
	s.copyOf(100, bad, false, false)
	s.sackM(100, 100, bad, wire.MAlwaysSkip)
	return s
}

// TestProbeIntervalEndsByTimer (EV-PRB-2, MRC-EV-PRB-001): one probe on a
// retired EV opens a probe interval of one base timeout; when capture
// time passes its end with no second probe on the EV, the interval held
// one probe, a pass decided by the check's timer then, not at a later
// probe. Without the timer one probe is never judged (INCONCLUSIVE).
func TestProbeIntervalEndsByTimer(t *testing.T) {
	const bad = 0x150
	s := retiredEVScene(t, bad)
	s.probeOn(1, bad, 5000)
	for i := range uint32(3) {
		s.copyOf(101+i, 0x100, false, false) // 10 µs apart: the interval ends between the second and third
	}
	fl := s.onlyFlow()
	if n := len(probePaceState.of(fl).open); n != 0 {
		t.Errorf("%d probe intervals still open after their end", n)
	}
	res, _ := s.report().Result(cProbePace.String())
	if res.Verdict != Pass || res.Checked != 1 {
		t.Errorf("one probe on a retired EV, interval passed: %s %s after %d observations (%s), want PASS after 1", cProbePace, res.Verdict, res.Checked, res.Reason)
	}
}

// TestProbeInsideIntervalFails (EV-PRB-2): a second probe on the retired EV
// inside the interval fails; the interval it opens, which the capture
// passes, is an observation too, but the verdict is FAIL, at the second
// probe's frame.
func TestProbeInsideIntervalFails(t *testing.T) {
	const bad = 0x150
	s := retiredEVScene(t, bad)
	s.probeOn(1, bad, 5000)
	second := s.probeOn(2, bad, 5000)
	for i := range uint32(4) {
		s.copyOf(101+i, 0x100, false, false)
	}
	rep := s.report()
	f := failsOf(rep, cProbePace.String())
	if len(f) != 1 || f[0].Frame != second || f[0].Requirement != "EV-PRB-2" {
		t.Errorf("%s: %+v, want one EV-PRB-2 FAIL at frame %d", rep.Verdict(cProbePace.String()), f, second)
	}
}

// TestTimerWaitsForItsNodePair: a connection's timer fires at the first
// frame past its deadline between the connection's two nodes, not at
// another pair's frame, which a parallel judgement's shard of the pair
// never sees (the report is identical for any --jobs).
func TestTimerWaitsForItsNodePair(t *testing.T) {
	s := newScene(t, scenePICS)
	s.copyOf(100, 0x100, false, false)
	fl := s.onlyFlow()
	var fired []int
	c := &check{timer: func(e *engine, x *timerCtx) {
		if x.fl != fl || x.a != 7 || x.b != 8 {
			t.Errorf("timer fired with flow %v, arguments %d %d; want the scene's, 7 and 8", x.fl.key, x.a, x.b)
		}
		fired = append(fired, e.frameNo)
	}}
	if !s.e.arm(c, s.e.points["D"], fl, s.e.now+5000, 7, 8) {
		t.Fatal("arm refused with no timer pending")
	}
	p := &wire.Packet{}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x77, PSN: 1, AckReq: true}
	p.RETH = wire.RETH{DMALength: 0}
	s.emit(0x5, 0x6, p, 10_000) // another node pair, past the deadline
	if len(fired) != 0 {
		t.Fatalf("timer fired at frame %v of another node pair", fired)
	}
	want := s.sack(100, 100)
	if len(fired) != 1 || fired[0] != want {
		t.Fatalf("timer fired at frames %v, want once at %d (the pair's next frame)", fired, want)
	}
	if n := s.e.timers.len(); n != 0 {
		t.Errorf("%d timers pending after firing", n)
	}
}

// TestLimitTimers: at most maxTimers deadlines pend in an engine; arming
// one more is refused (the check judges without it), and arming
// allocates nothing.
func TestLimitTimers(t *testing.T) {
	s := newScene(t, scenePICS)
	s.copyOf(100, 0x100, false, false)
	fl, pt := s.onlyFlow(), s.e.points["D"]
	c := &check{timer: func(*engine, *timerCtx) {}}
	s.e.arm(c, pt, fl, 1<<40, 0, 0)
	allocs := testing.AllocsPerRun(maxTimers-2, func() {
		if !s.e.arm(c, pt, fl, 1<<40, 0, 0) {
			t.Fatal("arm refused below maxTimers")
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per timer armed, want 0", allocs)
	}
	for s.e.timers.len() < maxTimers {
		s.e.arm(c, pt, fl, 1<<40, 0, 0)
	}
	if s.e.arm(c, pt, fl, 1<<40, 0, 0) {
		t.Errorf("a timer armed beyond maxTimers (%d)", maxTimers)
	}
	if n := s.e.timers.len(); n != maxTimers {
		t.Errorf("%d timers pending, want maxTimers (%d)", n, maxTimers)
	}
}

// TestTimersFireInDeadlineOrder: timers fire earliest deadline first, and
// equal deadlines in the order they were armed.
func TestTimersFireInDeadlineOrder(t *testing.T) {
	s := newScene(t, scenePICS)
	s.copyOf(100, 0x100, false, false)
	fl, pt := s.onlyFlow(), s.e.points["D"]
	var got []uint64
	c := &check{timer: func(_ *engine, x *timerCtx) { got = append(got, x.a) }}
	for i, at := range []int64{300, 100, 200, 100, 50, 300} {
		s.e.arm(c, pt, fl, s.e.now+at, uint64(i), 0)
	}
	s.sack(100, 100)
	want := []uint64{4, 1, 3, 2, 0, 5}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
}

// TestLimitEchoPaths: WIRE-EV-9's state keeps the paths of at most
// MaxEVsPerFlow echo values per connection.
func TestLimitEchoPaths(t *testing.T) {
	s := newScene(t, srv6PICS)
	for i := range uint32(MaxEVsPerFlow + 50) {
		s.sendSRv6(i, 0x1000+i, 1)
	}
	if n := len(echoState.of(s.onlyFlow()).paths); n != MaxEVsPerFlow {
		t.Errorf("%d echo values held, want MaxEVsPerFlow (%d)", n, MaxEVsPerFlow)
	}
}

// TestOvertakenMarksBounded (REQ-TX-2's state): the marks of overtaken trim
// NACKs are dropped once the model no longer waits for their NACK, so they
// never outnumber the NACKs pending.
func TestOvertakenMarksBounded(t *testing.T) {
	fl := newFlow(flowKey{}, 1)
	s := &nacksOvertaken{marks: map[uint32]int{}}
	for q := range uint32(100) {
		pn := pendingNACK{frame: int(q) + 10, reason: wire.NACKTrimmed}
		fl.putNACK(q, pn)
		s.mark(fl, q, pn)
		if !s.overtaken(q, pn) {
			t.Fatalf("PSN %d not marked", q)
		}
		fl.delNACK(q) // resent: the model forgets it
		if len(s.marks) > max(len(fl.nackPend), 1) {
			t.Fatalf("%d marks for %d pending NACKs", len(s.marks), len(fl.nackPend))
		}
	}
	pn := pendingNACK{frame: 500, reason: wire.NACKTrimmed}
	fl.putNACK(7, pn)
	if s.overtaken(7, pn) {
		t.Error("a later NACK of PSN 7 is marked overtaken by the mark of an earlier one")
	}
}

// twoPairsPICS: probePICS with a second node pair, U writing to V, U a
// device under test too.
const twoPairsPICS = `{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["T", "U"],
	"nodes": {"T": ["fd00::1"], "D": ["fd00::2"], "U": ["fd00::3"], "V": ["fd00::4"]}, "parameters": {"mpr": 1, "timeout": 4},
	"capture": {"points": {"D": "D"}, "reaction_time_ns": 1000, "timer_tolerance_ns": 1000}}`

// twoPairsCapture: T→D and U→V each retire an EV and probe it once; then
// only U and V exchange frames, past both probe intervals' ends. T→D's
// interval ends with no frame of its pair after it.
func twoPairsCapture(t *testing.T) []byte {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "D", Plane: 0})
	if err != nil {
		t.Fatal(err)
	}
	s := newScene(t, twoPairsPICS)
	s.rec = w
	write := func(from, to byte, psn, ev uint32) {
		p := &wire.Packet{}
		p.IP6.TrafficClass = 4<<2 | 2
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn, AckReq: true}
		p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
		p.Payload = make([]byte, 64)
		p.SetEV(ev, wire.EVModeSTEV)
		s.emit(from, to, p, 2000)
	}
	retire := func(from, to byte, psn, ev uint32) {
		p := s.ctl(wire.OpSACK, psn)
		p.SETH = wire.SETH{CACKPSN: psn, SACKOffset: 1, Entropy: ev, M: wire.MAlwaysSkip, SPDCID: sceneDQP, DPDCID: sceneTQP}
		s.emit(to, from, p, 1000)
	}
	probe := func(from, to byte, ev uint32) {
		p := &wire.Packet{}
		p.IP6.TrafficClass = 2
		p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: sceneDQP}
		p.PETH = wire.PETH{ProbeID: 1, SPDCID: sceneTQP, DPDCID: sceneDQP, FType: 1}
		p.SetEV(ev, wire.EVModeSTEV)
		s.emit(from, to, p, 1000)
	}
	write(1, 2, 100, 0x150)
	retire(1, 2, 100, 0x150)
	write(3, 4, 100, 0x160)
	retire(3, 4, 100, 0x160)
	probe(1, 2, 0x150)
	probe(3, 4, 0x160)
	for i := range uint32(20) {
		write(3, 4, 101+i, 0x100)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTimersIdenticalForAnyJobs: one worker and two judge twoPairsCapture
// to the same report bytes, T→D's probe interval undecided in both
// (INCONCLUSIVE at T's row: no frame of T and D past its end) and
// U→V's passed. Fails when a timer fires at any frame past its deadline:
// one engine then passes T→D's interval at U→V's frames, which the
// shard of T and D never sees.
func TestTimersIdenticalForAnyJobs(t *testing.T) {
	p, err := ParsePICS([]byte(twoPairsPICS))
	if err != nil {
		t.Fatal(err)
	}
	var js [2][]byte
	var reps [2]*Report
	for i := range js {
		r, err := pcap.NewReader(bytes.NewReader(twoPairsCapture(t)))
		if err != nil {
			t.Fatal(err)
		}
		if reps[i], err = Judge(r, "twopairs.pcapng", Options{PICS: p, Today: testDay, Jobs: i + 1}); err != nil {
			t.Fatal(err)
		}
		if js[i], err = reps[i].JSON(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Errorf("reports with one worker and two differ:\n%s", firstDiff(js[0], js[1]))
	}
	res, _ := reps[0].Result(cProbePace.String())
	if res.Checked != 1 {
		t.Errorf("%s %s after %d observations (%s), want 1: U→V's interval alone ended with a frame of its pair after it", cProbePace, res.Verdict, res.Checked, res.Reason)
	}
}
