package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	Msg    string // what was wrong / expected; empty in an error DecodeInto wrote (Message)

	// msg is the message unformatted, in an error DecodeInto wrote: a
	// judge of millions of malformed frames formats only those it shows.
	msg lazyMsg
}

// lazyMsg is a message's format and its operands: ints for the %d, %x,
// %s (an Opcode) and %v (a bool: 0 is false) verbs in order, str for a %q.
type lazyMsg struct {
	format string
	ints   [5]int
	n      int8
	uns    uint8 // bit i: operand i holds a uint64's bits (fmt formats it unsigned)
	str    string
}

// Message returns what was wrong / expected: Msg, or the message of an
// error DecodeInto wrote, formatted now.
func (e *Error) Message() string { return e.msg.text(e.Msg) }

// AppendMessage appends Message to b without allocating beyond b.
func (e *Error) AppendMessage(b []byte) []byte { return e.msg.appendText(b, e.Msg) }

// text returns plain, a message given whole, or else m formatted now.
func (m *lazyMsg) text(plain string) string {
	if plain != "" || m.format == "" {
		return plain
	}
	return string(m.append(nil))
}

// appendText appends text(plain) to b without allocating beyond b.
func (m *lazyMsg) appendText(b []byte, plain string) []byte {
	if plain != "" || m.format == "" {
		return append(b, plain...)
	}
	return m.append(b)
}

// append appends the message as fmt would format it. The codec's formats
// use only %d, %x and %X (with a zero-padded width), %q, and %s and %v
// with the operands above.
func (m *lazyMsg) append(b []byte) []byte {
	f, next := m.format, 0
	for {
		i := strings.IndexByte(f, '%')
		if i < 0 || i == len(f)-1 {
			return append(b, f...)
		}
		b, f = append(b, f[:i]...), f[i+1:]
		zero, width := false, 0
		if f[0] == '0' {
			zero, f = true, f[1:]
		}
		for len(f) > 0 && f[0] >= '0' && f[0] <= '9' {
			width, f = width*10+int(f[0]-'0'), f[1:]
		}
		if len(f) == 0 {
			return b
		}
		verb := f[0]
		f = f[1:]
		switch verb {
		case '%':
			b = append(b, '%')
			continue
		case 'q':
			b = strconv.AppendQuote(b, m.str)
			continue
		}
		v, uns := 0, false
		if next < int(m.n) {
			v, uns, next = m.ints[next], m.uns&(1<<next) != 0, next+1
		}
		switch verb {
		case 's':
			b = append(b, Opcode(v).String()...)
		case 'v':
			b = strconv.AppendBool(b, v != 0)
		default:
			b = appendInt(b, v, uns, verb, zero, width)
		}
	}
}

// appendInt appends v (the bits of a uint64 if uns) as fmt's %d, %x or %X
// verb with the width and zero flag given would.
func appendInt(b []byte, v int, uns bool, verb byte, zero bool, width int) []byte {
	base := 10
	if verb == 'x' || verb == 'X' {
		base = 16
	}
	u := uint64(v)
	if uns {
		v = 0 // not negative
	} else if v < 0 {
		u = uint64(-(v + 1)) + 1 // -v, as an unsigned, even for the smallest int
	}
	var d [24]byte
	digits := strconv.AppendUint(d[:0], u, base)
	if verb == 'X' {
		for i, c := range digits {
			if c >= 'a' {
				digits[i] = c - 'a' + 'A'
			}
		}
	}
	n := len(digits)
	if v < 0 {
		n++
	}
	if !zero {
		for ; width > n; width-- {
			b = append(b, ' ')
		}
	}
	if v < 0 {
		b = append(b, '-')
	}
	for ; width > n; width-- {
		b = append(b, '0')
	}
	return append(b, digits...)
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
	return fmt.Sprintf("wire: %s at offset %d:%s %s: %s%s", e.Header, e.Offset, f, e.Kind, e.Message(), r)
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
	Msg    string // what was wrong / expected; empty in a Violation Check wrote (Message)

	// msg is the message unformatted, in a Violation Check wrote: a judge
	// of millions of frames breaking a rule formats only those it shows.
	msg lazyMsg
}

// Message returns what was wrong / expected: Msg, or the message of a
// Violation Check wrote, formatted now.
func (v *Violation) Message() string { return v.msg.text(v.Msg) }

// AppendMessage appends Message to b without allocating beyond b.
func (v *Violation) AppendMessage(b []byte) []byte { return v.msg.appendText(b, v.Msg) }

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s at offset %d field %s: %s", v.Req, v.Header, v.Offset, v.Field, v.Message())
}

// MarshalJSON encodes v with its Message as Msg, as encoding/json would
// a Violation whose Msg holds it.
func (v Violation) MarshalJSON() ([]byte, error) {
	type fields struct {
		Req    ReqID
		Header string
		Offset int
		Field  string
		Msg    string
	}
	return json.Marshal(fields{v.Req, v.Header, v.Offset, v.Field, v.Message()})
}
