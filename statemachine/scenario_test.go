package statemachine

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Scenario tests drive QP A (requester) and QP B (responder) back to back
// through a hand-written fault schedule and compare the whole trace with a
// reviewed expectation. Set MRC_SCENARIO_PRINT=1 to print traces.

func checkTrace(t *testing.T, s *sim, want string) {
	t.Helper()
	if os.Getenv("MRC_SCENARIO_PRINT") != "" {
		t.Log("\n" + strings.Join(s.log, "\n"))
	}
	w := strings.Split(strings.TrimSpace(want), "\n")
	for i := range w {
		w[i] = strings.TrimSpace(w[i])
	}
	got := make([]string, len(s.log))
	for i := range s.log {
		got[i] = strings.TrimSpace(s.log[i])
	}
	if d := cmp.Diff(w, got); d != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", d)
	}
}

// checkData verifies that B's memory holds what A wrote at [off, off+n).
func checkData(t *testing.T, s *sim, wrid uint64, off, n int) {
	t.Helper()
	for k := 0; k < n; k++ {
		if got, want := s.mem[1][off+k], byte(int(wrid)*7+k); got != want {
			t.Fatalf("byte %d of WR %d: got %#x, want %#x", k, wrid, got, want)
		}
	}
}

func dataPSN(o *Outgoing) (uint32, bool) {
	return o.Pkt.BTH.PSN, o.Pkt.BTH.Opcode.IsWrite()
}

// TestScenarioLossInferred: PSN 1 is lost; the SACK for PSN 3 shows PSN 3
// received two PSNs beyond it, so with reorder_guard 2 the requester
// retransmits PSN 1 at once, oldest gap first, without waiting for its
// timer (LR-SACK-2, LR-RTX-4, LR-RTX-1, LR-RTX-3, RSP-SACK-2). The loss
// implicates EV 0x201, which PSN 1 went out on: it becomes ASSUMED_BAD at
// once, a backup of its plane takes its place, and a probe brings it back
// (EV-SM-5, EV-ST-5, EV-REP-1, EV-PRB-1, EV-ST-7).
func TestScenarioLossInferred(t *testing.T) {
	ca := testConfig(qpnA)
	ca.Policy.ReorderThreshold = 2
	s := newSim(t, ca, testConfig(qpnB), testAttr(qpnB), testAttr(qpnA))
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		return action{drop: from == 0 && w && psn == 1 && !o.Pkt.BTH.Retransmit}
	}
	s.write(0, 1, 0, 4*1024, false)
	s.run(40 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_MIDDLE psn=1 msn=0 ev=0x201 DROPPED
		0.0 A>B WRITE_MIDDLE psn=2 msn=0 ev=0x201
		0.0 A>B WRITE_LAST psn=3 msn=0 ev=0x100
		1.0 B>A SACK cack=0 ack=0 ev=0x100
		1.0 B>A SACK cack=0 ack=2 bm@1=10 ev=0x201
		1.0 B>A SACK cack=0 ack=3 bm@1=110 ev=0x100
		2.0 A EV 0x201 GOOD->ASSUMED_BAD (inferred loss)
		2.0 A EV 0x201 replaced by 0x200
		2.0 A>B WRITE_MIDDLE psn=1 msn=0 rtx ev=0x100
		3.0 B>A SACK cack=3 ack=1 ev=0x100
		3.0 B>A ACK psn=3 syn=0x1f msn=1 ev=0x100
		4.0 A send-completion wr=1 SUCCESS
		17.4 B>A PROBE id=0x2 ev=0x200
		18.4 A>B SACK cack=16777215 probe=0x2 ev=0x200
		18.4 A>B PROBE id=0x803 ev=0x201
		19.4 B>A SACK cack=3 probe=0x803 ev=0x201
		20.4 A EV 0x201 ASSUMED_BAD->GOOD (probe ok)
	`)
	checkData(t, s, 1, 0, 4*1024)
}

// TestScenarioTrimmed: PSN 1 is trimmed mid-fabric. The responder NACKs
// TRIMMED (RSP-NACK-1); the requester moves the EV to SKIP, retransmits at
// once on another EV (LR-NACK-1, EV-ST-3, EV-ST-13) and counts a retry
// (LR-NACK-5); the SKIP EV is GOOD again when the rotation ends (EV-ST-6).
// A last-hop trim of PSN 3 leaves its EV alone.
func TestScenarioTrimmed(t *testing.T) {
	s := newPair(t)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		if from == 0 && w && !o.Pkt.BTH.Retransmit {
			return action{trim: psn == 1 || psn == 3, lastHop: psn == 3}
		}
		return action{}
	}
	s.write(0, 1, 0, 5*1024, false)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_MIDDLE psn=1 msn=0 ev=0x201 TRIMMED
		0.0 A>B WRITE_MIDDLE psn=2 msn=0 ev=0x201
		0.0 A>B WRITE_MIDDLE psn=3 msn=0 ev=0x100 TRIMMED
		0.0 A>B WRITE_LAST psn=4 msn=0 ev=0x201
		1.0 B>A SACK cack=0 ack=0 ev=0x100
		1.0 B>A NACK TRIMMED psn=1 ev=0x201
		1.0 B>A SACK cack=0 ack=2 bm@1=10 ev=0x201
		1.0 B>A NACK TRIMMED_LASTHOP psn=3 ev=0x100
		1.0 B>A SACK cack=0 ack=4 bm@1=1010 ev=0x201
		2.0 A EV 0x201 GOOD->SKIP (TRIMMED)
		2.0 A retry 1
		2.0 A>B WRITE_MIDDLE psn=1 msn=0 rtx ev=0x100
		2.0 A retry 2
		2.0 A EV 0x201 SKIP->GOOD (rotation)
		2.0 A>B WRITE_MIDDLE psn=3 msn=0 rtx ev=0x201
		3.0 B>A SACK cack=2 ack=1 bm@3=10 ev=0x100
		3.0 B>A SACK cack=4 ack=3 ev=0x201
		3.0 B>A ACK psn=4 syn=0x1f msn=1 ev=0x201
		4.0 A send-completion wr=1 SUCCESS
	`)
	checkData(t, s, 1, 0, 5*1024)
}

