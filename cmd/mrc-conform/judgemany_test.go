package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// heapWriter discards what is written and records the live heap at each
// write, after a collection: the memory the report holds while it is
// written.
type heapWriter struct{ peak uint64 }

func (h *heapWriter) Write(p []byte) (int, error) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapAlloc)
	return len(p), nil
}

// TestJudgeManyMemoryBounded (issue 12: any number of captures judged
// into one report): the report of several captures is written section by
// section as they are judged, so the memory it holds does not grow with
// the number of captures beyond a summary line each: the peak live heap
// judging 200 small captures is within a few MB of that for 50 (holding
// every report until the end, 200 of them take about 4 times the memory).
func TestJudgeManyMemoryBounded(t *testing.T) {
	capture, err := filepath.Abs(ctd + "good.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	peak := map[int]uint64{}
	for _, format := range []conformance.Format{conformance.FormatJSON, conformance.FormatText} {
		for _, n := range []int{50, 200} {
			files := make([]string, n)
			for i := range files {
				files[i] = filepath.Join(dir, fmt.Sprintf("c%03d.pcapng", i))
				if _, err := os.Lstat(files[i]); err != nil {
					if err := os.Symlink(capture, files[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			var w heapWriter
			if _, err := judgeMany(files, conformance.Options{}, 2, format, conformance.TextOptions{}, &w, nil); err != nil {
				t.Fatal(err)
			}
			peak[n] = w.peak
		}
		if grew := int64(peak[200]) - int64(peak[50]); grew > 4<<20 {
			t.Errorf("%s: peak live heap %d KB judging 50 captures, %d KB judging 200: grows with the number of captures", format, peak[50]>>10, peak[200]>>10)
		}
	}
}
