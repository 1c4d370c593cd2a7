package statemachine

import (
	"errors"
	"testing"
)

// ibvQPAttrMask is enum ibv_qp_attr_mask of rdma-core's verbs.h: the value
// of each verbs attribute in mrc_modify_qp's vattr_mask.
var ibvQPAttrMask = []struct {
	m   AttrMask
	ibv uint32
}{
	{AttrEnSQDAsyncNotify, 1 << 2}, {AttrAccessFlags, 1 << 3}, {AttrPKeyIndex, 1 << 4}, {AttrVerbsPort, 1 << 5},
	{AttrAV, 1 << 7}, {AttrPathMTU, 1 << 8}, {AttrVerbsTimeout, 1 << 9}, {AttrVerbsRetryCnt, 1 << 10},
	{AttrVerbsRNRRetry, 1 << 11}, {AttrRQPSN, 1 << 12}, {AttrVerbsMaxQPRdAtomic, 1 << 13}, {AttrVerbsAltPath, 1 << 14},
	{AttrVerbsMinRNRTimer, 1 << 15}, {AttrSQPSN, 1 << 16}, {AttrVerbsMaxDestRdAtomic, 1 << 17},
	{AttrVerbsPathMigState, 1 << 18}, {AttrDestQPN, 1 << 20},
}

// TestMutantAttrVerbsBits: an AttrMask is mrc_modify_qp's two masks in one
// word, mrc_attr_mask (enum mrc_qp_attr_mask) in the low 32 bits and
// vattr_mask (enum ibv_qp_attr_mask) in the high 32, so each verbs
// attribute of QP-ST-6 and QP-ST-7 is its verbs.h value shifted up and
// shares no bit with an MRC attribute.
func TestMutantAttrVerbsBits(t *testing.T) {
	for _, v := range ibvQPAttrMask {
		if uint32(v.m>>32) != v.ibv || uint32(v.m) != 0 {
			t.Errorf("%s = %#x: want vattr_mask %#x in the high word and nothing in the low one", v.m, uint64(v.m), v.ibv)
		}
	}
}

// TestMutantAttrMaskString: a mask names each attribute it holds and only
// those, as the errors of mrc_modify_qp name them (QP-ST-3, QP-ST-7).
func TestMutantAttrMaskString(t *testing.T) {
	for m, want := range map[AttrMask]string{0: "0", AttrMPR: "MPR", AttrMPR | AttrAV: "MPR|AV",
		AttrVerbsPort | AttrVendorCfg: "IBV_QP_PORT|VENDOR_CFG"} {
		if got := m.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint64(m), got, want)
		}
	}
}

// TestMutantAttrLimits: the values at the ends of each range QP-ATTR-1 and
// QP-ATTR-3 give are taken, the next ones fail naming the attribute:
// max_wimm and max_wimm_dest from 1 to the device's limits, a timeout of
// 24, cap bits below 1 << 3, path MTUs from 256 to 4096 (WIRE-PAY-1), and
// 24-bit PSNs and a 24-bit QPN above the endpoint's 2 (WIRE-BTH-8).
func TestMutantAttrLimits(t *testing.T) {
	const max24 = 1<<24 - 1
	for _, tc := range []struct {
		name string
		set  func(*Attr)
		bad  AttrMask // 0: taken
	}{
		{"max_wimm 1", func(a *Attr) { a.MaxWIMM = 1 }, 0},
		{"max_wimm_dest 1", func(a *Attr) { a.MaxWIMMDest = 1 }, 0},
		{"max_wimm at the device's", func(a *Attr) { a.MaxWIMM = 1024 }, 0},
		{"max_wimm_dest at the device's", func(a *Attr) { a.MaxWIMMDest = 1024 }, 0},
		{"max_wimm above the device's", func(a *Attr) { a.MaxWIMM = 1025 }, AttrMaxWIMM},
		{"max_wimm_dest above the device's", func(a *Attr) { a.MaxWIMMDest = 1025 }, AttrMaxWIMMDest},
		{"timeout 24", func(a *Attr) { a.Timeout = MaxTimeout }, 0},
		{"timeout 25", func(a *Attr) { a.Timeout = MaxTimeout + 1 }, AttrTimeout},
		{"cap 1 << 3", func(a *Attr) { a.Cap = 1 << 3 }, AttrCap},
		{"path MTU 256", func(a *Attr) { a.PathMTU = 256 }, 0},
		{"path MTU 4096", func(a *Attr) { a.PathMTU = 4096 }, 0},
		{"path MTU 8192", func(a *Attr) { a.PathMTU = 8192 }, AttrPathMTU},
		{"dest QPN 3", func(a *Attr) { a.DestQPN = 3 }, 0},
		{"dest QPN 2, the endpoint's", func(a *Attr) { a.DestQPN = 2 }, AttrDestQPN},
		{"dest QPN 2^24 - 1", func(a *Attr) { a.DestQPN = max24 }, 0},
		{"RQ PSN 2^24 - 1", func(a *Attr) { a.RQPSN = max24 }, 0},
		{"SQ PSN 2^24 - 1", func(a *Attr) { a.SQPSN = max24 }, 0},
		{"dest QPN 2^24", func(a *Attr) { a.DestQPN = max24 + 1 }, AttrDestQPN},
		{"RQ PSN 2^24", func(a *Attr) { a.RQPSN = max24 + 1 }, AttrRQPSN},
		{"SQ PSN 2^24", func(a *Attr) { a.SQPSN = max24 + 1 }, AttrSQPSN},
	} {
		q, err := testConfig(qpnA).new()
		if err != nil {
			t.Fatal(err)
		}
		a := testAttr(qpnB)
		tc.set(&a)
		var out Output
		err = q.BringUp(0, a, &out)
		var ae *AttrError
		switch {
		case tc.bad == 0 && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.bad != 0 && (!errors.As(err, &ae) || ae.Attr != tc.bad || !errors.Is(err, ErrInvalidAttr)):
			t.Errorf("%s: %v, want ErrInvalidAttr naming %s", tc.name, err, tc.bad)
		}
	}
}

// TestMutantAttrBringUpVendorCfg: BringUp gives vendor_cfg with the move
// to INIT, the first transition that may take it (CTL-QPH-3), so a QP left
// in INIT by a refused RTR holds it.
func TestMutantAttrBringUpVendorCfg(t *testing.T) {
	q, err := testConfig(qpnA).new()
	if err != nil {
		t.Fatal(err)
	}
	a := testAttr(qpnB)
	a.VendorCfg[0], a.PathMTU = 5, 100
	var out Output
	if err := q.BringUp(0, a, &out); !errors.Is(err, ErrInvalidAttr) {
		t.Fatalf("BringUp with path MTU 100: %v, want ErrInvalidAttr", err)
	}
	got, mask := q.Attr()
	if q.State() != StateInit || got.VendorCfg[0] != 5 || mask&AttrVendorCfg == 0 {
		t.Errorf("%s, vendor_cfg[0] %d, mask %s: want INIT holding vendor_cfg", q.State(), got.VendorCfg[0], mask)
	}
}
