package conformance

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// copyCapture writes a copy of capture src, in its own frame order and
// interfaces, to a file of the test's named name, and returns its path.
// edit sees each frame (a copy of its bytes may replace f.Data) and keeps
// it by returning true; then each of finish may write more (interface
// statistics, say).
func copyCapture(t testing.TB, src, name string, edit func(f *pcap.Frame) bool, finish ...func(w *pcap.Writer) error) string {
	t.Helper()
	r, err := pcap.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), name)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var w *pcap.Writer
	var f pcap.Frame
	for r.Next(&f) == nil {
		if w == nil {
			if w, err = pcap.NewWriter(out, r.Interfaces()...); err != nil {
				t.Fatal(err)
			}
		}
		if !edit(&f) {
			continue
		}
		if err := w.WriteFrame(&f); err != nil {
			t.Fatal(err)
		}
	}
	if w == nil {
		t.Fatalf("%s: no frame", src)
	}
	for _, fn := range finish {
		if err := fn(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}
