package statemachine

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// probePkt is a reliability probe from the peer to QP A on EV ev.
func probePkt(id uint16, ev uint32) *wire.Packet {
	p := &wire.Packet{}
	ipv4(p, 0, 2)
	p.SetEV(ev, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: wire.OpProbe, PKey: 0xFFFF, DestQP: qpnA}
	p.PETH = wire.PETH{ProbeID: id, SPDCID: qpnB, DPDCID: qpnA}
	return p
}

// answers feeds QP A n probes on EV ev through port and returns, per EV,
// how many answers left on it; every packet must be a probe answer.
func (o *one) answers(n, port int, ev uint32) map[uint32]int {
	o.t.Helper()
	used := map[uint32]int{}
	for k := range n {
		o.recv(port, probePkt(uint16(k), ev))
		for _, og := range o.out.Packets {
			if og.Pkt.BTH.Opcode != wire.OpSACK || !og.Pkt.SETH.PR || og.Pkt.SETH.Entropy != ev {
				o.t.Fatalf("probe %d on %#x answered by %+v", k, ev, og.Pkt.BTH)
			}
			used[og.EV]++
		}
		o.out.Reset()
	}
	return used
}

// TestProbeAnswerEV (finding F3): an answer to a probe rides the arrival
// plane's reverse EV only on evidence, newer than the last answer on that
// plane, that the reverse EV works (a SACK with m = NONE for the QP's own
// data, EV-REV-3); otherwise it leaves on an EV drawn from every EV of the
// plane that is not DENIED, ASSUMED_BAD ones included, and on another
// plane when the arrival plane is down (EV-SM-4, EV-REV-4). The old answer
// always took the reverse EV, whose death no one learns while data has
// stopped.
func TestProbeAnswerEV(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0].EVs = []EVEntry{{0x100, 1}, {0x101, 1}, {0x102, 1}, {0x103, 1}, {0x200, 2}, {0x201, 2}}
	})
	o.q.begin(0, &o.out)
	o.q.setEV(mustLookup(t, o.q, 0x101), EVAssumedBad, CauseTimeout)
	o.q.end()
	if err := o.q.SetEVState(0, 0x102, EVDenied, &o.out); err != nil {
		t.Fatal(err)
	}
	o.take()

	used := o.answers(80, 1, 0x100)
	for ev, n := range used {
		if ev>>8 != 1 {
			t.Errorf("%d answers to probes that arrived on plane 0 left on %#x", n, ev)
		}
	}
	if used[0x102] != 0 {
		t.Errorf("%d answers on the DENIED EV 0x102", used[0x102])
	}
	if used[0x100] == 0 || used[0x101] == 0 || used[0x103] == 0 {
		t.Errorf("answers without evidence %v: want every EV of the plane but the DENIED one, ASSUMED_BAD 0x101 included", used)
	}

	// Evidence: the QP's own data on plane 0, acknowledged with m = NONE.
	// Two packets: the rotation over the active set (one EV per plane)
	// puts one on each plane.
	o.write(1, 100, false)
	o.write(2, 100, false)
	var ev, psn uint32
	for _, p := range o.take() {
		if p.BTH.Opcode.IsWrite() && p.EV(wire.EVModeSTEV)>>8 == 1 {
			ev, psn = p.EV(wire.EVModeSTEV), p.BTH.PSN
		}
	}
	if ev == 0 {
		t.Fatal("no data on plane 0")
	}
	o.recv(1, sackPkt(psn, psn, psn+1, 0, ev, wire.MNone))
	o.take()
	if used := o.answers(1, 1, 0x100); used[ev] != 1 {
		t.Errorf("first answer after the SACK for data on %#x left on %v, want the reverse EV", ev, used)
	}
	if used := o.answers(80, 1, 0x100); len(used) < 3 {
		t.Errorf("answers after the evidence was used %v: want them drawn from the plane again", used)
	}

	// Plane 0 down: answers leave on plane 1.
	o.q.SetPortStatus(o.now, 0b100, 0b110, &o.out)
	o.take()
	for ev, n := range o.answers(20, 1, 0x100) {
		if ev>>8 != 2 {
			t.Errorf("%d answers on %#x while plane 0 is down", n, ev)
		}
	}
}

// TestReverseProbeAnyEV (finding F3): a QP that receives data and sends
// none probes, once per RTT, an EV drawn from all its usable EVs, backups
// included (EV-REV-2, EV-SM-4): its active set says nothing about which
// reverse paths work. The old draw from the active set alone could never
// find the one working reverse path of a plane if it was a backup EV.
func TestReverseProbeAnyEV(t *testing.T) {
	o := newOne(t, nil) // one active, one backup EV per plane
	probed := map[uint32]int{}
	T := Timeout(4)
	for k := range 60 {
		o.recv(1, dataPkt(uint32(k), wire.OpWriteMiddle, 1024, 0x100))
		o.take()
		o.advance(o.now + T)
		for _, p := range o.take() {
			if p.BTH.Opcode == wire.OpProbe {
				probed[p.EV(wire.EVModeSTEV)]++
			}
		}
	}
	for i, v := range o.q.ev.set.values {
		if probed[v] == 0 {
			t.Errorf("EV %#x (active %v) never probed in 60 RTTs: %v", v, o.q.ev.active(i), probed)
		}
	}
}

