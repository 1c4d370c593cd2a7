package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// A frame whose ICRC is bad may have been corrupted on the wire before
// the capture point or after it, or in the capture itself: whether its
// receiver had it whole the capture cannot tell. It is one
// MRC-WIRE-ICRC-001 finding; no check that rests on it fails another
// frame. These tests flip the last ICRC byte of one frame of a repository
// capture and recompute nothing else.

// flipICRC copies capture src with the last byte (of the ICRC) of each of
// frames flipped.
func flipICRC(t testing.TB, src string, frames ...int) string {
	t.Helper()
	return copyCapture(t, src, "flipped.pcapng", func(f *pcap.Frame) bool {
		for _, n := range frames {
			if f.Number == n {
				f.Data = append([]byte(nil), f.Data...)
				f.Data[len(f.Data)-1] ^= 0xff
			}
		}
		return true
	})
}

// judgeFlipped judges src with frame bad's ICRC flipped, checks that it is
// at most one MRC-WIRE-ICRC-001 finding (none when the frame was captured
// away from its sender), and returns the FAIL (and NON-STRICT) findings on
// other frames, as "case frame requirement: observed".
func judgeFlipped(t *testing.T, src string, bad int) (*Report, []string) {
	t.Helper()
	rep, err := JudgeFile(flipICRC(t, src, bad), Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if fs := failsOf(rep, "MRC-WIRE-ICRC-001"); len(fs) > 1 || len(fs) == 1 && fs[0].Frame != bad {
		t.Errorf("frame %d flipped: MRC-WIRE-ICRC-001 findings %+v, want at most one, on frame %d", bad, fs, bad)
	}
	var knock []string
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Frame != bad && (f.Verdict == Fail || f.Verdict == NonStrict) {
				knock = append(knock, fmt.Sprintf("%s frame %d %s: %s (expected %s)", r.Case.ID, f.Frame, f.Requirement, f.Observed, f.Expected))
			}
		}
	}
	return rep, knock
}

const lossCapture = "../pcap/testdata/scenarios/loss.pcapng"

// TestBadICRCOnlyCopyLaterAcknowledged (RSP-RCV-4, WIRE-SETH-6): frame 2
// of the loss capture is PSN 1's only copy at capture point tx, and the
// responder later acknowledges PSN 1 (ACKs 497, 500, 551). With its ICRC
// bad, PSN 1 may still have reached the responder whole: the claims are
// undecided for PSN 1, naming frame 2, and never a FAIL.
func TestBadICRCOnlyCopyLaterAcknowledged(t *testing.T) {
	rep, knock := judgeFlipped(t, lossCapture, 2)
	for _, k := range knock {
		t.Errorf("knock-on of bad-ICRC frame 2: %s", k)
	}
	res, _ := rep.Result("MRC-RSP-SACK-001")
	named := false
	for _, f := range res.Findings {
		if f.Verdict == Inconclusive && f.PSN != nil && *f.PSN == 1 && strings.Contains(f.Observed, "frame 2") {
			named = true
		}
	}
	if !named {
		t.Errorf("MRC-RSP-SACK-001 %s (%s): no INCONCLUSIVE finding for PSN 1 naming frame 2: %+v", res.Verdict, res.Reason, res.Findings)
	}
}

// TestBadICRCRetransmission (WIRE-EV-5): frame 484 is a retransmission of
// PSN 0 on EV 0x1, which SACK 496 answers with entropy 0x1. With its ICRC
// bad, the SACK may answer it rather than PSN 0's first copy (frame 1, EV
// 0x803): the reflected EV is undecided, not a FAIL.
func TestBadICRCRetransmission(t *testing.T) {
	_, knock := judgeFlipped(t, lossCapture, 484)
	for _, k := range knock {
		t.Errorf("knock-on of bad-ICRC frame 484: %s", k)
	}
}

// TestBadICRCAnyFrameNoKnockOn: of the correct exchange (good.pcapng,
// which fails nothing), any one frame with a bad ICRC — a write, a
// retransmission, a SACK, an ACK, a probe or its answer — gives one
// MRC-WIRE-ICRC-001 finding and no FAIL on any other frame.
func TestBadICRCAnyFrameNoKnockOn(t *testing.T) {
	rep, err := JudgeFile("testdata/good.pcapng", Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= rep.Capture.Frames; n++ {
		_, knock := judgeFlipped(t, "testdata/good.pcapng", n)
		for _, k := range knock {
			t.Errorf("knock-on of bad-ICRC frame %d: %s", n, k)
		}
	}
}

// writeBadICRC is writeN with the last ICRC byte flipped.
func (s *scene) writeBadICRC(psn uint32, op wire.Opcode, msn uint16, n int) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn & wire.PSNMask, AckReq: op.IsLast()}
	p.METH = wire.METH{MSN: msn}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: uint32(n)}
	p.Payload = make([]byte, n)
	p.SetEV(0x100, wire.EVModeSTEV)
	return s.emitMutated(sceneT, sceneD, p, 10_000, func(b []byte) { b[len(b)-1] ^= 0xff })
}

