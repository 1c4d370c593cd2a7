package conformance

import (
	"bytes"
	"github.com/openmrc/mrc/conformance/internal/longconn"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// writeCut writes frames as a capture with snap length snap writes them:
// each frame's first snap bytes, with its length on the wire.
func writeCut(t *testing.T, dir, name string, ifs []pcap.Interface, frames []pcap.Frame, snap int) string {
	t.Helper()
	cut := make([]pcap.Frame, len(frames))
	for i, f := range frames {
		cut[i] = pcap.Frame{Timestamp: f.Timestamp, Interface: f.Interface, Length: len(f.Data), Data: f.Data[:min(len(f.Data), snap)]}
	}
	return writeCapture(t, dir, name, ifs, cut)
}

// TestCutFramesJudged: writes a capture's snap length cut after their
// headers (a port mirrored with truncation, dumpcap -s 128) are judged
// from their headers. What their requester did is judged as in the whole
// capture: the requester's cases keep their verdicts and observations, as
// do the responder's the frames decide (feedback's fields, what it says
// of the write it names). What their responder did on the writes it had
// is not, since the ICRC that decides whether it had them whole is not in
// the capture: those observations not decided from a frame alone are
// INCONCLUSIVE, and no case PASSes or FAILs where the whole capture does
// not. The ICRC and pad bytes
// (MRC-WIRE-ICRC-001, MRC-WIRE-BTH-003) are checked on the frames not cut
// only. Before, every cut frame was discarded: the loss scenario's 268
// writes went unjudged, and every requester case was INCONCLUSIVE.
func TestCutFramesJudged(t *testing.T) {
	// The requester's cases, and the responder's that the frames decide
	// (check.framesShow): feedback's fields, and what it says of the write
	// it names.
	requester := []string{"MRC-LR-RTX-001", "MRC-LR-RTX-003", "MRC-REQ-PSN-001", "MRC-REQ-PSN-002", "MRC-WIRE-MSG-001", "MRC-WIRE-METH-001", "MRC-WIRE-PAY-001",
		"MRC-WIRE-EV-002", "MRC-EV-REV-001", "MRC-RSP-SACK-004", "MRC-WIRE-BTH-006", "MRC-WIRE-SETH-002"}
	for _, name := range []string{"loss", "trim", "perplane-loss"} {
		frames, ifs := readFrames(t, "../pcap/testdata/scenarios/"+name+".pcapng")
		dir := t.TempDir()
		whole, err := JudgeFile(writeCut(t, dir, "whole.pcapng", ifs, frames, 1<<16), Options{Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		for _, jobs := range []int{1, 2} {
			rep, err := JudgeFile(writeCut(t, dir, "cut.pcapng", ifs, frames, 128), Options{Today: testDay, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range whole.Results {
				g, _ := rep.Result(w.Case.ID)
				switch id := w.Case.ID; {
				case g.Verdict != w.Verdict && g.Verdict != Inconclusive:
					t.Errorf("%s, %d jobs: %s %s (%s), whole %s", name, jobs, id, g.Verdict, g.Reason, w.Verdict)
				case slices.Contains(requester, id) && (g.Verdict != w.Verdict || g.Checked != w.Checked):
					t.Errorf("%s, %d jobs: requester's %s %s over %d, whole %s over %d", name, jobs, id, g.Verdict, g.Checked, w.Verdict, w.Checked)
				case (id == "MRC-WIRE-ICRC-001" || id == "MRC-WIRE-BTH-003") && (g.Checked >= w.Checked || g.Checked == 0):
					t.Errorf("%s, %d jobs: %s checked %d times, want fewer than the whole capture's %d (the frames not cut), and some", name, jobs, id, g.Checked, w.Checked)
				}
			}
			if !slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "judged from their headers") }) {
				t.Errorf("%s, %d jobs: notes %q, want one counting the writes judged from their headers", name, jobs, rep.Capture.Notes)
			}
			// Taken as arrived whole: never as discarded for a bad ICRC.
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if strings.Contains(f.Observed, "discard") || strings.Contains(f.Observed, "bad ICRC") {
						t.Errorf("%s, %d jobs: %s finding at frame %d: %s", name, jobs, r.Case.ID, f.Frame, f.Observed)
						break
					}
				}
			}
		}
	}
}

