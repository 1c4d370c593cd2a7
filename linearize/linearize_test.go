package linearize_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	"github.com/openmrc/mrc/linearize"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

const us = sm.Microsecond

// TestRegisterModel: the register model on hand-written histories.
func TestRegisterModel(t *testing.T) {
	r := linearize.ChunkRegister(1, 3)
	for _, c := range []struct {
		name  string
		build func(h *linearize.History)
		want  linearize.Verdict
	}{
		{"write then read", func(h *linearize.History) {
			w := h.BeginWrite(0, r, 1)
			h.EndWrite(w)
			h.Read(9, r, 1)
		}, linearize.Linearizable},
		{"read during the write sees either", func(h *linearize.History) {
			w := h.BeginWrite(0, r, 1)
			h.Read(9, r, 0)
			h.Read(9, r, 1)
			h.EndWrite(w)
		}, linearize.Linearizable},
		{"a pending write may land late", func(h *linearize.History) {
			h.BeginWrite(0, r, 1) // never completes
			h.Read(9, r, 0)
			h.Read(9, r, 1)
		}, linearize.Linearizable},
		{"a stale write after a newer one completed", func(h *linearize.History) {
			w1 := h.BeginWrite(0, r, 1)
			h.EndWrite(w1)
			w2 := h.BeginWrite(0, r, 2)
			h.EndWrite(w2)
			h.Read(9, r, 1)
		}, linearize.Violation},
		{"a completed write not visible", func(h *linearize.History) {
			w := h.BeginWrite(0, r, 1)
			h.EndWrite(w)
			h.Read(9, r, 0)
		}, linearize.Violation},
		{"a value going back", func(h *linearize.History) {
			h.BeginWrite(0, r, 1)
			h.Read(9, r, 1)
			h.Read(9, r, 0)
		}, linearize.Violation},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h linearize.History
			c.build(&h)
			res := linearize.Check("registers", linearize.Registers, h.Registers(), time.Minute)
			if res.Verdict != c.want {
				t.Errorf("%s, want %s", res.Verdict, c.want)
			}
		})
	}
}

// TestFIFOModel: the WriteIMM completion stream model on hand-written
// histories: in order, exactly once, none missing (WIMM-RSP-2, CMP-RCV-1).
func TestFIFOModel(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(h *linearize.History)
		want  linearize.Verdict
	}{
		{"in order", func(h *linearize.History) {
			h.Enqueue(0, 0, 1)
			h.Enqueue(0, 0, 2)
			h.Dequeue(1, 0, 1)
			h.Dequeue(1, 0, 2)
			h.Drained(0, 0)
		}, linearize.Linearizable},
		{"queues are independent", func(h *linearize.History) {
			h.Enqueue(0, 0, 1)
			h.Enqueue(2, 5, 7)
			h.Dequeue(3, 5, 7)
			h.Dequeue(1, 0, 1)
		}, linearize.Linearizable},
		{"out of order", func(h *linearize.History) {
			h.Enqueue(0, 0, 1)
			h.Enqueue(0, 0, 2)
			h.Dequeue(1, 0, 2)
		}, linearize.Violation},
		{"twice", func(h *linearize.History) {
			h.Enqueue(0, 0, 1)
			h.Dequeue(1, 0, 1)
			h.Dequeue(1, 0, 1)
		}, linearize.Violation},
		{"missing", func(h *linearize.History) {
			h.Enqueue(0, 0, 1)
			h.Drained(0, 0)
		}, linearize.Violation},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h linearize.History
			c.build(&h)
			res := linearize.Check("fifo", linearize.FIFO, h.FIFO(), time.Minute)
			if res.Verdict != c.want {
				t.Errorf("%s, want %s", res.Verdict, c.want)
			}
		})
	}
}

// setup is a small fabric: 3 nodes, 4 planes × 2 paths, 1 KiB MTU, every
// QP with 4 EVs per plane (2 active), and a history.
func setup(t testing.TB, seed uint64, faults sm.Faults, mod func(*workload.Options)) (*workload.Harness, *linearize.History) {
	t.Helper()
	hist := &linearize.History{}
	mc := sm.DefaultConfig(seed)
	prof := sm.GenerateEVProfile(1, 4, 4, seed)
	prof.ActivePerPlane, prof.MinActive = 2, 1
	mc.EVProfiles = []sm.EVProfile{prof}
	mc.Test.Faults = faults
	o := workload.Options{
		Fabric:  fabric.Config{Seed: seed, Nodes: 3, Planes: 4, PathsPerPlane: 2},
		MRC:     mc,
		Attr:    sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 2, MPRDest: 2, MaxWIMM: 8, MaxWIMMDest: 8, Timeout: 5, Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 1024},
		Memory:  256 << 10,
		Check:   true,
		History: hist,
	}
	if mod != nil {
		mod(&o)
	}
	h, err := workload.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return h, hist
}

