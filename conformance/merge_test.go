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
