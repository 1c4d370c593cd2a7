package statemachine

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBringUp walks RESET → INIT → RTR → RTS with the attributes each
// transition requires (QP-ST-1, QP-ST-3, QP-ST-4, QP-ST-5, QP-ST-6).
func TestBringUp(t *testing.T) {
	q, err := testConfig(qpnA).new()
	if err != nil {
		t.Fatal(err)
	}
	if q.State() != StateReset {
		t.Fatalf("new QP in %s, want RESET (QP-ST-1)", q.State())
	}
	var out Output
	if err := q.BringUp(0, testAttr(qpnB), &out); err != nil {
		t.Fatal(err)
	}
	var got []QPState
	for _, e := range out.Events {
		if e.Kind == EvQPState {
			got = append(got, QPState(e.To))
		}
	}
	if d := cmp.Diff([]QPState{StateInit, StateRTR, StateRTS}, got); d != "" {
		t.Error(d)
	}
}

// TestModifyRejects checks transitions QP-ST-2 forbids, required
// attributes (QP-ST-3 to QP-ST-6), attributes a transition does not take
// (QP-SM-1) and unknown profiles.
func TestModifyRejects(t *testing.T) {
	a := testAttr(qpnB)
	cases := []struct {
		name  string
		setup []QPState // transitions done first, with their full masks
		to    QPState
		mask  AttrMask
		attr  func(*Attr)
		err   error
		which AttrMask
	}{
		{"RESET to RTR", nil, StateRTR, MaskRTR, nil, ErrInvalidTransition, 0},
		{"RESET to RTS", nil, StateRTS, MaskRTS, nil, ErrInvalidTransition, 0},
		{"INIT to RTS", []QPState{StateInit}, StateRTS, MaskRTS, nil, ErrInvalidTransition, 0},
		{"RTS to RTS", []QPState{StateInit, StateRTR, StateRTS}, StateRTS, AttrTimeout, nil, ErrInvalidTransition, 0},
		{"INIT without EV profile", nil, StateInit, MaskInit &^ AttrEVProfileID, nil, ErrMissingAttr, AttrEVProfileID},
		{"INIT without hint", nil, StateInit, MaskInit &^ AttrQPHint, nil, ErrMissingAttr, AttrQPHint},
		{"RTR without MPR_DEST", []QPState{StateInit}, StateRTR, MaskRTR &^ AttrMPRDest, nil, ErrMissingAttr, AttrMPRDest},
		{"RTR without CAP", []QPState{StateInit}, StateRTR, MaskRTR &^ AttrCap, nil, ErrMissingAttr, AttrCap},
		{"RTR without RQ_PSN", []QPState{StateInit}, StateRTR, MaskRTR &^ AttrRQPSN, nil, ErrMissingAttr, AttrRQPSN},
		{"RTS without timeout", []QPState{StateInit, StateRTR}, StateRTS, MaskRTS &^ AttrTimeout, nil, ErrMissingAttr, AttrTimeout},
		{"RTS without retry", []QPState{StateInit, StateRTR}, StateRTS, MaskRTS &^ AttrRetryCnt, nil, ErrMissingAttr, AttrRetryCnt},
		{"INIT with MPR", nil, StateInit, MaskInit | AttrMPR, nil, ErrInvalidAttr, AttrMPR},
		{"unknown EV profile", nil, StateInit, MaskInit, func(a *Attr) { a.EVProfileID = 99 }, ErrUnknownProfile, AttrEVProfileID},
		{"unknown CC profile", nil, StateInit, MaskInit, func(a *Attr) { a.CCProfileID = 99 }, ErrUnknownProfile, AttrCCProfileID},
	}
	masks := map[QPState]AttrMask{StateInit: MaskInit, StateRTR: MaskRTR, StateRTS: MaskRTS}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, _ := testConfig(qpnA).new()
			var out Output
			for _, s := range c.setup {
				if err := q.Modify(0, s, a, masks[s], &out); err != nil {
					t.Fatal(err)
				}
			}
			before := q.State()
			aa := a
			if c.attr != nil {
				c.attr(&aa)
			}
			err := q.Modify(0, c.to, aa, c.mask, &out)
			wantErr(t, err, c.err)
			var ae *AttrError
			if !errors.As(err, &ae) || ae.Attr != c.which || ae.From != before || ae.To != c.to {
				t.Errorf("error %#v: want *AttrError naming %s", err, c.which)
			}
			if q.State() != before {
				t.Errorf("state %s after a rejected modify, want %s", q.State(), before)
			}
		})
	}
}