// TestScenarioECN: PSN 0 arrives CE-marked; the SACK answering it carries
// m = SKIP_ONCE (RSP-SACK-3) and the requester skips that EV until the end
// of the rotation (EV-ST-2, EV-ST-6).
func TestScenarioECN(t *testing.T) {
	s := newPair(t)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		return action{ce: from == 0 && w && psn == 0}
	}
	s.write(0, 1, 0, 1024, false)
	s.run(3 * Microsecond)
	s.write(0, 2, 1024, 3*1024, false)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_ONLY psn=0 msn=0 ev=0x100 CE
		1.0 B>A SACK cack=0 ack=0 ev=0x100 m=SKIP_ONCE
		1.0 B>A ACK psn=0 syn=0x1f msn=1 ev=0x100
		2.0 A EV 0x100 GOOD->SKIP (SKIP_ONCE)
		2.0 A send-completion wr=1 SUCCESS
		3.0 A>B WRITE_FIRST psn=1 msn=1 ev=0x201
		3.0 A EV 0x100 SKIP->GOOD (rotation)
		3.0 A>B WRITE_MIDDLE psn=2 msn=1 ev=0x201
		3.0 A>B WRITE_LAST psn=3 msn=1 ev=0x100
		4.0 B>A SACK cack=1 ack=1 ev=0x201
		4.0 B>A SACK cack=2 ack=2 ev=0x201
		4.0 B>A SACK cack=3 ack=3 ev=0x100
		4.0 B>A ACK psn=3 syn=0x1f msn=2 ev=0x100
		5.0 A send-completion wr=2 SUCCESS
	`)
}

// TestScenarioDuplicate: PSN 1 is delivered twice. The duplicate is
// re-acknowledged and not placed again (RSP-DUP-1, RSP-DUP-2).
func TestScenarioDuplicate(t *testing.T) {
	s := newPair(t)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		return action{dup: from == 0 && w && psn == 1}
	}
	s.write(0, 1, 0, 3*1024, false)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_MIDDLE psn=1 msn=0 ev=0x201
		0.0 A>B WRITE_LAST psn=2 msn=0 ev=0x201
		1.0 B>A SACK cack=0 ack=0 ev=0x100
		1.0 B>A SACK cack=1 ack=1 ev=0x201
		1.0 B>A SACK cack=2 ack=2 ev=0x201
		1.0 B>A ACK psn=2 syn=0x1f msn=1 ev=0x201
		1.1 B>A SACK cack=2 ack=1 ev=0x201
		2.0 A send-completion wr=1 SUCCESS
	`)
	placed := 0
	for _, e := range s.events[1] {
		if e.Kind == EvPlaced {
			placed++
		}
	}
	if placed != 3 {
		t.Errorf("placed %d packets, want 3 (no duplicate placement, RSP-DUP-1)", placed)
	}
}

