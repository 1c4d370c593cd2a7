package wire

// Tests written against mutants of fields.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import "testing"

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
