package pcap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
)

// TestDroppedRoundTrip: WriteDropped's interface statistics block gives
// the reader each interface's drop count once the frames before it are
// read, the last block for an interface winning; an interface without one
// is not Known. Fails when the reader skips the block (Known false), reads
// the count from the wrong place, or gives it to another interface.
func TestDroppedRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Interface{Point: "tap", Plane: 0}, Interface{Point: "tap", Plane: 1}, Interface{Point: "tap", Plane: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 5)
	for i := range 3 {
		if err := w.WritePacket(ts, i, make([]byte, 60)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		iface   int
		dropped uint64
	}{{0, 7}, {1, 1 << 40}, {0, 9}} {
		if err := w.WriteDropped(ts, s.iface, s.dropped); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteDropped(ts, 3, 1); err == nil {
		t.Error("WriteDropped on an undeclared interface: no error")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n := readToEnd(t, r)
	ifs := r.Interfaces()
	if n != 3 || len(ifs) != 3 {
		t.Fatalf("%d frames, %d interfaces; want 3 and 3", n, len(ifs))
	}
	for i, want := range []struct {
		dropped uint64
		known   bool
	}{{9, true}, {1 << 40, true}, {0, false}} {
		if ifs[i].Dropped != want.dropped || ifs[i].Known != want.known {
			t.Errorf("interface %d: Dropped %d Known %v; want %d %v", i, ifs[i].Dropped, ifs[i].Known, want.dropped, want.known)
		}
	}
	var pcapBuf bytes.Buffer
	pw, _ := NewPcapWriter(&pcapBuf, 0, 0)
	if err := pw.WriteDropped(ts, 0, 1); !errors.Is(err, ErrNoStatistics) {
		t.Errorf("WriteDropped to a classic pcap file: %v, want ErrNoStatistics", err)
	}
}

// TestDroppedMalformed: an interface statistics block that is too short
// or names an interface the section did not declare is a FormatError;
// one whose drop option has another length than 8 counts nothing. Fails
// when the reader panics or indexes past its interfaces.
func TestDroppedMalformed(t *testing.T) {
	le := binary.LittleEndian
	isb := func(body []byte) []byte {
		b := le.AppendUint32(nil, ngISB)
		b = le.AppendUint32(b, uint32(12+len(body)))
		b = append(b, body...)
		return le.AppendUint32(b, uint32(12+len(body)))
	}
	body := func(id uint32, opt []byte) []byte {
		b := le.AppendUint32(nil, id)
		b = append(b, make([]byte, 8)...)
		return append(b, opt...)
	}
	shortDrop := append(le.AppendUint16(le.AppendUint16(nil, ngOptISBIfDrop), 4), 1, 0, 0, 0)
	for _, c := range []struct {
		name  string
		block []byte
		bad   bool
	}{
		{"too short", isb([]byte{0, 0, 0, 0}), true},
		{"undeclared interface", isb(body(5, nil)), true},
		{"4-byte drop count", isb(body(0, shortDrop)), false},
	} {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, Interface{Point: "tap", Plane: 0})
		w.Flush()
		buf.Write(c.block)
		r, err := NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var f Frame
		err = r.Next(&f)
		var fe *FormatError
		if got := errors.As(err, &fe); got != c.bad || (!c.bad && err != io.EOF) {
			t.Errorf("%s: Next = %v; want a FormatError: %v", c.name, err, c.bad)
		}
		if !c.bad && r.Interfaces()[0].Known {
			t.Errorf("%s: Known with no 8-byte drop count", c.name)
		}
	}
}

// TestDroppedFromDumpcap: the interface statistics block dumpcap writes
// at the end of a capture (isb_ifdrop 0 here) reaches Interface.Dropped:
// the reader understands the block as Wireshark's capture tool writes
// it, not only as this package does. Root (dumpcap captures on lo). The
// capture filter admits only the discard port, which no test uses, so
// that the kernel drops nothing when other tests load lo and the machine
// (275 drops were seen then).
func TestDroppedFromDumpcap(t *testing.T) {
	dumpcap := testenv.LookPath(t, "dumpcap")
	testenv.Root(t)
	file := filepath.Join(t.TempDir(), "lo.pcapng")
	if out, err := exec.Command(dumpcap, "-q", "-i", "lo", "-f", "udp port 9", "-a", "duration:1", "-w", file).CombinedOutput(); err != nil {
		t.Fatalf("dumpcap: %v: %s", err, out)
	}
	r, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readToEnd(t, r)
	if ifs := r.Interfaces(); len(ifs) != 1 || !ifs[0].Known || ifs[0].Dropped != 0 {
		t.Errorf("interfaces %+v: want one, Known, Dropped 0", ifs)
	}
}

// readToEnd reads r's frames to the end of the file, where interface
// statistics come, and returns how many it read.
func readToEnd(t *testing.T, r *Reader) int {
	t.Helper()
	var f Frame
	for n := 0; ; n++ {
		if err := r.Next(&f); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPastInterfacesKeepStatistics: a file of two sections (two captures
// put together with cat) keeps the first section's interfaces, with the
// statistics it gave them at its end, after the second section's header
// declares its own: the first section's losses are not forgotten.
func TestPastInterfacesKeepStatistics(t *testing.T) {
	ts := time.Unix(1700000000, 5)
	section := func(point string, drops map[int]uint64) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Interface{Point: point, Plane: 0}, Interface{Point: point, Plane: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := w.WritePacket(ts, i, make([]byte, 60)); err != nil {
				t.Fatal(err)
			}
		}
		for i, d := range drops {
			if err := w.WriteDropped(ts, i, d); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	file := append(section("hostA", map[int]uint64{1: 5}), section("hostB", map[int]uint64{0: 3})...)
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if n := readToEnd(t, r); n != 4 || r.Section() != 2 {
		t.Fatalf("%d frames in %d sections; want 4 in 2", n, r.Section())
	}
	past, cur := r.PastInterfaces(), r.Interfaces()
	if len(past) != 2 || past[0].Point != "hostA" || past[0].Known || !past[1].Known || past[1].Dropped != 5 {
		t.Errorf("the first section's interfaces %+v; want hostA's two, the second having lost 5", past)
	}
	if len(cur) != 2 || cur[0].Point != "hostB" || cur[0].Dropped != 3 || cur[1].Known {
		t.Errorf("the second section's interfaces %+v; want hostB's two, the first having lost 3", cur)
	}
}

// TestPastInterfacesBounded: the interfaces of ended sections a Reader
// keeps stop at MaxPastInterfaces, however many sections the file holds.
func TestPastInterfacesBounded(t *testing.T) {
	var one bytes.Buffer
	w, err := NewWriter(&one, Interface{Point: "a"}, Interface{Point: "b"}, Interface{Point: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	sections := MaxPastInterfaces/3 + 10
	r, err := NewReader(bytes.NewReader(bytes.Repeat(one.Bytes(), sections)))
	if err != nil {
		t.Fatal(err)
	}
	readToEnd(t, r)
	if r.Section() != sections || len(r.PastInterfaces()) != MaxPastInterfaces {
		t.Errorf("%d sections, %d past interfaces kept; want %d and %d", r.Section(), len(r.PastInterfaces()), sections, MaxPastInterfaces)
	}
}
