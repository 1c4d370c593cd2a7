package conformance

import "github.com/openmrc/mrc/wire"

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
// own plane after it never clears a claim. The claims check
// (claimsOnlyArrivals, checks_responder.go) holds and judges the ties;
// this file has their state.

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
	// pre: a claimed PSN that may have arrived before the capture began
	// (prePSN, the first), taken out of the misses (preCaptureClaims).
	pre    bool
	prePSN uint32
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
