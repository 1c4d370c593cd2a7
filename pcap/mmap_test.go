package pcap_test

import (
	"bytes"
	"errors"
	"github.com/openmrc/mrc/internal/testenv"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openmrc/mrc/pcap"
)

type heldFrame struct {
	pcap.Frame
	want []byte // a copy taken when it was read
}

// TestReaderMappedAgrees reads the corpus through Open (the file mapped
// into memory) and through NewReader (a stream): the same frames, with the
// same offsets; a retaining mapped Reader keeps every frame valid to the
// end, and a truncated file fails at the same offset either way.
func TestReaderMappedAgrees(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"valid.pcapng", "malformed.pcapng"} {
		data := corpusFile(t, name)
		pcapData := toPcap(t, mustRead(t, data))
		for _, c := range []struct {
			name   string
			data   []byte
			mapped bool
		}{
			{name, data, true},
			{name + ".pcap", pcapData, true},
			{name + ".gz", gz(t, data), false},
			{name + ".truncated", data[:len(data)-100], true},
		} {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			streamed, serr := readOffsets(t, mustNewReader(t, c.data), false)
			r, err := pcap.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Retain(); got != c.mapped {
				t.Errorf("%s: Retain() = %v, want %v", c.name, got, c.mapped)
			}
			mapped, merr := readOffsets(t, r, c.mapped)
			r.Close()
			if diff := cmp.Diff(streamed, mapped); diff != "" {
				t.Errorf("%s (-stream +mapped):\n%s", c.name, diff)
			}
			var se, me *pcap.FormatError
			if errors.As(serr, &se) != errors.As(merr, &me) || se != nil && (se.Offset != me.Offset || se.Msg != me.Msg) {
				t.Errorf("%s: stream error %v, mapped error %v", c.name, serr, merr)
			}
			if len(streamed) == 0 {
				t.Errorf("%s: no frames read", c.name)
			}
		}
	}
}

func mustRead(t *testing.T, data []byte) []frameCopy {
	fs, _ := readAll(t, data)
	return fs
}

