package statemachine

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestTrimNACKNamesItsPacket: a trim NACK's nack_psn is the trimmed
// packet's PSN and its tx_timestamp that packet's TSETH tx_timestamp
// (WIRE-NETH-3), and its BTH psn repeats nack_psn (WIRE-NETH-4).
func TestTrimNACKNamesItsPacket(t *testing.T) {
	o := newOne(t, nil)
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100))
	o.take()
	p := dataPkt(3, wire.OpWriteMiddle, 0, 0x100)
	p.IP4.TOS = 12 << 2 // trimmed (WIRE-DSCP-2)
	p.TSETH.TxTimestamp = 0x1234
	o.recv(1, p)
	ps := o.take()
	if len(ps) != 1 || ps[0].BTH.Opcode != wire.OpNACK {
		t.Fatalf("replies %+v, want one NACK", replies(ps))
	}
	n := ps[0]
	if n.NETH.NACKPSN != 3 || n.NETH.TxTimestamp != 0x1234 || n.BTH.PSN != 3 {
		t.Errorf("NACK nack_psn %d, tx_timestamp %#x, BTH psn %d; want 3, 0x1234, 3", n.NETH.NACKPSN, n.NETH.TxTimestamp, n.BTH.PSN)
	}
}
