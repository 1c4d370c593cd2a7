package statemachine

// Tests written against mutants scripts/mutate.sh found alive in
// responder.go: each pins one boundary or transition of the requirement it
// names that no other test pinned.

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openmrc/mrc/wire"
)

// TestMutantPayloadLengthEdges (WIRE-PAY-1): RDMA_WRITE_LAST carries 1 to
// path-MTU bytes and RDMA_WRITE_ONLY 0 to path-MTU bytes; a packet at
// either edge is placed.
func TestMutantPayloadLengthEdges(t *testing.T) {
	for _, c := range []struct {
		op wire.Opcode
		n  int
	}{{wire.OpWriteLast, 1}, {wire.OpWriteLast, 1024}, {wire.OpWriteOnly, 0}, {wire.OpWriteOnly, 1024}} {
		o := newOne(t, nil)
		o.recv(1, dataPkt(0, c.op, c.n, 0x100))
		if len(o.out.Placements) != 1 {
			t.Errorf("%s with %d bytes (path MTU 1024): %d placements, want 1", c.op, c.n, len(o.out.Placements))
		}
	}
}

// TestMutantDuplicateAtWindowEdge (RSP-DUP-1, RSP-RCV-6): the PSN at
// cack + W, the last one the window holds, is placed once; its second
// arrival is a duplicate, answered with a SACK and not placed again.
func TestMutantDuplicateAtWindowEdge(t *testing.T) {
	o := newOne(t, nil) // W = 128, cack = 2^24 − 1
	o.recv(1, dataPkt(127, wire.OpWriteMiddle, 1024, 0x100))
	o.recv(1, dataPkt(127, wire.OpWriteMiddle, 1024, 0x100))
	if d := cmp.Diff([]uint32{127}, placed(o)); d != "" {
		t.Errorf("placed (-want +got): %s", d)
	}
	if r := replies(o.take()); len(r) != 2 || r[1].Op != wire.OpSACK || r[1].Ack != 127 {
		t.Errorf("replies %+v, want the duplicate answered by a SACK for PSN 127", r)
	}
}

// TestMutantAccessExactFit (RSP-RCV-2): bytes va to va + payload − 1 that
// end exactly at the region's end lie inside it, and so does a zero-length
// write at the region's end; both are placed and the QP stays up.
func TestMutantAccessExactFit(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.MRs = []MemoryRegion{{RKey: 1, VA: baseVA, Len: 4096}} })
	p := dataPkt(0, wire.OpWriteMiddle, 1024, 0x100)
	p.RETH.VA = baseVA + 3072
	o.recv(1, p)
	z := dataPkt(1, wire.OpWriteOnly, 0, 0x100)
	z.RETH.VA = baseVA + 4096
	o.recv(1, z)
	if d := cmp.Diff([]uint32{0, 1}, placed(o)); d != "" || o.q.State() != StateRTS {
		t.Errorf("state %s, placed (-want +got): %s", o.q.State(), d)
	}
}

// TestMutantAckOffsetEdge (WIRE-SETH-5, RSP-SACK-2): a duplicate 32768
// PSNs behind cack is answered with ack_psn_offset −32768, the most
// negative offset 16 signed bits hold; one PSN further back, the offset
// does not fit and is 0 (AMB-26).
func TestMutantAckOffsetEdge(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.RQPSN = 40000 }) // cack = 39999
	o.recv(1, dataPkt(39999-32768, wire.OpWriteMiddle, 1024, 0x100))
	o.recv(1, dataPkt(39999-32769, wire.OpWriteMiddle, 1024, 0x100))
	ps := o.take()
	if len(ps) != 2 || ps[0].SETH.AckPSNOffset != -32768 || ps[1].SETH.AckPSNOffset != 0 {
		t.Errorf("replies %+v, want SACKs with ack_psn_offset -32768 then 0", replies(ps))
	}
}

// TestMutantWIMMHalfSpace (WIMM-SM-1): RQMSNs compare modulo 2^16; one
// 2^15 ahead of the next to deliver reads as already delivered and is
// discarded, one 2^15 − 1 ahead is held.
func TestMutantWIMMHalfSpace(t *testing.T) {
	o := newOne(t, nil) // PSN 0 missing: nothing completes
	for _, c := range []struct {
		psn   uint32
		rqmsn uint16
	}{{1, 1 << 15}, {2, 1<<15 - 1}} {
		p := dataPkt(c.psn, wire.OpWriteOnlyImm, 10, 0x100)
		p.METH.RQMSN = c.rqmsn
		o.recv(1, p)
	}
	if d := cmp.Diff([]uint32{2}, placed(o)); d != "" {
		t.Errorf("placed (-want +got): %s", d)
	}
	if d := cmp.Diff([]uint16{1<<15 - 1}, o.q.WIMMHeld(nil)); d != "" {
		t.Errorf("held (-want +got): %s", d)
	}
}