func connect(t testing.TB, h *workload.Harness, pairs ...[2]int) {
	t.Helper()
	for _, p := range pairs {
		if _, err := h.Connect(p[0], p[1], workload.MRC); err != nil {
			t.Fatal(err)
		}
	}
}

func post(t testing.TB, h *workload.Harness, w workload.WR) uint64 {
	t.Helper()
	v, err := h.Post(w)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func rule(t testing.TB, h *workload.Harness, r fabric.Rule) {
	t.Helper()
	if _, err := h.Sim.AddRule(r); err != nil {
		t.Fatal(err)
	}
}

// randomWork posts random writes on every connection and reads random
// chunks at random times until end, all drawn from seed.
func randomWork(h *workload.Harness, seed uint64, end sm.Time) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var tick func()
	tick = func() {
		if h.Sim.Now() >= end {
			return
		}
		for k := rng.IntN(3); k > 0; k-- {
			c := rng.IntN(len(h.Conns()))
			chunks := rng.IntN(6)
			size := chunks * h.MTU()
			if chunks > 0 && rng.IntN(2) == 0 {
				size -= rng.IntN(h.MTU() - 8)
			}
			_, _ = h.Post(workload.WR{Conn: c, Imm: rng.IntN(3) == 0, Chunk: rng.IntN(24), Size: size})
		}
		for k := rng.IntN(4); k > 0; k-- {
			h.Read(1, rng.IntN(30))
		}
		h.Sim.At(h.Sim.Now()+sm.Time(rng.IntN(8000)), tick)
	}
	h.Sim.At(0, tick)
}

func finish(t testing.TB, h *workload.Harness) {
	t.Helper()
	if !h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, h.Sim.Now()+sm.Second) {
		t.Fatalf("%d work requests outstanding", h.Outstanding())
	}
	h.Sim.Run(h.Sim.Now() + 200*us)
	h.Finish()
}

// TestCorrectRunsAreLinearizable: three QPs on two nodes writing into node
// 1's memory, overlapping chunks, with loss, duplicates up to 20 µs late,
// reordering and jitter; reads at every completion and at random times.
// Both models accept every history, and the harness sees no violation.
func TestCorrectRunsAreLinearizable(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h, hist := setup(t, seed, 0, nil)
			connect(t, h, [2]int{0, 1}, [2]int{2, 1}, [2]int{0, 1})
			r := fabric.NewRule()
			r.Drop, r.Dup, r.DupDelay, r.Delay, r.DelayBy, r.Jitter = 0.02, 0.05, 20*us, 0.05, 5*us, 500
			rule(t, h, r)
			randomWork(h, seed, 500*us)
			h.Sim.Run(500 * us)
			finish(t, h)
			for _, v := range h.Violations() {
				t.Error(v)
			}
			reg, fifo := linearize.CheckHistory(hist, time.Minute)
			for _, res := range []*linearize.Result{&reg, &fifo} {
				if err := linearize.Report(t, t.Name()+"-"+res.Model, res); err != nil {
					t.Error(err)
				}
			}
			t.Logf("%d register and %d queue operations, checked in %v and %v", reg.Ops, fifo.Ops, reg.Elapsed, fifo.Elapsed)
		})
	}
}

// expect checks a history against both models and the harness: with the
// fault, the named model must reject it (and its visualization is written
// as an artifact); without, everything must pass.
func expect(t *testing.T, name string, h *workload.Harness, hist *linearize.History, broken bool, model string) {
	t.Helper()
	reg, fifo := linearize.CheckHistory(hist, time.Minute)
	for _, res := range []*linearize.Result{&reg, &fifo} {
		err := linearize.Report(t, name+"-"+res.Model, res)
		switch {
		case !broken && err != nil:
			t.Errorf("correct run rejected: %v", err)
		case broken && res.Model == model && !errors.Is(err, linearize.ErrNotLinearizable):
			t.Errorf("%s model accepted the broken run (%v)", model, res.Verdict)
		}
	}
	if !broken {
		for _, v := range h.Violations() {
			t.Errorf("correct run: %v", v)
		}
	} else {
		for _, v := range h.Violations() {
			t.Logf("harness also saw: %v", v)
		}
	}
}

