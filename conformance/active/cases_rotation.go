package active

import (
	"fmt"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Path states the wire shows only through the rotation: SKIP (after a
// SKIP_ONCE verdict, a TRIMMED NACK or a probe answered SKIP_ONCE) lasts
// until the rotation ends, and a retired active EV is replaced from its
// plane's backup set. The cases run in step mode (steps.go) on fresh QPs.

// rotationTrials is how many undisturbed trials a rotation case runs on a
// lossless link: a broken IUT escapes one trial only when the rotation's
// order happens to hide the fault.
const rotationTrials = 6

func init() { addCases(rotationCases) }

func rotationCases() {
	rot := "Give the IUT an EV profile of two EVs per plane, all active (N = 4 in the active set), and have it send single-packet writes one at a time (step mode), so that feedback reaches it between any two packets."
	r0 := "The first N packets use each active EV once: rotation 0 (otherwise INCONCLUSIVE: no rotation to follow). The next packet, on EV g, opens rotation 1."
	after := "After it, the next N − 2 packets must use exactly the EVs of rotation 1 not yet used other than f (f carries no data while SKIP); the N packets after them (rotation 2) must include f (SKIP ends with the rotation) and use no EV twice."
	dist := "Repeat on fresh QPs: six undisturbed trials on a lossless link, one on a lossy one (a lost packet disturbs a trial)."
	register(Case{Role: RoleRequester, Run: evSkipOnce, Case: conformance.Case{
		ID: "MRC-EV-ST-102", Title: "SKIP_ONCE skips the EV until its rotation ends",
		Assertion:    "A GOOD EV reflected by a SACK with m = SKIP_ONCE moves to SKIP: the requester sends no data on it for the rest of the current rotation, and it is GOOD again, carrying data, in the next rotation.",
		Requirements: []conformance.RequirementID{"EV-ST-2", "EV-ST-6", "EV-SET-4", "LR-SACK-3"},
		Level:        spec.Must,
		Steps: []string{rot, r0,
			"Pick an EV f not yet used in rotation 1; the fabric duplicates f's packet of rotation 0 and marks the copy CE, so the tester's reference answers it with a SACK reflecting f, m = SKIP_ONCE.",
			after, dist},
		Pass: "f skipped for the rest of its rotation and back in the next", Fail: "data on f while SKIP, f missing from the next rotation, or an EV twice in a rotation",
		Inconclusive: "the IUT does not send its first packets in a rotation, or every trial was disturbed",
	}})
	register(Case{Role: RoleRequester, Run: evTrimSkip, Case: conformance.Case{
		ID: "MRC-EV-ST-103", Title: "A TRIMMED NACK skips the EV until its rotation ends",
		Assertion:    "A GOOD EV reflected by a TRIMMED NACK for an outstanding PSN moves to SKIP: the retransmission and the data after it avoid the EV for the rest of the current rotation, and it carries data again in the next.",
		Requirements: []conformance.RequirementID{"EV-ST-3", "EV-ST-6", "EV-SET-4", "EV-ST-13"},
		Level:        spec.Must,
		Steps: []string{rot, r0 + " The fabric trims rotation 0's first packet (on EV f); the tester's reference answers TRIMMED, and the tester holds that NACK and every later answer back, so the IUT learns nothing of the loss.",
			"Once rotation 1 has begun on an EV g other than f, release the NACK; drop the answers held back.",
			"The retransmission counts among the packets of rotation 1. " + after, dist},
		Pass: "f skipped for the rest of its rotation and back in the next", Fail: "the retransmission or new data on f while SKIP, f missing from the next rotation, or an EV twice in a rotation",
		Inconclusive: "the IUT does not send its first packets in a rotation, or every trial was disturbed",
	}})
	register(Case{Role: RoleRequester, Run: evProbeSkip, Case: conformance.Case{
		ID: "MRC-EV-ST-104", Title: "A probe answered SKIP_ONCE moves a retired EV to SKIP",
		Assertion:    "When a probe on an ASSUMED_BAD EV is answered by a SACK with m = SKIP_ONCE, the EV moves to SKIP: the requester stops probing it, and it carries data again once the rotation ends.",
		Requirements: []conformance.RequirementID{"EV-ST-8", "EV-ST-6", "EV-PRB-1"},
		Level:        spec.Must,
		Steps: []string{"Give the IUT a short probe interval and two EVs per plane, all active (no backup to take the retired EV's place); keep it sending.",
			"Rewrite the tester's first SACK to m = ALWAYS_SKIP for the EV e it reflects (e is ASSUMED_BAD).",
			"Mark the first probe on e CE on the way, so that the tester's reference answers it with m = SKIP_ONCE.",
			"Watch e for two probe intervals after that answer: no further probe on e unless data went on e first (it left ASSUMED_BAD; on a lossy link, a probe one base timeout after the answer may follow data on e that was lost).",
			"Keep the IUT sending until data on e is seen: data on e again. A FAIL takes 2N first transmissions on other EVs without one on e (e skipped beyond the end of the next rotation); on a lossy link 6N seen before a timeout could have retired e again, and fewer is INCONCLUSIVE."},
		Pass: "no more probes on e, data on e again", Fail: "e still probed as ASSUMED_BAD, or never used again",
		Inconclusive: "the IUT sent no data, or no probe on e, or (on a lossy link) too little data after the answer to show e's rotation ended",
	}})
	register(Case{Role: RoleRequester, Run: evReplace, MinPlanes: 2, Case: conformance.Case{
		ID: "MRC-EV-REP-101", Title: "A retired active EV is replaced from its plane's backup set",
		Assertion:    "When an active EV leaves the usable states for good (here ASSUMED_BAD by ALWAYS_SKIP), the requester replaces it in the active set with a GOOD backup EV of the same plane, so that every plane keeps as many active EVs as the others.",
		Requirements: []conformance.RequirementID{"EV-REP-1", "EV-SET-5", "EV-SET-2"},
		Level:        spec.Must,
		Steps: []string{"Give the IUT an EV profile of four EVs per plane, two of them active (N = 4), and a probe interval longer than the case; have it send single-packet writes one at a time (step mode).",
			"Rewrite the tester's SACK for the first packet on plane 0 to m = ALWAYS_SKIP for its EV x.",
			"In the next 2N packets (two rotations), plane 0 must carry data on two EVs other than x (the one still active and a backup), as many as plane 1.",
			dist},
		Pass: "x replaced by a plane-0 backup, both planes with two active EVs", Fail: "plane 0 left with fewer active EVs than plane 1, or no backup used",
		Inconclusive: "every trial was disturbed",
	}})
}

// rotationConn is the connection of the rotation cases: two EVs per plane,
// all active, probes far apart.
func rotationConn(t *T) *Conn {
	return t.NewConn(ConnOptions{EVsPerPlane: 2, Active: 2, ProbeInterval: t.s.tim.Transfer})
}

// rotation0 takes the first N packets and checks that they are a rotation
// over the whole active set.
func rotation0(l *trialLog, c *Conn, st *stepper, all []uint32) ([]DataTx, trialResult, bool) {
	r0, ok := st.steps(len(all))
	if !ok {
		return nil, trialDisturbed, false
	}
	if !sameSet(evsOf(r0), all) {
		l.inconclusive("the first %d packets used EVs %s, not each active EV once: no rotation to follow", len(all), hexList(evsOf(r0)))
		return nil, trialDone, false
	}
	return r0, trialDone, true
}

// afterSkip checks the packets after f became SKIP in rotation 1 (opened
// on g): the rest of rotation 1 without f, then a whole rotation with f.
// rest holds the packets already taken after the SKIP (a retransmission).
func afterSkip(l *trialLog, st *stepper, all []uint32, g, f uint32, req conformance.RequirementID, rest []DataTx) trialResult {
	n := len(all)
	more, ok := st.steps(n - 2 - len(rest))
	if !ok {
		return trialDisturbed
	}
	r1 := append(rest, more...)
	want := slices.DeleteFunc(slices.Clone(all), func(e uint32) bool { return e == g || e == f })
	for _, d := range r1 {
		l.check(d.EV != f, req, At(d.F), fmt.Sprintf("no data on EV %#x while SKIP: the rest of rotation 1 is %s", f, hexList(want)), describe(d.F))
	}
	r2, ok := st.steps(n)
	if !ok {
		return trialDisturbed
	}
	evs := evsOf(r2)
	if !l.checkRet(slices.Contains(evs, f), "EV-ST-6", Evidence{EV: &f}, fmt.Sprintf("EV %#x GOOD again and used in the next rotation", f),
		"the next %d packets used %s", n, hexList(evs)) {
		return trialDone
	}
	if e, dup := duplicated(evs); dup {
		l.check(false, "EV-SET-4", At(r2[len(r2)-1].F), fmt.Sprintf("each active EV once in rotation 2 (%s)", hexList(all)),
			"EV %#x twice in %s", e, hexList(evs))
	} else {
		l.check(true, "EV-SET-4", Evidence{}, "", "")
	}
	return trialDone
}

// checkRet is check returning cond.
func (l *trialLog) checkRet(cond bool, req conformance.RequirementID, ev Evidence, expected, observed string, args ...any) bool {
	l.check(cond, req, ev, expected, observed, args...)
	return cond
}

func evSkipOnce(t *T) {
	t.trials(rotationTrials, func(l *trialLog) trialResult {
		c := rotationConn(t)
		st := c.stepper()
		all := c.allEVs()
		r0, res, ok := rotation0(l, c, st, all)
		if !ok {
			return res
		}
		g, ok := st.step()
		if !ok {
			return trialDisturbed
		}
		cands := slices.DeleteFunc(slices.Clone(all), func(e uint32) bool { return e == g.EV })
		f := cands[t.rng.IntN(len(cands))]
		i := slices.IndexFunc(r0, func(d DataTx) bool { return d.EV == f })
		t.Logf("rotation 0 %s, rotation 1 opens on %#x; SKIP_ONCE for %#x (a CE-marked duplicate of frame %d)", hexList(evsOf(r0)), g.EV, f, r0[i].F.Seq)
		c.redeliver(r0[i].F, Impair{CE: true})
		c.Run(t.Now()+t.s.tim.Reaction, nil) // the SACK reaches the IUT before its next packet
		return afterSkip(l, st, all, g.EV, f, "EV-ST-2", nil)
	})
}

func evTrimSkip(t *T) {
	t.trials(rotationTrials, func(l *trialLog) trialResult {
		c := rotationConn(t)
		st := c.stepper()
		all := c.allEVs()
		victim := c.SQPSN
		holding, trimmed := false, false
		var held []statemachine.Outgoing
		c.In = func(f *RxFrame) Impair {
			if isData(f) && f.Pkt.BTH.PSN == victim && !trimmed {
				trimmed, holding = true, true
				return Impair{Trim: true}
			}
			return Impair{}
		}
		c.Out = func(o *statemachine.Outgoing) Impair {
			if holding {
				held = append(held, *o)
				return Impair{Drop: true}
			}
			return Impair{}
		}
		r0, res, ok := rotation0(l, c, st, all)
		if !ok {
			return res
		}
		f := r0[0].EV
		g, ok := st.step()
		if !ok || g.EV == f {
			return trialDisturbed // f's turn in rotation 1 is over: nothing to see
		}
		holding = false
		var nack *statemachine.Outgoing
		for i := range held {
			if o := &held[i]; o.Pkt.BTH.Opcode == wire.OpNACK && o.Pkt.NETH.NACKPSN == victim {
				nack = o
			}
		}
		if nack == nil || nack.Pkt.NETH.Reason != wire.NACKTrimmed || nack.Pkt.NETH.Entropy != f {
			t.Fatalf("the reference QP did not answer the trimmed PSN %d with a TRIMMED NACK reflecting %#x", victim, f)
		}
		t.Logf("rotation 0 %s, rotation 1 opens on %#x; TRIMMED NACK for PSN %d reflecting %#x released", hexList(evsOf(r0)), g.EV, victim, f)
		n0 := len(c.Sent)
		c.sendOut(nack)
		c.Run(t.Now()+t.s.tim.Reaction, func() bool { return len(c.Sent) > n0 })
		if len(c.Sent) == n0 || c.Sent[n0].PSN != victim || !c.Sent[n0].Rtx {
			return trialDisturbed // the retransmission was lost, or the IUT waits for its timer (LR-NACK-1's business)
		}
		rtx := c.Sent[n0]
		l.check(rtx.EV != f, "EV-ST-13", At(rtx.F), fmt.Sprintf("the retransmission of PSN %d on an EV other than %#x", victim, f), describe(rtx.F))
		return afterSkip(l, st, all, g.EV, f, "EV-ST-3", []DataTx{rtx})
	})
}

// probeSkip is MRC-EV-ST-104 as it runs: the EV retired by ALWAYS_SKIP,
// the IUT's first probe on it, which the tester CE-marks so that the
// reference QP answers it with m = SKIP_ONCE (RSP-PRB-2), and what the IUT
// sends after that answer.
type probeSkip struct {
	t   *T
	c   *Conn
	n   int // the active set's size: every EV is active
	bad retired
	// probeID and probedAt are the first probe's; answeredAt and lastData
	// when the reference answered it and when data on the EV came last.
	probeID                        uint16
	probedAt, answeredAt, lastData Time
	// After the answer: probesAfter counts the probes on the EV before
	// any data on it (again is the first), dataAfter the data on it, and
	// others the first transmissions on other EVs before data on it.
	again                          *RxFrame
	probesAfter, dataAfter, others int
}

func evProbeSkip(t *T) {
	tim := t.s.tim
	pi := tim.Probe
	// No backups: the retired EV stays in the active set, so that once GOOD
	// it carries data again (a backup would wait for a failure, EV-REP-2).
	c := t.NewConn(ConnOptions{EVsPerPlane: 2, Active: 2, ProbeInterval: pi, ProbeSuccesses: 1})
	x := &probeSkip{t: t, c: c, n: len(c.allEVs()), bad: retired{at: -1}, probedAt: -1, answeredAt: -1, lastData: -1}
	c.In, c.Out, c.Watch = x.in, x.out, x.watch
	c.Traffic(14*pi+tim.Settle, 4, 2048, func() bool { return x.answeredAt >= 0 })
	switch {
	case x.bad.at < 0:
		t.Inconclusive("the IUT sent no data, so no SACK could carry ALWAYS_SKIP")
		return
	case x.answeredAt < 0:
		t.Inconclusive("the IUT sent no probe on the retired EV %#x", x.bad.ev)
		return
	}
	// Keep more writes outstanding than before the answer, so that a lost
	// packet holding back the cumulative ACK (and the send completions)
	// does not leave the IUT without data to send until its timer.
	c.Traffic(2*pi+tim.Answer+tim.Settle, 16, 2048, nil)
	x.checkRotation()
	c.WaitSends(len(c.posted), tim.Transfer)
}

func (x *probeSkip) mine(f *RxFrame) bool { return f.Pkt.BTH.DestQP == x.c.TQPN }

// in CE-marks the IUT's first probe on the retired EV.
func (x *probeSkip) in(f *RxFrame) Impair {
	if x.probedAt < 0 && x.bad.at >= 0 && f.Pkt.BTH.Opcode == wire.OpProbe && f.EV == x.bad.ev && x.mine(f) {
		x.probedAt, x.probeID = f.At, f.Pkt.PETH.ProbeID
		return Impair{CE: true} // the reference answers m = SKIP_ONCE (RSP-PRB-2)
	}
	return Impair{}
}

// out retires an EV by the first SACK and notes the answer to the first
// probe on it.
func (x *probeSkip) out(o *statemachine.Outgoing) Impair {
	t, p := x.t, &o.Pkt
	if !x.bad.rewrite(t, p) && p.BTH.Opcode == wire.OpSACK && x.answeredAt < 0 && x.probedAt >= 0 && p.SETH.PR &&
		uint16(p.SETH.AckPSNOffset) == x.probeID && p.SETH.Entropy == x.bad.ev {
		if p.SETH.M != wire.MSkipOnce {
			t.Fatalf("the reference answered the CE-marked probe with m = %s", p.SETH.M)
		}
		x.answeredAt = t.Now()
		t.Logf("probe %#x on EV %#x answered with m = SKIP_ONCE", x.probeID, x.bad.ev)
	}
	return Impair{}
}

// watch counts, after the answer, data on the EV, first transmissions on
// the others before it, and probes on it before data.
func (x *probeSkip) watch(f *RxFrame) {
	t, tim := x.t, x.t.s.tim
	if x.answeredAt < 0 || !x.mine(f) || f.At <= x.answeredAt+tim.Reaction {
		return
	}
	// On a lossy link, data on e the link lost may time out and retire
	// e again, one base timeout after the answer at the earliest:
	// until then (clean) e can only be SKIP or GOOD.
	clean := t.Lossless() || f.At < x.answeredAt+tim.BaseTimeout()-tim.Reaction
	switch {
	case isData(f) && f.EV == x.bad.ev:
		x.dataAfter++
		x.lastData = f.At
	case isData(f):
		if clean && !f.Pkt.BTH.Retransmit && x.dataAfter == 0 {
			x.others++
		}
	case f.Pkt.BTH.Opcode == wire.OpProbe && f.EV == x.bad.ev && x.lastData < 0 && clean:
		// No data on e since the answer: e is still ASSUMED_BAD.
		x.probesAfter++
		if x.probesAfter == 1 {
			x.again = f
		}
	}
}

// checkRotation checks that the answered EV is SKIP, not ASSUMED_BAD: no
// longer probed (EV-ST-8), and carrying data again once the rotation the
// answer found has ended (EV-ST-6).
func (x *probeSkip) checkRotation() {
	t, tim, c, n, bad := x.t, x.t.s.tim, x.c, x.n, x.bad.ev
	// e is SKIP for at most the rest of the rotation the answer found (at
	// most n-1 packets on other EVs), then GOOD in the next one: on a
	// lossless link, 2n first transmissions on other EVs without one on e
	// show that its rotation ended without it. On a lossy link a packet on
	// e may be lost: 6n seen ones, while e cannot have been retired again,
	// leave e at least seven rotations to be seen in. Data on e decides at
	// once; without it, the tester keeps the IUT sending until the count is
	// reached or a bound passes.
	need := 2 * n
	if !t.Lossless() {
		need = 6 * n
	}
	if x.dataAfter == 0 {
		c.Traffic(4*tim.BaseTimeout()+2*tim.Probe, 16, 2048, func() bool { return x.dataAfter > 0 || x.others >= need })
	}
	t.Check(x.probesAfter == 0, "EV-ST-8", At(x.again), fmt.Sprintf("no probe on EV %#x once a probe on it was answered with SKIP_ONCE (it is SKIP, not ASSUMED_BAD)", bad),
		"%d probes after the answer, before any data on it: %s", x.probesAfter, describe(x.again))
	switch {
	case x.dataAfter > 0:
		t.OK(1)
	case x.others >= need || t.Lossless():
		t.Fail("EV-ST-6", Evidence{EV: &bad}, fmt.Sprintf("data on EV %#x again once its rotation ended", bad),
			"none in %.3f ms after the answer, %d packets on the other %d EVs", float64(t.Now()-x.answeredAt)/1e6, x.others, n-1)
	default:
		t.Inconclusive("no data on EV %#x seen in %.3f ms after the answer, and only %d packets on the other EVs before a timeout could have retired it again (%d needed to show its rotation ended)",
			bad, float64(t.Now()-x.answeredAt)/1e6, x.others, need)
	}
}

func evReplace(t *T) {
	t.trials(2, func(l *trialLog) trialResult {
		c := t.NewConn(ConnOptions{EVsPerPlane: 4, Active: 2, ProbeInterval: t.s.tim.Transfer})
		st := c.stepper()
		n := 2 * t.Planes() // the active set
		var x uint32
		retired := false
		c.Out = func(o *statemachine.Outgoing) Impair {
			p := &o.Pkt
			if p.BTH.Opcode != wire.OpSACK || p.SETH.PR || retired || c.planeOf(p.SETH.Entropy) != 0 {
				return Impair{}
			}
			x, retired = p.SETH.Entropy, true
			p.SETH.M = wire.MAlwaysSkip
			return Impair{}
		}
		for i := 0; !retired; i++ {
			if _, ok := st.step(); !ok || i == 2*n {
				return trialDisturbed
			}
		}
		c.Run(t.Now()+t.s.tim.Reaction, nil) // the ALWAYS_SKIP reaches the IUT before its next packet
		after, ok := st.steps(2 * n)
		if !ok {
			return trialDisturbed
		}
		per := make([][]uint32, t.Planes())
		for _, d := range after {
			if pl := c.planeOf(d.EV); pl >= 0 && !slices.Contains(per[pl], d.EV) {
				per[pl] = append(per[pl], d.EV)
			}
			l.check(d.EV != x, "EV-ST-4", At(d.F), fmt.Sprintf("no data on EV %#x after ALWAYS_SKIP", x), describe(d.F))
		}
		t.Logf("EV %#x retired; the next %d packets used %s on plane 0 and %s on plane 1", x, len(after), hexList(per[0]), hexList(per[1]))
		last := after[len(after)-1].F
		l.check(len(per[0]) >= 2, "EV-REP-1", At(last), fmt.Sprintf("plane 0 on two active EVs again: the other one and a backup of plane 0 in place of %#x", x),
			"plane 0 used %s", hexList(per[0]))
		for pl := 1; pl < t.Planes(); pl++ {
			l.check(len(per[0]) == len(per[pl]), "EV-SET-5", At(last), fmt.Sprintf("as many active EVs on plane 0 as on plane %d (backups are left)", pl),
				"%d on plane 0 (%s), %d on plane %d (%s)", len(per[0]), hexList(per[0]), len(per[pl]), pl, hexList(per[pl]))
		}
		return trialDone
	})
}
