package statemachine

// Tests written against mutants of evexpand.go that the package's other
// tests let live (scripts/mutate.sh).

import (
	"errors"
	"strings"
	"testing"
)

// TestMutantEVFieldAllOnesInit: an init_val with every bit of its width set
// fits the field and is accepted; one bit wider is EINVAL (CTL-EVX-4).
func TestMutantEVFieldAllOnesInit(t *testing.T) {
	out, n, err := ExpandEV(widths(8), []EVField{fld(8, 0xff, 0, 0, 0)}, EVValue{})
	if err != nil || n != 8 || out[0] != 0xff {
		t.Errorf("init_val 0xff in 8 bits: %x (%d bits), %v; want ff (8 bits)", out[:1], n, err)
	}
	if _, _, err := ExpandEV(widths(16), []EVField{fld(8, 0x1ff, 0, 0, 0)}, EVValue{}); !errors.Is(err, EINVAL) {
		t.Errorf("init_val 0x1ff in 8 bits: %v, want EINVAL", err)
	}
}

// TestMutantEVExpandFullWidth: eight 32-bit fields whose masks take every
// bit expand an EV of all 256 bits to itself (CTL-EVX-1 to CTL-EVX-3); a
// ninth field would pass the 256 bits an EV holds (E2BIG).
func TestMutantEVExpandFullWidth(t *testing.T) {
	var ev EVValue
	for i := range ev {
		ev[i] = byte(0xA5 ^ i)
	}
	f := fld(32, 0, 0, 0, 0xffffffff)
	out, n, err := ExpandEV(widths(32, 32, 32, 32, 32, 32, 32, 32), rep(8, f), ev)
	if err != nil || n != 256 || out != ev {
		t.Errorf("256 EV bits: %x (%d bits), %v; want the EV itself", out, n, err)
	}
	if _, _, err := ExpandEV(widths(32, 32, 32, 32, 32, 32, 32, 32, 32), rep(9, f), ev); !errors.Is(err, E2BIG) {
		t.Errorf("288 EV bits: %v, want E2BIG", err)
	}
}

// TestMutantEVExpandWideFormatField: a 16-bit field in a 64-bit format
// field fills its low 16 bits, the 48 above it zero, and the next field
// follows the 64 (CTL-EVX-3).
func TestMutantEVExpandWideFormatField(t *testing.T) {
	out, n, err := ExpandEV(widths(64, 8), []EVField{fld(16, 0, 0, 0, 0xffff), fld(8, 0x5a, 0, 0, 0)}, evHex("beef"))
	if want := evHex("0000 0000 0000 beef 5a"); err != nil || n != 72 || out != want {
		t.Errorf("expanded %x (%d bits), %v; want %x (72 bits)", out[:9], n, err, want[:9])
	}
}

// TestMutantGenerateEVsBounds: a field whose min_val is its max_val
// generates that one value; ev_count may be every combination, or none
// (CTL-GEN-1, CTL-GEN-2).
func TestMutantGenerateEVsBounds(t *testing.T) {
	evs, err := GenerateEVs([]EVField{fld(8, 0, 7, 7, 0xff), fld(4, 0, 0, 15, 0xf)}, 16, GenFirstFieldFastest)
	if err != nil || len(evs) != 16 || evs[15].Bits(0, 8) != 7 || evs[15].Bits(8, 4) != 15 {
		t.Errorf("min_val = max_val = 7 by 16 values, all 16: %v", err)
	}
	if evs, err := GenerateEVs([]EVField{fld(4, 0, 0, 15, 0xf)}, 0, GenFirstFieldFastest); err != nil || len(evs) != 0 {
		t.Errorf("ev_count 0: %d EVs, %v", len(evs), err)
	}
	// 2048 × 2 combinations: the count past MaxEVs is still exact.
	evs, err = GenerateEVs([]EVField{fld(11, 0, 0, 2047, 0x7ff), fld(1, 0, 0, 1, 1)}, 4096, GenLastFieldFastest)
	if err != nil || len(evs) != 4096 {
		t.Errorf("4096 of 2048 × 2 combinations: %d EVs, %v", len(evs), err)
	}
}

// TestMutantGenFieldSingleValue: a GEN profile's field whose min_val is its
// max_val passes the profile checks; min_val one above max_val is EINVAL
// (CTL-GEN-1, CTL-EVX-4).
func TestMutantGenFieldSingleValue(t *testing.T) {
	if err := checkEVFields(widths(8), []EVField{fld(8, 0, 5, 5, 0xff)}, 0, true); err != nil {
		t.Errorf("min_val 5, max_val 5: %v, want accepted", err)
	}
	if err := checkEVFields(widths(8), []EVField{fld(8, 0, 6, 5, 0xff)}, 0, true); !errors.Is(err, EINVAL) {
		t.Errorf("min_val 6, max_val 5: %v, want EINVAL", err)
	}
}

// TestMutantEVFieldsAtMaxWidth: fields totalling exactly the device's
// ev_max_width are accepted, one bit more is E2BIG (CTL-EVX-4).
func TestMutantEVFieldsAtMaxWidth(t *testing.T) {
	f := []EVField{fld(16, 0, 0, 0, 0xffff), fld(16, 0, 0, 0, 0xffff)}
	if err := checkEVFields(widths(16, 16), f, 32, false); err != nil {
		t.Errorf("32 bits, ev_max_width 32: %v, want accepted", err)
	}
	if err := checkEVFields(widths(16, 16), f, 31, false); !errors.Is(err, E2BIG) {
		t.Errorf("32 bits, ev_max_width 31: %v, want E2BIG", err)
	}
}

// TestMutantGenOrderNames: the two enumeration orders of generated EVs
// print as themselves (CTL-GEN-1, AMB-62).
func TestMutantGenOrderNames(t *testing.T) {
	if a, b := GenFirstFieldFastest.String(), GenLastFieldFastest.String(); a != "first-field-fastest" || b != "last-field-fastest" {
		t.Errorf("orders print as %q and %q", a, b)
	}
}

// TestMutantEVExpandTooWide: two 32-bit fields in format fields of 200 bits
// each would expand past the 256 bits an EV holds: E2BIG, and the message
// names that limit (CTL-EVX-3, CTL-EVX-4). So does the message for masks
// taking 288 EV bits.
func TestMutantEVExpandTooWide(t *testing.T) {
	_, _, err := ExpandEV(widths(200, 200), rep(2, fld(32, 1, 0, 0, 0)), EVValue{})
	if !errors.Is(err, E2BIG) || !strings.Contains(err.Error(), "exceeds 256 bits") {
		t.Errorf("400 expanded bits: %v, want E2BIG naming 256 bits", err)
	}
	_, _, err = ExpandEV(widths(32, 32, 32, 32, 32, 32, 32, 32, 32), rep(9, fld(32, 0, 0, 0, 0xffffffff)), EVValue{})
	if !errors.Is(err, E2BIG) || !strings.Contains(err.Error(), "an EV holds 256") {
		t.Errorf("288 EV bits: %v, want E2BIG naming 256 bits", err)
	}
}

// TestMutantEVStrayBitInByte: an EV with a bit set beyond those the masks
// take is invalid wherever that bit falls, here inside the first byte,
// below its most significant bit (CTL-EVX-5).
func TestMutantEVStrayBitInByte(t *testing.T) {
	if _, _, err := ExpandEV(widths(8), []EVField{fld(8, 0, 0, 0, 0xf0)}, evHex("04")); !errors.Is(err, EINVAL) {
		t.Errorf("bit 5 set, masks take bits 0 to 3: %v, want EINVAL", err)
	}
}