// TestStaleRetransmissionCaught: a duplicate of the packet of write v1
// arrives 30 µs late, after v2 overwrote the chunk and completed. A correct
// responder drops it (RSP-DUP-1); with FaultPlaceDuplicates it is placed
// again and a later read sees v1: the register model rejects the history.
func TestStaleRetransmissionCaught(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprint("broken=", broken), func(t *testing.T) {
			var f sm.Faults
			if broken {
				f = sm.FaultPlaceDuplicates
			}
			h, hist := setup(t, 1, f, nil)
			connect(t, h, [2]int{0, 1})
			r := fabric.NewRule()
			r.Class, r.Src, r.Dup, r.DupDelay, r.Limit = fabric.DataPackets, 0, 1, 30*us, 1
			rule(t, h, r)
			post(t, h, workload.WR{Conn: 0, Chunk: 0, Size: 1024})
			h.Sim.Run(10 * us)
			post(t, h, workload.WR{Conn: 0, Chunk: 0, Size: 1024})
			h.Sim.Run(50 * us)
			h.Read(1, 0)
			finish(t, h)
			expect(t, "stale", h, hist, broken, "registers")
		})
	}
}

// TestPSNAliasingCaught: a copy of write v1's packet (PSN 2^24−1) outlives
// a whole cycle of the PSN space. The cycle is fast-forwarded by re-basing
// both QPs to 2^24−1, where they would be after 2^24 more packets; the new
// write v2 reuses PSN 2^24−1 and wraps to 0, its first packet is held up,
// and the stale copy arrives first: the responder cannot tell it from v2's
// packet (RSP-RCV-6), places v1's data and later drops v2's own packet as
// a duplicate. The register model rejects the history. The control run
// does not re-base: the copy is then an ordinary duplicate.
func TestPSNAliasingCaught(t *testing.T) {
	const p = wire.PSNMask // 2^24 − 1
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprint("aliasing=", broken), func(t *testing.T) {
			h, hist := setup(t, 2, 0, func(o *workload.Options) {
				o.Attr.SQPSN, o.Attr.RQPSN = p, p
				o.AllowErrors = true
			})
			connect(t, h, [2]int{0, 1})
			r := fabric.NewRule()
			r.Class, r.Src, r.MatchPSN, r.PSN, r.Dup, r.DupDelay, r.Limit = fabric.DataPackets, 0, true, p, 1, 40*us, 1
			rule(t, h, r)
			post(t, h, workload.WR{Conn: 0, Chunk: 0, Size: 1024})
			h.Sim.Run(10 * us)
			if broken {
				if err := h.Rebase(0, p); err != nil {
					t.Fatal(err)
				}
			}
			r = fabric.NewRule()
			r.Class, r.Src, r.MatchPSN, r.PSN, r.Delay, r.DelayBy, r.Limit = fabric.DataPackets, 0, true, p, 1, 60*us, 1
			rule(t, h, r)
			post(t, h, workload.WR{Conn: 0, Chunk: 0, Size: 2048})
			finish(t, h)
			h.Read(1, 0)
			expect(t, "aliasing", h, hist, broken, "registers")
		})
	}
}

// TestPrematureCompletionCaught: write v1's first packet is held 20 µs; the
// WRITE WITH IMM v2 posted after it arrives first. A correct responder
// holds the immediate until v1 is complete (WIMM-RSP-1); with
// FaultEarlyWIMM the completion comes at once, and the reads of v1's chunks
// at that completion miss v1: the register model rejects the history.
func TestPrematureCompletionCaught(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprint("broken=", broken), func(t *testing.T) {
			var f sm.Faults
			if broken {
				f = sm.FaultEarlyWIMM
			}
			h, hist := setup(t, 3, f, nil)
			connect(t, h, [2]int{0, 1})
			r := fabric.NewRule()
			r.Class, r.Src, r.MatchPSN, r.PSN, r.Delay, r.DelayBy, r.Limit = fabric.DataPackets, 0, true, 0, 1, 20*us, 1
			rule(t, h, r)
			post(t, h, workload.WR{Conn: 0, Chunk: 0, Size: 3 * 1024})
			post(t, h, workload.WR{Conn: 0, Imm: true, Chunk: 8, Size: 100})
			finish(t, h)
			expect(t, "premature", h, hist, broken, "registers")
		})
	}
}

