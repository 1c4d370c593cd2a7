package statemachine

import (
	"runtime"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// benchAttr is the benchmark QP: 4 KiB MTU, MPR 8 (a 1024-PSN window),
// NSCC, timeout 8 (≈262 µs).
func benchAttr(dest uint32) Attr {
	return Attr{EVProfileID: 1, CCProfileID: 1, MPR: 8, MPRDest: 8, MaxWIMM: 16, MaxWIMMDest: 16,
		Timeout: 8, Retry: Retry{LinearCnt: 7, ExpCnt: RetryInfinite}, PathMTU: 4096, DestQPN: dest}
}

func benchPair(tb testing.TB) (a, b *QP) {
	var out Output
	qa, qb := DefaultQPConfig(qpnA, 1), DefaultQPConfig(qpnB, 2)
	qb.Addr.SrcIP, qb.Addr.DstIP = qa.Addr.DstIP, qa.Addr.SrcIP
	a, err := New(DefaultConfig(1), qa)
	if err != nil {
		tb.Fatal(err)
	}
	b, err = New(DefaultConfig(2), qb)
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.BringUp(0, benchAttr(qpnB), &out); err != nil {
		tb.Fatal(err)
	}
	if err := b.BringUp(0, benchAttr(qpnA), &out); err != nil {
		tb.Fatal(err)
	}
	return a, b
}

// runBackToBack moves data packets from a requester to a responder in
// memory (no encoding) and SACKs back, until n data packets have been
// delivered; every lossEvery-th data packet is dropped (0: none). Each
// round trip takes 1 µs of synthetic time. It returns the requester.
func runBackToBack(tb testing.TB, n, lossEvery int) *QP {
	a, b := benchPair(tb)
	buf := make([]byte, 1<<20)
	var outA, outB, outA2 Output
	outA.Packets = make([]Outgoing, 0, 2048)
	outA2.Packets = make([]Outgoing, 0, 2048)
	outB.Packets = make([]Outgoing, 0, 2048)
	outA.Completions = make([]Completion, 0, 64)
	outA2.Completions = make([]Completion, 0, 64)
	outB.Placements = make([]Placement, 0, 2048)
	outA.Events = make([]Event, 0, 256)
	outA2.Events = make([]Event, 0, 256)
	outB.Events = make([]Event, 0, 256)
	var now Time
	delivered, sent, wrid := 0, 0, uint64(0)
	post := func() {
		for a.req.sqLen < len(a.req.sq) {
			wrid++
			if err := a.Post(now, WorkRequest{WRID: wrid, Opcode: OpWrite, RemoteVA: 0x1000, RKey: 1, Data: buf}, &outA); err != nil {
				tb.Fatal(err)
			}
		}
	}
	post()
	for delivered < n {
		if len(outA.Packets) == 0 {
			// Nothing to send: let time run to the next timer.
			if d := a.NextDeadline(); d != Never {
				now = max(now, d)
			} else {
				now += Microsecond
			}
			a.Advance(now, &outA)
			if len(outA.Packets) == 0 {
				post()
				continue
			}
		}
		now += Microsecond / 2
		for i := range outA.Packets {
			p := &outA.Packets[i].Pkt
			if p.BTH.Opcode.IsWrite() {
				sent++
				if lossEvery > 0 && sent%lossEvery == 0 {
					continue
				}
				delivered++
			}
			b.Receive(now, int(outA.Packets[i].Plane)+1, p, &outB)
		}
		outA.Reset()
		outB.Placements = outB.Placements[:0]
		outB.Events = outB.Events[:0]
		now += Microsecond / 2
		outA2.Reset()
		for i := range outB.Packets {
			a.Receive(now, int(outB.Packets[i].Plane)+1, &outB.Packets[i].Pkt, &outA2)
		}
		outB.Reset()
		outA, outA2 = outA2, outA
		post()
		if a.State() != StateRTS || b.State() != StateRTS {
			tb.Fatalf("QP failed: %v %v", a.ErrorCause(), b.ErrorCause())
		}
	}
	_ = wire.OpSACK
	return a
}

func benchBackToBack(b *testing.B, lossEvery int) {
	b.ReportAllocs()
	b.SetBytes(4096)
	b.ResetTimer()
	a := runBackToBack(b, b.N, lossEvery)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
	// What the EV rotation costs: each rotation reshuffles the active set
	// (EV-SET-3), whatever part of it is usable. Under loss, EVs whose
	// losses the SACK bitmap reveals are retired (EV-SM-5) down to
	// ev_min_active, so a rotation yields fewer packets.
	usable := 0
	for _, e := range a.ev.order {
		if a.ev.usable(int(e)) {
			usable++
		}
	}
	b.ReportMetric(float64(a.ev.rotations)/float64(b.N), "rotations/pkt")
	b.ReportMetric(float64(usable), "usable-EVs")
	b.ReportMetric(float64(len(a.ev.order)), "active-EVs")
}

// BenchmarkBackToBackLossless: requester and responder in memory, 4 KiB
// packets, no loss. ns/op is per data packet (each with its SACK).
func BenchmarkBackToBackLossless(b *testing.B) { benchBackToBack(b, 0) }

// BenchmarkBackToBackLoss1pct drops one data packet in 100.
func BenchmarkBackToBackLoss1pct(b *testing.B) { benchBackToBack(b, 100) }

// BenchmarkQPMemory reports the heap bytes of one QP in RTS with a
// 256-EV profile and a 1024-PSN window (MPR 8) in both roles, the default
// queue depths (32 send, 32 receive WRs) and max_wimm_dest 16. The QPs
// share one Node (the compiled profiles); its one-off cost is reported as
// node-bytes.
func BenchmarkQPMemory(b *testing.B) {
	const n = 256
	cfg, qc := DefaultConfig(1), DefaultQPConfig(qpnA, 1)
	qps := make([]*QP, n)
	var out Output
	runtime.GC()
	var m0, m1, m2 runtime.MemStats
	runtime.ReadMemStats(&m0)
	nd, err := NewNode(cfg)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	for i := range qps {
		q, err := nd.NewQP(QPConfig{QPN: uint32(0x100 + i), Seed: uint64(i), Addr: qc.Addr})
		if err != nil {
			b.Fatal(err)
		}
		if err := q.BringUp(0, benchAttr(qpnB), &out); err != nil {
			b.Fatal(err)
		}
		qps[i] = q
	}
	runtime.GC()
	runtime.ReadMemStats(&m2)
	per := float64(m2.HeapAlloc-m1.HeapAlloc) / n
	runtime.KeepAlive(qps)
	runtime.KeepAlive(nd)
	for i := 0; i < b.N; i++ {
		_ = qps[i%n].StateHash()
	}
	b.ReportMetric(per, "bytes/QP")
	b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc), "node-bytes")
}
