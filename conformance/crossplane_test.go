package conformance

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// capFrame is one frame of a capture held in memory.
type capFrame struct {
	ts    time.Time
	iface int
	data  []byte
	p     wire.Packet
	ok    bool // data decodes
}

// pointFrames returns the frames of capture at interfaces whose point is
// point ("" any), and the capture's interfaces.
func pointFrames(t *testing.T, capture, point string) ([]capFrame, []pcap.Interface) {
	t.Helper()
	r, err := pcap.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []capFrame
	var f pcap.Frame
	for r.Next(&f) == nil {
		if point != "" && r.Interface(f.Interface).Point != point {
			continue
		}
		c := capFrame{ts: f.Timestamp, iface: f.Interface, data: bytes.Clone(f.Data)}
		c.ok = wire.Default.Decode(c.data, &c.p) == nil
		out = append(out, c)
	}
	return out, slices.Clone(r.Interfaces())
}

// writeFrames writes frames to a capture file of the test's and returns
// its path.
func writeFrames(t *testing.T, ifs []pcap.Interface, frames []capFrame) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "moved.pcapng")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := pcap.NewWriter(out, ifs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range frames {
		if err := w.WritePacket(c.ts, c.iface, c.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sackOvertaken moves, among the frames at capture point point, a SACK
// (not the first two, nor one after a cack_psn of −1: a baseline) whose
// cack_psn is above that of the SACK before it on its plane (samePlane)
// or on the other plane, to 1 ns before that one: the later report
// overtakes the earlier, as a fabric does across planes. It returns the
// frames and the earlier SACK's cack_psn.
func sackOvertaken(t *testing.T, ifs []pcap.Interface, frames []capFrame, point string, samePlane bool) ([]capFrame, uint32) {
	t.Helper()
	last, byPlane, n := -1, map[int]int{}, 0
	for j, c := range frames {
		if !c.ok || c.p.BTH.Opcode != wire.OpSACK || c.p.SETH.PR || ifs[c.iface].Point != point {
			continue
		}
		plane := ifs[c.iface].Plane
		prev := last
		if samePlane {
			prev = -1
			if i, ok := byPlane[plane]; ok {
				prev = i
			}
		}
		if n++; n > 2 && prev >= 0 && frames[prev].p.SETH.CACKPSN != 1<<24-1 {
			a := &frames[prev]
			same := ifs[a.iface].Plane == plane
			if psnAfter(c.p.SETH.CACKPSN, a.p.SETH.CACKPSN) && same == samePlane && a.p.BTH.DestQP == c.p.BTH.DestQP {
				moved := c
				moved.ts = a.ts.Add(-time.Nanosecond)
				out := slices.Concat(frames[:prev:prev], []capFrame{moved}, frames[prev:j], frames[j+1:])
				return out, a.p.SETH.CACKPSN
			}
		}
		last, byPlane[plane] = j, j
	}
	t.Fatalf("no two SACKs at %s with a rising cack_psn (same plane %v)", point, samePlane)
	return nil, 0
}

// movedBackward returns the RSP-RCV-4 findings of a report.
func movedBackward(rep *Report) []Finding {
	var out []Finding
	res, _ := rep.Result("MRC-RSP-SACK-001")
	for _, f := range slices.Concat(res.Findings, res.LastFindings) {
		if f.Requirement == "RSP-RCV-4" {
			out = append(out, f)
		}
	}
	return out
}

// overtakenCase is one judgement of TestCackBackwardAcrossPlanesAway and
// TestCackBackwardOnePointAway: the frames of capture point only ("" all),
// a SACK at point at overtaking an earlier one on the same plane or on
// the other, under a PICS whose capture.points is points.
type overtakenCase struct {
	name      string
	only, at  string
	points    map[string]string
	samePlane bool
	wantFail  bool
}

// judgeOvertaken judges c and checks its RSP-RCV-4 findings: a FAIL
// "moved backward" when c.wantFail, none otherwise.
func judgeOvertaken(t *testing.T, c overtakenCase) {
	t.Helper()
	pics, err := LoadPICS("testdata/perplane-loss.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	pics.Capture.Points = c.points
	frames, ifs := pointFrames(t, perPlaneCapture, c.only)
	moved, cack := sackOvertaken(t, ifs, frames, c.at, c.samePlane)
	rep, err := JudgeFile(writeFrames(t, ifs, moved), Options{PICS: pics, Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	got := movedBackward(rep)
	switch {
	case !c.wantFail && len(got) > 0:
		t.Errorf("%s: cack_psn %d behind a SACK overtaking it: %d RSP-RCV-4 findings, first %s: %s", c.name, cack, len(got), got[0].Verdict, got[0].Observed)
	case c.wantFail && (len(got) == 0 || got[0].Verdict != Fail || !strings.Contains(got[0].Observed, "moved backward")):
		t.Errorf("%s: cack_psn %d behind a later SACK: RSP-RCV-4 findings %+v, want a FAIL", c.name, cack, got)
	}
}

// TestCackBackwardAcrossPlanesAway (RSP-RCV-4, EV-REV-4): at a capture
// point away from the responder, a SACK sent later on one plane may
// overtake one sent earlier on the other, so a cack_psn below one seen
// before on another plane is no finding: the responder's order is judged
// per path there. On one plane (one reverse EV) the fabric keeps the
// order, and a cack_psn moving backward FAILs; at a point the PICS places
// at the responder, it FAILs across planes too. The capture has two
// points; the PICS places none, so node1 is judged at tx (first to see
// it), not at its own interface.
func TestCackBackwardAcrossPlanesAway(t *testing.T) {
	for _, c := range []overtakenCase{
		{name: "across planes, undeclared", at: "tx"},
		{name: "one plane, undeclared", at: "tx", samePlane: true, wantFail: true},
		{name: "across planes, tx at node1", at: "tx", points: map[string]string{"tx": "node1"}, wantFail: true},
	} {
		judgeOvertaken(t, c)
	}
}

// TestCackBackwardOnePointAway (RSP-RCV-4): the same when the capture has
// one point only, the receiving side of the fabric (rx): the responder is
// judged there, its only point, which the PICS places nowhere or at the
// requester.
func TestCackBackwardOnePointAway(t *testing.T) {
	for _, c := range []overtakenCase{
		{name: "across planes, undeclared", only: "rx", at: "rx"},
		{name: "one plane, undeclared", only: "rx", at: "rx", samePlane: true, wantFail: true},
		{name: "across planes, rx at node0", only: "rx", at: "rx", points: map[string]string{"rx": "node0"}},
		{name: "one plane, rx at node0", only: "rx", at: "rx", points: map[string]string{"rx": "node0"}, samePlane: true, wantFail: true},
	} {
		judgeOvertaken(t, c)
	}
}

// TestCackPathsBound (RSP-RCV-4): a connection's claims check keeps the
// highest cack_psn of at most maxCackPaths paths; a path beyond takes the
// place of the one recorded first, which is then compared with nothing.
func TestCackPathsBound(t *testing.T) {
	var c cackPaths
	for i := range maxCackPaths + 1 {
		if _, ok := c.report(i%2, uint32(i), 100); ok {
			t.Fatalf("path %d: recorded before it was reported", i)
		}
	}
	if c.n != maxCackPaths {
		t.Errorf("%d paths kept, want %d", c.n, maxCackPaths)
	}
	if _, ok := c.report(0, 0, 50); ok {
		t.Errorf("the path recorded first is still held after %d others", maxCackPaths)
	}
	if got, ok := c.report(1, maxCackPaths-1, 50); !ok || got != 100 {
		t.Errorf("path (1, %d): %d %v, want 100 true", maxCackPaths-1, got, ok)
	}
	if got, _ := c.report(1, maxCackPaths-1, 60); got != 100 {
		t.Errorf("a lower cack_psn replaced the highest: %d, want 100", got)
	}
}

// TestCackPathsHint (RSP-RCV-4): report's answers do not depend on the
// slot it looks at first (cackPaths.last): a long run of SACKs on planes
// and EVs enough to evict paths gives, step by step, the answers of a
// plain scan of the ring (pathsModel).
func TestCackPathsHint(t *testing.T) {
	var c cackPaths
	var m pathsModel
	rnd := rand.New(rand.NewPCG(1, 2))
	for step := range 20000 {
		plane := rnd.IntN(20) - 1 // -1 (no plane) and planes beyond maxCackPaths
		ev := uint32(rnd.IntN(3))
		if rnd.IntN(4) == 0 {
			ev = uint32(rnd.IntN(40))
		}
		cack := uint32(rnd.IntN(1000))
		got, gotOK := c.report(plane, ev, cack)
		want, wantOK := m.report(plane, ev, cack)
		if got != want || gotOK != wantOK {
			t.Fatalf("step %d: report(%d, %d, %d) = %d %v, want %d %v", step, plane, ev, cack, got, gotOK, want, wantOK)
		}
	}
}

// pathsModel is cackPaths's rule as a plain scan: the paths in the order
// recorded, the first recorded leaving when a path beyond maxCackPaths
// comes.
type pathsModel struct{ path []cackPath }

func (m *pathsModel) report(plane int, ev, cack uint32) (uint32, bool) {
	for i := range m.path {
		if p := &m.path[i]; p.plane == plane && p.ev == ev {
			before := p.cack
			if psnAfter(cack, before) {
				p.cack = cack
			}
			return before, true
		}
	}
	if len(m.path) == maxCackPaths {
		m.path = m.path[1:]
	}
	m.path = append(m.path, cackPath{plane, ev, cack})
	return 0, false
}

// TestOnlyPointAwayWording: when the capture has one point and the PICS
// places it at one node, the other node, placed nowhere, is judged there
// as away from it (PICS.AtNode is false), and the report's placement says
// so rather than a bare "only point".
func TestOnlyPointAwayWording(t *testing.T) {
	pics, err := LoadPICS("testdata/perplane-loss.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	pics.Capture.Points = map[string]string{"rx": "node0"}
	frames, ifs := pointFrames(t, perPlaneCapture, "rx")
	rep, err := JudgeFile(writeFrames(t, ifs, frames), Options{PICS: pics, Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PointNode{
		"node0": {Node: "node0", Point: "rx", How: "declared", AtNode: true},
		"node1": {Node: "node1", Point: "rx", How: "only point, away from it: capture.points places it at node0"},
	}
	if len(rep.Capture.PointNodes) != len(want) {
		t.Fatalf("placements %+v, want %+v", rep.Capture.PointNodes, want)
	}
	for _, pn := range rep.Capture.PointNodes {
		if pn != want[pn.Node] {
			t.Errorf("placement %+v, want %+v", pn, want[pn.Node])
		}
	}
}

// TestCackBackwardNoPass (RSP-RCV-4): a SACK whose cack_psn moved
// backward makes its one observation of MRC-RSP-SACK-001 the failure,
// with no pass beside it: the case checks as many observations as with
// the SACKs in order.
func TestCackBackwardNoPass(t *testing.T) {
	pics, err := LoadPICS("testdata/perplane-loss.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	frames, ifs := pointFrames(t, perPlaneCapture, "")
	moved, _ := sackOvertaken(t, ifs, frames, "tx", true)
	checked := func(fr []capFrame) int {
		rep, err := JudgeFile(writeFrames(t, ifs, fr), Options{PICS: pics, Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rep.Result("MRC-RSP-SACK-001")
		return res.Checked
	}
	if in, back := checked(frames), checked(moved); back != in {
		t.Errorf("MRC-RSP-SACK-001 checked %d observations with a cack_psn moving backward, %d in order", back, in)
	}
}
