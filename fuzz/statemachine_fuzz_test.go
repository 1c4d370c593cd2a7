package fuzz

import (
	"errors"
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"github.com/openmrc/mrc/internal/evtable"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// The QP under fuzz: QPN 0x11, two planes of two EVs (one active, one
// backup each), MPR window 1 unit (128 PSNs), max_wimm_dest 4.
const (
	fuzzQPN  = 0x11
	fuzzPeer = 0x22
)

var fuzzEVs = []sm.EVEntry{{Value: 0x100, Port: 1}, {Value: 0x101, Port: 1}, {Value: 0x200, Port: 2}, {Value: 0x201, Port: 2}}

func fuzzAttr() sm.Attr {
	return sm.Attr{EVProfileID: 7, CCProfileID: 9, MPR: 1, MPRDest: 1, MaxWIMM: 4, MaxWIMMDest: 4, Timeout: 4,
		Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 1024, DestQPN: fuzzPeer}
}

func fuzzQP(t *testing.T, nscc bool) *sm.QP {
	cfg := sm.Config{
		EVProfiles: []sm.EVProfile{{ID: 7, EVs: fuzzEVs, ActivePerPlane: 1}},
		CCProfiles: []sm.CCProfile{{ID: 9, Algorithm: sm.CCAlgNone}, {ID: 10, Algorithm: sm.CCAlgNSCC, NSCC: sm.DefaultNSCC()}}}
	q, err := sm.New(cfg, sm.QPConfig{QPN: fuzzQPN, Seed: 1,
		Addr: sm.Addressing{SrcIP: netip.AddrFrom4([4]byte{10, 0, 0, 1}), DstIP: netip.AddrFrom4([4]byte{10, 0, 0, 2})}})
	if err != nil {
		t.Fatal(err)
	}
	a := fuzzAttr()
	if nscc {
		a.CCProfileID = 10
	}
	var out sm.Output
	if err := q.BringUp(0, a, &out); err != nil {
		t.Fatal(err)
	}
	return q
}

// input reads the fuzz bytes as a stream of small values; past the end
// every value is 0.
type input []byte

func (in *input) u8() byte {
	if len(*in) == 0 {
		return 0
	}
	b := (*in)[0]
	*in = (*in)[1:]
	return b
}

func (in *input) u16() uint16 { return uint16(in.u8())<<8 | uint16(in.u8()) }
func (in *input) u32() uint32 { return uint32(in.u16())<<16 | uint32(in.u16()) }

// psn is a PSN near the QP's own sequence (where acknowledgements and data
// matter), or anywhere.
func (in *input) psn() uint32 {
	b := in.u8()
	if b&0x80 != 0 {
		return in.u32() & wire.PSNMask
	}
	return uint32(int32(b&0x7F)-32) & wire.PSNMask
}

var fuzzOps = []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteLastImm, wire.OpWriteOnly,
	wire.OpWriteOnlyImm, wire.OpAcknowledge, wire.OpSACK, wire.OpNACK, wire.OpProbe}