// TestScenarioReorder: PSN 0 takes 3 µs longer than PSNs 1 and 2. The
// responder places each on arrival (RSP-RCV-3), reports the out-of-order
// PSNs in the bitmap, and the requester does not retransmit within the
// reorder guard (LR-RTX-4).
func TestScenarioReorder(t *testing.T) {
	s := newPair(t)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		if from == 0 && w && psn == 0 {
			return action{extra: 3 * Microsecond}
		}
		return action{}
	}
	s.write(0, 1, 0, 3*1024, false)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_MIDDLE psn=1 msn=0 ev=0x201
		0.0 A>B WRITE_LAST psn=2 msn=0 ev=0x201
		1.0 B>A SACK cack=16777215 ack=1 bm@0=10 ev=0x201
		1.0 B>A SACK cack=16777215 ack=2 bm@0=110 ev=0x201
		4.0 B>A SACK cack=2 ack=0 ev=0x100
		4.0 B>A ACK psn=2 syn=0x1f msn=1 ev=0x100
		5.0 A send-completion wr=1 SUCCESS
	`)
	checkData(t, s, 1, 0, 3*1024)
}

// TestScenarioEVTimeout: the path of EV 0x201 drops everything. The packet
// sent on it times out after T = 1.024 µs × 2^4 (LR-TMR-1, LR-TMR-5); the EV
// goes ASSUMED_BAD and is replaced by its plane's backup (EV-ST-5,
// EV-REP-1); it is probed every T (EV-PRB-1, EV-PRB-2) and, once the path
// heals, restored by one answered probe (EV-ST-7) into the backup set
// (EV-REP-2).
func TestScenarioEVTimeout(t *testing.T) {
	s := newPair(t)
	healed := false
	s.rule = func(from int, o *Outgoing) action {
		return action{drop: from == 0 && o.EV == 0x201 && !healed}
	}
	s.write(0, 1, 0, 2*1024, false)
	s.run(40 * Microsecond)
	healed = true
	s.run(60 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_LAST psn=1 msn=0 ev=0x201 DROPPED
		1.0 B>A SACK cack=0 ack=0 ev=0x100
		16.4 A timeout psn=1 ev=0x201
		16.4 A EV 0x201 GOOD->ASSUMED_BAD (timeout)
		16.4 A EV 0x201 replaced by 0x200
		16.4 A retry 1
		16.4 A>B WRITE_LAST psn=1 msn=0 rtx ev=0x100
		17.4 B>A SACK cack=1 ack=1 ev=0x100
		17.4 B>A ACK psn=1 syn=0x1f msn=1 ev=0x100
		17.4 B>A PROBE id=0x2 ev=0x200
		18.4 A send-completion wr=1 SUCCESS
		18.4 A>B SACK cack=16777215 probe=0x2 ev=0x200
		32.8 A>B PROBE id=0x803 ev=0x201 DROPPED
		49.2 A>B PROBE id=0x1003 ev=0x201
		50.2 B>A SACK cack=1 probe=0x1003 ev=0x201
		51.2 A EV 0x201 ASSUMED_BAD->GOOD (probe ok)
	`)
	checkData(t, s, 1, 0, 2*1024)
}

