package statemachine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// reply summarises a control packet.
type reply struct {
	Op     wire.Opcode
	PSN    uint32 // SACK: cack_psn; NACK: nack_psn; ACK: BTH psn
	Reason wire.NACKReason
	Ack    uint32 // SACK: the answered PSN
	Base   uint32
	BM     uint64
	M      wire.Multipath
	EV     uint32
}

func replies(ps []wire.Packet) []reply {
	var r []reply
	for i := range ps {
		p := &ps[i]
		switch p.BTH.Opcode {
		case wire.OpSACK:
			r = append(r, reply{Op: p.BTH.Opcode, PSN: p.SETH.CACKPSN, Ack: p.SETH.AckPSN(), Base: p.SETH.BitmapBase(),
				BM: p.SETH.SACKBitmap, M: p.SETH.M, EV: p.SETH.Entropy})
		case wire.OpNACK:
			r = append(r, reply{Op: p.BTH.Opcode, PSN: p.NETH.NACKPSN, Reason: p.NETH.Reason, EV: p.NETH.Entropy})
		default:
			r = append(r, reply{Op: p.BTH.Opcode, PSN: p.BTH.PSN})
		}
	}
	return r
}

func placed(o *one) []uint32 {
	var ps []uint32
	for _, p := range o.out.Placements {
		ps = append(ps, p.PSN)
	}
	return ps
}

// TestReceiveClassification: with cack = RQ_PSN − 1 = 2^24 − 3 and
// W = 128, PSNs are new, duplicate or out of window by (p − cack) mod 2^24
// (RSP-RCV-6), across the wrap (RSP-RCV-5); new PSNs are placed in any
// order and tracked (RSP-RCV-3, RSP-RCV-4); out-of-window PSNs are NACKed
// unplaced (RSP-NACK-4, MPR-WIN-4).
func TestReceiveClassification(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.RQPSN = 1<<24 - 2 })
	cack := uint32(1<<24 - 3)
	at := func(d uint32) uint32 { return (cack + d) & wire.PSNMask }
	const mid = wire.OpWriteMiddle
	o.recv(1, dataPkt(at(128), mid, 1024, 0x100)) // d = W: new
	o.recv(1, dataPkt(at(129), mid, 1024, 0x100)) // d = W+1: out of window
	o.recv(1, dataPkt(at(5), mid, 1024, 0x100))   // new, past the wrap
	o.recv(1, dataPkt(at(0), mid, 1024, 0x100))   // d = 0: duplicate
	o.recv(1, dataPkt(at(1<<23), mid, 1024, 0x100))
	o.recv(1, dataPkt(at(1<<23-1), mid, 1024, 0x100)) // out of window
	if d := cmp.Diff([]uint32{at(128), at(5)}, placed(o)); d != "" {
		t.Errorf("placed (-want +got): %s", d)
	}
	got := replies(o.take())
	want := []reply{
		{Op: wire.OpSACK, PSN: cack, Ack: at(128), Base: at(65), BM: 1 << 63, EV: 0x100},
		{Op: wire.OpNACK, PSN: at(129), Reason: wire.NACKPSNOutOfWindow, EV: 0x100},
		{Op: wire.OpSACK, PSN: cack, Ack: at(5), Base: at(1), BM: 1 << 4, EV: 0x100},
		{Op: wire.OpSACK, PSN: cack, Ack: at(0), Base: at(1), BM: 1 << 4, EV: 0x100},
		{Op: wire.OpSACK, PSN: cack, Ack: cack, Base: at(1), BM: 1 << 4, EV: 0x100},
		{Op: wire.OpNACK, PSN: at(1<<23 - 1), Reason: wire.NACKPSNOutOfWindow, EV: 0x100},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replies (-want +got): %s", d)
	}
	if !o.q.ResponderHas(at(5)) || o.q.ResponderHas(at(6)) || o.q.ResponderCumulativeACK() != cack {
		t.Error("tracking state wrong")
	}
}