// TestBadICRCClaimCounted (WIRE-CCS-1, RSP-RCV-4): in a capture from QP
// start, PSN p+1's only copy has a bad ICRC and the responder acknowledges
// it (SACK and ACK), counting its 512 bytes in rcvd_bytes. Neither the
// claims nor the count fail: the responder may have had it whole.
func TestBadICRCClaimCounted(t *testing.T) {
	const p = 5000
	s := newScene(t, strings.Replace(scenePICS, `"reaction_time_ns": 1000`, `"reaction_time_ns": 1000, "from_qp_start": true`, 1))
	s.writeN(p, wire.OpWriteOnly, 0, 0xFFFF, 512)
	s.sackBytes(p, p, 2)
	s.ack(p)
	bad := s.writeBadICRC(p+1, wire.OpWriteOnly, 1, 512)
	s.writeN(p+2, wire.OpWriteOnly, 2, 0xFFFF, 512)
	s.sackBytes(p+2, p+2, 6)
	s.ack(p + 2)
	s.writeN(p+3, wire.OpWriteOnly, 3, 0xFFFF, 512)
	s.sackBytes(p+3, p+3, 8)
	s.ack(p + 3)
	rep := s.report()
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Frame != bad && (f.Verdict == Fail || f.Verdict == NonStrict) {
				t.Errorf("knock-on of bad-ICRC frame %d: %s frame %d %s: %s (expected %s)", bad, r.Case.ID, f.Frame, f.Requirement, f.Observed, f.Expected)
			}
		}
	}
}

// sackBadICRC is D's SACK with cumulative point cack, triggered by trig,
// with the last ICRC byte flipped.
func (s *scene) sackBadICRC(cack, trig uint32) int {
	p := s.ctl(wire.OpSACK, cack)
	p.SETH = wire.SETH{CACKPSN: cack & wire.PSNMask, AckPSNOffset: int16(wire.PSNDiff(trig, cack)), SACKOffset: 1, Entropy: 0x100,
		SPDCID: sceneDQP, DPDCID: sceneTQP}
	return s.emitMutated(sceneD, sceneT, p, 1000, func(b []byte) { b[len(b)-1] ^= 0xff })
}

// TestBadICRCSACKMovesWindow (MPR-WIN-1): a SACK with a bad ICRC
// acknowledges PSNs 0..63; the requester, which may have had it whole,
// then sends PSN 130, inside una 63 + 128 × MPR 1 but beyond the window of
// the last SACK seen whole. That is undecided, not a FAIL.
func TestBadICRCSACKMovesWindow(t *testing.T) {
	s := newScene(t, bothDUTPICS)
	for q := uint32(0); q < 128; q++ {
		s.send(q, uint16(q), 0x100, false, 1000)
	}
	bad := s.sackBadICRC(63, 63)
	s.send(130, 130, 0x100, false, 1000)
	rep := s.report()
	for _, f := range failsOf(rep, "MRC-MPR-WIN-001") {
		t.Errorf("knock-on of bad-ICRC frame %d: frame %d %s: %s (expected %s)", bad, f.Frame, f.Requirement, f.Observed, f.Expected)
	}
}

// TestBadICRCSACKResetsRetries (LR-TMR-7, LR-TMR-6): with linear_cnt and
// exp_cnt 0, a trim NACK exhausts the retry counter; a SACK with a bad
// ICRC then advances una, which resets it if the requester had it whole.
// The retransmission that follows is undecided, not a FAIL.
func TestBadICRCSACKResetsRetries(t *testing.T) {
	s := newScene(t, strings.Replace(bothDUTPICS, `"mpr_dest": 1`, `"mpr_dest": 1, "linear_cnt": 0, "exp_cnt": 0`, 1))
	s.send(0, 0, 0x100, false, 1000)
	s.send(1, 1, 0x100, false, 1000)
	s.nack(1, wire.NACKTrimmed)
	bad := s.sackBadICRC(0, 0)
	s.send(1, 1, 0x101, true, 100_000)
	rep := s.report()
	if res, _ := rep.Result("MRC-LR-TMR-001"); res.Verdict != Inconclusive || !strings.Contains(res.Reason, fmt.Sprintf("frame %d", bad)) {
		t.Errorf("MRC-LR-TMR-001 %s (%s) %+v, want INCONCLUSIVE naming bad-ICRC frame %d", res.Verdict, res.Reason, res.Findings, bad)
	}
}
