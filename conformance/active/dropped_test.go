package active

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/pcap"
)

// dropTarget is a target whose tap counted lost frames (netio.Dropper).
type dropTarget struct {
	Target
	planes  int
	dropped []uint64
}

func (d dropTarget) Planes() int       { return d.planes }
func (d dropTarget) Dropped() []uint64 { return d.dropped }

// TestCaptureRecordsTapDrops: the tester writes each plane's count of
// frames its tap lost into the capture as interface statistics, which the
// reader gives back per interface (the judge then treats findings that
// rest on a packet not seen there as undecidable), and notes the planes
// that lost frames. Fails when the counts are not written, go to the
// wrong interface, or a plane that lost nothing is noted.
func TestCaptureRecordsTapDrops(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "tester", Plane: 0}, pcap.Interface{Point: "tester", Plane: 1})
	if err != nil {
		t.Fatal(err)
	}
	info := &conformance.CaptureInfo{Notes: []string{}}
	if err := writeDropped(w, dropTarget{planes: 2, dropped: []uint64{0, 5}}, info, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var f pcap.Frame
	if err := r.Next(&f); err != io.EOF {
		t.Fatalf("Next = %v, want EOF (no frames)", err)
	}
	ifs := r.Interfaces()
	if len(ifs) != 2 || !ifs[0].Known || ifs[0].Dropped != 0 || !ifs[1].Known || ifs[1].Dropped != 5 {
		t.Errorf("interfaces %+v: want Known, 0 and 5 dropped", ifs)
	}
	if len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "lost 5 frames of plane 1") {
		t.Errorf("notes %q: want one, for plane 1's 5 frames", info.Notes)
	}
}
