package peer

// Work requests and completions: post_send, post_recv, poll_cq and the counters.

import (
	"slices"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

var opcodes = map[string]statemachine.Opcode{
	control.OpRDMAWrite: statemachine.OpWrite, control.OpRDMAWriteWithImm: statemachine.OpWriteImm,
	control.OpSend: statemachine.OpSend, control.OpSendWithImm: statemachine.OpSendImm, control.OpRDMARead: statemachine.OpRead,
	control.OpAtomicCmpSwap: statemachine.OpAtomicCmpSwap, control.OpAtomicFetchAdd: statemachine.OpAtomicFetchAdd,
}

func (a *Agent) postSend(now statemachine.Time, p *control.PostSendParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	op, ok := opcodes[p.Opcode]
	if !ok {
		return nil, control.Errorf(control.CodeInvalidArgument, "opcode %q", p.Opcode)
	}
	wr := statemachine.WorkRequest{WRID: p.WRID, Opcode: op, RemoteVA: p.Remote.VA, RKey: p.Remote.RKey, Imm: p.Imm,
		Unsignaled: p.Unsignaled, Solicited: p.Solicited}
	if p.Local != nil && p.Local.Length > 0 {
		r, err := a.region(p.Local.MR, p.Local.Offset, p.Local.Length)
		if err != nil {
			return nil, err
		}
		wr.Data = slices.Clone(r.buf[p.Local.Offset : p.Local.Offset+p.Local.Length])
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	a.cur = &e.c
	return control.Empty{}, smErr(e.qp.Post(now, wr, &a.out))
}

func (a *Agent) postRecv(now statemachine.Time, p *control.PostRecvParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	if e.qp == nil {
		return nil, control.Errorf(control.CodeInvalidState, "QP %#x is in RESET", e.qpn)
	}
	if err := e.qp.PostRecv(now, p.WRID, &a.out); err != nil {
		return nil, smErr(err)
	}
	if e.qp.State() == statemachine.StateInit {
		e.recvs = append(e.recvs, p.WRID)
	}
	return control.Empty{}, nil
}

func (a *Agent) pollCQ(p *control.PollCQParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	n := len(e.cq)
	if p.Max > 0 && p.Max < n {
		n = p.Max
	}
	n = min(n, control.MaxCQPoll)
	r := control.PollCQResult{Completions: slices.Clone(e.cq[:n])}
	if r.Completions == nil {
		r.Completions = []control.Completion{}
	}
	e.cq = slices.Delete(e.cq, 0, n)
	a.cqHeld -= n
	if n > 0 {
		e.cqFull = false
	}
	return r, nil
}

func (a *Agent) queryCounters(p *control.QueryCountersParams) (any, error) {
	if p.QPN == nil {
		return control.CountersResult{Counters: a.node.asMap()}, nil
	}
	e, err := a.entry(*p.QPN)
	if err != nil {
		return nil, err
	}
	return control.CountersResult{Counters: e.c.asMap()}, nil
}

func completion(c statemachine.Completion) control.Completion {
	op := c.Opcode.String()
	if c.Recv {
		op = control.OpRecvRDMAWithImm
	}
	return control.Completion{WRID: c.WRID, Status: c.Status.String(), Opcode: op, ByteLen: c.ByteLen, Imm: c.Imm, Recv: c.Recv,
		Solicited: c.Solicited}
}
