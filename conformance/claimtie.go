package conformance

import (
	"fmt"
	"math/bits"

	"github.com/openmrc/mrc/wire"
)

// Frames of one clock tick on two interfaces of a capture point have no
// known order: a capture tool such as dumpcap timestamps each interface
// apart, and the merger (merge.go) keeps only each interface's own order.
// Feedback that claims PSNs not yet seen arriving (MRC-RSP-SACK-001) is
// therefore held until its tick ends, as a claimTie of its connection: a
// whole arrival of a claimed PSN in the same tick on another plane is an
// arrival the feedback may have followed, and clears the claim. A claim
// still standing when the connection shows a later tick, or the capture
// ends, is a finding at the feedback's own frame, time and plane. One
// interface's frames keep their order, so an arrival on the feedback's
// own plane after it never clears a claim.

// maxClaimTies bounds the feedback frames of one connection held with
// claims not yet seen arriving (the feedback of one clock tick, at most);
// feedback beyond the bound is judged at once, as if the capture point
// had one interface.
const maxClaimTies = 64

// claimTie is feedback holding claims of PSNs not seen arriving before
// it.
type claimTie struct {
	frame int
	ns    int64
	plane int
	rsp   string // the node that sent the feedback
	// failed: the feedback already failed on something else (cack_psn
	// moving backward), so clearing its claims makes no passing
	// observation.
	failed bool
	// The cumulative claim: cack_psn or an ACK's psn (ack) is cum, and
	// bit i of cumMiss is PSN rcum+1+i, not seen arriving.
	ack     bool
	cum     uint32
	rcum    uint32
	cumMiss uint64
	// The bitmap's claims: bit i of bitMiss is PSN base+i, not seen
	// arriving.
	base    uint32
	bitMiss uint64
	// A claimed PSN seen only with a bad ICRC, and that frame (0 none):
	// taken out of the misses (badICRCClaims).
	icrcPSN   uint32
	icrcFrame int
}

// missCum sets t's cumulative claim: every PSN after fl.rcum up to cum,
// of which those not arrived are t's misses. It reports false when the
// claim reaches more than 64 PSNs past the cumulative point (its misses
// are then not all held: only the first is).
func (t *claimTie) missCum(fl *flow, cum uint32) bool {
	t.cum, t.rcum = cum, fl.rcum
	n := psnDist(cum, fl.rcum)
	for i := uint32(0); i < min(n, 64); i++ {
		if q := wire.PSNAdd(fl.rcum, int(i+1)); fl.arrived.get(q) == nil {
			t.cumMiss |= 1 << i
		}
	}
	return n <= 64
}

// clear takes PSN q, arrived whole, out of t's misses.
func (t *claimTie) clear(q uint32) {
	if i := psnDist(q, wire.PSNAdd(t.rcum, 1)); i < 64 {
		t.cumMiss &^= 1 << i
	}
	if i := psnDist(q, t.base); i < 64 {
		t.bitMiss &^= 1 << i
	}
}

// holdOrJudge holds t until its tick ends when the capture point has
// planes (another of its interfaces may hold the claimed arrivals in the
// same tick) and the connection has room; otherwise it judges t now.
// held: t could be held in full (a cumulative claim reaching beyond 64
// PSNs is not). j is t.rsp's row at pt. Claims of PSNs seen only with a
// bad ICRC are taken out first (badICRCClaims).
func (e *engine) holdOrJudge(j judgedRow, pt *point, fl *flow, t *claimTie, held bool) {
	if t.cumMiss|t.bitMiss != 0 && len(fl.badArr) > 0 {
		e.badICRCClaims(fl, t)
	}
	if t.cumMiss|t.bitMiss == 0 {
		if t.icrcFrame != 0 {
			e.settleClaims(pt, t)
		} else if !t.failed {
			j.pass(cClaims, false)
		}
		return
	}
	if held && t.plane >= 0 && len(fl.ties) < maxClaimTies {
		fl.ties = append(fl.ties, *t)
		return
	}
	e.judgeTie(pt, fl, t)
}

// settleTies judges the claims fl holds from feedback sent before ns.
func (e *engine) settleTies(pt *point, fl *flow, ns int64) {
	k := 0
	for i := range fl.ties {
		if t := &fl.ties[i]; t.ns < ns {
			e.judgeTie(pt, fl, t)
		} else {
			fl.ties[k] = *t
			k++
		}
	}
	clear(fl.ties[k:])
	fl.ties = fl.ties[:k]
}

// tieArrival clears the claims fl holds of an arrival, whole and in the
// window, on another plane in (or, judged late, before) their tick.
func (e *engine) tieArrival(pt *point, fl *flow, a *arrival) {
	e.settleTies(pt, fl, a.ns)
	if !a.valid || !a.inWindow {
		return
	}
	k := 0
	for i := range fl.ties {
		t := &fl.ties[i]
		if a.plane != t.plane {
			t.clear(a.psn)
		}
		if t.cumMiss|t.bitMiss == 0 {
			e.settleClaims(pt, t)
			continue
		}
		fl.ties[k] = *t
		k++
	}
	clear(fl.ties[k:])
	fl.ties = fl.ties[:k]
}

// judgeTie judges the claims t still holds: one finding for the
// cumulative claim (its first PSN not arrived), one per bitmap bit. The
// findings are the feedback's: its frame, time and plane.
func (e *engine) judgeTie(pt *point, fl *flow, t *claimTie) {
	plane, frameNo, now := pt.curPlane, e.frameNo, e.now
	pt.curPlane, e.frameNo, e.now = t.plane, t.frame, t.ns
	defer func() { pt.curPlane, e.frameNo, e.now = plane, frameNo, now }()
	if t.cumMiss|t.bitMiss != 0 && len(fl.badArr) > 0 {
		e.badICRCClaims(fl, t) // copies seen later in the tick
	}
	if t.cumMiss|t.bitMiss == 0 {
		e.settleClaims(pt, t)
		return
	}
	if t.cumMiss != 0 {
		q := wire.PSNAdd(t.rcum, 1+bits.TrailingZeros64(t.cumMiss))
		if t.ack {
			e.failWhy(rClaims_RSP_RCV_4, pt, t.rsp, 0, func(f *Finding) {
				f.PSN = u32p(q)
				f.Expected = fmt.Sprintf("ACK psn ≤ %d (every PSN up to it arrived)", t.rcum)
				f.Observed = fmt.Sprintf("ACK psn %d: PSN %d never arrived whole", t.cum, q)
			})
		} else {
			e.failWhy(rClaims_WIRE_SETH_6, pt, t.rsp, 0, func(f *Finding) {
				w, rel := fl.notArrived(q)
				f.PSN, f.Related = u32p(q), rel
				f.Expected = fmt.Sprintf("cack_psn ≤ %d (every PSN up to it arrived)", t.rcum)
				f.Observed = fmt.Sprintf("cack_psn %d: %s", t.cum, w)
			})
		}
	}
	for bm := t.bitMiss; bm != 0; bm &= bm - 1 {
		q := wire.PSNAdd(t.base, bits.TrailingZeros64(bm))
		e.failWhy(rClaims_WIRE_SETH_6, pt, t.rsp, 0, func(f *Finding) {
			w, rel := fl.notArrived(q)
			f.PSN, f.Related = u32p(q), rel
			f.Expected, f.Observed = "bitmap bits only for PSNs that arrived whole", "bit set: "+w
		})
	}
}
