package conformance

import (
	"fmt"
	"os"
	"path/filepath"
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
	r, err := pcap.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), "flipped.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w *pcap.Writer
	var fr pcap.Frame
	for r.Next(&fr) == nil {
		if w == nil {
			if w, err = pcap.NewWriter(f, r.Interfaces()...); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range frames {
			if fr.Number == n {
				fr.Data = append([]byte(nil), fr.Data...)
				fr.Data[len(fr.Data)-1] ^= 0xff
			}
		}
		if err := w.WriteFrame(&fr); err != nil {
			t.Fatal(err)
		}
	}
	if w == nil {
		t.Fatalf("%s: no frame", src)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
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
