package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// scene builds a capture frame by frame, at one capture point at the
// responder D (the DUT), of a requester T writing to D's QP 0x22 from its
// QP 0x11, and judges it.
type scene struct {
	t     *testing.T
	e     *engine
	in    *pcap.Interface
	iface int          // the interface ID of the next frames (onPlane)
	rec   *pcap.Writer // when set, frames go to it, not to e
	n     int
	ns    int64
	start time.Time
}

const (
	sceneT, sceneD     = 0x1, 0x2
	sceneTQP, sceneDQP = 0x11, 0x22
)

func newScene(t *testing.T, picsJSON string) *scene {
	return newSceneAt(t, picsJSON, "D")
}

// newSceneAt captures at point (the PICS places it).
func newSceneAt(t *testing.T, picsJSON, point string) *scene {
	t.Helper()
	p, err := ParsePICS([]byte(picsJSON))
	if err != nil {
		t.Fatal(err)
	}
	return &scene{t: t, e: newEngine(p), in: &pcap.Interface{Point: point, Plane: 0, LinkType: pcap.LinkTypeEthernet},
		start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// send is a T→D write of 64 bytes on EV ev, gap ns after the last frame.
func (s *scene) send(psn uint32, msn uint16, ev uint32, rtx bool, gap int64) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	if rtx {
		p.IP6.TrafficClass = 8<<2 | 2
	}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn, AckReq: true, Retransmit: rtx}
	p.METH = wire.METH{MSN: msn}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
	p.Payload = make([]byte, 64)
	p.SetEV(ev, wire.EVModeSTEV)
	return s.emit(sceneT, sceneD, p, gap)
}

// sackBits is D's SACK with cumulative point cack and bitmap bm from
// cack + 1, triggered by trig on EV ev.
func (s *scene) sackBits(cack, trig uint32, bm uint64, ev uint32) int {
	p := s.ctl(wire.OpSACK, cack)
	p.SETH = wire.SETH{CACKPSN: cack, AckPSNOffset: int16(wire.PSNDiff(trig, cack)), SACKOffset: 1, SACKBitmap: bm,
		Entropy: ev, SPDCID: sceneDQP, DPDCID: sceneTQP}
	return s.emit(sceneD, sceneT, p, 1000)
}

// scenePICS: D is the DUT, the point at it, a window of 128 PSNs.
const scenePICS = `{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["D"],
	"nodes": {"T": ["fd00::1"], "D": ["fd00::2"]}, "parameters": {"mpr": 1, "mpr_dest": 1},
	"capture": {"points": {"D": "D"}, "reaction_time_ns": 1000}}`

func (s *scene) emit(from, to byte, p *wire.Packet, gap int64) int {
	s.t.Helper()
	p.IsIPv6 = true
	p.IP6.HopLimit = 64
	p.IP6.Src, p.IP6.Dst = [16]byte{0xfd, 15: from}, [16]byte{0xfd, 15: to}
	b, err := wire.Default.Append(nil, p)
	if err != nil {
		s.t.Fatal(err)
	}
	s.n++
	s.ns += gap
	f := pcap.Frame{Number: s.n, Interface: s.iface, Timestamp: s.start.Add(time.Duration(s.ns)), Data: b, Length: len(b)}
	if s.rec != nil {
		if err := s.rec.WriteFrame(&f); err != nil {
			s.t.Fatal(err)
		}
		return s.n
	}
	s.e.frame(&f, s.in)
	return s.n
}

// write is a T→D RDMA write of 64 bytes.
func (s *scene) write(psn uint32, op wire.Opcode, msn uint16, pkey uint16) int {
	return s.writeN(psn, op, msn, pkey, 64)
}

// writeN is a T→D RDMA write of n bytes.
func (s *scene) writeN(psn uint32, op wire.Opcode, msn uint16, pkey uint16, n int) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	p.BTH = wire.BTH{Opcode: op, PKey: pkey, DestQP: sceneDQP, PSN: psn & wire.PSNMask, AckReq: op.IsLast()}
	p.METH = wire.METH{MSN: msn}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: uint32(n)}
	p.Payload = make([]byte, n)
	p.SetEV(0x100, wire.EVModeSTEV)
	return s.emit(sceneT, sceneD, p, 10_000)
}

func (s *scene) ctl(op wire.Opcode, psn uint32) *wire.Packet {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 46 << 2
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: sceneTQP, PSN: psn & wire.PSNMask}
	p.SetEV(0x200, wire.EVModeSTEV)
	return p
}

