package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/openmrc/mrc/spec"
	"pgregory.net/rapid"
)

func u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// handFields decodes header name from b with the hand-written codec and
// returns its named (non-reserved) fields.
func handFields(t *rapid.T, name string, b []byte) map[string]uint64 {
	switch name {
	case "BTH":
		var h BTH
		_ = Default.DecodeBTH(b, &h)
		return map[string]uint64{"opcode": uint64(h.Opcode), "se": u(h.SE), "m": u(h.M), "pad_cnt": uint64(h.PadCount),
			"tver": uint64(h.TVer), "p_key": uint64(h.PKey), "reserved_variant": uint64(h.Variant), "dest_qp": uint64(h.DestQP),
			"ack_req": u(h.AckReq), "rtx": u(h.Retransmit), "ts": u(h.TSPresent), "psn": uint64(h.PSN)}
	case "METH":
		var h METH
		_ = h.Decode(b)
		return map[string]uint64{"rqmsn": uint64(h.RQMSN), "msn": uint64(h.MSN)}
	case "TSETH":
		var h TSETH
		_ = h.Decode(b)
		return map[string]uint64{"tx_timestamp": uint64(h.TxTimestamp), "tsr": u(h.TSR), "ftype": uint64(h.FType)}
	case "RETH":
		var h RETH
		_ = h.Decode(b)
		return map[string]uint64{"va": h.VA, "r_key": uint64(h.RKey), "dma_length": uint64(h.DMALength)}
	case "ImmDt":
		return map[string]uint64{"imm_data": uint64(be.Uint32(b))}
	case "AETH":
		var h AETH
		_ = h.Decode(b)
		return map[string]uint64{"syndrome": uint64(h.Syndrome), "msn": uint64(h.MSN)}
	case "SETH":
		var h SETH
		h.decode(append(b[:SETHLen:SETHLen], make([]byte, CCStateLen)...))
		return map[string]uint64{"type": uint64(h.Type), "next_header": uint64(h.NextHeader), "m": uint64(h.M), "pr": u(h.PR),
			"ack_psn_offset": uint64(uint16(h.AckPSNOffset)), "entropy": uint64(h.Entropy), "spdcid": uint64(h.SPDCID),
			"dpdcid": uint64(h.DPDCID), "cack_psn": uint64(h.CACKPSN), "cc_type": uint64(h.CCType), "cc_flags": uint64(h.CCFlags),
			"mpr": uint64(h.MPR), "sack_offset": uint64(uint16(h.SACKOffset)), "sack_bitmap": h.SACKBitmap}
	case "CC_STATE":
		var h CCState
		h.decode(b)
		return map[string]uint64{"tx_timestamp": uint64(h.TxTimestamp), "ooo_count": uint64(h.OOOCount), "r_c": u(h.RC),
			"rcv_cwnd_pen": uint64(h.RcvCwndPen), "rcvd_bytes": uint64(h.RcvdBytes)}
	case "NETH":
		var h NETH
		_ = h.Decode(b)
		return map[string]uint64{"type": uint64(h.Type), "next_header": uint64(h.NextHeader), "nack_reason": uint64(h.Reason),
			"vendor_info": uint64(h.VendorInfo), "entropy": uint64(h.Entropy), "spdcid": uint64(h.SPDCID), "dpdcid": uint64(h.DPDCID),
			"nack_psn": uint64(h.NACKPSN), "cc_type": uint64(h.CCType), "cc_flags": uint64(h.CCFlags), "tx_timestamp": uint64(h.TxTimestamp)}
	case "PETH":
		var h PETH
		_ = h.Decode(b)
		return map[string]uint64{"type": uint64(h.Type), "next_header": uint64(h.NextHeader), "vendor_info": uint64(h.VendorInfo),
			"probe_id": uint64(h.ProbeID), "spdcid": uint64(h.SPDCID), "dpdcid": uint64(h.DPDCID),
			"tx_timestamp": uint64(h.TxTimestamp), "tsr": u(h.TSR), "ftype": uint64(h.FType)}
	case "ERTH":
		var h ERTH
		_ = h.Decode(b)
		return map[string]uint64{"type": uint64(h.Type), "next_header": uint64(h.NextHeader), "op": uint64(h.Op),
			"vendor_info": uint64(h.VendorInfo), "port_status_mask": uint64(h.PortStatusMask),
			"tx_timestamp": uint64(h.TxTimestamp), "tsr": u(h.TSR), "ftype": uint64(h.FType)}
	case "EETH":
		var h EETH
		_ = h.Decode(b)
		return map[string]uint64{"type": uint64(h.Type), "next_header": uint64(h.NextHeader), "op": uint64(h.Op),
			"vendor_info": uint64(h.VendorInfo), "tx_timestamp": uint64(h.TxTimestamp)}
	}
	t.Fatalf("no hand decoder for %s", name)
	return nil
}

