package conformance

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// failEvidencePICS: T, the DUT, writes to D and E; the one capture point
// is at D, away from T, so a finding against T that rests on a packet not
// seen there (onAbsence) is INCONCLUSIVE.
const failEvidencePICS = `{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["T"],
	"nodes": {"T": ["fd00::1"], "D": ["fd00::2"], "E": ["fd00::3"]},
	"capture": {"points": {"D": "D"}, "reaction_time_ns": 1000}}`

// dscpWriteTo is a first transmission from T to node to (QP 0x22 of D
// or E) of PSN psn, with DSCP 8, the retransmission class: flagged as a
// retransmission, it breaks WIRE-DSCP-1 only if its first transmission
// was not lost before the capture point (onAbsence); unflagged, it breaks
// it whatever was lost there, unless the capture lost frames (a plain
// failure, how 0).
func (s *scene) dscpWriteTo(to byte, psn uint32, msn uint16, flagged bool) int {
	return s.dscpClassTo(to, psn, msn, flagged, 8)
}

// dscpClassTo is dscpWriteTo with DSCP dscp.
func (s *scene) dscpClassTo(to byte, psn uint32, msn uint16, flagged bool, dscp uint8) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = dscp<<2 | 2
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn, AckReq: true, Retransmit: flagged}
	p.METH = wire.METH{MSN: msn}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 64}
	p.Payload = make([]byte, 64)
	p.SetEV(0x100+psn, wire.EVModeSTEV)
	return s.emit(sceneT, to, p, 10_000)
}

// failLayout is how failEvidenceCapture lays out T's failures: before
// and after of T's writes, to D and E in turn, that the report makes
// INCONCLUSIVE, around one FAIL. Flagged as retransmissions, a first
// transmission's retransmission class rests on a packet not seen
// (onAbsence: INCONCLUSIVE at D, away from T) and the FAIL is an
// unflagged write to D in that class; unflagged, it does not, but the
// capture's interface statistics say it lost frames (lossy: every
// failure not decided from the frame alone is INCONCLUSIVE), and the
// FAIL is a probe in the retransmission class, decided from the frame
// alone (onFrame).
type failLayout struct {
	name          string
	before, after int
	lossy         bool
}

var failLayouts = []failLayout{
	// With two workers, each keeps its writes' findings (fewer than
	// MaxFindings); merging them drops the FAIL from the findings kept.
	{"remote", MaxFindings + 10, 2 * LastFindings, false},
	// Each worker's findings overflow before the FAIL: the worker that
	// judges it does not keep it in its findings.
	{"remote-long", 2*MaxFindings + 10, 2 * LastFindings, false},
	{"lossy", MaxFindings + 10, 2 * LastFindings, true},
}

// failEvidenceCapture is a capture at D of T's writes to D and E laid
// out as l says; it returns the capture and the frame of its one FAIL.
func failEvidenceCapture(t *testing.T, l failLayout) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "D", Plane: 0})
	if err != nil {
		t.Fatal(err)
	}
	s := newScene(t, failEvidencePICS)
	s.rec = w
	psn := [2]uint32{1000, 5000}
	write := func(i int, flagged bool) int {
		to := []byte{sceneD, 0x3}[i%2]
		psn[i%2]++
		return s.dscpWriteTo(to, psn[i%2], uint16(psn[i%2]), flagged)
	}
	for i := range 2 { // first transmissions as required: the judge knows where each connection begins
		psn[i]++
		s.dscpClassTo([]byte{sceneD, 0x3}[i], psn[i], uint16(psn[i]), false, 4)
	}
	for i := range l.before {
		write(i, !l.lossy)
	}
	var bad int
	if l.lossy {
		p := &wire.Packet{}
		p.IP6.TrafficClass = 8<<2 | 2 // DSCP_NO_TRIM (0) is due
		p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: sceneDQP}
		p.PETH = wire.PETH{ProbeID: 7, SPDCID: sceneTQP, DPDCID: sceneDQP, FType: 1}
		p.SetEV(0x100, wire.EVModeSTEV)
		bad = s.emit(sceneT, sceneD, p, 10_000)
	} else {
		bad = write(0, false)
	}
	for i := range l.after {
		write(i, !l.lossy)
	}
	if l.lossy {
		if err := w.WriteDropped(s.start.Add(time.Duration(s.ns)), 0, 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), bad
}

