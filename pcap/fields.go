package pcap

import (
	"strconv"
	"strings"

	"github.com/openmrc/mrc/wire"
)

// FieldKeys returns the key of each field of h, in order, as the JSON
// output and the Wireshark dissector name them: the spec's field name,
// except that a name occurring more than once in the header (the
// reserved fields) gets "_<bit>" appended, its bit offset in the header,
// so that every key is unique.
func FieldKeys(h *wire.Header) []string {
	count := map[string]int{}
	for _, f := range h.Fields {
		count[f.Name]++
	}
	keys := make([]string, len(h.Fields))
	for i, f := range h.Fields {
		keys[i] = f.Name
		if count[f.Name] > 1 {
			keys[i] += "_" + strconv.Itoa(f.Bit)
		}
	}
	return keys
}

// WiresharkField returns the Wireshark display-filter name of a header
// field in the generated dissector: "mrc.<header>.<key>", the header in
// lower case, e.g. "mrc.bth.psn" or "mrc.cc_state.rcvd_bytes".
func WiresharkField(header, key string) string {
	return "mrc." + strings.ToLower(header) + "." + key
}

// fieldNote returns the symbolic meaning of a field value, or "".
func fieldNote(header, key string, v uint64) string {
	k, _ := defaultKeys() // TestFieldKeysFound checks the error
	switch {
	case header == "BTH" && key == k.Opcode:
		return wire.Opcode(v).String()
	case header == "NETH" && key == k.NACKReason:
		return wire.NACKReason(v).String()
	case header == "SETH" && key == k.SETHM:
		return wire.Multipath(v).String()
	case header == "ERTH" && key == k.ERTHOp, header == "EETH" && key == k.EETHOp:
		return wire.EndpointOp(v).String()
	case header == "AETH" && key == k.Syndrome:
		return syndromeText(uint8(v))
	}
	return ""
}

// syndromeText shows an AETH syndrome as type:value, e.g. "ACK:31".
func syndromeText(s uint8) string {
	a := wire.AETH{Syndrome: s}
	return [4]string{"ACK", "RNR", "RESERVED", "NAK"}[a.Type()] + ":" + strconv.Itoa(int(a.Value()))
}

// fieldX extracts one field faster than wire.Field.Value, which walks bit
// by bit: it loads the bytes that hold the field at once. The result is
// the same (a test checks every field of every header on random bytes).
type fieldX struct {
	f      wire.Field
	key    string
	prefix []byte // `"key":` for the JSON printer
	sb, eb int    // first and last byte holding the field
	shift  uint
	mask   uint64
}

func newFieldX(f wire.Field, key string) fieldX {
	x := fieldX{f: f, key: key, prefix: []byte(`"` + key + `":`), sb: f.Bit / 8, eb: (f.Bit + f.Width - 1) / 8}
	x.shift = uint((x.eb+1)*8 - f.Bit - f.Width)
	x.mask = ^uint64(0)
	if f.Width < 64 {
		x.mask = 1<<f.Width - 1
	}
	return x
}

// value returns the field's value in header bytes b.
func (x *fieldX) value(b []byte) uint64 {
	var v uint64
	switch n := x.eb - x.sb; {
	case n == 0: // most fields lie in one or two bytes
		v = uint64(b[x.sb])
	case n == 1:
		v = uint64(b[x.sb])<<8 | uint64(b[x.sb+1])
	case n >= 8:
		return x.f.Value(b) // an unaligned 64-bit field spans nine bytes
	default:
		for _, c := range b[x.sb : x.eb+1] {
			v = v<<8 | uint64(c)
		}
	}
	return v >> x.shift & x.mask
}

// int returns the field as signed when it is, else as value.
func (x *fieldX) int(b []byte) int64 {
	v := x.value(b)
	if x.f.Signed && x.f.Width < 64 && v>>(x.f.Width-1) != 0 {
		return int64(v) - int64(1)<<x.f.Width
	}
	return int64(v)
}

// extractors returns the fieldX of each field of h, keyed as FieldKeys.
func extractors(h *wire.Header) []fieldX {
	keys := FieldKeys(h)
	xs := make([]fieldX, len(h.Fields))
	for i, f := range h.Fields {
		xs[i] = newFieldX(f, keys[i])
	}
	return xs
}