// TestOutOfOrderCompletionCaught: two WRITE WITH IMMs, the first one's
// packet held 20 µs. With FaultEarlyWIMM the second completes first: the
// FIFO model rejects the history (WIMM-RSP-2).
func TestOutOfOrderCompletionCaught(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprint("broken=", broken), func(t *testing.T) {
			var f sm.Faults
			if broken {
				f = sm.FaultEarlyWIMM
			}
			h, hist := setup(t, 4, f, nil)
			connect(t, h, [2]int{0, 1})
			r := fabric.NewRule()
			r.Class, r.Src, r.MatchPSN, r.PSN, r.Delay, r.DelayBy, r.Limit = fabric.DataPackets, 0, true, 0, 1, 20*us, 1
			rule(t, h, r)
			post(t, h, workload.WR{Conn: 0, Imm: true, Chunk: 0, Size: 100})
			post(t, h, workload.WR{Conn: 0, Imm: true, Chunk: 8, Size: 100})
			finish(t, h)
			expect(t, "reorder", h, hist, broken, "fifo")
		})
	}
}

// brokenResponder wraps a responder QP and corrupts its receive
// completions: it delivers the first one twice (dup) or not at all (lose).
type brokenResponder struct {
	fabric.Endpoint
	lose bool
	done bool
}

func (b *brokenResponder) Receive(now sm.Time, port int, p *wire.Packet, out *sm.Output) {
	n := len(out.Completions)
	b.Endpoint.Receive(now, port, p, out)
	for i := n; i < len(out.Completions) && !b.done; i++ {
		if c := out.Completions[i]; c.Recv {
			b.done = true
			if b.lose {
				out.Completions = append(out.Completions[:i], out.Completions[i+1:]...)
			} else {
				out.Completions = append(out.Completions, c)
			}
		}
	}
}

// TestFIFOCatchesDuplicateAndLostCompletions: a responder that delivers a
// WriteIMM completion twice, or loses one, breaks exactly-once delivery
// (CMP-RCV-1): the FIFO model rejects both histories.
func TestFIFOCatchesDuplicateAndLostCompletions(t *testing.T) {
	for _, mode := range []string{"correct", "duplicate", "lose"} {
		t.Run(mode, func(t *testing.T) {
			h, hist := setup(t, 5, 0, func(o *workload.Options) {
				if mode != "correct" {
					o.Wrap = func(conn int, requester bool, ep fabric.Endpoint) fabric.Endpoint {
						if requester {
							return ep
						}
						return &brokenResponder{Endpoint: ep, lose: mode == "lose"}
					}
				}
			})
			connect(t, h, [2]int{0, 1})
			for k := 0; k < 3; k++ {
				post(t, h, workload.WR{Conn: 0, Imm: true, Chunk: 4 * k, Size: 2000})
			}
			finish(t, h)
			expect(t, "fifo-"+mode, h, hist, mode != "correct", "fifo")
		})
	}
}

// BenchmarkCheck10k measures porcupine on a 10,000-operation history of
// three QPs writing overlapping chunks under loss and duplication, with
// random reads: ns/op is one check of both models.
func BenchmarkCheck10k(b *testing.B) {
	h, hist := setup(b, 9, 0, nil)
	connect(b, h, [2]int{0, 1}, [2]int{2, 1}, [2]int{0, 1})
	r := fabric.NewRule()
	r.Drop, r.Dup, r.DupDelay, r.Jitter = 0.01, 0.02, 10*us, 300
	rule(b, h, r)
	randomWork(h, 9, sm.Second)
	for hist.Len() < 10_000 {
		h.Sim.Run(h.Sim.Now() + 50*us)
	}
	h.StopStreams()
	reg, fifo := hist.Registers(), hist.FIFO()
	n := len(reg) + len(fifo)
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		r1 := linearize.Check("registers", linearize.Registers, reg, time.Minute)
		r2 := linearize.Check("fifo", linearize.FIFO, fifo, time.Minute)
		if r1.Verdict != linearize.Linearizable || r2.Verdict != linearize.Linearizable {
			b.Fatalf("%s / %s", r1.Verdict, r2.Verdict)
		}
	}
	b.ReportMetric(float64(n), "ops")
}