// TestFailShowsItsEvidence (issue 12: evidence kept as bounded samples;
// WIRE-DSCP-1): a case whose verdict is FAIL lists a FAIL finding, with
// its evidence, even when every finding in its first MaxFindings and its
// last LastFindings is one the report makes INCONCLUSIVE (failLayouts:
// resting on a packet not seen, at a point away from the node or whose
// capture lost frames) and its one FAIL lies between them. The report is
// the same bytes with one worker and with two (the writes to D and to E
// are judged by different shards). Fails when the judge keeps only the
// first and the latest findings of each observation key, whatever the
// report makes of them, and when merging the workers' findings loses
// those that show the verdict.
func TestFailShowsItsEvidence(t *testing.T) {
	p, err := ParsePICS([]byte(failEvidencePICS))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range failLayouts {
		capture, bad := failEvidenceCapture(t, l)
		file := filepath.Join(t.TempDir(), l.name+".pcapng")
		if err := os.WriteFile(file, capture, 0o644); err != nil {
			t.Fatal(err)
		}
		var js [2][]byte
		for i := range js {
			// JudgeFile, not Judge: a second pass over the file adds the
			// frames the findings name (Report.Frames).
			rep, err := JudgeFile(file, Options{PICS: p, Today: testDay, Jobs: i + 1})
			if err != nil {
				t.Fatal(err)
			}
			if js[i], err = rep.JSON(); err != nil {
				t.Fatal(err)
			}
			failShown(t, fmt.Sprintf("%s, jobs %d", l.name, i+1), rep, bad)
		}
		if !bytes.Equal(js[0], js[1]) {
			t.Errorf("%s: the reports with one worker and with two differ", l.name)
		}
	}
}

// failShown checks the report of failEvidenceCapture: MRC-WIRE-DSCP-001
// FAILs with more findings than it lists, and shows one FAIL, of frame
// bad, with its evidence, its connection as the report names it and the
// frame among the report's, within the bounds of what a Result lists.
func failShown(t *testing.T, name string, rep *Report, bad int) {
	t.Helper()
	res, _ := rep.Result("MRC-WIRE-DSCP-001")
	if res.Verdict != Fail || res.FindingCount <= MaxFindings+LastFindings {
		t.Fatalf("%s: MRC-WIRE-DSCP-001 %s with %d findings (%s); the capture must FAIL it with more than %d",
			name, res.Verdict, res.FindingCount, res.Reason, MaxFindings+LastFindings)
	}
	var fails []Finding
	for _, f := range append(slices.Clone(res.Findings), res.LastFindings...) {
		if f.Verdict == Fail {
			fails = append(fails, f)
		}
	}
	if len(fails) != 1 || fails[0].Frame != bad || fails[0].Requirement != "WIRE-DSCP-1" || fails[0].Observed == "" {
		t.Errorf("%s: FAIL findings %+v; want the one of frame %d, WIRE-DSCP-1, with its evidence", name, fails, bad)
	} else if c := fails[0].Connection; c != "" && !slices.ContainsFunc(rep.Connections, func(x Connection) bool { return x.ID == c }) {
		t.Errorf("%s: the FAIL names connection %q, not one of the report's", name, c)
	}
	if !slices.ContainsFunc(rep.Frames, func(f Frame) bool { return f.Number == bad }) {
		t.Errorf("%s: frame %d is not among the report's frames", name, bad)
	}
	for _, m := range evidenceMissing(rep) {
		t.Errorf("%s: %s", name, m)
	}
	if len(res.Findings) != MaxFindings || len(res.LastFindings) != LastFindings {
		t.Errorf("%s: %d findings listed and %d last, want %d and %d", name, len(res.Findings), len(res.LastFindings), MaxFindings, LastFindings)
	}
}

// evidenceMissing lists the cases of rep whose verdict is FAIL or
// NON-STRICT while none of the findings the report keeps (Findings,
// LastFindings), or none of those the terminal summary prints by default
// (writeFindings), has that verdict: a vendor reading such a report
// cannot see what failed. TestGoldenVerdicts requires it empty for every
// repository capture under every golden PICS.
func evidenceMissing(rep *Report) []string {
	var out []string
	for _, res := range rep.Results {
		if res.Verdict != Fail && res.Verdict != NonStrict {
			continue
		}
		kept := slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Verdict == res.Verdict }) ||
			slices.ContainsFunc(res.LastFindings, func(f Finding) bool { return f.Verdict == res.Verdict })
		var text strings.Builder
		writeFindings(func(f string, a ...any) { fmt.Fprintf(&text, f, a...) }, &res, textFindings)
		printed := strings.Contains(text.String(), " "+res.Verdict.String()+" frame ")
		if !kept || !printed {
			out = append(out, fmt.Sprintf("%s %s (%s) with %d findings, %d listed and %d last: kept findings show %s: %v, the text does: %v",
				res.Case.ID, res.Verdict, res.Reason, res.FindingCount, len(res.Findings), len(res.LastFindings), res.Verdict, kept, printed))
		}
	}
	return out
}

