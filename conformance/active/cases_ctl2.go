package active

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Cases that drive the IUT's controller interface: EV state, endpoint
// requests the IUT sends, and responder resource conditions.

func init() { addCases(ctl2Cases) }

func ctl2Cases() {
	register(Case{Role: RoleControl, Run: ctlDenied, Case: conformance.Case{
		ID: "MRC-EV-ST-101", Title: "A DENIED EV carries no data until the controller releases it",
		Assertion:    "After MODIFY_EV_STATE sets an active EV to DENIED, the requester sends no data on it; probes and feedback do not change that.",
		Requirements: []conformance.RequirementID{"EV-ST-9", "EV-SET-4"},
		Level:        spec.Must,
		Steps: []string{"Keep the IUT sending; set the first EV it uses to DENIED through modify_ev_state.",
			"Watch that EV for data; query the EV's state when the IUT reports it."},
		Pass: "no data on the DENIED EV", Fail: "data on it after the change",
	}})
	register(Case{Role: RoleEndpoint, Run: ctlEPProbe, Case: conformance.Case{
		ID: "MRC-EP-PRB-101", Title: "The IUT sends EV probes and reports their answers",
		Assertion:    "An EV_PROBE endpoint request the controller issues leaves on the requested port with the requested EV and DSCP, carries the request id in psn bits 15:0 and consumes no PSN; its response is reported with the request id, the port it arrived on and an RTT.",
		Requirements: []conformance.RequirementID{"EP-PRB-1", "EP-PRB-2", "EP-GEN-1", "EP-GEN-3", "EP-GEN-4", "WIRE-EP-1"},
		Level:        spec.Must, Features: []string{"endpoint_ops"},
		Steps: []string{"Ask the IUT (ep_send) for an EV_PROBE to the tester on every port; the tester answers.",
			"Check each request on the wire, then the responses the IUT reports (ep_poll)."},
		Pass: "every probe sent and reported as required", Fail: "a probe missing or malformed, or a response not reported",
	}})
	register(Case{Role: RoleResponder, Run: ctlResources, Case: conformance.Case{
		ID: "MRC-RSP-NACK-104", Title: "A responder short of resources NACKs and does not place",
		Assertion:    "A responder that cannot accept a new in-window packet for lack of tracking state, packet buffer or another resource sends NO_BITMAP, NO_PKT_BUFFER or NO_RESOURCE and places nothing.",
		Requirements: []conformance.RequirementID{"RSP-NACK-3"},
		Level:        spec.Must,
		Steps: []string{"Through set_resource_condition, make the IUT's QP short of each resource in turn and send a write.",
			"Expect the matching NACK and no placement; restore the resources and expect the write accepted."},
		Pass: "the matching NACK each time, then service", Fail: "a wrong or missing NACK, or a placement while short",
	}})
}

func ctlDenied(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	var denied uint32
	deniedAt := Time(-1)
	c.Watch = func(f *RxFrame) {
		switch {
		case !isData(f):
		case deniedAt < 0:
			denied, deniedAt = f.EV, 0
		case deniedAt > 0 && f.EV == denied && f.At > deniedAt+tim.Reaction:
			t.Fail("EV-ST-9", At(f), fmt.Sprintf("no data on EV %#x once DENIED", denied), describe(f))
		case deniedAt > 0:
			t.OK(1)
		}
	}
	c.Post(1, control.OpRDMAWrite, 1024, 0)
	c.WaitSends(1, tim.Transfer)
	if deniedAt < 0 {
		t.Inconclusive("the IUT sent no data")
		return
	}
	err := t.TryCall(control.MethodModifyEVState, control.ModifyEVStateParams{QPN: c.IUT, EV: denied, State: control.EVDenied}, nil)
	t.Require(err, "modify_ev_state")
	deniedAt = t.Now()
	n := c.Traffic(2*tim.Settle, 4, 2048, nil)
	c.successes("EV-SET-4", c.WaitSends(n+1, tim.Transfer), n+1)
	if q := c.QueryQP(); len(q.EVs) > 0 {
		for _, e := range q.EVs {
			if e.Value == denied {
				t.Check(e.State == control.EVDenied, "EV-ST-9", Evidence{EV: &denied}, "the EV reported DENIED", "%s", e.State)
			}
		}
	}
}

