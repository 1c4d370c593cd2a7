//go:build linux

package pcap_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// TestReaderMapped runs the file Reader's tests on files OpenMapped maps.
func TestReaderMapped(t *testing.T) {
	defer func(o func(string) (*pcap.Reader, error)) { openFile = o }(openFile)
	openFile = pcap.OpenMapped
	for _, c := range []struct {
		name string
		test func(*testing.T)
	}{
		{"Agrees", TestReaderFileAgrees},
		{"LargeBlocks", TestReaderLargeBlocks},
		{"RetainRelease", TestReaderRetainRelease},
		{"Seek", TestReaderSeek},
		{"SeekBackRetained", TestReaderSeekBackRetained},
		{"SeekBackInterfaces", TestReaderSeekBackInterfaces},
	} {
		t.Run(c.name, c.test)
	}
}

// TestReaderMappedGrows: what a file grows by after OpenMapped mapped it
// is read after the mapped frames, whether the mapping ends between two
// records or inside one, retaining or not.
func TestReaderMappedGrows(t *testing.T) {
	sizes := make([]int, 300)
	for i := range sizes {
		sizes[i] = 500
	}
	data, offs := patterned(t, sizes)
	for _, mapped := range []int64{offs[200], offs[200] + 100} {
		for _, retain := range []bool{false, true} {
			path := writeTemp(t, data[:mapped])
			r := mustOpenMapped(t, path)
			if _, n := r.Mapping(); int64(n) != mapped {
				t.Fatalf("mapped %d bytes, want %d", n, mapped)
			}
			if retain && !r.Retain() {
				t.Fatal("a mapped file does not retain")
			}
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(data[mapped:]); err != nil {
				t.Fatal(err)
			}
			f.Close()
			var kept []pcap.Frame
			for {
				var fr pcap.Frame
				if err := r.Next(&fr); err != nil {
					if err != io.EOF {
						t.Fatalf("mapped %d, retain %v: %v", mapped, retain, err)
					}
					break
				}
				if fr.Offset != offs[fr.Number-1] || !checkPattern(&fr, 500) {
					t.Fatalf("mapped %d, retain %v: frame %d at %d is not as written", mapped, retain, fr.Number, fr.Offset)
				}
				if retain {
					kept = append(kept, fr)
				}
			}
			if retain && len(kept) != len(sizes) {
				t.Errorf("mapped %d: read %d frames, want %d", mapped, len(kept), len(sizes))
			}
			for _, k := range kept {
				if !checkPattern(&k, 500) {
					t.Fatalf("mapped %d: retained frame %d changed", mapped, k.Number)
				}
			}
		}
	}
}

func mustOpenMapped(t *testing.T, path string) *pcap.Reader {
	t.Helper()
	r, err := pcap.OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestReaderMappedCut: a mapped file cut short while it is read gives
// ErrFileChanged, as an error from Next where the cut falls in a page
// still mapped (its bytes past the new end read as zeros), or as the
// fault of touching a page past the new end, which FaultError names.
func TestReaderMappedCut(t *testing.T) {
	sizes := make([]int, 200)
	for i := range sizes {
		sizes[i] = 300
	}
	data, offs := patterned(t, sizes)
	for _, cut := range []int64{offs[50] + 100, offs[50], offs[199], 4096} {
		path := writeTemp(t, data)
		r := mustOpenMapped(t, path)
		if err := os.Truncate(path, cut); err != nil {
			t.Fatal(err)
		}
		n, err := readGuarded(r)
		var fe *pcap.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, pcap.ErrFileChanged) {
			t.Errorf("cut at %d: %v after %d frames, want a FormatError for the file changed", cut, err, n)
		}
	}
	if err := pcap.FaultError(errors.New("not a fault")); err != nil {
		t.Errorf("FaultError of another value: %v", err)
	}
}

// readGuarded reads and touches every frame of r, with a fault a panic
// that FaultError turns into an error.
func readGuarded(r *pcap.Reader) (n int, err error) {
	err = pcap.Guard(func() error {
		var f pcap.Frame
		sum := 0
		for {
			if err := r.Next(&f); err != nil {
				return err
			}
			n++
			for _, b := range f.Data {
				sum += int(b)
			}
		}
	})
	return n, err
}

// TestAdviseFileCut: a capture file cut short while AdviseFile reads it
// gives ErrFileChanged, cut at a page boundary or inside a page.
func TestAdviseFileCut(t *testing.T) {
	sizes := make([]int, 2000)
	for i := range sizes {
		sizes[i] = 300
	}
	data, _ := patterned(t, sizes)
	for _, at := range []int64{8192, 8192 + 100} {
		path := writeTemp(t, data)
		cut := false
		err := pcap.ReadFileFit(path, func(*pcap.Record) bool {
			if !cut {
				cut = true
				if err := os.Truncate(path, at); err != nil {
					t.Fatal(err)
				}
			}
			return true
		})
		if !cut || !errors.Is(err, pcap.ErrFileChanged) {
			t.Errorf("cut at %d (%v): %v, want ErrFileChanged", at, cut, err)
		}
	}
}