// TestDeadReverseEVRecovers is finding F3 of fabric/README.md in two QPs.
// Plane 1 is dead both ways. On plane 0 both EVs carry A's data to B, but
// of B's EVs only its backup W reaches A. B answers on its reverse EV, its
// active plane-0 EV, which it has no means to find dead: it receives data
// but its SACKs die, and its probes of its active EVs (EV-REV-2) die as
// well. A retires every EV by timeout and probes them; before EV-SM-4 B
// answered every probe on the dead reverse EV and no write ever
// completed. Now B's answers without evidence spread over the plane, one
// gets through on W and restores A's EV, B's reverse probes find W, A's
// answer to one of them reaches B, and B adopts W (EV-REV-2, EV-SM-4).
func TestDeadReverseEVRecovers(t *testing.T) {
	s := newPair(t)
	b := &s.qp[1].ev
	w := uint32(0)
	for i, v := range b.set.values {
		if b.set.plane[i] == 0 && !b.active(i) {
			w = v
		}
	}
	s.rule = func(from int, o *Outgoing) action {
		return action{drop: o.Plane == 1 || from == 1 && o.EV != w}
	}
	s.quiet = true
	const n = 200 // 2 KiB writes, at most 8 outstanding
	posted := 0
	for s.now < 20*Millisecond && len(s.comps[0]) < n {
		for ; posted < n && posted-len(s.comps[0]) < 8; posted++ {
			s.write(0, uint64(posted+1), posted%64*2048, 2048, posted == n-1)
		}
		s.run(s.now + 10*Microsecond)
	}
	if len(s.comps[0]) != n || len(s.comps[1]) != 1 {
		t.Fatalf("%d of %d writes completed, %d receive completions: the QP stopped", len(s.comps[0]), n, len(s.comps[1]))
	}
	for k := n - 64; k < n; k++ {
		checkData(t, s, uint64(k+1), k%64*2048, 2048)
	}
	if got := b.rev[0]; got < 0 || b.set.values[got] != w {
		t.Errorf("B's reverse EV on plane 0 is %d, want the one working reverse EV %#x", got, w)
	}
}

// TestRetransmittedDuplicateAnswer (EV-SM-6): a retransmission of a PSN
// the responder already holds says its earlier answer did not reach the
// requester, so its SACK is answered as a probe is (EV-SM-4): on an EV
// drawn from the arrival plane, not the reverse EV that may be dead. A
// duplicate without the rtx flag (a copy the fabric made) still takes the
// reverse EV, and duplicates count as received data for the reverse
// probe of EV-REV-2.
func TestRetransmittedDuplicateAnswer(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0].EVs = []EVEntry{{0x100, 1}, {0x101, 1}, {0x102, 1}, {0x103, 1}, {0x200, 2}, {0x201, 2}}
	})
	o.recv(1, dataPkt(0, wire.OpWriteOnly, 100, 0x100))
	first := o.take() // a SACK, and the transport ACK of the message
	if len(first) == 0 || first[0].BTH.Opcode != wire.OpSACK {
		t.Fatalf("answer to PSN 0: %v", summarize(first))
	}
	rev := first[0].EV(wire.EVModeSTEV)
	sacks := func(rtx bool, n int) map[uint32]int {
		used := map[uint32]int{}
		for range n {
			p := dataPkt(0, wire.OpWriteOnly, 100, 0x100)
			p.BTH.Retransmit = rtx
			o.recv(1, p)
			for _, og := range o.out.Packets {
				if og.Pkt.BTH.Opcode != wire.OpSACK || og.Pkt.SETH.CACKPSN != 0 || og.Pkt.SETH.PR {
					t.Fatalf("duplicate of PSN 0 answered by %+v", og.Pkt.BTH)
				}
				used[og.EV]++
			}
			o.out.Reset()
		}
		return used
	}
	if used := sacks(false, 20); used[rev] != 20 {
		t.Errorf("fabric copies of PSN 0 answered on %v, want all on the reverse EV %#x (EV-REV-4)", used, rev)
	}
	used := sacks(true, 80)
	for ev, n := range used {
		if ev>>8 != 1 {
			t.Errorf("%d answers to retransmissions that arrived on plane 0 left on %#x", n, ev)
		}
	}
	if len(used) < 4 {
		t.Errorf("answers to retransmitted duplicates %v: want them drawn from every EV of plane 0 (EV-SM-6)", used)
	}
	// Only duplicates arrive from now on; the reverse probe still runs.
	o.advance(o.now + Timeout(4))
	o.take()
	probes := 0
	for range 4 {
		o.recv(1, dataPkt(0, wire.OpWriteOnly, 100, 0x100))
		o.advance(o.now + Timeout(4))
		for _, p := range o.take() {
			if p.BTH.Opcode == wire.OpProbe {
				probes++
			}
		}
	}
	if probes == 0 {
		t.Error("a QP receiving only duplicates sent no reverse-path probe (EV-REV-2, EV-SM-6)")
	}
}