// TestCutFramesFaults: the requesters' seeded faults are found, under the
// reference PICS, in the captures cut to 128 bytes as in the whole ones.
// The responders' (a claim of a PSN never sent, an unanswered probe) are
// INCONCLUSIVE, never PASS: the responder may have had a bad ICRC among
// the writes cut. The bad ICRC (fault-bad-icrc) is cut away. A frame cut
// within its headers is not judged.
func TestCutFramesFaults(t *testing.T) {
	p := referencePICS(t)
	for capture, id := range map[string]string{
		"fault-sack-unseen-psn.pcapng":  "MRC-RSP-SACK-001",
		"fault-unanswered-probe.pcapng": "MRC-RSP-PRB-001",
	} {
		frames, ifs := readFrames(t, "testdata/"+capture)
		rep, err := JudgeFile(writeCut(t, t.TempDir(), "cut.pcapng", ifs, frames, 128), Options{Today: testDay, PICS: p})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := rep.Result(id); r.Verdict != Inconclusive || !strings.Contains(r.Reason, "cut by the snap length") {
			t.Errorf("%s cut to 128 bytes: %s %s (%s), want INCONCLUSIVE for the writes cut", capture, id, r.Verdict, r.Reason)
		}
	}
	for capture, id := range map[string]string{
		"fault-unflagged-rtx.pcapng":    "MRC-LR-RTX-003",
		"fault-beyond-mpr.pcapng":       "MRC-MPR-WIN-001",
		"fault-reserved-bits.pcapng":    "MRC-WIRE-GEN-001",
		"fault-gobackn.pcapng":          "MRC-LR-RTX-001",
		"fault-nacked-ev-reused.pcapng": "MRC-LR-NACK-001",
		"fault-premature-rtx.pcapng":    "MRC-LR-RTX-002",
		"fault-wimm-order.pcapng":       "MRC-WIMM-ORD-001",
	} {
		frames, ifs := readFrames(t, "testdata/"+capture)
		dir := t.TempDir()
		for _, jobs := range []int{1, 2} {
			rep, err := JudgeFile(writeCut(t, dir, "cut.pcapng", ifs, frames, 128), Options{Today: testDay, Jobs: jobs, PICS: p})
			if err != nil {
				t.Fatal(err)
			}
			if v := rep.Verdict(id); v != Fail {
				t.Errorf("%s cut to 128 bytes, %d jobs: %s %s, want FAIL", capture, jobs, id, v)
			}
		}
	}
	frames, ifs := readFrames(t, "../pcap/testdata/scenarios/loss.pcapng")
	rep, err := JudgeFile(writeCut(t, t.TempDir(), "cut.pcapng", ifs, frames, 60), Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Capture.Frames == 0 || slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "judged from their headers") }) {
		t.Errorf("cut to 60 bytes, within the headers: notes %q, want none judged from their headers", rep.Capture.Notes)
	}
}

// TestCutFramesLongConnection: one connection of 20,000 frames, nine in
// ten writes, cut to 128 bytes, is judged within the connection's bounds
// (its writes taken as arrived whole hold no table past the responder's
// window), with the whole capture's verdicts for the requester's cases.
func TestCutFramesLongConnection(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if _, err := longconn.Write(&b, 20_000); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "long.pcapng")
	if err := os.WriteFile(src, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frames, ifs := readFrames(t, src)
	whole, err := JudgeFile(src, Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := JudgeFile(writeCut(t, dir, "cut.pcapng", ifs, frames, 128), Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "bound") }); i >= 0 {
		t.Errorf("note %q", rep.Capture.Notes[i])
	}
	for _, id := range []string{"MRC-REQ-PSN-001", "MRC-REQ-PSN-002", "MRC-LR-RTX-003", "MRC-WIRE-MSG-001", "MRC-WIRE-PAY-001"} {
		w, _ := whole.Result(id)
		if g, _ := rep.Result(id); g.Verdict != w.Verdict || g.Checked != w.Checked {
			t.Errorf("%s %s over %d, whole %s over %d", id, g.Verdict, g.Checked, w.Verdict, w.Checked)
		}
	}
}
