package statemachine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Trace serialisation: Events as NDJSON, one JSON object per line, for TLA+
// trace validation (tla/MRCTrace.tla) and for diffing runs.
//
// # Schema (version 1)
//
// Every line is one object with exactly these twelve members, always in
// this order, all present, with no white space:
//
//	{"t":T,"qp":Q,"kind":"K","psn":P,"ev":E,"msn":M,"plane":L,"from":F,"to":O,"reason":R,"flags":G,"value":V}
//
//   - t: Event.Time, nanoseconds of synthetic time (an integer).
//   - qp: Event.QPN, the QP that produced the event (0 for records of the
//     environment that concern no QP).
//   - kind: the EventKind name (EventKind.String: "PacketSent",
//     "EVState", ...) or, for records written by a harness with
//     AppendTraceRecord, a name of the harness's own that is not an
//     EventKind name (modelcheck writes "Post", "NetDrop", "NetDup",
//     "NetTrim", "NetCE", "NetFail", "PortStatus" and "Deliver").
//   - psn, ev, msn, plane, from, to, reason, flags, value: the Event
//     fields of the same names, as unsigned decimal integers. Their meaning
//     depends on the kind and is documented on the EventKind constants
//     (events.go); fields a kind does not use are 0.
//
// Numeric codes are the Go (and wire) values: from/to of EVState are
// EVState values (1 GOOD, 2 SKIP, 3 ASSUMED_BAD, 4 DENIED), of QPState are
// QPState values; reason of EVState is an EVCause, of NACKSent and
// NACKReceived a wire.NACKReason, of SACKSent and SACKReceived the SACK's m
// (wire.Multipath), of PacketSent and PacketReceived the BTH opcode, of
// Completed a Status, of Lost a LossCause. Integers other than t, ev and
// value stay below 2^24; ev and value may need 64-bit readers when EVs or
// WR IDs are large (TLC integers are 32-bit signed, so traces meant for TLC
// keep them small).
//
// The encoding is canonical: equal events give equal bytes, so traces can
// be compared byte for byte.

// TraceSchemaVersion is the version of the NDJSON schema above.
const TraceSchemaVersion = 1

// AppendJSON appends e as one NDJSON line (with its trailing newline).
func (e Event) AppendJSON(dst []byte) []byte { return AppendTraceRecord(dst, e.Kind.String(), e) }

// AppendTraceRecord appends one NDJSON line with kind as its "kind" member
// and the other members from e. It lets a harness interleave records of its
// own (a packet dropped by the network, a work request posted) with the
// QPs' events in one trace. kind must be a plain identifier: letters,
// digits and '_' only.
func AppendTraceRecord(dst []byte, kind string, e Event) []byte {
	dst = append(dst, `{"t":`...)
	dst = strconv.AppendInt(dst, int64(e.Time), 10)
	dst = append(dst, `,"qp":`...)
	dst = strconv.AppendUint(dst, uint64(e.QPN), 10)
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, kind...)
	dst = append(dst, `","psn":`...)
	dst = strconv.AppendUint(dst, uint64(e.PSN), 10)
	dst = append(dst, `,"ev":`...)
	dst = strconv.AppendUint(dst, uint64(e.EV), 10)
	dst = append(dst, `,"msn":`...)
	dst = strconv.AppendUint(dst, uint64(e.MSN), 10)
	dst = append(dst, `,"plane":`...)
	dst = strconv.AppendUint(dst, uint64(e.Plane), 10)
	dst = append(dst, `,"from":`...)
	dst = strconv.AppendUint(dst, uint64(e.From), 10)
	dst = append(dst, `,"to":`...)
	dst = strconv.AppendUint(dst, uint64(e.To), 10)
	dst = append(dst, `,"reason":`...)
	dst = strconv.AppendUint(dst, uint64(e.Reason), 10)
	dst = append(dst, `,"flags":`...)
	dst = strconv.AppendUint(dst, uint64(e.Flags), 10)
	dst = append(dst, `,"value":`...)
	dst = strconv.AppendUint(dst, e.Value, 10)
	return append(dst, "}\n"...)
}

// WriteTrace writes events to w as NDJSON, one line per event.
func WriteTrace(w io.Writer, events []Event) error {
	var b []byte
	for _, e := range events {
		b = e.AppendJSON(b)
	}
	_, err := w.Write(b)
	return err
}

