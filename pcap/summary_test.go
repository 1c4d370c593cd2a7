package pcap

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestSummaryFieldsInWireTable: every pair of the one-line summary that
// reads a header field names a field of wire's table for that header, so
// that the summary cannot drift from the codec (a wrong name would print
// "?").
func TestSummaryFieldsInWireTable(t *testing.T) {
	for _, s := range summary {
		h, ok := wire.Default.Header(s.header)
		if !ok {
			t.Errorf("summary header %s is not in wire's table", s.header)
			continue
		}
		keys := FieldKeys(&h)
		for _, f := range s.fields {
			n := 0
			for _, x := range []bool{f.field != "", f.num != nil, f.text != nil} {
				if x {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s %s: want exactly one of field, num and text", s.header, f.key)
			}
			if f.field == "" {
				continue
			}
			found := false
			for _, k := range keys {
				found = found || k == f.field
			}
			if !found {
				t.Errorf("%s %s: field %q is not in wire's table (%v)", s.header, f.key, f.field, keys)
			}
		}
	}
}