// sack is D's SACK with cumulative point cack, triggered by trig.
func (s *scene) sack(cack, trig uint32) int { return s.sackBytes(cack, trig, 0) }

// sackBytes is sack with CC_STATE rcvd_bytes rcvd.
func (s *scene) sackBytes(cack, trig, rcvd uint32) int {
	p := s.ctl(wire.OpSACK, cack)
	off := wire.PSNDiff(trig, cack)
	if off < -32768 || off > 32767 {
		off = 0 // RSP-SACK-2: an offset that does not fit is reported as 0
	}
	p.SETH = wire.SETH{CACKPSN: cack & wire.PSNMask, AckPSNOffset: int16(off), SACKOffset: 1, Entropy: 0x100,
		SPDCID: sceneDQP, DPDCID: sceneTQP, CC: wire.CCState{RcvdBytes: rcvd}}
	return s.emit(sceneD, sceneT, p, 1000)
}

// ack is D's ACKNOWLEDGE with psn.
func (s *scene) ack(psn uint32) int {
	p := s.ctl(wire.OpAcknowledge, psn)
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit}
	return s.emit(sceneD, sceneT, p, 10)
}

// nack is D's NACK for psn.
func (s *scene) nack(psn uint32, reason wire.NACKReason) int {
	p := s.ctl(wire.OpNACK, psn)
	p.NETH = wire.NETH{Reason: reason, Entropy: 0x100, NACKPSN: psn & wire.PSNMask, SPDCID: sceneDQP, DPDCID: sceneTQP}
	return s.emit(sceneD, sceneT, p, 1000)
}

// probe is T's probe with id and D's answer with cack.
func (s *scene) probe(id uint16, cack uint32) { s.probeBytes(id, cack, 0) }

// probeBytes is probe with rcvd_bytes rcvd in the answer.
func (s *scene) probeBytes(id uint16, cack, rcvd uint32) {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 2
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: sceneDQP}
	p.PETH = wire.PETH{ProbeID: id, SPDCID: sceneTQP, DPDCID: sceneDQP, FType: 1}
	p.SetEV(0x100, wire.EVModeSTEV)
	s.emit(sceneT, sceneD, p, 10_000)
	a := s.ctl(wire.OpSACK, cack)
	a.SETH = wire.SETH{CACKPSN: cack & wire.PSNMask, AckPSNOffset: int16(id), SACKOffset: 1, Entropy: 0x100, PR: true,
		SPDCID: sceneDQP, DPDCID: sceneTQP, CC: wire.CCState{RcvdBytes: rcvd}}
	s.emit(sceneD, sceneT, a, 1000)
}

func (s *scene) report() *Report {
	s.e.finish()
	return s.e.report(&CaptureInfo{Interfaces: []Interface{}, PointNodes: []PointNode{}, Notes: []string{}}, nil, testDay)
}

// findings returns the FAIL findings of case cs.
func failsOf(rep *Report, cs string) []Finding {
	res, _ := rep.Result(cs)
	var out []Finding
	for _, f := range res.Findings {
		if f.Verdict == Fail {
			out = append(out, f)
		}
	}
	return out
}

