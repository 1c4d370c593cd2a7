// Command tracegen writes the example traces of tla/traces: scripted runs
// of two real statemachine QPs (A = 0x11 requester, B = 0x22 responder)
// joined by a scripted network, as NDJSON in the statemachine/trace.go
// schema, with the harness records modelcheck also writes ("Post",
// "Deliver", "NetDrop", "NetDup", "NetTrim", "NetTrimLastHop", "NetCE",
// "NetFail", "Timer"). tla/MRCTrace.tla validates them against MRC.tla.
//
// Usage (from the repository root):
//
//	go run ./tla/tracegen -out tla/traces
//
// The QPs use the parameters of tla/MRCTrace_*.cfg: one plane with EVs
// 0x100 and 0x101, MPR window 2 PSNs, retry limit 2, max_wimm 1,
// ev_min_active 1, one good probe restores an EV, reorder guard 2, no
// congestion control, 256-byte MTU.
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

const (
	qpnA = 0x11
	qpnB = 0x22
	mtu  = 256
)

var qpns = [2]uint32{qpnA, qpnB}

var dscp = spec.DefaultProfile().DSCP

type pkt struct {
	p    wire.Packet
	from int
	port int
}

func (k *pkt) op() wire.Opcode { return k.p.BTH.Opcode }
func (k *pkt) ev() uint32      { return k.p.EV(wire.EVModeUDP) }

// run is one scripted execution and its trace.
type run struct {
	qp    [2]*sm.QP
	net   []*pkt
	now   sm.Time
	out   sm.Output
	trace []byte
	msgs  []msg
	post  int
	evs   []uint32
	fail  map[uint32]bool
}

type msg struct {
	packets int
	imm     bool
}

func newRun(faults sm.Faults, msgs ...msg) *run {
	r := &run{msgs: msgs, evs: []uint32{0x100, 0x101}, fail: map[uint32]bool{}}
	r.out.TracePackets = true
	for s := range 2 {
		a, b := netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2})
		if s == 1 {
			a, b = b, a
		}
		prof := sm.EVProfile{ID: 1, ActivePerPlane: 2, MinActive: 1, ProbeSuccesses: 1}
		for _, v := range r.evs {
			prof.EVs = append(prof.EVs, sm.EVEntry{Value: v, Port: 1})
		}
		cfg := sm.Config{
			EVProfiles: []sm.EVProfile{prof},
			CCProfiles: []sm.CCProfile{{ID: 1, Algorithm: sm.CCAlgNone}},
			Policy:     sm.Policy{ReorderThreshold: 2, Ack: sm.AckPolicy{AlwaysSkipAfter: -1}},
			Test:       sm.TestKnobs{Faults: faults, MPRUnit: 2},
		}
		q, err := sm.New(cfg, sm.QPConfig{QPN: qpns[s], Seed: uint64(qpns[s]), Addr: sm.Addressing{SrcIP: a, DstIP: b},
			MaxSendWR: 8, MaxRecvWR: 8})
		check(err)
		attr := sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 1, MPRDest: 1, MaxWIMM: 1, MaxWIMMDest: 1,
			Timeout: 4, Retry: sm.Retry{LinearCnt: 2, ExpCnt: 0}, PathMTU: mtu, DestQPN: qpns[1-s]}
		check(q.BringUp(0, attr, &r.out))
		for k := range 8 {
			check(q.PostRecv(0, uint64(1000+k), &r.out))
		}
		r.out.Reset()
		r.qp[s] = q
	}
	return r
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracegen:", err)
		os.Exit(1)
	}
}

func (r *run) record(kind string, e sm.Event) {
	e.Time = r.now
	r.trace = sm.AppendTraceRecord(r.trace, kind, e)
}

// recordPkt describes packet k as modelcheck does: psn, ev (for SACK and
// NACK the reflected EV and cack/nack PSN), opcode, flags 1 rtx, 2 trimmed,
// 4 CE.
func (r *run) recordPkt(kind string, k *pkt) {
	e := sm.Event{QPN: qpns[k.from], PSN: k.p.BTH.PSN, EV: k.ev(), Reason: uint8(k.op()), Plane: uint8(k.port - 1)}
	switch k.op() {
	case wire.OpSACK:
		e.EV, e.PSN = k.p.SETH.Entropy, k.p.SETH.CACKPSN
	case wire.OpNACK:
		e.EV, e.PSN = k.p.NETH.Entropy, k.p.NETH.NACKPSN
	}
	if k.p.BTH.Retransmit {
		e.Flags |= 1
	}
	if d := k.p.DSCP(); k.op().IsWrite() && (d == dscp.Trimmed || d == dscp.TrimmedLastHop) {
		e.Flags |= 2
	}
	if k.p.ECN() == 3 {
		e.Flags |= 4
	}
	r.record(kind, e)
}