// TraceRecord is one decoded NDJSON line: the event and its kind name as
// written. For lines a QP wrote, Event.Kind is the kind and Name its
// String; for harness records Event.Kind is EvNone and Name says what the
// record is.
type TraceRecord struct {
	Name  string
	Event Event
}

// ErrTraceSyntax is returned (wrapped, with the line number) by
// ParseTraceLine and ReadTrace for a line that is not in the schema.
var ErrTraceSyntax = errors.New("statemachine: trace line not in the NDJSON schema")

var traceKeys = [...]string{"t", "qp", "kind", "psn", "ev", "msn", "plane", "from", "to", "reason", "flags", "value"}

// ParseTraceLine decodes one line written by AppendJSON or
// AppendTraceRecord (without or with its newline). It accepts exactly the
// canonical form: the twelve members in schema order.
func ParseTraceLine(line []byte) (TraceRecord, error) {
	var r TraceRecord
	s := bytes.TrimSuffix(line, []byte("\n"))
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return r, ErrTraceSyntax
	}
	s = s[1 : len(s)-1]
	var nums [len(traceKeys)]uint64
	for i, k := range traceKeys {
		if i > 0 {
			if len(s) == 0 || s[0] != ',' {
				return r, fmt.Errorf("%w: missing ',' before %q", ErrTraceSyntax, k)
			}
			s = s[1:]
		}
		pre := `"` + k + `":`
		if !bytes.HasPrefix(s, []byte(pre)) {
			return r, fmt.Errorf("%w: want member %q", ErrTraceSyntax, k)
		}
		s = s[len(pre):]
		if k == "kind" {
			if len(s) == 0 || s[0] != '"' {
				return r, fmt.Errorf("%w: kind is not a string", ErrTraceSyntax)
			}
			end := bytes.IndexByte(s[1:], '"')
			if end < 0 {
				return r, fmt.Errorf("%w: unterminated kind", ErrTraceSyntax)
			}
			r.Name = string(s[1 : 1+end])
			s = s[2+end:]
			continue
		}
		n := 0
		neg := k == "t" && len(s) > 0 && s[0] == '-'
		if neg {
			n = 1
		}
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 || (neg && n == 1) {
			return r, fmt.Errorf("%w: member %q is not an integer", ErrTraceSyntax, k)
		}
		if k == "t" {
			v, err := strconv.ParseInt(string(s[:n]), 10, 64)
			if err != nil {
				return r, fmt.Errorf("%w: %v", ErrTraceSyntax, err)
			}
			nums[i] = uint64(v)
		} else {
			v, err := strconv.ParseUint(string(s[:n]), 10, 64)
			if err != nil {
				return r, fmt.Errorf("%w: %v", ErrTraceSyntax, err)
			}
			nums[i] = v
		}
		s = s[n:]
	}
	if len(s) != 0 {
		return r, fmt.Errorf("%w: trailing %q", ErrTraceSyntax, s)
	}
	for k, n := range evKindNames {
		if n == r.Name && k != int(EvNone) {
			r.Event.Kind = EventKind(k)
		}
	}
	limits := [len(traceKeys)]uint64{1: 1<<32 - 1, 3: 1<<32 - 1, 4: 1<<32 - 1, 5: 1<<16 - 1, 6: 255, 7: 255, 8: 255, 9: 255, 10: 255}
	for i, l := range limits {
		if l != 0 && nums[i] > l {
			return r, fmt.Errorf("%w: member %q = %d out of range", ErrTraceSyntax, traceKeys[i], nums[i])
		}
	}
	r.Event.Time, r.Event.QPN, r.Event.PSN, r.Event.EV = Time(nums[0]), uint32(nums[1]), uint32(nums[3]), uint32(nums[4])
	r.Event.MSN, r.Event.Plane, r.Event.From, r.Event.To = uint16(nums[5]), uint8(nums[6]), uint8(nums[7]), uint8(nums[8])
	r.Event.Reason, r.Event.Flags, r.Event.Value = uint8(nums[9]), uint8(nums[10]), nums[11]
	return r, nil
}

// ReadTrace decodes an NDJSON trace. Empty lines are skipped.
func ReadTrace(rd io.Reader) ([]TraceRecord, error) {
	var out []TraceRecord
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		r, err := ParseTraceLine(sc.Bytes())
		if err != nil {
			return out, fmt.Errorf("line %d: %w", ln, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
