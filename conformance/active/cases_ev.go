package active

import (
	"fmt"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Paths and endpoint operations: EV states driven by the tester's
// feedback, port status updates both ways, and endpoint requests.

func init() { addCases(evCases) }

func evCases() {
	register(Case{Role: RoleRequester, Run: evAlwaysSkip, Case: conformance.Case{
		ID: "MRC-EV-BAD-101", Title: "ALWAYS_SKIP retires an EV until its probes are answered",
		Assertion:    "After a SACK reflecting EV e with m = ALWAYS_SKIP, the requester sends no data on e, probes e at most once per probe interval, and once a probe is answered with m = NONE (probe_success_threshold 1) e is GOOD again and no longer probed.",
		Requirements: []conformance.RequirementID{"EV-ST-4", "LR-SACK-3", "EV-SET-4", "EV-PRB-1", "EV-PRB-2", "EV-ST-7"},
		Level:        spec.Must,
		Steps: []string{"Give the IUT a short probe interval and probe_success_threshold 1; keep it sending.",
			"Rewrite the tester's first SACK to m = ALWAYS_SKIP for the EV it reflects.",
			"Watch data and probes on that EV; the tester's reference QP answers the probes with m = NONE."},
		Pass: "no data on the EV while retired, paced probes, probing stops once answered", Fail: "data on the retired EV, no probe, probes too often, or probes that never stop",
	}})
	register(Case{Role: RoleRequester, Run: evTimeout, Case: conformance.Case{
		ID: "MRC-EV-BAD-102", Title: "A timeout retires the EV and the lost PSNs are resent elsewhere",
		Assertion:    "When packets sent on an EV time out, the requester moves the EV to ASSUMED_BAD and stops sending data on it, and retransmits the lost PSNs on other EVs.",
		Requirements: []conformance.RequirementID{"EV-ST-5", "LR-TMR-5", "LR-RTX-3"},
		Level:        spec.Must,
		Steps: []string{"Keep the IUT sending; the tester black-holes every packet on the first EV it sees.",
			"Watch data on that EV after one base timeout (plus half a timeout and the reaction time for scheduling).",
			"Wait for every write to complete and check the data."},
		Pass: "the EV is abandoned after the timeout and every write completes", Fail: "data on the EV long after the timeout, or writes that never complete",
	}})
	register(Case{Role: RoleRequester, Run: evPortStatus, MinPlanes: 2, Case: conformance.Case{
		ID: "MRC-EV-PORT-101", Title: "A peer's port status update removes and restores a plane",
		Assertion:    "A node answers a PORT_STATUS_UPDATE, stops sending to the sender on the planes the mask reports down, and uses them again when a later update reports them up.",
		Requirements: []conformance.RequirementID{"EP-PSU-3", "EV-PORT-2", "EV-PORT-3", "EP-GEN-5"},
		Level:        spec.Must, Features: []string{"endpoint_ops"},
		Steps: []string{"Keep the IUT sending over two planes.",
			"Send a PORT_STATUS_UPDATE with port 2 down; expect the response.",
			"Watch plane 1 (port 2); then send an update with every port up and expect plane 1 to carry data again."},
		Pass: "plane 1 silent while down, used again after", Fail: "data on a down plane, no response, or the plane never used again",
	}})
	register(Case{Role: RoleEndpoint, Run: epProbe, Case: conformance.Case{
		ID: "MRC-EP-GEN-101", Title: "Endpoint requests are answered on the same port",
		Assertion:    "Every EV_PROBE endpoint request is answered with one ENDPOINT_RESPONSE to QP 0x2 carrying the request id and op, reflecting its tx_timestamp, sent from the port the request arrived on with DSCP_CONTROL.",
		Requirements: []conformance.RequirementID{"EP-GEN-5", "EP-GEN-6", "EP-GEN-4", "WIRE-EETH-1", "EP-GEN-1"},
		Level:        spec.Must, Features: []string{"endpoint_ops"},
		Steps: []string{"On every plane, send EV_PROBE requests with fresh request ids.", "Check each response."},
		Pass:  "every request answered as required", Fail: "a request unanswered, or a wrong field, port or class",
	}})
	register(Case{Role: RoleEndpoint, Run: epPortStatus, MinPlanes: 2, Case: conformance.Case{
		ID: "MRC-EP-PSU-101", Title: "A local port change is announced and the plane left",
		Assertion:    "When a port goes down, the NIC stops sending on it and sends every peer it has QPs with a PORT_STATUS_UPDATE carrying its complete port state with DSCP_CONTROL; when it comes back, a new update says so and the plane is used again.",
		Requirements: []conformance.RequirementID{"EP-PSU-1", "EP-PSU-2", "EV-PORT-1", "EV-PORT-3", "EP-GEN-4"},
		Level:        spec.Must, Features: []string{"endpoint_ops"},
		Steps: []string{"Keep the IUT sending over two planes.", "Set the IUT's port 2 down through the control channel (set_port_status).",
			"Expect a PORT_STATUS_UPDATE with the new mask (the tester answers it) and no data on plane 1.",
			"Set every port up; expect an update with the full mask and data on plane 1 again."},
		Pass: "updates as required and the plane left and resumed", Fail: "no update, a partial mask, the wrong class, or data on the down plane",
	}})
}

// retired is the EV the tester retires at the IUT by rewriting the first
// SACK that reflects it with m = NONE, not a probe answer, to m =
// ALWAYS_SKIP (EV-ST-4), and when; at is −1 until then.
type retired struct {
	ev uint32
	at Time
}

// rewrite makes p, a packet the reference QP sends, that SACK if none was
// yet, and reports whether it did.
func (r *retired) rewrite(t *T, p *wire.Packet) bool {
	if r.at >= 0 || p.BTH.Opcode != wire.OpSACK || p.SETH.PR || p.SETH.M != wire.MNone {
		return false
	}
	r.ev, r.at = p.SETH.Entropy, t.Now()
	p.SETH.M = wire.MAlwaysSkip
	t.Logf("SACK for PSN %d rewritten to m = ALWAYS_SKIP for EV %#x", p.SETH.AckPSN(), r.ev)
	return true
}

// alwaysSkip is MRC-EV-BAD-101 as it runs: the retired EV, the IUT's
// probes on it and the reference QP's answers to them (m = NONE).
type alwaysSkip struct {
	t   *T
	c   *Conn
	bad retired
	// probes are the IUT's probes on the retired EV; answers pair each
	// answer with the probe it answers (the last one seen).
	probes  []*RxFrame
	answers []probeAnswer
}

type probeAnswer struct{ probe, at Time }

func evAlwaysSkip(t *T) {
	tim := t.s.tim
	a := &alwaysSkip{t: t, c: t.NewConn(ConnOptions{ProbeInterval: tim.Probe, ProbeSuccesses: 1}), bad: retired{at: -1}}
	a.c.Out, a.c.Watch = a.out, a.watch
	a.c.Traffic(14*tim.Probe+tim.Settle, 4, 2048, nil)
	if a.bad.at < 0 {
		t.Inconclusive("the IUT sent no data, so no SACK could carry ALWAYS_SKIP")
		return
	}
	if a.checkProbes() {
		a.checkRestored()
	}
}

// out retires an EV by the first SACK and notes the reference's answers
// to the probes on it.
func (a *alwaysSkip) out(o *statemachine.Outgoing) Impair {
	p := &o.Pkt
	if !a.bad.rewrite(a.t, p) && a.bad.at >= 0 && p.BTH.Opcode == wire.OpSACK && p.SETH.PR && p.SETH.Entropy == a.bad.ev &&
		p.SETH.M == wire.MNone && len(a.probes) > 0 {
		a.answers = append(a.answers, probeAnswer{probe: a.probes[len(a.probes)-1].At, at: a.t.Now()})
	}
	return Impair{}
}

// watch notes the probes on the retired EV and fails data on it before the
// first probe answer (EV-ST-4): from that answer on, data is allowed
// again, since the IUT may have taken it even when it came late in its
// round.
func (a *alwaysSkip) watch(f *RxFrame) {
	t, bad := a.t, &a.bad
	if bad.at < 0 || f.EV != bad.ev {
		return
	}
	first := Time(-1)
	if len(a.answers) > 0 {
		first = a.answers[0].at
	}
	switch {
	case f.Pkt.BTH.Opcode == wire.OpProbe:
		a.probes = append(a.probes, f)
	case isData(f) && f.At > bad.at+t.s.tim.Reaction && (first < 0 || f.At <= first):
		t.Fail("EV-ST-4", At(f), fmt.Sprintf("no data on EV %#x after its ALWAYS_SKIP and before a probe answer", bad.ev), describe(f))
	case isData(f):
		t.OK(1)
	}
}

// checkProbes checks that the retired EV is probed (EV-PRB-1), the first
// time within a few probe intervals, and at most once per interval
// (EV-PRB-2). It reports whether there was a probe.
func (a *alwaysSkip) checkProbes() bool {
	t, tim, bad, probes := a.t, a.t.s.tim, &a.bad, a.probes
	pi := tim.Probe
	if !t.Check(len(probes) > 0, "EV-PRB-1", Evidence{EV: &bad.ev}, fmt.Sprintf("a probe on the retired EV %#x", bad.ev), "none in %.3f ms", float64(t.Now()-bad.at)/1e6) {
		return false
	}
	// On a lossy link the first probes may be lost: as for every liveness
	// check, it takes Tries missing ones to fail.
	rounds := 2
	if !t.Lossless() {
		rounds = max(rounds, tim.Tries)
	}
	t.Check(probes[0].At <= bad.at+Time(rounds)*pi+tim.Answer, "EV-PRB-1", At(probes[0]), fmt.Sprintf("the first probe within %d probe intervals (%.3f ms)", rounds, float64(Time(rounds)*pi)/1e6),
		"%.3f ms after the ALWAYS_SKIP", float64(probes[0].At-bad.at)/1e6)
	for i := 1; i < len(probes); i++ {
		gap := probes[i].At - probes[i-1].At
		t.Check(gap >= pi-tim.Reaction, "EV-PRB-2", At(probes[i]), fmt.Sprintf("at most one probe per interval (%.3f ms)", float64(pi)/1e6),
			"probes %.3f ms apart", float64(gap)/1e6)
	}
	return true
}

// checkRestored checks that a prompt answer restores the EV (EV-ST-7):
// once restored it is GOOD and probed again only after it is retired
// again, which takes the loss of a packet sent on it, detected after the
// answer: a timeout or an inferred loss (EV-ST-5, EV-SM-5), of data sent
// after the answer or of data sent before the EV was retired. An IUT that
// keeps probing in the round after a prompt answer ignored the answer,
// unless such a loss may have come in between: data seen on the EV, or
// the retransmission of a packet lost before the tester's tap, whose EV
// the tester cannot know (lossRecovered). On a lossy link a correct IUT
// can still do that once by bad luck (that retransmission lost too), so
// it takes two ignored answers to fail.
func (a *alwaysSkip) checkRestored() {
	t, tim, bad := a.t, a.t.s.tim, &a.bad
	pi := tim.Probe
	// prompt reports whether the IUT must have had the answer before its
	// next probe round: the EV is GOOD from the answer on.
	prompt := func(x probeAnswer) bool { return x.at-x.probe < pi-2*tim.Reaction }
	if !slices.ContainsFunc(a.answers, prompt) {
		t.Inconclusive("no probe on EV %#x was answered within its round (%d answers)", bad.ev, len(a.answers))
		return
	}
	usedAfter := func(from, to Time) bool {
		for _, s := range a.c.Sent {
			if s.EV == bad.ev && s.F.At > from && s.F.At < to {
				return true
			}
		}
		return false
	}
	var ignored []*RxFrame
	for _, x := range a.answers {
		if !prompt(x) {
			continue // late: the IUT may have sent its next round before it arrived
		}
		for _, p := range a.probes {
			if p.At > x.at+tim.Reaction && p.At <= x.probe+pi+2*tim.Reaction && !usedAfter(x.at, p.At) && !lossRecovered(a.c.Sent, x.at, p.At+tim.Reaction) {
				ignored = append(ignored, p)
				break
			}
		}
	}
	if len(ignored) >= 2 || (len(ignored) == 1 && t.Lossless()) {
		for _, p := range ignored {
			t.Fail("EV-ST-7", At(p), fmt.Sprintf("EV %#x restored by the prompt answer to its previous probe, and no longer probed", bad.ev), describe(p))
		}
	}
	t.OK(1)
}

// lossRecovered reports whether the IUT retransmitted, between from and
// to, a PSN of which the tester saw no earlier copy (sent: the IUT's data
// in arrival order). The retransmission follows the timeout or inferred
// loss of a copy lost before the tester's tap, which retired whatever EV
// that copy took (EV-ST-5, EV-SM-5); the tester cannot know which.
func lossRecovered(sent []DataTx, from, to Time) bool {
	seen := make(map[uint32]bool, len(sent))
	for _, s := range sent {
		if s.F.At > to {
			break
		}
		if s.Rtx && !seen[s.PSN] && s.F.At > from {
			return true
		}
		seen[s.PSN] = true
	}
	return false
}

func evTimeout(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{ProbeInterval: tim.Probe})
	to := tim.BaseTimeout()
	var hole uint32
	holeAt := Time(-1)
	c.In = func(f *RxFrame) Impair {
		if !toTester(f) {
			return Impair{}
		}
		if holeAt < 0 && isData(f) {
			hole, holeAt = f.EV, t.Now()
			t.Logf("black-holing EV %#x", hole)
		}
		return Impair{Drop: holeAt >= 0 && f.EV == hole}
	}
	late := 0
	c.Watch = func(f *RxFrame) {
		if holeAt >= 0 && isData(f) && f.EV == hole && f.At > holeAt+to+to/2+tim.Reaction {
			late++
			if late <= 3 {
				t.Fail("EV-ST-5", At(f), fmt.Sprintf("no data on EV %#x once its packets timed out (%.3f ms)", hole, float64(to)/1e6),
					"%s %.3f ms after its first loss", describe(f), float64(f.At-holeAt)/1e6)
			}
		}
	}
	n := c.Traffic(10*to, 4, 2048, nil)
	sends := c.WaitSends(n, tim.Transfer)
	c.successes("LR-TMR-5", sends, n)
	if holeAt < 0 {
		t.Inconclusive("the IUT sent no data")
		return
	}
	c.CheckMem("LR-RTX-3")
	t.Check(late == 0, "EV-ST-5", Evidence{EV: &hole}, "the black-holed EV abandoned", "%d data packets on it after the timeout", late)
}