// collect appends QP s's events to the trace and its packets to the
// network (a packet sent on a failed path is lost).
func (r *run) collect(s int) {
	for _, e := range r.out.Events {
		r.trace = e.AppendJSON(r.trace)
	}
	for i := range r.out.Packets {
		og := &r.out.Packets[i]
		k := &pkt{p: og.Pkt, from: s, port: int(og.Plane) + 1}
		if (k.op().IsWrite() || k.op() == wire.OpProbe) && s == 0 && r.fail[og.EV] {
			continue
		}
		r.net = append(r.net, k)
	}
	r.out.Reset()
}

func (r *run) postNext() {
	k := r.post
	m := r.msgs[k]
	wr := sm.WorkRequest{WRID: uint64(k + 1), Opcode: sm.OpWrite, RemoteVA: 0x10000 + uint64(k)*0x1000, RKey: 1,
		Data: make([]byte, m.packets*mtu)}
	if m.imm {
		wr.Opcode, wr.Imm = sm.OpWriteImm, uint32(0xA0+k)
	}
	r.post++
	r.record("Post", sm.Event{QPN: qpnA, MSN: uint16(k), Reason: uint8(wr.Opcode), Value: wr.WRID})
	check(r.qp[0].Post(r.now, wr, &r.out))
	r.collect(0)
}

// find returns the index of the oldest packet in flight that match accepts.
func (r *run) find(what string, match func(*pkt) bool) int {
	for i, k := range r.net {
		if match(k) {
			return i
		}
	}
	os.Stderr.Write(r.trace)
	fmt.Fprintf(os.Stderr, "tracegen: no packet in flight is %s\n", what)
	os.Exit(1)
	return -1
}

func data(psn uint32) (string, func(*pkt) bool) {
	return fmt.Sprintf("data psn %d", psn), func(k *pkt) bool { return k.op().IsWrite() && k.p.BTH.PSN == psn }
}

func ctl(op wire.Opcode) (string, func(*pkt) bool) {
	return fmt.Sprintf("opcode %#x", uint8(op)), func(k *pkt) bool { return k.op() == op }
}

func anyPkt() (string, func(*pkt) bool) { return "any packet", func(*pkt) bool { return true } }

func (r *run) deliver(what string, match func(*pkt) bool) {
	i := r.find(what, match)
	k := r.net[i]
	r.net = append(r.net[:i], r.net[i+1:]...)
	r.recordPkt("Deliver", k)
	to := 1 - k.from
	r.qp[to].Receive(r.now, k.port, &k.p, &r.out)
	r.collect(to)
}

// deliverAll delivers every packet in flight, oldest first, until none is left.
func (r *run) deliverAll() {
	for len(r.net) > 0 {
		r.deliver(anyPkt())
	}
}

