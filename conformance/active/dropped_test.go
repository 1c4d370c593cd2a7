package active

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/peer"
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

// losingTarget is the in-process target with a data path that lost
// frames: each Recv adds per to the count LostFrames reports.
type losingTarget struct {
	*Inproc
	per, lost uint64
}

func (l *losingTarget) Recv(deadline Time) (Frame, bool, error) {
	l.lost += l.per
	return l.Inproc.Recv(deadline)
}

func (l *losingTarget) LostFrames() uint64 { return l.lost }

// TestLostFramesUndecideActiveFail: a data case that FAILs while the
// tester's data path lost frames (here, probes never answered) is
// INCONCLUSIVE, its reason and findings saying why, since a frame the
// case never saw may be what it failed for; while nothing was lost the
// FAIL stands. Fails when the runner ignores the target's count.
func TestLostFramesUndecideActiveFail(t *testing.T) {
	const id = "MRC-RSP-PRB-101" // FAILs RSP-PRB-1 against no-probe-answer
	fault, err := peer.ParseFaults("no-probe-answer")
	if err != nil {
		t.Fatal(err)
	}
	for _, per := range []uint64{0, 1} {
		in, err := NewInproc(InprocConfig{Seed: 1, Faults: fault})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), &losingTarget{Inproc: in, per: per}, Options{Cases: id, Today: today, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		want := map[bool]conformance.Verdict{false: conformance.Fail, true: conformance.Inconclusive}[per > 0]
		if r.Verdict != want || (per > 0) != strings.Contains(r.Reason, "the tester's data path lost") {
			t.Errorf("%d lost per frame read: %s: %s; want %s", per, r.Verdict, r.Reason, want)
		}
		for _, f := range r.Findings {
			if per > 0 && f.Verdict == conformance.Fail {
				t.Errorf("a FAIL finding while frames were lost: %+v", f)
			}
		}
	}
}
