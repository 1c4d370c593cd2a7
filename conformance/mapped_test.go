package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// TestJudgeFileCutWhileJudged: a capture file cut short while the judge
// reads it, mapped (Options.Mapped, pcap.OpenMapped) or copied, is a
// capture error naming the file as changed, with one worker or two, not a
// crash of the process.
func TestJudgeFileCutWhileJudged(t *testing.T) {
	many, ifaces := manyFrames(t)
	dir := t.TempDir()
	for _, c := range []struct {
		jobs   int
		mapped bool
	}{{1, true}, {2, true}, {1, false}, {2, false}} {
		path := writeCapture(t, dir, "cut.pcapng", ifaces, many)
		cut := false
		opts := Options{Jobs: c.jobs, Mapped: c.mapped, Progress: func(int) {
			if !cut {
				cut = true
				if err := os.Truncate(path, 1<<20); err != nil {
					t.Error(err)
				}
			}
		}}
		rep, err := JudgeFile(path, opts)
		var ce *CaptureError
		if !cut || !errors.As(err, &ce) || ce.File != path || !errors.Is(err, pcap.ErrFileChanged) {
			t.Errorf("jobs %d, mapped %v: cut %v: report %v, error %v; want a CaptureError for the file changed", c.jobs, c.mapped, cut, rep != nil, err)
		}
	}
}

// manyFrames returns more frames than ProgressEvery (a scenario
// capture's, repeated a microsecond apart), for Progress to cut the file
// in the middle of them, with their interfaces.
func manyFrames(t *testing.T) ([]pcap.Frame, []pcap.Interface) {
	frames, ifaces := readFrames(t, filepath.Join("..", "pcap", "testdata", "scenarios", "trim.pcapng"))
	var many []pcap.Frame
	var at time.Time
	for len(many) < 3*ProgressEvery {
		for _, f := range frames {
			at = at.Add(time.Microsecond)
			f.Timestamp = at
			many = append(many, f)
		}
	}
	return many, ifaces
}

// TestJudgeFileCutWhileEnriching: a capture file cut short between the
// judge's pass and the second one (enrich, here writing the annotated
// copy, which reads every frame) is a capture error naming the file as
// changed, whether the cut shows as a fault of the mapping or as an
// error of the Reader, mapped or copied, not a report on part of the
// file.
func TestJudgeFileCutWhileEnriching(t *testing.T) {
	many, ifaces := manyFrames(t)
	dir := t.TempDir()
	// At a page boundary the next page faults; inside a page the rest of
	// it reads as zeros, a malformed block.
	for _, mapped := range []bool{true, false} {
		for _, at := range []int64{1 << 20, 1<<20 + 100} {
			path := writeCapture(t, dir, "cut.pcapng", ifaces, many)
			cutter := &cutOnWrite{path: path, at: at}
			rep, err := JudgeFile(path, Options{Jobs: 1, Mapped: mapped, Annotate: cutter})
			var ce *CaptureError
			if !cutter.cut || !errors.As(err, &ce) || ce.File != path || !errors.Is(err, pcap.ErrFileChanged) {
				t.Errorf("mapped %v, cut at %d (%v): report %v, error %v; want a CaptureError for the file changed", mapped, at, cutter.cut, rep != nil, err)
			}
		}
	}
}

// cutOnWrite is a writer that cuts the file path to at bytes at its
// first write.
type cutOnWrite struct {
	path string
	at   int64
	cut  bool
}

func (c *cutOnWrite) Write(b []byte) (int, error) {
	if !c.cut {
		c.cut = true
		if err := os.Truncate(c.path, c.at); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