// TestScenarioPlaneDown: the peer reports port 2 down (EP-PSU-3); the
// requester sends only on plane 0's EVs (EV-PORT-2) without changing any
// EV state (EV-PORT-4), and uses plane 1 again when it comes back
// (EV-PORT-3).
func TestScenarioPlaneDown(t *testing.T) {
	s := newPair(t)
	s.qp[0].SetPortStatus(s.now, 0b110, 0b010, &s.out)
	s.collect(0)
	s.write(0, 1, 0, 3*1024, false)
	s.run(5 * Microsecond)
	s.qp[0].SetPortStatus(s.now, 0b110, 0b110, &s.out)
	s.collect(0)
	s.write(0, 2, 4096, 3*1024, false)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A plane 1 up=0
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_MIDDLE psn=1 msn=0 ev=0x100
		0.0 A>B WRITE_LAST psn=2 msn=0 ev=0x100
		1.0 B>A SACK cack=0 ack=0 ev=0x100
		1.0 B>A SACK cack=1 ack=1 ev=0x100
		1.0 B>A SACK cack=2 ack=2 ev=0x100
		1.0 B>A ACK psn=2 syn=0x1f msn=1 ev=0x100
		2.0 A send-completion wr=1 SUCCESS
		5.0 A plane 1 up=1
		5.0 A>B WRITE_FIRST psn=3 msn=1 ev=0x100
		5.0 A>B WRITE_MIDDLE psn=4 msn=1 ev=0x201
		5.0 A>B WRITE_LAST psn=5 msn=1 ev=0x201
		6.0 B>A SACK cack=3 ack=3 ev=0x100
		6.0 B>A SACK cack=4 ack=4 ev=0x201
		6.0 B>A SACK cack=5 ack=5 ev=0x201
		6.0 B>A ACK psn=5 syn=0x1f msn=2 ev=0x201
		7.0 A send-completion wr=2 SUCCESS
	`)
}

// TestScenarioRetryExhausted: nothing reaches the responder. With
// linear_cnt 1 and exp_cnt 1 the timer runs T, then 2T (LR-TMR-2,
// LR-TMR-4); the third retry event exceeds the budget and the QP enters
// ERROR, completing the oldest WR with RETRY_EXC_ERR and flushing the rest
// (LR-TMR-7, QP-ST-10, CMP-ERR-1, CMP-ERR-2).
// Only the oldest outstanding PSN's timeout is charged (LR-TMR-6): the
// two packets time out together but count once per round.
func TestScenarioRetryExhausted(t *testing.T) {
	ca := testConfig(qpnA)
	ca.EVProfiles[0].MinActive = 4 // keep the EVs usable: the path is fine, the peer is gone
	aa := testAttr(qpnB)
	aa.Retry = Retry{LinearCnt: 1, ExpCnt: 1}
	s := newSim(t, ca, testConfig(qpnB), aa, testAttr(qpnA))
	s.rule = func(from int, o *Outgoing) action { return action{drop: from == 0} }
	s.write(0, 1, 0, 1024, false)
	s.write(0, 2, 1024, 1024, false)
	s.run(Never)
	checkTrace(t, s, `
		0.0 A>B WRITE_ONLY psn=0 msn=0 ev=0x100 DROPPED
		0.0 A>B WRITE_ONLY psn=1 msn=1 ev=0x201 DROPPED
		16.4 A timeout psn=0 ev=0x100
		16.4 A retry 1
		16.4 A timeout psn=1 ev=0x201
		16.4 A>B WRITE_ONLY psn=0 msn=0 rtx ev=0x201 DROPPED
		16.4 A>B WRITE_ONLY psn=1 msn=1 rtx ev=0x100 DROPPED
		32.8 A timeout psn=0 ev=0x201
		32.8 A retry 2
		32.8 A timeout psn=1 ev=0x100
		32.8 A>B WRITE_ONLY psn=0 msn=0 rtx ev=0x100 DROPPED
		32.8 A>B WRITE_ONLY psn=1 msn=1 rtx ev=0x201 DROPPED
		65.5 A timeout psn=0 ev=0x100
		65.5 A retry 3
		65.5 A QP RTS->ERROR
		65.5 A send-completion wr=1 RETRY_EXC_ERR
		65.5 A send-completion wr=2 WR_FLUSH_ERR
		65.5 A recv-completion wr=1000 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1001 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1002 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1003 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1004 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1005 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1006 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
		65.5 A recv-completion wr=1007 WR_FLUSH_ERR imm=0x0 rqmsn=0 len=0
	`)
	if st := s.qp[0].State(); st != StateError {
		t.Errorf("QP A in %s, want ERROR", st)
	}
}

// TestScenarioWIMMReorder: a plain WRITE and two WriteIMMs; the WRITE's
// packet arrives last. The immediates are held until every earlier PSN is
// received and then delivered once each, in RQMSN order, consuming receive
// WRs (WIMM-RSP-1, WIMM-RSP-2, WIMM-RSP-3, CMP-RCV-1); send completions
// follow the cumulative ACK in post order (CMP-SND-1, CMP-SND-2).
func TestScenarioWIMMReorder(t *testing.T) {
	s := newPair(t)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		switch {
		case from == 0 && w && psn == 0:
			return action{extra: 5 * Microsecond}
		case from == 0 && w && psn == 1:
			return action{extra: 2 * Microsecond}
		}
		return action{}
	}
	s.write(0, 1, 0, 1024, false)
	s.write(0, 2, 1024, 10, true)
	s.write(0, 3, 2048, 10, true)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_ONLY psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_ONLY_IMM psn=1 msn=1 rqmsn=0 ev=0x201
		0.0 A>B WRITE_ONLY_IMM psn=2 msn=2 rqmsn=1 ev=0x201
		1.0 B>A SACK cack=16777215 ack=2 bm@0=100 ev=0x201
		3.0 B>A SACK cack=16777215 ack=1 bm@0=110 ev=0x201
		6.0 B>A SACK cack=2 ack=0 ev=0x100
		6.0 B>A ACK psn=2 syn=0x1f msn=3 ev=0x100
		6.0 B recv-completion wr=1000 SUCCESS imm=0xa2 rqmsn=0 len=10
		6.0 B recv-completion wr=1001 SUCCESS imm=0xa3 rqmsn=1 len=10
		7.0 A send-completion wr=1 SUCCESS
		7.0 A send-completion wr=2 SUCCESS
		7.0 A send-completion wr=3 SUCCESS
	`)
}

