package conformance

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// srv6PICS: the requester T is the DUT, captured at T, with the SRv6 EV
// format: the 32-bit EV of each data packet is the requester's echo value
// (WIRE-EV-8, WIRE-EV-9).
const srv6PICS = `{"pics_version": 1, "features": {"trim_nack": true, "srv6": true}, "ev_mode": "srv6", "dut": ["T"],
	"nodes": {"T": ["fd00::1"], "D": ["fd00::2"]}, "parameters": {"mpr": 1, "mpr_dest": 1},
	"capture": {"points": {"T": "T"}, "reaction_time_ns": 1000}}`

// sendSRv6 is a T→D write of 64 bytes, SRv6-encapsulated on the path
// whose outer destination ends in path, carrying echo value echo.
func (s *scene) sendSRv6(psn uint32, echo uint32, path uint16) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn, AckReq: true}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
	p.Payload = make([]byte, 64)
	p.SRv6 = true
	p.Outer = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64, Src: [16]byte{0xfc, 15: sceneT}}
	a, err := wire.NewUSIDAddr(0xfc000000, 0x0100|path, 0x0200|path, 0x0300|sceneD)
	if err != nil {
		s.t.Fatal(err)
	}
	p.Outer.Dst = a
	p.SetEV(echo, wire.EVModeSRv6)
	return s.emit(sceneT, sceneD, p, 1000)
}

// TestSRv6EchoOnePathPerValue: WIRE-EV-9 makes the 32-bit echo value
// unique within the QP's EV set, so one echo value names one SRv6 path.
// Writes that keep each echo value on its path pass MRC-WIRE-EV-003; a
// requester that sends one echo value on a second outer destination (the
// responder's reflection could not tell the two paths apart) fails it, at
// that frame.
func TestSRv6EchoOnePathPerValue(t *testing.T) {
	s := newSceneAt(t, srv6PICS, "T")
	s.sendSRv6(0, 0x11, 1)
	s.sendSRv6(1, 0x22, 2)
	s.sendSRv6(2, 0x11, 1)
	rep := s.report()
	if r, _ := rep.Result("MRC-WIRE-EV-003"); r.Verdict != Pass || r.Checked != 3 {
		t.Fatalf("echo values kept on their paths: MRC-WIRE-EV-003 %s after %d observations (%s), want PASS after 3", r.Verdict, r.Checked, r.Reason)
	}

	s = newSceneAt(t, srv6PICS, "T")
	s.sendSRv6(0, 0x11, 1)
	s.sendSRv6(1, 0x22, 2)
	bad := s.sendSRv6(2, 0x11, 2)
	rep = s.report()
	fs := failsOf(rep, "MRC-WIRE-EV-003")
	if len(fs) != 1 || fs[0].Frame != bad || fs[0].Requirement != "WIRE-EV-9" {
		t.Fatalf("echo 0x11 on a second path: findings %+v, want one WIRE-EV-9 FAIL at frame %d", fs, bad)
	}
}
