package fabric_test

import (
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/openmrc/mrc/fabric"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// cpuTime is the process's user plus system CPU time: on a shared machine
// it, not the wall clock, says what a core can do.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds events/s (wall clock) and events/cpu-s (CPU time, GC
// included) for n events.
func report(b *testing.B, n uint64, cpu time.Duration) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "events/cpu-s")
	}
}

// counter is a sink that keeps nothing, for benchmarks.
type counter struct{ n int }

func (k *counter) Receive(sm.Time, int, *wire.Packet, *sm.Output) { k.n++ }
func (k *counter) Advance(sm.Time, *sm.Output)                    {}
func (k *counter) NextDeadline() sm.Time                          { return sm.Never }

// BenchmarkFabricEvents measures the fabric alone: 4 KiB packets sprayed
// over 8 planes and 4 paths between two nodes, with a 1 % loss rule, and
// endpoints that do nothing. ns/op and allocs/op are per event.
func BenchmarkFabricEvents(b *testing.B) {
	s, err := fabric.New(fabric.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	r := fabric.NewRule()
	r.Drop = 0.01
	_, _ = s.AddRule(r)
	src, dst := &counter{}, &counter{}
	ida, _ := s.Attach(0, 0x10, 1, src)
	_, _ = s.Attach(1, 0x10, 0, dst)
	burst := make([]sm.Outgoing, 64)
	for k := range burst {
		burst[k] = data(0x10, uint32(k), uint32(0x100+k*37), uint8(k%8))
	}
	inject := func(now sm.Time, out *sm.Output) { out.Packets = append(out.Packets, burst...) }
	// Keep about 64 packets in flight: inject a burst every 64 × 42 ns.
	var tick func()
	tick = func() {
		s.Input(ida, inject)
		s.At(s.Now()+64*42, tick)
	}
	s.At(0, tick)
	for k := 0; k < 100_000; k++ { // warm the pools
		s.Step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, c0 := s.Stats().Events, cpuTime()
	for k := 0; k < b.N; k++ {
		s.Step()
	}
	b.StopTimer()
	report(b, s.Stats().Events-start, cpuTime()-c0)
}

// BenchmarkMRCEvents measures the whole simulation of one MRC QP pair at
// 800 Gb/s: fabric events plus the statemachine's work for each delivery
// and timer. ns/op and allocs/op are per event.
func BenchmarkMRCEvents(b *testing.B) {
	s, err := fabric.New(fabric.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	qp := func(qpn, dest uint32, src, dst byte) *sm.QP {
		c := sm.DefaultQPConfig(qpn, uint64(qpn))
		c.Addr.SrcIP, c.Addr.DstIP = netip.AddrFrom4([4]byte{10, 0, 0, src}), netip.AddrFrom4([4]byte{10, 0, 0, dst})
		c.MaxSendWR = 64
		q, err := sm.New(sm.DefaultConfig(uint64(qpn)), c)
		if err != nil {
			b.Fatal(err)
		}
		var out sm.Output
		if err := q.BringUp(0, sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 8, MPRDest: 8, MaxWIMM: 16, MaxWIMMDest: 16,
			Timeout: 6, Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 4096, DestQPN: dest}, &out); err != nil {
			b.Fatal(err)
		}
		return q
	}
	a, c := qp(0x11, 0x22, 1, 2), qp(0x22, 0x11, 2, 1)
	ida, _ := s.Attach(0, 0x11, 1, a)
	_, _ = s.Attach(1, 0x22, 0, c)
	buf := make([]byte, 256<<10)
	var wrid uint64
	post := func(now sm.Time, out *sm.Output) {
		for {
			wrid++
			if a.Post(now, sm.WorkRequest{WRID: wrid, Opcode: sm.OpWrite, RemoteVA: 0x1000, RKey: 1, Data: buf}, out) != nil {
				return
			}
		}
	}
	refill := func() { s.Input(ida, post) }
	s.Observe(obs(func(now sm.Time, id fabric.EndpointID, out *sm.Output) {
		if id == ida && len(out.Completions) > 0 {
			s.At(now, refill)
		}
	}))
	refill()
	for k := 0; k < 200_000; k++ {
		s.Step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, t0, c0 := s.Stats(), s.Now(), cpuTime()
	for k := 0; k < b.N; k++ {
		s.Step()
	}
	b.StopTimer()
	st := s.Stats()
	report(b, st.Events-start.Events, cpuTime()-c0)
	if d := s.Now() - t0; d > 0 {
		b.ReportMetric(float64(st.DeliveredBytes-start.DeliveredBytes)*8/float64(d), "sim-Gb/s")
	}
}
