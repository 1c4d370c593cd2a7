package modelcheck

import (
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
)

var rcvClassNames = [...]string{"new", "a duplicate", "out of the window"}

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

// answers is what QP s sent in the step about one data packet.
type answers struct {
	sacks, oorNACKs, otherNACKs int
}

func (c *checker) answersOf(s int, psn uint32) answers {
	var a answers
	for _, k := range c.log.sent[s] {
		switch {
		case k.op() == wire.OpSACK && !k.p.SETH.PR:
			a.sacks++
		case k.op() == wire.OpNACK && k.p.NETH.Reason == wire.NACKPSNOutOfWindow && k.p.NETH.NACKPSN&wire.PSNMask == psn:
			a.oorNACKs++
		case k.op() == wire.OpNACK:
			a.otherNACKs++
		}
	}
	return a
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
	cls, cack := c.classify(&pre.g[1-s], psn, c.dynMPR(pre, s))
	d := k.p.DSCP()
	trimmed := d == dscp.Trimmed || d == dscp.TrimmedLastHop
	silent := trimmed && c.cfg.NoTrimNACK // discarded unanswered (RSP-NACK-2)
	a := c.answersOf(s, psn)
	placed := false
	for _, p := range c.log.placed[s] {
		placed = placed || p == psn
	}
	var wrong string
	switch cls {
	case clsDup:
		switch {
		case a.oorNACKs+a.otherNACKs > 0:
			wrong = "NACKed it"
		case placed:
			wrong = "placed it"
		case c.cfg.Adversary && !silent && a.sacks == 0:
			wrong = "sent no SACK"
		}
	case clsOOR:
		switch {
		case a.sacks > 0:
			wrong = "acknowledged it"
		case placed:
			wrong = "placed it"
		case c.cfg.Adversary && !silent && a.oorNACKs == 0:
			wrong = "sent no PSN_OOR_WINDOW NACK for it"
		}
	default:
		switch {
		case a.oorNACKs > 0:
			wrong = "NACKed it out of window"
		case !trimmed && !placed && pre.res[s] == uint8(sm.ResourcesOK) && post.qp[s].State() != sm.StateError:
			wrong = "did not place it"
		}
	}
	if wrong != "" {
		v.add(InvResponderAnswers, "psn %d is %s at %s (cumulative ACK %d, window %d PSNs), but %s %s", signedPSN(c.rel(psn)),
			rcvClassNames[cls], side[s], signedPSN(c.rel(cack)), c.dynMPR(pre, s), side[s], wrong)
	}
}
