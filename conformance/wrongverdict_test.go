package conformance

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// The five wrong verdicts of issue 12, each a test that failed on the
// engine before it.

// TestTruncatedCaptureIsCaptureError: a capture that ends inside a block,
// or whose block is corrupt, is a capture error naming the file and the
// offset, never a report (which could say RESULT PASS).
func TestTruncatedCaptureIsCaptureError(t *testing.T) {
	good, err := os.ReadFile("testdata/good.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	corrupt := append([]byte(nil), good...)
	// The block total length of the fourth block (after SHB and IDBs) is
	// found by walking; corrupt the first EPB's length field instead.
	off := firstEPB(t, corrupt)
	copy(corrupt[off+4:], []byte{0xff, 0xff, 0xff, 0x7f})
	for name, b := range map[string][]byte{"truncated": good[:10000], "corrupt": corrupt} {
		path := filepath.Join(t.TempDir(), name+".pcapng")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := JudgeFile(path, Options{Today: testDay})
		var ce *CaptureError
		if !errors.As(err, &ce) {
			res := ""
			if rep != nil {
				res = rep.Summary.Result
			}
			t.Errorf("%s: err %v (result %q), want a *CaptureError", name, err, res)
			continue
		}
		var fe *pcap.FormatError
		if ce.File != path || !errors.As(err, &fe) || fe.Offset <= 0 || !strings.Contains(err.Error(), fmt.Sprint(fe.Offset)) {
			t.Errorf("%s: %v: want the file and the offset", name, err)
		}
	}
}

// firstEPB returns the offset of the first Enhanced Packet Block.
func firstEPB(t *testing.T, b []byte) int {
	for off := 0; off+12 <= len(b); {
		typ := uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24
		n := int(uint32(b[off+4]) | uint32(b[off+5])<<8 | uint32(b[off+6])<<16 | uint32(b[off+7])<<24)
		if typ == 6 {
			return off
		}
		if n < 12 {
			break
		}
		off += n
	}
	t.Fatal("no EPB")
	return 0
}

// malformedFrames judges frames of pcap/testdata/malformed.pcapng alone.
func malformedFrames(t *testing.T, keep ...int) *Report {
	t.Helper()
	return malformedFramesJobs(t, 0, keep...)
}

// malformedFramesJobs is malformedFrames with Options.Jobs jobs.
func malformedFramesJobs(t *testing.T, jobs int, keep ...int) *Report {
	t.Helper()
	path := copyCapture(t, "../pcap/testdata/malformed.pcapng", "sel.pcapng", func(f *pcap.Frame) bool { return slices.Contains(keep, f.Number) })
	rep, err := JudgeFile(path, Options{Today: testDay, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestMalformedFrameFailsWhereFramesWereLost: a frame that fails to
// decode after its UDP header is decided from the frame alone, so it
// FAILs even at a capture point whose statistics say frames were lost
// (TestLostFramesUndecidable), as one failing before UDP does.
func TestMalformedFrameFailsWhereFramesWereLost(t *testing.T) {
	for _, c := range []struct {
		frame int
		req   RequirementID
	}{{6, "WIRE-BTH-1"}, {3, "WIRE-LEN-1"}} {
		path := copyCapture(t, "../pcap/testdata/malformed.pcapng", "lost.pcapng", func(f *pcap.Frame) bool { return f.Number == c.frame },
			func(w *pcap.Writer) error { return w.WriteDropped(time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC), 0, 3) })
		rep, err := JudgeFile(path, Options{Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Capture.Interfaces[0].Dropped != 3 {
			t.Fatalf("frame %d: interface %+v, want 3 frames lost", c.frame, rep.Capture.Interfaces[0])
		}
		if f, ok := findingOf(rep, string(c.req)); !ok || f.Verdict != Fail {
			t.Errorf("frame %d: %s finding %+v (found %v), want FAIL", c.frame, c.req, f, ok)
		}
	}
}

// TestFrameFailingBeforeBTHIsAFinding: frames 1, 2, 3 and 43 of the
// malformed corpus fail before their BTH (a short Ethernet header, a short
// IPv4 header, an IPv4 total length or IPv6 payload length beyond the
// frame). Each is a finding under MRC-WIRE-ENC-001, which cannot PASS.
func TestFrameFailingBeforeBTHIsAFinding(t *testing.T) {
	rep := malformedFrames(t, 1, 2, 3, 43)
	res, _ := rep.Result("MRC-WIRE-ENC-001")
	if res.Verdict != Fail {
		t.Errorf("MRC-WIRE-ENC-001 %s (%s), want FAIL", res.Verdict, res.Reason)
	}
	got := map[int]bool{}
	for _, f := range res.Findings {
		got[f.Frame] = true
	}
	for _, n := range []int{1, 2, 3, 4} { // renumbered 1..4 in the selection
		if !got[n] {
			t.Errorf("no MRC-WIRE-ENC-001 finding for frame %d: %+v", n, res.Findings)
		}
	}
	// Frames that are simply not MRC (other UDP ports, ARP, other
	// routing types) stay out of the judgement.
	rep = malformedFrames(t, 40, 41, 42)
	for _, r := range rep.Results {
		if r.FindingCount > 0 {
			t.Errorf("%s: %d findings on non-MRC frames", r.Case.ID, r.FindingCount)
		}
	}
}

// TestFrameFailingAfterUDPIsAFinding: a frame of the malformed corpus that
// fails at or after its UDP header is a finding against its sender under
// the requirement it breaks, judged alone (its sender has no frame that
// decodes) or beside a frame of another sender, with one worker or two.
func TestFrameFailingAfterUDPIsAFinding(t *testing.T) {
	for _, c := range []struct {
		name string
		keep []int
		req  RequirementID // of the first frame kept, the malformed one
	}{
		{"short BTH", []int{6}, "WIRE-BTH-1"},
		{"short ICRC", []int{7}, "WIRE-ICRC-1"},
		{"short SETH", []int{8}, "WIRE-SETH-1"},
		{"short RETH", []int{10}, "WIRE-RETH-1"},
		{"short NETH", []int{11}, "WIRE-NETH-1"},
		{"short TSETH", []int{12}, "WIRE-TSETH-1"},
		{"unknown opcode 0xC0 in MRC's block", []int{30}, "WIRE-BTH-2"},
		{"unknown opcode 0xDF in MRC's block", []int{31}, "WIRE-BTH-2"},
		{"pad count beyond the payload", []int{35}, "WIRE-BTH-9"},
		{"short SETH beside another sender's write", []int{8, 17}, "WIRE-SETH-1"},
		{"short NETH beside another sender's write", []int{11, 13}, "WIRE-NETH-1"},
	} {
		for _, jobs := range []int{1, 2} {
			rep := malformedFramesJobs(t, jobs, c.keep...)
			var got []string
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Frame == 1 && f.Requirement == c.req && f.Verdict == Fail {
						got = append(got, r.Case.ID+" against "+f.Node)
					}
				}
			}
			if len(got) != 1 {
				t.Errorf("%s, frames %v, %d jobs: %s findings on frame 1 %q, want one (result %s)", c.name, c.keep, jobs, c.req, got, rep.Summary.Result)
			}
		}
	}
}

// TestPlainRoCEOpcodeNotJudged: an opcode outside MRC's block 0xC0-0xDF
// (frame 32's 0xE5, frame 33's RC 0x0A) on a QP without MRC traffic is
// plain RoCE sharing the port: no finding.
func TestPlainRoCEOpcodeNotJudged(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		rep := malformedFramesJobs(t, jobs, 32, 33)
		for _, r := range rep.Results {
			if r.FindingCount > 0 {
				t.Errorf("%d jobs: %s: %d findings on plain RoCE frames", jobs, r.Case.ID, r.FindingCount)
			}
		}
	}
}

// TestBadICRCNoKnockOn: a write whose ICRC is bad is discarded by its
// receiver; it is one MRC-WIRE-ICRC-001 finding and nothing else — not a
// resend without the rtx flag, not a retransmission's traffic class.
func TestBadICRCNoKnockOn(t *testing.T) {
	s := newScene(t, bothDUTPICS)
	s.send(1, 0, 0x100, false, 1000)
	// The same write again with its last ICRC byte flipped.
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: 1, AckReq: true}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
	p.Payload = make([]byte, 64)
	p.SetEV(0x100, wire.EVModeSTEV)
	bad := s.emitMutated(sceneT, sceneD, p, 1000, func(b []byte) { b[len(b)-1] ^= 0xff })
	rep := s.report()
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Frame != bad {
				continue
			}
			if r.Case.ID != "MRC-WIRE-ICRC-001" || f.Requirement != "WIRE-ICRC-1" {
				t.Errorf("knock-on finding on the bad-ICRC frame: %s %s %s: %s", r.Case.ID, f.Verdict, f.Requirement, f.Observed)
			}
		}
	}
	if fs := failsOf(rep, "MRC-WIRE-ICRC-001"); len(fs) != 1 || fs[0].Frame != bad {
		t.Errorf("MRC-WIRE-ICRC-001 findings %+v, want one on frame %d", fs, bad)
	}
}