// TestPKeyMismatchIsDiscarded: a write whose P_Key is not the QP's is
// discarded by the responder (WIRE-BTH-12, RSP-RCV-1), so the judge must
// not count it as received: a SACK that leaves it out is current
// (RSP-SACK-1) and its bytes are not in rcvd_bytes (WIRE-CCS-1), while a
// SACK that claims it breaks WIRE-SETH-6. The active suite's
// MRC-RSP-RCV-102 sends exactly such a write first on its QP.
func TestPKeyMismatchIsDiscarded(t *testing.T) {
	const p = 5000
	// The responder leaves the bad-P_Key write out.
	s := newScene(t, scenePICS)
	s.write(p, wire.OpWriteOnly, 0, 0x7FFF)
	s.probe(0x51, p-1)
	s.write(p, wire.OpWriteOnly, 0, 0xFFFF)
	s.sack(p, p)
	s.write(p+1, wire.OpWriteOnly, 1, 0xFFFF)
	s.sack(p+1, p+1)
	rep := s.report()
	for _, cs := range []string{cCurrent.String(), cCounters.String(), cClaims.String()} {
		if f := failsOf(rep, cs); len(f) > 0 {
			t.Errorf("%s: %s %s frame %d: expected %s; observed %s", cs, rep.Verdict(cs), f[0].Requirement, f[0].Frame, f[0].Expected, f[0].Observed)
		}
	}
	if v := rep.Verdict(cCurrent.String()); v != Pass {
		t.Errorf("%s: %s, want PASS", cCurrent.String(), v)
	}
	// In a capture from QP start the byte counter is checked too: the
	// discarded write's 512 bytes are not in rcvd_bytes (WIRE-CCS-1).
	s = newScene(t, strings.Replace(scenePICS, `"reaction_time_ns": 1000`, `"reaction_time_ns": 1000, "from_qp_start": true`, 1))
	s.writeN(p, wire.OpWriteOnly, 0, 0xFFFF, 512)
	s.sackBytes(p, p, 2)
	s.writeN(p+1, wire.OpWriteOnly, 1, 0x7FFF, 512)
	s.probeBytes(0x52, p, 2)
	s.writeN(p+1, wire.OpWriteOnly, 1, 0xFFFF, 512)
	s.sackBytes(p+1, p+1, 4)
	rep = s.report()
	for _, cs := range []string{cCurrent.String(), cCounters.String()} {
		if v := rep.Verdict(cs); v != Pass {
			res, _ := rep.Result(cs)
			t.Errorf("from QP start: %s %s (%s) %+v, want PASS", cs, v, res.Reason, res.Findings)
		}
	}
	// A responder that accepts it (SACKs it) claims a PSN it must have
	// discarded.
	s = newScene(t, scenePICS)
	s.write(p, wire.OpWriteOnly, 0, 0xFFFF)
	s.sack(p, p)
	bad := s.write(p+1, wire.OpWriteOnly, 1, 0x7FFF)
	s.sack(p+1, p+1)
	rep = s.report()
	f := failsOf(rep, cClaims.String())
	if len(f) == 0 || f[0].Requirement != "WIRE-SETH-6" || len(f[0].Related) == 0 || f[0].Related[0] != bad {
		t.Errorf("a SACK claiming the discarded write: %s %+v", rep.Verdict(cClaims.String()), f)
	}
}

// TestTransportACKSerialArithmetic: RSP-ACK-1 is judged in 24-bit serial
// arithmetic. (1) A write at the responder's cack + 2^23 is a duplicate for
// the responder (RSP-RCV-6), even when it looks like the QP's first
// message in a capture from QP start: no ACK is due for it. (2) An ACK
// whose psn lies 2^23 from an ack_req PSN does not cover it.
func TestTransportACKSerialArithmetic(t *testing.T) {
	const c = 0x10
	fromStart := `{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["D"],
		"nodes": {"T": ["fd00::1"], "D": ["fd00::2"]}, "parameters": {"mpr": 1, "mpr_dest": 1},
		"capture": {"points": {"D": "D"}, "reaction_time_ns": 1000, "from_qp_start": true}}`
	for _, doc := range []string{scenePICS, fromStart} {
		s := newScene(t, doc)
		s.write(c+1<<23, wire.OpWriteOnly, 0, 0xFFFF) // MSN 0, RQMSN 0: looks like a first message
		s.sack(c, c+1<<23)                            // a duplicate for D: cack c
		s.write(c+1, wire.OpWriteOnly, 1, 0xFFFF)
		s.sack(c+1, c+1)
		s.ack(c + 1)
		s.write(c+2, wire.OpWriteFirst, 2, 0xFFFF)
		s.sack(c+2, c+2)
		rep := s.report()
		if f := failsOf(rep, cACK.String()); len(f) > 0 {
			t.Errorf("a write at cack + 2^23: %s frame %d: expected %s; observed %s", f[0].Requirement, f[0].Frame, f[0].Expected, f[0].Observed)
		}
		if v := rep.Verdict(cACK.String()); v != Pass {
			t.Errorf("a write at cack + 2^23: %s, want PASS (the ACK for PSN %d)", v, c+1)
		}
	}
	s := newScene(t, scenePICS)
	s.write(c, wire.OpWriteOnly, 0, 0xFFFF)
	s.sack(c, c)
	s.ack(c)
	due := s.write(c+1, wire.OpWriteOnly, 1, 0xFFFF)
	s.sack(c+1, c+1)
	s.ack(c + 1 + 1<<23) // 2^23 away: covers nothing
	s.write(c+2, wire.OpWriteFirst, 2, 0xFFFF)
	s.sack(c+2, c+2)
	rep := s.report()
	f := failsOf(rep, cACK.String())
	if len(f) != 1 || f[0].Frame != due || f[0].Requirement != "RSP-ACK-1" {
		t.Errorf("an ACK 2^23 away from the ack_req PSN: %s %+v, want one RSP-ACK-1 FAIL at frame %d", rep.Verdict(cACK.String()), f, due)
	}
}

