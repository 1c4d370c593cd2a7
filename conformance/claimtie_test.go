package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// onPlane makes the scene's next frames those of interface id, plane id
// of the scene's capture point.
func (s *scene) onPlane(id int) {
	s.in = &pcap.Interface{Point: s.in.Point, Plane: id, LinkType: pcap.LinkTypeEthernet}
	s.iface = id
}

// sackNow is D's SACK in the clock tick of the last frame: cumulative
// point cack, bitmap bm from cack + 1, triggered by trig.
func (s *scene) sackNow(cack, trig uint32, bm uint64) int {
	p := s.ctl(wire.OpSACK, cack)
	p.SETH = wire.SETH{CACKPSN: cack, AckPSNOffset: int16(wire.PSNDiff(trig, cack)), SACKOffset: 1, SACKBitmap: bm,
		Entropy: 0x100, SPDCID: sceneDQP, DPDCID: sceneTQP}
	return s.emit(sceneD, sceneT, p, 0)
}

// ackNow is D's ACKNOWLEDGE with psn in the clock tick of the last frame.
func (s *scene) ackNow(psn uint32) int {
	p := s.ctl(wire.OpAcknowledge, psn)
	p.AETH = wire.AETH{Syndrome: wire.AETHNoCredit}
	return s.emit(sceneD, sceneT, p, 0)
}

// TestClaimInTickOfArrivalOnOtherPlane (RSP-RCV-4, WIRE-SETH-6): at a
// capture point with two planes, frames of one clock tick on two
// interfaces have no known order (dumpcap writes each interface's frames
// apart). Feedback claiming a PSN that arrived in its own tick on the
// other plane claims an arrival; a PSN that never arrived, arrived in a
// later tick, or arrived after the feedback in its tick on the feedback's
// own plane (an interface keeps its order) is a finding, at the
// feedback's frame, time and plane.
func TestClaimInTickOfArrivalOnOtherPlane(t *testing.T) {
	type claim func(s *scene) int // sends the feedback claiming PSN 2, returns its frame
	bitmap := func(s *scene) int { s.send(1, 1, 0x100, false, 10_000); return s.sackNow(1, 1, 0b1) }
	cumulative := func(s *scene) int { s.send(1, 1, 0x100, false, 10_000); return s.sackNow(2, 1, 0) }
	ack := func(s *scene) int { s.send(1, 1, 0x100, false, 10_000); return s.ackNow(2) }
	for _, c := range []struct {
		name  string
		claim claim
		// psn2 sends PSN 2 (or not) after the claim.
		psn2  func(s *scene)
		fails bool
		want  string // in the finding's observed text
	}{
		{"bitmap, other plane, same tick", bitmap, func(s *scene) { s.onPlane(1); s.send(2, 2, 0x100, false, 0) }, false, ""},
		{"cack, other plane, same tick", cumulative, func(s *scene) { s.onPlane(1); s.send(2, 2, 0x100, false, 0) }, false, ""},
		{"ACK, other plane, same tick", ack, func(s *scene) { s.onPlane(1); s.send(2, 2, 0x100, false, 0) }, false, ""},
		{"bitmap, never", bitmap, func(s *scene) { s.onPlane(1); s.send(3, 3, 0x100, false, 0) }, true, "bit set: PSN 2 was never seen arriving"},
		{"bitmap, never, capture ends in the tick", bitmap, func(s *scene) {}, true, "bit set: PSN 2 was never seen arriving"},
		{"bitmap, other plane, next tick", bitmap, func(s *scene) { s.onPlane(1); s.send(2, 2, 0x100, false, 1) }, true, "PSN 2"},
		{"bitmap, own plane, same tick", bitmap, func(s *scene) { s.send(2, 2, 0x100, false, 0) }, true, "PSN 2"},
		{"cack, never", cumulative, func(s *scene) { s.onPlane(1); s.send(3, 3, 0x100, false, 0) }, true, "cack_psn 2: PSN 2 was never seen arriving"},
		{"ACK, other plane, next tick", ack, func(s *scene) { s.onPlane(1); s.send(2, 2, 0x100, false, 1) }, true, "ACK psn 2: PSN 2 never arrived whole"},
	} {
		s := newScene(t, scenePICS)
		s.send(0, 0, 0x100, false, 10_000)
		s.sackNow(0, 0, 0) // the baseline
		fb := c.claim(s)
		at := s.ns - 10_000
		c.psn2(s)
		if c.name != "bitmap, never, capture ends in the tick" {
			s.onPlane(0)
			s.send(4, 4, 0x100, false, 10_000)
		}
		rep := s.report()
		fails := failsOf(rep, "MRC-RSP-SACK-001")
		if !c.fails {
			if len(fails) > 0 {
				t.Errorf("%s: %d findings, the first at frame %d: %s", c.name, len(fails), fails[0].Frame, fails[0].Observed)
			}
			if res, _ := rep.Result("MRC-RSP-SACK-001"); res.Checked == 0 {
				t.Errorf("%s: the claim was not judged", c.name)
			}
			continue
		}
		if len(fails) != 1 {
			t.Errorf("%s: %d findings, want 1: %+v", c.name, len(fails), fails)
			continue
		}
		f := fails[0]
		if f.Frame != fb || f.Plane != 0 || f.TimeNs != at || f.PSN == nil || *f.PSN != 2 || !strings.Contains(f.Observed, c.want) {
			t.Errorf("%s: finding at frame %d plane %d time %d PSN %v %q, want frame %d plane 0 time %d PSN 2 %q",
				c.name, f.Frame, f.Plane, f.TimeNs, f.PSN, f.Observed, fb, at, c.want)
		}
	}
}

