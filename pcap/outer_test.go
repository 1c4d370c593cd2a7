package pcap

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestLinkViewsCoverWire: every link header wire describes has a view,
// and every field a view names (its ends, hidden and renamed fields) is
// one of the header's in wire, so a renamed field in wire cannot silently
// reappear in, or drop out of, the -V tree and JSON.
func TestLinkViewsCoverWire(t *testing.T) {
	hs := wire.LinkHeaders()
	for _, h := range hs {
		n := 0
		for _, v := range linkViews {
			if v.header == h.Name {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d views, want 1", h.Name, n)
		}
	}
	for _, v := range linkViews {
		var h *wire.Header
		for i := range hs {
			if hs[i].Name == v.header {
				h = &hs[i]
			}
		}
		if h == nil {
			t.Errorf("view of %s: wire has no such link header", v.header)
			continue
		}
		names := append(append(append([]string{}, v.treeHide...), v.jsonHide...), v.treeName[0])
		if v.ends != [2]string{} {
			names = append(names, v.ends[:]...)
		}
		for _, name := range names {
			if name == "" {
				continue
			}
			found := false
			for _, f := range h.Fields {
				found = found || f.Name == name
			}
			if !found {
				t.Errorf("view of %s names field %q, which wire does not describe", v.header, name)
			}
		}
	}
}
