package modelcheck

import (
	"bytes"
	"fmt"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Data in the model. Every PSN QP s sends carries bytes that identify it:
// byte j of PSN p's payload is content(s, p, j), so the bytes alone name
// the message and offset they belong to (the PSN's content tag). The
// ghost memory of a responder maps each PSN-sized slot of the registered
// buffer to the tag of the bytes last placed there, computed from the real
// Placement bytes and address. MemoryMatchesWrites requires, wherever a
// completion is reported, that every slot of the completed messages holds
// exactly the bytes written to it.

// Memory slot tags: 0 nothing placed; tagGarbage bytes that are no PSN's
// payload, a partial write or an unaligned one; otherwise 1 + the PSN
// whose payload the slot holds.
const tagGarbage = 0xFF

func content(s int, psn uint32, j int) byte { return byte(int(psn)*37 + s*101 + j*13 + 7) }

// payload returns the bytes PSN psn of QP s carries.
func payload(s int, psn uint32) []byte {
	b := make([]byte, pathMTU)
	for j := range b {
		b[j] = content(s, psn, j)
	}
	return b
}

// tagOf is the content tag of bytes placed from QP s's traffic. 37·173 ≡ 1
// (mod 256) recovers the PSN from the first byte; the rest must agree.
func (c *checker) tagOf(s int, data []byte) uint8 {
	if len(data) != pathMTU {
		return tagGarbage
	}
	p := uint32(byte((data[0] - byte(s*101+7)) * 173))
	if p >= maxPSNs || !bytes.Equal(data, c.content[s][p]) {
		return tagGarbage
	}
	return uint8(p + 1)
}

// placement is what one Placement wrote: where, and the tag of its bytes.
type placement struct {
	psn uint32
	va  uint64
	n   int
	tag uint8
}

// write applies a placement to the ghost memory g.mem of the responder
// that holds the traffic of the other QP.
func (g *ghost) write(p placement) {
	if p.va < baseVA || p.va+uint64(p.n) > baseVA+maxPSNs*pathMTU {
		g.wild = true
		return
	}
	off := p.va - baseVA
	for i := off / pathMTU; i < maxPSNs && i*pathMTU < off+uint64(p.n); i++ {
		if off == i*pathMTU && p.n == pathMTU {
			g.mem[i] = p.tag
		} else {
			g.mem[i] = tagGarbage
		}
	}
}

// memoryOK reports whether slots from..to-1 hold exactly the payloads of
// PSNs from..to-1 (and nothing was written outside the buffer); else it
// describes the first difference.
func (g *ghost) memoryOK(from, to uint32) (bool, uint32, uint8) {
	if g.wild {
		return false, maxPSNs, 0
	}
	for p := from; p < to; p++ {
		if g.mem[p] != uint8(p+1) {
			return false, p, g.mem[p]
		}
	}
	return true, 0, 0
}

func (c *checker) checkMemory(v *violations, s int, g *ghost, what string, from, to uint32) {
	ok, p, tag := g.memoryOK(from, to)
	switch {
	case ok:
	case p == maxPSNs:
		v.add(InvMemoryMatchesWrites, "%s reports %s, but %s wrote outside the registered buffer", side[s], what, side[1-s])
	case tag == 0:
		v.add(InvMemoryMatchesWrites, "%s reports %s, but the slot of psn %d holds nothing", side[s], what, p)
	case tag == tagGarbage:
		v.add(InvMemoryMatchesWrites, "%s reports %s, but the slot of psn %d holds bytes of no PSN (a partial or misaligned write)",
			side[s], what, p)
	default:
		v.add(InvMemoryMatchesWrites, "%s reports %s, but the slot of psn %d holds the bytes of psn %d", side[s], what, p, tag-1)
	}
}

// templates builds, for the adversarial requester, one first transmission
// of every PSN QP 0's WRs carry: a real requester with a window as large
// as the model allows sends them all.
func (c *checker) templates() ([]wire.Packet, []uint8, error) {
	q, err := sm.New(c.cfg.smConfig(0))
	if err != nil {
		return nil, nil, err
	}
	a := c.cfg.attr(0)
	a.MPR, a.MaxWIMM = maxPSNs, maxPSNs
	var out sm.Output
	if err := q.BringUp(0, a, &out); err != nil {
		return nil, nil, err
	}
	for k, m := range c.msgs[0] {
		if err := q.Post(0, c.wr(0, k, m), &out); err != nil {
			return nil, nil, err
		}
	}
	var pk []wire.Packet
	var planes []uint8
	for _, o := range out.Packets {
		if o.Pkt.BTH.Opcode.IsWrite() && o.Pkt.BTH.PSN == c.abs(uint32(len(pk))) {
			pk = append(pk, o.Pkt)
			planes = append(planes, o.Plane)
		}
	}
	pk, planes = c.moreTemplates(pk, planes)
	return pk, planes, nil
}

// moreTemplates appends to the first transmissions pk (on planes) the
// packets of the adversary's moves (Config.AdversaryMoves).
func (c *checker) moreTemplates(pk []wire.Packet, planes []uint8) ([]wire.Packet, []uint8) {
	n := len(pk)
	add := func(k wire.Packet, plane uint8) {
		pk = append(pk, k)
		planes = append(planes, plane)
	}
	mv := c.cfg.AdversaryMoves
	if mv&AdvResend != 0 {
		for i := range n {
			k := pk[i]
			k.BTH.Retransmit = true
			k.IP4.TOS = dscp.TrimmableRetx<<2 | k.IP4.TOS&3
			ev := c.evs[(c.evIndex(k.EV(wire.EVModeUDP))+1)%len(c.evs)]
			k.SetEV(ev, wire.EVModeUDP)
			add(k, uint8(ev>>8)-1)
		}
	}
	if mv&AdvForge != 0 {
		for _, r := range forgedPSNs {
			k := pk[0]
			k.BTH.PSN = wire.PSNAdd(c.cfg.StartPSN, r)
			add(k, planes[0])
		}
	}
	if mv&AdvTrim != 0 {
		for i := range n {
			for _, d := range [...]uint8{dscp.Trimmed, dscp.TrimmedLastHop} {
				k := pk[i]
				k.IP4.TOS = d<<2 | k.IP4.TOS&3
				k.Payload = nil
				add(k, planes[i])
			}
		}
	}
	if mv&AdvCE != 0 {
		for i := range n {
			if k := pk[i]; k.ECN() == 2 {
				k.IP4.TOS |= 3
				add(k, planes[i])
			}
		}
	}
	if mv&AdvForgeIMM != 0 {
		imm := pk[n-1]
		for _, r := range forgedPSNs {
			k := imm
			k.BTH.PSN = wire.PSNAdd(c.cfg.StartPSN, r)
			add(k, planes[n-1])
		}
		k := imm
		k.METH.RQMSN++
		add(k, planes[n-1])
		k = pk[n-2]
		k.BTH.Opcode = map[wire.Opcode]wire.Opcode{wire.OpWriteOnly: wire.OpWriteOnlyImm, wire.OpWriteLast: wire.OpWriteLastImm}[k.BTH.Opcode]
		k.ImmDt, k.METH.RQMSN = imm.ImmDt, imm.METH.RQMSN
		add(k, planes[n-2])
	}
	return pk, planes
}

// injectText describes the adversary's packet k for a step.
func (c *checker) injectText(k *wire.Packet) string {
	s := fmt.Sprintf(" A>B psn=%d", signedPSN(c.rel(k.BTH.PSN)))
	if k.BTH.Retransmit {
		s += fmt.Sprintf(" resent (rtx) on EV %#x", k.EV(wire.EVModeUDP))
	}
	if d := k.DSCP(); d == dscp.Trimmed || d == dscp.TrimmedLastHop {
		s += " trimmed"
	}
	if k.ECN() == 3 {
		s += " CE"
	}
	if k.BTH.Opcode.HasImm() {
		s += fmt.Sprintf(" WriteIMM rqmsn=%d", k.METH.RQMSN)
	}
	if c.rel(k.BTH.PSN) >= maxPSNs {
		s += " (a packet of A's WRs under a PSN of no WR)"
	}
	return s + " (adversarial requester)"
}

// wr is WR k of QP s.
func (c *checker) wr(s, k int, m msgInfo) sm.WorkRequest {
	wr := sm.WorkRequest{WRID: uint64(k + 1), Opcode: sm.OpWrite, RemoteVA: baseVA + uint64(m.first)*pathMTU, RKey: 1,
		Data: c.data[s][k], Unsignaled: m.unsig}
	if m.imm {
		wr.Opcode, wr.Imm = sm.OpWriteImm, uint32(0xA0+k)
	}
	return wr
}