// deliverAllBut delivers every packet in flight that match rejects, oldest
// first, until only packets match accepts are left.
func (r *run) deliverAllBut(what string, match func(*pkt) bool) {
	for {
		i := -1
		for j, k := range r.net {
			if !match(k) {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
		r.deliver("not "+what, func(k *pkt) bool { return k == r.net[i] })
	}
}

func (r *run) drop(what string, match func(*pkt) bool) {
	i := r.find(what, match)
	r.recordPkt("NetDrop", r.net[i])
	r.net = append(r.net[:i], r.net[i+1:]...)
}

func (r *run) dup(what string, match func(*pkt) bool) {
	i := r.find(what, match)
	r.recordPkt("NetDup", r.net[i])
	c := *r.net[i]
	r.net = append(r.net, &c)
}

func (r *run) trimMid(what string, match func(*pkt) bool)  { r.trim(false, what, match) }
func (r *run) trimLast(what string, match func(*pkt) bool) { r.trim(true, what, match) }

func (r *run) trim(lastHop bool, what string, match func(*pkt) bool) {
	i := r.find(what, match)
	c := *r.net[i]
	d, name := dscp.Trimmed, "NetTrim"
	if lastHop {
		d, name = dscp.TrimmedLastHop, "NetTrimLastHop"
	}
	c.p.IP4.TOS = d<<2 | c.p.IP4.TOS&3
	c.p.Payload = nil
	r.net = append(append(r.net[:i:i], r.net[i+1:]...), &c)
	r.recordPkt(name, &c)
}

func (r *run) markCE(what string, match func(*pkt) bool) {
	i := r.find(what, match)
	c := *r.net[i]
	c.p.IP4.TOS |= 3
	r.net = append(append(r.net[:i:i], r.net[i+1:]...), &c)
	r.recordPkt("NetCE", &c)
}

// failPath makes A's EV v a black hole for good.
func (r *run) failPath(v uint32) {
	r.fail[v] = true
	r.record("NetFail", sm.Event{QPN: qpnA, EV: v})
	kept := r.net[:0]
	for _, k := range r.net {
		if !(k.from == 0 && (k.op().IsWrite() || k.op() == wire.OpProbe) && k.ev() == v) {
			kept = append(kept, k)
		}
	}
	r.net = kept
}

// timer jumps to the earliest deadline and advances the QPs that are due.
func (r *run) timer() {
	d := min(r.qp[0].NextDeadline(), r.qp[1].NextDeadline())
	if d == sm.Never {
		fmt.Fprintln(os.Stderr, "tracegen: timer with no deadline")
		os.Exit(1)
	}
	r.now = max(r.now, d)
	r.record("Timer", sm.Event{})
	for s := range 2 {
		if r.qp[s].NextDeadline() <= r.now {
			r.qp[s].Advance(r.now, &r.out)
			r.collect(s)
		}
	}
}

func (r *run) write(dir, name string) {
	check(os.WriteFile(filepath.Join(dir, name), r.trace, 0o644))
	fmt.Printf("%s: %d records, requester %s, responder %s\n", name, countLines(r.trace), r.qp[0].State(), r.qp[1].State())
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

func main() {
	dir := flag.String("out", "tla/traces", "directory for the traces")
	flag.Parse()
	check(os.MkdirAll(*dir, 0o755))

	// basic: WR 1 (2 packets) and WR 2 (a one-packet WriteIMM); the two
	// packets of WR 1 arrive out of order; everything else in order.
	r := newRun(0, msg{2, false}, msg{1, true})
	r.postNext()
	r.postNext()
	r.deliver(data(1))
	r.deliverAll()
	r.write(*dir, "basic.ndjson")

	// recovery: a last-hop trim (NACK TRIMMED_LASTHOP, retransmission on
	// the other EV), reordering, a duplicate, a CE mark (SACK SKIP_ONCE,
	// EV to SKIP), a mid-fabric trim (NACK TRIMMED, EV to SKIP), a loss
	// recovered by timeout (EV to ASSUMED_BAD), a probe round that brings
	// the EV back, and a path failure that black-holes a later probe.
	r = newRun(0, msg{2, false}, msg{1, true})
	r.postNext()
	r.postNext()
	r.trimLast(data(0))         // PSN 0 trimmed at the last hop
	r.deliver(data(0))          // B: NACK TRIMMED_LASTHOP
	r.deliver(ctl(wire.OpNACK)) // A: queue PSN 0, retransmit it on the other EV
	r.dup(data(1))              // the network duplicates PSN 1
	r.markCE(data(1))           // one copy is CE-marked
	r.deliver(data(1))          // B: places PSN 1 (out of order)
	r.deliver(data(1))          // B: duplicate of PSN 1
	r.deliverAllBut(data(2))    // SACKs, the retransmitted PSN 0; WR 1 completes; PSN 2 goes out
	r.trimMid(data(2))          // PSN 2 trimmed mid-fabric
	r.deliver(data(2))          // B: NACK TRIMMED
	r.deliver(ctl(wire.OpNACK)) // A: EV to SKIP, retransmission of PSN 2
	r.drop(data(2))             // the retransmission is lost
	r.timer()                   // A: PSN 2 times out, its EV goes ASSUMED_BAD, retransmission
	r.deliverAll()              // WR 2 completes, WriteIMM delivered
	r.timer()                   // probe round on the ASSUMED_BAD EV
	r.deliverAll()              // probe answered m = NONE: the EV is GOOD again
	r.write(*dir, "recovery.ndjson")

	// pathfail: a path fails with a packet on it; the timeout retires the
	// EV; the retransmission goes on the other; probes on the failed path
	// are black-holed.
	r = newRun(0, msg{1, false}, msg{1, false})
	r.postNext()
	r.postNext()
	r.failPath(r.net[0].ev()) // the path of PSN 0 fails
	r.deliverAll()
	r.timer() // PSN 0 times out
	r.deliverAll()
	r.timer() // a probe round on the failed path: black-holed
	r.timer() // the next round counts the last probe as failed
	r.write(*dir, "pathfail.ndjson")

	// fault_reuse_ev: FaultReuseNACKedEV, a last-hop trim of PSN 0: the
	// retransmission goes out on the EV the NACK named (EV-ST-13).
	r = newRun(sm.FaultReuseNACKedEV, msg{1, false})
	r.postNext()
	r.trimLast(data(0))
	r.deliver(data(0))
	r.deliverAll()
	r.write(*dir, "fault_reuse_ev.ndjson")

	// fault_early_wimm: FaultEarlyWIMM: the WriteIMM's immediate data is
	// released while PSN 0 of the earlier WR is still missing (WIMM-RSP-1).
	r = newRun(sm.FaultEarlyWIMM, msg{1, false}, msg{1, true})
	r.postNext()
	r.postNext()
	r.deliver(data(1))
	r.deliverAll()
	r.write(*dir, "fault_early_wimm.ndjson")
}