// packet builds a packet from the input and passes it through the codec,
// as a real receive path does (RSP-RCV-1); it returns nil when the codec
// rejects it.
func (in *input) packet() *wire.Packet {
	p := &wire.Packet{}
	p.IP4.TOS = in.u8()
	p.IP4.TTL = 64
	p.IP4.Src, p.IP4.Dst = [4]byte{10, 0, 0, 2}, [4]byte{10, 0, 0, 1}
	op := fuzzOps[int(in.u8())%len(fuzzOps)]
	flags := in.u8()
	dst := uint32(fuzzQPN)
	if flags&0x80 != 0 {
		dst = in.u32() & wire.PSNMask
	}
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: dst, PSN: in.psn(), AckReq: flags&1 != 0, Retransmit: flags&2 != 0,
		TSPresent: flags&4 != 0}
	p.SetEV(uint32(in.u16()&0x3FF), wire.EVModeSTEV)
	switch {
	case op.IsWrite():
		p.METH.MSN, p.METH.RQMSN = in.u16()&0xF, in.u16()&0xF
		p.RETH = wire.RETH{VA: uint64(in.u32()), RKey: uint32(in.u8()), DMALength: uint32(in.u16())}
		p.Payload = make([]byte, int(in.u16())%1100)
		p.ImmDt = in.u32()
	case op == wire.OpSACK:
		p.SETH = wire.SETH{M: wire.Multipath(in.u8() & 3), PR: flags&8 != 0, AckPSNOffset: int16(in.u16()),
			Entropy: uint32(in.u16() & 0x3FF), CACKPSN: in.psn(), MPR: in.u8() & 3, SACKOffset: int16(in.u16()),
			SACKBitmap: uint64(in.u32())<<32 | uint64(in.u32())}
		p.SETH.CC.RcvCwndPen = in.u8() & 0x7F
	case op == wire.OpNACK:
		p.NETH = wire.NETH{Reason: wire.NACKReason(in.u8() & 0x1F), NACKPSN: in.psn(), Entropy: uint32(in.u16() & 0x3FF)}
	case op == wire.OpAcknowledge:
		p.AETH.Syndrome = in.u8() & 0x7F
		p.AETH.MSN = uint32(in.u16())
	}
	b, err := wire.Default.Append(nil, p)
	if err != nil {
		return nil
	}
	var d wire.Packet
	if wire.Default.Decode(b, &d) != nil {
		return nil
	}
	return &d
}

// fuzzRun is what one run produced, for the determinism check.
type fuzzRun struct {
	events []sm.Event
	hash   uint64
}

// qpWatch holds what the properties compare across steps.
type qpWatch struct {
	t       *testing.T
	q       *sm.QP
	cack    uint32 // requester cumulative ACK
	rcack   uint32 // responder cumulative ACK
	placed  map[uint32]bool
	evs     []sm.EVInfo
	size    int
	ext     []byte // the posted WRs' data
	window  uint32
	maxWIMM int
}

// check evaluates the single-QP properties on the output of one step.
func (w *qpWatch) check(step int, out *sm.Output) {
	t, q := w.t, w.q
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d: "+format, append([]any{step}, args...)...)
	}
	for _, p := range out.Placements {
		if w.placed[p.PSN] {
			fail("PSN %d placed twice (RSP-DUP-1)", p.PSN)
		}
		w.placed[p.PSN] = true
	}
	for _, e := range out.Events {
		if e.Kind != sm.EvEVState {
			continue
		}
		i := slices.IndexFunc(w.evs, func(x sm.EVInfo) bool { return x.Value == e.EV })
		from, to := sm.EVState(e.From), sm.EVState(e.To)
		switch {
		case i < 0:
			fail("EV %#x is not in the profile", e.EV)
		case w.evs[i].State != from:
			fail("EV %#x event says %s->%s but the EV was %s", e.EV, from, to, w.evs[i].State)
		case !evtable.Allowed(from, to, sm.EVCause(e.Reason)):
			fail("EV %#x %s->%s for cause %d is not in the table (EV-ST-2 to EV-ST-10)", e.EV, from, to, e.Reason)
		}
		w.evs[i].State = to
	}
	for i, e := range q.EVs(nil) {
		if e.State != w.evs[i].State {
			fail("EV %#x changed %s->%s without an event", e.Value, w.evs[i].State, e.State)
		}
	}
	if q.State() != sm.StateRTS {
		return
	}
	cack, rcack := q.CumulativeACK(), q.ResponderCumulativeACK()
	if wire.PSNDiff(cack, w.cack) < 0 {
		fail("cumulative ACK went back from %d to %d (LR-SACK-1)", w.cack, cack)
	}
	if last := wire.PSNAdd(q.NextPSN(), -1); wire.PSNDiff(last, cack) < 0 {
		fail("cumulative ACK %d beyond the last PSN sent %d (LR-SACK-1)", cack, last)
	}
	if wire.PSNDiff(rcack, w.rcack) < 0 {
		fail("responder cumulative ACK went back from %d to %d (RSP-RCV-3)", w.rcack, rcack)
	}
	w.cack, w.rcack = cack, rcack
	for _, p := range q.AppendInFlight(nil) {
		if d := uint32(wire.PSNDiff(p, cack)); d < 1 || d > w.window {
			fail("PSN %d in flight with cumulative ACK %d, window %d (MPR-WIN-1)", p, cack, w.window)
		}
	}
	if n := len(q.WIMMHeld(nil)); n > w.maxWIMM {
		fail("%d WriteIMMs held, max_wimm_dest %d (WIMM-RSP-4)", n, w.maxWIMM)
	}
	if n := footprint(q, w.ext); n != w.size {
		fail("QP footprint grew from %d to %d bytes: input made it grow", w.size, n)
	}
}

