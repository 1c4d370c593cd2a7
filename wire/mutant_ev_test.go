package wire

// Tests written against mutants of ev.go, headers.go and icrc.go that the
// package's other tests let live (scripts/mutate.sh; modelcheck/README
// "Mutation testing").

import (
	"strings"
	"testing"
)

// TestMutantUSIDContainerFull (WIRE-EV-4): a container holds 6 uSIDs
// after its 32-bit locator: 6 are built and read back, all of them, and 7
// are refused.
func TestMutantUSIDContainerFull(t *testing.T) {
	us := []uint16{1, 2, 3, 4, 5, 6}
	a, err := NewUSIDAddr(0xfc000000, us...)
	if err != nil {
		t.Fatalf("6 uSIDs: %v", err)
	}
	if got := a.USIDs(); len(got) != 6 || got[5] != 6 {
		t.Errorf("6 uSIDs read back as %v", got)
	}
	if _, err := NewUSIDAddr(0xfc000000, append(us, 7)...); err == nil {
		t.Error("7 uSIDs: no error")
	}
}

// TestMutantSRv6TemplateBounds (WIRE-EV-4): a template of 6 uSIDs gives a
// path with its T1 hop first or last; a T1 index past the last uSID or
// below 0, or a seventh uSID, is refused.
func TestMutantSRv6TemplateBounds(t *testing.T) {
	tpl := SRv6Template{Locator: 0xfc000000, USIDs: []uint16{0x10, 0x20, 0x30, 0x40, 0x50, 0x60}}
	for _, i := range []int{0, 5} {
		tpl.T1Index = i
		if a, err := tpl.Path(0); err != nil || len(a.USIDs()) != 6 {
			t.Errorf("T1 index %d of 6 uSIDs: %v, %v", i, a.USIDs(), err)
		}
	}
	for _, i := range []int{-1, 6} {
		tpl.T1Index = i
		if _, err := tpl.Path(0); err == nil {
			t.Errorf("T1 index %d of 6 uSIDs: no error", i)
		}
	}
	tpl.T1Index, tpl.USIDs = 0, append(tpl.USIDs, 0x70)
	if _, err := tpl.Path(0); err == nil {
		t.Error("7 uSIDs: no error")
	}
}

// TestMutantSETHDecodeShort (WIRE-SETH-1): a SETH cut short is reported
// with the bytes a SETH and its CC_STATE need, 36.
func TestMutantSETHDecodeShort(t *testing.T) {
	var h SETH
	err := h.Decode(make([]byte, SETHLen+CCStateLen-1))
	if err == nil || !strings.Contains(err.Error(), "need 36 bytes, have 35") {
		t.Errorf("35 bytes: %v, want need 36 bytes, have 35", err)
	}
}

// TestMutantExpandEVFullWidth (WIRE-EV-11, WIRE-EV-12): fields may total
// exactly 64 bits, one 64-bit field or two of 32.
func TestMutantExpandEVFullWidth(t *testing.T) {
	for _, c := range []struct {
		fields []EVField
		g      uint64
		want   uint64
	}{
		{[]EVField{{Width: 64, Init: 0x0123456789abcdef}}, 0, 0x0123456789abcdef},
		{[]EVField{{Width: 32, Init: 0x01234567}, {Width: 32, Init: 0x89abcdef, Mask: 1}}, 0, 0x0123456789abcdee},
	} {
		got, err := ExpandEV(c.fields, c.g)
		if err != nil || got != c.want {
			t.Errorf("ExpandEV(%+v, %d): %#x, %v; want %#x", c.fields, c.g, got, err, c.want)
		}
	}
}

// TestMutantExpandEVBitsPastWidth (WIRE-EV-11): Init and Mask bits at or
// past a field's width are not part of the field: they neither appear in
// the EV nor take generated bits.
func TestMutantExpandEVBitsPastWidth(t *testing.T) {
	fields := []EVField{{Width: 4, Init: 0xf4, Mask: 0xf1}, {Width: 4, Init: 0x30}}
	got, err := ExpandEV(fields, 1)
	if err != nil || got != 0x50 {
		t.Errorf("ExpandEV(%+v, 1): %#x, %v; want 0x50", fields, got, err)
	}
}
