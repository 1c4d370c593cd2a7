package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// TestJudgeFileCutWhileMapped: a capture file cut short while the judge
// reads it mapped (pcap.OpenMapped) is a capture error naming the file as
// changed, with one worker or two, not a crash of the process.
func TestJudgeFileCutWhileMapped(t *testing.T) {
	frames, ifaces := readFrames(t, filepath.Join("..", "pcap", "testdata", "scenarios", "trim.pcapng"))
	// More frames than ProgressEvery, for Progress to cut the file
	// while the judge is in the middle of it.
	var many []pcap.Frame
	var at time.Time
	for len(many) < 3*ProgressEvery {
		for _, f := range frames {
			at = at.Add(time.Microsecond)
			f.Timestamp = at
			many = append(many, f)
		}
	}
	dir := t.TempDir()
	for _, jobs := range []int{1, 2} {
		path := writeCapture(t, dir, "cut.pcapng", ifaces, many)
		cut := false
		opts := Options{Jobs: jobs, Progress: func(int) {
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
			t.Errorf("jobs %d: cut %v: report %v, error %v; want a CaptureError for the file changed", jobs, cut, rep != nil, err)
		}
	}
}