// TestModifyAttrLimits: mrc_modify_qp enforces the limits of struct
// mrc_qp_attr (QP-ATTR-1, MPR-WIN-3, LR-TMR-1) and the verbs
// ranges.
func TestModifyAttrLimits(t *testing.T) {
	cases := []struct {
		name string
		to   QPState
		f    func(*Attr)
		c    func(*testCfg)
		m    AttrMask
	}{
		{"MPR 0", StateRTS, func(a *Attr) { a.MPR = 0 }, nil, AttrMPR},
		{"MPR above device", StateRTS, func(a *Attr) { a.MPR = 9 }, func(c *testCfg) { c.Device.MaxMPR = 8 }, AttrMPR},
		{"MPR off resolution", StateRTS, func(a *Attr) { a.MPR = 3 }, func(c *testCfg) { c.Device.MPRResolution = 2 }, AttrMPR},
		{"MPR_DEST 0", StateRTR, func(a *Attr) { a.MPRDest = 0 }, nil, AttrMPRDest},
		{"max_wimm 0", StateRTS, func(a *Attr) { a.MaxWIMM = 0 }, nil, AttrMaxWIMM},
		{"max_wimm above device", StateRTS, func(a *Attr) { a.MaxWIMM = 20 }, func(c *testCfg) { c.Device.MaxWIMM = 16 }, AttrMaxWIMM},
		{"max_wimm_dest above device", StateRTR, func(a *Attr) { a.MaxWIMMDest = 20 }, func(c *testCfg) { c.Device.MaxWIMMDest = 16 }, AttrMaxWIMMDest},
		{"timeout 25", StateRTS, func(a *Attr) { a.Timeout = 25 }, nil, AttrTimeout},
		{"linear_cnt 8", StateRTS, func(a *Attr) { a.Retry.LinearCnt = 8 }, nil, AttrRetryCnt},
		{"exp_cnt 26", StateRTS, func(a *Attr) { a.Retry.ExpCnt = 26 }, nil, AttrRetryCnt},
		{"path MTU 1000", StateRTR, func(a *Attr) { a.PathMTU = 1000 }, nil, AttrPathMTU},
		{"path MTU 8192", StateRTR, func(a *Attr) { a.PathMTU = 8192 }, nil, AttrPathMTU},
		{"dest QPN 2", StateRTR, func(a *Attr) { a.DestQPN = 2 }, nil, AttrDestQPN},
		{"RQ PSN 2^24", StateRTR, func(a *Attr) { a.RQPSN = 1 << 24 }, nil, AttrRQPSN},
		{"SQ PSN 2^24", StateRTS, func(a *Attr) { a.SQPSN = 1 << 24 }, nil, AttrSQPSN},
		{"unknown cap bit", StateRTR, func(a *Attr) { a.Cap = 1 << 5 }, nil, AttrCap},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(qpnA)
			if c.c != nil {
				c.c(&cfg)
			}
			q, err := cfg.new()
			if err != nil {
				t.Fatal(err)
			}
			a := testAttr(qpnB)
			a.MPRDest = 2 // a multiple of every resolution used here
			var out Output
			steps := []struct {
				s QPState
				m AttrMask
			}{{StateInit, MaskInit}, {StateRTR, MaskRTR}, {StateRTS, MaskRTS}}
			for _, s := range steps {
				if s.s == c.to {
					break
				}
				if err := q.Modify(0, s.s, a, s.m, &out); err != nil {
					t.Fatal(err)
				}
			}
			c.f(&a)
			m := map[QPState]AttrMask{StateRTR: MaskRTR, StateRTS: MaskRTS}[c.to]
			err = q.Modify(0, c.to, a, m, &out)
			wantErr(t, err, ErrInvalidAttr)
			if ae := new(AttrError); !errors.As(err, &ae) || ae.Attr != c.m {
				t.Errorf("error %v does not name %s", err, c.m)
			}
		})
	}
}