// epRequest sends an endpoint request on plane pl (repeating it with a new
// id when the answer is lost) and returns the response frame and the
// request's timestamp.
func (c *Conn) epRequest(op wire.EndpointOp, pl int, mask uint32, idBase uint16) (*RxFrame, uint16, uint16) {
	t := c.t
	var id, ts uint16
	f := c.Exchange(func(try int) {
		id = idBase + uint16(try)
		now := t.Now()
		ts = c.tsAt(now)
		err := c.ep.Send(now, statemachine.EPRequest{ReqID: id, Op: op, Dst: statemachine.Peer{MAC: t.s.iut.MACs[pl], IP: t.s.iut.IP},
			EV: c.TEV(pl, try), Port: uint8(pl + 1), DSCP: t.s.codec.Profile().DSCP.Control, PortStatus: mask}, &c.out)
		if err != nil {
			t.Fatalf("endpoint request: %v", err)
		}
		c.flushEP()
	}, func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpEndpointResp && uint16(f.Pkt.BTH.PSN) == id
	})
	return f, id, ts
}

func fullMask(planes int) uint32 { return (1<<planes - 1) << 1 }

func evPortStatus(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	downAt, upAt := Time(-1), Time(-1)
	warm, afterUp := 0, 0
	c.Watch = func(f *RxFrame) {
		if !isData(f) || f.Plane != 1 {
			return
		}
		switch {
		case downAt < 0:
			warm++
		case upAt < 0 && f.At > downAt+tim.Reaction:
			t.Fail("EV-PORT-2", At(f), "no data on plane 1 (port 2) while the tester reports it down", describe(f))
		case upAt >= 0 && f.At > upAt:
			afterUp++
		}
	}
	c.TrafficUntil(tim.Settle, func() bool { return warm > 0 })
	if warm == 0 {
		t.Inconclusive("the IUT sent no data on plane 1 before the update")
	}
	downAt = t.Now()
	mask := fullMask(t.Planes()) &^ (1 << 2)
	// The tester's own QP leaves its down port too (EV-PORT-1).
	c.ref.SetPortStatus(t.Now(), mask, fullMask(t.Planes()), &c.out)
	c.flush()
	f, id, _ := c.epRequest(wire.EPPortStatusUpdate, 0, mask, 0x100)
	if t.Check(f != nil, "EP-GEN-5", Evidence{}, "a response to the PORT_STATUS_UPDATE", "none after %d tries", tim.Tries) {
		t.Check(f.Pkt.EETH.Op == wire.EPPortStatusUpdate, "EP-GEN-5", At(f), fmt.Sprintf("op PORT_STATUS_UPDATE for request %d", id), "op %s", f.Pkt.EETH.Op)
	}
	c.Traffic(2*tim.Settle, 4, 2048, nil)
	upAt = t.Now()
	c.ref.SetPortStatus(t.Now(), fullMask(t.Planes()), fullMask(t.Planes()), &c.out)
	c.flush()
	c.epRequest(wire.EPPortStatusUpdate, 0, fullMask(t.Planes()), 0x200)
	c.TrafficUntil(2*tim.Settle, func() bool { return afterUp > 0 })
	t.Check(afterUp > 0, "EV-PORT-3", Evidence{}, "data on plane 1 again after the update reporting it up", "none in %.3f ms", float64(t.Now()-upAt)/1e6)
	c.WaitSends(len(c.posted), tim.Transfer)
}

