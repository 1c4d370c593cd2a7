package peer

import (
	"encoding/json"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

// MaxContexts bounds the contexts a control client holds at once
// (create_context beyond it: resource_exhausted).
const MaxContexts = 16

// context answers create_context (mrc_create_context with the versions
// asked for, CTL-VER-2), destroy_context and query_device_ex
// (mrc_ctl_query_device_ex, which a context older than 1.0.1 lacks,
// CTL-VER-3). The agent's objects and asynchronous events are the
// device's, whichever context asks.
func (a *Agent) context(method string, params json.RawMessage) (any, error) {
	if method == control.MethodCreateContext {
		var p control.CreateContextParams
		if err := control.Decode(params, &p); err != nil {
			return nil, err
		}
		if len(a.ctxs) >= MaxContexts {
			return nil, control.Errorf(control.CodeResourceExhausted, "ENOMEM: at most %d contexts", MaxContexts)
		}
		c, err := statemachine.NewContext(p.APIVersion, p.VendorVersion, statemachine.MRCVersions)
		if err != nil && a.cfg.Faults.has(faultContextAnyVersion) {
			c, err = &statemachine.Context{APIUsed: p.APIVersion, VendorUsed: p.VendorVersion}, nil
		}
		if err != nil {
			return nil, ctlErr(err)
		}
		a.ctxSeq++
		a.ctxs[a.ctxSeq] = c
		return control.ContextResult{Context: a.ctxSeq, APIVersion: c.APIUsed, VendorVersion: c.VendorUsed}, nil
	}
	var p control.ContextParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	c := a.ctxs[p.Context]
	if c == nil {
		return nil, control.Errorf(control.CodeNotFound, "context %d", p.Context)
	}
	if method == control.MethodDestroyContext {
		delete(a.ctxs, p.Context)
		return control.Empty{}, nil
	}
	if err := c.QueryDeviceEx(); err != nil {
		return nil, ctlErr(err)
	}
	return a.queryDeviceCtl()
}

// MaxCompChannels bounds the completion channels a client holds at once.
const MaxCompChannels = 16

// compChannel answers create_comp_channel, destroy_comp_channel (refused,
// EBUSY, while a QP's CQ is on the channel; CTL-CQ-6) and get_cq_event
// (the QP whose CQ raised the oldest waiting event, which then counts on
// that CQ for get_cq_events to acknowledge; CTL-CQ-5).
func (a *Agent) compChannel(method string, params json.RawMessage) (any, error) {
	if method == control.MethodCreateCompChannel {
		if len(a.chans) >= MaxCompChannels {
			return nil, control.Errorf(control.CodeResourceExhausted, "EMFILE: at most %d completion channels", MaxCompChannels)
		}
		a.chSeq++
		a.chans[a.chSeq] = statemachine.NewCompChannel()
		return control.ChannelParams{Channel: a.chSeq}, nil
	}
	var p control.ChannelParams
	if err := control.Decode(params, &p); err != nil {
		return nil, err
	}
	ch := a.chans[p.Channel]
	if ch == nil {
		return nil, control.Errorf(control.CodeNotFound, "completion channel %d", p.Channel)
	}
	if method == control.MethodDestroyCompChannel {
		if err := ch.Destroy(); err != nil {
			return nil, ctlErr(err)
		}
		delete(a.chans, p.Channel)
		return control.Empty{}, nil
	}
	qpn, err := ch.Get()
	if err != nil {
		return control.CQEventResult{}, nil
	}
	return control.CQEventResult{QPN: qpn, Found: true}, nil
}