// TestClaimTiesBounded: a connection holds at most maxClaimTies feedback
// frames of one tick with claims not yet seen arriving; the next is judged
// at once, so a claim of a PSN arriving later in the tick on the other
// plane is then a finding (the bound's cost is a finding, never a claim
// let through unjudged).
func TestClaimTiesBounded(t *testing.T) {
	s := newScene(t, scenePICS)
	s.send(0, 0, 0x100, false, 10_000)
	s.sackNow(0, 0, 0)
	s.send(1, 1, 0x100, false, 10_000)
	var last int
	for i := 0; i <= maxClaimTies; i++ {
		last = s.sackNow(1, 1, 0b1)
	}
	s.onPlane(1)
	s.send(2, 2, 0x100, false, 0)
	rep := s.report()
	fails := failsOf(rep, "MRC-RSP-SACK-001")
	if len(fails) != 1 || fails[0].Frame != last {
		t.Errorf("%d findings (%+v), want one, at the SACK beyond the bound (frame %d)", len(fails), fails, last)
	}
}

// TestReceiverPortsPlantedUnseenPSN: the receiver-side capture of two
// ports (dumpcap-loss), with PSN 12's only arrival taken out, under the
// default PICS: the SACKs claiming PSN 12 on either port are findings of
// MRC-RSP-SACK-001, with 1 worker and with 2, while the capture as it is
// PASSes (TestReceiverPortsOnePoint).
func TestReceiverPortsPlantedUnseenPSN(t *testing.T) {
	path := dropWrites(t, "../pcap/testdata/scenarios/dumpcap-loss.pcapng", 12)
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(path, Options{Today: testDay, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		var psns []uint32
		for _, f := range failsOf(rep, "MRC-RSP-SACK-001") {
			if f.PSN != nil {
				psns = append(psns, *f.PSN)
			}
		}
		if len(psns) == 0 || slices.ContainsFunc(psns, func(q uint32) bool { return q != 12 }) {
			t.Errorf("jobs %d: MRC-RSP-SACK-001 findings name PSNs %v, want PSN 12 only", jobs, psns)
		}
	}
}

// dropWrites copies capture, in its own frame order and interfaces,
// without the writes of PSN psn.
func dropWrites(t *testing.T, capture string, psn uint32) string {
	t.Helper()
	var p wire.Packet
	dropped := 0
	path := copyCapture(t, capture, "planted.pcapng", func(f *pcap.Frame) bool {
		if wire.Default.Decode(f.Data, &p) == nil && p.BTH.Opcode.IsWrite() && p.BTH.PSN == psn {
			dropped++
			return false
		}
		return true
	})
	if dropped == 0 {
		t.Fatalf("%s has no write of PSN %d", capture, psn)
	}
	return path
}
