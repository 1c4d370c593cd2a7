package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// The perplane-loss scenario: node0 (fd00:0::1, fd00:1::1) writes from
// QP 0x101 to node1's (fd00:0::2, fd00:1::2) QP 0x201. Both send probes
// and node1 sends ACKs.
const (
	perPlaneCapture = "../pcap/testdata/scenarios/perplane-loss.pcapng"
	perPlaneReqQP   = 0x101
	perPlaneRspQP   = 0x201
)

// qpEdit edits one decoded frame of a capture in place (b is its bytes,
// bth the BTH's offset in them), or returns false to drop it.
type qpEdit func(p *wire.Packet, b []byte, bth int) bool

// editCapture writes a copy of capture with edit applied to each frame
// that decodes and the ICRCs recomputed; it returns the copy's path and,
// per capture point, the numbers (in the copy) of the frames mark
// selects.
func editCapture(t *testing.T, capture string, edit qpEdit, mark func(p *wire.Packet) bool) (string, map[string][]int) {
	t.Helper()
	r, err := pcap.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), "edited.pcapng")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		f      pcap.Frame
		p      wire.Packet
		w      *pcap.Writer
		n      int
		marked = map[string][]int{}
	)
	for r.Next(&f) == nil {
		if w == nil {
			if w, err = pcap.NewWriter(out, r.Interfaces()...); err != nil {
				t.Fatal(err)
			}
		}
		b := bytes.Clone(f.Data)
		if wire.Default.Decode(b, &p) == nil {
			_, _, bth := p.Offsets()
			if !edit(&p, b, bth) {
				continue
			}
			if err := pcap.SetICRC(nil, b); err != nil {
				t.Fatal(err)
			}
			if err := wire.Default.Decode(b, &p); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WritePacket(f.Timestamp, f.Interface, b); err != nil {
			t.Fatal(err)
		}
		n++
		if mark != nil && mark(&p) {
			pt, _, _ := strings.Cut(r.Interface(f.Interface).Name, "/")
			marked[pt] = append(marked[pt], n)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path, marked
}

// setDestQP sets a frame's BTH dest_qp and, for SACKs, NACKs and probes
// (no TSETH in this capture), its dpdcid to match.
func setDestQP(p *wire.Packet, b []byte, bth int, qp uint32) {
	b[bth+5], b[bth+6], b[bth+7] = byte(qp>>16), byte(qp>>8), byte(qp)
	switch p.BTH.Opcode {
	case wire.OpSACK, wire.OpNACK, wire.OpProbe:
		b[bth+12+10], b[bth+12+11] = byte(qp>>8), byte(qp)
	}
}

// isFeedbackFromRsp selects node1's SACKs and NACKs.
func isFeedbackFromRsp(p *wire.Packet) bool {
	return (p.BTH.Opcode == wire.OpSACK || p.BTH.Opcode == wire.OpNACK) && p.IP6.Src[15] == 2
}

// feedbackToOwnQP is the MRC-Client fault: node1 sends its SACKs and
// NACKs to its own QP number, with spdcid = dpdcid = 0x201.
func feedbackToOwnQP(p *wire.Packet, b []byte, bth int) bool {
	if isFeedbackFromRsp(p) {
		setDestQP(p, b, bth, perPlaneRspQP)
	}
	return true
}

// judgePerPlane judges an edited perplane-loss capture under its own
// PICS (pics nil) or the given one, with jobs workers.
func judgePerPlane(t *testing.T, capture string, pics *PICS, jobs int) *Report {
	t.Helper()
	if pics == nil {
		var err error
		if pics, err = LoadPICS("testdata/perplane-loss.pics.json"); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := JudgeFile(capture, Options{PICS: pics, Today: testDay, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkOneFindingPerFrame checks that MRC-WIRE-SETH-002 FAILs with one
// finding about the responder per misaddressed frame at the point it was
// judged, and none about any other frame.
func checkOneFindingPerFrame(t *testing.T, rep *Report, marked map[string][]int) {
	t.Helper()
	res, ok := rep.Result("MRC-WIRE-SETH-002")
	if !ok || res.Verdict != Fail {
		t.Fatalf("MRC-WIRE-SETH-002 %s: %s, want FAIL", res.Verdict, res.Reason)
	}
	seen := map[int]bool{}
	point := ""
	for _, f := range res.Findings {
		if seen[f.Frame] {
			t.Errorf("frame %d has two findings: %+v", f.Frame, res.Findings)
		}
		seen[f.Frame] = true
		if f.Verdict != Fail || f.Node != "node1" || !strings.Contains(f.Observed, "the responder's own QP") {
			t.Errorf("finding %+v, want a FAIL of node1's feedback to its own QP", f)
		}
		point = f.Point
	}
	want := marked[point]
	for _, f := range res.Findings {
		if !containsInt(want, f.Frame) {
			t.Errorf("finding on frame %d, which is not misaddressed feedback at %s", f.Frame, point)
		}
	}
	if len(res.Findings) != min(len(want), MaxFindings) || res.FindingCount != len(want) {
		t.Errorf("%d findings kept, %d counted; want one per misaddressed frame at %s, %d", len(res.Findings), res.FindingCount, point, len(want))
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestFeedbackToOwnQPOneFindingPerFrame (RSP-SACK-6): with the
// requester's probes naming its QP 0x101, each SACK or NACK the
// responder sends to its own QP 0x201 is one finding, whether it came
// before the first probe or after; never one per probe.
func TestFeedbackToOwnQPOneFindingPerFrame(t *testing.T) {
	path, marked := editCapture(t, perPlaneCapture, feedbackToOwnQP, isFeedbackFromRsp)
	checkOneFindingPerFrame(t, judgePerPlane(t, path, nil, 1), marked)
}

// TestFeedbackToOwnQPWithoutRequesterProbes (RSP-SACK-6): with the
// requester's probes removed, the responder's own ACKs and probes name
// the requester's QP 0x101, so its SACKs and NACKs to its own QP 0x201
// are misaddressed, one finding each.
func TestFeedbackToOwnQPWithoutRequesterProbes(t *testing.T) {
	edit := func(p *wire.Packet, b []byte, bth int) bool {
		if p.BTH.Opcode == wire.OpProbe && p.BTH.DestQP == perPlaneRspQP {
			return false
		}
		return feedbackToOwnQP(p, b, bth)
	}
	path, marked := editCapture(t, perPlaneCapture, edit, isFeedbackFromRsp)
	checkOneFindingPerFrame(t, judgePerPlane(t, path, nil, 1), marked)
}

// allToOwnQP leaves nothing in the traffic naming the requester's QP: no
// probes, and every SACK, NACK and ACK of node1 sent to its own QP.
func allToOwnQP(p *wire.Packet, b []byte, bth int) bool {
	switch {
	case p.BTH.Opcode == wire.OpProbe:
		return false
	case p.BTH.Opcode == wire.OpAcknowledge && p.IP6.Src[15] == 2:
		setDestQP(p, b, bth, perPlaneRspQP)
	}
	return feedbackToOwnQP(p, b, bth)
}

// perPlanePICSWith returns the perplane-loss PICS with qp_pairs set to
// pairs (JSON).
func perPlanePICSWith(t *testing.T, pairs string) (*PICS, error) {
	t.Helper()
	b, err := os.ReadFile("testdata/perplane-loss.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(b), `"parameters"`, `"qp_pairs": `+pairs+`, "parameters"`, 1)
	return ParsePICS([]byte(doc))
}

// TestFeedbackToWrongQPDeclared (RSP-SACK-6): when nothing in the traffic
// names the requester's QP but the responder's own, feedback to that QP
// is no finding (both QPs may carry one number); when the PICS's qp_pairs
// pairs node0's QP 0x101 with node1's 0x201, each SACK, NACK and ACK to
// 0x201 is one.
func TestFeedbackToWrongQPDeclared(t *testing.T) {
	path, marked := editCapture(t, perPlaneCapture, allToOwnQP, func(p *wire.Packet) bool { return isFeedbackFromRsp(p) || isACKFromRsp(p) })
	if res, _ := judgePerPlane(t, path, nil, 1).Result("MRC-WIRE-SETH-002"); res.Verdict != Pass {
		t.Errorf("undeclared: MRC-WIRE-SETH-002 %s: %s, want PASS", res.Verdict, res.Reason)
	}
	for _, pairs := range []string{
		`[{"node0": "0x000101", "node1": "0x000201"}]`,
		`[{"fd00:1::2": "513", "fd00::1": "0x101"}]`, // addresses of the nodes, decimal
	} {
		p, err := perPlanePICSWith(t, pairs)
		if err != nil {
			t.Fatal(err)
		}
		rep := judgePerPlane(t, path, p, 1)
		checkOneFindingPerFrame(t, rep, marked)
		if fs := failsOf(rep, "MRC-WIRE-SETH-002"); len(fs) == 0 || !strings.Contains(fs[0].Expected, "0x000101") || !strings.Contains(fs[0].Expected, "qp_pairs") {
			t.Errorf("%s: findings %+v, want the declared QP 0x000101 expected", pairs, fs)
		}
	}
	// Declared as the traffic has it: nothing fails.
	p, err := perPlanePICSWith(t, `[{"node0": "0x201", "node1": "0x201"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := judgePerPlane(t, path, p, 1).Result("MRC-WIRE-SETH-002"); res.Verdict != Pass {
		t.Errorf("declared alike: MRC-WIRE-SETH-002 %s: %s, want PASS", res.Verdict, res.Reason)
	}
}

// TestPICSQPPairsRejects: a qp_pairs entry that does not name two nodes'
// 24-bit QPs, or names a QP twice, is a PICS error about that entry.
func TestPICSQPPairsRejects(t *testing.T) {
	for _, c := range []struct{ name, pairs, msg string }{
		{"one end", `[{"node0": "0x101"}]`, "names 1 nodes"},
		{"three ends", `[{"node0": "0x101", "node1": "0x201", "fd00::9": "0x301"}]`, "names 3 nodes"},
		{"unknown node", `[{"node0": "0x101", "nodeX": "0x201"}]`, `"nodeX" is neither a node`},
		{"not a number", `[{"node0": "0x101", "node1": "QP2"}]`, `QP "QP2" is not a 24-bit QP number`},
		{"beyond 24 bits", `[{"node0": "0x101", "node1": "0x1000000"}]`, "not a 24-bit QP number"},
		{"one node twice", `[{"node0": "0x101", "fd00:1::1": "0x201"}]`, "both ends are node node0"},
		{"a QP in two pairs", `[{"node0": "0x101", "node1": "0x201"}, {"node0": "0x102", "node1": "0x201"}]`, "in qp_pairs[0] too"},
	} {
		_, err := perPlanePICSWith(t, c.pairs)
		pe, ok := err.(*PICSError)
		if !ok || !strings.HasPrefix(pe.Field, "qp_pairs[") || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: error %v, want a qp_pairs error saying %q", c.name, err, c.msg)
		}
	}
	if _, err := perPlanePICSWith(t, `[{"node0": 257, "node1": "0x201"}]`); err == nil {
		t.Error("a QP number as a JSON number: no error")
	}
}

// TestFeedbackQPJobsIdentical: the held feedback's findings are the same
// for any number of workers.
func TestFeedbackQPJobsIdentical(t *testing.T) {
	edit := func(p *wire.Packet, b []byte, bth int) bool {
		if p.BTH.Opcode == wire.OpProbe && p.BTH.DestQP == perPlaneRspQP {
			return false
		}
		return feedbackToOwnQP(p, b, bth)
	}
	path, _ := editCapture(t, perPlaneCapture, edit, nil)
	var want []byte
	for _, jobs := range []int{1, 2} {
		var b bytes.Buffer
		if err := judgePerPlane(t, path, nil, jobs).Write(&b, "json"); err != nil {
			t.Fatal(err)
		}
		if jobs == 1 {
			want = b.Bytes()
		} else if !bytes.Equal(want, b.Bytes()) {
			t.Errorf("%d workers: %s", jobs, firstDiff(want, b.Bytes()))
		}
	}
}

// probeAndSACKs plays two writes, each SACKed to QP sackDst, with a probe
// whose spdcid is probeQP between them, and returns the report and the
// frames of the probe and the SACKs.
func probeAndSACKs(t *testing.T, probeQP uint16, sackDst uint32) (rep *Report, probe int, sacks []int) {
	s := newScene(t, bothDUTPICS)
	sack := func(psn uint32) int {
		p := s.ctl(wire.OpSACK, psn)
		p.BTH.DestQP = sackDst
		p.SETH = wire.SETH{CACKPSN: psn, SACKOffset: 1, Entropy: 0x100, SPDCID: sceneDQP, DPDCID: uint16(sackDst)}
		return s.emit(sceneD, sceneT, p, 1000)
	}
	s.send(1, 0, 0x100, false, 1000)
	sacks = append(sacks, sack(1))
	p := &wire.Packet{}
	p.IP6.TrafficClass = 2
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: sceneDQP}
	p.PETH = wire.PETH{ProbeID: 1, SPDCID: probeQP, DPDCID: sceneDQP, FType: 1}
	p.SetEV(0x100, wire.EVModeSTEV)
	probe = s.emit(sceneT, sceneD, p, 10_000)
	s.send(2, 1, 0x100, false, 1000)
	sacks = append(sacks, sack(2))
	return s.report(), probe, sacks
}

// TestProbeNamingResponderQP (WIRE-SETH-9): a requester whose probe's
// spdcid is the responder's QP number, while the responder's SACKs
// address it as another QP, has its probe at fault; the SACKs are not.
func TestProbeNamingResponderQP(t *testing.T) {
	rep, probe, _ := probeAndSACKs(t, sceneDQP, sceneTQP)
	fs := failsOf(rep, "MRC-WIRE-SETH-002")
	if len(fs) != 1 || fs[0].Frame != probe || fs[0].Node != "T" || fs[0].Requirement != "WIRE-SETH-9" {
		t.Fatalf("findings %+v, want one about the probe (frame %d)", fs, probe)
	}
}

// TestFeedbackAgainstRequesterProbe (RSP-SACK-6): when the requester's
// probe and the responder's SACKs name two QPs for the requester, neither
// the responder's own, the requester's naming of its own QP holds: each
// SACK, before the probe or after, is one finding.
func TestFeedbackAgainstRequesterProbe(t *testing.T) {
	rep, _, sacks := probeAndSACKs(t, sceneTQP, 0x33)
	fs := failsOf(rep, "MRC-WIRE-SETH-002")
	if len(fs) != 2 || fs[0].Frame != sacks[0] || fs[1].Frame != sacks[1] {
		t.Fatalf("findings %+v, want one on each SACK (frames %v)", fs, sacks)
	}
	for _, f := range fs {
		if f.Node != "D" || f.Requirement != "RSP-SACK-6" || !strings.Contains(f.Expected, "as its probe") {
			t.Errorf("finding %+v", f)
		}
	}
}

// TestFeedbackToOwnQPNamedByACKs (RSP-SACK-6): with no probe at all, the
// responder's ACKs to the requester's QP 0x101 are what shows its SACKs
// and NACKs to its own QP 0x201 misaddressed, one finding each.
func TestFeedbackToOwnQPNamedByACKs(t *testing.T) {
	edit := func(p *wire.Packet, b []byte, bth int) bool {
		return p.BTH.Opcode != wire.OpProbe && feedbackToOwnQP(p, b, bth)
	}
	path, marked := editCapture(t, perPlaneCapture, edit, isFeedbackFromRsp)
	rep := judgePerPlane(t, path, nil, 1)
	checkOneFindingPerFrame(t, rep, marked)
	if fs := failsOf(rep, "MRC-WIRE-SETH-002"); len(fs) == 0 || !strings.Contains(fs[0].Expected, "own ACK") {
		t.Errorf("findings %+v, want the ACK as what names the requester's QP", fs)
	}
}

// isACKFromRsp selects node1's ACKNOWLEDGEs.
func isACKFromRsp(p *wire.Packet) bool {
	return p.BTH.Opcode == wire.OpAcknowledge && p.IP6.Src[15] == 2
}

// TestACKToOwnQPOneFindingPerFrame (RSP-ACK-1): with the requester's
// probes and the responder's SACKs naming the requester's QP 0x101, each
// ACKNOWLEDGE the responder sends to its own QP 0x201 is one finding, as a
// SACK or NACK would be.
func TestACKToOwnQPOneFindingPerFrame(t *testing.T) {
	edit := func(p *wire.Packet, b []byte, bth int) bool {
		if isACKFromRsp(p) {
			setDestQP(p, b, bth, perPlaneRspQP)
		}
		return true
	}
	path, marked := editCapture(t, perPlaneCapture, edit, isACKFromRsp)
	if len(marked) == 0 {
		t.Fatal("the capture has no ACK of node1")
	}
	rep := judgePerPlane(t, path, nil, 1)
	checkOneFindingPerFrame(t, rep, marked)
	for _, f := range failsOf(rep, "MRC-WIRE-SETH-002") {
		if f.Requirement != "RSP-ACK-1" || !strings.HasPrefix(f.Observed, "ACK to dest_qp") {
			t.Errorf("finding %+v, want RSP-ACK-1 of an ACK", f)
		}
	}
}

// TestNACKAndACKToOwnQP (WIRE-SETH-9, RSP-ACK-1): once the requester's
// probe names its QP, a NACK and an ACKNOWLEDGE the responder sends to
// its own QP are one finding each, under the requirement of their kind.
func TestNACKAndACKToOwnQP(t *testing.T) {
	s := newScene(t, bothDUTPICS)
	s.send(1, 0, 0x100, false, 1000)
	s.probe(1, 1)
	s.send(2, 1, 0x100, false, 1000)
	n := s.ctl(wire.OpNACK, 2)
	n.BTH.DestQP = sceneDQP
	n.NETH = wire.NETH{Reason: wire.NACKTrimmed, Entropy: 0x100, NACKPSN: 2, SPDCID: sceneDQP, DPDCID: sceneDQP}
	nack := s.emit(sceneD, sceneT, n, 1000)
	s.send(2, 1, 0x100, true, 1000)
	a := s.ctl(wire.OpAcknowledge, 2)
	a.BTH.DestQP = sceneDQP
	a.AETH = wire.AETH{Syndrome: wire.AETHNoCredit}
	ack := s.emit(sceneD, sceneT, a, 10)
	fs := failsOf(s.report(), "MRC-WIRE-SETH-002")
	want := map[int]string{nack: "WIRE-SETH-9", ack: "RSP-ACK-1"}
	if len(fs) != len(want) {
		t.Fatalf("findings %+v, want one on the NACK (frame %d) and one on the ACK (frame %d)", fs, nack, ack)
	}
	for _, f := range fs {
		if want[f.Frame] != string(f.Requirement) || f.Node != "D" || !strings.Contains(f.Observed, "the responder's own QP") {
			t.Errorf("finding %+v", f)
		}
	}
}

// TestRequesterQPNNotRenamedByFirstSACK: the report's requester QP of a
// connection is the one the traffic establishes (the requester's probes
// name 0x101, as the responder's later SACKs and ACKs address it), not
// the dest_qp of its first SACK, here misaddressed to the responder's own
// QP 0x201 or to a QP 0x999 nothing else names.
func TestRequesterQPNNotRenamedByFirstSACK(t *testing.T) {
	for _, dest := range []uint32{perPlaneRspQP, 0x999} {
		var first *wire.SETH
		copies := 0 // of the first SACK: one at each capture point, tx and rx
		edit := func(p *wire.Packet, b []byte, bth int) bool {
			if p.BTH.Opcode != wire.OpSACK || p.IP6.Src[15] != 2 {
				return true
			}
			if first == nil {
				s := p.SETH
				first = &s
			}
			if copies < 2 && p.SETH == *first {
				setDestQP(p, b, bth, dest)
				copies++
			}
			return true
		}
		path, marked := editCapture(t, perPlaneCapture, edit, func(p *wire.Packet) bool { return isFeedbackFromRsp(p) && p.BTH.DestQP == dest })
		if len(marked["tx"]) != 1 || len(marked["rx"]) != 1 {
			t.Fatalf("SACKs to 0x%x: %v, want the first SACK at each point", dest, marked)
		}
		rep := judgePerPlane(t, path, nil, 1)
		n := 0
		for _, c := range rep.Connections {
			if c.ResponderQPN == perPlaneRspQP {
				n++
				if c.RequesterQPN != perPlaneReqQP {
					t.Errorf("first SACK to 0x%x: connection %s has requester QP 0x%x, want 0x%x", dest, c.ID, c.RequesterQPN, perPlaneReqQP)
				}
			}
		}
		if n == 0 {
			t.Fatalf("no connection to QP 0x%x: %+v", perPlaneRspQP, rep.Connections)
		}
	}
}

// TestDeclaredReqQPAfterKeyCompleted: a connection first seen by its
// feedback has a partial key (the responder's QPN bits 15:0), which two
// qp_pairs entries may match; once a write completes the key, the one
// entry it matches declares the requester's QP.
func TestDeclaredReqQPAfterKeyCompleted(t *testing.T) {
	p, err := perPlanePICSWith(t, `[{"node0": "0x010101", "node1": "0x000201"}, {"node0": "0x020101", "node1": "0x000301"}]`)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(p)
	fl := newFlow(flowKey{req: "node1", rsp: "node0", qpn: 0x0101, partial: true}, 1)
	st := dcidOf.of(fl)
	if d, ok := st.declaredReqQP(e, fl); ok {
		t.Fatalf("partial key: declared QP %#x, want none (two entries match QPN bits 15:0)", d)
	}
	fl.key = flowKey{req: "node1", rsp: "node0", qpn: 0x010101}
	if d, ok := st.declaredReqQP(e, fl); !ok || d != 0x201 {
		t.Errorf("completed key: declared QP %#x (%v), want 0x000201", d, ok)
	}
}
