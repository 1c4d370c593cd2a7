package wire

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// unhex turns a spaced hex dump into bytes.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type headerCodec interface {
	Decode([]byte) error
	Append([]byte) []byte
}

// The bytes below were derived by hand from the field tables in
// spec/10-wire.md, not produced by the encoder.
func TestHeaderVectors(t *testing.T) {
	cases := []struct {
		name string
		req  string
		hex  string
		want headerCodec
		got  headerCodec
	}{
		{"METH", "WIRE-METH-1", "01 02 03 04", &METH{RQMSN: 0x0102, MSN: 0x0304}, &METH{}},
		{"TSETH", "WIRE-TSETH-1", "BE EF 80 01", &TSETH{TxTimestamp: 0xBEEF, TSR: true, FType: 1}, &TSETH{}},
		{"TSETH reserved kept", "WIRE-GEN-2", "00 00 7F F0", &TSETH{Rsvd: 0x7FF}, &TSETH{}},
		{"RETH", "WIRE-RETH-1", "00 11 22 33 44 55 66 77 89 AB CD EF 00 00 10 00",
			&RETH{VA: 0x0011223344556677, RKey: 0x89ABCDEF, DMALength: 0x1000}, &RETH{}},
		{"AETH ACK no credit", "WIRE-AETH-2", "1F 00 01 02", &AETH{Syndrome: 0x1F, MSN: 0x102}, &AETH{}},
		{"SETH+CC_STATE", "WIRE-SETH-1",
			"00 22 FF FE DE AD BE EF 00 01 00 02 00 12 34 56 21 08 FF FF 80 00 00 00 00 00 00 01 12 34 00 05 C0 00 01 00",
			&SETH{M: MSkipOnce, PR: true, AckPSNOffset: -2, Entropy: 0xDEADBEEF, SPDCID: 1, DPDCID: 2,
				CACKPSN: 0x123456, CCType: 2, CCFlags: 1, MPR: 8, SACKOffset: -1, SACKBitmap: 0x8000000000000001,
				CC: CCState{TxTimestamp: 0x1234, OOOCount: 5, RC: true, RcvCwndPen: 0x40, RcvdBytes: 0x100}}, &SETH{}},
		{"SETH type/next_header straddle", "WIRE-SETH-1",
			"A9 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 00 00 00 00 00",
			&SETH{Type: 0xA, NextHeader: 0x13, CC: CCState{Rsvd: 1}}, &SETH{}},
		{"NETH", "WIRE-NETH-1", "00 00 01 00 00 01 00 02 00 00 00 00 00 00 00 10 00 00 01 02",
			&NETH{Reason: NACKTrimmed, Entropy: 0x00010002, NACKPSN: 0x10, TxTimestamp: 0x0102}, &NETH{}},
		{"NETH all fields", "WIRE-NETH-1", "F8 7F 19 AA 12 34 56 78 BE EF CA FE 5A 00 FF FF 3C 81 44 55",
			&NETH{Type: 0xF, NextHeader: 0x10, Rsvd1: 0x7F, Reason: NACKUnexpEvent, VendorInfo: 0xAA, Entropy: 0x12345678,
				SPDCID: 0xBEEF, DPDCID: 0xCAFE, Rsvd2: 0x5A, NACKPSN: 0xFFFF, CCType: 3, CCFlags: 0xC, Rsvd3: 0x81, TxTimestamp: 0x4455}, &NETH{}},
		{"PETH", "WIRE-PETH-1", "00 00 00 00 00 07 00 00 00 00 00 00 0A 0B 00 01",
			&PETH{ProbeID: 7, TxTimestamp: 0x0A0B, FType: 1}, &PETH{}},
		{"ERTH EV probe", "WIRE-ERTH-1", "00 01 00 00 00 00 00 0F 00 00 00 00 00 01 80 01",
			&ERTH{Op: EPEVProbe, PortStatusMask: 0xF, TxTimestamp: 1, TSR: true, FType: 1}, &ERTH{}},
		{"EETH", "WIRE-EETH-1", "00 10 00 00" + strings.Repeat(" 00", 24) + " 02 03 00 00 00 00 00 00",
			&EETH{Op: EPEVProbe, TxTimestamp: 0x0203}, &EETH{}},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.req, func(t *testing.T) {
			b := unhex(t, c.hex)
			if err := c.got.Decode(b); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, c.got); d != "" {
				t.Errorf("decode mismatch (-want +got):\n%s", d)
			}
			if enc := c.want.Append(nil); !bytes.Equal(enc, b) {
				t.Errorf("encode:\n got %x\nwant %x", enc, b)
			}
			if err := c.got.Decode(b[:len(b)-1]); err == nil {
				t.Errorf("decode of %d of %d bytes succeeded", len(b)-1, len(b))
			}
		})
	}
}

