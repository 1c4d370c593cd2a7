package conformance

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// The cases of this file's checks, with their catalog entries.
var (
	cClaims = passiveCase(Case{
		ID: "MRC-RSP-SACK-001", Title: "SACKs claim only PSNs that arrived",
		Assertion:    "cack_psn, the SACK bitmap and the ACK psn never claim a PSN that has not arrived whole (untrimmed, with a valid ICRC, inside the window) before the feedback was sent; cack never moves backward.",
		Requirements: []RequirementID{"WIRE-SETH-6", "RSP-RCV-4", "RSP-RCV-1", "WIRE-ICRC-5", "RSP-NACK-1", "RSP-RCV-6"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Steps: []string{stepDecode, stepReconstr, "Record arrivals at the responder's capture point.", "For every SACK and ACK check that each PSN it claims arrived, and that cack does not regress."},
		Pass:  "every claim is backed by an arrival", Fail: "a claim of a PSN that never arrived whole", Inconclusive: "no SACK or ACK after the first arrival",
	})
	cCurrent = passiveCase(Case{
		ID: "MRC-RSP-SACK-002", Title: "SACKs report the current state",
		Assertion:    "Each SACK's cack_psn covers every PSN received contiguously, and its bitmap every PSN received in its window, up to the reaction time before it was sent.",
		Requirements: []RequirementID{"RSP-SACK-1", "RSP-RCV-4", "RSP-RCV-5"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp, Timing: true,
		Steps: []string{stepDecode, stepReconstr, "Compare each SACK's cack and bitmap with the arrivals older than the reaction time."},
		Pass:  "every SACK is current", Fail: "a SACK that omits a PSN received well before it", Inconclusive: "no SACK",
	})
	cTrigger = passiveCase(Case{
		ID: "MRC-RSP-SACK-003", Title: "SACK trigger fields",
		Assertion:    "A SACK's ack_psn_offset names a PSN that arrived, its bitmap base follows RSP-SACK-2, and CC_STATE tx_timestamp reflects the trigger's TSETH timestamp (0 without TSETH).",
		Requirements: []RequirementID{"RSP-SACK-1", "RSP-SACK-2", "WIRE-SETH-5", "WIRE-CCS-2", "RSP-SACK-7"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Parameters: []string{"mpr_dest"},
		Steps:      []string{stepDecode, stepReconstr, "For each non-probe SACK, find its trigger among recent arrivals, recompute the bitmap base and compare the reflected timestamp."},
		Pass:       "every SACK's trigger fields are right", Fail: "a SACK answering no arrival, with a wrong base, or a wrong reflected timestamp", Inconclusive: "no SACK, or mpr_dest not declared",
	})
	cMVerdict = passiveCase(Case{
		ID: "MRC-RSP-SACK-004", Title: "ECN verdict in m",
		Assertion:    "A SACK answering a CE-marked packet or probe carries m = SKIP_ONCE (or ALWAYS_SKIP); otherwise m = NONE (or ALWAYS_SKIP, which is optional).",
		Requirements: []RequirementID{"RSP-SACK-3", "CC-SIG-2", "RSP-PRB-2", "RSP-SACK-4"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Steps: []string{stepDecode, stepReconstr, "For each SACK whose trigger was captured, compare m with the trigger's ECN field as it arrived."},
		Pass:  "every m matches", Fail: "SKIP_ONCE without CE, or NONE after CE", Inconclusive: "no SACK whose trigger was captured",
	})
	cCounters = passiveCase(Case{
		ID: "MRC-RSP-SACK-005", Title: "CC_STATE counters",
		Assertion:    "rcvd_bytes counts each received PSN's payload once, in profile units, modulo 2^24; ooo_count is the number of PSNs held beyond cack.",
		Requirements: []RequirementID{"WIRE-CCS-1", "RSP-SACK-7", "RSP-DUP-1"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp + ", capture from QP start",
		Steps: []string{stepDecode, stepReconstr, "Accumulate distinct payload bytes and held PSNs from the arrivals; compare with every SACK allowing for the reaction time."},
		Pass:  "every SACK's counters are in range", Fail: "a counter that does not match the arrivals", Inconclusive: "capture not from QP start (PICS capture.from_qp_start), or no SACK",
	})
	cImmediate = passiveCase(Case{
		ID: "MRC-RSP-SACK-006", Title: "Immediate SACKs",
		Assertion:    "The responder sends a SACK for each packet that is CE-marked, out of order, a duplicate, marked ack_req or rtx, or the last of a message; a duplicate's SACK reflects its EV.",
		Requirements: []RequirementID{"RSP-SACK-5", "RSP-DUP-2"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Steps: []string{stepDecode, stepReconstr, "List arrivals that need an immediate SACK; look for a SACK whose ack PSN is theirs."},
		Pass:  "every such arrival is answered", Fail: "an arrival that needed a SACK and got none while the responder kept sending SACKs", Inconclusive: "no such arrival, or the capture ends too soon",
	})
	cTrimNACK = passiveCase(Case{
		ID: "MRC-RSP-NACK-001", Title: "Trimmed packets are NACKed",
		Assertion:    "A trimmed packet for a new PSN is answered by a NACK naming its PSN and reflecting its EV and TSETH timestamp, with reason TRIMMED_LASTHOP for DSCP_TRIMMED_LASTHOP and TRIMMED otherwise.",
		Requirements: []RequirementID{"RSP-NACK-1", "WIRE-NETH-3", "RSP-NACK-6", "WIRE-ICRC-6", "WIRE-TRIM-2"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp + ", a trimming fabric",
		Features: []string{"trim_nack"},
		Steps:    []string{stepDecode, stepReconstr, "For each trimmed arrival of a new PSN, find the NACK that answers it and check its fields."},
		Pass:     "every trimmed packet is NACKed correctly", Fail: "a trim without NACK, or a NACK with the wrong PSN, reason or timestamp", Inconclusive: "no trimmed packet in the capture",
	})
	cNoTrimNak = passiveCase(Case{
		ID: "MRC-RSP-NACK-002", Title: "Without trim NACKs, trims are discarded silently",
		Assertion:    "A responder without trim-NACK support sends no TRIMMED or TRIMMED_LASTHOP NACK.",
		Requirements: []RequirementID{"RSP-NACK-2"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp + ", a trimming fabric",
		Features: []string{"!trim_nack"},
		Steps:    []string{stepDecode, stepReconstr, "Report every trim NACK."},
		Pass:     "trims seen and none NACKed", Fail: "a trim NACK", Inconclusive: "no trimmed packet",
	})
	cOOR = passiveCase(Case{
		ID: "MRC-RSP-NACK-003", Title: "Out-of-window PSNs get PSN_OOR_WINDOW",
		Assertion:    "A write whose PSN lies beyond cack + 128 × mpr_dest is answered with a PSN_OOR_WINDOW NACK and is not placed.",
		Requirements: []RequirementID{"RSP-NACK-4", "MPR-WIN-4", "RSP-RCV-6"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Parameters: []string{"mpr_dest"},
		Steps:      []string{stepDecode, stepReconstr, "Classify arrivals against the responder's window; for each out-of-window one, find its NACK."},
		Pass:       "every out-of-window arrival NACKed", Fail: "an out-of-window arrival without PSN_OOR_WINDOW NACK, or an OOR NACK for an in-window PSN", Inconclusive: "no out-of-window arrival",
	})
	cACK = passiveCase(Case{
		ID: "MRC-RSP-ACK-001", Title: "Transport ACKs",
		Assertion:    "When cack reaches a received packet marked ack_req, the responder sends an ACKNOWLEDGE whose psn covers it.",
		Requirements: []RequirementID{"RSP-ACK-1"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Steps: []string{stepDecode, stepReconstr, "For each ack_req arrival, once the arrivals are contiguous up to it, look for an ACK whose psn reaches it."},
		Pass:  "every ack_req PSN acknowledged", Fail: "an ack_req PSN never covered by an ACK although cack passed it", Inconclusive: "no ack_req arrival, or the capture ends too soon",
	})
	cProbeAns = passiveCase(Case{
		ID: "MRC-RSP-PRB-001", Title: "Probes are answered",
		Assertion:    "Every probe is answered by a SACK with pr = 1, the probe's probe_id in ack_psn_offset, its EV in entropy and its timestamp in CC_STATE; no SACK has pr = 1 otherwise.",
		Requirements: []RequirementID{"RSP-PRB-1", "WIRE-SETH-7", "EV-PRB-4"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Steps: []string{stepDecode, stepReconstr, "Match pr = 1 SACKs to probe arrivals by probe_id and EV."},
		Pass:  "every probe answered correctly", Fail: "a probe unanswered, or a pr = 1 SACK that answers no probe", Inconclusive: "no probe",
	})
	cWIMMRsp = passiveCase(Case{
		ID: "MRC-WIMM-RSP-001", Title: "WriteIMM limit at the responder",
		Assertion:    "A WriteIMM arriving while max_wimm_dest WriteIMMs are held (received, not yet complete) is refused with an AETH NAK (invalid request) or an UNEXP_EVENT NACK, per the profile.",
		Requirements: []RequirementID{"WIMM-RSP-4", "WIMM-RSP-1"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoRsp,
		Parameters: []string{"max_wimm_dest"},
		Steps:      []string{stepDecode, stepReconstr, "Count held WriteIMMs (ImmDt arrived, cack short of the message's last PSN); for each arrival over the limit, find the refusal."},
		Pass:       "every excess WriteIMM refused", Fail: "an excess WriteIMM accepted", Inconclusive: "the limit was never exceeded",
	})
)

// The requirements this file's checks cite, each made for its case
// (caseID.req) and declared by its check (check.reqs).
var (
	rClaims_RSP_RCV_4     = cClaims.req("RSP-RCV-4")
	rClaims_WIRE_SETH_6   = cClaims.req("WIRE-SETH-6")
	rCurrent_RSP_SACK_1   = cCurrent.req("RSP-SACK-1")
	rTrigger_RSP_SACK_1   = cTrigger.req("RSP-SACK-1")
	rTrigger_RSP_SACK_2   = cTrigger.req("RSP-SACK-2")
	rTrigger_WIRE_CCS_2   = cTrigger.req("WIRE-CCS-2")
	rMVerdict_RSP_SACK_3  = cMVerdict.req("RSP-SACK-3")
	rMVerdict_RSP_PRB_2   = cMVerdict.req("RSP-PRB-2")
	rCounters_WIRE_CCS_1  = cCounters.req("WIRE-CCS-1")
	rCounters_RSP_SACK_7  = cCounters.req("RSP-SACK-7")
	rImmediate_RSP_SACK_5 = cImmediate.req("RSP-SACK-5")
	rTrimNACK_RSP_NACK_1  = cTrimNACK.req("RSP-NACK-1")
	rTrimNACK_WIRE_NETH_3 = cTrimNACK.req("WIRE-NETH-3")
	rNoTrimNak_RSP_NACK_2 = cNoTrimNak.req("RSP-NACK-2")
	rOOR_RSP_NACK_4       = cOOR.req("RSP-NACK-4")
	rACK_RSP_ACK_1        = cACK.req("RSP-ACK-1")
	rProbeAns_RSP_PRB_1   = cProbeAns.req("RSP-PRB-1")
	rProbeAns_WIRE_SETH_7 = cProbeAns.req("WIRE-SETH-7")
	rWIMMRsp_WIMM_RSP_4   = cWIMMRsp.req("WIMM-RSP-4")
)

// The responder's checks: what its SACKs, NACKs and ACKs claim and answer,
// judged against the arrivals the capture shows.
func init() {
	addChecks(
		check{cs: cClaims, reqs: []caseReq{rClaims_RSP_RCV_4, rClaims_WIRE_SETH_6}, feedback: claimsOnlyArrivals, arrived: claimTieArrival, finish: claimTiesAtEnd, state: claimTiesOf.slot},
		check{cs: cCurrent, reqs: []caseReq{rCurrent_RSP_SACK_1}, feedback: sackCurrent},
		check{cs: cTrigger, reqs: []caseReq{rTrigger_RSP_SACK_1, rTrigger_RSP_SACK_2, rTrigger_WIRE_CCS_2}, answer: sackTrigger, answerOn: answerOn(ansTrigger)},
		check{cs: cMVerdict, reqs: []caseReq{rMVerdict_RSP_SACK_3, rMVerdict_RSP_PRB_2}, answer: mVerdict, answerOn: answerOn(ansTrigger, ansProbe), framesShow: true},
		check{cs: cCounters, reqs: []caseReq{rCounters_WIRE_CCS_1, rCounters_RSP_SACK_7}, feedback: sackCounters, state: unseenPayOf.slot},
		check{cs: cImmediate, reqs: []caseReq{rImmediate_RSP_SACK_5}, answer: answeredAtOnce, answerOn: answerOn(ansTrigger), finish: notAnsweredAtOnce},
		check{cs: cTrimNACK, reqs: []caseReq{rTrimNACK_RSP_NACK_1, rTrimNACK_WIRE_NETH_3}, feedback: trimNACK, feedbackOps: []wire.Opcode{wire.OpNACK}, finish: trimNotNACKed},
		check{cs: cNoTrimNak, reqs: []caseReq{rNoTrimNak_RSP_NACK_2}, arrived: trimmedKept, arrivedOn: aTrimmed, feedback: trimNACKUndeclared, feedbackOps: []wire.Opcode{wire.OpNACK}},
		check{cs: cOOR, reqs: []caseReq{rOOR_RSP_NACK_4}, feedback: oorNACK, feedbackOps: []wire.Opcode{wire.OpNACK}, finish: oorNotNACKed},
		check{cs: cACK, reqs: []caseReq{rACK_RSP_ACK_1}, feedback: ackCovers, feedbackOps: []wire.Opcode{wire.OpAcknowledge}, finish: ackMissing},
		check{cs: cProbeAns, reqs: []caseReq{rProbeAns_RSP_PRB_1, rProbeAns_WIRE_SETH_7}, answer: probeAnswered, answerOn: answerOn(ansProbe, ansProbeUnmatched), finish: probeNotAnswered},
		check{cs: cWIMMRsp, reqs: []caseReq{rWIMMRsp_WIMM_RSP_4}, feedback: wimmRefused, feedbackOps: []wire.Opcode{wire.OpNACK, wire.OpAcknowledge}, finish: wimmNotRefused},
	)
}

// claimsOnlyArrivals checks that feedback claims only arrivals
// (RSP-RCV-4, WIRE-SETH-6). Claims of PSNs not seen arriving are judged
// once the feedback's clock tick ends (holdOrJudge).
func claimsOnlyArrivals(e *engine, x *fbCtx) {
	fl := x.fl
	st := claimTiesOf.of(fl)
	if len(st.held) > 0 {
		e.settleTies(x.pt, fl, e.now)
	}
	if !x.judged {
		if x.op == wire.OpSACK { // the baseline: earlier cack_psn no longer count
			st.paths = cackPaths{}
			st.paths.report(x.pt.curPlane, x.p.EV(e.mode), x.p.SETH.CACKPSN)
		}
		return
	}
	switch x.op {
	case wire.OpAcknowledge:
		t := claimTie{frame: e.frameNo, ns: e.now, plane: x.pt.curPlane, rsp: x.rsp}
		held := true
		if psn := x.p.BTH.PSN; psnAfter(psn, fl.rcum) && psnDist(psn, fl.rcum) < 1<<23 {
			t.ack = true
			held = t.missCum(fl, psn)
		}
		e.holdOrJudge(x.judgedRow, x.pt, fl, &t, held)
	case wire.OpSACK:
		sackClaims(e, x, st)
	}
}

// sackClaims judges what a SACK claims that has not arrived
// (holdOrJudge). A cack_psn moving backward is a finding at once
// (cackBackward). st is the claims check's state on x's connection.
func sackClaims(e *engine, x *fbCtx, st *claimTies) {
	fl := x.fl
	s := &x.p.SETH
	cack := s.CACKPSN
	earlier, onPath, back := cackBackward(e, x, &st.paths)
	if back {
		e.failWhy(rClaims_RSP_RCV_4, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN = u32p(cack)
			f.Expected = fmt.Sprintf("cack_psn ≥ %d, reported earlier", earlier)
			if onPath {
				f.Expected += fmt.Sprintf(" on its path (plane %d, EV 0x%08x)", x.pt.curPlane, x.p.EV(e.mode))
			}
			f.Observed = fmt.Sprintf("cack_psn %d: moved backward", cack)
		})
	}
	base := s.BitmapBase()
	bitMiss := bitsNotArrived(fl, base, s.SACKBitmap)
	if !back && bitMiss == 0 && !psnAfter(cack, fl.rcum) {
		// Every PSN claimed arrived: the pass holdOrJudge would find,
		// without a claimTie (most SACKs).
		x.pass(cClaims, false)
		return
	}
	t := claimTie{frame: e.frameNo, ns: e.now, plane: x.pt.curPlane, rsp: x.rsp, failed: back, base: base, bitMiss: bitMiss}
	held := true
	if psnAfter(cack, fl.rcum) {
		held = t.missCum(fl, cack)
	}
	e.holdOrJudge(x.judgedRow, x.pt, fl, &t, held)
}

// bitsNotArrived returns the bits of a SACK bitmap (bit i for PSN
// base+i) that claim a PSN after fl.rcum not seen arriving.
func bitsNotArrived(fl *flow, base uint32, sack uint64) (miss uint64) {
	bm := bitsAfter(sack, base, fl.rcum)
	if bm != 0 { // no claim beyond rcum: nothing to look up
		bm &^= fl.arrived.heldBits(base, bm)
	}
	for ; bm != 0; bm &= bm - 1 {
		i := bits.TrailingZeros64(bm)
		q := wire.PSNAdd(base, i)
		if !psnAfter(q, fl.rcum) || len(fl.preBase) > 0 && fl.preBase[q] {
			continue
		}
		if d := psnDist(q, fl.rcum); d >= 1<<23 {
			continue
		}
		miss |= 1 << i
	}
	return miss
}

// cackBackward records a SACK's cack_psn on its path and reports whether
// it is below one the responder reported earlier (RSP-RCV-4): earlier,
// and whether only its own path counted (onPath). At a point at the responder its SACKs keep the
// order it sent them in, so the highest cack_psn of any before counts
// (fl.lastCack). Away from it the fabric keeps the order of each path
// only (a plane and an EV: EV-REV-4 sends a plane's SACKs on its reverse
// EV, EV-SM-4 a probe's answer on another), and a SACK sent later on
// one path may arrive before one sent earlier on another; there only
// the highest cack_psn of its own path counts, while it is within 2^22
// PSNs of fl.lastCack (PSNs wrap at 2^24: an older one is not ordered).
// paths are the connection's (claimTies.paths).
func cackBackward(e *engine, x *fbCtx, paths *cackPaths) (earlier uint32, onPath, back bool) {
	fl, cack, ev := x.fl, x.p.SETH.CACKPSN, x.p.EV(e.mode)
	pathCack, recorded := paths.report(x.pt.curPlane, ev, cack)
	if !fl.haveCack || !psnAfter(fl.lastCack, cack) {
		return 0, false, false
	}
	if e.pics.AtNode(x.pt.name, x.rsp, e.loc) {
		return fl.lastCack, false, true
	}
	if recorded && psnAfter(pathCack, cack) && psnDist(fl.lastCack, pathCack) < 1<<22 {
		return pathCack, true, true
	}
	return 0, false, false
}

// maxCackPaths bounds the paths whose highest cack_psn a connection's
// claims check keeps (cackPaths): a responder uses a reverse EV per plane
// (EV-REV-1), and its probe answers may take others. A path beyond the
// bound takes the place of the one recorded first, whose order is then
// forgotten: a SACK on it is compared with nothing before it.
const maxCackPaths = 16

// cackPath is the highest cack_psn reported on one path (plane, EV).
type cackPath struct {
	plane int
	ev    uint32
	cack  uint32
}

// cackPaths is the highest cack_psn reported on each path of a
// connection, a ring of at most maxCackPaths.
type cackPaths struct {
	path [maxCackPaths]cackPath
	n    int // paths recorded, at most maxCackPaths
	next int // the slot a new path takes when all are used
	// last: by plane (modulo maxCackPaths), the slot of the path its
	// latest SACK took; a plane's SACKs mostly keep to one reverse EV
	// (EV-REV-1), so report looks there before it scans.
	last [maxCackPaths]uint8
}

// report records cack on path (plane, ev) and returns the highest
// cack_psn reported on that path before, if the path was recorded.
func (c *cackPaths) report(plane int, ev, cack uint32) (uint32, bool) {
	h := &c.last[uint(plane)%maxCackPaths]
	i := c.find(plane, ev, int(*h))
	if i >= 0 {
		*h = uint8(i)
		p := &c.path[i]
		before := p.cack
		if psnAfter(cack, before) {
			p.cack = cack
		}
		return before, true
	}
	i = c.n
	if c.n < maxCackPaths {
		c.n++
	} else {
		i, c.next = c.next, (c.next+1)%maxCackPaths
	}
	*h = uint8(i)
	c.path[i] = cackPath{plane, ev, cack}
	return 0, false
}

// find returns the slot of path (plane, ev), or -1, looking at slot hint
// first. A path is recorded in one slot at most (report adds one only
// when find has none), so the hint's slot, when it holds the path, is the
// slot the scan would find.
func (c *cackPaths) find(plane int, ev uint32, hint int) int {
	if p := &c.path[hint]; hint < c.n && p.plane == plane && p.ev == ev {
		return hint
	}
	for i := range c.path[:c.n] {
		if p := &c.path[i]; p.plane == plane && p.ev == ev {
			return i
		}
	}
	return -1
}

// claimTies is the claims check's state on a connection: the feedback
// whose claims wait for the end of its clock tick (claimtie.go), at most
// maxClaimTies, and the highest cack_psn of each path of its SACKs
// (cackBackward), at most maxCackPaths.
type claimTies struct {
	held  []claimTie
	paths cackPaths
}

// entries: held is bounded by maxClaimTies instead (notCountedState).
func (*claimTies) entries() int { return 0 }

var claimTiesOf = newConnState(func() *claimTies { return &claimTies{} })

// claimTieArrival clears the claims held of an arrival (tieArrival).
func claimTieArrival(e *engine, x *arriveCtx) {
	if len(claimTiesOf.of(x.fl).held) > 0 {
		e.tieArrival(x.pt, x.fl, &x.a)
	}
}

// claimTiesAtEnd judges the claims held when the capture ends.
func claimTiesAtEnd(e *engine, pt *point, fl *flow) {
	if len(claimTiesOf.of(fl).held) > 0 {
		e.settleTies(pt, fl, math.MaxInt64)
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
	if t.cumMiss|t.bitMiss != 0 && !fl.rStart {
		e.preCaptureClaims(fl, t)
	}
	if t.cumMiss|t.bitMiss == 0 {
		if t.icrcFrame != 0 || t.pre {
			e.settleClaims(pt, t)
		} else if !t.failed {
			j.pass(cClaims, false)
		}
		return
	}
	if st := claimTiesOf.of(fl); held && t.plane >= 0 && len(st.held) < maxClaimTies {
		st.held = append(st.held, *t)
		return
	}
	e.judgeTie(pt, fl, t)
}

// settleTies judges the claims fl holds from feedback sent before ns.
func (e *engine) settleTies(pt *point, fl *flow, ns int64) {
	st := claimTiesOf.of(fl)
	k := 0
	for i := range st.held {
		if t := &st.held[i]; t.ns < ns {
			e.judgeTie(pt, fl, t)
		} else {
			st.held[k] = *t
			k++
		}
	}
	clear(st.held[k:])
	st.held = st.held[:k]
}

// tieArrival clears the claims fl holds of an arrival, whole and in the
// window, on another plane in (or, judged late, before) their tick.
func (e *engine) tieArrival(pt *point, fl *flow, a *arrival) {
	e.settleTies(pt, fl, a.ns)
	if !a.valid || !a.inWindow {
		return
	}
	st := claimTiesOf.of(fl)
	k := 0
	for i := range st.held {
		t := &st.held[i]
		if a.plane != t.plane {
			t.clear(a.psn)
		}
		if t.cumMiss|t.bitMiss == 0 {
			e.settleClaims(pt, t)
			continue
		}
		st.held[k] = *t
		k++
	}
	clear(st.held[k:])
	st.held = st.held[:k]
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
	e.resyncClaims(fl, t)
}

// resyncClaims takes the responder's word for the claims t still holds,
// once judged: later feedback is judged from its cumulative point and
// bitmap, so that a PSN the capture did not show is one finding, not one
// per later SACK.
func (e *engine) resyncClaims(fl *flow, t *claimTie) {
	// Feedback held from the same tick claiming the same PSNs has them
	// judged already.
	st := claimTiesOf.of(fl)
	for i := range st.held {
		if u := &st.held[i]; u != t {
			for bm := t.cumMiss; bm != 0; bm &= bm - 1 {
				u.clear(wire.PSNAdd(t.rcum, 1+bits.TrailingZeros64(bm)))
			}
			for bm := t.bitMiss; bm != 0; bm &= bm - 1 {
				u.clear(wire.PSNAdd(t.base, bits.TrailingZeros64(bm)))
			}
		}
	}
	if t.cumMiss != 0 {
		e.resyncCum(fl, t.cum)
	}
	for bm := t.bitMiss; bm != 0; bm &= bm - 1 {
		e.adoptUnseen(fl, wire.PSNAdd(t.base, bits.TrailingZeros64(bm)), t.frame, t.ns)
	}
}

// preCaptureClaims takes out of the claims t holds the PSNs that may have
// arrived before the capture began (preCapture), and adopts them as
// arrived: the capture cannot tell, and later feedback is judged from
// there. t remembers the first (prePSN) outside the baseline SACK's
// bitmap: with no other claim left, the feedback is an observation
// undecided for it (settleClaims).
func (e *engine) preCaptureClaims(fl *flow, t *claimTie) {
	take := func(miss *uint64, base uint32) {
		for bm := *miss; bm != 0; bm &= bm - 1 {
			i := bits.TrailingZeros64(bm)
			q := wire.PSNAdd(base, i)
			if !fl.preCapture(q) {
				continue
			}
			*miss &^= 1 << i
			if !t.pre && !fl.preBase[q] {
				t.pre, t.prePSN = true, q
			}
			e.adoptUnseen(fl, q, t.frame, t.ns)
		}
	}
	take(&t.cumMiss, wire.PSNAdd(t.rcum, 1))
	take(&t.bitMiss, t.base)
}

// badICRCClaims takes out of the claims t holds the PSNs not seen arriving
// but with a bad ICRC, and adopts them as arrived (adoptClaim): the
// responder may have had them whole. t remembers the first (icrcPSN,
// icrcFrame): with no other claim left, the feedback is an observation
// undecided for it (settleClaims).
func (e *engine) badICRCClaims(fl *flow, t *claimTie) {
	take := func(miss *uint64, base uint32) {
		for bm := *miss; bm != 0; bm &= bm - 1 {
			i := bits.TrailingZeros64(bm)
			q := wire.PSNAdd(base, i)
			if f := fl.badICRCCopy(q); f != 0 {
				*miss &^= 1 << i
				if t.icrcFrame == 0 {
					t.icrcPSN, t.icrcFrame = q, f
				}
				e.adoptClaim(fl, q, f)
			}
		}
	}
	take(&t.cumMiss, wire.PSNAdd(t.rcum, 1))
	take(&t.bitMiss, t.base)
}

// settleClaims records the observation of feedback t whose claims all
// stand: a pass, or undecided when one rests on a PSN seen only with a
// bad ICRC; nothing when the feedback failed already.
func (e *engine) settleClaims(pt *point, t *claimTie) {
	switch {
	case t.failed:
	case t.icrcFrame != 0:
		q, f := t.icrcPSN, t.icrcFrame
		req := rClaims_WIRE_SETH_6
		if t.ack {
			req = rClaims_RSP_RCV_4
		}
		e.undecidedWhy(req, pt, t.rsp, fmt.Sprintf("a claimed PSN was seen only with a bad ICRC (PSN %d, frame %d): the responder may have had it whole", q, f), func(fd *Finding) {
			fd.PSN, fd.Related = u32p(q), []int{f}
			fd.Expected = fmt.Sprintf("claims only of PSNs that arrived whole; PSN %d arrived with a bad ICRC (frame %d)", q, f)
		})
	case t.pre:
		req := rClaims_WIRE_SETH_6
		if t.ack {
			req = rClaims_RSP_RCV_4
		}
		q := t.prePSN
		e.undecidedWhy(req, pt, t.rsp, "a claimed PSN may have arrived before the capture began (a capture not from QP start, PICS capture.from_qp_start)", func(fd *Finding) {
			fd.PSN = u32p(q)
			fd.Expected = fmt.Sprintf("claims only of PSNs that arrived whole; PSN %d was sent before the first new PSN seen", q)
			fd.Observed = fmt.Sprintf("PSN %d claimed, not seen arriving (undecidable: it may have arrived before the capture began)", q)
		})
	default:
		e.ok(cClaims, pt, t.rsp, false)
	}
}

// bitsAfter returns bitmap bm (bit i for PSN base+i) without the bits of
// PSNs at or before x, when that is a mask (linearPSNs); bm otherwise, for
// the caller to test bit by bit.
func bitsAfter(bm uint64, base, x uint32) uint64 {
	d := wire.PSNDiff(base, x)
	switch {
	case !linearPSNs(d) || d > 0:
		return bm
	case -d >= 63:
		return 0
	}
	return bm &^ (1<<(-d+1) - 1)
}

// notArrived explains why PSN q does not count as arrived.
func (fl *flow) notArrived(q uint32) (string, []int) {
	if f := fl.badArr[q].frame; f != 0 {
		return fmt.Sprintf("PSN %d arrived only with a wrong P_Key or another discard violation (frame %d)", q, f), []int{f}
	}
	if f := fl.trimArr[q]; f != 0 {
		return fmt.Sprintf("PSN %d arrived only trimmed (frame %d)", q, f), []int{f}
	}
	if f := fl.refused[q]; f != 0 {
		return fmt.Sprintf("PSN %d was refused by a NACK (frame %d)", q, f), []int{f}
	}
	return fmt.Sprintf("PSN %d was never seen arriving", q), nil
}

// sackCurrent checks that a SACK reports every arrival older than the
// reaction time (RSP-SACK-1).
func sackCurrent(e *engine, x *fbCtx) {
	if !x.judged || x.op != wire.OpSACK {
		return
	}
	fl, s := x.fl, &x.p.SETH
	t := e.now - e.grace
	at, ok := fl.rcumAt(t)
	if !ok || fl.arrived.len() > 4096 {
		return
	}
	if len(fl.refused) > 0 {
		for q := range fl.refused {
			if !psnAfter(q, at.rcum) {
				return // refused after it was counted: the reconstruction is unsure
			}
		}
	}
	if psnAfter(at.rcum, s.CACKPSN) {
		e.failWhy(rCurrent_RSP_SACK_1, x.pt, x.rsp, onTiming|onAbsence, func(f *Finding) {
			f.PSN = u32p(s.CACKPSN)
			f.Expected = fmt.Sprintf("cack_psn ≥ %d: every PSN up to it had arrived %d ns before", at.rcum, e.grace)
			f.Observed = fmt.Sprintf("cack_psn %d", s.CACKPSN)
		})
		return
	}
	// The lowest PSN the bitmap leaves out although it arrived (the
	// first in bitmap order, so that the report does not depend on map
	// order).
	base := s.BitmapBase()
	missing, bit := (*arrival)(nil), uint32(64)
	check := func(q uint32, a *arrival) {
		if a.ns > t || !psnAfter(q, s.CACKPSN) {
			return
		}
		if i := psnDist(q, base); i < bit && s.SACKBitmap&(1<<i) == 0 {
			missing, bit = a, i
		}
	}
	if fl.arrived.len() <= 64 {
		fl.arrived.each(check)
	} else {
		// The bitmap's clear bits only, lowest first: the first arrival
		// found is the lowest.
		for bm := ^s.SACKBitmap; bm != 0 && missing == nil; bm &= bm - 1 {
			if a := fl.arrived.get(wire.PSNAdd(base, bits.TrailingZeros64(bm))); a != nil {
				check(a.psn, a)
			}
		}
	}
	if missing != nil {
		e.failWhy(rCurrent_RSP_SACK_1, x.pt, x.rsp, onTiming|onAbsence, func(f *Finding) {
			q := missing.psn
			f.PSN, f.Related = u32p(q), []int{missing.frame}
			f.Expected, f.Observed = fmt.Sprintf("bitmap bit %d set: PSN %d arrived in frame %d", bit, q, missing.frame), "bit clear"
		})
		return
	}
	x.pass(cCurrent, true)
}

// sackTrigger checks the fields a SACK takes from the packet that
// triggered it (RSP-SACK-1, RSP-SACK-2, WIRE-CCS-2).
func sackTrigger(e *engine, x *answerCtx) {
	if x.kind != ansTrigger {
		return
	}
	fl, s, a := x.fl, x.s, x.a
	trig := s.AckPSN()
	if a == nil {
		if s.AckPSNOffset == 0 {
			return // offset overflow is reported as 0 (RSP-SACK-2)
		}
		if sackClaimsPSN(s, trig) {
			// The SACK claims its trigger as received, and the capture
			// did not show it arriving (sent before the capture began, or
			// missing from it): the claims check judges that claim, once
			// (MRC-RSP-SACK-001).
			return
		}
		e.failWhy(rTrigger_RSP_SACK_1, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.Expected = u32p(trig), "ack_psn_offset naming a PSN that arrived"
			f.Observed = fmt.Sprintf("ack_psn %d never arrived", trig)
			if fr := fl.badArr[trig].frame; fr != 0 {
				f.Observed, f.Related = fmt.Sprintf("ack_psn %d arrived only with a wrong P_Key or another discard violation (frame %d)", trig, fr), []int{fr}
			}
		})
		return
	}
	okT := true
	if w := e.window(); w > 0 {
		d := psnDist(trig, s.CACKPSN)
		want := wire.PSNAdd(s.CACKPSN, 1)
		if d > 64 && d <= w {
			want = wire.PSNAdd(trig, -63)
		}
		if got := s.BitmapBase(); got != want {
			okT = false
			e.failWhy(rTrigger_RSP_SACK_2, x.pt, x.rsp, 0, func(f *Finding) {
				f.PSN, f.Related = u32p(trig), []int{a.frame}
				f.Expected, f.Observed = fmt.Sprintf("bitmap base %d", want), fmt.Sprintf("bitmap base %d (sack_offset %d)", got, s.SACKOffset)
			})
		}
	}
	wantTS := uint16(0)
	if a.hasTS {
		wantTS = a.ts
	}
	if s.CC.TxTimestamp != wantTS {
		okT = false
		e.failWhy(rTrigger_WIRE_CCS_2, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.Related = u32p(trig), []int{a.frame}
			f.Expected, f.Observed = fmt.Sprintf("tx_timestamp %d reflected from frame %d", wantTS, a.frame), fmt.Sprintf("tx_timestamp %d", s.CC.TxTimestamp)
		})
	}
	if okT {
		x.pass(cTrigger, false)
	}
}

// sackClaimsPSN reports whether SACK s claims PSN q as received: by its
// cumulative point or a bitmap bit.
func sackClaimsPSN(s *wire.SETH, q uint32) bool {
	if !psnAfter(q, s.CACKPSN) {
		return true
	}
	i := psnDist(q, s.BitmapBase())
	return i < 64 && s.SACKBitmap&(1<<i) != 0
}

// mVerdict checks RSP-SACK-3 and RSP-PRB-2: the m field of a SACK
// answering a write or a probe follows the trigger's CE mark.
func mVerdict(e *engine, x *answerCtx) {
	if x.kind != ansTrigger && x.kind != ansProbe || x.a == nil {
		return
	}
	s, a := x.s, x.a
	if mFits(s.M, a.ce) {
		x.pass(cMVerdict, false)
		return
	}
	exp := "m = NONE (trigger not CE-marked)"
	req := rMVerdict_RSP_SACK_3
	if a.ce {
		exp = "m = SKIP_ONCE (trigger CE-marked)"
	}
	if a.probe {
		req = rMVerdict_RSP_PRB_2
	}
	how := failHow(0)
	if !a.ce {
		how = onAbsence // a CE mark applied after the capture point is not seen there
	}
	e.failWhy(req, x.pt, x.rsp, how, func(f *Finding) {
		f.PSN, f.EV, f.Related = u32p(a.psn), u32p(a.ev), []int{a.frame}
		f.Expected, f.Observed = exp, "m = "+s.M.String()
	})
}

// sackCounters checks CC_STATE rcvd_bytes and ooo_count (WIRE-CCS-1,
// RSP-SACK-7).
func sackCounters(e *engine, x *fbCtx) {
	fl := x.fl
	if !x.judged || x.op != wire.OpSACK || !fl.rStart || fl.arrived.len() > 4096 {
		return
	}
	s := &x.p.SETH
	unit := int64(e.prof.RcvdBytesUnit)
	hi := fl.bytes / unit
	lo := int64(0)
	if at, ok := fl.rcumAt(e.now - e.grace); ok {
		lo = at.bytes / unit
	}
	got := int64(s.CC.RcvdBytes)
	span := (hi - lo) & 0xFFFFFF
	if (got-lo)&0xFFFFFF > span {
		// Out of range: the responder may count the payload of PSNs the
		// capture did not show, which the model took on its word or
		// this SACK claims.
		if n := fl.unseenPay + claimedUnseen(fl, s); n > 0 {
			seen := hi
			var first bool
			if hi, first = unseenPayload(e, fl, n, unit, hi, got); first {
				e.undecidedWhy(rCounters_WIRE_CCS_1, x.pt, x.rsp, "rcvd_bytes counts the payload of PSNs the capture did not show arriving", func(f *Finding) {
					f.Expected = fmt.Sprintf("rcvd_bytes %d (%d distinct payload bytes seen / %d), plus the payload of %d PSNs not seen", seen&0xFFFFFF, fl.bytes, unit, n)
					f.Observed = fmt.Sprintf("rcvd_bytes %d", got)
				})
				return
			}
			span = (hi - lo) & 0xFFFFFF
		}
	}
	if (got-lo)&0xFFFFFF > span {
		how := failHow(0)
		if (lo-got)&0xFFFFFF < (got-hi)&0xFFFFFF {
			// Fewer bytes than the arrivals seen: arrivals the
			// responder may not have had.
			how = onAbsence
		}
		e.failWhy(rCounters_WIRE_CCS_1, x.pt, x.rsp, how, func(f *Finding) {
			f.Expected = fmt.Sprintf("rcvd_bytes in [%d, %d] (%d distinct payload bytes / %d)", lo&0xFFFFFF, hi&0xFFFFFF, fl.bytes, unit)
			f.Observed = fmt.Sprintf("rcvd_bytes %d", got)
		})
		return
	}
	if s.CACKPSN == fl.rcum {
		// PSNs held beyond cack: all of them at most, those older than the
		// reaction time at least (counted only when ooo_count is below all).
		g, hi := int(s.CC.OOOCount), min(fl.arrived.len(), 32767)
		lo := hi
		if g != hi {
			lo = 0
			fl.arrived.each(func(_ uint32, a *arrival) {
				if a.ns <= e.now-e.grace {
					lo++
				}
			})
			lo = min(lo, 32767)
		}
		if g < lo || g > hi {
			how := failHow(0)
			if g < lo {
				how = onAbsence
			}
			e.failWhy(rCounters_RSP_SACK_7, x.pt, x.rsp, how, func(f *Finding) {
				f.Expected, f.Observed = fmt.Sprintf("ooo_count in [%d, %d] (PSNs held beyond cack)", lo, hi), fmt.Sprintf("ooo_count %d", g)
			})
			return
		}
	}
	x.pass(cCounters, false)
}

// unseenPayload widens hi, the top of the rcvd_bytes range (in units), by
// the payload of n PSNs the capture did not show arriving, at most a path
// MTU each. It reports whether got lies in the widening, above every
// byte seen, for the first time with n PSNs not seen: that the responder
// counted them is one undecided observation, and later SACKs are judged
// against the widened range rather than each failing.
func unseenPayload(e *engine, fl *flow, n int, unit, hi, got int64) (int64, bool) {
	mtu := int64(e.pathMTU(fl))
	if mtu == 0 {
		mtu = int64(pathMTUs[len(pathMTUs)-1])
	}
	wide := hi + (int64(n)*mtu+unit-1)/unit
	st := unseenPayOf.of(fl)
	if d := (got - hi) & 0xFFFFFF; d == 0 || d > wide-hi || st.judged == n {
		return wide, false
	}
	st.judged = n
	return wide, true
}

// claimedUnseen counts the PSNs SACK s claims that the model has not seen
// arriving: of its cumulative claim (the first 64), and of its bitmap.
func claimedUnseen(fl *flow, s *wire.SETH) int {
	n := 0
	if d := psnDist(s.CACKPSN, fl.rcum); d < 1<<23 {
		for i := 1; i <= int(min(d, 64)); i++ {
			if fl.arrived.get(wire.PSNAdd(fl.rcum, i)) == nil {
				n++
			}
		}
	}
	base := s.BitmapBase()
	bm := bitsAfter(s.SACKBitmap, base, fl.rcum)
	return n + bits.OnesCount64(bm&^fl.arrived.heldBits(base, bm))
}

// unseenPaySeen is the counters check's state on a connection: how many
// PSNs not seen its last undecided observation counted (unseenPayload).
type unseenPaySeen struct{ judged int }

// entries: unseenPaySeen holds no container.
func (*unseenPaySeen) entries() int { return 0 }

var unseenPayOf = newConnState(func() *unseenPaySeen { return &unseenPaySeen{} })

// answeredAtOnce: a SACK answers an arrival that needed one (RSP-SACK-5).
func answeredAtOnce(e *engine, x *answerCtx) {
	if x.kind == ansTrigger && x.neededAnswer {
		x.pass(cImmediate, false)
	}
}

func notAnsweredAtOnce(e *engine, pt *point, fl *flow) {
	e.pending(pt, fl, rImmediate_RSP_SACK_5, "a SACK answering this packet (ack_psn = its PSN)", fl.needArrivals())
}

// trimNACK checks RSP-NACK-1 and WIRE-NETH-3: a trim NACK answers a new
// PSN that arrived trimmed, with its code point's reason and timestamp.
func trimNACK(e *engine, x *fbCtx) {
	if x.op != wire.OpNACK {
		return
	}
	n := &x.p.NETH
	psn := n.NACKPSN
	if n.Reason != wire.NACKTrimmed && n.Reason != wire.NACKTrimmedLastHop {
		return
	}
	if !x.hasPend {
		// The trimmed arrival was not seen: at a point before the
		// trimming switch it looked whole.
		e.failWhy(rTrimNACK_RSP_NACK_1, x.pt, x.rsp, onAbsence, func(f *Finding) {
			f.PSN, f.Expected = u32p(psn), "a trim NACK only for a new PSN that arrived trimmed"
			f.Observed = fmt.Sprintf("%s NACK for PSN %d, which did not arrive trimmed (or was answered already)", n.Reason, psn)
		})
		return
	}
	a := x.pend
	want := wire.NACKTrimmed
	if a.lastHop {
		want = wire.NACKTrimmedLastHop
	}
	okN := true
	if n.Reason != want {
		okN = false
		e.failWhy(rTrimNACK_RSP_NACK_1, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.Related = u32p(psn), []int{a.frame}
			f.Expected, f.Observed = want.String()+" for the trimmed DSCP of frame "+itoa(a.frame), n.Reason.String()
		})
	}
	wantTS := uint16(0)
	if a.hasTS {
		wantTS = a.ts
	}
	if n.TxTimestamp != wantTS {
		okN = false
		e.failWhy(rTrimNACK_WIRE_NETH_3, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.Related = u32p(psn), []int{a.frame}
			f.Expected, f.Observed = fmt.Sprintf("tx_timestamp %d of the trimmed packet", wantTS), fmt.Sprintf("tx_timestamp %d", n.TxTimestamp)
		})
	}
	if okN {
		x.pass(cTrimNACK, false)
	}
}

func trimNotNACKed(e *engine, pt *point, fl *flow) {
	if e.pics.Has("trim_nack") {
		e.pending(pt, fl, rTrimNACK_RSP_NACK_1, "a TRIMMED or TRIMMED_LASTHOP NACK for this trimmed packet", fl.trimPend)
	}
}

// trimmedKept: a new PSN arrived trimmed; RSP-NACK-2 judges whether the
// responder NACKs it.
func trimmedKept(e *engine, x *arriveCtx) {
	if x.class == arrTrimmed {
		e.ok(cNoTrimNak, x.pt, x.rsp, false)
	}
}

// trimNACKUndeclared checks RSP-NACK-2: no trim NACK from a responder
// that does not declare trim-NACK support.
func trimNACKUndeclared(e *engine, x *fbCtx) {
	if x.op != wire.OpNACK {
		return
	}
	n := &x.p.NETH
	if n.Reason != wire.NACKTrimmed && n.Reason != wire.NACKTrimmedLastHop {
		return
	}
	if !e.trimNack {
		e.failWhy(rNoTrimNak_RSP_NACK_2, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.Expected, f.Observed = u32p(n.NACKPSN), "trimmed packets discarded silently (no trim-NACK support declared)", n.Reason.String()+" NACK"
		})
	}
}

// oorNACK checks RSP-NACK-4: PSN_OOR_WINDOW only for a PSN beyond
// cack + 128 × mpr_dest.
func oorNACK(e *engine, x *fbCtx) {
	if x.op != wire.OpNACK || x.p.NETH.Reason != wire.NACKPSNOutOfWindow {
		return
	}
	fl, psn := x.fl, x.p.NETH.NACKPSN
	switch {
	case x.hasPend, x.oorOut:
		x.pass(cOOR, false)
	case !fl.rKnown || !fl.haveCack:
		// No cumulative point reported yet (an out-of-window PSN before
		// any in-window one): the window is unknown, nothing to judge.
	default:
		e.failWhy(rOOR_RSP_NACK_4, x.pt, x.rsp, 0, func(f *Finding) {
			f.PSN, f.Expected = u32p(psn), "PSN_OOR_WINDOW only for a PSN beyond cack + 128 × mpr_dest"
			f.Observed = fmt.Sprintf("PSN_OOR_WINDOW NACK for PSN %d, inside the window", psn)
		})
	}
}

func oorNotNACKed(e *engine, pt *point, fl *flow) {
	e.pending(pt, fl, rOOR_RSP_NACK_4, "a PSN_OOR_WINDOW NACK for this out-of-window packet", fl.oorPend)
}

// ackCovers: an ACK covers the ack_req PSNs at or behind its psn
// (RSP-ACK-1).
func ackCovers(e *engine, x *fbCtx) {
	for range x.acksCovered {
		x.pass(cACK, false)
	}
}

// ackMissing: ACKs due when the cumulative point stepped onto an ack_req
// PSN (RSP-ACK-1).
func ackMissing(e *engine, pt *point, fl *flow) {
	for _, q := range sortedPSNs(fl.ackReq.m) {
		a := fl.ackReq.m[q]
		due, ok := fl.ackDue[q]
		if !ok {
			continue // cack never reached it
		}
		due = max(due, a.ns)
		why := func(f *Finding) {
			f.Frame, f.TimeNs, f.Plane, f.PSN = a.frame, a.ns, a.plane, u32p(q)
			f.Expected, f.Observed = "an ACKNOWLEDGE covering this ack_req PSN once cack passed it", "none"
		}
		if bad := fl.badFeedbackSince(due); bad != 0 {
			e.undecidedWhy(rACK_RSP_ACK_1, pt, fl.key.rsp, fmt.Sprintf("the ACK may be feedback seen with a bad ICRC (frame %d)", bad), why)
		} else if fl.haveFb && fl.lastFbNs > due+e.grace {
			e.failWhy(rACK_RSP_ACK_1, pt, fl.key.rsp, onAbsence, why)
		} else {
			e.undecidedWhy(rACK_RSP_ACK_1, pt, fl.key.rsp, "the capture ends before the ACK could be expected", why)
		}
	}
}

// probeAnswered checks RSP-PRB-1 (the answer reflects the probe's
// timestamp) and WIRE-SETH-7 (pr = 1 only in answer to a probe).
func probeAnswered(e *engine, x *answerCtx) {
	switch x.kind {
	case ansProbe:
		a := x.a
		if a.hasTS && x.s.CC.TxTimestamp != a.ts {
			e.failWhy(rProbeAns_RSP_PRB_1, x.pt, x.rsp, 0, func(f *Finding) {
				f.EV, f.Related = u32p(a.ev), []int{a.frame}
				f.Expected, f.Observed = fmt.Sprintf("tx_timestamp %d reflected from the probe", a.ts), fmt.Sprintf("tx_timestamp %d", x.s.CC.TxTimestamp)
			})
		} else {
			x.pass(cProbeAns, false)
		}
	case ansProbeUnmatched:
		if x.other == nil {
			e.failWhy(rProbeAns_WIRE_SETH_7, x.pt, x.rsp, 0, func(f *Finding) {
				f.Expected = "pr = 1 only in answer to a probe"
				f.Observed = fmt.Sprintf("pr = 1 SACK with probe_id %d, EV 0x%08x: no such probe arrived", uint16(x.s.AckPSNOffset), x.ev)
			})
		}
	}
}

func probeNotAnswered(e *engine, pt *point, fl *flow) {
	if len(fl.probes) == 0 {
		return
	}
	probes := map[uint32]arrival{}
	for i, a := range fl.probes {
		probes[uint32(i)] = a
	}
	e.pending(pt, fl, rProbeAns_RSP_PRB_1, "a SACK with pr = 1 answering this probe", probes)
}

// wimmRefused: the responder refuses a WriteIMM beyond max_wimm_dest with
// an UNEXP_EVENT NACK or an AETH NAK invalid request (WIMM-RSP-4).
func wimmRefused(e *engine, x *fbCtx) {
	for range x.wimmRefused {
		x.pass(cWIMMRsp, false)
	}
}

func wimmNotRefused(e *engine, pt *point, fl *flow) {
	e.pending(pt, fl, rWIMMRsp_WIMM_RSP_4, "the WriteIMM limit refusal (AETH NAK invalid request or UNEXP_EVENT NACK)", fl.wimmExcess)
}

// pending judges the arrivals of m left unanswered at the end of the
// capture: a failure when the responder kept sending feedback long after.
func (e *engine) pending(pt *point, fl *flow, req caseReq, exp string, m map[uint32]arrival) {
	for _, q := range sortedPSNs(m) {
		a := m[q]
		obs := "none before the end of the capture"
		why := func(f *Finding) {
			f.Frame, f.TimeNs, f.Plane, f.PSN, f.EV = a.frame, a.ns, a.plane, u32p(q), u32p(a.ev)
			f.Expected, f.Observed = exp, obs
		}
		if bad := fl.badFeedbackSince(a.ns); bad != 0 {
			e.undecidedWhy(req, pt, fl.key.rsp, fmt.Sprintf("the answer may be feedback seen with a bad ICRC (frame %d)", bad), why)
		} else if fl.haveFb && fl.lastFbNs > a.ns+e.grace {
			obs = "none, although the responder kept sending feedback"
			e.failWhy(req, pt, fl.key.rsp, onAbsence, why)
		} else {
			e.undecidedWhy(req, pt, fl.key.rsp, "the capture ends before an answer could be expected", why)
		}
	}
}
