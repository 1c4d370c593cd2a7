package pcap

import (
	"bufio"
	"encoding/hex"
	"io"
	"math"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/openmrc/mrc/wire"
)

// OutputFormat selects how a Printer shows records.
type OutputFormat uint8

// Output formats.
const (
	// OutputText is one line per frame, like tshark's default: number,
	// relative time, interface, source → destination, frame length, EV,
	// opcode, QP, PSN, the opcode's key fields and flags; errors and
	// violations with requirement IDs.
	OutputText OutputFormat = iota
	// OutputVerbose is the full header tree: every field of every header
	// by its spec name, like tshark -V.
	OutputVerbose
	// OutputJSON is one JSON object per line per frame, with fields
	// named as in the spec tables (see FieldKeys).
	OutputJSON
)

// Printer writes Records in one OutputFormat. It reuses one buffer and
// does not allocate per record in the common case.
type Printer struct {
	out    io.Writer
	w      *bufio.Writer // on out, made by the first Print
	format OutputFormat
	codec  *wire.Codec
	mode   wire.EVMode
	fx     map[string][]fieldX
	sum    [len(summary)][]fieldX // per summary pair, the field it reads
	link   []linkX                // wire.LinkHeaders(), compiled
	ends   *linkX                 // the header appendEnds read last
	b      []byte
}

// NewPrinter returns a Printer writing to w. c (nil: wire.Default) gives
// the header descriptions; mode names the EV mode in verbose output and
// should be the Decoder's.
func NewPrinter(w io.Writer, format OutputFormat, c *wire.Codec, mode wire.EVMode) *Printer {
	if c == nil {
		c = wire.Default
	}
	p := &Printer{out: w, format: format, codec: c, mode: mode,
		fx: map[string][]fieldX{}}
	for _, h := range c.Headers() {
		p.fx[h.Name] = extractors(&h)
	}
	p.compileSummary()
	p.link = compileLink()
	return p
}

// Print writes one record.
func (p *Printer) Print(r *Record) error {
	p.b = p.Append(p.b[:0], r)
	if p.w == nil {
		p.w = bufio.NewWriterSize(p.out, 64<<10)
	}
	_, err := p.w.Write(p.b)
	return err
}

// Append appends what Print writes for one record to b and returns the
// extended buffer; a Printer used only through Append writes nothing and
// holds no write buffer.
func (p *Printer) Append(b []byte, r *Record) []byte {
	switch p.format {
	case OutputVerbose:
		return p.appendVerbose(b, r)
	case OutputJSON:
		return p.appendJSON(b, r)
	}
	return p.appendText(b, r)
}

// header returns the extractors of h, which belongs to the codec's
// header set (walk may pass a copy, so look it up by name).
func (p *Printer) header(h *wire.Header) []fieldX {
	if x, ok := p.fx[h.Name]; ok && len(x) == len(h.Fields) {
		return x
	}
	return extractors(h)
}

// Flush writes out buffered output.
func (p *Printer) Flush() error {
	if p.w == nil {
		return nil
	}
	return p.w.Flush()
}

func appendRel(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
		if d < 0 { // -MinInt64 overflows; a capture cannot span 292 years anyway
			d = math.MaxInt64
		}
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	b = append(b, '.')
	ns := int64(d % time.Second)
	for div := int64(100000000); div > 0; div /= 10 {
		b = append(b, byte('0'+ns/div%10))
	}
	return b
}

func appendHex(b []byte, v uint64, digits int) []byte {
	const hx = "0123456789abcdef"
	b = append(b, '0', 'x')
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hx[v>>(4*uint(i))&0xF])
	}
	return b
}

func pad(b []byte, start, width int) []byte {
	for len(b)-start < width {
		b = append(b, ' ')
	}
	return b
}

// appendIface appends the interface's name, or "if<N>" when unnamed.
func appendIface(b []byte, r *Record) []byte {
	if r.Iface != nil && r.Iface.Name != "" {
		return append(b, r.Iface.Name...)
	}
	return strconv.AppendInt(append(b, "if"...), int64(r.Interface), 10)
}

func digits(n int) int {
	d := 1
	for n >= 10 || n <= -10 {
		n /= 10
		d++
	}
	if n < 0 {
		d++
	}
	return d
}

