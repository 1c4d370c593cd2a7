package conformance

import (
	"strings"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// RequirementID is the ID of a requirement of the spec registry, as a
// finding cites it ("WIRE-SETH-6"). The judge's checks cite theirs as
// caseReqs, each made once from its ID and looked up in the registry when
// the judge starts (ChecksErr, checkChecks; the package's tests fail on
// it too); every ID written in the module's sources is looked up by
// spec's TestCitedIDsExist. An ID that comes as a string from elsewhere
// (a report read back) becomes one through ParseRequirementID, which
// looks it up; the codec's (wire.ReqID) through CodecRequirement. In
// reports it is the ID's text.
type RequirementID string

// ParseRequirementID returns s as a RequirementID, or an
// *UnknownRequirementError when the spec registry has no requirement s.
func ParseRequirementID(s string) (RequirementID, error) {
	if _, ok := spec.LevelOf(s); !ok {
		return "", &UnknownRequirementError{ID: s}
	}
	return RequirementID(s), nil
}

// String returns the ID.
func (r RequirementID) String() string { return string(r) }

// MarshalText returns the ID (JSON, XML and text reports).
func (r RequirementID) MarshalText() ([]byte, error) { return []byte(r), nil }

// UnmarshalText parses an ID of the spec registry (ParseRequirementID).
func (r *RequirementID) UnmarshalText(b []byte) error {
	id, err := ParseRequirementID(string(b))
	if err != nil {
		return err
	}
	*r = id
	return nil
}

// Requirement returns the requirement r names in the spec registry.
func (r RequirementID) Requirement() (spec.Requirement, bool) { return spec.Lookup(string(r)) }

// Level returns the level of the requirement r names, and whether the spec
// registry defines it, from the registry's generated level table
// (spec.LevelOf): looking an ID up neither parses nor reads the
// specification.
func (r RequirementID) Level() (spec.Level, bool) { return spec.LevelOf(string(r)) }

// UnknownRequirementError is a requirement ID the spec registry does not
// define.
type UnknownRequirementError struct{ ID string }

func (e *UnknownRequirementError) Error() string {
	return "requirement " + e.ID + " is not in the spec registry"
}

// CodecRequirement returns the requirement a codec violation or error
// names (wire.Violation.Req, wire.Error.Req) as a finding cites it: its
// ID (every wire.ReqID is in the registry: checkJudgeRequirements, which
// CatalogErr runs), or WIRE-BTH-1 (the frame's header stack) for
// wire.NoReq and a value that is no wire.ReqID.
func CodecRequirement(r wire.ReqID) RequirementID {
	if r.Valid() {
		return RequirementID(r.String())
	}
	return "WIRE-BTH-1"
}

// JoinRequirements returns the IDs' text joined by sep, as reports and the
// case listings show a case's requirements.
func JoinRequirements(ids []RequirementID, sep string) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(string(id))
	}
	return b.String()
}