// TestDuplicates: a duplicate, whether flagged rtx or not, is
// re-acknowledged and never placed or counted again (RSP-DUP-1, RSP-DUP-2,
// RSP-DUP-3).
func TestDuplicates(t *testing.T) {
	o := newOne(t, nil)
	p := dataPkt(0, wire.OpWriteMiddle, 1024, 0x100)
	o.recv(1, p)
	o.recv(1, dataPkt(2, wire.OpWriteMiddle, 1024, 0x100))
	o.take()
	for _, rtx := range []bool{false, true} {
		for _, psn := range []uint32{0, 2} {
			d := dataPkt(psn, wire.OpWriteMiddle, 1024, 0x201)
			d.BTH.Retransmit = rtx
			o.recv(1, d)
		}
	}
	if n := len(o.out.Placements); n != 0 {
		t.Errorf("%d duplicates placed", n)
	}
	got := replies(o.take())
	if len(got) != 4 {
		t.Fatalf("%d replies to 4 duplicates", len(got))
	}
	for _, r := range got {
		if r.Op != wire.OpSACK || r.EV != 0x201 || r.PSN != 0 || r.BM != 0b10 {
			t.Errorf("reply %+v, want a SACK reflecting EV 0x201 with cack 0 and PSN 2 in the bitmap", r)
		}
	}
	o.recv(1, dataPkt(1, wire.OpWriteMiddle, 1024, 0x100))
	s := o.take()[0].SETH
	if s.CC.RcvdBytes != 3*1024/256 {
		t.Errorf("rcvd_bytes %d, want 12 (3 KiB in 256-byte units, duplicates not counted, WIRE-CCS-1)", s.CC.RcvdBytes)
	}
}

// TestTrimmedArrivals: trims are recognised by DSCP (WIRE-DSCP-2) and
// NACKed TRIMMED or TRIMMED_LASTHOP without placing (RSP-NACK-1); a trimmed
// duplicate is SACKed (RSP-DUP-2) and a trimmed out-of-window PSN NACKed
// PSN_OOR_WINDOW (RSP-SM-3); without trim-NACK support they are dropped
// silently (RSP-NACK-2).
func TestTrimmedArrivals(t *testing.T) {
	trim := func(psn uint32, dscp uint8) *wire.Packet {
		p := dataPkt(psn, wire.OpWriteMiddle, 0, 0x100)
		p.IP4.TOS = dscp << 2
		return p
	}
	o := newOne(t, nil)
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100))
	o.take()
	o.recv(1, trim(1, 12))
	o.recv(1, trim(2, 16))
	o.recv(1, trim(0, 12))
	o.recv(1, trim(500, 12))
	if len(o.out.Placements) != 0 || o.q.ResponderHas(1) {
		t.Error("a trimmed packet was placed or marked received")
	}
	got := replies(o.take())
	want := []reply{
		{Op: wire.OpNACK, PSN: 1, Reason: wire.NACKTrimmed, EV: 0x100},
		{Op: wire.OpNACK, PSN: 2, Reason: wire.NACKTrimmedLastHop, EV: 0x100},
		{Op: wire.OpSACK, PSN: 0, Ack: 0, Base: 1, EV: 0x100},
		{Op: wire.OpNACK, PSN: 500, Reason: wire.NACKPSNOutOfWindow, EV: 0x100},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	o = newOne(t, func(c *testCfg, a *Attr) { c.Device.NoTrimNACK = true })
	o.recv(1, trim(0, 12))
	if n := len(o.take()); n != 0 {
		t.Errorf("%d replies from a responder without trim NACKs", n)
	}
}

// TestResourceNACKs: while short of tracking state, buffers or another
// resource, new data is NACKed with the matching code and not placed
// (RSP-NACK-3, RSP-NACK-6).
func TestResourceNACKs(t *testing.T) {
	for c, r := range map[ResourceCondition]wire.NACKReason{NoTrackingBitmap: wire.NACKNoBitmap,
		NoPacketBuffer: wire.NACKNoPktBuffer, NoOtherResource: wire.NACKNoResource} {
		o := newOne(t, nil)
		o.q.SetResourceCondition(c)
		p := dataPkt(0, wire.OpWriteOnly, 10, 0x201)
		p.TSETH.TxTimestamp = 77
		o.recv(2, p)
		ps := o.take()
		if len(ps) != 1 || ps[0].NETH.Reason != r || ps[0].NETH.TxTimestamp != 77 || ps[0].DSCP() != 46 || ps[0].ECN() != 0 {
			t.Errorf("%v: replies %+v, want one %s NACK reflecting the timestamp in DSCP_CONTROL", c, replies(ps), r)
		}
		if o.q.ResponderHas(0) {
			t.Errorf("%v: the PSN was taken", c)
		}
		o.q.SetResourceCondition(ResourcesOK)
		o.recv(2, p)
		if len(o.out.Placements) != 1 {
			t.Errorf("%v: not placed once the resource is back", c)
		}
	}
}

