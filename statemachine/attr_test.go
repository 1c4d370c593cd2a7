package statemachine

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestVerbsAttributesRejected: mrc_modify_qp refuses, on every
// transition, each verbs attribute an MRC QP does not have, naming it
// (QP-ST-7).
func TestVerbsAttributesRejected(t *testing.T) {
	a := testAttr(qpnB)
	steps := []struct {
		to   QPState
		mask AttrMask
	}{{StateInit, MaskInit}, {StateRTR, MaskRTR}, {StateRTS, MaskRTS}}
	for _, bit := range []AttrMask{AttrVerbsPort, AttrVerbsTimeout, AttrVerbsRetryCnt, AttrVerbsRNRRetry, AttrVerbsMinRNRTimer,
		AttrVerbsMaxQPRdAtomic, AttrVerbsMaxDestRdAtomic, AttrVerbsAltPath, AttrVerbsPathMigState} {
		for i, st := range steps {
			q, err := testConfig(qpnA).new()
			if err != nil {
				t.Fatal(err)
			}
			var out Output
			for _, prev := range steps[:i] {
				if err := q.Modify(0, prev.to, a, prev.mask, &out); err != nil {
					t.Fatal(err)
				}
			}
			err = q.Modify(0, st.to, a, st.mask|bit, &out)
			var ae *AttrError
			if !errors.As(err, &ae) || !errors.Is(err, ErrInvalidAttr) || ae.Attr != bit || !strings.Contains(err.Error(), "IBV_QP_") {
				t.Errorf("%s with %s: %v", st.to, bit, err)
			}
			if q.State() == st.to {
				t.Errorf("%s with %s: the transition happened", st.to, bit)
			}
		}
	}
}

// TestProtocolVersion: protocol_version requests exactly one version bit
// or 0 (the default, version 1); version 1 is the only one (QP-ATTR-4).
func TestProtocolVersion(t *testing.T) {
	for _, tc := range []struct {
		v  uint32
		ok bool
	}{{0, true}, {ProtocolVersion1, true}, {1<<0 | 1<<1, false}, {1 << 1, false}, {1 << 31, false}} {
		c := testConfig(qpnA)
		c.ProtocolVersion = tc.v
		_, err := c.new()
		var ce *ConfigError
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &ce) || ce.Field != "ProtocolVersion")) {
			t.Errorf("protocol_version %#x: %v", tc.v, err)
		}
	}
}

// TestPeerAgreementBeforeRTR: what the peers agree out of band (WriteIMM
// limit, MPR, dynamic MPR and trim-NACK support in the cap bits) is set
// before RTR, without which the QP cannot become a responder, and
// bringing a QP up sends nothing: MRC has no connection setup packets
// (QP-ATTR-2).
func TestPeerAgreementBeforeRTR(t *testing.T) {
	for _, m := range []AttrMask{AttrMaxWIMMDest, AttrMPRDest, AttrCap} {
		q, _ := testConfig(qpnA).new()
		var out Output
		if err := q.Modify(0, StateInit, testAttr(qpnB), MaskInit, &out); err != nil {
			t.Fatal(err)
		}
		err := q.Modify(0, StateRTR, testAttr(qpnB), MaskRTR&^m, &out)
		if !errors.Is(err, ErrMissingAttr) || q.State() != StateInit {
			t.Errorf("RTR without %s: %v (state %s)", m, err, q.State())
		}
	}
	q, _ := testConfig(qpnA).new()
	var out Output
	out.TracePackets = true
	if err := q.BringUp(0, testAttr(qpnB), &out); err != nil {
		t.Fatal(err)
	}
	q.Advance(Second, &out)
	if len(out.Packets) != 0 {
		t.Errorf("bring-up and an idle second sent %d packets", len(out.Packets))
	}
}

// TestSourceGID: with a GID table, the QP's source address is the RoCEv2
// entry its AV names; RoCEv1 and IB entries, bad indexes and a source
// address that contradicts the entry are refused, and so is a GID index
// on a device without a table, which nothing would read (QP-ST-8).
func TestSourceGID(t *testing.T) {
	c := testConfig(qpnA)
	v2 := c.Addr.SrcIP
	c.Device.GIDs = []GID{{IP: netip.MustParseAddr("fe80::1"), Type: GIDRoCEv1}, {IP: v2, Type: GIDRoCEv2}, {Type: GIDIB}}
	n, err := NewNode(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	addr := c.Addr
	addr.SrcIP, addr.SGIDIndex = netip.Addr{}, 1
	q, err := n.NewQP(QPConfig{QPN: 0x40, Seed: 1, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	if err := q.BringUp(0, testAttr(qpnB), &out); err != nil {
		t.Fatal(err)
	}
	if err := q.Post(0, WorkRequest{WRID: 1, Opcode: OpWrite, RemoteVA: baseVA, RKey: 1, Data: make([]byte, 64)}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Packets) != 1 || netip.AddrFrom4(out.Packets[0].Pkt.IP4.Src) != v2 {
		t.Fatalf("packets %d, want one from %v", len(out.Packets), v2)
	}
	for _, tc := range []struct {
		idx   int
		src   netip.Addr
		field string
	}{{0, netip.Addr{}, "Addr.SGIDIndex"}, {2, netip.Addr{}, "Addr.SGIDIndex"}, {3, netip.Addr{}, "Addr.SGIDIndex"},
		{-1, netip.Addr{}, "Addr.SGIDIndex"}, {1, netip.MustParseAddr("10.9.9.9"), "Addr.SrcIP"}} {
		a := addr
		a.SGIDIndex, a.SrcIP = tc.idx, tc.src
		_, err := n.NewQP(QPConfig{QPN: 0x41, Seed: 1, Addr: a})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("GID index %d, source %v: %v", tc.idx, tc.src, err)
		}
	}
	c = testConfig(qpnA)
	c.Addr.SGIDIndex = 1
	var ce *ConfigError
	if _, err := c.new(); !errors.As(err, &ce) || ce.Field != "Addr.SGIDIndex" {
		t.Errorf("GID index 1 without a GID table: %v, want a ConfigError on Addr.SGIDIndex", err)
	}
}