// TestPostRejectsOtherOpcodes: only RDMA WRITE and WRITE WITH IMM are
// accepted; nothing is sent for the others (REQ-OP-1, QP-ATTR-5).
func TestPostRejectsOtherOpcodes(t *testing.T) {
	o := newOne(t, nil)
	for _, op := range []Opcode{OpSend, OpSendImm, OpRead, OpAtomicCmpSwap, OpAtomicFetchAdd, Opcode(42)} {
		err := o.q.Post(0, WorkRequest{WRID: 7, Opcode: op, Data: make([]byte, 8)}, &o.out)
		wantErr(t, err, ErrUnsupportedOpcode)
		var oe *OpError
		if !errors.As(err, &oe) || oe.WRID != 7 || oe.Opcode != op {
			t.Errorf("%v: want *OpError naming WR 7 and %s", err, op)
		}
	}
	if n := len(o.out.Packets); n != 0 {
		t.Errorf("%d packets sent for rejected WRs", n)
	}
}

// TestPostNeedsRTS: send WRs only in RTS, receive WRs from INIT on
// (REQ-OP-2, QP-ST-9).
func TestPostNeedsRTS(t *testing.T) {
	q, _ := testConfig(qpnA).new()
	var out Output
	wr := WorkRequest{Opcode: OpWrite, Data: make([]byte, 4)}
	wantErr(t, q.Post(0, wr, &out), ErrQPState)
	wantErr(t, q.PostRecv(0, 1, &out), ErrQPState)
	a := testAttr(qpnB)
	for _, s := range []struct {
		st QPState
		m  AttrMask
	}{{StateInit, MaskInit}, {StateRTR, MaskRTR}} {
		if err := q.Modify(0, s.st, a, s.m, &out); err != nil {
			t.Fatal(err)
		}
		wantErr(t, q.Post(0, wr, &out), ErrQPState)
		if err := q.PostRecv(0, 1, &out); err != nil {
			t.Errorf("PostRecv in %s: %v", s.st, err)
		}
	}
	if len(out.Packets) != 0 {
		t.Errorf("%d packets sent before RTS", len(out.Packets))
	}
}

// TestQueueDepths: the send and receive queues hold MaxSendWR and MaxRecvWR.
func TestQueueDepths(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.MaxSendWR, c.MaxRecvWR, a.MPR = 2, 5, 1 })
	o.write(1, 1<<20, false)
	o.write(2, 10, false)
	err := o.q.Post(0, WorkRequest{WRID: 3, Opcode: OpWrite, Data: make([]byte, 10)}, &o.out)
	wantErr(t, err, ErrSendQueueFull)
	if err := o.q.PostRecv(0, 8, &o.out); err != nil { // newOne posted 4; one more fits
		t.Fatal(err)
	}
	wantErr(t, o.q.PostRecv(0, 9, &o.out), ErrRecvQueueFull)
}