// TestSACKFields: a SACK reports cack, the answered PSN, a bitmap based at
// cack + 1 or at the PSN − 63 beyond cack + 64, the reflected EV and
// timestamp, and CC_STATE (RSP-SACK-1, RSP-SACK-2, RSP-SACK-6, RSP-SACK-7,
// WIRE-SETH-5, WIRE-SETH-6, WIRE-SETH-9, WIRE-SETH-10, WIRE-CCS-1,
// WIRE-CCS-2, WIRE-EV-5); it leaves on the plane the packet arrived on
// (EV-REV-4).
func TestSACKFields(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.QPN = qpnA })
	for _, psn := range []uint32{0, 3, 5, 100} {
		p := dataPkt(psn, wire.OpWriteMiddle, 1024, 0x201)
		p.TSETH.TxTimestamp = uint16(psn + 1)
		o.recv(2, p)
	}
	ps := o.take()
	got := replies(ps)
	want := []reply{
		{Op: wire.OpSACK, PSN: 0, Ack: 0, Base: 1, EV: 0x201},
		{Op: wire.OpSACK, PSN: 0, Ack: 3, Base: 1, BM: 0b100, EV: 0x201},
		{Op: wire.OpSACK, PSN: 0, Ack: 5, Base: 1, BM: 0b10100, EV: 0x201},
		{Op: wire.OpSACK, PSN: 0, Ack: 100, Base: 37, BM: 1 << 63, EV: 0x201},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	last := ps[3]
	s := last.SETH
	if s.CC.TxTimestamp != 101 || s.CC.OOOCount != 3 || s.CC.RcvdBytes != 16 || s.SPDCID != qpnA || s.DPDCID != qpnB ||
		last.BTH.PSN != s.CACKPSN || last.BTH.DestQP != qpnB || last.DSCP() != 46 || last.ECN() != 0 || s.MPR != 0 || s.PR {
		t.Errorf("SACK %+v, BTH %+v", s, last.BTH)
	}
	for _, p := range ps {
		if p.EV(wire.EVModeSTEV)>>8 != 2 {
			t.Errorf("SACK left on EV %#x, not plane 1 where the data arrived", p.EV(wire.EVModeSTEV))
		}
	}
}

// TestAckCoalescing: with ack_coalesce 3, in-order middle packets share a
// SACK, held at most the coalescing delay; the last packet of a message, a
// CE mark or an rtx flag are acknowledged at once (RSP-SACK-5, RSP-SM-1).
func TestAckCoalescing(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Policy.Ack.Coalesce = 3 })
	mid := func(psn uint32) *wire.Packet { return dataPkt(psn, wire.OpWriteMiddle, 1024, 0x100) }
	o.recv(1, mid(0))
	o.recv(1, mid(1))
	if n := len(o.take()); n != 0 {
		t.Fatalf("%d SACKs for 2 coalesced packets", n)
	}
	o.recv(1, mid(2))
	if r := replies(o.take()); len(r) != 1 || r[0].PSN != 2 {
		t.Fatalf("after 3 packets: %+v, want one SACK with cack 2", r)
	}
	o.recv(1, mid(3))
	if d := o.q.NextDeadline(); d != 2*Microsecond {
		t.Fatalf("deadline %d, want the 2 µs coalescing delay", d)
	}
	o.advance(2 * Microsecond)
	if r := replies(o.take()); len(r) != 1 || r[0].PSN != 3 {
		t.Errorf("after the delay: %+v", r)
	}
	ce := mid(4)
	ce.IP4.TOS |= 3
	o.recv(1, ce)
	rtx := mid(5)
	rtx.BTH.Retransmit = true
	o.recv(1, rtx)
	o.recv(1, dataPkt(6, wire.OpWriteLast, 1024, 0x100))
	var sacks int
	for _, r := range replies(o.take()) {
		if r.Op == wire.OpSACK {
			sacks++
		}
	}
	if sacks != 3 {
		t.Errorf("%d SACKs for a CE, an rtx and a last packet, want 3", sacks)
	}
}

