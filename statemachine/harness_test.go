package statemachine

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/openmrc/mrc/wire"
)

// The test network: two QPs, A (index 0) and B (index 1), joined by a
// scripted fabric that delivers each packet after a fixed delay unless a
// fault rule drops, trims, marks, delays or duplicates it. Time is
// synthetic, as in x/net/quic's tests.

const (
	qpnA   = 0x11
	qpnB   = 0x22
	baseVA = 0x10000
)

var testEVs = []EVEntry{{0x100, 1}, {0x101, 1}, {0x200, 2}, {0x201, 2}}

// testConfig is a small QP: two planes, one active and one backup EV per
// plane, no congestion control (so windows are exact), 1024-byte MTU.
// testCfg is one QP on a Node of its own: the node's and the QP's
// configuration side by side (their field names differ).
type testCfg struct {
	Config
	QPConfig
}

func (c testCfg) new() (*QP, error) { return New(c.Config, c.QPConfig) }

func testConfig(qpn uint32) testCfg {
	a, b := netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2})
	if qpn == qpnB {
		a, b = b, a
	}
	return testCfg{Config{
		EVProfiles: []EVProfile{{ID: 7, EVs: testEVs, ActivePerPlane: 1}},
		CCProfiles: []CCProfile{{ID: 9, Algorithm: CCAlgNone}, {ID: 10, Algorithm: CCAlgNSCC, NSCC: DefaultNSCC()}},
	}, QPConfig{QPN: qpn, Seed: uint64(qpn), Addr: Addressing{SrcIP: a, DstIP: b}}}
}

func testAttr(dest uint32) Attr {
	return Attr{EVProfileID: 7, CCProfileID: 9, MPR: 1, MPRDest: 1, MaxWIMM: 4, MaxWIMMDest: 4,
		Timeout: 4, Retry: Retry{LinearCnt: 7, ExpCnt: RetryInfinite}, PathMTU: 1024, DestQPN: dest,
		RQPSN: 0, SQPSN: 0}
}

type action struct {
	drop, trim, lastHop, ce, dup bool
	extra                        Time // added delay
}

type flight struct {
	at   Time
	seq  int
	to   int
	port int
	pkt  wire.Packet
}

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

type sim struct {
	t      tb
	now    Time
	qp     [2]*QP
	out    Output
	q      []flight
	seq    int
	delay  Time
	rule   func(from int, o *Outgoing) action
	mem    [2][]byte
	comps  [2][]Completion
	log    []string
	events [2][]Event
	quiet  bool                   // no log
	tap    func(*Outgoing)        // sees every packet sent, before faults
	onOut  func(i int, o *Output) // sees each Output of QP i before collect drains it
}

func newSim(t tb, ca, cb testCfg, aa, ab Attr) *sim {
	t.Helper()
	return newSimRecv(t, ca, cb, aa, ab, [2]int{8, 8})
}

