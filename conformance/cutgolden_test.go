package conformance

import (
	"strings"
	"testing"
)

// TestCutEveryGoldenCapture: every golden capture (but the malformed one),
// cut to 128 bytes, under each PICS it is
// judged with: no case FAILs or PASSes that does not in the whole
// capture, but MRC-WIRE-ICRC-001, which sees the frames not cut only
// (fault-bad-icrc's bad ICRC is in a write the cut takes away: PASS over
// the frames left). What the cut hides is INCONCLUSIVE. The end-to-end
// captures' malformed frames, cut after their bad headers, FAIL as whole
// (MRC-WIRE-BTH-001): before, they were discarded as cut, and it PASSed.
func TestCutEveryGoldenCapture(t *testing.T) {
	n := 0
	for _, c := range goldenCaptures(t) {
		if strings.Contains(c, "malformed") {
			continue
		}
		frames, ifs := readFrames(t, c)
		dir := t.TempDir()
		cutPath := writeCut(t, dir, "cut.pcapng", ifs, frames, 128)
		for _, pics := range picsFor(c) {
			whole, err := judgeGolden(t, c, pics)
			if err != nil {
				continue
			}
			opts := Options{Today: testDay}
			switch {
			case pics == "reference":
				opts.PICS = referencePICS(t)
			case strings.HasPrefix(pics, "own"):
				p, err := LoadPICS(ownPICS(c, pics))
				if err != nil {
					t.Fatal(err)
				}
				opts.PICS = p
			}
			cut, err := JudgeFile(cutPath, opts)
			if err != nil {
				t.Logf("%s %s: %v", c, pics, err)
				continue
			}
			n++
			for _, w := range whole.Results {
				g, _ := cut.Result(w.Case.ID)
				if g.Verdict != w.Verdict && g.Verdict != Inconclusive && w.Case.ID != "MRC-WIRE-ICRC-001" {
					t.Errorf("%s [%s]: %s %s (%s), whole %s", c, pics, w.Case.ID, g.Verdict, g.Reason, w.Verdict)
				}
			}
		}
	}
	if n < 40 {
		t.Errorf("%d judgements compared, want the golden captures' (49 at this writing)", n)
	}
}
