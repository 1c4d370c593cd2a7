package conformance

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/fabric/scenario"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// lateUntil is how much of the simulator's loss run the late-frame tests
// capture: 400 us, about 31,000 frames at the taps and 17,000 at node 1's
// ports, enough to put one interface's frames twice MaxReorder late.
const lateUntil = 400 * fabric.Time(1000)

// untilSink passes on the frames of the first lateUntil of a run.
type untilSink struct{ fabric.FrameSink }

func (s untilSink) Frame(f *fabric.Frame) {
	if f.At < lateUntil {
		s.FrameSink.Frame(f)
	}
}

// teeSink gives every frame to each of its sinks.
type teeSink []fabric.FrameSink

func (t teeSink) Open(planes int) error {
	for _, s := range t {
		if err := s.Open(planes); err != nil {
			return err
		}
	}
	return nil
}

func (t teeSink) Frame(f *fabric.Frame) {
	for _, s := range t {
		s.Frame(f)
	}
}

func (t teeSink) Flush() error {
	for _, s := range t {
		if err := s.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// lateSources writes, into dir, the first lateUntil of `mrc-sim run
// -scenario loss -seed 1 -plane-addresses` (one QP, 8 planes, 1 % loss)
// twice: taps.pcapng as the simulator captures it (points tx and rx, an
// interface per plane), and host.pcapng captured on node 1's ports as
// dumpcap would, in time order (-capture-host 1 -capture-run 1: one point,
// interfaces eth1 to eth8). Both are in timestamp order.
func lateSources(t *testing.T, dir string) (taps, host string) {
	t.Helper()
	taps, host = filepath.Join(dir, "taps.pcapng"), filepath.Join(dir, "host.pcapng")
	var ws []*bufio.Writer
	var files []*os.File
	for _, name := range []string{taps, host} {
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		ws = append(ws, bufio.NewWriterSize(f, 1<<20))
	}
	sink := teeSink{untilSink{capture.NewPcapng(ws[0])}, untilSink{capture.NewHost(ws[1], capture.HostConfig{Node: 1, Run: 1})}}
	s, _ := scenario.Lookup("loss")
	if _, err := s.Run(1, scenario.Options{Frames: sink, PlaneAddresses: true}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := files[i].Close(); err != nil {
			t.Fatal(err)
		}
	}
	return taps, host
}

// hostPICS declares the two nodes of the host capture with their address
// on each of the 8 planes, and node 1's ports eth1 to eth8 as one capture
// point at node 1.
func hostPICS(t *testing.T) *PICS {
	t.Helper()
	var nodes, points []string
	for n := range 2 {
		var addrs []string
		for plane := range 8 {
			addrs = append(addrs, fmt.Sprintf("%q", fabric.PlaneAddr(n, plane, true)))
		}
		nodes = append(nodes, fmt.Sprintf("%q: [%s]", fmt.Sprintf("node%d", n), strings.Join(addrs, ", ")))
	}
	for plane := range 8 {
		points = append(points, fmt.Sprintf(`"eth%d": "node1"`, plane+1))
	}
	p, err := ParsePICS([]byte(`{"pics_version": 1, "implementation": {"vendor": "openmrc", "model": "statemachine", "version": "1"},
		"nodes": {` + strings.Join(nodes, ", ") + `},
		"capture": {"points": {` + strings.Join(points, ", ") + `}, "timestamps": "trusted", "from_qp_start": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// delayed copies capture src, in its order, but for the frames of the
// interface named iface: each is written delay frames later than it was
// read (0: the same order). plant, when set, sees each frame before it is
// written (n counts them from 1), may replace its data, and returns
// frames to write after it.
func delayed(t *testing.T, src, iface string, delay int, plant func(n int, f *pcap.Frame) []pcap.Frame) string {
	t.Helper()
	r, err := pcap.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	var w *pcap.Writer
	n := 0
	write := func(f *pcap.Frame) {
		n++
		var more []pcap.Frame
		if plant != nil {
			more = plant(n, f)
		}
		for _, g := range append([]pcap.Frame{*f}, more...) {
			if err := w.WriteFrame(&g); err != nil {
				t.Fatal(err)
			}
		}
		n += len(more)
	}
	type held struct {
		f   pcap.Frame
		due int
	}
	var q []held
	var f pcap.Frame
	id := -1
	for read := 1; r.Next(&f) == nil; read++ {
		if w == nil {
			if w, err = pcap.NewWriter(bw, r.Interfaces()...); err != nil {
				t.Fatal(err)
			}
			for i, in := range r.Interfaces() {
				if in.Name == iface {
					id = i
				}
			}
			if id < 0 {
				t.Fatalf("%s: no interface %s", src, iface)
			}
		}
		for len(q) > 0 && q[0].due <= read {
			write(&q[0].f)
			q = q[1:]
		}
		if f.Interface == id && delay > 0 {
			g := f
			g.Data = append([]byte(nil), f.Data...)
			q = append(q, held{g, read + delay})
			continue
		}
		write(&f)
	}
	for i := range q {
		write(&q[i].f)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// judgeLate judges capture path with p (nil: the default PICS) and jobs
// workers, holding back MaxReorder frames as it does on a stream: a
// capture file is not judged again with a wider window (see
// TestLateFramesWidened).
func judgeLate(t *testing.T, path string, p *PICS, jobs int) *Report {
	t.Helper()
	rep, err := JudgeFile(path, Options{PICS: p, Jobs: jobs, Reorder: MaxReorder})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// verdicts lists a report's per-case verdicts, a line each.
func verdicts(rep *Report) string {
	var b strings.Builder
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "%s %s %d %s\n", r.Case.ID, r.Verdict, r.Checked, r.Reason)
	}
	return b.String()
}

// unflaggedResend returns a plant for delayed: it copies the first write
// (a frame longer than 1000 bytes) written on interface id from the frame
// numbered from, and writes the copy again after the first write of that
// interface written 400 frames or more later, with that frame's
// timestamp: a PSN sent again with rtx clear (WIRE-BTH-5, LR-RTX-3),
// which only the PSN's earlier sending shows. With otherEV, the copy
// takes that write's EV, when it differs from its own, so that it cannot
// be the fabric's duplicate of the first. *at is the copy's frame number.
func unflaggedResend(t *testing.T, id, from int, otherEV bool, at *int) func(n int, f *pcap.Frame) []pcap.Frame {
	var cp pcap.Frame
	found := 0
	return func(n int, f *pcap.Frame) []pcap.Frame {
		switch {
		case *at != 0 || n < from || f.Interface != id || len(f.Data) <= 1000:
		case found == 0:
			cp, found = *f, n
			cp.Data = append([]byte(nil), f.Data...)
		case n >= found+400:
			if otherEV {
				var p, q wire.Packet
				if err := wire.Default.Decode(cp.Data, &p); err != nil {
					t.Fatal(err)
				}
				if err := wire.Default.Decode(f.Data, &q); err != nil {
					t.Fatal(err)
				}
				if q.EV(wire.EVModeSTEV) == p.EV(wire.EVModeSTEV) {
					return nil
				}
				p.SetEV(q.EV(wire.EVModeSTEV), wire.EVModeSTEV)
				b, err := wire.Default.Append(nil, &p)
				if err != nil {
					t.Fatal(err)
				}
				cp.Data = b
			}
			cp.Timestamp, *at = f.Timestamp, n+1
			return []pcap.Frame{cp}
		}
		return nil
	}
}

// badICRC returns a plant for delayed: the first write written on
// interface id from the frame numbered from has a payload byte changed,
// so that its ICRC is bad (WIRE-ICRC-1), which the frame alone shows. *at
// is its frame number.
func badICRC(id, from int, at *int) func(n int, f *pcap.Frame) []pcap.Frame {
	return func(n int, f *pcap.Frame) []pcap.Frame {
		if *at == 0 && n >= from && f.Interface == id && len(f.Data) > 1000 {
			f.Data = append([]byte(nil), f.Data...)
			f.Data[len(f.Data)-100] ^= 0xff
			*at = n
		}
		return nil
	}
}

// findingAt returns case id's finding at frame n, or nil.
func findingAt(rep *Report, id string, n int) *Finding {
	r, ok := rep.Result(id)
	if !ok {
		return nil
	}
	for i := range r.Findings {
		if r.Findings[i].Frame == n {
			return &r.Findings[i]
		}
	}
	return nil
}

// failed lists a report's FAILed cases.
func failed(rep *Report) []string {
	var ids []string
	for _, r := range rep.Results {
		if r.Verdict == Fail {
			ids = append(ids, r.Case.ID)
		}
	}
	return ids
}

// TestLateFrames: frames more than MaxReorder late in the file (one
// interface's frames written 2*MaxReorder frames behind the others', as a
// dumpcap falling behind on one port, or mergecap -a of per-interface
// files, writes them) cannot be judged in their place. On the simulator's
// loss run captured at node 1's ports (one capture point, eth1 to eth8),
// with eth3 late, the judge took SACKs for claims of PSNs never seen
// arriving (MRC-RSP-SACK-001, WIRE-SETH-6 and RSP-RCV-4: 1,287 FAILs at
// fc5ad74) and CC_STATE counters for wrong (MRC-RSP-SACK-005: 339). Now nothing
// FAILs for the misorder: what was judged at that point and not decided
// from a frame alone is INCONCLUSIVE, saying why, with one worker and with
// two; a bad ICRC (WIRE-ICRC-1, decided from the frame alone) still
// FAILs there. The capture in time order gives no such note, and eth3's
// frames MaxReorder/2 late, put back in place, give its verdicts.
func TestLateFrames(t *testing.T) {
	dir := t.TempDir()
	taps, host := lateSources(t, dir)
	p := hostPICS(t)
	inOrder := judgeLate(t, host, p, 1)
	if v := inOrder.Verdict("MRC-RSP-SACK-001"); v != Pass || len(failed(inOrder)) > 0 || strings.Contains(strings.Join(inOrder.Capture.Notes, "\n"), "timestamp order") {
		t.Fatalf("host capture in time order: MRC-RSP-SACK-001 %s, FAILs %v, notes %q; want PASS, none, none about order", v, failed(inOrder), inOrder.Capture.Notes)
	}
	if got, want := verdicts(judgeLate(t, delayed(t, host, "eth3", MaxReorder/2, nil), p, 1)), verdicts(inOrder); got != want {
		t.Errorf("eth3 MaxReorder/2 frames late: verdicts\n%s\nwant those in time order\n%s", got, want)
	}
	const eth1 = 0
	at := 0
	late := delayed(t, host, "eth3", 2*MaxReorder, badICRC(eth1, 3*MaxReorder, &at))
	var reps []*Report
	for _, jobs := range []int{1, 2} {
		rep := judgeLate(t, late, p, jobs)
		reps = append(reps, rep)
		if ids := failed(rep); len(ids) != 1 || ids[0] != "MRC-WIRE-ICRC-001" {
			t.Errorf("jobs %d: FAILed %v; want MRC-WIRE-ICRC-001 alone (the bad ICRC of frame %d)", jobs, ids, at)
		}
		if f := findingAt(rep, "MRC-WIRE-ICRC-001", at); f == nil || f.Verdict != Fail {
			t.Errorf("jobs %d: no FAIL of MRC-WIRE-ICRC-001 at frame %d, whose ICRC is bad", jobs, at)
		}
		for _, id := range []string{"MRC-RSP-SACK-001", "MRC-RSP-SACK-005"} {
			r, ok := rep.Result(id)
			if !ok {
				t.Fatalf("no %s in the report", id)
			}
			if r.Verdict != Inconclusive || !strings.Contains(r.Reason, "capture point eth1 judged") || !strings.Contains(r.Reason, "frames out of timestamp order") {
				t.Errorf("jobs %d: %s %s %q; want INCONCLUSIVE, naming eth1's frames out of timestamp order", jobs, id, r.Verdict, r.Reason)
				continue
			}
			said := slices.ContainsFunc(r.Findings, func(f Finding) bool {
				return strings.Contains(f.Observed, "(undecidable: capture point eth1 judged")
			})
			if !said || slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Verdict == Fail }) {
				t.Errorf("jobs %d: %s's findings %+v; want none FAIL, and those moved saying why", jobs, id, r.Findings)
			}
		}
		if !slices.ContainsFunc(rep.Capture.Notes, func(n string) bool {
			return strings.HasSuffix(n, ` frames at capture point "eth1" were judged out of timestamp order: findings there not decided from a frame alone are INCONCLUSIVE`)
		}) {
			t.Errorf("jobs %d: notes %q; want one naming eth1", jobs, rep.Capture.Notes)
		}
	}
	if a, b := verdicts(reps[0]), verdicts(reps[1]); a != b || !slices.Equal(reps[0].Capture.Notes, reps[1].Capture.Notes) {
		t.Errorf("one worker and two differ:\n%s\n%s", a, b)
	}
	t.Run("other point", func(t *testing.T) { lateOtherPoint(t, taps) })
	t.Run("resend at the late point", func(t *testing.T) { lateResend(t, host, p) })
	t.Run("widened", func(t *testing.T) { lateWidened(t, host, p, late, at) })
}

// lateWidened: judged with the default window (Options.Reorder 0), the
// capture file with eth3's frames 2*MaxReorder late is judged again
// holding back as many frames as they need: its verdicts are those of the
// capture in time order with the same bad ICRC, with one worker and two,
// a note says so, and no frame is judged out of its place.
func lateWidened(t *testing.T, host string, p *PICS, late string, at int) {
	const eth1 = 0
	var at0 int
	// The bad ICRC falls on another PSN's frame in time order: verdicts
	// are compared, not reasons, which name the PSN.
	want := verdictLines(judgeLate(t, delayed(t, host, "eth3", 0, badICRC(eth1, 3*MaxReorder, &at0)), p, 1))
	for _, jobs := range []int{1, 2} {
		rep, err := JudgeFile(late, Options{PICS: p, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if got := verdictLines(rep); !slices.Equal(got, want) {
			t.Errorf("jobs %d: verdicts differ from those in time order:\n%s", jobs, lineDiff(want, got))
		}
		notes := strings.Join(rep.Capture.Notes, "\n")
		if !strings.Contains(notes, "judged again holding back") || strings.Contains(notes, "later timestamp") {
			t.Errorf("jobs %d: notes %q; want the capture judged again, and no frame judged out of its place", jobs, rep.Capture.Notes)
		}
		if f := findingAt(rep, "MRC-WIRE-ICRC-001", at); f == nil || f.Verdict != Fail {
			t.Errorf("jobs %d: no FAIL of MRC-WIRE-ICRC-001 at frame %d, whose ICRC is bad", jobs, at)
		}
	}
}

// ifaceID returns the ID of the interface of capture path named name.
func ifaceID(t *testing.T, path, name string) int {
	t.Helper()
	r, err := pcap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f pcap.Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	for i, in := range r.Interfaces() {
		if in.Name == name {
			return i
		}
	}
	t.Fatalf("%s: no interface %s", path, name)
	return -1
}

// lateOtherPoint: in the simulator's own capture of the loss run (points
// tx and rx), rx/plane5's frames MaxReorder/2 late are put back in place,
// and the verdicts are those of the capture in time order. 2*MaxReorder
// late, rx's frames cannot be, but each node is then judged at tx, whose
// frames were all judged in order (the points' TTLs are equal, and rx's
// timestamps go backwards: before, the first name, rx, was taken, and
// MRC-RSP-SACK-001 FAILed 794 observations there at fc5ad74): the verdicts are
// again those of the capture in time order, and an unflagged resend at tx
// (WIRE-BTH-5, LR-RTX-3) FAILs as it does in the capture in time order.
func lateOtherPoint(t *testing.T, taps string) {
	want := verdicts(judgeLate(t, taps, nil, 1))
	rep := judgeLate(t, delayed(t, taps, "rx/plane5", MaxReorder/2, nil), nil, 1)
	if got := verdicts(rep); got != want || slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "later timestamp") }) {
		t.Errorf("rx/plane5 MaxReorder/2 frames late: verdicts\n%s\nnotes %q; want those in time order\n%s", got, rep.Capture.Notes, want)
	}
	tx := ifaceID(t, taps, "tx/plane0")
	var at0, at int
	want = verdicts(judgeLate(t, delayed(t, taps, "rx/plane5", 0, unflaggedResend(t, tx, 3*MaxReorder, true, &at0)), nil, 1))
	rep = judgeLate(t, delayed(t, taps, "rx/plane5", 2*MaxReorder, unflaggedResend(t, tx, 3*MaxReorder, true, &at)), nil, 1)
	if got := verdicts(rep); got != want {
		t.Errorf("rx/plane5 2*MaxReorder frames late: verdicts\n%s\nwant those in time order\n%s", got, want)
	}
	if f := findingAt(rep, "MRC-LR-RTX-003", at); f == nil || f.Verdict != Fail {
		t.Errorf("the unflagged resend at tx, frame %d: %+v; want a FAIL of MRC-LR-RTX-003", at, f)
	}
	for _, pn := range rep.Capture.PointNodes {
		if pn.Point != "tx" || pn.How != "frames judged in timestamp order" {
			t.Errorf("node %s judged at %s (%s); want tx, whose frames were judged in timestamp order", pn.Node, pn.Point, pn.How)
		}
	}
	if !slices.ContainsFunc(rep.Capture.Notes, func(n string) bool {
		return strings.Contains(n, `at capture point "rx" were judged out of timestamp order`)
	}) {
		t.Errorf("notes %q; want one naming rx", rep.Capture.Notes)
	}
}

// lateResend: a write sent again (unflaggedResend) at node 1's port is a
// packet node 1 never answers (the simulator never sent it): in the host
// capture in time order, MRC-RSP-SACK-006 FAILs it (RSP-SACK-5, RSP-DUP-2:
// every arrival is answered at once). At the point whose frames are judged
// out of order, where its answer may be a frame judged out of its place,
// it is INCONCLUSIVE, and no case FAILs.
func lateResend(t *testing.T, host string, p *PICS) {
	const eth1 = 0
	var at0, at int
	rep := judgeLate(t, delayed(t, host, "eth3", 0, unflaggedResend(t, eth1, 3*MaxReorder, false, &at0)), p, 1)
	if f := findingAt(rep, "MRC-RSP-SACK-006", at0); f == nil || f.Verdict != Fail {
		t.Fatalf("the write sent again in time order, frame %d: %+v; want a FAIL of MRC-RSP-SACK-006", at0, f)
	}
	rep = judgeLate(t, delayed(t, host, "eth3", 2*MaxReorder, unflaggedResend(t, eth1, 3*MaxReorder, false, &at)), p, 1)
	if v := rep.Verdict("MRC-RSP-SACK-006"); v != Inconclusive || len(failed(rep)) > 0 {
		t.Errorf("the write sent again at the late point, frame %d: MRC-RSP-SACK-006 %s, FAILs %v; want INCONCLUSIVE, none", at, v, failed(rep))
	}
}
