// Package capgen generates the conformance test captures under
// conformance/testdata from the wire codec: a correct MRC exchange between
// two nodes on two planes, and the same exchange with one seeded fault
// each. The requester's transmissions are scripted; a small responder
// model answers them by the rules of spec/23-responder.md. Every frame is
// captured at the sender's tap and, unless lost, at the receiver's tap
// 2 µs later, so the judge sees both ends. The output is deterministic;
// conformance tests compare the checked-in files with Files().
package capgen

import (
	"bytes"
	"container/heap"
	"fmt"
	"slices"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// Fault names a seeded fault; Good is none.
type Fault string

// The captures.
const (
	Good       Fault = "good"
	GoBackN    Fault = "gobackn"
	Unflagged  Fault = "unflagged-rtx"
	NACKedEV   Fault = "nacked-ev-reused"
	BeyondMPR  Fault = "beyond-mpr"
	WIMMOrder  Fault = "wimm-order"
	BadICRC    Fault = "bad-icrc"
	Reserved   Fault = "reserved-bits"
	SACKUnseen Fault = "sack-unseen-psn"
	Premature  Fault = "premature-rtx"
	// NoAnswer: B never answers A's first probe. The evidence is a packet
	// that is absent: a FAIL at B's own tap, INCONCLUSIVE at a tap away
	// from B (PICS capture.location).
	NoAnswer Fault = "unanswered-probe"
)

// Faults lists every capture, good first.
var Faults = []Fault{Good, GoBackN, Unflagged, NACKedEV, BeyondMPR, WIMMOrder, BadICRC, Reserved, SACKUnseen, Premature, NoAnswer}

// FileName is the testdata file of a capture.
func FileName(f Fault) string {
	if f == Good {
		return "good.pcapng"
	}
	return "fault-" + string(f) + ".pcapng"
}

// Start is the timestamp of time 0 in every capture.
var Start = time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)

const (
	linkDelay = 2000 // ns from one tap to the other
	rspDelay  = 300  // ns from an arrival to the responder's answer
	timeoutNs = 1024 << 8
)

type node struct {
	name string
	idx  int
	mac  [6]byte
	ip   [16]byte
	qpn  uint32
	rev  [2]uint32 // reverse EVs per plane, for control packets
}

var (
	nodeA = &node{name: "A", idx: 0, mac: [6]byte{2, 0, 0, 0, 0, 0xa}, ip: ip6(0xa), qpn: 0x000011, rev: [2]uint32{0x00210001, 0x00220001}}
	nodeB = &node{name: "B", idx: 1, mac: [6]byte{2, 0, 0, 0, 0, 0xb}, ip: ip6(0xb), qpn: 0x000022, rev: [2]uint32{0x00110001, 0x00120001}}
)

func ip6(last byte) [16]byte {
	return [16]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last}
}

// Interfaces are the capture interfaces: a tap at each node on each plane.
func Interfaces() []pcap.Interface {
	var in []pcap.Interface
	for _, n := range []*node{nodeA, nodeB} {
		for pl := 0; pl < 2; pl++ {
			in = append(in, pcap.Interface{Point: n.name, Plane: pl,
				Description: fmt.Sprintf("tap at node %s, plane %d", n.name, pl)})
		}
	}
	return in
}

func iface(n *node, plane int) int { return n.idx*2 + plane }

// EVs of A's QP: three per plane; the plane is EV bits 19:16 minus one.
const (
	a1 uint32 = 0x00010001
	a2 uint32 = 0x00010002
	a3 uint32 = 0x00010003
	a4 uint32 = 0x00020001
	a5 uint32 = 0x00020002
	a6 uint32 = 0x00020003
	b1 uint32 = 0x00110002 // B's data EV
)

func planeOf(ev uint32) int { return int(ev>>16&0xF) - 1 }

type frameAt struct {
	ns      int64
	seq     int
	iface   int
	data    []byte
	comment string
}

type event struct {
	ns  int64
	seq int
	fn  func()
}