// TestAlwaysSkip: SKIP_ONCE for each CE-marked arrival (RSP-SACK-3),
// ALWAYS_SKIP on the 16th in a row on one EV, after which its count
// restarts (RSP-SACK-4, RSP-SM-2); an unmarked arrival restarts it too.
func TestAlwaysSkip(t *testing.T) {
	o := newOne(t, nil)
	psn := uint32(0)
	send := func(ev uint32, ce bool) wire.Multipath {
		p := dataPkt(psn, wire.OpWriteMiddle, 1024, ev)
		if ce {
			p.IP4.TOS |= 3
		}
		psn++
		o.recv(1, p)
		ps := o.take()
		return ps[len(ps)-1].SETH.M
	}
	for i := 0; i < 15; i++ {
		if m := send(0x100, true); m != wire.MSkipOnce {
			t.Fatalf("mark %d: m = %s", i+1, m)
		}
	}
	if m := send(0x100, false); m != wire.MNone {
		t.Fatalf("unmarked: m = %s", m)
	}
	for i := 0; i < 15; i++ {
		send(0x100, true)
	}
	if m := send(0x100, true); m != wire.MAlwaysSkip {
		t.Errorf("16th mark in a row: m = %s, want ALWAYS_SKIP", m)
	}
	if m := send(0x100, true); m != wire.MSkipOnce {
		t.Errorf("after ALWAYS_SKIP the count restarts: m = %s", m)
	}
}

// TestTransportACK: when cack passes a PSN that carried ack_req, one ACK
// with BTH psn = cack, syndrome 0x1F and the count of complete messages
// (RSP-ACK-1, WIRE-AETH-2).
func TestTransportACK(t *testing.T) {
	o := newOne(t, nil)
	o.recv(1, dataPkt(1, wire.OpWriteLast, 10, 0x100)) // ack_req, out of order
	o.recv(1, dataPkt(2, wire.OpWriteOnly, 10, 0x100))
	if n := len(o.events(EvACKSent)); n != 0 {
		t.Fatalf("%d ACKs before cack reached an ack_req PSN", n)
	}
	o.recv(1, dataPkt(0, wire.OpWriteFirst, 1024, 0x100))
	var acks []wire.Packet
	for _, p := range o.take() {
		if p.BTH.Opcode == wire.OpAcknowledge {
			acks = append(acks, p)
		}
	}
	if len(acks) != 1 || acks[0].BTH.PSN != 2 || acks[0].AETH.Syndrome != 0x1F || acks[0].AETH.MSN != 2 {
		t.Errorf("ACKs %+v, want one with psn 2, syndrome 0x1F, msn 2", acks)
	}
}

// TestProbeAnswer: a probe is answered by a SACK with pr = 1, its probe_id
// in ack_psn_offset, its EV and timestamp reflected and the current state;
// CE gives SKIP_ONCE; nothing is placed or tracked (RSP-PRB-1, RSP-PRB-2,
// WIRE-SETH-7).
func TestProbeAnswer(t *testing.T) {
	o := newOne(t, nil)
	o.recv(1, dataPkt(3, wire.OpWriteMiddle, 1024, 0x100))
	o.take()
	p := &wire.Packet{}
	ipv4(p, 0, 3)
	p.SetEV(0x201, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: qpnA}
	p.PETH = wire.PETH{ProbeID: 0x1234, TxTimestamp: 9}
	o.recv(2, p)
	ps := o.take()
	if len(ps) != 1 || len(o.out.Placements) != 0 {
		t.Fatalf("%d replies, %d placements", len(ps), len(o.out.Placements))
	}
	s := ps[0].SETH
	if !s.PR || uint16(s.AckPSNOffset) != 0x1234 || s.Entropy != 0x201 || s.CC.TxTimestamp != 9 ||
		s.M != wire.MSkipOnce || s.CACKPSN != 1<<24-1 || s.SACKBitmap != 0b1000 {
		t.Errorf("probe answer %+v", s)
	}
}

