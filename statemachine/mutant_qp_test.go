package statemachine

// Tests written against mutants scripts/mutate.sh found alive in qp.go:
// each pins one boundary or transition of the requirement it names that no
// other test pinned.

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantIPv4EVSixteenBits (WIRE-EV-3): over IPv4 an EV of exactly 16
// bits, 0xFFFF, is accepted; only one with more bits is refused.
func TestMutantIPv4EVSixteenBits(t *testing.T) {
	c := testConfig(qpnA)
	c.EVProfiles[0].EVs = []EVEntry{{0xFFFF, 1}, {0x101, 1}, {0x200, 2}, {0x201, 2}}
	if _, err := c.new(); err != nil {
		t.Errorf("EV 0xFFFF over IPv4 refused: %v", err)
	}
}

// TestMutantHopLimitFromAddressVector (QP-SM-1): packets carry the hop
// limit of the QP's configured address vector, and 64 only when it leaves
// it 0.
func TestMutantHopLimitFromAddressVector(t *testing.T) {
	for _, c := range []struct{ set, want uint8 }{{5, 5}, {0, 64}} {
		o := newOne(t, func(tc *testCfg, a *Attr) { tc.Addr.HopLimit = c.set })
		o.write(1, 10, false)
		ps := o.take()
		if len(ps) != 1 {
			t.Fatalf("HopLimit %d: sent %d packets, want 1", c.set, len(ps))
		}
		if ps[0].IP4.TTL != c.want {
			t.Errorf("HopLimit %d: TTL %d, want %d", c.set, ps[0].IP4.TTL, c.want)
		}
	}
}

// TestMutantLongestMessage (WIRE-RETH-3): a message of exactly
// MaxMessageLen bytes (2^31, as in IBTA; dma_length carries it) is posted
// and its first packets go out with that dma_length; one byte more is
// refused. The buffers are allocated, but only the packets sent touch them.
func TestMutantLongestMessage(t *testing.T) {
	o := newOne(t, nil)
	data := make([]byte, MaxMessageLen)
	if err := o.q.Post(0, WorkRequest{WRID: 1, Opcode: OpWrite, RemoteVA: baseVA, RKey: 1, Data: data}, &o.out); err != nil {
		t.Fatalf("a message of MaxMessageLen bytes refused: %v", err)
	}
	if ps := o.take(); len(ps) != 128 || ps[0].RETH.DMALength != MaxMessageLen {
		t.Errorf("sent %d packets, want the window of 128 with DMA length %d", len(ps), uint32(MaxMessageLen))
	}
	err := o.q.Post(0, WorkRequest{WRID: 2, Opcode: OpWrite, RemoteVA: baseVA, RKey: 1, Data: make([]byte, MaxMessageLen+1)}, &o.out)
	wantErr(t, err, ErrMessageTooLong)
}

// TestMutantSQDrainedAfterAck (QP-ST-12, CTL-AEV-6): a QP moved to SQD with
// a sent packet unacknowledged raises IBV_EVENT_SQ_DRAINED only once that
// packet is acknowledged, not at the move.
func TestMutantSQDrainedAfterAck(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 1024, false)
	o.take()
	if err := o.q.Modify(0, StateSQD, Attr{SQDNotify: true}, AttrEnSQDAsyncNotify, &o.out); err != nil {
		t.Fatal(err)
	}
	if es := o.events(EvSQDrained); len(es) != 0 {
		t.Fatalf("SQ_DRAINED raised at the move with PSN 0 unacknowledged: %+v", es)
	}
	o.recv(1, sackPkt(0, 0, 1, 0, 0x100, wire.MNone))
	if es := o.events(EvSQDrained); len(es) != 1 {
		t.Errorf("%d SQ_DRAINED events after PSN 0 was acknowledged, want 1", len(es))
	}
}