// bothDUTPICS is scenePICS with T judged too.
var bothDUTPICS = strings.Replace(scenePICS, `"dut": ["D"]`, `"dut": ["T", "D"]`, 1)

// TestPayloadBeyondDMALengthOnce: a WRITE_ONLY whose payload exceeds its
// dma_length breaks WIRE-PAY-2 (its message's payloads sum to more than
// dma_length) once; the judge reports it once, not also as the message's
// sum nor under WIRE-RETH-2, which is about the RETHs of a message's
// packets agreeing.
func TestPayloadBeyondDMALengthOnce(t *testing.T) {
	s := newScene(t, bothDUTPICS)
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: 1, AckReq: true}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 16}
	p.Payload = make([]byte, 64)
	p.SetEV(0x100, wire.EVModeSTEV)
	n := s.emitMutated(sceneT, sceneD, p, 1000, func([]byte) {})
	wantFindings(t, s.report(), fmt.Sprintf("MRC-WIRE-MSG-001 WIRE-PAY-2 frame %d", n))
}

// emitMutated is emit with the encoded frame changed by mut.
func (s *scene) emitMutated(from, to byte, p *wire.Packet, gap int64, mut func([]byte)) int {
	s.t.Helper()
	p.IsIPv6 = true
	p.IP6.HopLimit = 64
	p.IP6.Src, p.IP6.Dst = [16]byte{0xfd, 15: from}, [16]byte{0xfd, 15: to}
	b, err := wire.Default.Append(nil, p)
	if err != nil {
		s.t.Fatal(err)
	}
	mut(b)
	s.n++
	s.ns += gap
	s.e.frame(&pcap.Frame{Number: s.n, Timestamp: s.start.Add(time.Duration(s.ns)), Data: b, Length: len(b)}, s.in)
	return s.n
}