// TestFirstFailsBounded (issue 12: evidence kept as bounded samples;
// WIRE-DSCP-1): past MaxFindings, an observation key keeps, beyond its
// ring of the latest, the first failure of each kind in full, one per
// kind whatever the number of failures, and a failure of a kind already
// held allocates nothing. T's writes to D alternate between two kinds of
// WIRE-DSCP-1 failure: flagged ones rest on a packet not seen
// (onAbsence), unflagged ones do not.
func TestFirstFailsBounded(t *testing.T) {
	s := newScene(t, failEvidencePICS)
	s.dscpClassTo(sceneD, 1000, 0, false, 4)
	var frames [][]byte
	for i := range 4 * MaxFindings {
		frames = append(frames, sceneWriteBytes(t, 8<<2|2, 1001+uint32(i), i%2 == 0))
	}
	first := s.n + 1 // the frame of frames[0]
	send := func() {
		s.n++
		s.ns += 1000
		f := pcap.Frame{Number: s.n, Timestamp: s.start.Add(time.Duration(s.ns)), Data: frames[s.n-first], Length: len(frames[s.n-first])}
		s.e.frame(&f, s.in)
	}
	for range 2 * MaxFindings {
		send()
	}
	if allocs := testing.AllocsPerRun(MaxFindings, send); allocs != 0 {
		t.Errorf("%.1f allocations per frame once the first of each kind is held, want 0", allocs)
	}
	o := s.e.obsOf(obsKey{cDSCP, "D", "T"})
	if o.bad != 3*MaxFindings+1 || len(o.findings) != MaxFindings || o.firsts == nil {
		t.Fatalf("WIRE-DSCP-1 at D against T: %d failures, %d findings kept, firsts %v", o.bad, len(o.findings), o.firsts != nil)
	}
	held := map[failHow]int{}
	for how := range o.firsts {
		if f := &o.firsts[how]; f.Verdict == Fail {
			held[failHow(how)] = f.Frame
			if f.how() != failHow(how) || f.Observed == "" {
				t.Errorf("first of kind %d: %+v; want its own kind, with its evidence", how, *f)
			}
		}
	}
	// frames[MaxFindings] is the first write whose finding is not kept: flagged.
	if want := map[failHow]int{onAbsence: first + MaxFindings, 0: first + MaxFindings + 1}; !maps.Equal(held, want) {
		t.Errorf("firsts held %v (kind: frame), want %v", held, want)
	}
}

// TestTextShowsVerdictFinding: the terminal summary of a FAIL case whose
// first and last findings printed are INCONCLUSIVE prints its first FAIL
// finding too, from Findings or from LastFindings, in frame order, and
// counts one fewer not printed; an INCONCLUSIVE case prints as before.
// Fails when writeFindings prints the first and last n alone (the
// end-to-end captures' MRC-LR-RTX-003 showed three INCONCLUSIVE findings
// under FAIL).
func TestTextShowsVerdictFinding(t *testing.T) {
	inc := func(frames ...int) (fs []Finding) {
		for _, n := range frames {
			fs = append(fs, Finding{Verdict: Inconclusive, Requirement: "WIRE-DSCP-1", Frame: n})
		}
		return fs
	}
	fail := Finding{Verdict: Fail, Requirement: "WIRE-DSCP-1", Frame: 40}
	text := func(res Result) string {
		var b strings.Builder
		writeFindings(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, &res, textFindings)
		return b.String()
	}
	frames := func(s string) (out []string) {
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) >= 3 && (f[1] == "frame" || f[0] == "…") {
				out = append(out, strings.Join(f[:3], " "))
			} else if len(f) >= 4 && f[0] == "last:" {
				out = append(out, strings.Join(f[:4], " "))
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		res  Result
		want []string
	}{
		{"in findings", Result{Verdict: Fail, FindingCount: 6, Findings: append(inc(10, 20, 30), fail, Finding{Verdict: Inconclusive, Frame: 50}, Finding{Verdict: Inconclusive, Frame: 60})},
			[]string{"INCONCLUSIVE frame 10", "INCONCLUSIVE frame 20", "INCONCLUSIVE frame 30", "FAIL frame 40", "… 2 more"}},
		{"in last findings", Result{Verdict: Fail, FindingCount: 20, Findings: inc(1, 2, 3, 4), LastFindings: append([]Finding{fail}, inc(41, 42, 43, 44)...)},
			[]string{"INCONCLUSIVE frame 1", "INCONCLUSIVE frame 2", "INCONCLUSIVE frame 3", "… 17 more", "last: FAIL frame 40", "last: INCONCLUSIVE frame 42", "last: INCONCLUSIVE frame 43", "last: INCONCLUSIVE frame 44"}},
		{"inconclusive", Result{Verdict: Inconclusive, FindingCount: 6, Findings: inc(1, 2, 3, 4, 5, 6)},
			[]string{"INCONCLUSIVE frame 1", "INCONCLUSIVE frame 2", "INCONCLUSIVE frame 3", "… 3 more"}},
	} {
		if got := frames(text(c.res)); !slices.Equal(got, c.want) {
			t.Errorf("%s: the text prints %q, want %q", c.name, got, c.want)
		}
	}
}