// TestErrorFlushAndReset: moving to ERROR flushes every send and receive
// WR in post order, later posts complete at once with a flush error, and
// packets are dropped; RESET drops everything and the QP can come up
// again (QP-ST-2, QP-ST-11, CMP-ERR-1).
func TestErrorFlushAndReset(t *testing.T) {
	o := newOne(t, nil)
	o.write(1, 100, false)
	o.write(2, 100, true)
	o.out.Reset()
	if err := o.q.Modify(0, StateError, Attr{}, 0, &o.out); err != nil {
		t.Fatal(err)
	}
	type c struct {
		WRID   uint64
		Status Status
		Recv   bool
	}
	var got []c
	for _, x := range o.out.Completions {
		got = append(got, c{x.WRID, x.Status, x.Recv})
	}
	want := []c{{1, StatusFlushError, false}, {2, StatusFlushError, false},
		{500, StatusFlushError, true}, {501, StatusFlushError, true}, {502, StatusFlushError, true}, {503, StatusFlushError, true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	o.out.Reset()
	o.write(3, 10, false)
	if len(o.out.Completions) != 1 || o.out.Completions[0].Status != StatusFlushError || len(o.out.Packets) != 0 {
		t.Errorf("post in ERROR: %+v, %d packets; want one flush completion and no packet", o.out.Completions, len(o.out.Packets))
	}
	o.out.Reset()
	o.recv(1, dataPkt(0, 0xCA, 10, 0x100))
	if len(o.out.Packets)+len(o.out.Placements) != 0 {
		t.Error("a QP in ERROR answered or placed a packet (QP-ST-11)")
	}
	if err := o.q.Modify(0, StateReset, Attr{}, 0, &o.out); err != nil || o.q.State() != StateReset {
		t.Fatalf("reset: %v, state %s", err, o.q.State())
	}
	if err := o.q.BringUp(0, testAttr(qpnB), &o.out); err != nil {
		t.Fatal(err)
	}
}

// TestConfigErrors: New names the bad setting.
func TestConfigErrors(t *testing.T) {
	cases := map[string]func(*testCfg){
		"QPN 2 is the endpoint QPN (WIRE-BTH-8)": func(c *testCfg) { c.QPN = 2 },
		"QPN beyond 24 bits":                     func(c *testCfg) { c.QPN = 1 << 24 },
		"duplicate EV":                           func(c *testCfg) { c.EVProfiles[0].EVs = []EVEntry{{1, 1}, {1, 2}} },
		"port 0":                                 func(c *testCfg) { c.EVProfiles[0].EVs = []EVEntry{{1, 0}, {2, 1}} },
		"32-bit EV over IPv4 (WIRE-EV-3)":        func(c *testCfg) { c.EVProfiles[0].EVs = []EVEntry{{0x10001, 1}, {2, 1}} },
		"one EV":                                 func(c *testCfg) { c.EVProfiles[0].EVs = []EVEntry{{1, 1}} },
		"min active above ev_count":              func(c *testCfg) { c.EVProfiles[0].MinActive = 5 },
		"probe successes 8":                      func(c *testCfg) { c.EVProfiles[0].ProbeSuccesses = 8 },
		"unknown CC algorithm (CC-GEN-1)":        func(c *testCfg) { c.CCProfiles[0].Algorithm = "cubic" },
		"gamma above 1":                          func(c *testCfg) { c.CCProfiles[1].NSCC.Gamma = 1.5 },
		"no base_rtt":                            func(c *testCfg) { c.CCProfiles[1].NSCC.BaseRTT = 0 },
		"mixed IP versions":                      func(c *testCfg) { c.Addr.DstIP = netip.IPv6Loopback() },
		"empty MR":                               func(c *testCfg) { c.MRs = []MemoryRegion{{RKey: 1}} },
	}
	for name, f := range cases {
		c := testConfig(qpnA)
		f(&c)
		_, err := c.new()
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v, want *ConfigError", name, err)
		}
	}
	c := testConfig(qpnA)
	c.Addr.SrcIP, c.Addr.DstIP = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	c.EVProfiles[0].EVs = []EVEntry{{0x10001, 1}, {0x20002, 2}}
	if _, err := c.new(); err != nil {
		t.Errorf("32-bit EVs over IPv6 STEV: %v", err)
	}
}