// errOf returns the *wire.Error in err's chain, or nil. Unlike errors.As
// it does not allocate, so that printing and filtering malformed frames
// stays allocation-free.
func errOf(err error) *wire.Error {
	for err != nil {
		if we, ok := err.(*wire.Error); ok {
			return we
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil
		}
		err = u.Unwrap()
	}
	return nil
}

// appendText writes the one-line summary, laid out as tshark's default
// line: number, time, interface, ends, length, then the MRC fields.
func (p *Printer) appendText(b []byte, r *Record) []byte {
	for n := digits(r.Number); n < 5; n++ { // right-align like tshark
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(r.Number), 10)
	b = append(b, ' ')
	b = appendRel(b, r.Rel)
	b = append(b, ' ')
	s := len(b)
	b = appendIface(b, r)
	b = pad(b, s, 12)
	b = append(b, ' ')
	b = p.appendEnds(b, r)
	if !r.MRC() {
		if _, ok := r.bthPresent(); ok && r.Err != nil {
			b = append(b, "ev="...)
			b = appendHex(b, uint64(r.EV), 8)
			b = append(b, ' ')
		}
		b = appendErrText(b, r)
		return append(b, '\n')
	}
	pk := &r.Packet
	h := &pk.BTH
	b = append(b, "ev="...)
	b = appendHex(b, uint64(r.EV), 8)
	b = append(b, ' ')
	s = len(b)
	b = append(b, h.Opcode.String()...)
	b = pad(b, s, 21)
	b = p.appendSummaryFields(b, r)
	b = appendFlags(b, pk)
	if r.Cut {
		b = append(b, " [cut by the snap length: "...)
		b = strconv.AppendInt(b, int64(r.Kept), 10)
		b = append(b, " of "...)
		b = strconv.AppendInt(b, int64(r.Length), 10)
		b = append(b, " bytes]"...)
	}
	if r.Err != nil {
		b = append(b, ' ')
		b = appendErrText(b, r)
	}
	if len(r.Violations) > 0 {
		b = append(b, " !"...)
		for i := range r.Violations {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, r.Violations[i].Req.String()...)
		}
	}
	return append(b, '\n')
}

// appendFlags appends the BTH flags that are set and the fabric's marks
// (trim, CE) in brackets, or nothing when there are none.
func appendFlags(b []byte, pk *wire.Packet) []byte {
	h := &pk.BTH
	flags := [...]struct {
		on   bool
		name string
	}{{h.AckReq, "A"}, {h.Retransmit, "RTX"}, {h.TSPresent, "TS"}, {h.SE, "SE"}, {h.M, "M"},
		{pk.Trimmed && !pk.TrimmedLastHop, "TRIM"}, {pk.TrimmedLastHop, "TRIM_LASTHOP"}, {pk.ECN() == 3, "CE"}}
	open := false
	for _, f := range flags {
		if !f.on {
			continue
		}
		if !open {
			b = append(b, " ["...)
			open = true
		} else {
			b = append(b, ' ')
		}
		b = append(b, f.name...)
	}
	if open {
		b = append(b, ']')
	}
	return b
}

// appendEnds appends source → destination and the frame length, as
// tshark's default line shows them: the ends (the view's src and dst
// fields) of the header wire.Packet.EndsHeader names, from the frame's
// bytes as far as it holds them; the source right-aligned and the
// destination left-aligned in 12 columns, the length in 4.
func (p *Printer) appendEnds(b []byte, r *Record) []byte {
	h, off := r.Packet.EndsHeader()
	x := p.ends
	if x == nil || x.h != h { // a capture's frames mostly share one shape
		x = p.linkOf(h)
		p.ends = x
	}
	s := len(b)
	b = appendEnd(b, &x.src, r.Data, off)
	if n := len(b) - s; n < 12 { // right-align
		b = append(b, "            "[:12-n]...)
		copy(b[s+12-n:], b[s:s+n])
		copy(b[s:s+12-n], "            ")
	}
	b = append(b, " → "...)
	s = len(b)
	b = appendEnd(b, &x.dst, r.Data, off)
	b = pad(b, s, 12)
	b = append(b, ' ')
	for n := digits(r.Length); n < 4; n++ {
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(r.Length), 10)
	return append(b, ' ')
}