// TestWIMMLimit: a responder holds at most max_wimm_dest WriteIMMs; one
// more is answered per the profile's wimm_limit_signal and the QP fails
// (WIMM-RSP-4, QP-ST-10).
func TestWIMMLimit(t *testing.T) {
	for _, sig := range []spec.WIMMLimitSignal{spec.WIMMLimitAETHInvalidRequest, spec.WIMMLimitNACKUnexpEvent} {
		o := newOne(t, func(c *testCfg, a *Attr) {
			a.MaxWIMMDest = 2
			p := spec.DefaultProfile()
			p.WIMMLimit = sig
			c.Profile = &p
		})
		for i := uint32(1); i <= 3; i++ { // PSN 0 missing: nothing can complete
			p := dataPkt(i, wire.OpWriteOnlyImm, 10, 0x100)
			p.METH.RQMSN = uint16(i - 1)
			o.recv(1, p)
		}
		ps := o.take()
		last := ps[len(ps)-1]
		switch sig {
		case spec.WIMMLimitAETHInvalidRequest:
			if last.BTH.Opcode != wire.OpAcknowledge || last.AETH.Syndrome != 3<<5|1 || last.BTH.PSN != 3 {
				t.Errorf("AETH signal: last reply %+v", replies(ps[len(ps)-1:]))
			}
		default:
			if last.BTH.Opcode != wire.OpNACK || last.NETH.Reason != wire.NACKUnexpEvent {
				t.Errorf("NACK signal: last reply %+v", replies(ps[len(ps)-1:]))
			}
		}
		if o.q.State() != StateError || o.q.ResponderHas(3) {
			t.Errorf("state %s; the third WriteIMM taken: %v", o.q.State(), o.q.ResponderHas(3))
		}
	}
}

// TestNoReceiveWR: a WriteIMM that completes with no receive WR posted is
// answered UNEXP_EVENT and fails the QP (WIMM-RSP-3, RSP-NACK-5).
func TestNoReceiveWR(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.MaxRecvWR = 4 })
	for i := uint32(0); i < 5; i++ {
		p := dataPkt(i, wire.OpWriteOnlyImm, 10, 0x100)
		p.METH.RQMSN = uint16(i)
		o.recv(1, p)
	}
	var recv []uint64
	for _, c := range o.out.Completions {
		if c.Recv && c.Status == StatusSuccess {
			recv = append(recv, c.WRID)
		}
	}
	if d := cmp.Diff([]uint64{500, 501, 502, 503}, recv); d != "" {
		t.Errorf("receive completions (-want +got): %s", d)
	}
	ps := o.take()
	if last := ps[len(ps)-1]; last.BTH.Opcode != wire.OpNACK || last.NETH.Reason != wire.NACKUnexpEvent || last.NETH.NACKPSN != 4 {
		t.Errorf("last reply %+v, want UNEXP_EVENT for PSN 4", replies(ps[len(ps)-1:]))
	}
	if o.q.State() != StateError {
		t.Errorf("state %s", o.q.State())
	}
}

// TestRemoteAccess: a write outside the registered regions is answered
// AETH NAK code 2, not placed, and fails the QP (RSP-RCV-2).
func TestRemoteAccess(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.MRs = []MemoryRegion{{RKey: 1, VA: baseVA, Len: 4096}} })
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100)) // inside
	p := dataPkt(1, wire.OpWriteMiddle, 1024, 0x100)
	p.RETH.VA = baseVA + 3500 // crosses the end
	o.recv(1, p)
	if len(o.out.Placements) != 1 || o.q.State() != StateError {
		t.Fatalf("%d placements, state %s", len(o.out.Placements), o.q.State())
	}
	ps := o.take()
	if last := ps[len(ps)-1]; last.BTH.Opcode != wire.OpAcknowledge || last.AETH.Syndrome != 3<<5|2 {
		t.Errorf("reply %+v, want an AETH NAK with code 2", replies(ps[len(ps)-1:]))
	}
}