// TestOutOfWindowBeforeCumulativePoint: a PSN_OOR_WINDOW NACK for the
// first write the responder sees, before it has reported any cumulative
// point, cannot be judged (the window is unknown) and is no FAIL of
// RSP-NACK-4; one for a PSN inside the window of a cack the responder
// reported is.
func TestOutOfWindowBeforeCumulativePoint(t *testing.T) {
	const c = 0x300
	s := newScene(t, scenePICS)
	s.write(c+200, wire.OpWriteOnly, 7, 0xFFFF) // beyond cack + 128
	s.nack(c+200, wire.NACKPSNOutOfWindow)
	s.write(c+1, wire.OpWriteOnly, 1, 0xFFFF)
	s.sack(c+1, c+1)
	s.write(c+3, wire.OpWriteOnly, 3, 0xFFFF)
	wrong := s.nack(c+3, wire.NACKPSNOutOfWindow) // cack + 2: inside
	rep := s.report()
	f := failsOf(rep, cOOR.String())
	if len(f) != 1 || f[0].Frame != wrong || f[0].Requirement != "RSP-NACK-4" {
		t.Errorf("%s: %+v, want one RSP-NACK-4 FAIL at frame %d", rep.Verdict(cOOR.String()), f, wrong)
	}
}

// TestFloorWithInferredLossRetirements: a requester moves an EV to
// ASSUMED_BAD on a timeout and also on a loss it infers from the SACK
// bitmap, both subject to the ev_min_active floor (EV-ST-5, EV-SET-6). The
// judge retires EVs on timeouts only, so when EVs whose packets the SACKs
// show lost may already hold the floor, data on an EV whose packet timed
// out is INCONCLUSIVE, not a FAIL; with room under the floor it FAILs.
func TestFloorWithInferredLossRetirements(t *testing.T) {
	const e1, e2, e3 = 0x101, 0x102, 0x103
	for _, c := range []struct {
		min  int
		want Verdict
	}{{2, Inconclusive}, {1, Fail}} {
		s := newSceneAt(t, fmt.Sprintf(`{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["T"],
			"nodes": {"T": ["fd00::1"], "D": ["fd00::2"]}, "parameters": {"mpr": 1, "timeout": 4, "ev_min_active": %d},
			"capture": {"points": {"T": "T"}, "reaction_time_ns": 1000, "timer_tolerance_ns": 1000}}`, c.min), "T")
		s.send(100, 0, e1, false, 1000) // lost
		s.send(101, 1, e2, false, 1000)
		s.send(102, 2, e3, false, 1000)
		s.sackBits(99, 102, 0b110, e3)         // PSN 100 missing: e1 may be retired on that inference
		s.send(100, 0, e2, true, 2000)         // resent on the SACK gap; lost again
		s.send(100, 0, e3, true, 20_000)       // resent after a base timeout (16.4 µs): e2 timed out
		bad := s.send(103, 3, e2, false, 5000) // e2 again
		rep := s.report()
		res, _ := rep.Result(cEVTimeout.String())
		if res.Verdict != c.want {
			t.Errorf("ev_min_active %d: %s %s (%s), want %s", c.min, cEVTimeout.String(), res.Verdict, res.Reason, c.want)
			continue
		}
		if len(res.Findings) == 0 || res.Findings[0].Frame != bad || res.Findings[0].Requirement != "EV-ST-5" {
			t.Errorf("ev_min_active %d: findings %+v", c.min, res.Findings)
		}
	}
}

// sceneWriteBytes returns the frame of a 64-byte WRITE_ONLY from the
// scene's requester to its responder, on EV 0x100, with traffic class tc,
// PSN psn and rtx as given, for tests that feed frames themselves.
func sceneWriteBytes(t testing.TB, tc uint8, psn uint32, rtx bool) []byte {
	t.Helper()
	p := &wire.Packet{IsIPv6: true}
	p.IP6 = wire.IPv6{TrafficClass: tc, HopLimit: 64, Src: [16]byte{0xfd, 15: sceneT}, Dst: [16]byte{0xfd, 15: sceneD}}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn, AckReq: true, Retransmit: rtx}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
	p.Payload = make([]byte, 64)
	p.SetEV(0x100, wire.EVModeSTEV)
	b, err := wire.Default.Append(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
