package conformance

import (
	"math/rand/v2"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestArriveInOrder drives a responder's view with writes as a lossy
// path delivers them (most in order, some PSNs skipped and sent again
// later, duplicates, some with ack_req) and checks after each one, across
// the 2^24 wrap, that the PSN after the cumulative point, which arrive
// does not put in the arrived table (advanceRcum's nextArrived), leaves
// what the table would: the cumulative point is the last PSN up to which
// every PSN arrived, the table holds exactly the arrived PSNs after it,
// an ack_req PSN the point reached is due (RSP-ACK-1), and the table's
// bounds stay ahead of the point, narrow enough for heldBitsBounded.
func TestArriveInOrder(t *testing.T) {
	for _, start := range []uint32{1000, wire.PSNMask - 300} {
		seed := uint64(rand.Uint32())
		rng := rand.New(rand.NewPCG(seed, uint64(start)))
		e := newEngine(DefaultPICS())
		e.hk.arrivedBy = [len(e.hk.arrivedBy)][]*check{} // the view alone, no check's hook
		pt := newPoint("p")
		fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
		e.setBaseline(fl, start, false)
		got := map[uint32]bool{} // PSNs arrived after start
		ackReq := map[uint32]bool{}
		cum, next := start, wire.PSNAdd(start, 1)
		var lost []uint32
		inOrder, bounded := 0, 0
		for i := 0; i < 20000; i++ {
			q := next
			switch k := rng.IntN(20); {
			case k < 3 && len(lost) > 0: // a lost PSN sent again, most often the first
				j := 0
				if k == 0 {
					j = rng.IntN(len(lost))
				}
				q = lost[j]
				lost = append(lost[:j], lost[j+1:]...)
			case k < 4: // a duplicate
				q = wire.PSNAdd(cum, -rng.IntN(4))
			default:
				next = wire.PSNAdd(next, 1)
				if k < 5 && len(lost) < 50 { // lost on the way
					lost = append(lost, q)
					continue
				}
			}
			if q == wire.PSNAdd(fl.rcum, 1) {
				inOrder++
			}
			r := &pcap.Record{ICRCOK: true}
			r.Packet.BTH = wire.BTH{PSN: q, Opcode: wire.OpWriteMiddle, PKey: 0xFFFF, AckReq: rng.IntN(10) == 0}
			e.frameNo++
			e.arrive(pt, fl, "b", r)
			if d := psnDist(q, cum); d != 0 && d < 1<<23 && !got[q] {
				got[q] = true
				if r.Packet.BTH.AckReq {
					ackReq[q] = true
				}
			}
			for got[wire.PSNAdd(cum, 1)] {
				cum = wire.PSNAdd(cum, 1)
				delete(got, cum)
				if ackReq[cum] {
					if _, due := fl.ackDue[cum]; !due {
						t.Fatalf("seed %d step %d: cack reached ack_req PSN %d, not due", seed, i, cum)
					}
				}
			}
			if fl.rcum != cum {
				t.Fatalf("seed %d step %d (PSN %d): rcum %d, want %d", seed, i, q, fl.rcum, cum)
			}
			if fl.arrived.len() != len(got) {
				t.Fatalf("seed %d step %d (PSN %d): the table holds %d PSNs, want %d", seed, i, q, fl.arrived.len(), len(got))
			}
			for p := range got {
				if fl.arrived.get(p) == nil {
					t.Fatalf("seed %d step %d: PSN %d arrived after the point, not in the table", seed, i, p)
				}
			}
			if fl.arrived.len() > 0 && !fl.arrived.wide && !psnAfter(fl.arrived.lo, cum) {
				t.Fatalf("seed %d step %d: the table's bounds start at %d, not after the point %d", seed, i, fl.arrived.lo, cum)
			}
			if _, ok := fl.arrived.heldBitsBounded(wire.PSNAdd(cum, 1), ^uint64(0)); ok {
				bounded++
			}
		}
		if inOrder < 8000 || bounded < 17000 {
			t.Errorf("seed %d: %d writes in order, %d of 20000 tables decided by the word", seed, inOrder, bounded)
		}
	}
}
