package workload

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/openmrc/mrc/fabric"
	sm "github.com/openmrc/mrc/statemachine"
)

// soakPackets is the soak's length in delivered packets: MRC_SOAK_PACKETS,
// default 200,000 (a few seconds).
func soakPackets(t *testing.T) uint64 {
	if s := os.Getenv("MRC_SOAK_PACKETS"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MRC_SOAK_PACKETS=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() {
		return 50_000
	}
	return 200_000
}

// TestSoak runs four saturating connections (three MRC, one RC baseline)
// on an 8-plane fabric through a rotating schedule of impairments — random
// loss, duplicates up to 50 µs late, reordering, jitter, reverse-path loss,
// blackholed paths, failed T1s and planes, each healed after a while —
// with every invariant of the harness checked at every step. It asserts
// zero violations, that all work completes once the impairments are
// healed, and that memory is flat: the heap after GC, sampled through the
// run, shows no growth beyond a bound.
func TestSoak(t *testing.T) {
	target := soakPackets(t)
	h := soakHarness(t)
	// The RC connection has no multipath: its QPs whose path fails may
	// run out of retries. That is the baseline's behaviour, not a
	// violation, so only MRC QPs may not fail.
	h.opt.AllowErrors = true
	s := h.Sim
	imp := &impairments{t: t, s: s, rng: rand.New(rand.NewPCG(42, 7))}
	s.At(0, imp.tick)

	var heap []uint64
	var live []int
	sample := func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = append(heap, ms.HeapAlloc)
		live = append(live, h.Live())
	}
	const samples = 10
	for i := 1; i <= samples; i++ {
		goal := target * uint64(i) / samples
		for s.Stats().Delivered < goal {
			s.Run(s.Now() + 50*sm.Microsecond)
			if v := h.Violations(); len(v) > 0 {
				t.Fatalf("after %d packets: %v", s.Stats().Delivered, v[0])
			}
		}
		sample()
	}
	imp.heal()
	h.StopStreams()
	if !s.RunUntil(func() bool { return h.Outstanding() == 0 }, s.Now()+100*sm.Second) {
		t.Fatalf("%d work requests outstanding after healing\n%s", h.Outstanding(), h.Dump())
	}
	for _, v := range h.Violations() {
		t.Error(v)
	}
	for _, c := range h.Conns() {
		if c.Transport == MRC && c.Failed > 0 {
			t.Errorf("MRC connection %d: %d work requests failed", c.ID, c.Failed)
		}
	}
	st := s.Stats()
	t.Logf("%d packets delivered, %d events, %d dropped, %d trimmed, %d CE, %d duplicated; simulated %v",
		st.Delivered, st.Events, st.TotalDropped(), st.Trimmed+st.TrimmedLastHop, st.Marked, st.Duplicated, s.Now())
	t.Logf("heap after GC (KiB): %v; work requests tracked: %v", kib(heap), live)
	checkFlatHeap(t, heap)
}

// soakHarness is TestSoak's fabric: 4 nodes on 8 SRv6 planes, three
// saturating MRC connections and one RC baseline.
func soakHarness(t *testing.T) *Harness {
	m, err := fabric.NewSRv6Mapper(fabric.DefaultSRv6Template())
	if err != nil {
		t.Fatal(err)
	}
	mc := sm.DefaultConfig(42)
	h, err := New(Options{Fabric: fabric.Config{Seed: 42, Nodes: 4, Mapper: m}, MRC: mc,
		QP: sm.QPConfig{MaxSendWR: 64, MaxRecvWR: 64}, Check: true,
		BoundsEvery: 16, Memory: 8 << 20, AllowErrors: false})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, to int
		tr       Transport
	}{{0, 1, MRC}, {2, 1, MRC}, {1, 0, MRC}, {3, 2, RC}} {
		cn, err := h.Connect(c.from, c.to, c.tr)
		if err != nil {
			t.Fatal(err)
		}
		depth := 32
		if c.tr == RC {
			depth = 2 // the baseline rides along; its QPs may lose paths
		}
		if err := h.Stream(cn.ID, 48<<10+100, depth, 4); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// impairments runs TestSoak's schedule: every 100 µs one impairment
// starts and lasts 50-500 µs; at most three at a time, so that each plane
// keeps working paths.
type impairments struct {
	t       *testing.T
	s       *fabric.Sim
	rng     *rand.Rand
	on      []activeImpairment
	stopped bool
}

type activeImpairment struct {
	undo  func()
	until sm.Time
}

func (m *impairments) tick() {
	if m.stopped {
		return
	}
	s := m.s
	now := s.Now()
	k := 0
	for _, a := range m.on {
		if a.until <= now {
			a.undo()
		} else {
			m.on[k] = a
			k++
		}
	}
	m.on = m.on[:k]
	if len(m.on) < 3 {
		m.on = append(m.on, activeImpairment{m.start(), now + sm.Time(50_000+m.rng.IntN(450_000))})
	}
	s.At(now+100*sm.Microsecond, m.tick)
}

// start starts one random impairment and returns what heals it.
func (m *impairments) start() func() {
	s, rng, t := m.s, m.rng, m.t
	r := fabric.NewRule()
	var undo func()
	switch rng.IntN(8) {
	case 0:
		r.Drop = []float64{0.001, 0.01, 0.05}[rng.IntN(3)]
	case 1:
		r.Dup, r.DupDelay = 0.05, sm.Time(rng.IntN(50_000))
	case 2:
		r.Delay, r.DelayBy = 0.05, sm.Time(1000+rng.IntN(20_000))
	case 3:
		r.Jitter = sm.Time(rng.IntN(3000))
	case 4:
		r.Class, r.Drop = fabric.ControlPackets, 0.05
	case 5:
		r.Plane, r.Path, r.Drop = rng.IntN(8), rng.IntN(4), 1
	case 6:
		pl := rng.IntN(8)
		_ = s.SetT1Up(pl, rng.IntN(4), false)
		undo = func() {
			for k := 0; k < 4; k++ {
				_ = s.SetT1Up(pl, k, true)
			}
		}
	case 7:
		pl := rng.IntN(8)
		_ = s.SetPlaneUp(pl, false)
		undo = func() { _ = s.SetPlaneUp(pl, true) }
	}
	if undo == nil {
		id, err := s.AddRule(r)
		if err != nil {
			t.Fatal(err)
		}
		undo = func() { s.RemoveRule(id) }
	}
	return undo
}

// heal ends every impairment and the schedule.
func (m *impairments) heal() {
	for _, a := range m.on {
		a.undo()
	}
	m.on = nil
	m.stopped = true
}

// checkFlatHeap fails when the second half of the run holds more than
// the first half's peak plus a margin (pools settle in the first samples).
func checkFlatHeap(t *testing.T, heap []uint64) {
	var first, second uint64
	for i, v := range heap {
		if i < len(heap)/2 {
			first = max(first, v)
		} else {
			second = max(second, v)
		}
	}
	if second > first+first/4+(2<<20) {
		t.Errorf("heap grows: peak %d KiB in the first half, %d KiB in the second", first>>10, second>>10)
	}
}

func kib(v []uint64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = x >> 10
	}
	return out
}
