package statemachine

import (
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestOutputsPassWireCheck encodes every packet two QPs exchange through
// losses, trims, CE marks, duplicates, probes and WriteIMMs, decodes it
// and runs the codec's strict checks: the state machine fills headers the
// way the wire spec requires (WIRE-BTH-5, WIRE-BTH-6, WIRE-BTH-14,
// WIRE-SETH-8, WIRE-SETH-10, WIRE-NETH-4, WIRE-PETH-2, WIRE-DSCP-1,
// WIRE-DSCP-3, WIRE-DSCP-4, WIRE-UDP-3, WIRE-AETH-2), over IPv4 and IPv6.
func TestOutputsPassWireCheck(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		ca, cb := testConfig(qpnA), testConfig(qpnB)
		ca.Timestamps, cb.Timestamps = true, true
		if v6 {
			a, b := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
			ca.Addr.SrcIP, ca.Addr.DstIP = a, b
			cb.Addr.SrcIP, cb.Addr.DstIP = b, a
		}
		s := newSim(t, ca, cb, testAttr(qpnB), testAttr(qpnA))
		n, sent := 0, map[wire.Opcode]int{}
		s.tap = func(o *Outgoing) {
			p := o.Pkt
			b, err := wire.Default.Append(nil, &p)
			if err != nil {
				t.Fatalf("encode %s: %v", p.String(), err)
			}
			var d wire.Packet
			if err := wire.Default.Decode(b, &d); err != nil {
				t.Fatalf("decode %s: %v", p.String(), err)
			}
			for _, v := range wire.Default.Check(b, &d, nil) {
				t.Errorf("%s: %s", p.String(), v)
			}
			if d.EV(wire.EVModeSTEV) != o.EV {
				t.Errorf("%s: EV %#x on the wire, %#x in Outgoing (WIRE-EV-1)", p.String(), d.EV(wire.EVModeSTEV), o.EV)
			}
			n++
			sent[p.BTH.Opcode]++
		}
		k := 0
		s.rule = func(from int, o *Outgoing) action {
			if !o.Pkt.BTH.Opcode.IsWrite() || from != 0 {
				return action{}
			}
			k++
			switch k % 7 {
			case 1:
				return action{drop: true}
			case 2:
				return action{trim: true}
			case 3:
				return action{ce: true}
			case 4:
				return action{dup: true}
			}
			return action{}
		}
		for i := uint64(1); i <= 6; i++ {
			s.write(0, i, int(i-1)*8192, 3000+int(i)*500, i%2 == 0)
		}
		s.run(200 * Microsecond)
		if n < 40 || sent[wire.OpNACK] == 0 || sent[wire.OpProbe] == 0 || sent[wire.OpAcknowledge] == 0 {
			t.Errorf("v6=%v: checked %d packets: %v; want data, SACKs, NACKs, probes and ACKs", v6, n, sent)
		}
		for i := uint64(1); i <= 6; i++ {
			checkData(t, s, i, int(i-1)*8192, 3000+int(i)*500)
		}
	}
}
