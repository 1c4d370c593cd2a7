package conformance

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// readFrames reads every frame of a capture file, each with its own copy
// of its data, and its interfaces.
func readFrames(t testing.TB, name string) ([]pcap.Frame, []pcap.Interface) {
	t.Helper()
	r, err := pcap.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []pcap.Frame
	for {
		var f pcap.Frame
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Data = bytes.Clone(f.Data)
		f.Comments = nil
		out = append(out, f)
	}
	return out, slices.Clone(r.Interfaces())
}

// writeCapture writes frames to a pcapng file in dir, declaring ifaces
// (by name and link type) in order, and returns its path. A frame keeps
// its length on the wire (Length; 0: its bytes').
func writeCapture(t *testing.T, dir, name string, ifaces []pcap.Interface, frames []pcap.Frame) string {
	t.Helper()
	var decl []pcap.Interface
	for _, in := range ifaces {
		decl = append(decl, pcap.Interface{Name: in.Name, LinkType: in.LinkType})
	}
	var b bytes.Buffer
	w, err := pcap.NewWriter(&b, decl...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		f := pcap.Frame{Timestamp: frames[i].Timestamp, Interface: frames[i].Interface, Length: frames[i].Length, Data: frames[i].Data}
		if err := w.WriteFrame(&f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// interleavings returns the frames of a two-interface capture as three
// capture tools could write them: each interface whole, interface 1
// first, declared first (mergecap -a of one file per interface); in time
// order with frames of equal timestamps interface 1 first (mergecap of
// them); in time order, interface 0 first.
func interleavings(frames []pcap.Frame, ifaces []pcap.Interface) map[string][]pcap.Frame {
	swap := func(fs []pcap.Frame) []pcap.Frame {
		out := slices.Clone(fs)
		for i := range out {
			out[i].Interface = 1 - out[i].Interface
		}
		return out
	}
	var if0, if1 []pcap.Frame
	for _, f := range frames {
		if f.Interface == 0 {
			if0 = append(if0, f)
		} else {
			if1 = append(if1, f)
		}
	}
	timeOrder := func(first, second []pcap.Frame) []pcap.Frame {
		out := append(slices.Clone(first), second...)
		slices.SortStableFunc(out, func(a, b pcap.Frame) int { return a.Timestamp.Compare(b.Timestamp) })
		return out
	}
	return map[string][]pcap.Frame{
		"appended-1-then-0":  swap(append(slices.Clone(if1), if0...)),
		"time-order-1-first": timeOrder(if1, if0),
		"time-order-0-first": timeOrder(if0, if1),
	}
}

// caseLines lists each case's verdict, observation and finding counts.
func caseLines(rep *Report) []string {
	var out []string
	for _, r := range rep.Results {
		out = append(out, fmt.Sprintf("%s %s checked=%d findings=%d", r.Case.ID, r.Verdict, r.Checked, r.FindingCount))
	}
	return out
}

// TestJudgeTiesIndependentOfInterleaving: frames Frames of one clock tick
// on two interfaces (dumpcap-loss: node 1's two ports; a data arrival and
// its SACK share a timestamp, and so do the two planes') have no order
// the capture shows, so how a capture tool interleaves the interfaces
// (runs per interface, one interface after the other, time order with
// either first at equal timestamps) changes no verdict, no count of
// observations and no finding, with nanosecond timestamps and with
// timestamps cut to microseconds (dumpcap's default resolution, where
// more frames share a tick). A SACK's cack_psn "moved backward" when the
// two planes' SACKs of one tick were taken in the file's order (frame
// 258, cack_psn 28 after 32).
func TestJudgeTiesIndependentOfInterleaving(t *testing.T) {
	src := "../pcap/testdata/scenarios/dumpcap-loss.pcapng"
	frames, ifaces := readFrames(t, src)
	if len(ifaces) != 2 {
		t.Fatalf("%d interfaces", len(ifaces))
	}
	dir := t.TempDir()
	for _, res := range []time.Duration{time.Nanosecond, time.Microsecond} {
		fs := slices.Clone(frames)
		for i := range fs {
			fs[i].Timestamp = fs[i].Timestamp.Truncate(res)
		}
		variants := interleavings(fs, ifaces)
		variants["as-written"] = fs
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range variants {
				if !yield(k) {
					return
				}
			}
		})
		for _, pics := range []string{"default", "own"} {
			var want []string
			var wantName string
			for _, v := range names {
				decl := ifaces
				if strings.HasPrefix(v, "appended") {
					decl = []pcap.Interface{ifaces[1], ifaces[0]}
				}
				p := writeCapture(t, dir, fmt.Sprintf("%s-%s.pcapng", v, res), decl, variants[v])
				opts := Options{Today: testDay}
				if pics == "own" {
					pp, err := LoadPICS("testdata/dumpcap-loss.pics.json")
					if err != nil {
						t.Fatal(err)
					}
					opts.PICS = pp
				}
				rep, err := JudgeFile(p, opts)
				if err != nil {
					t.Fatal(err)
				}
				got := caseLines(rep)
				if want == nil {
					want, wantName = got, v
					continue
				}
				if d := lineDiff(want, got); d != "" {
					t.Errorf("%s resolution, %s PICS: %s judged otherwise than %s:\n%s", res, pics, v, wantName, d)
				}
			}
		}
	}
}
