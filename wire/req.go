package wire

// ReqID is a requirement of the spec registry that the codec reports: the
// requirement a decode error (Error.Req) or a strict-mode finding
// (Violation.Req) breaks. It is a small integer, so that a consumer judging
// frames compares and indexes it (an array by ReqID) instead of hashing or
// comparing text; String gives the ID's text, as reports write it.
//
// Each ID is declared once, below, with its text in reqText. The texts
// are in string order, so that ReqID order is the order of the IDs' text;
// TestReqIDsInRegistry checks the order and that the spec registry defines
// every one; conformance.CatalogErr, that one of the judge's checks judges
// each.
type ReqID uint8

// The requirements the codec reports. NoReq is the zero value: an error
// that names no requirement.
const (
	NoReq     ReqID = iota
	ReqAETH1        // WIRE-AETH-1
	ReqAETH2        // WIRE-AETH-2
	ReqBTH1         // WIRE-BTH-1
	ReqBTH2         // WIRE-BTH-2
	ReqBTH3         // WIRE-BTH-3
	ReqBTH5         // WIRE-BTH-5
	ReqBTH6         // WIRE-BTH-6
	ReqBTH7         // WIRE-BTH-7
	ReqBTH8         // WIRE-BTH-8
	ReqBTH9         // WIRE-BTH-9
	ReqDSCP2        // WIRE-DSCP-2
	ReqEETH1        // WIRE-EETH-1
	ReqENC1         // WIRE-ENC-1
	ReqENC2         // WIRE-ENC-2
	ReqENC5         // WIRE-ENC-5
	ReqEP1          // WIRE-EP-1
	ReqERTH1        // WIRE-ERTH-1
	ReqGEN2         // WIRE-GEN-2
	ReqICRC1        // WIRE-ICRC-1
	ReqIMM1         // WIRE-IMM-1
	ReqLEN1         // WIRE-LEN-1
	ReqMETH1        // WIRE-METH-1
	ReqNETH1        // WIRE-NETH-1
	ReqNETH2        // WIRE-NETH-2
	ReqNETH4        // WIRE-NETH-4
	ReqOP1          // WIRE-OP-1
	ReqOP2          // WIRE-OP-2
	ReqPAY1         // WIRE-PAY-1
	ReqPAY2         // WIRE-PAY-2
	ReqPETH1        // WIRE-PETH-1
	ReqPETH2        // WIRE-PETH-2
	ReqRETH1        // WIRE-RETH-1
	ReqSETH1        // WIRE-SETH-1
	ReqSETH10       // WIRE-SETH-10
	ReqSETH3        // WIRE-SETH-3
	ReqTRIM1        // WIRE-TRIM-1
	ReqTSETH1       // WIRE-TSETH-1
	ReqUDP1         // WIRE-UDP-1
	ReqUDP3         // WIRE-UDP-3

	// NumReqs is one more than the largest ReqID: an array of NumReqs
	// elements has one per ReqID.
	NumReqs
)

// reqText is each ReqID's requirement ID, as the spec registry writes it.
var reqText = [NumReqs]string{
	ReqAETH1: "WIRE-AETH-1", ReqAETH2: "WIRE-AETH-2",
	ReqBTH1: "WIRE-BTH-1", ReqBTH2: "WIRE-BTH-2", ReqBTH3: "WIRE-BTH-3", ReqBTH5: "WIRE-BTH-5",
	ReqBTH6: "WIRE-BTH-6", ReqBTH7: "WIRE-BTH-7", ReqBTH8: "WIRE-BTH-8", ReqBTH9: "WIRE-BTH-9",
	ReqDSCP2: "WIRE-DSCP-2", ReqEETH1: "WIRE-EETH-1",
	ReqENC1: "WIRE-ENC-1", ReqENC2: "WIRE-ENC-2", ReqENC5: "WIRE-ENC-5",
	ReqEP1: "WIRE-EP-1", ReqERTH1: "WIRE-ERTH-1", ReqGEN2: "WIRE-GEN-2", ReqICRC1: "WIRE-ICRC-1",
	ReqIMM1: "WIRE-IMM-1", ReqLEN1: "WIRE-LEN-1", ReqMETH1: "WIRE-METH-1",
	ReqNETH1: "WIRE-NETH-1", ReqNETH2: "WIRE-NETH-2", ReqNETH4: "WIRE-NETH-4",
	ReqOP1: "WIRE-OP-1", ReqOP2: "WIRE-OP-2", ReqPAY1: "WIRE-PAY-1", ReqPAY2: "WIRE-PAY-2",
	ReqPETH1: "WIRE-PETH-1", ReqPETH2: "WIRE-PETH-2", ReqRETH1: "WIRE-RETH-1",
	ReqSETH1: "WIRE-SETH-1", ReqSETH10: "WIRE-SETH-10", ReqSETH3: "WIRE-SETH-3",
	ReqTRIM1: "WIRE-TRIM-1", ReqTSETH1: "WIRE-TSETH-1", ReqUDP1: "WIRE-UDP-1", ReqUDP3: "WIRE-UDP-3",
}

// String returns the requirement's ID ("WIRE-BTH-2"), or "" for NoReq and
// for a value that is no ReqID.
func (r ReqID) String() string {
	if r < NumReqs {
		return reqText[r]
	}
	return ""
}

// Valid reports whether r names a requirement: not NoReq, and below
// NumReqs.
func (r ReqID) Valid() bool { return r > NoReq && r < NumReqs }

// MarshalText returns the requirement's ID (String).
func (r ReqID) MarshalText() ([]byte, error) { return []byte(r.String()), nil }
