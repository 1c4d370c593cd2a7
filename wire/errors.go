package wire

import (
	"errors"
	"fmt"
)

// Error kinds, for errors.Is.
var (
	// ErrTruncated: the input ends before a header or field does.
	ErrTruncated = errors.New("truncated")
	// ErrInvalid: a field holds a value the spec forbids.
	ErrInvalid = errors.New("invalid")
	// ErrUnsupported: a well-formed input this codec does not handle
	// (for example IPv4 options or a non-MRC UDP port).
	ErrUnsupported = errors.New("unsupported")
)

// Error says which header, at which byte offset of the frame, which field
// and what was expected, with the requirement it breaks.
type Error struct {
	Kind   error  // ErrTruncated, ErrInvalid or ErrUnsupported
	Header string // "BTH", "IPv6", ...
	Offset int    // byte offset of the header (or field) in the input
	Field  string // field name as in the spec's tables, or "" for the header
	Req    ReqID  // the requirement broken, e.g. ReqBTH2 (WIRE-BTH-2)
	Msg    string // what was wrong / expected
}

func (e *Error) Error() string {
	f := ""
	if e.Field != "" {
		f = " field " + e.Field + ":"
	}
	r := ""
	if e.Req != NoReq {
		r = " (" + e.Req.String() + ")"
	}
	return fmt.Sprintf("wire: %s at offset %d:%s %s: %s%s", e.Header, e.Offset, f, e.Kind, e.Msg, r)
}

// Unwrap returns the error kind.
func (e *Error) Unwrap() error { return e.Kind }

func truncated(hdr string, off, need, have int, req ReqID) *Error {
	return &Error{Kind: ErrTruncated, Header: hdr, Offset: off, Req: req,
		Msg: fmt.Sprintf("need %d bytes, have %d", need, have)}
}

// Violation is one strict-mode finding: a decoded packet that breaks a
// requirement without being undecodable.
type Violation struct {
	Req    ReqID // the requirement broken
	Header string
	Offset int // byte offset in the frame
	Field  string
	Msg    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s at offset %d field %s: %s", v.Req, v.Header, v.Offset, v.Field, v.Msg)
}
