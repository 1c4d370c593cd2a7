package modelcheck

import (
	"bytes"
	"slices"
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// seeded runs cfg with fault f and requires a counterexample of exactly
// steps steps (breadth-first: the minimal one) whose step violates want;
// first requires want to be the first invariant reported.
func seeded(t *testing.T, cfg Config, f sm.Faults, want string, steps int, first bool) {
	t.Helper()
	cfg.Faults = f
	r, err := Check(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Violation
	if v == nil {
		t.Fatalf("seeded bug %#x not caught by %s: %d states, %d distinct, depth %d", f, want, r.States, r.Distinct, r.Depth)
	}
	t.Logf("%d states, %d distinct before the counterexample:\n%s", r.States, r.Distinct, v)
	if first && v.Invariant != want || !slices.Contains(v.All, want) {
		t.Errorf("violated %v (first %s), want %s", v.All, v.Invariant, want)
	}
	if v.Len() != steps {
		t.Errorf("counterexample of %d steps, want the minimal %d", v.Len(), steps)
	}
}

// TestSeededPlaceShifted: the responder places the second packet of a
// WRITE one packet lower, over the first. Every PSN is placed once and
// the completion follows the placements, so only the bytes in memory show
// it (RSP-RCV-3, CMP-SND-1).
func TestSeededPlaceShifted(t *testing.T) {
	seeded(t, faultHunt(0), sm.FaultPlaceShifted, InvMemoryMatchesWrites, 4, true)
}

// TestSeededFatalRecoverableNACK: a recoverable NACK fails the QP. Every
// other invariant accepts any ERROR; ErrorJustified requires its cause in
// the step (QP-ST-10, LR-NACK-1, LR-NACK-5).
func TestSeededFatalRecoverableNACK(t *testing.T) {
	seeded(t, faultHunt(0), sm.FaultFatalRecoverableNACK, InvErrorJustified, 4, true)
}

// TestSeededBeyondMPRAtReceiver: the requester-side window check is not
// alone in catching a requester beyond its window: the responder's view
// (its cumulative ACK + MPR) catches it in the same step (MPR-WIN-1).
func TestSeededBeyondMPRAtReceiver(t *testing.T) {
	seeded(t, faultHunt(0), sm.FaultBeyondMPR, InvWindowAtReceiver, 2, false)
}

// TestSeededResponderWindowOffByOne: a responder that accepts one PSN
// beyond its window places it; only an adversarial requester sends one
// (a correct requester never does), and ResponderWindow catches the
// placement (RSP-RCV-6, RSP-NACK-4). The correct responder passes the same
// configuration in TestConfigurations (adversarial-requester).
func TestSeededResponderWindowOffByOne(t *testing.T) {
	c := adversary("adversary-hunt")
	c.Bounds = Bounds{Injects: 2, Timers: 1}
	seeded(t, c, sm.FaultResponderWindowOffByOne, InvResponderWindow, 2, true)
	// With a correct requester the same bug goes unseen.
	c = base("correct-requester")
	c.Faults = sm.FaultResponderWindowOffByOne
	c.Bounds = Bounds{Drops: 1, Timers: 1}
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation != nil {
		t.Errorf("a correct requester reached the off-by-one window:\n%s", r.Violation)
	}
}

// TestDataTags: each PSN's bytes name it; any other bytes are garbage.
func TestDataTags(t *testing.T) {
	c, err := newChecker(base("tags"))
	if err != nil {
		t.Fatal(err)
	}
	for s := range 2 {
		for p := range uint32(maxPSNs) {
			if got := c.tagOf(s, payload(s, p)); got != uint8(p+1) {
				t.Errorf("side %d psn %d: tag %d", s, p, got)
			}
			if got := c.tagOf(1-s, payload(s, p)); got != tagGarbage {
				t.Errorf("side %d psn %d read as side %d: tag %d, want garbage", s, p, 1-s, got)
			}
			b := payload(s, p)
			b[pathMTU-1]++
			if got := c.tagOf(s, b); got != tagGarbage {
				t.Errorf("side %d psn %d with one byte changed: tag %d", s, p, got)
			}
			if got := c.tagOf(s, payload(s, p)[:pathMTU-1]); got != tagGarbage {
				t.Errorf("short payload: tag %d", got)
			}
		}
	}
	var g ghost
	g.write(placement{va: baseVA + pathMTU, n: pathMTU, tag: 2})
	if ok, _, _ := g.memoryOK(1, 2); !ok {
		t.Error("aligned write of psn 1 not seen")
	}
	g.write(placement{va: baseVA + pathMTU + 1, n: pathMTU, tag: 2})
	if ok, p, tag := g.memoryOK(1, 2); ok || p != 1 || tag != tagGarbage {
		t.Errorf("misaligned write: ok=%v p=%d tag=%d", ok, p, tag)
	}
	g.write(placement{va: baseVA - pathMTU, n: pathMTU, tag: 1})
	if ok, _, _ := g.memoryOK(0, 0); ok {
		t.Error("a write below the buffer is not seen")
	}
}

// TestSeededNoBackoff: without the exponential backoff the retransmission
// after a retry beyond linear_cnt times out after T instead of 2T; the
// ghost's own send times and retry count catch it (LR-TMR-4).
func TestSeededNoBackoff(t *testing.T) {
	seeded(t, rtoBackoff("rto-backoff-hunt"), sm.FaultNoBackoff, InvRTOBackoff, 5, true)
}

// TestWorkingPathCanFail: with a recoverable NACK made fatal, the search of
// trim (a working-path configuration) reaches ERROR, which
// TestConfigurations' working-path check reports; the correct code never
// does (QP-ST-10).
func TestWorkingPathCanFail(t *testing.T) {
	cfg := Configurations()[2]
	if cfg.Name != "trim" || !workingPath[cfg.Name] {
		t.Fatalf("configuration 2 is %s", cfg.Name)
	}
	cfg.Faults = sm.FaultFatalRecoverableNACK
	r, err := check(cfg, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := errorsReached(r); len(e) == 0 {
		t.Errorf("the fatal NACK reached no ERROR: %v", r.ReachedList())
	} else {
		t.Logf("reached %v (first violation: %s)", e, r.Violation.Invariant)
	}
}

// TestSeededStallTimerKept: the stall timer keeps running after the wait
// it times has ended (a probe restored the EV the waiting PSN could take),
// and its later expiry spends a retry no loss caused. The QP reports that
// expiry (EvStallTimeout) and charges it consistently, so a ghost that
// counted the QP's own event agreed with it (it passed the same bug in
// 776 572 distinct states); the checker's own stall timer, armed from the
// queued PSNs it sees and fired by timer steps, counts no such retry
// (LR-SM-3, LR-TMR-6).
func TestSeededStallTimerKept(t *testing.T) {
	c := base("stall-kept")
	c.Msgs[0] = []Msg{{Packets: 1}, {Packets: 1, Imm: true}}
	c.Bounds = Bounds{Drops: 1, Trims: 1, Timers: 3}
	seeded(t, c, sm.FaultStallTimerKept, InvRetryBudget, 15, true)
}

// TestSeededStallDequeues: a stall timer's expiry is taken for the
// waiting PSN's retransmission: the PSN counts as in flight again and
// nothing is sent. The step that queued the PSN (its timeout) was long
// before; NACKedPSNQueued holds the obligation until a retransmission of
// the PSN reaches the network, so the later step that drops the PSN from
// the queue fails it. A check made only in the queueing step, with the
// obligation ended by the stall expiry, passed this bug (43 564 distinct
// states) (LR-SM-3, LR-TMR-5, LR-RTX-1).
func TestSeededStallDequeues(t *testing.T) {
	seeded(t, stallConfig(t, "stall-livelock"), sm.FaultStallDequeues, InvNACKedPSNQueued, 11, true)
}

// hostile is the adversary of adversarial-requester-hostile (resends and
// PSNs of no WR) with n injections.
func hostile(name string, n int) Config {
	c := adversary(name)
	c.AdversaryMoves = AdvResend | AdvForge
	c.Bounds = Bounds{Injects: n, Timers: 1}
	return c
}

// TestSeededRtxTakenAsNew: a responder that decides by the rtx flag that
// a packet is new places a PSN it already holds twice (RSP-DUP-3,
// RSP-DUP-1): the adversary sends PSN 0, then PSN 0 resent; both are
// delivered (the second one also lies at the cumulative ACK, outside the
// window: ResponderWindow).
func TestSeededRtxTakenAsNew(t *testing.T) {
	seeded(t, hostile("rtx-hunt", 2), sm.FaultRtxTakenAsNew, InvNoDuplicatePlacement, 4, true)
}

// TestSeededHalfSpaceOffByOne: the PSN 2^23 from the cumulative ACK is a
// duplicate (RSP-RCV-6, RSP-DUP-2); a responder that takes it for one
// ahead of its window NACKs it PSN_OOR_WINDOW. Nothing is placed, so only
// the answer shows it.
func TestSeededHalfSpaceOffByOne(t *testing.T) {
	seeded(t, hostile("half-space-hunt", 1), sm.FaultHalfSpaceOffByOne, InvResponderAnswers, 2, true)
}

// TestSeededRingAlias: PSN 1 + 64 lies far beyond the window (RSP-RCV-6,
// RSP-NACK-4) and shares PSN 1's slot of the 64-PSN tracking ring; a
// responder that looks it up there while PSN 1 is held answers it with a
// SACK as a duplicate.
func TestSeededRingAlias(t *testing.T) {
	seeded(t, hostile("ring-alias-hunt", 2), sm.FaultRingAlias, InvResponderAnswers, 4, true)
}

// TestFirstTransmissionAdversaryMissesHostileFaults: the adversary of
// adversarial-requester (first transmissions of PSNs 0-3 in any order,
// duplicated, 4 injections) passes a responder with all three faults the
// hostile moves catch above.
func TestFirstTransmissionAdversaryMissesHostileFaults(t *testing.T) {
	c := adversary("first-transmissions")
	c.Bounds = Bounds{Injects: 4, Timers: 1}
	c.Faults = sm.FaultRtxTakenAsNew | sm.FaultHalfSpaceOffByOne | sm.FaultRingAlias
	r, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation != nil {
		t.Fatalf("first transmissions alone caught a hostile-input fault:\n%s", r.Violation)
	}
	t.Logf("%d states, %d distinct, no violation", r.States, r.Distinct)
}

// TestAdversaryMoves: the hostile adversary's packets are the first
// transmissions of PSNs 0-3, each of them again as a retransmission (rtx
// flag, the retransmit class, on the other EV, same bytes and address),
// and PSN 0's packet under the three PSNs of no WR (forgedPSNs), also
// across the 2^24 wrap.
func TestAdversaryMoves(t *testing.T) {
	for _, start := range []uint32{0, 1<<24 - 2} {
		cfg := hostile("moves", 1)
		cfg.StartPSN = start
		c, err := newChecker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const n = 4
		if len(c.tmpl) != 2*n+len(forgedPSNs) {
			t.Fatalf("start %#x: %d packets, want %d", start, len(c.tmpl), 2*n+len(forgedPSNs))
		}
		for i := range n {
			first, re := &c.tmpl[i], &c.tmpl[n+i]
			if first.BTH.PSN != c.abs(uint32(i)) || first.BTH.Retransmit || re.BTH.PSN != first.BTH.PSN || !re.BTH.Retransmit {
				t.Errorf("start %#x, psn %d: first %#x rtx %v, resent %#x rtx %v", start, i, first.BTH.PSN, first.BTH.Retransmit,
					re.BTH.PSN, re.BTH.Retransmit)
			}
			if re.DSCP() != dscp.TrimmableRetx || re.EV(wire.EVModeUDP) == first.EV(wire.EVModeUDP) ||
				re.RETH.VA != first.RETH.VA || !bytes.Equal(re.Payload, first.Payload) {
				t.Errorf("start %#x, psn %d: the resent packet (DSCP %d, EV %#x) is not the first one (EV %#x) resent", start, i,
					re.DSCP(), re.EV(wire.EVModeUDP), first.EV(wire.EVModeUDP))
			}
		}
		for j, r := range forgedPSNs {
			k := &c.tmpl[2*n+j]
			if k.BTH.PSN != wire.PSNAdd(start, r) || k.RETH.VA != c.tmpl[0].RETH.VA || k.BTH.Retransmit {
				t.Errorf("start %#x: forged packet %d has PSN %#x, want %#x with PSN 0's address", start, j, k.BTH.PSN,
					wire.PSNAdd(start, r))
			}
		}
	}
}

// TestAdversaryTrimCEIMMMoves: the packets of AdvTrim (each first
// transmission trimmed mid-fabric and at the last hop, no payload), AdvCE
// (each CE-marked) and AdvForgeIMM (the WriteIMM under the PSNs of no WR
// and under the next RQMSN; the WRITE before it as a WriteIMM with its
// RQMSN, its own bytes and address).
func TestAdversaryTrimCEIMMMoves(t *testing.T) {
	cfg := adversary("moves")
	cfg.AdversaryMoves = AdvTrim | AdvCE | AdvForgeIMM
	c, err := newChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	if want := n + 2*n + n + len(forgedPSNs) + 2; len(c.tmpl) != want {
		t.Fatalf("%d packets, want %d", len(c.tmpl), want)
	}
	for i := range n {
		first, mid, last, ce := &c.tmpl[i], &c.tmpl[n+2*i], &c.tmpl[n+2*i+1], &c.tmpl[3*n+i]
		if mid.DSCP() != dscp.Trimmed || last.DSCP() != dscp.TrimmedLastHop || mid.Payload != nil || last.Payload != nil ||
			mid.BTH.PSN != first.BTH.PSN || last.BTH.PSN != first.BTH.PSN {
			t.Errorf("psn %d: trimmed packets DSCP %d and %d, payloads %d and %d bytes", i, mid.DSCP(), last.DSCP(),
				len(mid.Payload), len(last.Payload))
		}
		if ce.ECN() != 3 || ce.BTH.PSN != first.BTH.PSN || !bytes.Equal(ce.Payload, first.Payload) {
			t.Errorf("psn %d: CE packet ECN %d", i, ce.ECN())
		}
	}
	imm, k := &c.tmpl[n-1], 4*n
	for j, r := range forgedPSNs {
		if f := &c.tmpl[k+j]; f.BTH.PSN != wire.PSNAdd(0, r) || f.BTH.Opcode != imm.BTH.Opcode || f.METH.RQMSN != imm.METH.RQMSN {
			t.Errorf("forged WriteIMM %d: psn %#x op %v rqmsn %d", j, f.BTH.PSN, f.BTH.Opcode, f.METH.RQMSN)
		}
	}
	k += len(forgedPSNs)
	if f := &c.tmpl[k]; f.BTH.PSN != imm.BTH.PSN || f.METH.RQMSN != imm.METH.RQMSN+1 {
		t.Errorf("WriteIMM under another RQMSN: psn %#x rqmsn %d", f.BTH.PSN, f.METH.RQMSN)
	}
	w, f := &c.tmpl[n-2], &c.tmpl[k+1]
	if f.BTH.PSN != w.BTH.PSN || !f.BTH.Opcode.HasImm() || f.METH.RQMSN != imm.METH.RQMSN || f.ImmDt != imm.ImmDt ||
		f.RETH.VA != w.RETH.VA || !bytes.Equal(f.Payload, w.Payload) {
		t.Errorf("the WRITE as a WriteIMM: psn %#x op %v rqmsn %d va %#x", f.BTH.PSN, f.BTH.Opcode, f.METH.RQMSN, f.RETH.VA)
	}
}