// TestFieldDescriptionsMatchCodec: the field descriptions that drive the
// Lua dissector and JSON output extract, from any bytes, exactly what the
// hand-written decoder reads; they tile every header with no gap or
// overlap; and re-encoding any bytes reproduces them, reserved bits
// included (WIRE-GEN-1, WIRE-GEN-2).
func TestFieldDescriptionsMatchCodec(t *testing.T) {
	for _, h := range Default.Headers() {
		next := 0
		named := 0
		for _, f := range h.Fields {
			if f.Bit != next || f.Width < 1 || f.Width > 64 {
				t.Fatalf("%s.%s at bit %d width %d: want bit %d", h.Name, f.Name, f.Bit, f.Width, next)
			}
			next += f.Width
			if !f.Reserved {
				named++
			}
		}
		if next != 8*h.Len {
			t.Fatalf("%s fields cover %d bits, header has %d", h.Name, next, 8*h.Len)
		}
		h := h
		rapid.Check(t, func(t *rapid.T) {
			b := rapid.SliceOfN(rapid.Byte(), h.Len, h.Len).Draw(t, "bytes")
			want := handFields(t, h.Name, b)
			if len(want) != named {
				t.Fatalf("%s: hand decoder has %d fields, description %d", h.Name, len(want), named)
			}
			for _, f := range h.Fields {
				if f.Reserved {
					continue
				}
				if got, ok := want[f.Name]; !ok || got != f.Value(b) {
					t.Fatalf("%s.%s: description reads %#x, codec %#x (present %v)", h.Name, f.Name, f.Value(b), got, ok)
				}
			}
		})
	}
	// Byte-exact re-encoding of arbitrary header bytes.
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 36, 36).Draw(t, "bytes")
		var s SETH
		var n NETH
		var p PETH
		var e ERTH
		var x EETH
		var ts TSETH
		var bth BTH
		_, _, _, _, _, _ = s.Decode(b), n.Decode(b), p.Decode(b), e.Decode(b), x.Decode(b), ts.Decode(b)
		_ = Default.DecodeBTH(b, &bth)
		for _, c := range []struct {
			name string
			enc  []byte
		}{{"SETH", s.Append(nil)}, {"NETH", n.Append(nil)}, {"PETH", p.Append(nil)}, {"ERTH", e.Append(nil)},
			{"EETH", x.Append(nil)}, {"TSETH", ts.Append(nil)}, {"BTH", Default.AppendBTH(nil, &bth)}} {
			if !bytes.Equal(c.enc, b[:len(c.enc)]) {
				t.Fatalf("%s re-encoded %x from %x", c.name, c.enc, b[:len(c.enc)])
			}
		}
	})
}

func TestFieldSignedInt(t *testing.T) {
	f := Field{Name: "sack_offset", Bit: 0, Width: 16, Signed: true}
	if f.Int([]byte{0xFF, 0xFE}) != -2 || f.Int([]byte{0x00, 0x05}) != 5 {
		t.Error("signed extraction wrong")
	}
}

func TestWalkVisitsDecodedHeaders(t *testing.T) {
	for _, p := range samplePackets() {
		b, _ := Default.Append(nil, &p)
		var d Packet
		if err := Default.Decode(b, &d); err != nil {
			t.Fatal(err)
		}
		var names []string
		end := 0
		Default.Walk(&d, func(h *Header, off int) {
			names = append(names, h.Name)
			end = off + h.Len
		})
		if names[0] != "BTH" || end != d.hdrEnd {
			t.Errorf("%s: walked %v ending at %d, headers end at %d", p.BTH.Opcode, names, end, d.hdrEnd)
		}
	}
}

// TestFieldValueAnyPosition: the byte-wise extractor equals a bit-by-bit
// reading for every offset and width.
func TestFieldValueAnyPosition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "b")
		w := rapid.IntRange(1, 64).Draw(t, "width")
		f := Field{Bit: rapid.IntRange(0, 128-w).Draw(t, "bit"), Width: w}
		var want uint64
		for i := f.Bit; i < f.Bit+f.Width; i++ {
			want = want<<1 | uint64(b[i/8]>>(7-i%8)&1)
		}
		if got := f.Value(b); got != want {
			t.Fatalf("bit %d width %d: %#x, want %#x", f.Bit, f.Width, got, want)
		}
	})
}

func TestParseEVMode(t *testing.T) {
	for _, m := range []EVMode{EVModeSTEV, EVModeUDP, EVModeSRv6} {
		for _, s := range []string{m.String(), strings.ToLower(m.String())} {
			if got, err := ParseEVMode(s); err != nil || got != m {
				t.Errorf("ParseEVMode(%q) = %v, %v; want %v", s, got, err, m)
			}
		}
	}
	if _, err := ParseEVMode("stev2"); !errors.Is(err, ErrUnknownEVMode) || !strings.Contains(err.Error(), `"stev2"`) {
		t.Errorf("ParseEVMode(stev2) = %v, want ErrUnknownEVMode naming it", err)
	}
}

// TestHeadersBuiltOnFirstUse: NewCodec leaves the field descriptions
// unbuilt; Headers, Header and Walk, called at once from several
// goroutines, all see the descriptions buildHeaders makes, for every
// preset (the swapped BTH flag order moves se and m).
func TestHeadersBuiltOnFirstUse(t *testing.T) {
	for _, name := range spec.PresetNames() {
		p, err := spec.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCodec(p)
		if err != nil {
			t.Fatal(err)
		}
		if c.hdrs != nil {
			t.Fatalf("%s: NewCodec built the field descriptions", name)
		}
		want := c.buildHeaders()
		var wg sync.WaitGroup
		got := make([][]Header, 4)
		for i := range got {
			wg.Go(func() {
				if i%2 == 1 {
					if _, ok := c.Header("BTH"); !ok {
						t.Errorf("%s: no BTH description", name)
					}
				}
				got[i] = c.Headers()
			})
		}
		wg.Wait()
		for i, g := range got {
			if !reflect.DeepEqual(g, want) {
				t.Errorf("%s: goroutine %d: Headers() = %v, want %v", name, i, g, want)
			}
		}
	}
}