func epProbe(t *T) {
	c := t.NewConn(ConnOptions{})
	d := t.s.codec.Profile().DSCP
	for pl := 0; pl < t.Planes(); pl++ {
		for k := 0; k < 2; k++ {
			f, id, ts := c.epRequest(wire.EPEVProbe, pl, 0, uint16(0x300+pl*0x40+k*0x10))
			if !t.Check(f != nil, "EP-GEN-5", Evidence{}, fmt.Sprintf("a response to the EV_PROBE on plane %d", pl), "none after %d tries", t.s.tim.Tries) {
				continue
			}
			e := &f.Pkt.EETH
			t.Check(e.Op == wire.EPEVProbe, "WIRE-EETH-1", At(f), "op EV_PROBE", "op %s", e.Op)
			t.Check(e.TxTimestamp == ts, "EP-GEN-5", At(f), fmt.Sprintf("tx_timestamp %#x reflected", ts), "%#x", e.TxTimestamp)
			t.Check(uint16(f.Pkt.BTH.PSN) == id && f.Pkt.BTH.PSN>>16 == 0, "EP-GEN-5", At(f), fmt.Sprintf("request id %d in psn bits 15:0", id), "psn %#x", f.Pkt.BTH.PSN)
			t.Check(f.Plane == pl, "EP-GEN-6", At(f), fmt.Sprintf("the response on the request's port %d", pl+1), "on plane %d", f.Plane)
			t.Check(f.Pkt.DSCP() == d.Control, "EP-GEN-4", At(f), fmt.Sprintf("DSCP_CONTROL (%d)", d.Control), "DSCP %d", f.Pkt.DSCP())
			t.Check(f.Pkt.BTH.DestQP == wire.EndpointQPN, "EP-GEN-1", At(f), "to QP 0x2", "QP %#x", f.Pkt.BTH.DestQP)
		}
	}
}