// TestBTHVector checks the BTH layout under the default profile (WIRE-BTH-1)
// and under the swapped SE/M order (AMB-4).
func TestBTHVector(t *testing.T) {
	b := unhex(t, "CA A0 FF FF 40 00 01 18 B0 AB CD EF")
	want := BTH{Opcode: OpWriteOnly, SE: true, PadCount: 2, PKey: 0xFFFF, Variant: 0x40, DestQP: 0x118,
		AckReq: true, Retransmit: true, TSPresent: true, PSN: 0xABCDEF}
	var got BTH
	if err := Default.DecodeBTH(b, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("WIRE-BTH-1 decode (-want +got):\n%s", d)
	}
	if enc := Default.AppendBTH(nil, &want); !bytes.Equal(enc, b) {
		t.Errorf("WIRE-BTH-1 encode %x, want %x", enc, b)
	}
	// Reserved bits of byte 8 survive a round trip and are reported (WIRE-BTH-7).
	b[8] |= 0x4F
	if err := Default.DecodeBTH(b, &got); err != nil || got.Rsvd != 0x4F {
		t.Errorf("WIRE-BTH-7: reserved bits decoded as 0x%02x, err %v", got.Rsvd, err)
	}
	if enc := Default.AppendBTH(nil, &got); !bytes.Equal(enc, b) {
		t.Errorf("WIRE-BTH-7: reserved bits lost: %x, want %x", enc, b)
	}
	p := Default.Profile()
	p.BTHFlagOrder = 1
	sw, err := NewCodec(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.DecodeBTH(unhex(t, "CA 80 00 00 00 00 00 00 00 00 00 00"), &got); err != nil || got.SE || !got.M {
		t.Errorf("AMB-4 swapped order: byte 1 0x80 decoded as SE=%v M=%v", got.SE, got.M)
	}
}

func TestOpcodeTable(t *testing.T) {
	// WIRE-OP-1, WIRE-BTH-2: exactly twelve opcodes are MRC.
	n := 0
	for i := 0; i < 256; i++ {
		op := Opcode(i)
		if !op.Valid() {
			if op.Stack() != 0 || !strings.HasPrefix(op.String(), "UNKNOWN(0x") {
				t.Errorf("invalid opcode 0x%02X has stack %b name %s", i, op.Stack(), op)
			}
			continue
		}
		n++
		if op.Stack() == 0 {
			t.Errorf("%s has no header stack", op)
		}
		if op.HasImm() != (op.Stack()&HasImmDt != 0) {
			t.Errorf("%s: HasImm and stack disagree (WIRE-IMM-1)", op)
		}
		if op.IsWrite() != (op.Stack()&HasRETH != 0) {
			t.Errorf("%s: RETH must be in every write and only there (WIRE-RETH-1)", op)
		}
	}
	if n != 12 {
		t.Errorf("%d valid opcodes, want 12", n)
	}
	if s := Opcode(0x07).String(); s != "UNKNOWN(0x07)" {
		t.Errorf("String of 0x07 = %q", s)
	}
}

func TestNACKReasons(t *testing.T) {
	// WIRE-NETH-2: the seven defined codes, nothing else.
	valid := map[NACKReason]string{1: "TRIMMED", 2: "TRIMMED_LASTHOP", 6: "NO_BITMAP", 7: "NO_PKT_BUFFER",
		0xA: "NO_RESOURCE", 0xB: "PSN_OOR_WINDOW", 0x19: "UNEXP_EVENT"}
	for i := 0; i < 256; i++ {
		r := NACKReason(i)
		name, ok := valid[r]
		if r.Valid() != ok || (ok && r.String() != name) {
			t.Errorf("reason 0x%02x: Valid=%v String=%s, want %v %s", i, r.Valid(), r, ok, name)
		}
	}
}

func TestPSNArithmetic(t *testing.T) {
	// WIRE-BTH-4, WIRE-SETH-5: 24-bit serial arithmetic.
	cases := []struct {
		a, b uint32
		diff int32
	}{{5, 3, 2}, {3, 5, -2}, {0, PSNMask, 1}, {PSNMask, 0, -1}, {1 << 23, 0, -(1 << 23)}, {10, 10, 0}}
	for _, c := range cases {
		if d := PSNDiff(c.a, c.b); d != c.diff {
			t.Errorf("PSNDiff(%d,%d)=%d want %d", c.a, c.b, d, c.diff)
		}
	}
	if PSNAdd(PSNMask, 1) != 0 || PSNAdd(0, -1) != PSNMask || !PSNLess(PSNMask, 2) {
		t.Error("PSN wraparound broken")
	}
	s := SETH{CACKPSN: 1, AckPSNOffset: -2, SACKOffset: 100}
	if s.AckPSN() != PSNMask || s.BitmapBase() != 101 {
		t.Errorf("AckPSN=%d BitmapBase=%d", s.AckPSN(), s.BitmapBase())
	}
}