// appendEnd appends the address x of the header at offset off in frame
// data, or nothing when data does not hold it.
func appendEnd(b []byte, x *fieldX, data []byte, off int) []byte {
	end := off + x.eb + 1
	switch {
	case x.key == "" || end > len(data):
		return b
	case x.eb-x.sb == 15:
		return netip.AddrFrom16([16]byte(data[off+x.sb : end])).AppendTo(b)
	}
	return appendAddr(b, data[off+x.sb:end])
}

func appendErrText(b []byte, r *Record) []byte {
	if r.Err == nil {
		return append(b, "no MRC headers"...)
	}
	we := errOf(r.Err)
	switch {
	case r.Malformed():
		b = append(b, "MALFORMED "...)
	default:
		b = append(b, "NOT-MRC "...)
	}
	if we == nil {
		return append(b, r.Err.Error()...)
	}
	b = append(b, we.Header...)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(we.Offset), 10)
	if we.Field != "" {
		b = append(b, '.')
		b = append(b, we.Field...)
	}
	b = append(b, ' ')
	b = append(b, we.Kind.Error()...)
	b = append(b, ": "...)
	b = we.AppendMessage(b)
	if we.Req != wire.NoReq {
		b = append(b, " ["...)
		b = append(b, we.Req.String()...)
		b = append(b, ']')
	}
	return b
}

func appendMAC(b []byte, m [6]byte) []byte {
	const hx = "0123456789abcdef"
	for i, x := range m {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, hx[x>>4], hx[x&0xF])
	}
	return b
}

// appendVerbose writes the -V tree: the frame, then each header from the
// outside in, the payload and ICRC, and what is wrong with the frame.
func (p *Printer) appendVerbose(b []byte, r *Record) []byte {
	b = appendFrameV(b, r)
	b = p.appendLinkV(b, r)
	b = p.appendEVV(b, r)
	b = p.appendHeadersV(b, r)
	b = p.appendPayloadV(b, r)
	b = appendProblemsV(b, r)
	return append(b, '\n')
}

// appendFrameV writes the frame's capture facts: length, interface, time
// and comments.
func appendFrameV(b []byte, r *Record) []byte {
	b = append(b, "Frame "...)
	b = strconv.AppendInt(b, int64(r.Number), 10)
	b = append(b, ": "...)
	b = strconv.AppendInt(b, int64(r.Length), 10)
	b = append(b, " bytes on wire, "...)
	b = strconv.AppendInt(b, int64(r.Captured()), 10)
	b = append(b, " captured, interface "...)
	b = appendIface(b, r)
	b = append(b, " (id "...)
	b = strconv.AppendInt(b, int64(r.Interface), 10)
	if r.Iface != nil && r.Iface.Plane >= 0 {
		b = append(b, ", plane "...)
		b = strconv.AppendInt(b, int64(r.Iface.Plane), 10)
	}
	b = append(b, ")\n    Time: "...)
	b = r.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, " (+"...)
	b = appendRel(b, r.Rel)
	b = append(b, ")\n"...)
	for _, c := range r.Comments {
		b = append(b, "    Comment: "...)
		b = appendPrintable(b, c)
		b = append(b, '\n')
	}
	return b
}

// appendEVV writes the EV as the profile's EV mode reads it, and whether
// the packet was trimmed.
func (p *Printer) appendEVV(b []byte, r *Record) []byte {
	pk := &r.Packet
	if _, _, bth := pk.Offsets(); bth == 0 {
		return b
	}
	b = append(b, "    EV: "...)
	b = appendHex(b, uint64(r.EV), 8)
	b = append(b, " ("...)
	b = append(b, p.mode.String()...)
	b = append(b, ")"...)
	if pk.Trimmed {
		b = append(b, ", trimmed"...)
		if pk.TrimmedLastHop {
			b = append(b, " at the last hop"...)
		}
	}
	b = append(b, '\n')
	return b
}

