package conformance

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openmrc/mrc/pcap"
)

// TestFileAndStreamAgree judges every repository capture read from its
// file (frames held by reference in the merger and the
// shards' batches) and read as a stream (frames copied), with one and
// two workers: the reports are identical.
func TestFileAndStreamAgree(t *testing.T) {
	for _, c := range goldenCaptures(t) {
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, file := range []bool{true, false} {
			for _, jobs := range []int{1, 2} {
				var r *pcap.Reader
				if file {
					r, err = pcap.Open(c)
				} else {
					r, err = pcap.NewReader(bytes.NewReader(data))
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, want := r.Retain(), file && !strings.HasSuffix(c, ".gz"); got != want {
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
					t.Errorf("%s: file=%v jobs=%d differs from the file with one worker:\n%s", c, file, jobs, firstDiff(want, b.Bytes()))
				}
			}
		}
	}
}

// TestJudgeFileCutWhileRead: a capture file truncated after the judge
// opened it ends where the read falls short of the size it had: a
// CaptureError for the file changed, with the offset, not a report, with
// any number of workers.
func TestJudgeFileCutWhileRead(t *testing.T) {
	data, err := os.ReadFile("../pcap/testdata/scenarios/blackhole.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	for len(data) < 2<<20 { // more than the Reader's first read (256 KiB)
		data = append(data, data...) // more sections: still a valid capture
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
		if err := os.Truncate(path, int64(len(data)/2)); err != nil {
			t.Fatal(err)
		}
		_, err = Judge(r, path, Options{Today: testDay, Jobs: jobs})
		r.Close()
		var ce *CaptureError
		var fe *pcap.FormatError
		if !errors.As(err, &ce) || !errors.Is(err, pcap.ErrFileChanged) || !errors.As(err, &fe) {
			t.Errorf("jobs=%d: error %v, want a CaptureError for the file changed", jobs, err)
		}
	}
}

// TestEnrichSeeks: the second pass of JudgeFile goes from mark to mark
// to the frames the evidence names (a capture file, no annotated copy);
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

// TestJudgeRetainBounded judges a capture file of more than
// pcap.MaxRetained bytes whose first frames are held to the end: one, the
// only frame of an interface, an hour ahead of the others, waits in the
// merger, and the only frame of a second node pair waits in its worker's
// batch. Held by reference, they would keep the whole file in the
// Reader's chunks (pcap.ErrRetainLimit); the judge copies the one and
// sends the other, and its report is the one it makes from a stream
// (frames copied), with one and two workers.
func TestJudgeRetainBounded(t *testing.T) {
	src, err := pcap.Open("../pcap/testdata/scenarios/loss.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	var frames []pcap.Frame
	var f pcap.Frame
	for src.Next(&f) == nil {
		g := f
		g.Data, g.Comments = bytes.Clone(f.Data), nil
		frames = append(frames, g)
	}
	ifaces := append([]pcap.Interface(nil), src.Interfaces()...)
	src.Close()
	if len(ifaces) < 2 || len(frames) < 100 {
		t.Fatalf("%d interfaces, %d frames: want a capture of several planes", len(ifaces), len(frames))
	}
	// One more interface, whose one frame is an hour ahead.
	ifaces = append(ifaces, pcap.Interface{Name: "late"})
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, ifaces...)
	if err != nil {
		t.Fatal(err)
	}
	first := frames[0]
	rare := bytes.Clone(first.Data)
	off, et, ok := ipHeader(rare)
	if !ok {
		t.Fatal("the first frame has no IP header")
	}
	if et == 0x86dd {
		rare[off+39] ^= 0x5a // another destination: another node pair
	} else {
		rare[off+19] ^= 0x5a
	}
	write := func(ts time.Time, iface int, data []byte) {
		if err := w.WritePacket(ts, iface, data); err != nil {
			t.Fatal(err)
		}
	}
	write(first.Timestamp, first.Interface, rare)
	write(first.Timestamp.Add(time.Hour), len(ifaces)-1, first.Data)
	span := frames[len(frames)-1].Timestamp.Sub(first.Timestamp) + time.Millisecond
	for k := 0; buf.Len() < pcap.MaxRetained*5/4; k++ {
		for _, f := range frames {
			write(f.Timestamp.Add(time.Duration(k)*span), f.Interface, f.Data)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if k := time.Duration(buf.Len()/(len(frames)*len(first.Data))+1) * span; k > time.Hour/2 {
		t.Fatalf("the capture spans about %v: the held frame must stay ahead", k)
	}
	path := filepath.Join(t.TempDir(), "held.pcapng")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		var out [2][]byte
		for i, file := range []bool{true, false} {
			var r *pcap.Reader
			if file {
				r, err = pcap.Open(path)
			} else {
				r, err = pcap.NewReader(bytes.NewReader(buf.Bytes()))
			}
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Judge(r, path, Options{Today: testDay, Jobs: jobs})
			r.Close()
			if err != nil {
				t.Fatalf("jobs=%d file=%v: %v", jobs, file, err)
			}
			var b bytes.Buffer
			if err := rep.Write(&b, FormatJSON); err != nil {
				t.Fatal(err)
			}
			out[i] = b.Bytes()
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("jobs=%d: the file's report differs from the stream's:\n%s", jobs, firstDiff(out[1], out[0]))
		}
	}
}
