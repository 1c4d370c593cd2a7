package peer

// Endpoint operations (QP 0x2): ep_send, ep_poll and their responses.

import (
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

func (a *Agent) epSend(now statemachine.Time, p *control.EPSendParams) (any, error) {
	rq, err := a.epRequestOf(p)
	if err != nil {
		return nil, err
	}
	return control.Empty{}, smErr(a.ep.Send(now, rq, &a.out))
}

// epRequestOf checks and converts one endpoint request of ep_send or
// ep_batch_send.
func (a *Agent) epRequestOf(p *control.EPSendParams) (statemachine.EPRequest, error) {
	var op wire.EndpointOp
	switch p.Op {
	case control.EPEVProbe:
		op = wire.EPEVProbe
	case control.EPPortStatus:
		op = wire.EPPortStatusUpdate
	default:
		return statemachine.EPRequest{}, control.Errorf(control.CodeInvalidArgument, "endpoint op %q", p.Op)
	}
	if p.ReqID >= psuIDBase {
		return statemachine.EPRequest{}, control.Errorf(control.CodeInvalidArgument, "request ids from %#x are this peer's own", psuIDBase)
	}
	mac, err := parseMAC(p.Dst.MAC)
	if err != nil {
		return statemachine.EPRequest{}, err
	}
	ip, err := a.parseDstIP(p.Dst.IP)
	if err != nil {
		return statemachine.EPRequest{}, err
	}
	if p.Port < 1 || p.Port > a.ports || p.DSCP < 0 || p.DSCP > 63 {
		return statemachine.EPRequest{}, control.Errorf(control.CodeInvalidArgument, "port %d or DSCP %d out of range", p.Port, p.DSCP)
	}
	return statemachine.EPRequest{ReqID: p.ReqID, Op: op, Dst: statemachine.Peer{MAC: mac, IP: ip},
		EV: p.EV, Port: uint8(p.Port), DSCP: uint8(p.DSCP), PortStatus: p.PortStatus}, nil
}

func (a *Agent) epPoll() (any, error) {
	r := control.EPPollResult{Responses: a.epRsp, Timeouts: a.epTO}
	if r.Responses == nil {
		r.Responses = []control.EPResponse{}
	}
	if r.Timeouts == nil {
		r.Timeouts = []uint16{}
	}
	a.epRsp, a.epTO = nil, nil
	return r, nil
}

// denyReplacement is the no-replacement fault: the backup EV that replaced
// a retired active one is put out of use (DENIED) at once, and so is
// every further replacement, so that the plane's active set shrinks.
func (a *Agent) denyReplacement(ev statemachine.Event) {
	e, ok := a.qps[ev.QPN]
	if !ok || e.qp == nil {
		return
	}
	var scratch statemachine.Output
	scratch.TracePackets = true
	next := []uint32{uint32(ev.Value)}
	for n := 0; len(next) > 0 && n < 1024; n++ {
		v := next[0]
		next = next[1:]
		scratch.Reset()
		if err := e.qp.SetEVState(ev.Time, v, statemachine.EVDenied, &scratch); err != nil {
			continue
		}
		for _, x := range scratch.Events {
			if x.Kind == statemachine.EvEVReplaced {
				next = append(next, uint32(x.Value))
			}
		}
		for i := range scratch.Packets {
			a.transmit(&scratch.Packets[i])
		}
	}
}

func (a *Agent) epResponse(ev statemachine.Event) {
	id := uint16(ev.PSN)
	if id >= psuIDBase {
		for i := range a.psu {
			if a.psu[i].reqID == id {
				a.psu[i].answer = true
			}
		}
		return
	}
	op := control.EPEVProbe
	if wire.EndpointOp(ev.Reason) == wire.EPPortStatusUpdate {
		op = control.EPPortStatus
	}
	a.epRsp = append(a.epRsp, control.EPResponse{ReqID: id, Op: op, Port: int(ev.Plane) + 1, RTTNs: int64(ev.Value)})
}
