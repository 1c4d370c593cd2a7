package conformance

import (
	"github.com/openmrc/mrc/pcap"
	"slices"
	"strings"
	"testing"
)

// runsOf returns frames (in time order) as a capture tool writing each
// interface's frames in runs writes them: each block of n frames, one
// interface's after another's.
func runsOf(frames []pcap.Frame, n int) []pcap.Frame {
	var out []pcap.Frame
	for at := 0; at < len(frames); at += n {
		block := frames[at:min(at+n, len(frames))]
		ids := []int{}
		for _, f := range block {
			if !slices.Contains(ids, f.Interface) {
				ids = append(ids, f.Interface)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			for _, f := range block {
				if f.Interface == id {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// TestLateFramesJudgedAgain: a capture file whose frames come later than
// the window the judge holds back (an interface's runs longer than it) is
// judged again with a window that fits its latest frame: the verdicts are
// the time-ordered capture's, no point is left with frames judged out of
// order, and a note says so. Before, the late frames made their points'
// findings not decided from a frame alone INCONCLUSIVE. With a window
// asked for (Options.Reorder), the judge keeps it and says which window
// the latest frame needed.
func TestLateFramesJudgedAgain(t *testing.T) {
	defer func(w int) { defaultReorder = w }(defaultReorder)
	defaultReorder = 16
	frames, ifs := readFrames(t, "../pcap/testdata/scenarios/loss.pcapng")
	dir := t.TempDir()
	inOrder := writeCapture(t, dir, "ordered.pcapng", ifs, frames)
	runs := writeCapture(t, dir, "runs.pcapng", ifs, runsOf(frames, 160))
	want, err := JudgeFile(inOrder, Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	has := func(rep *Report, s string) bool {
		return slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, s) })
	}
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(runs, Options{Today: testDay, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if got, w := verdictLines(rep), verdictLines(want); !slices.Equal(got, w) {
			t.Errorf("%d jobs: the capture written in runs judges otherwise than in time order:\n%s", jobs, lineDiff(w, got))
		}
		if !has(rep, "judged again holding back") || has(rep, "judged after a frame with a later timestamp") {
			t.Errorf("%d jobs: notes %q, want the capture judged again and no frame late", jobs, rep.Capture.Notes)
		}
	}
	rep, err := JudgeFile(runs, Options{Today: testDay, Reorder: 16})
	if err != nil {
		t.Fatal(err)
	}
	if has(rep, "judged again") || !has(rep, "judged after a frame with a later timestamp") || !has(rep, "needed a window of") {
		t.Errorf("Reorder 16: notes %q, want frames late, the window they needed, and no second judgement", rep.Capture.Notes)
	}
}

// TestReorderBounded: Options.Reorder beyond MaxReorderLimit, or below 0,
// is an OptionsError, never a window that memory follows.
func TestReorderBounded(t *testing.T) {
	for _, n := range []int{-1, MaxReorderLimit + 1} {
		_, err := JudgeFile("../pcap/testdata/scenarios/loss.pcapng", Options{Reorder: n})
		if _, ok := err.(*OptionsError); !ok {
			t.Errorf("Reorder %d: error %v, want an *OptionsError", n, err)
		}
	}
}