// newSimRecv is newSim with recv[i] receive WRs posted on QP i.
func newSimRecv(t tb, ca, cb testCfg, aa, ab Attr, recv [2]int) *sim {
	t.Helper()
	s := &sim{t: t, delay: Microsecond}
	s.out.TracePackets = true
	for i, c := range []testCfg{ca, cb} {
		q, err := c.new()
		if err != nil {
			t.Fatal(err)
		}
		s.qp[i] = q
		s.mem[i] = make([]byte, 1<<20)
	}
	for i, a := range []Attr{aa, ab} {
		if err := s.qp[i].BringUp(0, a, &s.out); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < recv[i]; k++ {
			if err := s.qp[i].PostRecv(0, uint64(1000+k), &s.out); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.collect(0)
	s.collect(1)
	s.log = nil
	return s
}

func newPair(t tb) *sim {
	return newSim(t, testConfig(qpnA), testConfig(qpnB), testAttr(qpnB), testAttr(qpnA))
}

var side = [2]string{"A", "B"}

func (s *sim) logf(format string, args ...any) {
	if !s.quiet {
		s.log = append(s.log, fmt.Sprintf("%5.1f ", float64(s.now)/1000)+fmt.Sprintf(format, args...))
	}
}

func pktString(p *wire.Packet) string {
	b := &p.BTH
	switch b.Opcode {
	case wire.OpSACK:
		h := &p.SETH
		s := fmt.Sprintf("SACK cack=%d", h.CACKPSN)
		if h.PR {
			s += fmt.Sprintf(" probe=%#x", uint16(h.AckPSNOffset))
		} else {
			s += fmt.Sprintf(" ack=%d", h.AckPSN())
		}
		if h.SACKBitmap != 0 {
			s += fmt.Sprintf(" bm@%d=%b", h.BitmapBase(), h.SACKBitmap)
		}
		s += fmt.Sprintf(" ev=%#x", h.Entropy)
		if h.M != wire.MNone {
			s += " m=" + h.M.String()
		}
		return s
	case wire.OpNACK:
		return fmt.Sprintf("NACK %s psn=%d ev=%#x", p.NETH.Reason, p.NETH.NACKPSN, p.NETH.Entropy)
	case wire.OpAcknowledge:
		return fmt.Sprintf("ACK psn=%d syn=%#x msn=%d", b.PSN, p.AETH.Syndrome, p.AETH.MSN)
	case wire.OpProbe:
		return fmt.Sprintf("PROBE id=%#x", p.PETH.ProbeID)
	}
	s := fmt.Sprintf("%s psn=%d msn=%d", strings.TrimPrefix(b.Opcode.String(), "RDMA_"), b.PSN, p.METH.MSN)
	if b.Opcode.HasImm() {
		s += fmt.Sprintf(" rqmsn=%d", p.METH.RQMSN)
	}
	if b.Retransmit {
		s += " rtx"
	}
	return s
}

// collect drains the Output produced by QP i: packets go into the fabric
// (through the fault rule), placements into i's memory, completions and
// events into i's logs.
func (s *sim) collect(i int) {
	o := &s.out
	if s.onOut != nil {
		s.onOut(i, o)
	}
	k := 0 // next packet of o.Packets; packets are logged where their trace event falls
	for _, e := range o.Events {
		s.events[i] = append(s.events[i], e)
		switch e.Kind {
		case EvPacketSent, EvSACKSent, EvNACKSent, EvACKSent, EvProbeSent:
			if k < len(o.Packets) {
				s.send(i, &o.Packets[k])
				k++
			}
		case EvEVState:
			s.logf("%s EV %#x %s->%s (%s)", side[i], e.EV, EVState(e.From), EVState(e.To), EVCause(e.Reason))
		case EvEVReplaced:
			s.logf("%s EV %#x replaced by %#x", side[i], e.EV, e.Value)
		case EvEVRestored:
			s.logf("%s EV %#x restored in place of %#x", side[i], e.EV, e.Value)
		case EvTimeout:
			s.logf("%s timeout psn=%d ev=%#x", side[i], e.PSN, e.EV)
		case EvQPState:
			s.logf("%s QP %s->%s", side[i], QPState(e.From), QPState(e.To))
		case EvPlane:
			s.logf("%s plane %d up=%d", side[i], e.Plane, e.To)
		case EvRetry:
			s.logf("%s retry %d", side[i], e.Value)
		}
	}
	for ; k < len(o.Packets); k++ {
		s.send(i, &o.Packets[k])
	}
	for _, p := range o.Placements {
		off := p.VA - baseVA
		copy(s.mem[i][off:], p.Data)
	}
	for _, c := range o.Completions {
		s.comps[i] = append(s.comps[i], c)
		if c.Recv {
			s.logf("%s recv-completion wr=%d %s imm=%#x rqmsn=%d len=%d", side[i], c.WRID, c.Status, c.Imm, c.RQMSN, c.ByteLen)
		} else {
			s.logf("%s send-completion wr=%d %s", side[i], c.WRID, c.Status)
		}
	}
	o.Reset()
}

// send puts a packet from QP i into the fabric, through the fault rule.
func (s *sim) send(i int, og *Outgoing) {
	if s.tap != nil {
		s.tap(og)
	}
	a := action{}
	if s.rule != nil {
		a = s.rule(i, og)
	}
	desc := fmt.Sprintf("%s>%s %s ev=%#x", side[i], side[1-i], pktString(&og.Pkt), og.EV)
	if og.Pkt.BTH.Opcode == wire.OpSACK || og.Pkt.BTH.Opcode == wire.OpNACK {
		desc = fmt.Sprintf("%s>%s %s", side[i], side[1-i], pktString(&og.Pkt))
	}
	switch {
	case a.drop:
		s.logf("%s DROPPED", desc)
		return
	case a.trim:
		desc += " TRIMMED"
	case a.ce:
		desc += " CE"
	}
	s.logf("%s", desc)
	f := flight{at: s.now + s.delay + a.extra, to: 1 - i, port: int(og.Plane) + 1, pkt: og.Pkt}
	tos := &f.pkt.IP4.TOS
	if f.pkt.IsIPv6 {
		tos = &f.pkt.IP6.TrafficClass
	}
	if a.trim {
		dscp := uint8(12)
		if a.lastHop {
			dscp = 16
		}
		*tos = dscp<<2 | *tos&3
		f.pkt.Payload = nil
	}
	if a.ce {
		*tos |= 3
	}
	s.push(f)
	if a.dup {
		f.at += 100
		s.push(f)
	}
}

func (s *sim) push(f flight) {
	s.seq++
	f.seq = s.seq
	i := sort.Search(len(s.q), func(k int) bool {
		return s.q[k].at > f.at || (s.q[k].at == f.at && s.q[k].seq > f.seq)
	})
	s.q = append(s.q, flight{})
	copy(s.q[i+1:], s.q[i:])
	s.q[i] = f
}

func (s *sim) post(i int, wr WorkRequest) {
	s.t.Helper()
	if err := s.qp[i].Post(s.now, wr, &s.out); err != nil {
		s.t.Fatal(err)
	}
	s.collect(i)
}

// write posts a write of n bytes of pattern from QP i at remote offset off.
func (s *sim) write(i int, wrid uint64, off, n int, imm bool) {
	data := make([]byte, n)
	for k := range data {
		data[k] = byte(int(wrid)*7 + k)
	}
	wr := WorkRequest{WRID: wrid, Opcode: OpWrite, RemoteVA: baseVA + uint64(off), RKey: 1, Data: data}
	if imm {
		wr.Opcode, wr.Imm = OpWriteImm, uint32(0xA0+wrid)
	}
	s.post(i, wr)
}

// run advances the simulation until nothing is pending or until.
func (s *sim) run(until Time) {
	for {
		next := Never
		if len(s.q) > 0 {
			next = s.q[0].at
		}
		for _, q := range s.qp {
			next = min(next, q.NextDeadline())
		}
		if next == Never || next > until {
			if until != Never {
				s.now = max(s.now, until)
			}
			return
		}
		s.now = max(s.now, next)
		for len(s.q) > 0 && s.q[0].at <= s.now {
			f := s.q[0]
			s.q = s.q[1:]
			s.qp[f.to].Receive(s.now, f.port, &f.pkt, &s.out)
			s.collect(f.to)
		}
		for i, q := range s.qp {
			if q.NextDeadline() <= s.now {
				q.Advance(s.now, &s.out)
				s.collect(i)
			}
		}
	}
}