// appendHeadersV writes every MRC transport header field by field, from
// wire's field table.
func (p *Printer) appendHeadersV(b []byte, r *Record) []byte {
	walk(p.codec, r, func(h *wire.Header, off int) {
		b = append(b, "    "...)
		b = append(b, h.Name...)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(h.Len), 10)
		b = append(b, " bytes at offset "...)
		b = strconv.AppendInt(b, int64(off), 10)
		b = append(b, '\n')
		hb := r.Data[off : off+h.Len]
		xs := p.header(h)
		for i := range xs {
			x := &xs[i]
			b = append(b, "        "...)
			b = append(b, x.key...)
			b = append(b, ": "...)
			v := x.value(hb)
			if x.f.Signed {
				b = strconv.AppendInt(b, x.int(hb), 10)
			} else {
				b = strconv.AppendUint(b, v, 10)
				if x.f.Width > 4 {
					b = append(b, " ("...)
					b = appendHex(b, v, (x.f.Width+3)/4)
					b = append(b, ')')
				}
			}
			if n := fieldNote(h.Name, x.key, v); n != "" {
				b = append(b, ' ')
				b = append(b, n...)
			}
			if x.f.Reserved && v != 0 {
				b = append(b, " <- reserved, must be 0"...)
			}
			b = append(b, '\n')
		}
	})
	return b
}

// appendPayloadV writes the payload's length and first bytes, and the ICRC.
func (p *Printer) appendPayloadV(b []byte, r *Record) []byte {
	pk := &r.Packet
	if pk.Decoded&wire.HasPayload != 0 && r.Err == nil {
		b = append(b, "    Payload: "...)
		b = strconv.AppendInt(b, int64(len(pk.Payload)), 10)
		b = append(b, " bytes, pad_count "...)
		b = strconv.AppendUint(b, uint64(pk.BTH.PadCount), 10)
		if r.Cut {
			b = append(b, ", not in the capture (cut by the snap length)"...)
		} else if len(pk.Payload) > 0 {
			b = append(b, ", starts "...)
			n := min(len(pk.Payload), 16)
			b = hex.AppendEncode(b, pk.Payload[:n])
			if n < len(pk.Payload) {
				b = append(b, "..."...)
			}
		}
		b = append(b, '\n')
	}
	if r.Cut {
		return append(b, "    ICRC: not in the capture (cut by the snap length)\n"...)
	}
	if r.HasICRC() {
		b = append(b, "    ICRC: "...)
		b = appendHex(b, uint64(pk.ICRC), 8)
		if r.ICRCOK {
			b = append(b, " (correct)\n"...)
		} else {
			b = append(b, " (incorrect, computed "...)
			b = appendHex(b, uint64(p.codec.ComputeICRC(r.Data, pk)), 8)
			b = append(b, ")\n"...)
		}
	}
	return b
}

// appendProblemsV writes the decode error and the strict-mode violations.
func appendProblemsV(b []byte, r *Record) []byte {
	if r.Err != nil {
		b = append(b, "    Error: "...)
		b = appendErrText(b, r)
		b = append(b, '\n')
	}
	if len(r.Violations) > 0 {
		b = append(b, "    Violations:\n"...)
		for i := range r.Violations {
			v := &r.Violations[i]
			b = append(b, "        "...)
			b = append(b, v.Req.String()...)
			b = append(b, ": "...)
			b = append(b, v.Header...)
			b = append(b, '@')
			b = strconv.AppendInt(b, int64(v.Offset), 10)
			if v.Field != "" {
				b = append(b, '.')
				b = append(b, v.Field...)
			}
			b = append(b, ": "...)
			b = v.AppendMessage(b)
			b = append(b, '\n')
		}
	}
	return b
}

