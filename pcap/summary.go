package pcap

import (
	"strconv"

	"github.com/openmrc/mrc/wire"
)

// summaryField is one key=value pair of the one-line summary. Its value is
// the header field of wire's field table that field names, read from the
// frame's bytes as -V and JSON read it, in decimal or in hex; or, for the
// pairs the table has no field for, num (a derived number) or text (an
// enumeration's name, from the decoded packet, so that profile mappings
// apply). when, if set, says whether the pair shows at all.
type summaryField struct {
	key    string
	field  string
	digits int // hex digits; 0 prints in decimal
	num    func(pk *wire.Packet) uint64
	text   func(pk *wire.Packet) string
	when   func(pk *wire.Packet) bool
}

// summaryHeader is the summary's part for one transport header.
type summaryHeader struct {
	header string
	fields []summaryField
}

// summary lists, in the order the line shows them, the transport headers'
// pairs.
var summary = [...]summaryHeader{
	{"BTH", []summaryField{{key: "qp", field: "dest_qp", digits: 6}, {key: "psn", field: "psn"}}},
	{"METH", []summaryField{{key: "msn", field: "msn"},
		{key: "rqmsn", field: "rqmsn", when: func(pk *wire.Packet) bool { return pk.BTH.Opcode.HasImm() }}}},
	{"RETH", []summaryField{{key: "va", field: "va", digits: 16},
		{key: "len", num: func(pk *wire.Packet) uint64 { return uint64(len(pk.Payload)) }},
		{key: "dma_len", field: "dma_length"}}},
	{"ImmDt", []summaryField{{key: "imm", field: "imm_data", digits: 8}}},
	{"TSETH", []summaryField{{key: "tx_ts", field: "tx_timestamp"}}},
	{"AETH", []summaryField{{key: "syndrome", text: func(pk *wire.Packet) string { return syndromeText(pk.AETH.Syndrome) }},
		{key: "msn", field: "msn"}}},
	{"SETH", []summaryField{{key: "cack", field: "cack_psn"},
		{key: "ack_psn", num: func(pk *wire.Packet) uint64 { return uint64(pk.SETH.AckPSN()) }},
		{key: "base", num: func(pk *wire.Packet) uint64 { return uint64(pk.SETH.BitmapBase()) }},
		{key: "bitmap", field: "sack_bitmap", digits: 16},
		{key: "m", text: func(pk *wire.Packet) string { return pk.SETH.M.String() }},
		{key: "entropy", field: "entropy", digits: 8},
		{key: "pr", field: "pr", when: func(pk *wire.Packet) bool { return pk.SETH.PR }}}},
	{"NETH", []summaryField{{key: "reason", text: func(pk *wire.Packet) string { return pk.NETH.Reason.String() }},
		{key: "nack_psn", field: "nack_psn"}, {key: "entropy", field: "entropy", digits: 8}}},
	{"PETH", []summaryField{{key: "probe_id", field: "probe_id"}}},
	{"ERTH", []summaryField{{key: "op", text: func(pk *wire.Packet) string { return pk.ERTH.Op.String() }},
		{key: "port_status", field: "port_status_mask", digits: 8}}},
	{"EETH", []summaryField{{key: "op", text: func(pk *wire.Packet) string { return pk.EETH.Op.String() }}}},
}

// appendSummaryFields appends the summary's pairs for the transport
// headers r holds.
func (p *Printer) appendSummaryFields(b []byte, r *Record) []byte {
	var at [len(summary)]struct {
		h   *wire.Header
		off int
	}
	walk(p.codec, r, func(h *wire.Header, off int) {
		for i := range summary {
			if summary[i].header == h.Name {
				at[i].h, at[i].off = h, off
			}
		}
	})
	pk := &r.Packet
	for i := range summary {
		h := at[i].h
		if h == nil {
			continue
		}
		hb := r.Data[at[i].off : at[i].off+h.Len]
		for j, f := range summary[i].fields {
			if f.when != nil && !f.when(pk) {
				continue
			}
			b = append(b, ' ')
			b = append(b, f.key...)
			b = append(b, '=')
			switch {
			case f.text != nil:
				b = append(b, f.text(pk)...)
			case f.num != nil:
				b = strconv.AppendUint(b, f.num(pk), 10)
			default:
				b = p.appendField(b, i, j, hb)
			}
		}
	}
	return b
}

// compileSummary finds, for each summary pair that reads a header field,
// the field's extractor in p's codec.
func (p *Printer) compileSummary() {
	for i, s := range summary {
		p.sum[i] = make([]fieldX, len(s.fields))
		for _, x := range p.fx[s.header] {
			for j, f := range s.fields {
				if f.field != "" && x.key == f.field {
					p.sum[i][j] = x
				}
			}
		}
	}
}

// appendField appends the value of summary pair j of header i, from the
// header's bytes hb.
func (p *Printer) appendField(b []byte, i, j int, hb []byte) []byte {
	x := &p.sum[i][j]
	switch {
	case x.key == "":
		return append(b, '?') // TestSummaryFieldsInWireTable rules this out
	case summary[i].fields[j].digits > 0:
		return appendHex(b, x.value(hb), summary[i].fields[j].digits)
	}
	return strconv.AppendUint(b, x.value(hb), 10)
}
