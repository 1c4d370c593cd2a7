package pcap_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openmrc/mrc/pcap"
)

type heldFrame struct {
	pcap.Frame
	want []byte // a copy taken when it was read
}

// TestReaderFileAgrees reads the corpus through Open (a file) and through
// NewReader (a stream): the same frames, with the same offsets; a
// retaining file Reader keeps every frame valid to the end, and a
// truncated file fails at the same offset either way. With chunks of 256
// bytes, most blocks straddle two chunks or more.
func TestReaderFileAgrees(t *testing.T) {
	dir := t.TempDir()
	for _, chunk := range []int{256, 1 << 20} {
		restore := pcap.SetChunkSize(chunk)
		for _, name := range []string{"valid.pcapng", "malformed.pcapng"} {
			data := corpusFile(t, name)
			pcapData := toPcap(t, mustRead(t, data))
			for _, c := range []struct {
				name   string
				data   []byte
				retain bool
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
				r, err := openFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Retain(); got != c.retain {
					t.Errorf("%s: Retain() = %v, want %v", c.name, got, c.retain)
				}
				read, ferr := readOffsets(t, r, c.retain)
				r.Close()
				if diff := cmp.Diff(streamed, read); diff != "" {
					t.Errorf("chunk %d: %s (-stream +file):\n%s", chunk, c.name, diff)
				}
				var se, fe *pcap.FormatError
				if errors.As(serr, &se) != errors.As(ferr, &fe) || se != nil && (se.Offset != fe.Offset || se.Msg != fe.Msg) {
					t.Errorf("chunk %d: %s: stream error %v, file error %v", chunk, c.name, serr, ferr)
				}
				if len(streamed) == 0 {
					t.Errorf("%s: no frames read", c.name)
				}
			}
		}
		restore()
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

// openFile is how the file tests open a capture file: pcap.Open, or
// pcap.OpenMapped under TestReaderMapped.
var openFile = pcap.Open

func mustOpen(t *testing.T, path string) *pcap.Reader {
	t.Helper()
	r, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
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

// patterned returns a pcap file of records of the given captured lengths,
// each record's bytes numbered by its frame number and position (see
// checkPattern), and the offset of each record.
func patterned(t *testing.T, sizes []int) ([]byte, []int64) {
	t.Helper()
	var offs []int64
	out := binary.LittleEndian.AppendUint32(nil, 0xa1b2c3d4)
	out = binary.LittleEndian.AppendUint16(out, 2)
	out = binary.LittleEndian.AppendUint16(out, 4)
	out = append(out, make([]byte, 8)...)
	out = binary.LittleEndian.AppendUint32(out, 0) // snap length: none
	out = binary.LittleEndian.AppendUint32(out, 1) // Ethernet
	for i, n := range sizes {
		offs = append(offs, int64(len(out)))
		out = binary.LittleEndian.AppendUint32(out, uint32(i))
		out = binary.LittleEndian.AppendUint32(out, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		for k := 0; k < n; k++ {
			out = append(out, byte(i*7+k))
		}
	}
	return out, offs
}

// checkPattern reports whether f holds the bytes patterned wrote for
// frame f.Number.
func checkPattern(f *pcap.Frame, size int) bool {
	if len(f.Data) != size {
		return false
	}
	i := f.Number - 1
	for k, b := range f.Data {
		if b != byte(i*7+k) {
			return false
		}
	}
	return true
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "capture.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReaderLargeBlocks reads records up to the largest block
// (MaxBlockLen), between small ones, from a file (retaining or not) and
// from a stream: each is whole and in place, whichever chunk it starts
// in, and no Reader holds more than MaxRetained.
func TestReaderLargeBlocks(t *testing.T) {
	sizes := []int{60, pcap.MaxBlockLen - 16, 100, 3 << 20, 5000, 1<<20 - 30, 1 << 20, 70, pcap.MaxBlockLen - 16, 64}
	data, offs := patterned(t, sizes)
	path := writeTemp(t, data)
	for _, mode := range []string{"file", "retain", "stream"} {
		var r *pcap.Reader
		if mode == "stream" {
			r = mustNewReader(t, data)
		} else {
			r = mustOpen(t, path)
		}
		if mode == "retain" && !r.Retain() {
			t.Fatal("a file does not retain")
		}
		var kept []pcap.Frame
		var f pcap.Frame
		for i := range sizes {
			if err := r.Next(&f); err != nil {
				t.Fatalf("%s: frame %d: %v", mode, i+1, err)
			}
			if !checkPattern(&f, sizes[i]) || f.Offset != offs[i] {
				t.Fatalf("%s: frame %d: %d bytes at %d, want %d bytes at %d, in order", mode, f.Number, len(f.Data), f.Offset, sizes[i], offs[i])
			}
			if mode == "retain" {
				kept = append(kept, f)
				if len(kept) > 2 {
					r.Release(kept[len(kept)-2].Offset) // keep two
				}
				for _, k := range kept[max(0, len(kept)-2):] {
					if !checkPattern(&k, sizes[k.Number-1]) {
						t.Fatalf("frame %d kept changed by frame %d", k.Number, f.Number)
					}
				}
			}
			if _, total := r.Chunks(); total > pcap.MaxRetained {
				t.Fatalf("%s: %d bytes of chunks", mode, total)
			}
		}
		if err := r.Next(&f); err != io.EOF {
			t.Errorf("%s: after the last frame: %v, want EOF", mode, err)
		}
	}
}

// TestReaderRetainRelease reads a 12 MiB file with 64 KiB chunks keeping
// a sliding window of about 1 MiB of frames (16 chunks or more), released
// as the window moves: every frame kept is unchanged until released, and
// the chunks stay within the window plus two. Without Retain the Reader
// reads into one chunk.
func TestReaderRetainRelease(t *testing.T) {
	defer pcap.SetChunkSize(64 << 10)()
	sizes := make([]int, 0, 40000)
	for n := 0; n < 12<<20; n += 16 + sizes[len(sizes)-1] {
		sizes = append(sizes, 200+len(sizes)%1300)
	}
	data, _ := patterned(t, sizes)
	path := writeTemp(t, data)
	for _, retain := range []bool{true, false} {
		r := mustOpen(t, path)
		if retain && !r.Retain() {
			t.Fatal("a file does not retain")
		}
		var window []pcap.Frame
		peak := 0
		var f pcap.Frame
		for {
			if err := r.Next(&f); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("retain=%v: frame %d: %v", retain, f.Number+1, err)
			}
			if !checkPattern(&f, sizes[f.Number-1]) {
				t.Fatalf("retain=%v: frame %d read wrong", retain, f.Number)
			}
			if retain {
				window = append(window, f)
				for f.Offset-window[0].Offset > 1<<20 {
					if !checkPattern(&window[0], sizes[window[0].Number-1]) {
						t.Fatalf("frame %d changed before its release (frame %d read)", window[0].Number, f.Number)
					}
					window = window[1:]
				}
				r.Release(window[0].Offset)
			}
			_, total := r.Chunks()
			peak = max(peak, total)
		}
		if f.Number != len(sizes) {
			t.Errorf("retain=%v: %d frames, want %d", retain, f.Number, len(sizes))
		}
		want := 64 << 10
		if retain {
			want = 1<<20 + 3*64<<10
		}
		if peak > want {
			t.Errorf("retain=%v: %d bytes of chunks at most, want ≤ %d", retain, peak, want)
		}
	}
}

// TestReaderRetainLimit: a retaining Reader whose frames are never
// released stops with ErrRetainLimit, holding at most MaxRetained, having
// kept every frame valid; after a Release the same call reads on to the
// end.
func TestReaderRetainLimit(t *testing.T) {
	sizes := make([]int, 0, 40000)
	for n := 0; n < MaxRetainedTimes(3, 2); n += 16 + sizes[len(sizes)-1] {
		sizes = append(sizes, 1000+len(sizes)%500)
	}
	data, _ := patterned(t, sizes)
	r := mustOpen(t, writeTemp(t, data))
	r.Retain()
	var kept []pcap.Frame
	var f pcap.Frame
	var err error
	for err == nil {
		if err = r.Next(&f); err == nil {
			kept = append(kept, f)
		}
	}
	if err != pcap.ErrRetainLimit {
		t.Fatalf("after %d frames: %v, want ErrRetainLimit", len(kept), err)
	}
	if _, total := r.Chunks(); total > pcap.MaxRetained || f.Offset < pcap.MaxRetained-2*(1<<20) {
		t.Errorf("stopped at offset %d with %d bytes of chunks, want up to MaxRetained", f.Offset, total)
	}
	for _, k := range kept {
		if !checkPattern(&k, sizes[k.Number-1]) {
			t.Fatalf("frame %d kept changed", k.Number)
		}
	}
	r.Release(f.Offset)
	n := len(kept)
	for {
		if err := r.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("after the release: frame %d: %v", n+1, err)
		}
		if n++; !checkPattern(&f, sizes[n-1]) || f.Number != n {
			t.Fatalf("after the release: frame %d read wrong", n)
		}
		r.Release(f.Offset)
	}
	if n != len(sizes) {
		t.Errorf("%d frames, want %d", n, len(sizes))
	}
}

// MaxRetainedTimes returns num/den of MaxRetained.
func MaxRetainedTimes(num, den int) int { return pcap.MaxRetained * num / den }

// TestReaderSeek: marks taken while one Reader reads a file take another
// Reader over the same file straight to those frames, numbered as in
// order, forward and back; a stream cannot seek, nor a Reader that has not
// read the section's interfaces yet.
func TestReaderSeek(t *testing.T) {
	path := filepath.Join("testdata", "valid.pcapng")
	all := mustRead(t, corpusFile(t, "valid.pcapng"))
	r := mustOpen(t, path)
	var marks []pcap.Mark
	var f pcap.Frame
	for {
		marks = append(marks, r.Mark())
		if r.Next(&f) != nil {
			break
		}
	}
	for _, chunk := range []int{256, 1 << 20} {
		restore := pcap.SetChunkSize(chunk)
		r2 := mustOpen(t, path)
		if r2.Seek(marks[3]) {
			t.Error("a Reader that has read no section header seeks")
		}
		if err := r2.Next(&f); err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{len(all) - 1, 5, 17, len(all) / 2, 1, 18} {
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
				t.Errorf("chunk %d: after the seek to frame %d: frame %d of %d bytes", chunk, k+1, f.Number, len(f.Data))
			}
		}
		restore()
	}
	s := mustNewReader(t, corpusFile(t, "valid.pcapng"))
	if err := s.Next(&f); err != nil {
		t.Fatal(err)
	}
	if s.Seek(marks[5]) {
		t.Error("a stream seeks")
	}
}

// TestReaderSeekBackRetained: a retaining Reader seeks back to an
// earlier mark and reads on past where it was; the frames it returned
// before the seek stay valid, and Release then frees the chunks.
func TestReaderSeekBackRetained(t *testing.T) {
	defer pcap.SetChunkSize(4 << 10)()
	sizes := make([]int, 300)
	for i := range sizes {
		sizes[i] = 100 + i*13%900
	}
	data, _ := patterned(t, sizes)
	r := mustOpen(t, writeTemp(t, data))
	r.Retain()
	var kept []pcap.Frame
	var mark pcap.Mark
	var f pcap.Frame
	for i := 0; i < 200; i++ {
		if i == 40 {
			mark = r.Mark()
		}
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, f)
	}
	if !r.Seek(mark) {
		t.Fatal("Seek refused")
	}
	for n := 41; n <= len(sizes); n++ {
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
		if f.Number != n || !checkPattern(&f, sizes[n-1]) {
			t.Fatalf("after the seek back: frame %d of %d bytes, want frame %d", f.Number, len(f.Data), n)
		}
	}
	for _, k := range kept {
		if !checkPattern(&k, sizes[k.Number-1]) {
			t.Fatalf("frame %d read before the seek changed", k.Number)
		}
	}
	if err := r.Next(&f); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
	r.Release(int64(len(data)))
	if used, _ := r.Chunks(); used != 0 {
		t.Errorf("%d chunks kept after releasing the whole file", used)
	}
}

// TestReaderFileCut: a capture file truncated after Open, inside a block
// or between two, ends with a *FormatError whose cause is ErrFileChanged,
// at or before the cut (Decoder.Each returns it too); frames read before
// stay valid.
func TestReaderFileCut(t *testing.T) {
	defer pcap.SetChunkSize(4 << 10)()
	sizes := make([]int, 200)
	for i := range sizes {
		sizes[i] = 300
	}
	data, offs := patterned(t, sizes)
	for _, cut := range []int64{offs[50] + 100, offs[50], offs[199]} {
		path := writeTemp(t, data)
		r := mustOpen(t, path)
		r.Retain()
		if err := os.Truncate(path, cut); err != nil {
			t.Fatal(err)
		}
		var kept []pcap.Frame
		var f pcap.Frame
		var err error
		for err == nil {
			if err = r.Next(&f); err == nil {
				kept = append(kept, f)
			}
		}
		var fe *pcap.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, pcap.ErrFileChanged) || fe.Offset > cut {
			t.Errorf("cut at %d: %v after %d frames, want a FormatError for the file changed", cut, err, len(kept))
		}
		for _, k := range kept {
			if !checkPattern(&k, 300) {
				t.Fatalf("cut at %d: frame %d changed", cut, k.Number)
			}
		}
	}
	path := writeTemp(t, data)
	r := mustOpen(t, path)
	if err := os.Truncate(path, offs[60]); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := (&pcap.Decoder{}).Each(r, func(*pcap.Record) error { n++; return nil })
	if !errors.Is(err, pcap.ErrFileChanged) || n == 0 || n > 60 {
		t.Errorf("Each: %v after %d frames, want ErrFileChanged after some", err, n)
	}
}

