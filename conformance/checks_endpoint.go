package conformance

import (
	"fmt"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// The cases of this file's checks, with their catalog entries.
var (
	cWireEP = passiveCase(Case{
		ID: "MRC-WIRE-EP-001", Title: "Endpoint headers",
		Assertion:    "ERTH op is 0 or 1, PORT_STATUS_UPDATE masks have bit 0 clear, EV_PROBE masks are 0; EETH repeats the request's op and tx_timestamp.",
		Requirements: []RequirementID{"WIRE-ERTH-1", "WIRE-ERTH-2", "WIRE-EETH-1"}, Level: spec.Must, Mode: Passive, View: ViewSender, Topology: topoEP,
		Features: []string{"endpoint_ops"},
		Steps:    []string{stepDecode, stepAttr, "Check every endpoint request and response; pair responses with requests by request id."},
		Pass:     "every endpoint packet is well formed", Fail: "a bad op or mask, or a response that does not echo its request", Inconclusive: "no endpoint operation",
	})
	cEPAnswer = passiveCase(Case{
		ID: "MRC-EP-GEN-001", Title: "Endpoint requests are answered",
		Assertion:    "A node answers every well-formed endpoint request with one ENDPOINT_RESPONSE carrying the request id.",
		Requirements: []RequirementID{"EP-GEN-5", "EP-GEN-1"}, Level: spec.Must, Mode: Passive, View: ViewResponder, Topology: topoEP,
		Features: []string{"endpoint_ops"},
		Steps:    []string{stepDecode, "Pair requests arriving at a node with the responses it sends, by request id."},
		Pass:     "every request answered", Fail: "a request without response", Inconclusive: "no endpoint request, or the capture ends too soon",
	})
	cPSU = passiveCase(Case{
		ID: "MRC-EP-PSU-001", Title: "No traffic on planes a peer reports down",
		Assertion:    "After a PORT_STATUS_UPDATE from a node reports its port n down (bit n clear), the receiver sends that node no data or probe on plane n − 1 until an update reports it up.",
		Requirements: []RequirementID{"EP-PSU-3", "EV-PORT-2"}, Level: spec.Must, Mode: Passive, View: ViewRequester, Topology: topoReqPlanes + ", capture interfaces named per plane (<point>/planeN), plane n − 1 ↔ port n",
		Features: []string{"endpoint_ops"},
		Steps:    []string{stepDecode, stepReconstr, "Track the latest port status update each node received from each peer.", "Check the plane of every write and probe sent to that peer after the reaction time."},
		Pass:     "no packet on a plane reported down", Fail: "a packet on a plane the peer reported down", Inconclusive: "no port status update",
	})
)

// The requirements this file's checks cite, each made for its case
// (caseID.req) and declared by its check (check.reqs).
var (
	rWireEP_WIRE_ERTH_2 = cWireEP.req("WIRE-ERTH-2")
	rWireEP_WIRE_EETH_1 = cWireEP.req("WIRE-EETH-1")
	rEPAnswer_EP_GEN_5  = cEPAnswer.req("EP-GEN-5")
	rPSU_EP_PSU_3       = cPSU.req("EP-PSU-3")
)

// The checks of endpoint operations (QP 0x2): their headers, their
// answers, and the port status updates they carry.
func init() {
	addChecks(
		check{cs: cWireEP, codec: []wire.ReqID{wire.ReqERTH1, wire.ReqEETH1}, reqs: []caseReq{rWireEP_WIRE_ERTH_2, rWireEP_WIRE_EETH_1}, endpoint: endpointHeaders},
		check{cs: cEPAnswer, reqs: []caseReq{rEPAnswer_EP_GEN_5}, endpoint: endpointAnswered, badICRC: endpointMaybeAnswered, finishPoint: endpointNotAnswered},
		check{cs: cPSU, reqs: []caseReq{rPSU_EP_PSU_3}, sent: writeOnLivePlane, sentOn: wPSU, probe: probeOnLivePlane},
	)
}

// endpointHeaders checks WIRE-ERTH-2 (a request's port_status_mask) and
// WIRE-EETH-1 (a response repeats its request's op and timestamp).
func endpointHeaders(e *engine, x *epCtx) {
	p := x.p
	if x.req == nil {
		h := &p.ERTH
		switch {
		case h.Op == wire.EPPortStatusUpdate && h.PortStatusMask&1 != 0:
			e.failWhy(rWireEP_WIRE_ERTH_2, x.pt, x.src, 0, func(f *Finding) {
				f.Expected, f.Observed = "port_status_mask bit 0 clear (ports are 1-based)", fmt.Sprintf("mask 0x%08x", h.PortStatusMask)
			})
		case h.Op == wire.EPEVProbe && h.PortStatusMask != 0:
			e.failWhy(rWireEP_WIRE_ERTH_2, x.pt, x.src, 0, func(f *Finding) {
				f.Expected, f.Observed = "port_status_mask 0 in an EV_PROBE", fmt.Sprintf("mask 0x%08x", h.PortStatusMask)
			})
		default:
			e.ok(cWireEP, x.pt, x.src, false)
		}
		return
	}
	q, h := x.req, &p.EETH
	if h.Op != q.op || h.TxTimestamp != q.ts {
		e.failWhy(rWireEP_WIRE_EETH_1, x.pt, x.src, 0, func(f *Finding) {
			f.Related = []int{q.frame}
			f.Expected = fmt.Sprintf("op %s and tx_timestamp %d of request frame %d", q.op, q.ts, q.frame)
			f.Observed = fmt.Sprintf("op %s, tx_timestamp %d", h.Op, h.TxTimestamp)
		})
		return
	}
	e.ok(cWireEP, x.pt, x.src, false)
}

// endpointMaybeAnswered: an endpoint response seen with a bad ICRC may
// answer the request waiting for it: whether it does is undecided.
func endpointMaybeAnswered(e *engine, x *badCtx) {
	if x.epWaiting {
		e.undecided(cEPAnswer, x.pt, x.src, fmt.Sprintf("an endpoint response was seen with a bad ICRC (frame %d)", e.frameNo))
	}
}

// endpointAnswered: an endpoint request is answered (EP-GEN-5).
func endpointAnswered(e *engine, x *epCtx) {
	if x.req != nil {
		e.ok(cEPAnswer, x.pt, x.src, false)
	}
}

// endpointNotAnswered: the requests left unanswered at the end.
func endpointNotAnswered(e *engine, pt *point) {
	for _, k := range sortedEP(pt.ep) {
		q := pt.ep[k]
		last := e.nodes[nodePoint{k.rsp, pt.name}]
		why := func(f *Finding) {
			f.Frame, f.TimeNs, f.Plane = q.frame, q.ns, q.plane
			f.Expected, f.Observed = "an ENDPOINT_RESPONSE with request id "+itoa(int(k.id)), "none"
		}
		if last != nil && last.lastNs > q.ns+e.grace {
			e.failWhy(rEPAnswer_EP_GEN_5, pt, k.rsp, onAbsence, why)
		} else {
			e.undecidedWhy(rEPAnswer_EP_GEN_5, pt, k.rsp, "the capture ends before an answer could be expected", why)
		}
	}
}

func writeOnLivePlane(e *engine, x *sentCtx)  { e.psuCheck(x.pt, x.fl, x.req, "a write") }
func probeOnLivePlane(e *engine, x *probeCtx) { e.psuCheck(x.pt, x.fl, x.req, "a probe") }

// psuCheck checks that nothing goes to a peer on a plane it reported down
// (EP-PSU-3, EV-PORT-2). Plane n − 1 carries port n.
func (e *engine) psuCheck(pt *point, fl *flow, node, what string) {
	if len(pt.psu) == 0 {
		return // no port status update seen at the point: no names hashed
	}
	u, ok := pt.psu[[2]string{fl.key.rsp, node}]
	if !ok || e.now < u.ns+e.grace || pt.curPlane < 0 || pt.curPlane > 30 {
		return
	}
	if u.mask&(1<<(pt.curPlane+1)) == 0 {
		e.failWhy(rPSU_EP_PSU_3, pt, node, onTiming, func(f *Finding) {
			f.Related = []int{u.frame}
			f.Expected = fmt.Sprintf("nothing on plane %d: %s's port status update (frame %d, mask 0x%08x) reports port %d down", pt.curPlane, fl.key.rsp, u.frame, u.mask, pt.curPlane+1)
			f.Observed = what + " on plane " + itoa(pt.curPlane)
		})
		return
	}
	e.ok(cPSU, pt, node, true)
}