// TestOneFindingPerViolation: no frame of any repository capture carries
// two findings for one requirement (the same violation reported twice,
// in two wordings or under two cases), nor two for its pad count and
// payload size (sizeFault: WIRE-BTH-9, WIRE-PAY-1, WIRE-PAY-2 are one
// finding per write). TestWrongPadCountOnce and TestSingleFaultOneFinding
// check, on crafted messages, that one wrong field is one finding in all,
// none on the correct writes after it.
func TestOneFindingPerViolation(t *testing.T) {
	for _, c := range goldenCaptures(t) {
		for _, pics := range picsFor(c) {
			rep, err := judgeGolden(t, c, pics)
			if err != nil {
				continue // TestGoldenVerdicts covers captures that do not judge
			}
			// Findings on one frame for one requirement are distinct
			// violations only when they name distinct PSNs.
			seen := map[string]map[string]string{}
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Frame == 0 || f.Verdict == Inconclusive {
						continue
					}
					psn := ""
					if f.PSN != nil {
						psn = fmt.Sprint(*f.PSN)
					}
					k := fmt.Sprintf("%d %s %s", f.Frame, f.Requirement, f.Node)
					if seen[k] == nil {
						seen[k] = map[string]string{}
					}
					for p, prev := range seen[k] {
						if p == psn || p == "" || psn == "" {
							t.Errorf("%s (%s PICS) frame %d: %s twice: %s | %s: %s", c, pics, f.Frame, f.Requirement, prev, r.Case.ID, f.Observed)
						}
					}
					seen[k][psn] = r.Case.ID + ": " + f.Observed
				}
			}
			oneSizeFinding(t, fmt.Sprintf("%s (%s PICS)", c, pics), rep)
		}
	}
}

