package conformance

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// fabricCopy returns frames with a copy of a first transmission (the
// first write after frame skip that is not a retransmission) delay after
// it on its interface: a duplicate the fabric made. It returns the frames,
// the PSN and the copy's frame number.
func fabricCopy(t *testing.T, frames []capFrame, skip int, delay time.Duration) ([]capFrame, uint32, int) {
	t.Helper()
	for j, c := range frames {
		if j > skip && c.ok && c.p.BTH.Opcode.IsWrite() && !c.p.BTH.Retransmit && !c.p.Trimmed {
			d := c
			d.ts = c.ts.Add(delay)
			k := j + 1
			for k < len(frames) && !frames[k].ts.After(d.ts) {
				k++
			}
			return slices.Concat(frames[:k:k], []capFrame{d}, frames[k:]), c.p.BTH.PSN, k + 1
		}
	}
	t.Fatal("no first transmission to copy")
	return nil, 0, 0
}

// failedCases returns the cases of a report that FAIL, each with the
// requirements of its FAIL findings at frame (none when frame is 0).
func failedCases(rep *Report, frame int) map[string][]string {
	out := map[string][]string{}
	for _, r := range rep.Results {
		if r.Verdict != Fail {
			continue
		}
		out[r.Case.ID] = nil
		for _, f := range slices.Concat(r.Findings, r.LastFindings) {
			if frame != 0 && f.Frame == frame && f.Verdict == Fail {
				out[r.Case.ID] = append(out[r.Case.ID], string(f.Requirement))
			}
		}
	}
	return out
}

// TestFabricCopyAwayFromRequester (WIRE-BTH-5, WIRE-DSCP-1, LR-RTX-1): at
// a capture point away from the requester (rx, the receiving side of the
// fabric: the only point of the capture), a write repeating the one
// before it on its EV, with the same headers and rtx = 0, may be a
// duplicate the fabric made: it fails no case there (before, it failed
// MRC-LR-RTX-003 and MRC-WIRE-DSCP-001 as an unflagged resend). At a point
// the PICS places at the requester the fabric made no copy, and the same
// write FAILs MRC-LR-RTX-003 (WIRE-BTH-5).
func TestFabricCopyAwayFromRequester(t *testing.T) {
	frames, ifs := pointFrames(t, perPlaneCapture, "rx")
	judge := func(fr []capFrame, points map[string]string, frame int) map[string][]string {
		pics, err := LoadPICS("testdata/perplane-loss.pics.json")
		if err != nil {
			t.Fatal(err)
		}
		pics.Capture.Points = points
		rep, err := JudgeFile(writeFrames(t, ifs, fr), Options{PICS: pics, Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		return failedCases(rep, frame)
	}
	base := judge(frames, nil, 0)
	for _, c := range []struct {
		skip  int
		delay time.Duration
	}{{20, 100 * time.Nanosecond}, {100, 100 * time.Nanosecond}, {20, 30 * time.Microsecond}} {
		copied, psn, frame := fabricCopy(t, frames, c.skip, c.delay)
		if got := judge(copied, nil, frame); !maps.EqualFunc(got, base, slices.Equal) {
			t.Errorf("PSN %d copied by the fabric, seen at rx %v later (frame %d): failed cases %v, want %v as without the copy", psn, c.delay, frame, got, base)
		}
		if got := judge(copied, map[string]string{"rx": "node0"}, frame); !slices.Contains(got["MRC-LR-RTX-003"], "WIRE-BTH-5") {
			t.Errorf("PSN %d sent twice with rtx = 0, %v apart, seen at rx placed at node0: failed cases (with frame %d's requirements) %v, want MRC-LR-RTX-003 under WIRE-BTH-5 at frame %d", psn, c.delay, frame, got, frame)
		}
	}
}
