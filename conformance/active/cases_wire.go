package active

import (
	"bytes"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Wire rules that need the tester to know what a field must hold: byte
// order, the UDP source port as the EV, SRv6 decapsulation.

func init() { addCases(wireCases) }

func wireCases() {
	register(Case{Role: RoleWire, Run: wireByteOrder, Case: conformance.Case{
		ID: "MRC-WIRE-GEN-101", Title: "Multi-byte fields are sent most significant byte first",
		Assertion:    "Every multi-byte header field whose value the tester knows in advance (QP numbers, PSNs, MSNs, the RETH, the immediate data, the SACK and probe-answer fields, reflected timestamps, the AETH MSN, the UDP destination port) reads as that value most significant byte first at its offset.",
		Requirements: []conformance.RequirementID{"WIRE-GEN-1"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT send a two-packet RDMA WRITE WITH IMM with immediate data 0xA1B2C3D4 to a known address and r_key of the tester; check dest_qp, psn, msn, va, r_key, dma_length and the immediate data of its packets.",
			"Send the IUT a write with a TSETH timestamp 0x1A2B; check its SACK's psn, cack_psn, ack_psn_offset, spdcid, dpdcid, entropy, tx_timestamp and rcvd_bytes and its ACK's psn and msn.",
			"Send the IUT a probe with probe_id 0x5A3C (repeated with 0x5B3D, 0x5C3E, ... while no answer comes); take the answer whose ack_psn_offset is the id of a probe the tester sent, as sent or byte-reversed (the IUT also answers the reverse-path probes of the tester's reference QP), and check its ack_psn_offset and tx_timestamp against that probe.",
			"Report a value whose bytes are reversed as sent least significant byte first."},
		Pass: "every field as expected", Fail: "a field with another value, e.g. its bytes reversed",
	}})
	register(Case{Role: RoleRequester, Run: wireSourcePort, Case: conformance.Case{
		ID: "MRC-WIRE-UDP-101", Title: "The UDP source port carries the packet's EV",
		Assertion:    "The UDP source port of every data packet and probe the IUT sends is EV[15:0] of one of the EVs its EV profile gives the port the packet leaves on, so it varies from packet to packet of one QP.",
		Requirements: []conformance.RequirementID{"WIRE-UDP-2", "EV-SET-1"},
		Level:        spec.Must,
		Steps: []string{"Give the IUT an EV profile of four EVs per plane, all active; keep it sending.",
			"Compare the UDP source port of every data packet and probe with the EVs of its plane; count the distinct source ports."},
		Pass: "every source port an EV of the packet's plane, more than one in all", Fail: "a source port that is no EV of its plane, or one source port for the whole QP",
	}})
	register(Case{Role: RoleResponder, Run: wireSRv6, IPv6: true, Case: conformance.Case{
		ID: "MRC-WIRE-ENC-101", Title: "SRv6-encapsulated packets are processed as the inner packet",
		Assertion:    "A packet in SRv6 encapsulation (an outer IPv6 header to a uSID path, with or without an SRH, around an inner IPv6 header to the IUT's own address) is decapsulated and processed as the inner MRC packet: writes are placed and acknowledged, probes answered, reflecting the inner EV.",
		Requirements: []conformance.RequirementID{"WIRE-ENC-3", "WIRE-EV-8"},
		Level:        spec.Must,
		Steps: []string{"On an IPv6 IUT address (NOT-APPLICABLE over IPv4), send two writes in SRv6 encapsulation, the first without, the second with an SRH, and an SRv6-encapsulated probe.",
			"Expect a SACK for each write reflecting the inner EV, the data placed, and the probe answered. An IUT without SRv6 support lists the case in the PICS's unsupported_cases."},
		Pass: "both writes and the probe processed", Fail: "an SRv6 packet not answered or its data not placed",
	}})
}

// fieldCheck compares a multi-byte field with the value the tester knows
// (WIRE-GEN-1); a value with its bytes reversed is reported as such.
func fieldCheck(t *T, ev Evidence, name string, got, want uint64, size int) {
	if got == want {
		t.OK(1)
		return
	}
	why := ""
	if rev := bits.ReverseBytes64(want) >> (64 - 8*size); got == rev {
		why = ": its bytes in reverse order, least significant byte first"
	}
	t.Fail("WIRE-GEN-1", ev, fmt.Sprintf("%s %#x, most significant byte first (%d bytes)", name, want, size), "%s %#x%s", name, got, why)
}

func wireByteOrder(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	const imm = 0xA1B2C3D4
	mtu := c.Opt.PathMTU
	off := c.Post(1, control.OpRDMAWriteWithImm, 2*mtu, imm)
	c.successes("WIRE-GEN-1", c.WaitSends(1, tim.Transfer), 1)
	seen := 0
	for _, s := range c.Sent {
		p := &s.F.Pkt
		k := int(wire.PSNDiff(s.PSN, c.SQPSN))
		if k < 0 || k > 1 {
			continue
		}
		seen++
		ev := At(s.F)
		fieldCheck(t, ev, "dest_qp", uint64(p.BTH.DestQP), uint64(c.TQPN), 3)
		fieldCheck(t, ev, "UDP destination port", uint64(p.UDP.DstPort), uint64(t.s.codec.Profile().UDPDstPort), 2)
		fieldCheck(t, ev, "METH msn", uint64(p.METH.MSN), 0, 2)
		fieldCheck(t, ev, "RETH va", p.RETH.VA, testerVA+off+uint64(k*mtu), 8)
		fieldCheck(t, ev, "RETH r_key", uint64(p.RETH.RKey), testerRKey, 4)
		fieldCheck(t, ev, "RETH dma_length", uint64(p.RETH.DMALength), uint64(2*mtu), 4)
		if p.BTH.Opcode.HasImm() {
			fieldCheck(t, ev, "ImmDt", uint64(p.ImmDt), imm, 4)
		}
	}
	if seen == 0 {
		t.Inconclusive("the IUT's WriteIMM was never seen")
	}
	// The IUT as responder.
	psn := c.RQPSN
	ev := c.TEV(0, 1)
	const ts = 0x1A2B
	var ack *RxFrame
	c.Watch = func(f *RxFrame) {
		if f.Pkt.BTH.Opcode == wire.OpAcknowledge && f.Pkt.BTH.DestQP == c.TQPN && ack == nil {
			ack = f
		}
	}
	f := c.Exchange(func(int) {
		q := c.Data(psn, wire.OpWriteOnly, 0, fill(1, 512), 512)
		q.BTH.TSPresent = true
		q.TSETH = wire.TSETH{TxTimestamp: ts, FType: 1}
		c.Send(q, 0, ev, Impair{})
	}, sackFor(psn))
	if t.Check(f != nil, "WIRE-GEN-1", Evidence{PSN: &psn}, "a SACK for PSN "+fmt.Sprint(psn), "none") {
		s := &f.Pkt.SETH
		e := At(f)
		fieldCheck(t, e, "BTH psn", uint64(f.Pkt.BTH.PSN), uint64(psn), 3)
		fieldCheck(t, e, "dest_qp", uint64(f.Pkt.BTH.DestQP), uint64(c.TQPN), 3)
		fieldCheck(t, e, "cack_psn", uint64(s.CACKPSN), uint64(psn), 3)
		fieldCheck(t, e, "ack_psn_offset", uint64(uint16(s.AckPSNOffset)), 0, 2)
		fieldCheck(t, e, "spdcid", uint64(s.SPDCID), uint64(uint16(c.IUT)), 2)
		fieldCheck(t, e, "dpdcid", uint64(s.DPDCID), uint64(uint16(c.TQPN)), 2)
		fieldCheck(t, e, "entropy", uint64(s.Entropy), uint64(ev), 4)
		fieldCheck(t, e, "CC_STATE tx_timestamp", uint64(s.CC.TxTimestamp), ts, 2)
		fieldCheck(t, e, "CC_STATE rcvd_bytes", uint64(s.CC.RcvdBytes), uint64(512/t.s.codec.Profile().RcvdBytesUnit), 3)
	}
	c.Run(t.Now()+tim.Reaction, func() bool { return ack != nil })
	switch {
	case ack != nil:
		fieldCheck(t, At(ack), "ACKNOWLEDGE psn", uint64(ack.Pkt.BTH.PSN), uint64(psn), 3)
		fieldCheck(t, At(ack), "AETH msn", uint64(ack.Pkt.AETH.MSN), 1, 3)
	case t.Lossless():
		t.Fail("WIRE-GEN-1", Evidence{PSN: &psn}, "an ACKNOWLEDGE for the ack_req PSN "+fmt.Sprint(psn), "none")
	}
	// The probe answer is matched to the tester's probe by its probe_id,
	// as sent or with its bytes reversed: the IUT also answers the
	// reverse-path probes of the tester's reference QP (EV-REV-2), and an
	// answer may be lost. A repeated probe takes the next id, so that each
	// answer's tx_timestamp is judged against its own probe's.
	sent := map[uint16]uint16{} // probe_id -> tx_timestamp
	probeOf := func(f *RxFrame) (id uint16, ok bool) {
		if f.Pkt.BTH.Opcode != wire.OpSACK || !f.Pkt.SETH.PR {
			return 0, false
		}
		got := uint16(f.Pkt.SETH.AckPSNOffset)
		for _, id := range []uint16{got, bits.ReverseBytes16(got)} {
			if _, ok := sent[id]; ok {
				return id, true
			}
		}
		return 0, false
	}
	f = c.Exchange(func(try int) {
		id := probeID(try)
		sent[id] = c.Probe(id, 0, c.TEV(0, 2), Impair{})
	}, func(f *RxFrame) bool { _, ok := probeOf(f); return ok })
	if t.Check(f != nil, "WIRE-GEN-1", Evidence{}, fmt.Sprintf("an answer to the probe (probe_id %#x)", probeID(0)), "none after %d tries", tim.Tries) {
		id, _ := probeOf(f)
		fieldCheck(t, At(f), "probe answer ack_psn_offset (probe_id)", uint64(uint16(f.Pkt.SETH.AckPSNOffset)), uint64(id), 2)
		fieldCheck(t, At(f), "probe answer tx_timestamp", uint64(f.Pkt.SETH.CC.TxTimestamp), uint64(sent[id]), 2)
	}
}

// probeID is the probe_id of the byte-order case's probe, try 0 first:
// 0x5A3C, 0x5B3D, ... Each has two different bytes, so that a reversed
// value shows, and none is another's reversal.
func probeID(try int) uint16 { return 0x5A3C + 0x0101*uint16(try) }

func wireSourcePort(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{EVsPerPlane: 4, Active: 4})
	ports := map[uint16]bool{}
	bad := 0
	c.Watch = func(f *RxFrame) {
		// This QP's data packets and probes only: frames of an earlier
		// case's QP still in flight are no evidence about this one.
		if f.Pkt.BTH.DestQP != c.TQPN || !f.Pkt.BTH.Opcode.IsWrite() && f.Pkt.BTH.Opcode != wire.OpProbe {
			return
		}
		sp := f.Pkt.UDP.SrcPort
		ports[sp] = true
		var want []uint32
		if f.Plane >= 0 && f.Plane < len(c.IUTEVs) {
			want = c.IUTEVs[f.Plane]
		}
		if slices.ContainsFunc(want, func(e uint32) bool { return uint16(e) == sp }) {
			t.OK(1)
			return
		}
		if bad++; bad <= 5 {
			t.Fail("WIRE-UDP-2", At(f), fmt.Sprintf("UDP source port EV[15:0] of an EV of plane %d (%s)", f.Plane, hexList(want)),
				"source port %#x in %s", sp, describe(f))
		}
	}
	n := c.Traffic(2*tim.Settle, 4, 4096, nil)
	c.WaitSends(n, tim.Transfer)
	if len(ports) == 0 {
		t.Inconclusive("the IUT sent no data")
		return
	}
	t.Check(len(ports) > 1, "WIRE-UDP-2", Evidence{}, fmt.Sprintf("the source port varying with the EV over the QP's packets (%d EVs active)", len(c.allEVs())),
		"%d source port(s)", len(ports))
}