// oneSizeFinding fails when a frame has findings under two of WIRE-BTH-9,
// WIRE-PAY-1 and WIRE-PAY-2: a write's pad count and payload size are
// one finding (sizeFault).
func oneSizeFinding(t *testing.T, name string, rep *Report) {
	t.Helper()
	size := map[RequirementID]bool{"WIRE-BTH-9": true, "WIRE-PAY-1": true, "WIRE-PAY-2": true}
	seen := map[string]RequirementID{}
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Frame == 0 || f.Verdict == Inconclusive || !size[f.Requirement] {
				continue
			}
			k := fmt.Sprintf("%d %s", f.Frame, f.Node)
			if prev, ok := seen[k]; ok && prev != f.Requirement {
				t.Errorf("%s frame %d: %s and %s for one write's size", name, f.Frame, prev, f.Requirement)
			}
			seen[k] = f.Requirement
		}
	}
}

// TestIPFragmentsDiscarded: an IPv4 fragment is discarded, not decoded
// (WIRE-ENC-5, AMB-33), and the capture notes count the fragments.
func TestIPFragmentsDiscarded(t *testing.T) {
	s := newScene(t, scenePICS)
	for i, ff := range []uint16{0x2000, 0x0010} { // more fragments; a later fragment
		p := &wire.Packet{}
		p.IP4 = wire.IPv4{TOS: 4<<2 | 2, FlagsFrag: ff, TTL: 64, Src: [4]byte{10, 0, 0, sceneT}, Dst: [4]byte{10, 0, 0, sceneD}}
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: uint32(i + 1), AckReq: true}
		p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
		p.Payload = make([]byte, 64)
		p.SetEV(0x100, wire.EVModeSTEV)
		b, err := wire.Default.Append(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		s.n++
		s.ns += 1000
		s.e.frame(&pcap.Frame{Number: s.n, Timestamp: s.start.Add(time.Duration(s.ns)), Data: b, Length: len(b)}, s.in)
	}
	rep := s.report()
	if s.e.mrcFrames != 0 {
		t.Errorf("%d fragments judged as MRC frames", s.e.mrcFrames)
	}
	for _, r := range rep.Results {
		if r.Checked > 0 {
			t.Errorf("%s: %d observations from fragments", r.Case.ID, r.Checked)
		}
	}
	found := false
	for _, n := range s.e.notes {
		found = found || strings.Contains(n, "2 IP fragments")
	}
	if !found {
		t.Errorf("notes %q do not count the 2 fragments", s.e.notes)
	}
}

// TestIPv6FragmentsDiscarded: an IPv6 packet with a Fragment header (next
// header 44) is a fragment, discarded and counted as IPv4 fragments are
// (WIRE-ENC-5, AMB-33), not a frame of another protocol.
func TestIPv6FragmentsDiscarded(t *testing.T) {
	s := newScene(t, scenePICS)
	for i, offM := range []uint16{0x0001, 0x0010} { // the first of several; a later one
		p := &wire.Packet{IsIPv6: true}
		p.IP6 = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64, Src: [16]byte{0xfd, 15: sceneT}, Dst: [16]byte{0xfd, 15: sceneD}}
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: uint32(i + 1), AckReq: true}
		p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
		p.Payload = make([]byte, 64)
		p.SetEV(0x100, wire.EVModeSTEV)
		b, err := wire.Default.Append(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		// The Fragment header: next header UDP, fragment offset and M
		// flag, identification.
		const ip = 14
		frag := []byte{wire.ProtoUDP, 0, byte(offM >> 8), byte(offM), 0, 0, 0x12, 0x34}
		b = append(b[:ip+40], append(frag, b[ip+40:]...)...)
		b[ip+6] = 44
		binary.BigEndian.PutUint16(b[ip+4:], binary.BigEndian.Uint16(b[ip+4:])+8)
		s.n++
		s.ns += 1000
		s.e.frame(&pcap.Frame{Number: s.n, Timestamp: s.start.Add(time.Duration(s.ns)), Data: b, Length: len(b)}, s.in)
	}
	s.report()
	if s.e.fragments != 2 || s.e.notMRC != 0 {
		t.Errorf("%d fragments and %d frames not MRC, want the 2 fragments", s.e.fragments, s.e.notMRC)
	}
	found := false
	for _, n := range s.e.notes {
		found = found || strings.Contains(n, "2 IP fragments")
	}
	if !found {
		t.Errorf("notes %q do not count the 2 fragments", s.e.notes)
	}
}

