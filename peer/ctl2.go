package peer

import (
	"encoding/hex"
	"strings"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// CQ notification, asynchronous events, API versions and endpoint
// batches on the reference device (spec/36-api-objects.md).

// MaxBatches bounds the endpoint batches waiting for their result
// (ep_batch_send beyond it: resource_exhausted).
const MaxBatches = 16

func (a *Agent) reqNotify(p *control.ReqNotifyParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	e.notify.ReqNotify(a.rules.solicitedOnly(p.SolicitedOnly))
	return control.Empty{}, nil
}

func (a *Agent) cqEvents(p *control.CQEventsParams) (any, error) {
	e, err := a.entry(p.QPN)
	if err != nil {
		return nil, err
	}
	n := e.notify.Events()
	if p.Ack {
		if err := e.notify.Ack(n); err != nil {
			return nil, ctlErr(err)
		}
	}
	return control.CQEventsResult{Events: n}, nil
}

var asyncNames = map[statemachine.AsyncEventType]string{statemachine.AsyncCQErr: control.AsyncCQErr, statemachine.AsyncQPReqErr: control.AsyncQPReqErr,
	statemachine.AsyncQPAccessErr: control.AsyncQPAccessErr, statemachine.AsyncPortErr: control.AsyncPortErr,
	statemachine.AsyncPortActive: control.AsyncPortActive, statemachine.AsyncQPFatal: control.AsyncQPFatal,
	statemachine.AsyncCommEst: control.AsyncCommEst, statemachine.AsyncSQDrained: control.AsyncSQDrained}

func (a *Agent) asyncEvents() (any, error) {
	r := control.AsyncEventsResult{Events: []control.AsyncEvent{}, Dropped: a.async.Dropped}
	for {
		e, ok := a.async.Get()
		if !ok {
			break
		}
		_ = a.async.Ack()
		r.Events = append(r.Events, control.AsyncEvent{Type: asyncNames[e.Type], QPN: e.QPN, Port: int(e.Port)})
	}
	return r, nil
}

func (a *Agent) queryVersion() (any, error) {
	v := func(x statemachine.Versions) control.Versions {
		x = a.rules.versions(x)
		return control.Versions{Current: x.Current, LastSupported: x.LastSupported, Vendor: x.Vendor, LastSupportedVendor: x.LastSupportedVendor}
	}
	return control.QueryVersionResult{MRC: v(statemachine.MRCVersions), Ctl: v(statemachine.CtlVersions)}, nil
}

func (a *Agent) epBatchSend(now statemachine.Time, p *control.EPBatchSendParams) (any, error) {
	if len(a.bat) >= MaxBatches {
		return nil, control.Errorf(control.CodeResourceExhausted, "EAGAIN: %d batches waiting for their result", MaxBatches)
	}
	op := map[string]wire.EndpointOp{control.EPEVProbe: wire.EPEVProbe, control.EPPortStatus: wire.EPPortStatusUpdate}
	o, ok := op[p.Op]
	if !ok {
		return nil, control.Errorf(control.CodeUnsupported, "ENOTSUP: endpoint op %q", p.Op)
	}
	if len(p.Requests) > statemachine.MaxEVs || p.TimeoutNs <= 0 || p.TimeoutNs > int64(10*statemachine.Second) {
		return nil, control.Errorf(control.CodeInvalidArgument, "EINVAL: %d requests, timeout %d ns", len(p.Requests), p.TimeoutNs)
	}
	var reqs []statemachine.EPRequest
	for i := range p.Requests {
		rq, err := a.epRequestOf(&p.Requests[i])
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, rq)
	}
	b, err := a.ep.SendBatch(now, o, reqs, statemachine.Time(p.TimeoutNs), &a.out)
	if err != nil {
		return nil, ctlErr(err)
	}
	a.batSeq++
	a.bat[a.batSeq] = b
	return control.EPBatchSendResult{Batch: a.batSeq}, nil
}

func (a *Agent) epBatchResult(now statemachine.Time, p *control.EPBatchResultParams) (any, error) {
	b, ok := a.bat[p.Batch]
	if !ok {
		return nil, control.Errorf(control.CodeNotFound, "batch %d", p.Batch)
	}
	if !b.Done(now) {
		return control.EPBatchResult{}, nil
	}
	delete(a.bat, p.Batch)
	rs, err := b.Result()
	r := control.EPBatchResult{Done: true}
	if ce, ok := err.(*statemachine.CtlError); ok {
		r.Error = ce.Errno.String()
	}
	for _, x := range rs {
		r.Responses = append(r.Responses, control.EPResponse{ReqID: x.ReqID, Port: int(x.Port), RTTNs: int64(x.RTT),
			AdjSvcTime: a.rules.adjSvcTime(x.AdjSvcTime)})
	}
	a.rules.orderBatch(r.Responses)
	return r, nil
}

// MaxQPHints is max_qp_hint, the QP hints the agent holds at once.
const MaxQPHints = 64

func (a *Agent) createQPHint(p *control.QPHint) (any, error) {
	at := statemachine.QPHintAttr{NumQPsPerPeer: p.NumQPsPerPeer, NumSendPeers: p.NumSendPeers, NumRemoteRecvPeers: p.NumRemoteRecvPeers}
	if p.VendorCfg != "" {
		b, err := hex.DecodeString(p.VendorCfg)
		if err != nil || len(b) > statemachine.VendorCfgSize {
			return nil, control.Errorf(control.CodeInvalidArgument, "vendor_cfg: at most %d bytes in hex", statemachine.VendorCfgSize)
		}
		copy(at.VendorCfg[:], b)
	}
	id, err := a.hints.Create(at)
	return control.QPHintResult{Hint: id}, ctlErr(err)
}

func (a *Agent) destroyQPHint(p *control.QPHintParams) (any, error) {
	return control.Empty{}, ctlErr(a.hints.Destroy(p.Hint))
}

func (a *Agent) queryQPHint(p *control.QPHintParams) (any, error) {
	at, err := a.hints.Query(p.Hint)
	if err != nil {
		return nil, ctlErr(err)
	}
	return control.QPHint{NumQPsPerPeer: at.NumQPsPerPeer, NumSendPeers: at.NumSendPeers, NumRemoteRecvPeers: at.NumRemoteRecvPeers,
		VendorCfg: strings.TrimRight(hex.EncodeToString(at.VendorCfg[:]), "0")}, nil
}
