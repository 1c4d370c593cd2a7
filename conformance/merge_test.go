package conformance

import (
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

// TestMergerTiesKeepFileOrder: a file in timestamp order (one writer) whose
// frames of one clock tick alternate between two planes, with a frame the
// capture point's node sends among arrivals, comes out in file order. The
// arrival-first tie-break is for files written in runs per interface; on
// an ordered file it let one plane's later arrivals overtake the other's
// earlier ones stuck behind a send, and the judge then took first
// transmissions for resends (the in-process run's capture, 2026-12-01).
func TestMergerTiesKeepFileOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := [2]pcap.Interface{{Point: "tester", Plane: 0}, {Point: "tester", Plane: 1}}
	// Interfaces of frames 1..7, all at t0; frame 2 is sent by the node.
	ifs := []int{0, 0, 1, 1, 0, 0, 1}
	m := merger{arrival: func(f *pcap.Frame, _ *pcap.Interface) (string, bool) { return "tester", f.Number != 2 }}
	var out []int
	emit := func(f *pcap.Frame, _ *pcap.Interface) { out = append(out, f.Number) }
	for i, id := range ifs {
		f := pcap.Frame{Number: i + 1, Timestamp: t0, Interface: id, Data: []byte{byte(i)}}
		m.push(&f, &in[id], 2, emit)
	}
	m.flush(emit)
	for i := range out {
		if out[i] != i+1 {
			t.Fatalf("frames came out as %v, want file order", out)
		}
	}
	if m.interleaved {
		t.Error("an ordered file was taken for one written in runs")
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
		if m.at(i).own {
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
