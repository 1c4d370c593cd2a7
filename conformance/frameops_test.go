package conformance

import (
	"slices"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestFrameOpsDeclared checks the opcodes a check's frame hook declares
// (check.frameOps, by which wireChecks skips it): on a frame of any other
// opcode, with every field set to a value its checks would reject, the
// hook reports that the case does not apply and records nothing, so
// skipping it cannot change a verdict.
func TestFrameOpsDeclared(t *testing.T) {
	n := 0
	for _, c := range checks[:numCases] {
		if c == nil || c.frame == nil || len(c.frameOps) == 0 {
			continue
		}
		n++
		for op := range 256 {
			if slices.Contains(c.frameOps, wire.Opcode(op)) {
				continue
			}
			e := newEngine(DefaultPICS())
			pt := newPoint("p")
			var r pcap.Record
			p := &r.Packet
			p.BTH.Opcode, p.BTH.PKey, p.BTH.DestQP = wire.Opcode(op), 0x1234, 0x12345
			p.IP4.TOS, p.IP6.TrafficClass = 0xff, 0xff
			p.SETH = wire.SETH{Type: 1, NextHeader: 1, CCType: 1, CCFlags: 1, MPR: 7, DPDCID: 1}
			p.NETH = wire.NETH{Type: 1, NextHeader: 1, CCType: 9, CCFlags: 1, DPDCID: 1}
			p.PETH = wire.PETH{Type: 1, NextHeader: 1, TSR: true, DPDCID: 1}
			p.AETH.Syndrome = 0x20
			x := &frameCtx{pt: pt, src: "n", r: &r, p: p, op: wire.Opcode(op),
				control: op == int(wire.OpSACK) || op == int(wire.OpNACK) || op == int(wire.OpAcknowledge) || op == int(wire.OpEndpointResp)}
			if c.frame(e, x) || len(e.failedCases) > 0 || len(e.rows) > 0 {
				t.Errorf("%s: its frame hook judges opcode %d, which its frameOps %v leave out", c.cs, op, c.frameOps)
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d checks declare frameOps, want the opcode-specific ones (at least 5)", n)
	}
}