// TestDiscardedFramesNameSender: frames discarded before their BTH is
// judged, IP fragments (WIRE-ENC-5, AMB-33) and frames cut by the snap
// length, are counted against the node that sent them at the capture
// point that saw them, as a malformed frame's finding is: the capture
// notes name each sender and point, with 1 job or 2.
func TestDiscardedFramesNameSender(t *testing.T) {
	path := copyCapture(t, "testdata/good.pcapng", "discarded.pcapng", func(f *pcap.Frame) bool {
		switch f.Number {
		case 2, 6, 5: // A→B at A, twice; B→A at B
			f.Data = asFragment(f.Data)
			f.Length = len(f.Data)
		case 9: // B→A at B, cut inside its UDP header
			f.Data = f.Data[:60]
		}
		return true
	})
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(path, Options{PICS: referencePICS(t), Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"3 IP fragments were discarded and not judged (WIRE-ENC-5, AMB-33): 2 from A at A, 1 from B at B",
			"1 frames were truncated by the snap length and not judged: 1 from B at B",
		} {
			if !slices.Contains(rep.Capture.Notes, want) {
				t.Errorf("%d jobs: no note %q in %q", jobs, want, rep.Capture.Notes)
			}
		}
	}
}

// asFragment returns a copy of IPv6 frame b with a Fragment header: the
// first fragment of several.
func asFragment(b []byte) []byte {
	const ip = 14
	frag := []byte{b[ip+6], 0, 0, 1, 0, 0, 0x12, 0x34}
	b = append(slices.Clone(b[:ip+40]), append(frag, b[ip+40:]...)...)
	b[ip+6] = 44
	binary.BigEndian.PutUint16(b[ip+4:], binary.BigEndian.Uint16(b[ip+4:])+8)
	return b
}

// TestFeedbackToWrongQP: a responder whose SACKs go to its own QP number
// (dest_qp = spdcid = dpdcid = 0x22) while the requester's probes name
// its QP 0x11 misaddresses its feedback (RSP-SACK-6): MRC-WIRE-SETH-002
// FAILs against the responder, not against the requester's probe. With
// the SACKs sent to 0x11, or with both QPs numbered 0x22, nothing fails.
func TestFeedbackToWrongQP(t *testing.T) {
	for _, c := range []struct {
		name           string
		reqQP, sackDst uint32
		fail           bool
	}{
		{"to the responder's own QP", sceneTQP, sceneDQP, true},
		{"to the requester's QP", sceneTQP, sceneTQP, false},
		{"both QPs numbered alike", sceneDQP, sceneDQP, false},
	} {
		s := newScene(t, bothDUTPICS)
		sack := func(psn uint32) {
			p := s.ctl(wire.OpSACK, psn)
			p.BTH.DestQP = c.sackDst
			p.SETH = wire.SETH{CACKPSN: psn, SACKOffset: 1, Entropy: 0x100, SPDCID: sceneDQP, DPDCID: uint16(c.sackDst)}
			s.emit(sceneD, sceneT, p, 1000)
		}
		s.send(1, 0, 0x100, false, 1000)
		sack(1)
		p := &wire.Packet{}
		p.IP6.TrafficClass = 2
		p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: sceneDQP}
		p.PETH = wire.PETH{ProbeID: 1, SPDCID: uint16(c.reqQP), DPDCID: sceneDQP, FType: 1}
		p.SetEV(0x100, wire.EVModeSTEV)
		s.emit(sceneT, sceneD, p, 10_000)
		s.send(2, 1, 0x100, false, 1000)
		sack(2)
		rep := s.report()
		fs := failsOf(rep, "MRC-WIRE-SETH-002")
		if !c.fail {
			if len(fs) > 0 {
				t.Errorf("%s: %+v", c.name, fs)
			}
			continue
		}
		if len(fs) != 2 {
			t.Fatalf("%s: %d findings %+v, want the two SACKs", c.name, len(fs), fs)
		}
		for _, f := range fs {
			if f.Requirement != "RSP-SACK-6" || f.Node != "D" || !strings.Contains(f.Observed, "responder's own QP") {
				t.Errorf("%s: %+v", c.name, f)
			}
		}
	}
}

