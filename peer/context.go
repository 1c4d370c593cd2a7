package peer

import (
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

// MaxContexts bounds the contexts a control client holds at once
// (create_context beyond it: resource_exhausted).
const MaxContexts = 16

// createContext, destroyContext and queryDeviceEx answer create_context
// (mrc_create_context with the versions asked for, CTL-VER-2),
// destroy_context and query_device_ex (mrc_ctl_query_device_ex, which a
// context older than 1.0.1 lacks, CTL-VER-3). The agent's objects and asynchronous events are the
// device's, whichever context asks.
func (a *Agent) createContext(p *control.CreateContextParams) (any, error) {
	if len(a.ctxs) >= MaxContexts {
		return nil, control.Errorf(control.CodeResourceExhausted, "ENOMEM: at most %d contexts", MaxContexts)
	}
	c, err := statemachine.NewContext(p.APIVersion, p.VendorVersion, statemachine.MRCVersions)
	if err != nil && !a.rules.checksContextVersion() {
		c, err = &statemachine.Context{APIUsed: p.APIVersion, VendorUsed: p.VendorVersion}, nil
	}
	if err != nil {
		return nil, ctlErr(err)
	}
	a.ctxSeq++
	a.ctxs[a.ctxSeq] = c
	return control.ContextResult{Context: a.ctxSeq, APIVersion: c.APIUsed, VendorVersion: c.VendorUsed}, nil
}

func (a *Agent) contextOf(p *control.ContextParams) (*statemachine.Context, error) {
	if c := a.ctxs[p.Context]; c != nil {
		return c, nil
	}
	return nil, control.Errorf(control.CodeNotFound, "context %d", p.Context)
}

func (a *Agent) destroyContext(p *control.ContextParams) (any, error) {
	if _, err := a.contextOf(p); err != nil {
		return nil, err
	}
	delete(a.ctxs, p.Context)
	return control.Empty{}, nil
}

func (a *Agent) queryDeviceEx(p *control.ContextParams) (any, error) {
	c, err := a.contextOf(p)
	if err != nil {
		return nil, err
	}
	if err := c.QueryDeviceEx(); err != nil {
		return nil, ctlErr(err)
	}
	return a.queryDeviceCtl()
}

// MaxCompChannels bounds the completion channels a client holds at once.
const MaxCompChannels = 16

// createCompChannel, destroyCompChannel and getCQEvent answer
// create_comp_channel, destroy_comp_channel (refused,
// EBUSY, while a QP's CQ is on the channel; CTL-CQ-6) and get_cq_event
// (the QP whose CQ raised the oldest waiting event, which then counts on
// that CQ for get_cq_events to acknowledge; CTL-CQ-5).
func (a *Agent) createCompChannel() (any, error) {
	if len(a.chans) >= MaxCompChannels {
		return nil, control.Errorf(control.CodeResourceExhausted, "EMFILE: at most %d completion channels", MaxCompChannels)
	}
	a.chSeq++
	a.chans[a.chSeq] = statemachine.NewCompChannel()
	return control.ChannelParams{Channel: a.chSeq}, nil
}

func (a *Agent) channelOf(p *control.ChannelParams) (*statemachine.CompChannel, error) {
	if ch := a.chans[p.Channel]; ch != nil {
		return ch, nil
	}
	return nil, control.Errorf(control.CodeNotFound, "completion channel %d", p.Channel)
}

func (a *Agent) destroyCompChannel(p *control.ChannelParams) (any, error) {
	ch, err := a.channelOf(p)
	if err != nil {
		return nil, err
	}
	if err := ch.Destroy(); err != nil {
		return nil, ctlErr(err)
	}
	delete(a.chans, p.Channel)
	return control.Empty{}, nil
}

func (a *Agent) getCQEvent(p *control.ChannelParams) (any, error) {
	ch, err := a.channelOf(p)
	if err != nil {
		return nil, err
	}
	qpn, err := ch.Get()
	if err != nil {
		return control.CQEventResult{}, nil
	}
	return control.CQEventResult{QPN: qpn, Found: true}, nil
}