// runQP applies the steps the input describes to a fresh QP in RTS,
// checking the properties after each, and returns what it produced.
func runQP(t *testing.T, data []byte) fuzzRun {
	in := input(data)
	flags := in.u8()
	q := fuzzQP(t, flags&1 != 0)
	var out sm.Output
	out.TracePackets = true
	for k := 0; k < 4; k++ {
		_ = q.PostRecv(0, uint64(1000+k), &out)
	}
	a := fuzzAttr()
	buf := make([]byte, 64<<10)
	w := &qpWatch{t: t, q: q, placed: map[uint32]bool{}, evs: q.EVs(nil), size: footprint(q, buf), ext: buf,
		window: uint32(a.MPR) * 128, maxWIMM: int(a.MaxWIMMDest)}
	w.cack, w.rcack = q.CumulativeACK(), q.ResponderCumulativeACK()
	var run fuzzRun
	now := sm.Time(0)
	for step := 0; len(in) > 0 && step < 256; step++ {
		out.Reset()
		now += sm.Time(in.u8()) * 64
		switch op := in.u8(); op % 8 {
		case 0:
			now += sm.Time(in.u16()) * sm.Microsecond / 16
			q.Advance(now, &out)
		case 1, 2, 3:
			if p := in.packet(); p != nil {
				q.Receive(now, int(in.u8()%4), p, &out)
			}
		case 4:
			wr := sm.WorkRequest{WRID: uint64(step), Opcode: sm.OpWrite, RemoteVA: 0x10000, RKey: 1,
				Data: buf[:int(in.u16())%len(buf)], Unsignaled: op&0x80 != 0}
			if op&0x40 != 0 {
				wr.Opcode, wr.Imm = sm.OpWriteImm, uint32(step)
			}
			if err := q.Post(now, wr, &out); err != nil && q.State() == sm.StateRTS && !errors.Is(err, sm.ErrSendQueueFull) {
				t.Fatalf("step %d: post %d bytes in RTS: %v", step, len(wr.Data), err)
			}
		case 5:
			if err := q.PostRecv(now, uint64(step), &out); err != nil && !errors.Is(err, sm.ErrRecvQueueFull) && !errors.Is(err, sm.ErrQPState) {
				t.Fatalf("step %d: post receive: %v", step, err)
			}
		case 6:
			ev := fuzzEVs[int(op>>3)%len(fuzzEVs)].Value
			st := []sm.EVState{sm.EVGood, sm.EVAssumedBad, sm.EVDenied}[int(op>>5)%3]
			if err := q.SetEVState(now, ev, st, &out); err != nil {
				t.Fatalf("step %d: SetEVState(%#x, %s): %v", step, ev, st, err)
			}
		case 7:
			control(q, now, op>>3, in.u8(), &out)
		}
		w.check(step, &out)
		run.events = append(run.events, out.Events...)
	}
	run.hash = q.StateHash()
	return run
}

