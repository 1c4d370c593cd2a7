package statemachine

import (
	"errors"
	"slices"
	"testing"
)

func TestQPHints(t *testing.T) {
	// CTL-QPH-1: the hint object's lifecycle and limits.
	h := NewQPHints(2)
	a, err := h.Create(QPHintAttr{NumQPsPerPeer: 2, NumSendPeers: 8})
	if err != nil || a == 0 {
		t.Fatalf("create: %d %v", a, err)
	}
	if _, err := h.Create(QPHintAttr{NumSendPeers: -1}); !errors.Is(err, EINVAL) {
		t.Errorf("negative count: %v", err)
	}
	b, _ := h.Create(QPHintAttr{})
	if _, err := h.Create(QPHintAttr{}); !errors.Is(err, E2BIG) {
		t.Errorf("third hint of max 2: %v", err)
	}
	if err := h.Modify(a, QPHintAttr{NumRemoteRecvPeers: 5, NumQPsPerPeer: 99}, HintNumRemoteRecvPeers); err != nil {
		t.Fatal(err)
	}
	if q, _ := h.Query(a); q.NumQPsPerPeer != 2 || q.NumRemoteRecvPeers != 5 || q.NumSendPeers != 8 {
		t.Errorf("after modify: %+v", q)
	}
	if err := h.Use(a); err != nil || !errors.Is(h.Destroy(a), EBUSY) {
		t.Errorf("destroy while used: %v", h.Destroy(a))
	}
	h.Release(a)
	if err := h.Destroy(a); err != nil || h.Use(a) == nil || h.Destroy(b) != nil || h.Use(0) != nil {
		t.Errorf("destroy after release: %v", err)
	}
}

func TestHintsAndVendorCfgChangeNothing(t *testing.T) {
	// CTL-QPH-2, CTL-QPH-3: a QP with a hint and vendor_cfg sends exactly
	// what one without sends, and keeps both for query.
	trace := func(hint uint32, vc byte) ([]string, Attr) {
		aa, ab := testAttr(qpnB), testAttr(qpnA)
		aa.Hint, aa.VendorCfg[0] = hint, vc
		s := newSim(t, testConfig(qpnA), testConfig(qpnB), aa, ab)
		s.quiet = true
		var pk []string
		s.tap = func(o *Outgoing) { pk = append(pk, pktString(&o.Pkt)) }
		for i := 0; i < 6; i++ {
			s.write(0, uint64(i), i*4096, 3000, i%2 == 1)
		}
		s.run(Never)
		at, _ := s.qp[0].Attr()
		return pk, at
	}
	base, _ := trace(0, 0)
	hinted, attr := trace(7, 0xA5)
	if !slices.Equal(base, hinted) || len(base) == 0 {
		t.Errorf("a hint or vendor_cfg changed the packets (%d vs %d)", len(base), len(hinted))
	}
	if attr.Hint != 7 || attr.VendorCfg[0] != 0xA5 {
		t.Errorf("query: hint %d vendor_cfg[0] %#x", attr.Hint, attr.VendorCfg[0])
	}
}

func TestDeviceCaps(t *testing.T) {
	// CTL-DEV-3, CTL-SVC-1: MRC_QP_CAP_DYNAMIC_MPR needs the device cap;
	// service time is in use only with the device cap and without
	// MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED; a device without TRIM_NACK
	// sends no trim NACKs.
	cfg := testConfig(qpnA)
	cfg.Device.CapMissing = DevCapDynamicMPR | DevCapSvcTime
	q, err := cfg.new()
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	a := testAttr(qpnB)
	a.Cap = CapDynamicMPR
	if err := q.BringUp(0, a, &out); !errors.Is(err, ErrInvalidAttr) {
		t.Errorf("dynamic MPR on a device without it: %v", err)
	}
	q, _ = cfg.new()
	a.Cap = 0
	if err := q.BringUp(0, a, &out); err != nil || q.ServiceTime() {
		t.Errorf("bring-up %v, service time %v on a device without SVC_TIME", err, q.ServiceTime())
	}
	for _, c := range []struct {
		cap  QPCap
		want bool
	}{{0, true}, {CapSvcTimeDestUnsupported, false}} {
		q, _ := testConfig(qpnA).new()
		a.Cap = c.cap
		if err := q.BringUp(0, a, &out); err != nil || q.ServiceTime() != c.want {
			t.Errorf("cap %#x: service time %v, want %v (%v)", c.cap, q.ServiceTime(), c.want, err)
		}
	}
	cfg = testConfig(qpnA)
	cfg.Device.CapMissing = DevCapTrimNACK
	n, err := NewNode(cfg.Config)
	if err != nil || !n.nd.cfg.Device.NoTrimNACK {
		t.Errorf("no TRIM_NACK device cap: NoTrimNACK %v (%v)", err == nil && n.nd.cfg.Device.NoTrimNACK, err)
	}
	cfg.Device.CapMissing = 8
	if _, err := NewNode(cfg.Config); err == nil {
		t.Error("an unknown device cap bit accepted")
	}
}
