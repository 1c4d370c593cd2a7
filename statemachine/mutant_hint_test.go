package statemachine

import (
	"errors"
	"testing"
)

// TestMutantQPHintHandlesAndMask: CTL-QPH-1's hint objects. Handles start
// at 1 and count up (0 is NULL); Modify copies vendor_cfg only when the mask
// names it (CTL-QPH-3 keeps it for query); a Release without a Use does not
// make the count negative, so one Use still makes Destroy EBUSY.
func TestMutantQPHintHandlesAndMask(t *testing.T) {
	h := NewQPHints(4)
	a, err := h.Create(QPHintAttr{VendorCfg: [VendorCfgSize]byte{1, 2}})
	b, err2 := h.Create(QPHintAttr{})
	if err != nil || err2 != nil || a != 1 || b != 2 {
		t.Fatalf("handles %d, %d (%v, %v), want 1 and 2", a, b, err, err2)
	}
	if err := h.Modify(a, QPHintAttr{NumSendPeers: 3, VendorCfg: [VendorCfgSize]byte{9}}, HintNumSendPeers); err != nil {
		t.Fatal(err)
	}
	if q, _ := h.Query(a); q.VendorCfg != [VendorCfgSize]byte{1, 2} || q.NumSendPeers != 3 {
		t.Errorf("vendor_cfg not in the mask changed: %+v", q)
	}
	if err := h.Modify(a, QPHintAttr{VendorCfg: [VendorCfgSize]byte{9}}, HintVendorCfg); err != nil {
		t.Fatal(err)
	}
	if q, _ := h.Query(a); q.VendorCfg != [VendorCfgSize]byte{9} {
		t.Errorf("vendor_cfg in the mask not copied: %+v", q)
	}
	h.Release(b)
	if err := h.Use(b); err != nil {
		t.Fatal(err)
	}
	if err := h.Destroy(b); !errors.Is(err, EBUSY) {
		t.Errorf("destroy of a used hint after a Release without Use: %v, want EBUSY", err)
	}
}