// TestReceiveDiscards: a wrong P_Key (WIRE-BTH-12), a payload size its
// opcode forbids (WIRE-PAY-1) or another QP number is discarded without an
// answer (RSP-RCV-1).
func TestReceiveDiscards(t *testing.T) {
	o := newOne(t, nil)
	bad := []*wire.Packet{dataPkt(0, wire.OpWriteMiddle, 1024, 0x100), dataPkt(0, wire.OpWriteFirst, 1000, 0x100),
		dataPkt(0, wire.OpWriteLast, 0, 0x100), dataPkt(0, wire.OpWriteOnly, 1025, 0x100), dataPkt(0, wire.OpWriteOnly, 10, 0x100)}
	bad[0].BTH.PKey = 0x7FFF
	bad[4].BTH.DestQP = 0x99
	for _, p := range bad {
		o.recv(1, p)
	}
	if n := len(o.take()); n != 0 || len(o.out.Placements) != 0 {
		t.Errorf("%d answers to discarded packets", n)
	}
	if n := len(o.events(EvIgnored)); n != 0 {
		t.Errorf("take left %d events", n)
	}
}

// TestPlainWritesNoCompletion: plain WRITEs consume no receive WR and
// produce no responder completion (WIMM-RSP-5).
func TestPlainWritesNoCompletion(t *testing.T) {
	o := newOne(t, nil)
	o.recv(1, dataPkt(0, wire.OpWriteOnly, 10, 0x100))
	if len(o.out.Completions) != 0 {
		t.Errorf("completions %+v", o.out.Completions)
	}
}

// TestResponderDynamicMPR: the responder advertises its current window in
// every SACK and treats PSNs beyond it as out of window (MPR-DYN-2,
// RSP-RCV-6); without dynamic MPR the field is 0 (WIRE-SETH-4).
func TestResponderDynamicMPR(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { a.MPRDest, a.Cap = 2, CapDynamicMPR })
	wantErr(t, o.q.SetDynamicMPR(3), ErrInvalidAttr)
	if err := o.q.SetDynamicMPR(1); err != nil {
		t.Fatal(err)
	}
	o.recv(1, dataPkt(127, wire.OpWriteMiddle, 1024, 0x100))
	o.recv(1, dataPkt(128, wire.OpWriteMiddle, 1024, 0x100)) // d = 129 > 128
	ps := o.take()
	if ps[0].SETH.MPR != 1 || ps[1].BTH.Opcode != wire.OpNACK || ps[1].NETH.Reason != wire.NACKPSNOutOfWindow {
		t.Errorf("replies %+v, want a SACK with mpr 1 then a PSN_OOR_WINDOW NACK", replies(ps))
	}
	o = newOne(t, nil)
	wantErr(t, o.q.SetDynamicMPR(1), ErrQPState)
}

// TestReceivePenalty: the responder's configured penalty goes into every
// SACK, the restore flag into the next one only (CC-RSP-3, RSP-SACK-7).
func TestReceivePenalty(t *testing.T) {
	o := newOne(t, nil)
	wantErr(t, o.q.SetReceivePenalty(128, false), ErrInvalidAttr)
	if err := o.q.SetReceivePenalty(40, true); err != nil {
		t.Fatal(err)
	}
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100))
	o.recv(1, dataPkt(1, wire.OpWriteMiddle, 1024, 0x100))
	ps := o.take()
	if c0, c1 := ps[0].SETH.CC, ps[1].SETH.CC; c0.RcvCwndPen != 40 || !c0.RC || c1.RcvCwndPen != 40 || c1.RC {
		t.Errorf("CC_STATE %+v then %+v", c0, c1)
	}
}

// TestWIMMDuplicateRQMSN: a WriteIMM reusing a held RQMSN under a new PSN
// is discarded without an answer (WIMM-SM-1).
func TestWIMMDuplicateRQMSN(t *testing.T) {
	o := newOne(t, nil)
	for _, psn := range []uint32{1, 2} {
		p := dataPkt(psn, wire.OpWriteOnlyImm, 10, 0x100)
		p.METH.RQMSN = 0
		o.recv(1, p)
	}
	if d := cmp.Diff([]uint32{1}, placed(o)); d != "" {
		t.Errorf("placed (-want +got): %s", d)
	}
	if held := o.q.WIMMHeld(nil); len(held) != 1 {
		t.Errorf("held %v", held)
	}
}
