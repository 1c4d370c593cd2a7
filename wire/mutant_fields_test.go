package wire

// Tests written against mutants of fields.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"testing"

	"github.com/openmrc/mrc/spec"
)

// TestMutantHeaderByName: Header finds each described header by its own
// name, and no header by a name none has.
func TestMutantHeaderByName(t *testing.T) {
	for _, name := range []string{"BTH", "RETH", "SETH"} {
		if h, ok := Default.Header(name); !ok || h.Name != name {
			t.Errorf("Header(%q): %q, %v", name, h.Name, ok)
		}
	}
	if h, ok := Default.Header("no such header"); ok {
		t.Errorf("Header of an unknown name: %q", h.Name)
	}
}

// TestMutantSwappedFlagBits (AMB-4): with the SE and M bits swapped, the
// BTH description places M at bit 8 and SE at bit 9, in wire order.
func TestMutantSwappedFlagBits(t *testing.T) {
	p := spec.DefaultProfile()
	p.BTHFlagOrder = spec.BTHFlagOrderSwapped
	c, err := NewCodec(p)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := c.Header("BTH")
	if !ok || len(h.Fields) < 3 {
		t.Fatalf("Header(BTH): %v, %d fields", ok, len(h.Fields))
	}
	for i, want := range []Field{fld("m", 8, 1), fld("se", 9, 1)} {
		if got := h.Fields[1+i]; got.Name != want.Name || got.Bit != want.Bit {
			t.Errorf("BTH field %d: %s at bit %d, want %s at bit %d", 1+i, got.Name, got.Bit, want.Name, want.Bit)
		}
	}
}
