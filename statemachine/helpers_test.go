package statemachine

import (
	"errors"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// one is a single QP under test (QPN qpnA, peer qpnB) with its Output.
type one struct {
	t   *testing.T
	q   *QP
	out Output
	now Time
}

func newOne(t *testing.T, mod func(*testCfg, *Attr)) *one {
	t.Helper()
	c, a := testConfig(qpnA), testAttr(qpnB)
	if mod != nil {
		mod(&c, &a)
	}
	q, err := c.new()
	if err != nil {
		t.Fatal(err)
	}
	o := &one{t: t, q: q}
	o.out.TracePackets = true
	if err := q.BringUp(0, a, &o.out); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4; k++ {
		if err := q.PostRecv(0, uint64(500+k), &o.out); err != nil {
			t.Fatal(err)
		}
	}
	o.out.Reset()
	return o
}

func (o *one) post(wr WorkRequest) {
	o.t.Helper()
	if err := o.q.Post(o.now, wr, &o.out); err != nil {
		o.t.Fatal(err)
	}
}

func (o *one) write(wrid uint64, n int, imm bool) {
	o.t.Helper()
	wr := WorkRequest{WRID: wrid, Opcode: OpWrite, RemoteVA: baseVA, RKey: 1, Data: make([]byte, n)}
	if imm {
		wr.Opcode, wr.Imm = OpWriteImm, 0xC0DE
	}
	o.post(wr)
}

func (o *one) recv(port int, p *wire.Packet) { o.q.Receive(o.now, port, p, &o.out) }

func (o *one) advance(to Time) {
	o.now = to
	o.q.Advance(to, &o.out)
}

// take returns the packets produced so far and resets the Output.
func (o *one) take() []wire.Packet {
	ps := make([]wire.Packet, len(o.out.Packets))
	for i := range o.out.Packets {
		ps[i] = o.out.Packets[i].Pkt
	}
	o.out.Reset()
	return ps
}

func (o *one) events(k EventKind) []Event {
	var es []Event
	for _, e := range o.out.Events {
		if e.Kind == k {
			es = append(es, e)
		}
	}
	return es
}

func ipv4(p *wire.Packet, dscp, ecn uint8) {
	p.IP4.TOS = dscp<<2 | ecn
	p.IP4.Src, p.IP4.Dst = [4]byte{10, 0, 0, 2}, [4]byte{10, 0, 0, 1}
}

// dataPkt is a write packet from the peer to QP A.
func dataPkt(psn uint32, op wire.Opcode, n int, ev uint32) *wire.Packet {
	p := &wire.Packet{}
	ipv4(p, 4, 2)
	p.SetEV(ev, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: qpnA, PSN: psn, AckReq: op.IsLast()}
	p.RETH = wire.RETH{VA: baseVA + uint64(psn%64)*1024, RKey: 1, DMALength: uint32(n)}
	p.Payload = make([]byte, n)
	return p
}

// sackPkt is a SACK from the peer to QP A with cack_psn cack (inclusive),
// triggered by trig, with bitmap bm based at base.
func sackPkt(cack, trig, base uint32, bm uint64, ev uint32, m wire.Multipath) *wire.Packet {
	p := &wire.Packet{}
	ipv4(p, 46, 0)
	p.BTH = wire.BTH{Opcode: wire.OpSACK, PKey: 0xFFFF, DestQP: qpnA, PSN: cack}
	p.SETH = wire.SETH{M: m, CACKPSN: cack & wire.PSNMask, AckPSNOffset: int16(wire.PSNDiff(trig, cack)), Entropy: ev,
		SACKOffset: int16(wire.PSNDiff(base, cack)), SACKBitmap: bm}
	return p
}

func nackPkt(psn, ev uint32, r wire.NACKReason) *wire.Packet {
	p := &wire.Packet{}
	ipv4(p, 46, 0)
	p.BTH = wire.BTH{Opcode: wire.OpNACK, PKey: 0xFFFF, DestQP: qpnA, PSN: psn}
	p.NETH = wire.NETH{Reason: r, Entropy: ev, NACKPSN: psn}
	return p
}

func aethPkt(psn uint32, syndrome uint8) *wire.Packet {
	p := &wire.Packet{}
	ipv4(p, 46, 0)
	p.BTH = wire.BTH{Opcode: wire.OpAcknowledge, PKey: 0xFFFF, DestQP: qpnA, PSN: psn}
	p.AETH = wire.AETH{Syndrome: syndrome}
	return p
}

func wantErr(t *testing.T, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("error %v, want %v", err, class)
	}
}
