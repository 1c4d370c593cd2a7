package conformance

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// copyOf is a T→D write of PSN psn on EV ev, CE-marked when ce, sent as a
// retransmission when rtx: one copy of a packet the requester sent more
// than once.
func (s *scene) copyOf(psn uint32, ev uint32, ce, rtx bool) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	if rtx {
		p.IP6.TrafficClass = 8<<2 | 2
	}
	if ce {
		p.IP6.TrafficClass |= 3
	}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn, AckReq: true, Retransmit: rtx}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
	p.Payload = make([]byte, 64)
	p.SetEV(ev, wire.EVModeSTEV)
	return s.emit(sceneT, sceneD, p, 10_000)
}

// sackM is D's SACK with cumulative point cack, triggered by trig on EV ev,
// with verdict m.
func (s *scene) sackM(cack, trig, ev uint32, m wire.Multipath) int {
	p := s.ctl(wire.OpSACK, cack)
	p.SETH = wire.SETH{CACKPSN: cack, AckPSNOffset: int16(wire.PSNDiff(trig, cack)), SACKOffset: 1, Entropy: ev, M: m,
		SPDCID: sceneDQP, DPDCID: sceneTQP}
	return s.emit(sceneD, sceneT, p, 1000)
}

// TestMVerdictOfOneOfTwoCopies: a PSN that arrives twice, once CE-marked
// and once not, is answered twice, and each SACK's m follows the copy it
// answers (RSP-SACK-3): m = NONE for the unmarked copy, SKIP_ONCE for the
// marked one (and a SACK for a duplicate reflects the duplicate's EV,
// RSP-DUP-2, WIRE-EV-5). At a capture point a SACK may follow the later
// copy although it answers the earlier one: the responder answered before
// the later copy reached it, or within its reaction time. Under load the
// end-to-end test saw exactly this: a retransmission after a timeout
// CE-marked, and the late SACK for the first, unmarked copy judged against
// it (MRC-RSP-SACK-004 FAIL, m = NONE for a CE-marked trigger).
func TestMVerdictOfOneOfTwoCopies(t *testing.T) {
	const p, a, b = 7000, 0x100, 0x1b0
	for _, tc := range []struct {
		name           string
		ev1, ev2       uint32 // the EVs of the first and second copies
		ce1, ce2       bool   // their CE marks
		answers        []int  // the order of the answers: 1 answers the first copy, 2 the second
		wantFail, only bool
	}{
		{name: "unmarked then CE-marked on another EV, answered in order", ev1: a, ev2: b, ce2: true, answers: []int{1, 2}},
		{name: "CE-marked then unmarked on another EV, answered in order", ev1: a, ev2: b, ce1: true, answers: []int{1, 2}},
		{name: "unmarked then CE-marked on the same EV, answered in order", ev1: a, ev2: a, ce2: true, answers: []int{1, 2}},
		{name: "CE-marked then unmarked on the same EV, answered in order", ev1: a, ev2: a, ce1: true, answers: []int{1, 2}},
		{name: "unmarked then CE-marked on another EV, answered late and reordered", ev1: a, ev2: b, ce2: true, answers: []int{2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScene(t, scenePICS)
			s.copyOf(p-1, a, false, false)
			s.sackM(p-1, p-1, a, wire.MNone)
			evs, ces := [3]uint32{0, tc.ev1, tc.ev2}, [3]bool{false, tc.ce1, tc.ce2}
			s.copyOf(p, tc.ev1, tc.ce1, false)
			s.copyOf(p, tc.ev2, tc.ce2, true)
			frames := map[int]int{}
			for _, k := range tc.answers {
				m := wire.MNone
				if ces[k] {
					m = wire.MSkipOnce
				}
				frames[s.sackM(p, p, evs[k], m)] = k
			}
			rep := s.report()
			for _, cs := range []string{cMVerdict.String(), cEVReflect.String(), cRevPlane.String()} {
				for _, f := range failsOf(rep, cs) {
					t.Errorf("%s: %s frame %d (answering copy %d): expected %s; observed %s", cs, f.Requirement, f.Frame, frames[f.Frame], f.Expected, f.Observed)
				}
			}
			if v := rep.Verdict(cMVerdict.String()); v != Pass {
				t.Errorf("%s: %s, want PASS", cMVerdict, v)
			}
		})
	}
}

// TestMVerdictStillFails: the planted bugs RSP-SACK-3 is there to catch
// still fail when a PSN arrived once: a CE-marked arrival answered m =
// NONE, and, with two copies both CE-marked, an answer m = NONE to either.
func TestMVerdictStillFails(t *testing.T) {
	const p, a, b = 7000, 0x100, 0x1b0
	for _, twice := range []bool{false, true} {
		s := newScene(t, scenePICS)
		s.copyOf(p-1, a, false, false)
		s.sackM(p-1, p-1, a, wire.MNone)
		s.copyOf(p, a, true, false)
		if twice {
			s.copyOf(p, b, true, true)
		}
		bad := s.sackM(p, p, a, wire.MNone)
		rep := s.report()
		f := failsOf(rep, cMVerdict.String())
		if len(f) != 1 || f[0].Frame != bad || f[0].Requirement != "RSP-SACK-3" {
			t.Errorf("twice %v: %s findings %+v, want one RSP-SACK-3 FAIL at frame %d", twice, cMVerdict, f, bad)
		}
	}
}
