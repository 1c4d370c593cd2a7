package spec

// API identifies the revision of the OCP MRC API headers a specification
// follows.
type API struct {
	Commit string // upstream commit of opencomputeproject/OCP-Multipath-Reliable-Connection
	Date   string // its date, YYYY-MM-DD
	MRC    string // MRC_API_CURRENT_VERSION of mrc_api_ver.h, MAJOR.MINOR.SUBMINOR
	MRCCtl string // MRC_CTL_API_CURRENT_VERSION of mrc_ctl_api_ver.h
}

// APIFollowed is the API revision this specification follows; its facts
// are pinned in spec/api/facts.txt, whose tests keep the two equal.
var APIFollowed = API{
	Commit: "662a1509e7e49315ae912099ceec3874a04b1442",
	Date:   "2026-05-19",
	MRC:    "1.0.1",
	MRCCtl: "1.0.1",
}
