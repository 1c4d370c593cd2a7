package wire

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/openmrc/mrc/spec"
)

// checkReqTexts checks a table of ReqID texts as reqText must be: no text
// for NoReq, then requirement IDs of the spec registry in strictly
// increasing string order (each once; ReqID order is text order).
func checkReqTexts(texts []string) error {
	if len(texts) == 0 || texts[0] != "" {
		return fmt.Errorf("NoReq has a text")
	}
	for r := 1; r < len(texts); r++ {
		if _, ok := spec.LevelOf(texts[r]); !ok {
			return fmt.Errorf("ReqID %d: %q is not in the spec registry", r, texts[r])
		}
		if r > 1 && texts[r-1] >= texts[r] {
			return fmt.Errorf("ReqID %d: %q does not sort after %q", r, texts[r], texts[r-1])
		}
	}
	return nil
}

// TestReqIDsInRegistry: every requirement the codec reports is one of the
// spec registry, declared once, in string order; the check fails on a
// planted ID the registry lacks and on a planted duplicate.
func TestReqIDsInRegistry(t *testing.T) {
	if err := checkReqTexts(reqText[:]); err != nil {
		t.Error(err)
	}
	unknown := reqText
	unknown[ReqPAY2] = "WIRE-" + "PAY-99" // split: not a citation (spec's TestCitedIDsExist)
	if err := checkReqTexts(unknown[:]); err == nil {
		t.Error("a planted ID the registry lacks passed")
	}
	dup := reqText
	dup[ReqBTH3] = dup[ReqBTH2]
	if err := checkReqTexts(dup[:]); err == nil {
		t.Error("a planted duplicate passed")
	}
}

// TestReqIDText: a ReqID reads as its ID's text in Error, String, %s and
// JSON; NoReq and a value that is no ReqID as nothing.
func TestReqIDText(t *testing.T) {
	if s := fmt.Sprintf("%s %v", ReqBTH2, ReqSETH10); s != "WIRE-BTH-2 WIRE-SETH-10" {
		t.Errorf("text %q", s)
	}
	if b, err := json.Marshal(Violation{Req: ReqICRC1}); err != nil || string(b) != `{"Req":"WIRE-ICRC-1","Header":"","Offset":0,"Field":"","Msg":""}` {
		t.Errorf("JSON %s, %v", b, err)
	}
	for _, r := range []ReqID{NoReq, NumReqs, 255} {
		if r.String() != "" || r.Valid() {
			t.Errorf("ReqID %d: %q, valid %v", r, r.String(), r.Valid())
		}
	}
	for r := NoReq + 1; r < NumReqs; r++ {
		if !r.Valid() {
			t.Errorf("%s not valid", r)
		}
	}
	e := &Error{Kind: ErrInvalid, Header: "BTH", Offset: 14, Field: "opcode", Req: ReqBTH2, Msg: "m"}
	if got := e.Error(); got != "wire: BTH at offset 14: field opcode: invalid: m (WIRE-BTH-2)" {
		t.Errorf("Error() = %q", got)
	}
	e.Req = NoReq
	if got := e.Error(); got != "wire: BTH at offset 14: field opcode: invalid: m" {
		t.Errorf("Error() without a requirement = %q", got)
	}
	v := Violation{Req: ReqGEN2, Header: "SETH", Offset: 3, Field: "reserved", Msg: "m"}
	if got := v.String(); got != "WIRE-GEN-2: SETH at offset 3 field reserved: m" {
		t.Errorf("Violation.String() = %q", got)
	}
}
