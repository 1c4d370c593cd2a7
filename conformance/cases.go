package conformance

// Topologies used by the passive cases.
const (
	topoAny       = "any MRC traffic; the capture point nearest the sender of each packet"
	topoReq       = "requester↔responder, ≥1 QP, ≥1 plane; capture at (or nearest) the requester"
	topoRsp       = "requester↔responder, ≥1 QP, ≥1 plane; capture at (or nearest) the responder"
	topoReqPlanes = "requester↔responder, 1 QP sprayed over ≥2 EVs (≥2 planes recommended); capture nearest the requester"
	topoEP        = "two nodes exchanging endpoint operations on QP 0x2; capture nearest each sender"
)

// Common step texts.
const (
	stepDecode   = "Decode every frame with the PICS profile's codec (lenient Decode, strict Check)."
	stepAttr     = "Attribute each frame to its sender node and keep the frames captured at the point nearest that node."
	stepReconstr = "Reconstruct each connection (requester node, responder node, responder QPN) and pair its data with the SACKs, NACKs and ACKs flowing back."
)

// passiveCases is the catalog of cases mrc-conform judge evaluates, in
// caseID order: each is registered, with its check, in the checks file of
// its area (passiveCase), so that adding a passive case is one file's
// change.
var passiveCases []Case
