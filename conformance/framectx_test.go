package conformance

import (
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestFrameCtxResetOverwritesEveryField: reset stores frameCtx's fields
// one by one, so the context of one frame must keep nothing of the one
// before: it equals the composite literal of its fields, for a feedback
// frame and a write.
func TestFrameCtxResetOverwritesEveryField(t *testing.T) {
	old := &pcap.Record{}
	old.Packet.BTH.Opcode = wire.OpNACK
	for _, op := range []wire.Opcode{wire.OpSACK, wire.OpWriteOnly} {
		x := frameCtx{pt: &point{name: "old"}, src: "old", r: old, p: &old.Packet, op: wire.OpNACK, control: true, atSender: true}
		r := &pcap.Record{}
		r.Packet.BTH.Opcode = op
		pt := &point{name: "tx"}
		x.reset(pt, "n1", r, false)
		want := frameCtx{pt: pt, src: "n1", r: r, p: &r.Packet, op: op, control: op == wire.OpSACK}
		if x != want {
			t.Errorf("%v: reset gives %+v, want %+v", op, x, want)
		}
	}
}