type queue []event

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].ns != q[j].ns {
		return q[i].ns < q[j].ns
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// fate is what the fabric does to one transmission.
type fate struct {
	lost, trim, ce, badICRC bool
}

type sim struct {
	c      *wire.Codec
	fault  Fault
	frames []frameAt
	q      queue
	seq    int
	err    error
	hosts  map[*node]*host
}

type host struct {
	n   *node
	rsp *responder // answers data sent to this host's QP
}

func (s *sim) at(ns int64, fn func()) {
	s.seq++
	heap.Push(&s.q, event{ns: ns, seq: s.seq, fn: fn})
}

func (s *sim) run() {
	for s.q.Len() > 0 {
		e := heap.Pop(&s.q).(event)
		e.fn()
	}
}

func (s *sim) capture(ns int64, ifc int, p *wire.Packet, comment string, corrupt bool) {
	b, err := s.c.Append(nil, p)
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("%s: %w", comment, err)
	}
	if corrupt {
		b[len(b)-1] ^= 0x5a
	}
	s.seq++
	s.frames = append(s.frames, frameAt{ns: ns, seq: s.seq, iface: ifc, data: b, comment: comment})
}

// packet returns a skeleton from one node to the other on EV ev.
func packet(from, to *node, ev uint32, dscp, ecn uint8) *wire.Packet {
	p := &wire.Packet{IsIPv6: true}
	p.Eth.Src, p.Eth.Dst = from.mac, to.mac
	p.IP6 = wire.IPv6{TrafficClass: dscp<<2 | ecn, HopLimit: 64, Src: from.ip, Dst: to.ip}
	p.SetEV(ev, wire.EVModeSTEV)
	return p
}

// xmit captures p at the sender's tap at ns and, unless the fabric loses
// it, at the receiver's tap linkDelay later, then hands the arrival to the
// receiver.
func (s *sim) xmit(from, to *node, plane int, ns int64, p *wire.Packet, f fate, comment string) {
	q := *p
	q.Payload = slices.Clone(p.Payload)
	s.capture(ns, iface(from, plane), &q, comment, f.badICRC)
	if f.lost {
		return
	}
	arr := q
	arr.Payload = slices.Clone(q.Payload)
	arr.IP6.HopLimit--
	note := comment
	if f.trim {
		arr.IP6.TrafficClass = s.c.Profile().DSCP.Trimmed<<2 | arr.IP6.TrafficClass&3
		arr.Payload = nil
		note += " (trimmed in the fabric)"
	}
	if f.ce {
		arr.IP6.TrafficClass |= 3
		note += " (CE-marked in the fabric)"
	}
	s.at(ns+linkDelay, func() {
		s.capture(ns+linkDelay, iface(to, plane), &arr, note, f.badICRC)
		if f.badICRC {
			return // the receiver discards it (WIRE-ICRC-5)
		}
		if h := s.hosts[to]; h != nil && h.rsp != nil {
			h.rsp.arrive(&arr, ns+linkDelay, plane)
		}
	})
}

// Capture returns the pcapng capture of the scenario with fault f.
func Capture(f Fault) ([]byte, error) {
	s := &sim{c: wire.Default, fault: f, hosts: map[*node]*host{}}
	s.hosts[nodeA] = &host{n: nodeA, rsp: newResponder(s, nodeA, nodeB, 0x500-1)}
	s.hosts[nodeB] = &host{n: nodeB, rsp: newResponder(s, nodeB, nodeA, 0xFFFFFC-1)}
	if f == BeyondMPR {
		s.hosts[nodeB].rsp.cack = 0xFFFFFF
		s.scriptMPR()
	} else {
		s.script()
	}
	s.run()
	if s.err != nil {
		return nil, s.err
	}
	slices.SortStableFunc(s.frames, func(a, b frameAt) int {
		if a.ns != b.ns {
			return int(a.ns - b.ns)
		}
		return a.seq - b.seq
	})
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, Interfaces()...)
	if err != nil {
		return nil, err
	}
	for _, fr := range s.frames {
		if err := w.WritePacket(Start.Add(time.Duration(fr.ns)), fr.iface, fr.data, fr.comment); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