// testerSRv6Locator is the uSID locator block of every SRv6 path the tester
// sends on; testerSRv6Prefix is the same block as the send guard's prefix.
const testerSRv6Locator = 0xFC00_0001

var testerSRv6Prefix = netip.PrefixFrom(netip.AddrFrom16([16]byte{0xfc, 0x00, 0x00, 0x01}), 32)

// sendSRv6 sends p to the IUT on plane with EV ev in SRv6 encapsulation:
// an outer IPv6 header to a uSID path, with an SRH when srh.
func (c *Conn) sendSRv6(p *wire.Packet, plane int, ev uint32, srh bool) {
	t := c.t
	d := t.s.codec.Profile().DSCP
	dscp, ect := d.Trimmable, true
	if p.BTH.Opcode == wire.OpProbe {
		dscp = d.NoTrim
	}
	t.fillL2L3(p, plane, dscp, ect, ev)
	path, err := wire.NewUSIDAddr(testerSRv6Locator, uint16(0x0100|plane), 0x0201)
	if err != nil {
		t.Fatalf("uSID path: %v", err)
	}
	p.SRv6 = true
	p.Outer = wire.IPv6{TrafficClass: p.IP6.TrafficClass, HopLimit: 64, Src: t.s.tester.IP.As16(), Dst: path}
	if srh {
		next, _ := wire.NewUSIDAddr(testerSRv6Locator, 0x0301)
		p.HasSRH = true
		p.SRH = wire.SRH{LastEntry: 0, SegmentsLeft: 0}
		p.SRH.Segments[0] = next
	}
	t.SendPacket(plane, p, Impair{})
}