// lateInterfaces is a pcapng file whose second interface is declared
// after the first frame: frames 1 and 3 on interface 0, 2 on interface 1.
func lateInterfaces() []byte {
	le := binary.LittleEndian
	out := ngSHB(le)
	out = append(out, ngIDB(le, 0, ngOption(le, 2, []byte("a/plane0")))...)
	out = append(out, ngEPB(le, 0, 1, bytes.Repeat([]byte{1}, 60))...)
	out = append(out, ngIDB(le, 0, ngOption(le, 2, []byte("a/plane1")))...)
	out = append(out, ngEPB(le, 1, 2, bytes.Repeat([]byte{2}, 60))...)
	return append(out, ngEPB(le, 0, 3, bytes.Repeat([]byte{3}, 60))...)
}

// TestReaderSeekBackInterfaces: a Reader that seeks back before an
// interface description reads it again as the same interface, not as one
// more, retaining or not.
func TestReaderSeekBackInterfaces(t *testing.T) {
	for _, retain := range []bool{false, true} {
		r := mustOpen(t, writeTemp(t, lateInterfaces()))
		if retain {
			r.Retain()
		}
		seekBackInterfaces(t, r)
	}
}

func seekBackInterfaces(t *testing.T, r *pcap.Reader) {
	t.Helper()
	var f pcap.Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	second := r.Mark()
	for r.Next(&f) == nil {
	}
	if n := len(r.Interfaces()); n != 2 {
		t.Fatalf("%d interfaces, want 2", n)
	}
	if !r.Seek(second) {
		t.Fatal("Seek refused")
	}
	for n := 2; n <= 3; n++ {
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
		if f.Number != n || f.Data[0] != byte(n) || f.Interface != (n+1)%2 {
			t.Errorf("after the seek back: frame %d (data %d, interface %d), want frame %d", f.Number, f.Data[0], f.Interface, n)
		}
	}
	if ifs := r.Interfaces(); len(ifs) != 2 || ifs[1].Name != "a/plane1" {
		t.Errorf("after reading the file again: %d interfaces (%v), want 2", len(ifs), ifs)
	}
}
