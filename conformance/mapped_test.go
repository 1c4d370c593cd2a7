package conformance

import (
	"bytes"
	"errors"
	"github.com/openmrc/mrc/internal/testenv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openmrc/mrc/pcap"
)

// TestMappedAndStreamedAgree judges every repository capture read from
// its mapped file (frames held by reference in the merger and the
// workers' batches) and read as a stream (frames copied), with one and
// two workers: the reports are identical.
func TestMappedAndStreamedAgree(t *testing.T) {
	for _, c := range goldenCaptures(t) {
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, mapped := range []bool{true, false} {
			for _, jobs := range []int{1, 2} {
				var r *pcap.Reader
				if mapped {
					r, err = pcap.Open(c)
				} else {
					r, err = pcap.NewReader(bytes.NewReader(data))
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, want := r.Retain(), mapped && !strings.HasSuffix(c, ".gz"); got != want {
					r.Close()
					t.Fatalf("%s: Retain() = %v, want %v", c, got, want)
				}
				rep, err := Judge(r, c, Options{Today: testDay, Jobs: jobs})
				r.Close()
				var b bytes.Buffer
				if err != nil {
					b.WriteString(err.Error())
				} else if err := rep.Write(&b, FormatJSON); err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = b.Bytes()
				} else if !bytes.Equal(want, b.Bytes()) {
					t.Errorf("%s: mapped=%v jobs=%d differs from mapped with one worker:\n%s", c, mapped, jobs, firstDiff(want, b.Bytes()))
				}
			}
		}
	}
}

// TestJudgeFileCutWhileRead: a capture file truncated after the judge
// mapped it faults when the judge reads past the new end; that is a
// CaptureError, not a crash or an internal error, with any number of
// workers.
func TestJudgeFileCutWhileRead(t *testing.T) {
	data, err := os.ReadFile("../pcap/testdata/scenarios/blackhole.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "cut.pcapng")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := pcap.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Retain() {
			testenv.Unavailable(t, "the file is not mapped on this system")
		}
		if err := os.Truncate(path, 4096); err != nil {
			t.Fatal(err)
		}
		_, err = Judge(r, path, Options{Today: testDay, Jobs: jobs})
		r.Close()
		var ce *CaptureError
		if !errors.As(err, &ce) || !errors.Is(err, pcap.ErrFileChanged) {
			t.Errorf("jobs=%d: error %v, want a CaptureError for the file changed", jobs, err)
		}
	}
}

// TestEnrichSeeks: the second pass of JudgeFile goes from mark to mark
// to the frames the evidence names (a mapped capture, no annotated copy);
// the frames it describes are those a full second pass describes, with
// the marks thinned out many times over.
func TestEnrichSeeks(t *testing.T) {
	defer func(m, s int) { maxMarks, markStride = m, s }(maxMarks, markStride)
	maxMarks, markStride = 8, 1
	seeks := 0
	for _, c := range goldenCaptures(t) {
		if strings.HasSuffix(c, ".gz") {
			continue
		}
		full, err := JudgeFile(c, Options{Today: testDay, Annotate: io.Discard})
		if err != nil {
			continue
		}
		marked, err := JudgeFile(c, Options{Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full.Frames, marked.Frames); diff != "" {
			t.Errorf("%s: frames described (-full pass +seeking):\n%s", c, diff)
		}
		if len(full.Frames) > 0 && full.Frames[len(full.Frames)-1].Number > 2*len(full.Frames) {
			seeks++
		}
	}
	if seeks < 5 {
		t.Errorf("only %d captures leave frames to skip", seeks)
	}
}