// TestScenarioWraparound: PSNs start two below 2^24 and wrap; PSN 0 (the
// third packet) is lost and recovered by timeout; tracking, bitmaps and the
// window work across the wrap (WIRE-BTH-4, RSP-RCV-5, REQ-PSN-1).
func TestScenarioWraparound(t *testing.T) {
	aa, ab := testAttr(qpnB), testAttr(qpnA)
	aa.SQPSN, ab.RQPSN = 1<<24-2, 1<<24-2
	s := newSim(t, testConfig(qpnA), testConfig(qpnB), aa, ab)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		return action{drop: from == 0 && w && psn == 0 && !o.Pkt.BTH.Retransmit}
	}
	s.write(0, 1, 0, 4*1024, false)
	s.run(25 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=16777214 msn=0 ev=0x100
		0.0 A>B WRITE_MIDDLE psn=16777215 msn=0 ev=0x201
		0.0 A>B WRITE_MIDDLE psn=0 msn=0 ev=0x201 DROPPED
		0.0 A>B WRITE_LAST psn=1 msn=0 ev=0x100
		1.0 B>A SACK cack=16777214 ack=16777214 ev=0x100
		1.0 B>A SACK cack=16777215 ack=16777215 ev=0x201
		1.0 B>A SACK cack=16777215 ack=1 bm@0=10 ev=0x100
		16.4 A timeout psn=0 ev=0x201
		16.4 A EV 0x201 GOOD->ASSUMED_BAD (timeout)
		16.4 A EV 0x201 replaced by 0x200
		16.4 A retry 1
		16.4 A>B WRITE_MIDDLE psn=0 msn=0 rtx ev=0x100
		17.4 B>A SACK cack=1 ack=0 ev=0x100
		17.4 B>A ACK psn=1 syn=0x1f msn=1 ev=0x100
		17.4 B>A PROBE id=0x2 ev=0x200
		18.4 A send-completion wr=1 SUCCESS
		18.4 A>B SACK cack=16777215 probe=0x2 ev=0x200
	`)
	checkData(t, s, 1, 0, 4*1024)
}

// TestScenarioUnexpOnSACKedPSN: a two-packet WriteIMM whose last packet
// arrives first, at a responder with no receive WR. The responder SACKs
// the last packet, then answers the first with UNEXP_EVENT naming the
// WriteIMM's last PSN (WIMM-RSP-3, RSP-NACK-5), which the requester holds
// selectively acknowledged. The requester fails at once with REM_OP_ERR
// (LR-NACK-4) instead of spending its retries on a responder in ERROR
// (AMB-100).
func TestScenarioUnexpOnSACKedPSN(t *testing.T) {
	s := newSimRecv(t, testConfig(qpnA), testConfig(qpnB), testAttr(qpnB), testAttr(qpnA), [2]int{0, 0})
	s.rule = func(from int, o *Outgoing) action {
		if psn, w := dataPSN(o); from == 0 && w && psn == 0 {
			return action{extra: 2 * Microsecond}
		}
		return action{}
	}
	s.write(0, 1, 0, 2048, true)
	s.run(10 * Microsecond)
	checkTrace(t, s, `
		0.0 A>B WRITE_FIRST psn=0 msn=0 ev=0x100
		0.0 A>B WRITE_LAST_IMM psn=1 msn=0 rqmsn=0 ev=0x201
		1.0 B>A SACK cack=16777215 ack=1 bm@0=10 ev=0x201
		3.0 B>A NACK UNEXP_EVENT psn=1 ev=0x201
		3.0 B QP RTS->ERROR
		4.0 A QP RTS->ERROR
		4.0 A send-completion wr=1 REM_OP_ERR
	`)
}
