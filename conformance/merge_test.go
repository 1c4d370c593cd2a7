package conformance

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// TestMergerRuns: two interfaces written in runs of 5 frames, out of time
// order across them (as dumpcap writes), come out in timestamp order with
// each interface's own order kept, and the window bounds what is held.
func TestMergerRuns(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var in [2]pcap.Interface
	var out []int
	emit := func(f *pcap.Frame, _ *pcap.Interface) { out = append(out, int(f.Timestamp.Sub(t0))) }
	var m merger
	n := 0
	for run := 0; run < 40; run++ {
		id := run % 2
		base := (run / 2) * 10
		for k := 0; k < 5; k++ {
			n++
			ts := base + 2*k + id // interface 0 even, 1 odd nanoseconds
			f := pcap.Frame{Number: n, Timestamp: t0.Add(time.Duration(ts)), Interface: id, Data: []byte{byte(n)}}
			m.push(&f, &in[id], 2, emit)
			if m.held > MaxReorder {
				t.Fatalf("%d frames held", m.held)
			}
		}
	}
	m.flush(emit)
	if len(out) != n {
		t.Fatalf("%d frames out of %d", len(out), n)
	}
	for i := range out {
		if out[i] != i {
			t.Fatalf("frame %d has time %d: %v", i, out[i], out[:min(len(out), i+5)])
		}
	}
	if m.late != 0 {
		t.Errorf("%d late frames", m.late)
	}
	// Steady state: pushing more frames allocates nothing.
	data := []byte{1, 2, 3}
	var f pcap.Frame
	allocs := testing.AllocsPerRun(1000, func() {
		n++
		f = pcap.Frame{Number: n, Timestamp: t0.Add(time.Duration(1000 + n)), Interface: n % 2, Data: data}
		m.push(&f, &in[n%2], 2, emit)
		out = out[:0]
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per frame", allocs)
	}
}

// tieTestFrame is a frame of TestMergerTies*: its interface, and the
// tie key its one data byte stands for.
type tieTestFrame struct {
	id  int
	key tieKey
}

// mergeTies pushes frames, all at one timestamp, in file order (their
// Number is their index plus one) and returns the Numbers in the order
// the merger emits them.
func mergeTies(frames []tieTestFrame) []int {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var in [2]pcap.Interface
	m := merger{key: func(f *pcap.Frame, _ *pcap.Interface) tieKey { return frames[f.Data[0]].key }}
	var out []int
	emit := func(f *pcap.Frame, _ *pcap.Interface) { out = append(out, f.Number) }
	for i, fr := range frames {
		f := pcap.Frame{Number: i + 1, Timestamp: t0, Interface: fr.id, Data: []byte{byte(i)}}
		m.push(&f, &in[fr.id], 2, emit)
	}
	m.flush(emit)
	return out
}

// TestMergerTiesSendBeforeArrivals: at one capture point, in one clock
// tick, interface 0 holds an arrival (PSN 1), a SACK its node sends
// (claiming PSN 1), then arrivals (PSNs 5, 6); interface 1 holds arrivals
// (PSNs 3, 4, 7). Arrivals go before sends, but the SACK goes before the
// arrivals behind it on its own interface, so no arrival overtakes one of
// a lower PSN (the in-process run's capture, 2026-12-01: PSN 7 before 5
// and 6 made first transmissions resends). The order is the same whether
// the file holds the frames in that order or interface by interface.
func TestMergerTiesSendBeforeArrivals(t *testing.T) {
	arr := func(id int, psn uint32) tieTestFrame {
		return tieTestFrame{id, tieKey{rank: 0, mrc: true, pos: psn, qp: 0x101}}
	}
	sack := tieTestFrame{0, tieKey{rank: 1, mrc: true, kind: seqCum, pos: 1, qp: 0x201}}
	inOrder := []tieTestFrame{arr(0, 1), sack, arr(1, 3), arr(1, 4), arr(0, 5), arr(0, 6), arr(1, 7)}
	byIface := []tieTestFrame{arr(1, 3), arr(1, 4), arr(1, 7), arr(0, 1), sack, arr(0, 5), arr(0, 6)}
	psns := func(frames []tieTestFrame, order []int) []string {
		var out []string
		for _, n := range order {
			k := frames[n-1].key
			out = append(out, fmt.Sprintf("%d:%d", k.kind, k.pos))
		}
		return out
	}
	want := []string{"0:1", "0:3", "0:4", "1:1", "0:5", "0:6", "0:7"}
	for name, frames := range map[string][]tieTestFrame{"in order": inOrder, "by interface": byIface} {
		if got := psns(frames, mergeTies(frames)); !slices.Equal(got, want) {
			t.Errorf("%s: frames (kind:pos) came out as %v, want %v", name, got, want)
		}
	}
}

// TestMergerTiesFeedbackByClaim: two SACKs of one clock tick on two
// planes, claiming up to PSN 28 (interface 0) and 32 (interface 1), come
// out in the order of their claims whichever the file holds first: in
// the file's order, cack_psn 28 after 32 "moved backward" (MRC-RSP-SACK-001
// on dumpcap-loss rejoined by mergecap -a).
func TestMergerTiesFeedbackByClaim(t *testing.T) {
	s28 := tieTestFrame{0, tieKey{rank: 1, mrc: true, kind: seqCum, pos: 28}}
	s32 := tieTestFrame{1, tieKey{rank: 1, mrc: true, kind: seqCum, pos: 32}}
	for _, frames := range [][]tieTestFrame{{s28, s32}, {s32, s28}} {
		out := mergeTies(frames)
		if first := frames[out[0]-1].key.pos; first != 28 {
			t.Errorf("file order %v: the SACK claiming %d came first", []uint32{frames[0].key.pos, frames[1].key.pos}, first)
		}
	}
}

// TestMergerSilentStartByReference: a capture file whose second interface
// is silent for its first 12 MiB (the incast simulator capture: receivers
// see nothing until the first frames cross the fabric) keeps every frame
// the merger holds meanwhile by reference, through the judge's releases:
// copied, they would be 12 MiB of fresh memory before any frame is judged.
func TestMergerSilentStartByReference(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var in [2]pcap.Interface
	emitted := 0
	emit := func(*pcap.Frame, *pcap.Interface) { emitted++ }
	m := merger{stable: true}
	const size = 4 << 10
	data := make([]byte, size)
	var rl releaser
	var off int64
	n := 0
	for ; off < 12<<20; off += size {
		n++
		f := pcap.Frame{Number: n, Timestamp: t0.Add(time.Duration(n)), Interface: 0, Data: data, Offset: off}
		m.push(&f, &in[0], 2, emit)
		if off >= rl.next { // as judgeSequential releases
			m.unpinOldest(off-pinSpan, off)
			rl.next = off + releaseStep
		}
	}
	if emitted != 0 || m.held != n {
		t.Fatalf("%d frames emitted, %d held, before the second interface's first: want 0 and %d", emitted, m.held, n)
	}
	copied := 0
	for i := range m.nslots {
		if m.blocks[i/slotBlock][i%slotBlock].own {
			copied++
		}
	}
	if copied != 0 {
		t.Errorf("%d of the %d frames held were copied", copied, n)
	}
	f := pcap.Frame{Number: n + 1, Timestamp: t0.Add(time.Duration(n + 1)), Interface: 1, Data: data, Offset: off}
	m.push(&f, &in[1], 2, emit)
	if emitted != n {
		t.Errorf("%d frames emitted once both interfaces had one, want %d", emitted, n)
	}
}

// TestMergerTiesSequencePerNodePair: one clock tick carries two senders'
// writes to one QP number (the simulator's incast capture starts with
// 2,928 frames at time 0, its senders' QPs all 0x101) spread over three
// interfaces. Each sender's writes come out in PSN order: a head waits
// while another interface holds an earlier PSN of its own sender, and the
// other sender's PSNs say nothing about it.
func TestMergerTiesSequencePerNodePair(t *testing.T) {
	w := func(id int, pair uint64, psn uint32) tieTestFrame {
		return tieTestFrame{id, tieKey{rank: 1, mrc: true, pos: psn, qp: 0x101, pair: pair}}
	}
	frames := []tieTestFrame{
		w(0, 2, 359), w(1, 2, 360), w(2, 2, 361),
		w(0, 1, 0), w(1, 1, 1), w(1, 1, 2), w(2, 1, 3), w(0, 1, 5), w(2, 1, 4), w(1, 1, 6),
		w(2, 2, 362), w(0, 2, 363),
	}
	last := map[uint64]uint32{}
	seen := map[uint64]bool{}
	for _, n := range mergeTies3(frames) {
		k := frames[n-1].key
		if seen[k.pair] && !psnAfter(k.pos, last[k.pair]) {
			t.Fatalf("sender %d: PSN %d after %d", k.pair, k.pos, last[k.pair])
		}
		last[k.pair], seen[k.pair] = k.pos, true
	}
}

// mergeTies3 is mergeTies over three interfaces.
func mergeTies3(frames []tieTestFrame) []int {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var in [3]pcap.Interface
	m := merger{key: func(f *pcap.Frame, _ *pcap.Interface) tieKey { return frames[f.Data[0]].key }}
	var out []int
	emit := func(f *pcap.Frame, _ *pcap.Interface) { out = append(out, f.Number) }
	for i, fr := range frames {
		f := pcap.Frame{Number: i + 1, Timestamp: t0, Interface: fr.id, Data: []byte{byte(i)}}
		m.push(&f, &in[fr.id], 3, emit)
	}
	m.flush(emit)
	return out
}

// TestMergerTiesPointsByName: frames of one clock tick at several capture
// points come out point by point, by the points' names, whatever order
// the interfaces are declared or the points first met in; each point's
// frames in its interface's order (the frames are alike, so that the
// interfaces' declared order decides within a point). The points are met
// in the tick itself, each ranking the ones met before it again: ranks
// read while the tick's points were still being met put c between b's
// interfaces (and, on the incast capture, a SACK before an earlier one).
func TestMergerTiesPointsByName(t *testing.T) {
	points := []string{"d", "b", "e", "a", "c", "b"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := make([]pcap.Interface, len(points))
	m := merger{point: func(f *pcap.Frame, _ *pcap.Interface) string { return points[f.Interface] }}
	var out []string
	emit := func(f *pcap.Frame, _ *pcap.Interface) {
		out = append(out, fmt.Sprintf("%s%d", points[f.Interface], f.Interface))
	}
	for i := range points {
		id := len(points) - 1 - i
		f := pcap.Frame{Number: i + 1, Timestamp: t0, Interface: id, Data: []byte{0}}
		m.push(&f, &in[id], len(points), emit)
	}
	m.flush(emit)
	if want := []string{"a3", "b1", "b5", "c4", "d0", "e2"}; !slices.Equal(out, want) {
		t.Errorf("frames came out as %v, want %v", out, want)
	}
}