// appendPrintable appends s with non-printable bytes escaped.
func appendPrintable(b []byte, s []byte) []byte {
	q := strconv.AppendQuote(nil, string(s))
	return append(b, q[1:len(q)-1]...)
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, so the output is always valid JSON.
func appendJSONString(b []byte, s string) []byte {
	const hx = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hx[c>>4], hx[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

type jsonObj struct {
	b     []byte
	first bool
}

func (o *jsonObj) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObj) uint(k string, v uint64) { o.key(k); o.b = strconv.AppendUint(o.b, v, 10) }
func (o *jsonObj) int(k string, v int64)   { o.key(k); o.b = strconv.AppendInt(o.b, v, 10) }
func (o *jsonObj) str(k, v string)         { o.key(k); o.b = appendJSONString(o.b, v) }
func (o *jsonObj) bool(k string, v bool)   { o.key(k); o.b = strconv.AppendBool(o.b, v) }
func (o *jsonObj) open(k string)           { o.key(k); o.b = append(o.b, '{'); o.first = true }
func (o *jsonObj) close()                  { o.b = append(o.b, '}'); o.first = false }

// appendJSON writes one JSON object per frame: capture facts, outer
// headers, every transport header field from wire's field table, and what
// is wrong with the frame.
func (p *Printer) appendJSON(b []byte, r *Record) []byte {
	o := jsonObj{b: append(b, '{'), first: true}
	o.frame(r)
	o.link(p, r)
	p.jsonTransport(&o, r)
	o.problems(r)
	o.close()
	return append(o.b, '\n')
}

// frame writes the frame's capture facts.
func (o *jsonObj) frame(r *Record) {
	o.int("frame", int64(r.Number))
	o.key("time")
	o.b = append(o.b, '"')
	o.b = r.Timestamp.AppendFormat(o.b, time.RFC3339Nano)
	o.b = append(o.b, '"')
	o.key("rel_time")
	o.b = appendRel(o.b, r.Rel)
	o.int("interface", int64(r.Interface))
	o.key("interface_name")
	if r.Iface != nil && r.Iface.Name != "" {
		o.b = appendJSONString(o.b, r.Iface.Name)
	} else {
		o.b = append(appendIface(append(o.b, '"'), r), '"')
	}
	if r.Iface != nil && r.Iface.Plane >= 0 {
		o.str("capture_point", r.Iface.Point)
		o.int("plane", int64(r.Iface.Plane))
	}
	o.int("len", int64(r.Length))
	o.int("caplen", int64(r.Captured()))
	if len(r.Comments) > 0 {
		o.key("comments")
		o.b = append(o.b, '[')
		for i, c := range r.Comments {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendJSONString(o.b, string(c))
		}
		o.b = append(o.b, ']')
	}
}

// jsonTransport writes the EV, every transport header from wire's field
// table, the payload length and the ICRC.
func (p *Printer) jsonTransport(o *jsonObj, r *Record) {
	pk := &r.Packet
	_, _, bth := pk.Offsets()
	if bth != 0 {
		o.uint("ev", uint64(r.EV))
		o.bool("trimmed", pk.Trimmed)
		if pk.Trimmed {
			o.bool("trimmed_lasthop", pk.TrimmedLastHop)
		}
	}
	walk(p.codec, r, func(h *wire.Header, off int) {
		hb := r.Data[off : off+h.Len]
		o.open(h.Name)
		xs := p.header(h)
		for i := range xs {
			x := &xs[i]
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, x.prefix...)
			if x.f.Signed {
				o.b = strconv.AppendInt(o.b, x.int(hb), 10)
			} else {
				o.b = strconv.AppendUint(o.b, x.value(hb), 10)
			}
		}
		o.close()
	})
	if pk.Decoded&wire.HasPayload != 0 && r.Err == nil {
		o.int("payload_len", int64(len(pk.Payload)))
	}
	if bth != 0 && r.HasICRC() {
		o.uint("icrc", uint64(pk.ICRC))
		o.bool("icrc_ok", r.ICRCOK)
	}
}

// problems writes the decode error and the strict-mode violations.
func (o *jsonObj) problems(r *Record) {
	if r.Err != nil {
		o.open("error")
		if we := errOf(r.Err); we != nil {
			o.str("req", we.Req.String())
			o.str("kind", we.Kind.Error())
			o.str("header", we.Header)
			o.int("offset", int64(we.Offset))
			if we.Field != "" {
				o.str("field", we.Field)
			}
			o.str("msg", we.Message())
		} else {
			o.str("msg", r.Err.Error())
		}
		o.bool("malformed", r.Malformed())
		o.close()
	}
	if len(r.Violations) > 0 {
		o.key("violations")
		o.b = append(o.b, '[')
		for i := range r.Violations {
			v := &r.Violations[i]
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, '{')
			o.first = true
			o.str("req", v.Req.String())
			o.str("header", v.Header)
			o.int("offset", int64(v.Offset))
			if v.Field != "" {
				o.str("field", v.Field)
			}
			o.str("msg", v.Message())
			o.close()
		}
		o.b = append(o.b, ']')
	}
}