func wireSRv6(t *T) {
	c := t.NewConn(ConnOptions{})
	m := newModel(c.RQPSN)
	for k, srh := range []bool{false, true} {
		psn := wire.PSNAdd(c.RQPSN, k)
		pl := k % t.Planes()
		ev := c.TEV(pl, k)
		what := map[bool]string{false: "without", true: "with"}[srh] + " an SRH"
		m.add(psn)
		f := c.Exchange(func(int) {
			q := c.Data(psn, wire.OpWriteOnly, uint64(k)*4096, fill(k, 512), 512)
			q.METH.MSN = uint16(k)
			c.sendSRv6(q, pl, ev, srh)
		}, sackFor(psn))
		if !t.Check(f != nil, "WIRE-ENC-3", Evidence{PSN: &psn}, "a SACK for the SRv6-encapsulated write "+what, "none after %d tries", t.s.tim.Tries) {
			continue
		}
		t.Check(f.Pkt.SETH.CACKPSN == m.cack, "WIRE-ENC-3", At(f), fmt.Sprintf("cack_psn %d: the inner write received", m.cack), describe(f))
		t.Check(f.Pkt.SETH.Entropy == ev, "WIRE-EV-8", At(f), fmt.Sprintf("the inner EV %#x reflected", ev), describe(f))
	}
	for k := range 2 {
		t.Check(bytes.Equal(c.ReadIUT(uint64(k)*4096, 512), fill(k, 512)), "WIRE-ENC-3", Evidence{PSN: ptrU32(wire.PSNAdd(c.RQPSN, k))},
			fmt.Sprintf("the inner payload of SRv6 write %d placed", k), "memory differs")
	}
	const id = 0x6E11
	ev := c.TEV(0, 3)
	f := c.Exchange(func(int) {
		p := &wire.Packet{}
		p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: c.IUT}
		p.PETH = wire.PETH{ProbeID: id, SPDCID: uint16(c.TQPN), DPDCID: uint16(c.IUT), TxTimestamp: c.ts(), FType: 1}
		c.sendSRv6(p, 0, ev, false)
	}, func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpSACK && f.Pkt.SETH.PR && uint16(f.Pkt.SETH.AckPSNOffset) == id
	})
	if t.Check(f != nil, "WIRE-ENC-3", Evidence{}, "an answer to the SRv6-encapsulated probe", "none") {
		t.Check(f.Pkt.SETH.Entropy == ev, "WIRE-EV-8", At(f), fmt.Sprintf("the inner EV %#x reflected", ev), describe(f))
	}
}