func ctlEPProbe(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	d := t.s.codec.Profile().DSCP
	type sent struct {
		id   uint16
		port int
		ev   uint32
		dscp uint8
	}
	var reqs []sent
	var seen []*RxFrame
	c.Watch = func(f *RxFrame) {
		if f.Pkt.BTH.Opcode == wire.OpEndpointReq && f.Pkt.ERTH.Op == wire.EPEVProbe {
			seen = append(seen, f)
		}
	}
	for pl := 0; pl < t.Planes(); pl++ {
		// A request the fabric loses is sent again under a new id.
		for try := 0; try < tim.Tries; try++ {
			s := sent{id: uint16(0x400 + pl*16 + try), port: pl + 1, ev: uint32(0x5500 + pl), dscp: d.NoTrim}
			err := t.TryCall(control.MethodEPSend, control.EPSendParams{Op: control.EPEVProbe, ReqID: s.id,
				Dst: control.Peer{MAC: macString(t.s.tester.MACs[pl]), IP: t.s.tester.IP.String()}, EV: s.ev, Port: s.port, DSCP: int(s.dscp)}, nil)
			t.Require(err, "ep_send")
			reqs = append(reqs, s)
			if c.Expect(tim.Answer, func(f *RxFrame) bool {
				return f.Pkt.BTH.Opcode == wire.OpEndpointReq && uint16(f.Pkt.BTH.PSN) == s.id
			}) != nil {
				break
			}
		}
	}
	var got []control.EPResponse
	var timedOut []uint16
	end := t.Now() + tim.Answer*Time(tim.Tries)
	for len(got)+len(timedOut) < len(reqs) && t.Now() < end {
		c.Run(t.Now()+tim.Poll, nil)
		var r control.EPPollResult
		t.Call(control.MethodEPPoll, nil, &r)
		got = append(got, r.Responses...)
		timedOut = append(timedOut, r.Timeouts...)
	}
	seenPort := map[int]bool{}
	for _, s := range reqs {
		var f *RxFrame
		for _, g := range seen {
			if uint16(g.Pkt.BTH.PSN) == s.id {
				f = g
			}
		}
		if f == nil {
			continue // lost on the way, or never sent: judged per port below
		}
		seenPort[s.port] = true
		t.Check(f.Plane == s.port-1 && f.EV == s.ev, "EP-GEN-3", At(f), fmt.Sprintf("sent from port %d with EV %#x", s.port, s.ev), describe(f))
		t.Check(f.Pkt.DSCP() == s.dscp, "EP-GEN-4", At(f), fmt.Sprintf("the caller's DSCP %d", s.dscp), "DSCP %d", f.Pkt.DSCP())
		t.Check(f.Pkt.BTH.PSN == uint32(s.id) && f.Pkt.BTH.DestQP == wire.EndpointQPN, "WIRE-EP-1", At(f),
			fmt.Sprintf("request id %d in psn bits 15:0, to QP 0x2", s.id), "psn %#x QP %#x", f.Pkt.BTH.PSN, f.Pkt.BTH.DestQP)
		var rsp *control.EPResponse
		for i := range got {
			if got[i].ReqID == s.id {
				rsp = &got[i]
			}
		}
		if rsp == nil && !t.Lossless() && slices.Contains(timedOut, s.id) {
			t.Inconclusive("request %d timed out at the IUT before the tester's answer reached it", s.id)
			continue
		}
		if !t.Check(rsp != nil, "EP-PRB-1", At(f), fmt.Sprintf("the response to request %d reported by ep_poll", s.id), "not reported") {
			continue
		}
		t.Check(rsp.Op == control.EPEVProbe && rsp.Port == s.port, "EP-PRB-1", At(f), fmt.Sprintf("op EV_PROBE, port %d", s.port), "op %s port %d", rsp.Op, rsp.Port)
		t.Check(rsp.RTTNs >= 0 && Time(rsp.RTTNs) <= t.Now(), "EP-PRB-2", At(f), "an RTT between 0 and the time elapsed", "%d ns", rsp.RTTNs)
	}
	for pl := 1; pl <= t.Planes(); pl++ {
		if !seenPort[pl] {
			t.Fail("EP-PRB-1", Evidence{}, fmt.Sprintf("an EV_PROBE on port %d", pl), "none in %d requests", tim.Tries)
		}
	}
}

func macString(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

func ctlResources(t *T) {
	c := t.NewConn(ConnOptions{})
	p := c.RQPSN
	for i, x := range []struct {
		cond   string
		reason wire.NACKReason
	}{{control.ResNoBitmap, wire.NACKNoBitmap}, {control.ResNoPktBuffer, wire.NACKNoPktBuffer}, {control.ResNoResource, wire.NACKNoResource}} {
		t.Require(t.TryCall(control.MethodSetResourceCondition, control.SetResourceConditionParams{QPN: c.IUT, Condition: x.cond}, nil), "set_resource_condition")
		f := c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(i, 256), 0, c.TEV(0, i), Impair{}) }, feedbackFor(p))
		if t.Check(f != nil && f.Pkt.BTH.Opcode == wire.OpNACK, "RSP-NACK-3", Evidence{PSN: &p}, "a "+x.reason.String()+" NACK", describe(f)) {
			t.Check(f.Pkt.NETH.Reason == x.reason, "RSP-NACK-3", At(f), "reason "+x.reason.String(), describe(f))
		}
		t.Check(bytes.Equal(c.ReadIUT(0, 256), make([]byte, 256)), "RSP-NACK-3", Evidence{PSN: &p}, "nothing placed while short of resources", "memory written")
	}
	t.Call(control.MethodSetResourceCondition, control.SetResourceConditionParams{QPN: c.IUT, Condition: control.ResourcesOK}, nil)
	f := c.Exchange(func(int) { c.sendWrite(p, 0, 0, fill(9, 256), 0, c.TEV(0, 0), Impair{}) }, feedbackFor(p))
	t.Check(f != nil && f.Pkt.BTH.Opcode == wire.OpSACK, "RSP-NACK-3", Evidence{PSN: &p}, "the write accepted once resources are back", describe(f))
}
