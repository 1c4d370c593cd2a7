package modelcheck

import (
	"fmt"
	"math/bits"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// InvResponderAnswers: the responder treats each data packet as RSP-RCV-6
// classes it, judged against the cumulative ACK the checker derives from
// what the responder placed (not the responder's own): a duplicate is
// never NACKed and, from the adversary, answered with a SACK (RSP-DUP-2);
// a PSN out of the window is never acknowledged and, from the adversary,
// NACKed PSN_OOR_WINDOW (RSP-NACK-4); a new PSN is never NACKed out of
// window and, untrimmed with resources at hand, placed at once
// (RSP-RCV-3). The responder's cumulative ACK must be the one its
// placements imply (RSP-RCV-4).
const InvResponderAnswers = "ResponderAnswers" // RSP-RCV-6, RSP-DUP-2, RSP-NACK-4, RSP-RCV-4

// rcvClass is the class RSP-RCV-6 gives an arriving write PSN.
type rcvClass uint8

const (
	clsNew rcvClass = iota
	clsDup
	clsOOR
	clsDiscard // a new WriteIMM whose RQMSN is held or delivered (WIMM-SM-1)
)

var rcvClassNames = [...]string{"new", "a duplicate", "out of the window", "a WriteIMM to discard"}

// ghostCACK is the cumulative ACK the placements g records imply: the PSN
// before the first one not placed.
func (c *checker) ghostCACK(g *ghost) uint32 {
	return wire.PSNAdd(c.abs(uint32(bits.TrailingZeros32(^g.placed))), -1)
}

// classify classes psn as RSP-RCV-6 does, with d = (psn − cack) mod 2^24
// against the cumulative ACK of g, the tracking window of the configured
// MPR and the current window win.
func (c *checker) classify(g *ghost, psn uint32, win int) (rcvClass, uint32) {
	cack := c.ghostCACK(g)
	d := (psn - cack) & wire.PSNMask
	r := c.rel(psn)
	switch {
	case d == 0 || d >= 1<<23 || d <= uint32(c.cfg.MPR) && r < maxPSNs && g.placed&(1<<r) != 0:
		return clsDup, cack
	case d > uint32(win):
		return clsOOR, cack
	}
	return clsNew, cack
}

// answers is what QP s sent in the step about one data packet: SACKs
// (sackM: bit m of each SACK's m field; wrongEV: answers that do not
// reflect the packet's EV), NACKs naming it PSN_OOR_WINDOW or for its trim
// (trimNACKs, the reason its DSCP calls for), other NACKs, and transport
// ACKs or NAKs (aeths).
type answers struct {
	sacks, oorNACKs, trimNACKs, otherNACKs, aeths, wrongEV int
	sackM                                                  uint8
}

func (c *checker) answersOf(s int, k *packet, trimReason wire.NACKReason) answers {
	var a answers
	psn, ev := k.p.BTH.PSN&wire.PSNMask, k.ev()
	for _, o := range c.log.sent[s] {
		switch {
		case o.op() == wire.OpSACK && !o.p.SETH.PR:
			a.sacks++
			a.sackM |= 1 << (o.p.SETH.M & 7)
			if o.p.SETH.Entropy != ev {
				a.wrongEV++
			}
		case o.op() == wire.OpNACK && o.p.NETH.NACKPSN&wire.PSNMask == psn &&
			(o.p.NETH.Reason == wire.NACKPSNOutOfWindow || o.p.NETH.Reason == trimReason):
			if o.p.NETH.Reason == wire.NACKPSNOutOfWindow {
				a.oorNACKs++
			} else {
				a.trimNACKs++
			}
			if o.p.NETH.Entropy != ev {
				a.wrongEV++
			}
		case o.op() == wire.OpNACK:
			a.otherNACKs++
		case o.op() == wire.OpAcknowledge:
			a.aeths++
		}
	}
	return a
}

// arrival is one delivered data packet as checkResponderAnswers judges it.
type arrival struct {
	cls             rcvClass
	trimmed, silent bool
	trimReason      wire.NACKReason
	ce, placed      bool
	a               answers
}

// checkResponderAnswers checks InvResponderAnswers on the step pre → post.
func (c *checker) checkResponderAnswers(v *violations, pre, post *world) {
	for s := range 2 {
		if got, want := post.qp[s].ResponderCumulativeACK(), c.ghostCACK(&post.g[1-s]); got != want {
			v.add(InvResponderAnswers, "%s's cumulative ACK is %d, but what it placed reaches %d", side[s],
				signedPSN(c.rel(got)), signedPSN(c.rel(want)))
		}
	}
	k := c.log.pkt
	if c.log.act.kind != actDeliver || k == nil || !k.isData() {
		return
	}
	s := k.to()
	if st := pre.qp[s].State(); st != sm.StateRTS && st != sm.StateSQD || c.cfg.Adversary && s == 0 {
		return
	}
	psn := k.p.BTH.PSN & wire.PSNMask
	var x arrival
	var cack uint32
	x.cls, cack = c.classify(&pre.g[1-s], psn, c.dynMPR(pre, s))
	d := k.p.DSCP()
	x.trimmed = d == dscp.Trimmed || d == dscp.TrimmedLastHop
	x.trimReason = wire.NACKTrimmed
	if d == dscp.TrimmedLastHop {
		x.trimReason = wire.NACKTrimmedLastHop
	}
	x.silent = x.trimmed && c.cfg.NoTrimNACK // discarded unanswered (RSP-NACK-2)
	x.ce = k.p.ECN() == 3
	x.a = c.answersOf(s, k, x.trimReason)
	for _, p := range c.log.placed[s] {
		x.placed = x.placed || p == psn
	}
	wrong := c.wimmArrival(&x, pre, post, s, k)
	if wrong == "" && x.cls != clsDiscard {
		wrong = c.judgeArrival(&x, pre, post, s)
	}
	if wrong != "" {
		v.add(InvResponderAnswers, "psn %d is %s at %s (cumulative ACK %d, window %d PSNs), but %s %s", signedPSN(c.rel(psn)),
			rcvClassNames[x.cls], side[s], signedPSN(c.rel(cack)), c.dynMPR(pre, s), side[s], wrong)
	}
}

// judgeArrival returns what QP s did wrong with the packet x describes,
// or "": the answer its class calls for, the m of the SACKs answering it
// (RSP-SACK-3: SKIP_ONCE or ALWAYS_SKIP for a CE-marked packet, NONE
// otherwise) and their reflected EV (RSP-SACK-1, RSP-NACK-1).
func (c *checker) judgeArrival(x *arrival, pre, post *world, s int) string {
	a, adv := &x.a, c.cfg.Adversary && !x.silent
	switch {
	case a.wrongEV > 0:
		return "answered it reflecting another EV than its own"
	case x.ce && a.sackM&(1<<wire.MNone) != 0:
		return "answered its CE mark with m = NONE"
	case !x.ce && a.sackM&^(1<<wire.MNone) != 0:
		return fmt.Sprintf("answered it, not CE-marked, with m = %s", wire.Multipath(bits.Len8(a.sackM&^(1<<wire.MNone))-1))
	}
	switch x.cls {
	case clsDup:
		switch {
		case a.oorNACKs+a.trimNACKs+a.otherNACKs > 0:
			return "NACKed it"
		case x.placed:
			return "placed it"
		case adv && a.sacks == 0:
			return "sent no SACK"
		}
	case clsOOR:
		switch {
		case a.sacks > 0:
			return "acknowledged it"
		case x.placed:
			return "placed it"
		case adv && a.oorNACKs == 0:
			return "sent no PSN_OOR_WINDOW NACK for it"
		}
	default:
		switch {
		case a.oorNACKs > 0:
			return "NACKed it out of window"
		case x.trimmed && (x.placed || a.sacks > 0):
			return "placed or acknowledged it, trimmed"
		case x.trimmed && adv && a.trimNACKs == 0:
			return fmt.Sprintf("sent no NACK %s for it", x.trimReason)
		case !x.trimmed && !x.placed && pre.res[s] == uint8(sm.ResourcesOK) && post.qp[s].State() != sm.StateError:
			return "did not place it"
		}
	}
	return ""
}

// maxRQ bounds the RQMSNs of the adversary's WriteIMMs the ghost follows.
const maxRQ = 8

// wimmArrival applies WIMM-SM-1 to a new, untrimmed WriteIMM packet of the
// adversary that QP s has the resources to take: one whose RQMSN the
// checker counts as held, or at or before the last one delivered (RQMSNs
// are delivered in increasing order, WIMM-RSP-2), must be discarded
// without a response; any other is held, which the ghost of post notes.
// A responder already holding max_wimm_dest WriteIMMs refuses any other
// with ERROR (WIMM-RSP-4), whatever its RQMSN: the limit is checked first,
// as the statemachine does. It returns what QP s did wrong, or "" (judgeArrival then judges the
// packet as any other, unless it was to be discarded).
func (c *checker) wimmArrival(x *arrival, pre, post *world, s int, k *packet) string {
	if !c.cfg.Adversary || x.cls != clsNew || x.trimmed || !k.p.BTH.Opcode.HasImm() || pre.res[s] != uint8(sm.ResourcesOK) {
		return ""
	}
	g, r := &post.g[1-s], k.p.METH.RQMSN
	if r >= maxRQ {
		return fmt.Sprintf("was sent rqmsn=%d, beyond what the checker follows (%d)", r, maxRQ)
	}
	if bits.OnesCount8(g.rqHeld) >= max(1, c.cfg.MaxWIMMDest) {
		return "" // beyond max_wimm_dest: not placed, ERROR (WIMM-RSP-4), as with any RQMSN
	}
	if g.rqHeld&(1<<r) != 0 || r-g.rqNext >= 1<<15 {
		x.cls = clsDiscard
		switch {
		case x.placed:
			return fmt.Sprintf("placed this WriteIMM, whose rqmsn=%d it holds or has delivered", r)
		case x.a.sacks+x.a.oorNACKs+x.a.trimNACKs+x.a.otherNACKs+x.a.aeths > 0:
			return fmt.Sprintf("answered this WriteIMM, whose rqmsn=%d it holds or has delivered", r)
		}
		return ""
	}
	g.rqHeld |= 1 << r
	g.rqPSN[r] = uint8(c.rel(k.p.BTH.PSN&wire.PSNMask)) + 1
	return ""
}

// checkAdversaryHeld compares the WriteIMMs B holds with those the ghost
// counts as held from the adversary's packets (WIMM-SM-1, WIMM-RSP-4).
func (c *checker) checkAdversaryHeld(v *violations, post *world) {
	q := post.qp[1]
	if !c.cfg.Adversary || q.State() == sm.StateError {
		return
	}
	var held uint8
	for _, r := range q.WIMMHeld(nil) {
		if r < maxRQ {
			held |= 1 << r
		} else {
			held = 0xFF
		}
	}
	if g := &post.g[0]; held != g.rqHeld {
		v.add(InvResponderAnswers, "B holds the WriteIMMs %08b (bit: rqmsn), but the packets it accepted leave %08b held", held, g.rqHeld)
	}
}

// checkAdversaryIMM checks a WriteIMM receive completion of the
// adversary's traffic against the WriteIMMs the ghost counts as held:
// one held, the lowest RQMSN held (WIMM-RSP-2), once every PSN up to the
// one that carried it is placed (WIMM-RSP-1), with their bytes in memory.
func (c *checker) checkAdversaryIMM(v *violations, s int, gr *ghost, cp sm.Completion) {
	r := cp.RQMSN
	if r >= maxRQ || gr.rqHeld&(1<<r) == 0 {
		v.add(InvWriteIMMExactlyOnceInOrder, "%s delivers WriteIMM rqmsn=%d, which it does not hold (held %08b)", side[s], r, gr.rqHeld)
		return
	}
	for q := range uint16(maxRQ) {
		if gr.rqHeld&(1<<q) != 0 && q-gr.rqNext < r-gr.rqNext {
			v.add(InvWriteIMMExactlyOnceInOrder, "%s delivers WriteIMM rqmsn=%d before rqmsn=%d, which it holds", side[s], r, q)
		}
	}
	p := uint32(gr.rqPSN[r] - 1)
	if !allPlaced(gr.placed, 0, p+1) {
		v.add(InvCompletionOnlyAfterPlacement, "%s delivers WriteIMM rqmsn=%d before every PSN up to psn %d, which carried it, is placed (placed %b)",
			side[s], r, p, gr.placed)
	} else {
		c.checkMemory(v, s, gr, fmt.Sprintf("WriteIMM rqmsn=%d received", r), 0, p+1)
	}
	gr.rqHeld &^= 1 << r
	gr.rqNext = r + 1
}