func mustNewReader(t *testing.T, data []byte) *pcap.Reader {
	r, err := pcap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readOffsets reads every frame; with held, it keeps the frames Next
// returned (not copies) and checks at the end that they are unchanged.
func readOffsets(t *testing.T, r *pcap.Reader, held bool) ([]frameCopy, error) {
	t.Helper()
	var out []frameCopy
	var kept []heldFrame
	var err error
	for {
		var f pcap.Frame
		if err = r.Next(&f); err != nil {
			break
		}
		out = append(out, frameCopy{f.Number, f.Timestamp, f.Interface, int(f.Offset), bytes.Clone(f.Data), nil})
		if held {
			kept = append(kept, heldFrame{f, bytes.Clone(f.Data)})
		}
	}
	for _, k := range kept {
		if !bytes.Equal(k.Data, k.want) {
			t.Errorf("frame %d changed after later reads", k.Number)
		}
	}
	if err == io.EOF {
		err = nil
	}
	return out, err
}

// TestReaderMappedReleases reads a large mapped capture: the resident
// pages of the mapping stay bounded whether the Reader releases them
// itself or the caller does with Release.
func TestReaderMappedReleases(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Unavailable(t, "mapping is Linux-only")
	}
	one := corpusFile(t, "valid.pcapng")
	frames := mustRead(t, one)
	var big []frameCopy
	for len(big)*len(frames[0].Data) < 48<<20 {
		big = append(big, frames...)
	}
	path := filepath.Join(t.TempDir(), "big.pcap")
	if err := os.WriteFile(path, toPcap(t, big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, retain := range []bool{false, true} {
		r, err := pcap.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if retain && !r.Retain() {
			t.Fatal("a mapped file does not retain")
		}
		peak := 0
		var f pcap.Frame
		for n := 0; ; n++ {
			if err := r.Next(&f); err != nil {
				break
			}
			if retain {
				r.Release(f.Offset)
			}
			if n%4096 == 0 {
				peak = max(peak, residentOf(t, path))
			}
		}
		r.Close()
		if peak > 12<<20 || peak == 0 {
			t.Errorf("retain=%v: %d bytes of the %d-byte file resident at most, want (0, 12 MiB]", retain, peak, len(big)*len(frames[0].Data))
		}
	}
}

// residentOf returns the resident bytes of the mappings of path
// (/proc/self/smaps).
func residentOf(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	total, in := 0, false
	for _, line := range bytes.Split(b, []byte("\n")) {
		fields := bytes.Fields(line)
		switch {
		case len(fields) >= 5 && bytes.Contains(fields[0], []byte("-")):
			in = string(fields[len(fields)-1]) == path
		case in && len(fields) == 3 && string(fields[0]) == "Rss:":
			var kb int
			for _, c := range fields[1] {
				kb = kb*10 + int(c-'0')
			}
			total += kb << 10
		}
	}
	return total
}

// TestReaderSeek: marks taken while one Reader reads a mapped file take
// another Reader over the same file straight to those frames, numbered as
// in order; a stream cannot seek, nor a Reader that has not read the
// section's interfaces yet.
func TestReaderSeek(t *testing.T) {
	path := filepath.Join("testdata", "valid.pcapng")
	all := mustRead(t, corpusFile(t, "valid.pcapng"))
	r, err := pcap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var marks []pcap.Mark
	var f pcap.Frame
	for {
		marks = append(marks, r.Mark())
		if r.Next(&f) != nil {
			break
		}
	}
	r2, err := pcap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.Seek(marks[3]) {
		t.Error("a Reader that has read no section header seeks")
	}
	if err := r2.Next(&f); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{len(all) - 1, 5, 17, len(all) / 2} {
		if !r2.Seek(marks[k]) {
			t.Fatalf("no seek to the mark before frame %d", k+1)
		}
		if marks[k].Frames() != k {
			t.Errorf("mark %d counts %d frames before it", k, marks[k].Frames())
		}
		if err := r2.Next(&f); err != nil {
			t.Fatal(err)
		}
		if f.Number != k+1 || !bytes.Equal(f.Data, all[k].Data) || !f.Timestamp.Equal(all[k].Timestamp) {
			t.Errorf("after the seek to frame %d: frame %d of %d bytes", k+1, f.Number, len(f.Data))
		}
	}
	s := mustNewReader(t, corpusFile(t, "valid.pcapng"))
	if err := s.Next(&f); err != nil {
		t.Fatal(err)
	}
	if s.Seek(marks[5]) {
		t.Error("a stream seeks")
	}
}

// TestEachFileCut: a mapped capture truncated after Open ends Each with
// ErrFileChanged, not a crash.
func TestEachFileCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.pcapng")
	data := corpusFile(t, "valid.pcapng")
	for len(data) < 64<<10 {
		data = append(data, data...) // more sections: still a valid capture
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Retain() {
		t.Fatal("the file is not mapped")
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = (&pcap.Decoder{}).Each(r, func(*pcap.Record) error { n++; return nil })
	if !errors.Is(err, pcap.ErrFileChanged) || n == 0 {
		t.Errorf("Each: %v after %d frames, want ErrFileChanged after some", err, n)
	}
}

// TestReaderPrefetchSpan: a mapped Reader asks for every line once, from
// its first block to prefetchAhead past the block just read, never past
// the end of the file, and asks afresh after a Seek back (frames from a
// mapped file are then read from the cache rather than one miss at a
// time).
func TestReaderPrefetchSpan(t *testing.T) {
	data := corpusFile(t, "valid.pcapng")
	path := filepath.Join(t.TempDir(), "valid.pcapng")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Retain() {
		testenv.Unavailable(t, "no mapped files here")
	}
	var f pcap.Frame
	var mark pcap.Mark
	check := func(what string) {
		t.Helper()
		got, ahead := r.Prefetched()
		end := int(pcap.MarkOffset(r.Mark())) // the block just read ends there
		if want := min(end+ahead, len(data)); got != want {
			t.Fatalf("%s: frame %d (block %d..%d): prefetched up to %d, want %d", what, f.Number, f.Offset, end, got, want)
		}
	}
	for n := 0; ; n++ {
		if n == 3 {
			mark = r.Mark()
		}
		if err := r.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		check("first read")
	}
	if !r.Seek(mark) {
		t.Fatal("Seek refused")
	}
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	check("after Seek back")
}