func epPortStatus(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	d := t.s.codec.Profile().DSCP
	setAt, upAt := Time(-1), Time(-1)
	var updates []*RxFrame
	afterUp := 0
	c.Watch = func(f *RxFrame) {
		switch {
		case f.Pkt.BTH.Opcode == wire.OpEndpointReq && f.Pkt.ERTH.Op == wire.EPPortStatusUpdate:
			updates = append(updates, f)
		case !isData(f) || f.Plane != 1 || setAt < 0:
		case upAt < 0 && f.At > setAt+tim.Reaction:
			t.Fail("EV-PORT-1", At(f), "no data on plane 1 while the IUT's port 2 is down", describe(f))
		case upAt >= 0 && f.At > upAt:
			afterUp++
		}
	}
	c.Traffic(tim.Settle, 4, 2048, nil)
	mask := fullMask(t.Planes()) &^ (1 << 2)
	setAt = t.Now()
	if err := t.TryCall(control.MethodSetPortStatus, control.SetPortStatusParams{Mask: mask}, nil); err != nil {
		t.Require(err, "set_port_status")
	}
	// Updates are repeated at most once per millisecond (EP-PSU-4): give
	// a lost one time to come again.
	watch := max(2*tim.Settle, 10*statemachine.Millisecond)
	hasUpdate := func(mask uint32) func() bool {
		return func() bool {
			for _, f := range updates {
				if f.Pkt.ERTH.PortStatusMask == mask {
					return true
				}
			}
			return false
		}
	}
	c.Traffic(watch, 4, 2048, hasUpdate(mask))
	c.Traffic(2*tim.Settle, 4, 2048, nil)
	check := func(want uint32) {
		var u *RxFrame
		for _, f := range updates {
			if f.Pkt.ERTH.PortStatusMask == want {
				u = f
				break
			}
		}
		if !t.Check(u != nil, "EP-PSU-1", Evidence{}, fmt.Sprintf("a PORT_STATUS_UPDATE with mask %#x", want), "%d updates: %s", len(updates), describe(first(updates))) {
			return
		}
		t.Check(u.Pkt.ERTH.PortStatusMask == want, "EP-PSU-2", At(u), fmt.Sprintf("the complete port state %#x", want), "%#x", u.Pkt.ERTH.PortStatusMask)
		t.Check(u.Pkt.DSCP() == d.Control, "EP-GEN-4", At(u), fmt.Sprintf("DSCP_CONTROL (%d) on a NIC-initiated update", d.Control), "DSCP %d", u.Pkt.DSCP())
	}
	check(mask)
	upAt = t.Now()
	updates = nil
	t.Call(control.MethodSetPortStatus, control.SetPortStatusParams{Mask: fullMask(t.Planes())}, nil)
	c.Traffic(watch, 4, 2048, hasUpdate(fullMask(t.Planes())))
	c.Traffic(2*tim.Settle, 4, 2048, nil)
	check(fullMask(t.Planes()))
	t.Check(afterUp > 0, "EV-PORT-3", Evidence{}, "data on plane 1 again once port 2 is up", "none in %.3f ms", float64(t.Now()-upAt)/1e6)
	c.WaitSends(len(c.posted), tim.Transfer)
}
