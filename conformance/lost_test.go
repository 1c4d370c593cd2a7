package conformance

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// lostCapture is a pcapng capture at D's own interface: T's writes, D's
// SACKs and ACKs, but no ACK for the ack_req PSN c+1 (RSP-ACK-1), and D's
// answer to a probe, id 9, that the capture does not hold (WIRE-SETH-7),
// and a SACK whose type field is not 0 (WIRE-SETH-8).
// With dropped, the interface's statistics say the capture lost that many
// frames.
func lostCapture(t *testing.T, dropped *uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "D", Plane: 0})
	if err != nil {
		t.Fatal(err)
	}
	s := newScene(t, scenePICS)
	s.rec = w
	const c = 0x10
	s.write(c, wire.OpWriteOnly, 0, 0xFFFF)
	s.sack(c, c)
	s.ack(c)
	s.write(c+1, wire.OpWriteOnly, 1, 0xFFFF)
	s.sack(c+1, c+1)
	a := s.ctl(wire.OpSACK, c+1)
	a.SETH = wire.SETH{CACKPSN: c + 1, AckPSNOffset: 9, SACKOffset: 1, Entropy: 0x100, PR: true, SPDCID: sceneDQP, DPDCID: sceneTQP}
	s.emit(sceneD, sceneT, a, 1000)
	bad := s.ctl(wire.OpSACK, c+1) // its own fields break WIRE-SETH-8
	bad.SETH = wire.SETH{Type: 1, CACKPSN: c + 1, SACKOffset: 1, Entropy: 0x100, SPDCID: sceneDQP, DPDCID: sceneTQP}
	s.emit(sceneD, sceneT, bad, 1000)
	s.write(c+2, wire.OpWriteFirst, 2, 0xFFFF)
	s.sack(c+2, c+2)
	if dropped != nil {
		if err := w.WriteDropped(s.start.Add(time.Duration(s.ns)), 0, *dropped); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLostFramesUndecidable: at D's own interface, an answer to a probe
// the capture does not hold breaks WIRE-SETH-7, an ACK never seen breaks
// RSP-ACK-1, and a SACK's type field breaks WIRE-SETH-8. Where the
// interface's statistics say the capture lost frames, the first two may
// rest on a lost frame and are INCONCLUSIVE, the report says why, and the
// interface shows its count; the third, decided from the frame alone,
// still FAILs. A count of 0 changes nothing. Fails when the judge ignores
// the statistics (TestE2EAFPacket's tap lost a probe under load and the
// answer FAILed), or discounts failures decided from the frame alone.
func TestLostFramesUndecidable(t *testing.T) {
	zero, three := uint64(0), uint64(3)
	for _, c := range []struct {
		name    string
		dropped *uint64
		lost    bool
	}{{"no statistics", nil, false}, {"none lost", &zero, false}, {"three lost", &three, true}} {
		rep := judgeLost(t, c.dropped)
		for _, cs := range []string{"MRC-RSP-PRB-001", "MRC-RSP-ACK-001"} {
			if v, want := rep.Verdict(cs), map[bool]Verdict{true: Inconclusive, false: Fail}[c.lost]; v != want {
				t.Errorf("%s: %s %s, want %s", c.name, cs, v, want)
			}
		}
		if f, ok := findingOf(rep, "WIRE-SETH-8"); !ok || f.Verdict != Fail || rep.Verdict("MRC-WIRE-SETH-001") != Fail {
			t.Errorf("%s: WIRE-SETH-8 %+v (found %v), MRC-WIRE-SETH-001 %s; want FAIL", c.name, f, ok, rep.Verdict("MRC-WIRE-SETH-001"))
		}
		for _, req := range []string{"WIRE-SETH-7", "RSP-ACK-1"} {
			f, ok := findingOf(rep, req)
			switch {
			case !ok:
				t.Errorf("%s: no %s finding", c.name, req)
			case c.lost && (f.Verdict != Inconclusive || !strings.Contains(f.Observed, "capture point D lost 3 frames")):
				t.Errorf("%s: %s %s %q; want INCONCLUSIVE, naming the lost frames", c.name, req, f.Verdict, f.Observed)
			case !c.lost && f.Verdict != Fail:
				t.Errorf("%s: %s %s; want FAIL", c.name, req, f.Verdict)
			}
		}
		noted := strings.Contains(strings.Join(rep.Capture.Notes, "\n"), "lost 3 frames by its statistics")
		if noted != c.lost || rep.Capture.Interfaces[0].Dropped != map[bool]uint64{true: 3}[c.lost] {
			t.Errorf("%s: note %v, interface %+v", c.name, noted, rep.Capture.Interfaces[0])
		}
	}
}

// findingOf returns the first finding under requirement req.
func findingOf(rep *Report, req string) (Finding, bool) {
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if string(f.Requirement) == req {
				return f, true
			}
		}
	}
	return Finding{}, false
}

// lostReportPaths returns the JSON paths of the report on lostCapture
// with three frames lost.
func lostReportPaths(t *testing.T) map[string]bool {
	three := uint64(3)
	paths := map[string]bool{}
	jsonPaths(reportJSON(t, judgeLost(t, &three)), "", paths)
	return paths
}

// judgeLost judges lostCapture(dropped) with the scene's PICS, with one
// worker and with two, whose reports must be the same bytes (the lost
// frames are counted once the shards' engines are merged).
func judgeLost(t *testing.T, dropped *uint64) *Report {
	t.Helper()
	p, err := ParsePICS([]byte(scenePICS))
	if err != nil {
		t.Fatal(err)
	}
	var reps [2]*Report
	var js [2][]byte
	for i := range reps {
		r, err := pcap.NewReader(bytes.NewReader(lostCapture(t, dropped)))
		if err != nil {
			t.Fatal(err)
		}
		if reps[i], err = Judge(r, "lost.pcapng", Options{PICS: p, Today: testDay, Jobs: i + 1}); err != nil {
			t.Fatal(err)
		}
		if js[i], err = reps[i].JSON(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Errorf("the reports with one worker and with two differ:\n%s\n%s", js[0], js[1])
	}
	return reps[0]
}