// TestMutantProbeAnswerEvidence (EV-SM-4): whichever EV of the plane the
// evidence names, index 0 included, the next probe answer takes it, and
// only that one: the answers after it are drawn from the plane again.
func TestMutantProbeAnswerEvidence(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0].EVs = []EVEntry{{0x100, 1}, {0x101, 1}, {0x102, 1}, {0x103, 1}, {0x200, 2}}
	})
	for round := range 3 {
		for i := range 4 {
			ev := uint32(0x100 + i)
			o.q.begin(o.now, &o.out)
			o.q.adoptReverse(mustLookup(t, o.q, ev))
			o.q.end()
			if used := o.answers(1, 1, 0x100); used[ev] != 1 {
				t.Errorf("round %d: answer after evidence for %#x left on %v", round, ev, used)
			}
			if used := o.answers(12, 1, 0x100); len(used) < 2 {
				t.Errorf("round %d: answers after the evidence for %#x was used: %v, want them drawn from the plane", round, ev, used)
			}
		}
	}
}

// TestMutantProbeAnswerNoEvidence (EV-SM-4): a reverse EV the QP chose for
// its SACKs, without evidence that it works, does not carry probe answers:
// over QPs of different seeds, the first answer is drawn from the plane.
func TestMutantProbeAnswerNoEvidence(t *testing.T) {
	onRev := 0
	const n = 16
	for seed := range n {
		o := newOne(t, func(c *testCfg, a *Attr) {
			c.Seed = uint64(seed) + 1
			c.EVProfiles[0].EVs = []EVEntry{{0x100, 1}, {0x101, 1}, {0x102, 1}, {0x103, 1}, {0x200, 2}}
		})
		o.q.ev.rev[0] = int16(mustLookup(t, o.q, 0x101)) // as reverseEV sets it
		if used := o.answers(1, 1, 0x100); used[0x101] == 1 {
			onRev++
		}
	}
	if onRev == n {
		t.Errorf("all %d first answers left on the reverse EV held without evidence", n)
	}
}

// imm is a WRITE_ONLY_IMM from the peer with PSN psn and RQMSN rqmsn.
func imm(psn uint32, rqmsn uint16) *wire.Packet {
	p := dataPkt(psn, wire.OpWriteOnlyImm, 10, 0x100)
	p.METH.RQMSN = rqmsn
	return p
}

// TestMutantWIMMOrderAfterDelivery (WIMM-RSP-2): once a WriteIMM has been
// delivered, held ones still complete in RQMSN order, whatever order
// their packets arrive in.
func TestMutantWIMMOrderAfterDelivery(t *testing.T) {
	o := newOne(t, nil)
	for _, p := range []*wire.Packet{imm(0, 0), imm(2, 2), imm(3, 3), imm(1, 1)} {
		o.recv(1, p)
	}
	var got []uint16
	for _, c := range o.out.Completions {
		got = append(got, c.RQMSN)
	}
	if d := cmp.Diff([]uint16{0, 1, 2, 3}, got); d != "" {
		t.Errorf("receive completions by RQMSN (-want +got): %s", d)
	}
}

// TestMutantWIMMDeliveredRQMSN (WIMM-SM-1): a WriteIMM reusing the RQMSN
// of one already delivered, under a new PSN, is discarded: not placed,
// not held.
func TestMutantWIMMDeliveredRQMSN(t *testing.T) {
	o := newOne(t, nil)
	o.recv(1, imm(0, 0)) // delivered at once
	o.recv(1, imm(2, 0))
	if d := cmp.Diff([]uint32{0}, placed(o)); d != "" {
		t.Errorf("placed (-want +got): %s", d)
	}
	if held := o.q.WIMMHeld(nil); len(held) != 0 {
		t.Errorf("held %v", held)
	}
}

// TestMutantFaultWindowOffByOne: the seeded fault responder-window-off-by-one
// breaks RSP-RCV-6 and MPR-WIN-4 by exactly one PSN: it takes cack + W + 1,
// still NACKs cack + W + 2 PSN_OOR_WINDOW, and takes in-window PSNs as the
// correct responder does, so what a checker catches is that one PSN.
func TestMutantFaultWindowOffByOne(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Test.Faults = FaultResponderWindowOffByOne }) // W = 128, cack = 2^24 − 1
	for _, psn := range []uint32{128, 129, 1} {                                                // cack + W + 1, cack + W + 2, cack + 2
		o.recv(1, dataPkt(psn, wire.OpWriteMiddle, 1024, 0x100))
	}
	if d := cmp.Diff([]uint32{128, 1}, placed(o)); d != "" {
		t.Errorf("placed (-want +got): %s", d)
	}
	if r := replies(o.take()); len(r) != 3 || r[1].Op != wire.OpNACK || r[1].Reason != wire.NACKPSNOutOfWindow {
		t.Errorf("replies %+v, want PSN 129 NACKed PSN_OOR_WINDOW", r)
	}
}