// control applies one of the remaining control-plane calls.
func control(q *sm.QP, now sm.Time, which, arg byte, out *sm.Output) {
	switch which % 5 {
	case 0:
		q.SetPortStatus(now, uint32(arg)&0b110|1, 0b110, out)
	case 1:
		q.SetResourceCondition(sm.ResourceCondition(arg % 4))
	case 2:
		_ = q.SetDynamicMPR(arg % 3)
	case 3:
		_ = q.SetReceivePenalty(arg&0x7F, arg&0x80 != 0)
	case 4:
		if arg == 0xFF {
			_ = q.Modify(now, sm.StateError, sm.Attr{}, 0, out)
		}
	}
}

// FuzzQP feeds one QP in RTS an arbitrary sequence of packets from its
// peer (any opcode, PSN, EV, SACK bitmap, NACK reason, DSCP/ECN, passed
// through the codec as a receive path does), time steps, posts and
// control-plane calls. It must not panic, and after every step: no PSN is
// placed twice; the cumulative ACK never goes back nor passes the last PSN
// sent, however the peer lies; every PSN in flight lies in the MPR window;
// no more WriteIMMs are held than max_wimm_dest; every EV change is an
// event whose from-state is the EV's and whose transition the path-state
// table allows (internal/evtable, the table modelcheck checks against);
// and the QP's memory does not grow from what RTS sized. The same input
// gives the same events and state, bit for bit.
func FuzzQP(f *testing.F) {
	f.Add([]byte{0, 0, 4, 0x10, 0})                                                       // post 4 KiB
	f.Add([]byte{0, 0, 4, 0x40, 0, 0, 0, 0, 0x20})                                        // post, advance
	f.Add([]byte{1, 0, 4, 0x20, 0, 0, 1, 0, 7, 0, 0x21, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) // post, SACK
	f.Add([]byte{0, 0, 1, 0, 4, 0, 0x21, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0x10, 0, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 4, 0x10, 0, 0, 2, 0, 8, 0, 0x21, 0x01, 0x00, 1, 0x21, 0x01, 0x00, 0})
	f.Add([]byte{0, 0, 6, 0, 0x4e, 0, 0, 0x27, 0xFF, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		first := runQP(t, data)
		again := runQP(t, data)
		if first.hash != again.hash || !slices.Equal(first.events, again.events) {
			t.Fatalf("the same input gave different results: state %#x vs %#x, %d vs %d events",
				first.hash, again.hash, len(first.events), len(again.events))
		}
	})
}

// footprint is the memory a value holds: its size plus, through pointers,
// slices and maps, what it references (each pointer once), except the
// caller's buffers in ext (posted WRs' data). Slices count by capacity, so
// a slice that grows shows.
func footprint(v any, ext []byte) int {
	lo := reflect.ValueOf(ext).Pointer()
	hi := lo + uintptr(cap(ext))
	seen := map[uintptr]bool{}
	var walk func(reflect.Value) int
	walk = func(v reflect.Value) int {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			return int(v.Type().Elem().Size()) + walk(v.Elem())
		case reflect.Struct:
			n := 0
			for i := range v.NumField() {
				n += walk(v.Field(i))
			}
			return n
		case reflect.Array:
			n := 0
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Slice:
			if p := v.Pointer(); v.IsNil() || seen[p] || p >= lo && p < hi {
				return 0
			}
			seen[v.Pointer()] = true
			n := v.Cap() * int(v.Type().Elem().Size())
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Map:
			n := v.Len() * 16
			it := v.MapRange()
			for it.Next() {
				n += walk(it.Key()) + walk(it.Value())
			}
			return n
		case reflect.Interface:
			if v.IsNil() {
				return 0
			}
			return walk(v.Elem())
		}
		return 0
	}
	return walk(reflect.ValueOf(v))
}