// TestSteadyStateAllocations: once warmed up, judging a stream of writes
// and the SACKs that answer them allocates nothing per frame (issue 12).
func TestSteadyStateAllocations(t *testing.T) {
	s := newScene(t, scenePICS)
	const n = 4000
	frames := make([]pcap.Frame, 0, 2*n)
	for i := uint32(1); i <= n; i++ {
		w := &wire.Packet{IsIPv6: true}
		w.IP6 = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64, Src: [16]byte{0xfd, 15: sceneT}, Dst: [16]byte{0xfd, 15: sceneD}}
		w.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: i, AckReq: true}
		w.METH = wire.METH{MSN: uint16(i)}
		w.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
		w.Payload = make([]byte, 64)
		w.SetEV(0x100+i%4, wire.EVModeSTEV)
		a := &wire.Packet{IsIPv6: true}
		a.IP6 = wire.IPv6{TrafficClass: 46 << 2, HopLimit: 64, Src: [16]byte{0xfd, 15: sceneD}, Dst: [16]byte{0xfd, 15: sceneT}}
		a.BTH = wire.BTH{Opcode: wire.OpSACK, PKey: 0xFFFF, DestQP: sceneTQP, PSN: i}
		a.SETH = wire.SETH{CACKPSN: i, SACKOffset: 1, Entropy: 0x100 + i%4, SPDCID: sceneDQP, DPDCID: sceneTQP}
		a.SetEV(0x200, wire.EVModeSTEV)
		for _, p := range []*wire.Packet{w, a} {
			b, err := wire.Default.Append(nil, p)
			if err != nil {
				t.Fatal(err)
			}
			k := len(frames) + 1
			frames = append(frames, pcap.Frame{Number: k, Timestamp: s.start.Add(time.Duration(k) * time.Microsecond), Data: b, Length: len(b)})
		}
	}
	next := 0
	for ; next < n; next++ { // warm up: the tables reach their working size
		s.e.frame(&frames[next], s.in)
	}
	allocs := testing.AllocsPerRun(n/2-1, func() {
		s.e.frame(&frames[next], s.in)
		s.e.frame(&frames[next+1], s.in)
		next += 2
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per write and its SACK in steady state, want 0", allocs)
	}
	if s.e.mrcFrames < n {
		t.Fatalf("only %d frames judged", s.e.mrcFrames)
	}
}

// TestMalformedFrameChargedToItsSender: a frame failing before its UDP
// header is charged to the node of its IP source whenever its IP header
// is whole, as one failing after it is: malformed.pcapng frame 3 (an IPv4
// total length beyond the frame) to 10.0.0.1 and frame 43 (an IPv6
// payload length beyond the frame) to fd00::a. Frames 1 and 2 (a short
// Ethernet or IPv4 header) carry no readable source: with no node at
// their capture point in the PICS they are the unknown sender's.
func TestMalformedFrameChargedToItsSender(t *testing.T) {
	rep := malformedFrames(t, 1, 2, 3, 43)
	want := map[int]string{1: unknownSender, 2: unknownSender, 3: "10.0.0.1", 4: "fd00::a"} // renumbered 1..4
	got := map[int]string{}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Verdict == Fail {
				got[f.Frame] = f.Node
			}
		}
	}
	for n, node := range want {
		if got[n] != node {
			t.Errorf("frame %d (of 1, 2, 3, 43) charged to %q, want %q", n, got[n], node)
		}
	}
}
