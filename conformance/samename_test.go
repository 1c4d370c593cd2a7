package conformance

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/pcap"
)

// hostCapture returns the frames of the simulator's loss capture scenario
// with one address per plane, as dumpcap -i eth1 -i eth2 on node's ports
// writes them (interface 0 eth1 plane 0, 1 eth2 plane 1), in time order.
func hostCapture(t *testing.T, node int) ([]byte, []pcap.Frame) {
	t.Helper()
	c, ok := capture.Lookup("loss")
	if !ok {
		t.Fatal("no capture scenario loss")
	}
	c.Addressing.PlaneAddresses, c.Addressing.Host = true, &capture.HostConfig{Node: node, Run: 1}
	var b bytes.Buffer
	if err := c.Write(1, &b); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var frames []pcap.Frame
	for {
		var f pcap.Frame
		if r.Next(&f) != nil {
			break
		}
		f.Data = slices.Clone(f.Data)
		frames = append(frames, f)
	}
	return b.Bytes(), frames
}

// twoHostCaptures writes, into a directory of the test, the captures of
// nodes 0 and 1 (hostCapture: both name their ports eth1 and eth2) put
// together as a user would put them together: "sections", one file after
// the other (cat a.pcapng b.pcapng: a pcapng section each); "four", one
// section declaring the interfaces of both (mergecap -I none: eth1, eth2,
// eth1, eth2), frames in time order; "merged", one section whose eth1 and
// eth2 hold the frames of both nodes' eth1 and eth2 (mergecap's default,
// which merges interfaces alike); "late", the sections of "sections" with
// the first padded (padded) so that the second begins past the frames the
// judge reads ahead to place interfaces.
func twoHostCaptures(t *testing.T) map[string]string {
	t.Helper()
	rawA, a := hostCapture(t, 0)
	rawB, b := hostCapture(t, 1)
	dir := t.TempDir()
	out := map[string]string{}
	save := func(name string, data []byte) {
		p := filepath.Join(dir, name+".pcapng")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	save("sections", append(slices.Clone(rawA), rawB...))
	merge := func(names []string, shift int) []byte {
		var ifs []pcap.Interface
		for _, n := range names {
			ifs = append(ifs, pcap.Interface{Name: n})
		}
		var buf bytes.Buffer
		w, err := pcap.NewWriter(&buf, ifs...)
		if err != nil {
			t.Fatal(err)
		}
		all := slices.Clone(a)
		for _, f := range b {
			f.Interface += shift
			all = append(all, f)
		}
		slices.SortStableFunc(all, func(x, y pcap.Frame) int { return x.Timestamp.Compare(y.Timestamp) })
		for _, f := range all {
			if err := w.WritePacket(f.Timestamp, f.Interface, f.Data); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	save("four", merge([]string{"eth1", "eth2", "eth1", "eth2"}, 2))
	save("merged", merge([]string{"eth1", "eth2"}, 0))
	save("late", append(padded(t, a), rawB...))
	return out
}

// padded writes frames (hostCapture's) as one section, followed by
// learnWindow ARP frames on eth1, so that a section after it begins past
// the frames the judge reads ahead at the capture's start.
func padded(t *testing.T, frames []pcap.Frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Name: "eth1"}, pcap.Interface{Name: "eth2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := w.WritePacket(f.Timestamp, f.Interface, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	arp := make([]byte, 60)
	arp[12], arp[13] = 0x08, 0x06
	last := frames[len(frames)-1].Timestamp
	for i := range learnWindow {
		if err := w.WritePacket(last.Add(time.Duration(i+1)*time.Microsecond), 0, arp); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSameNamedInterfacesTwoHosts (issue 12: interface names are whatever
// the capture tool wrote): two hosts captured with dumpcap both name their
// ports eth1 and eth2. Put together in one capture, host 0's eth1 and host
// 1's eth1 are two capture points, never one: one would mix what one host
// sends with what the other receives: before, one host's sending copy of
// a write and the other's receiving copy at one point were a first
// transmission seen again without rtx (WIRE-BTH-5, MRC-LR-RTX-003 FAIL),
// and SACKs claimed PSNs the mixed point's flows had not seen arrive
// (RSP-RCV-4, MRC-RSP-SACK-001 FAIL). The simulator's endpoints conform,
// so no MUST case FAILs (under the default PICS each host alone PASSes).
// Where the file keeps the interfaces apart (a section per host, or four
// interfaces), each is a capture point of its own; where it merged them
// (mergecap's default), the judge cannot tell the two hosts' frames apart
// and says so in a capture note, and judges there neither failures nor
// passes that a frame alone does not decide.
func TestSameNamedInterfacesTwoHosts(t *testing.T) {
	files := twoHostCaptures(t)
	for _, name := range []string{"sections", "four", "merged", "late"} {
		for _, jobs := range []int{1, 2} {
			rep, err := JudgeFile(files[name], Options{Today: testDay, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if r.Verdict == Fail {
					t.Errorf("%s, %d jobs: %s FAIL (%s); notes %q", name, jobs, r.Case.ID, r.Reason, rep.Capture.Notes)
				}
			}
			if name == "merged" {
				if !slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "two capture points") }) {
					t.Errorf("%s, %d jobs: no note that an interface holds two capture points' frames; notes %q", name, jobs, rep.Capture.Notes)
				}
				// A pass may rest on the other host's copy of a frame (a
				// SACK's claim on its copy of a write, RSP-RCV-4; feedback
				// on the arrival plane, EV-REV-4): no pass either.
				for _, r := range rep.Results {
					if r.Verdict == Pass {
						t.Errorf("%s, %d jobs: %s PASS (%s), want none", name, jobs, r.Case.ID, r.Reason)
					}
				}
				continue
			}
			// Each host's ports are one point, learnt from the traffic, a
			// plane each; the two hosts' are two points.
			var got []string
			for _, in := range rep.Capture.Interfaces {
				got = append(got, fmt.Sprintf("%s %s/%d", in.Name, in.Point, in.Plane))
			}
			if want := []string{"eth1 eth1/0", "eth2 eth1/1", "eth1 eth1#2/0", "eth2 eth1#2/1"}; !slices.Equal(got, want) {
				t.Errorf("%s, %d jobs: interfaces %q, want %q", name, jobs, got, want)
			}
			// Each host is judged at its own point: the one that saw its
			// frames first (the other host's sees them after the fabric).
			// In "late", the second section's frames are judged out of
			// timestamp order, so its point's times do not decide.
			if name == "late" {
				continue
			}
			var at []string
			for _, pn := range rep.Capture.PointNodes {
				at = append(at, pn.Node+" "+pn.Point)
			}
			if want := []string{"fd00:1::1 eth1", "fd00:1::2 eth1#2"}; !slices.Equal(at, want) {
				t.Errorf("%s, %d jobs: nodes at %q, want %q", name, jobs, at, want)
			}
		}
	}
}

// TestSameNamedInterfacesPICS: a PICS places each of two hosts' interfaces
// of one name by the name the judge gives it (eth1, then eth1#2, the
// report's capture.interfaces[].point): each host's ports are one capture
// point at that host, each a plane, and no MUST case FAILs.
func TestSameNamedInterfacesPICS(t *testing.T) {
	files := twoHostCaptures(t)
	p, err := ParsePICS([]byte(`{"pics_version": 1, "ev_mode": "stev",
		"nodes": {"node0": ["fd00:0::1", "fd00:1::1"], "node1": ["fd00:0::2", "fd00:1::2"]},
		"capture": {"points": {"eth1": "node0", "eth2": "node0", "eth1#2": "node1", "eth2#2": "node1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sections", "four", "late"} {
		for _, jobs := range []int{1, 2} {
			rep, err := JudgeFile(files[name], Options{PICS: p, Today: testDay, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if r.Verdict == Fail {
					t.Errorf("%s, %d jobs: %s FAIL (%s)", name, jobs, r.Case.ID, r.Reason)
				}
			}
			var got []string
			for _, in := range rep.Capture.Interfaces {
				got = append(got, fmt.Sprintf("%s %s/%d", in.Name, in.Point, in.Plane))
			}
			if want := []string{"eth1 eth1/0", "eth2 eth1/1", "eth1 eth1#2/0", "eth2 eth1#2/1"}; !slices.Equal(got, want) {
				t.Errorf("%s, %d jobs: interfaces %q, want %q", name, jobs, got, want)
			}
			var at []string
			for _, pn := range rep.Capture.PointNodes {
				at = append(at, pn.Node+" "+pn.Point+" "+pn.How)
			}
			if want := []string{"node0 eth1 declared", "node1 eth1#2 declared"}; !slices.Equal(at, want) {
				t.Errorf("%s, %d jobs: nodes at %q, want %q", name, jobs, at, want)
			}
			if len(rep.Connections) != 2 {
				t.Errorf("%s, %d jobs: %d connections, want one QP pair's 2", name, jobs, len(rep.Connections))
			}
		}
	}
}

// TestEvidenceFramesWherePlaced: a frame the evidence names is shown at
// the capture point and plane the judge placed its interface at, as its
// findings are ("at eth1 plane 1"), not at those its name alone gives:
// dumpcap-loss's eth2 is plane 1 of point eth1 (learnt from the traffic),
// and, that capture twice (cat: a pcapng section each), the second
// section's eth1 is point eth1#2 (its pcapng section's interfaces are
// numbered after the first's).
func TestEvidenceFramesWherePlaced(t *testing.T) {
	const capture = "../pcap/testdata/scenarios/dumpcap-loss.pcapng"
	raw, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	twice := filepath.Join(t.TempDir(), "twice.pcapng")
	if err := os.WriteFile(twice, append(slices.Clone(raw), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{capture, twice} {
		rep, err := JudgeFile(file, Options{Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		placed := map[[2]any]bool{}
		for _, in := range rep.Capture.Interfaces {
			placed[[2]any{in.Point, in.Plane}] = true
		}
		if len(rep.Frames) == 0 {
			t.Fatalf("%s: no evidence frames", file)
		}
		for _, f := range rep.Frames {
			if !placed[[2]any{f.Point, f.Plane}] {
				t.Errorf("%s: frame %d at %s plane %d, not where an interface is placed (%+v)", file, f.Number, f.Point, f.Plane, rep.Capture.Interfaces)
			}
		}
	}
	c := CaptureInfo{Interfaces: []Interface{{ID: 0, Point: "eth1", Plane: 0}, {ID: 1, Point: "eth1", Plane: 1},
		{ID: 2, Point: "eth1#2", Plane: 0}, {ID: 3, Point: "eth1#2", Plane: 1}}, bases: []int{0, 0, 2}}
	for _, k := range []struct {
		section, id int
		point       string
		ok          bool
	}{{1, 0, "eth1", true}, {2, 0, "eth1#2", true}, {2, 1, "eth1#2", true}, {3, 0, "", false}, {2, 2, "", false}} {
		if v, ok := c.placed(k.section, k.id); ok != k.ok || v.Point != k.point {
			t.Errorf("section %d interface %d placed at %q (%v), want %q (%v)", k.section, k.id, v.Point, ok, k.point, k.ok)
		}
	}
}

// TestInterfaceNamesUnique: the names the judge gives interfaces are
// unique whatever names the capture tool wrote, one of them eth1#2 too.
func TestInterfaceNamesUnique(t *testing.T) {
	var ifs []pcap.Interface
	for _, n := range []string{"eth1", "eth1#2", "eth1", "host0/plane0", "eth1#2", "host0/plane0"} {
		pt, pl := pcap.ParseInterfaceName(n) // as the reader places them
		ifs = append(ifs, pcap.Interface{Name: n, Point: pt, Plane: pl})
	}
	var tab ifaceTable
	tab.declare(1, ifs, noTime)
	var got []string
	for _, in := range tab.all {
		got = append(got, in.Name+" "+in.Point)
	}
	want := []string{"eth1 eth1", "eth1#2 eth1#2", "eth1#3 eth1#3", "host0/plane0 host0", "eth1#2#2 eth1#2#2", "host0/plane0#2 host0#2"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestEarlierSectionLossesCounted (RSP-RCV-4; formats.md, interface
// statistics): in a file of two hosts' captures put together (a section
// each), the losses the first section's statistics report count at its
// interface, as the last section's do: the report gives them and notes
// that findings there not decided from a frame alone are INCONCLUSIVE.
// Before, only the last section's statistics were read, and the first
// host's losses were forgotten.
func TestEarlierSectionLossesCounted(t *testing.T) {
	rawA, a := hostCapture(t, 0)
	rawB, _ := hostCapture(t, 1)
	r, err := pcap.NewReader(bytes.NewReader(rawA))
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(&pcap.Frame{}) == nil {
	}
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, r.Interfaces()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a {
		if err := w.WritePacket(f.Timestamp, f.Interface, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteDropped(a[len(a)-1].Timestamp, 1, 17); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sections-lost.pcapng")
	if err := os.WriteFile(path, append(buf.Bytes(), rawB...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(path, Options{Today: testDay, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Capture.Interfaces) != 4 || rep.Capture.Interfaces[1].Dropped != 17 {
			t.Errorf("%d jobs: interfaces %+v; want 4, the first section's second having lost 17", jobs, rep.Capture.Interfaces)
		}
		noted := slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "lost 17 frames") })
		if !noted {
			t.Errorf("%d jobs: no note of the 17 frames lost: %q", jobs, rep.Capture.Notes)
		}
	}
}

// TestAnnotatedSectionsKeepInterfaces: the annotated copy of a file of
// two sections (two hosts' captures put together) is one section that
// declares every section's interfaces, and each frame stays on its own:
// host 1's frames on interfaces 2 and 3, named as the file named them.
// Before, the copy declared the last section's interfaces only and put
// host 0's frames on them.
func TestAnnotatedSectionsKeepInterfaces(t *testing.T) {
	path := twoHostCaptures(t)["sections"]
	var ann bytes.Buffer
	if _, err := JudgeFile(path, Options{Today: testDay, Annotate: &ann}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	in, _ := readFrames(t, path)
	r, err := pcap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f pcap.Frame
	for r.Next(&f) == nil {
		want[fmt.Sprintf("%d %s", r.Section(), r.Interface(f.Interface).Name)]++
	}
	ar, err := pcap.NewReader(bytes.NewReader(ann.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	n := 0
	for ar.Next(&f) == nil {
		n++
		got[fmt.Sprintf("%d %s", 1+f.Interface/2, ar.Interface(f.Interface).Name)]++
	}
	if n != len(in) || ar.Section() != 1 || len(ar.Interfaces()) != 4 || !maps.Equal(got, want) {
		t.Errorf("annotated copy: %d frames in %d sections over %d interfaces, by section and name %v; want %d in 1 over 4, %v", n, ar.Section(), len(ar.Interfaces()), got, len(in), want)
	}
}

// TestRingFilesPutTogether (issue 12: interface names are whatever the
// capture tool wrote): one host's capture cut in two files, as dumpcap's
// ring buffer writes them, and put together with cat, is two sections
// whose interfaces have the same names and whose frames follow on: they
// are the same interfaces, so the file judges as the whole capture does,
// with a note. Before, the second file's interfaces were taken as another
// host's (eth1#2) and MRC-RSP-SACK-001 FAILed: the SACKs at one point
// claimed PSNs that arrived at the other.
func TestRingFilesPutTogether(t *testing.T) {
	rawA, a := hostCapture(t, 0)
	r, err := pcap.NewReader(bytes.NewReader(rawA))
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(&pcap.Frame{}) == nil {
	}
	ifs := r.Interfaces()
	dir := t.TempDir()
	whole := writeCapture(t, dir, "whole.pcapng", ifs, a)
	half := len(a) / 2
	p1 := writeCapture(t, dir, "ring1.pcapng", ifs, a[:half])
	p2 := writeCapture(t, dir, "ring2.pcapng", ifs, a[half:])
	var cat []byte
	for _, p := range []string{p1, p2} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cat = append(cat, b...)
	}
	ring := filepath.Join(dir, "ring.pcapng")
	if err := os.WriteFile(ring, cat, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := JudgeFile(whole, Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(ring, Options{Today: testDay, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if got, w := verdictLines(rep), verdictLines(want); !slices.Equal(got, w) {
			t.Errorf("%d jobs: the two files put together judge otherwise than the whole capture:\n%s", jobs, lineDiff(w, got))
		}
		var points []string
		for _, in := range rep.Capture.Interfaces {
			points = append(points, in.Name+" "+in.Point)
		}
		if !slices.Equal(points, []string{"eth1 eth1", "eth2 eth1", "eth1 eth1", "eth2 eth1"}) {
			t.Errorf("%d jobs: interfaces at %q, want both files' eth1 and eth2 at point eth1", jobs, points)
		}
		if !slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "ring buffer") }) {
			t.Errorf("%d jobs: no note of the files put together: %q", jobs, rep.Capture.Notes)
		}
	}
}

// TestRingFilesMergedApart: one capture's ring-buffer files joined with
// mergecap -I none make one section whose interfaces of one name stay
// apart (eth1, eth2, eth1, eth2): the second file's are another capture
// point, where a PSN that arrived in the first file is unseen. A failure
// resting on such a packet is INCONCLUSIVE, with a note that says how to
// put the files together, never a FAIL: before, under the capture's PICS
// (capture.from_qp_start), SACKs claiming PSNs that arrived before the
// second file began FAILed MRC-RSP-SACK-001 (67 findings). Two hosts'
// captures joined so ("four"), which overlap in time, get no such note.
func TestRingFilesMergedApart(t *testing.T) {
	a, ifs := readFrames(t, "../pcap/testdata/scenarios/dumpcap-loss.pcapng")
	half := len(a) / 2
	for i := half; i < len(a); i++ {
		a[i].Interface += len(ifs)
	}
	merged := writeCapture(t, t.TempDir(), "inone.pcapng", append(slices.Clone(ifs), ifs...), a)
	p, err := LoadPICS("testdata/dumpcap-loss.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	split := func(n string) bool {
		return strings.Contains(n, "mergecap -I none") && strings.Contains(n, "began after")
	}
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(merged, Options{Today: testDay, Jobs: jobs, PICS: p})
		if err != nil {
			t.Fatal(err)
		}
		why := 0
		for _, r := range rep.Results {
			if r.Verdict == Fail {
				t.Errorf("%d jobs: %s FAIL (%s)", jobs, r.Case.ID, r.Reason)
			}
			if r.Verdict == Inconclusive && strings.Contains(r.Reason, "began after") {
				why++
			}
		}
		if why == 0 {
			t.Errorf("%d jobs: no INCONCLUSIVE verdict gives the interfaces one after the other as its reason", jobs)
		}
		if !slices.ContainsFunc(rep.Capture.Notes, split) {
			t.Errorf("%d jobs: no note of one name's interfaces one after the other; notes %q", jobs, rep.Capture.Notes)
		}
	}
	rep, err := JudgeFile(twoHostCaptures(t)["four"], Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rep.Capture.Notes, split); i >= 0 {
		t.Errorf("two hosts' captures, which overlap in time: note %q", rep.Capture.Notes[i])
	}
}

// TestMixedPastFirstFrames: two hosts' captures merged by mergecap's
// default (their eth1 and eth2 made one each) whose first 1024 frames show
// no MRC write (here other traffic first; as well, one host's capture
// begun later) are still found to carry two capture points' frames, from
// each connection's runs of first transmissions seen again as they were
// (countCopy): no FAIL and no PASS that may rest on the other host's copy,
// and a note. Before, MRC-RSP-SACK-001 FAILed (119 of 299 observations).
// One host's capture, so padded, gets no such note.
func TestMixedPastFirstFrames(t *testing.T) {
	_, a := hostCapture(t, 0)
	_, b := hostCapture(t, 1)
	arp := make([]byte, 60)
	arp[12], arp[13] = 0x08, 0x06
	pad := func(hosts ...[]pcap.Frame) []pcap.Frame {
		var all []pcap.Frame
		for i := range learnWindow + 64 {
			all = append(all, pcap.Frame{Timestamp: a[0].Timestamp.Add(time.Duration(i) * time.Microsecond), Data: arp})
		}
		for _, h := range hosts {
			for _, f := range h {
				f.Timestamp = f.Timestamp.Add(2 * time.Millisecond)
				all = append(all, f)
			}
		}
		slices.SortStableFunc(all, func(x, y pcap.Frame) int { return x.Timestamp.Compare(y.Timestamp) })
		return all
	}
	ifs := []pcap.Interface{{Name: "eth1", LinkType: pcap.LinkTypeEthernet}, {Name: "eth2", LinkType: pcap.LinkTypeEthernet}}
	dir := t.TempDir()
	two := func(n string) bool { return strings.Contains(n, "two capture points") }
	merged := writeCapture(t, dir, "merged.pcapng", ifs, pad(a, b))
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(merged, Options{Today: testDay, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Verdict == Fail || r.Verdict == Pass {
				t.Errorf("%d jobs: %s %s (%s)", jobs, r.Case.ID, r.Verdict, r.Reason)
			}
		}
		if !slices.ContainsFunc(rep.Capture.Notes, two) {
			t.Errorf("%d jobs: no note that an interface holds two capture points' frames; notes %q", jobs, rep.Capture.Notes)
		}
	}
	rep, err := JudgeFile(writeCapture(t, dir, "one.pcapng", ifs, pad(a)), Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rep.Capture.Notes, two); i >= 0 {
		t.Errorf("one host's capture: note %q", rep.Capture.Notes[i])
	}
}
