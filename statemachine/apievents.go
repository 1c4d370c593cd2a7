package statemachine

import (
	"slices"

	"github.com/openmrc/mrc/wire"
)

// The notification side of the API (mrc.h, mrc_ctl.h): CQ notification
// with solicited events and the completion channel, asynchronous events,
// API versions and contexts, and the batch semantics of
// mrc_ctl_ep_batch_send_wait (spec/36-api-objects.md, CTL-CQ-*, CTL-AEV-*,
// CTL-VER-*, CTL-BAT-*). Like the rest of the package they are plain data
// driven by their inputs.

// CQNotify is a CQ's notification state (mrc_req_notify_cq,
// mrc_get_cq_event, mrc_ack_cq_events): armed for the next completion or
// for the next solicited one, at most one CQ event per arming.
type CQNotify struct {
	armed  uint8 // 0 not armed, armNext, armSolicited
	events uint64
	acked  uint64
}

const (
	armNext      = 1
	armSolicited = 2
)

// ReqNotify arms the CQ: for the next completion, or with solicitedOnly
// for the next solicited or unsuccessful one. Arming for any completion
// while armed for solicited ones widens the arming; the reverse does not
// narrow it (CTL-CQ-1).
func (n *CQNotify) ReqNotify(solicitedOnly bool) {
	switch {
	case !solicitedOnly:
		n.armed = armNext
	case n.armed == 0:
		n.armed = armSolicited
	}
}

// Offer shows the CQ a completion just written to it; it reports whether
// the completion raised a CQ event, which disarms the CQ (CTL-CQ-1,
// CTL-CQ-2). A completion is solicited when it is a receive completion of
// a WriteImm sent with the se flag; an error completion wakes a CQ armed
// for solicited events too.
func (n *CQNotify) Offer(c Completion) bool {
	if !n.wake(c) {
		return false
	}
	n.events++
	return true
}

// wake reports whether c raises a CQ event, and disarms the CQ if so.
func (n *CQNotify) wake(c Completion) bool {
	fire := n.armed == armNext || n.armed == armSolicited && (c.Recv && c.Solicited || c.Status != StatusSuccess)
	if fire {
		n.armed = 0
	}
	return fire
}

// CompChannel is an mrc_comp_channel shared by the CQs created on it
// (mrc_create_cq's channel): the CQ events they raise wait in it, oldest
// first, until mrc_get_cq_event returns each with the CQ that raised it;
// an event counts on its CQ, to be acknowledged there, once got
// (CTL-CQ-5). A CQ has at most one event waiting: one it raises while an
// earlier one still waits is merged into it, so the channel holds at most
// one event per CQ (AMB-98).
type CompChannel struct {
	cqs  map[uint32]*CQNotify
	wait []uint32 // CQs with an event waiting, oldest first
}

// NewCompChannel is mrc_create_comp_channel.
func NewCompChannel() *CompChannel { return &CompChannel{cqs: map[uint32]*CQNotify{}} }

// Attach creates CQ cq, whose notification state is n, on the channel; a
// CQ already on it is EINVAL.
func (ch *CompChannel) Attach(cq uint32, n *CQNotify) error {
	if ch.cqs[cq] != nil {
		return ctlErr(EINVAL, "CQ %d is already on the channel", cq)
	}
	ch.cqs[cq] = n
	return nil
}

// Offer shows CQ cq a completion just written to it; it reports whether
// the completion raised a CQ event, which then waits in the channel
// (CTL-CQ-1, CTL-CQ-5).
func (ch *CompChannel) Offer(cq uint32, c Completion) bool {
	n := ch.cqs[cq]
	if n == nil || !n.wake(c) {
		return false
	}
	if !slices.Contains(ch.wait, cq) {
		ch.wait = append(ch.wait, cq)
	}
	return true
}

// Get is mrc_get_cq_event on a non-blocking channel: the CQ of the
// oldest waiting event, which now counts on that CQ; EAGAIN when none
// waits.
func (ch *CompChannel) Get() (uint32, error) {
	if len(ch.wait) == 0 {
		return 0, ctlErr(EAGAIN, "no CQ event waiting")
	}
	cq := ch.wait[0]
	ch.wait = slices.Delete(ch.wait, 0, 1)
	ch.cqs[cq].events++
	return cq, nil
}

// Waiting is the number of CQ events waiting to be got.
func (ch *CompChannel) Waiting() int { return len(ch.wait) }

// Detach is mrc_destroy_cq of a CQ on the channel: refused with EBUSY
// while events got from it are not acknowledged (CTL-CQ-3); its events
// still waiting leave the channel (CTL-CQ-6).
func (ch *CompChannel) Detach(cq uint32) error {
	n := ch.cqs[cq]
	if n == nil {
		return ctlErr(ENOENT, "CQ %d is not on the channel", cq)
	}
	if err := n.Destroy(); err != nil {
		return err
	}
	delete(ch.cqs, cq)
	ch.wait = slices.DeleteFunc(ch.wait, func(x uint32) bool { return x == cq })
	return nil
}

// Destroy is the check of mrc_destroy_comp_channel: a channel that CQs
// are still created on cannot go; EBUSY (CTL-CQ-6).
func (ch *CompChannel) Destroy() error {
	if n := len(ch.cqs); n != 0 {
		return ctlErr(EBUSY, "%d CQs still on the channel", n)
	}
	return nil
}

// Events returns the CQ events raised and not yet acknowledged.
func (n *CQNotify) Events() uint64 { return n.events - n.acked }

// Ack is mrc_ack_cq_events: acknowledging more events than were raised is
// EINVAL (CTL-CQ-3).
func (n *CQNotify) Ack(k uint64) error {
	if k > n.Events() {
		return ctlErr(EINVAL, "ack of %d CQ events, %d unacknowledged", k, n.Events())
	}
	n.acked += k
	return nil
}

// Destroy is the check of mrc_destroy_cq: a CQ with CQ events not yet
// acknowledged cannot go (it would wait for them); EBUSY (CTL-CQ-3).
func (n *CQNotify) Destroy() error {
	if e := n.Events(); e != 0 {
		return ctlErr(EBUSY, "%d CQ events not acknowledged", e)
	}
	return nil
}

// AsyncEventType is enum ibv_event_type (libibverbs), the type of an
// mrc_async_event.
type AsyncEventType uint8

// The asynchronous events the reference raises (CTL-AEV-1, CTL-AEV-2,
// CTL-AEV-4, CTL-AEV-5, CTL-AEV-6, AMB-70, AMB-95, AMB-96). Verbs' other
// types are not raised: PATH_MIG needs an alternate path, which an MRC QP
// does not have (QP-ST-7), and there is no SRQ.
const (
	AsyncCQErr       AsyncEventType = 0  // IBV_EVENT_CQ_ERR: a completion found its CQ full (AMB-95)
	AsyncQPFatal     AsyncEventType = 1  // IBV_EVENT_QP_FATAL: an error no completion reports moved the QP to ERROR
	AsyncQPReqErr    AsyncEventType = 2  // IBV_EVENT_QP_REQ_ERR: the responder met an invalid request
	AsyncQPAccessErr AsyncEventType = 3  // IBV_EVENT_QP_ACCESS_ERR: the responder met an access violation
	AsyncCommEst     AsyncEventType = 4  // IBV_EVENT_COMM_EST: the first request packet reached the QP in RTR
	AsyncSQDrained   AsyncEventType = 5  // IBV_EVENT_SQ_DRAINED: the QP in SQD drained its send queue
	AsyncPortActive  AsyncEventType = 9  // IBV_EVENT_PORT_ACTIVE
	AsyncPortErr     AsyncEventType = 10 // IBV_EVENT_PORT_ERR
)

// AsyncEvent is struct mrc_async_event: the element (a QP number or a
// 1-based port) and the event type.
type AsyncEvent struct {
	Type AsyncEventType
	QPN  uint32
	Port uint8
}

// AsyncEventsOf returns the asynchronous events of one step's Output: a
// responder-detected error that moved a QP to ERROR raises
// IBV_EVENT_QP_REQ_ERR (no receive WR for a WriteImm, max_wimm_dest
// exceeded) or IBV_EVENT_QP_ACCESS_ERR (a write outside the registered
// memory); an error the requester met (retries exhausted, a NACK
// UNEXP_EVENT, an AETH NAK) raises IBV_EVENT_QP_FATAL only when no work
// request was there to complete with it, since a completion reports it
// otherwise, as in verbs; the application's modify raises none
// (CTL-AEV-1, CTL-AEV-5, AMB-70). A QP in RTR accepting its first request
// packet raises IBV_EVENT_COMM_EST (CTL-AEV-4, AMB-96), and one in SQD
// that drained its send queue IBV_EVENT_SQ_DRAINED if asked (CTL-AEV-6).
func AsyncEventsOf(out *Output, dst []AsyncEvent) []AsyncEvent {
	for i := range out.Events {
		e := &out.Events[i]
		switch e.Kind {
		case EvCommEst:
			dst = append(dst, AsyncEvent{Type: AsyncCommEst, QPN: e.QPN})
			continue
		case EvSQDrained:
			dst = append(dst, AsyncEvent{Type: AsyncSQDrained, QPN: e.QPN})
			continue
		case EvQPError:
		default:
			continue
		}
		switch ErrorCause(e.Reason) {
		case CauseNoRecvWR, CauseWIMMLimit:
			dst = append(dst, AsyncEvent{Type: AsyncQPReqErr, QPN: e.QPN})
		case CauseAccess:
			dst = append(dst, AsyncEvent{Type: AsyncQPAccessErr, QPN: e.QPN})
		case CauseModify, CauseNoError:
		default:
			if e.Flags&FlagNoCompletion != 0 {
				dst = append(dst, AsyncEvent{Type: AsyncQPFatal, QPN: e.QPN})
			}
		}
	}
	return dst
}

// PortEvents returns IBV_EVENT_PORT_ERR for each port up in from and down
// in to, and IBV_EVENT_PORT_ACTIVE for each the other way, in port order
// (bit n = port n; CTL-AEV-2): a port disabled administratively is down
// (CTL-PORT-2).
func PortEvents(from, to uint32, dst []AsyncEvent) []AsyncEvent {
	for p := uint8(1); p <= MaxPlanes; p++ {
		was, is := from>>p&1 != 0, to>>p&1 != 0
		switch {
		case was && !is:
			dst = append(dst, AsyncEvent{Type: AsyncPortErr, Port: p})
		case !was && is:
			dst = append(dst, AsyncEvent{Type: AsyncPortActive, Port: p})
		}
	}
	return dst
}

// AsyncQueue is a context's asynchronous event queue
// (mrc_get_async_event, mrc_ack_async_event): events in order, each to be
// acknowledged, at most Cap waiting; beyond it the oldest are kept and
// the overflow counted (CTL-AEV-3).
type AsyncQueue struct {
	q        []AsyncEvent
	Cap      int // 0 means MaxAsyncEvents
	Dropped  uint64
	gotten   uint64
	acked    uint64
	consumed int
}

// MaxAsyncEvents is the default bound of an AsyncQueue.
const MaxAsyncEvents = 1024

// Add queues events.
func (a *AsyncQueue) Add(evs ...AsyncEvent) {
	c := a.Cap
	if c <= 0 {
		c = MaxAsyncEvents
	}
	for _, e := range evs {
		if len(a.q)-a.consumed >= c {
			a.Dropped++
			continue
		}
		a.q = append(a.q, e)
	}
}

// Get returns the next event; false when none waits.
func (a *AsyncQueue) Get() (AsyncEvent, bool) {
	if a.consumed == len(a.q) {
		return AsyncEvent{}, false
	}
	e := a.q[a.consumed]
	a.consumed++
	a.gotten++
	if a.consumed == len(a.q) {
		a.q, a.consumed = a.q[:0], 0
	}
	return e, true
}

// Ack acknowledges one event got with Get; acknowledging more than were
// got is EINVAL.
func (a *AsyncQueue) Ack() error {
	if a.acked == a.gotten {
		return ctlErr(EINVAL, "no asynchronous event to acknowledge")
	}
	a.acked++
	return nil
}

// Unacked is the number of events got and not acknowledged; a context
// with some cannot be destroyed (CTL-AEV-3).
func (a *AsyncQueue) Unacked() uint64 { return a.gotten - a.acked }

// APIVersion is MRC_API_VER and MRC_CTL_API_VER: major in bits 31-24,
// minor in 23-16, subminor in 15-0.
func APIVersion(major, minor, sub uint32) uint32 { return major<<24 | minor<<16 | sub }

// Versions is what mrc_query_version and mrc_ctl_query_version return.
type Versions struct {
	Current, LastSupported, Vendor, LastSupportedVendor uint32
}

// The API versions this implementation speaks: both the MRC and the
// control API at 1.0.1 back to 0.0.0, the vendor APIs at 1.0.0 (CTL-VER-1).
var (
	MRCVersions = Versions{Current: APIVersion(1, 0, 1), Vendor: APIVersion(1, 0, 0)}
	CtlVersions = Versions{Current: APIVersion(1, 0, 1), Vendor: APIVersion(1, 0, 0)}
)

// Context is an mrc_context with the versions the application uses.
type Context struct {
	APIUsed, VendorUsed uint32
	Async               AsyncQueue
}

// NewContext is mrc_create_context: a version 0 lets the provider choose
// (the current one); a version outside [last supported, current] is
// refused with EINVAL (CTL-VER-2, AMB-71).
func NewContext(apiUsed, vendorUsed uint32, v Versions) (*Context, error) {
	if apiUsed == 0 {
		apiUsed = v.Current
	}
	if vendorUsed == 0 {
		vendorUsed = v.Vendor
	}
	if apiUsed < v.LastSupported || apiUsed > v.Current {
		return nil, ctlErr(EINVAL, "API version %#x outside [%#x, %#x]", apiUsed, v.LastSupported, v.Current)
	}
	if vendorUsed < v.LastSupportedVendor || vendorUsed > v.Vendor {
		return nil, ctlErr(EINVAL, "vendor API version %#x outside [%#x, %#x]", vendorUsed, v.LastSupportedVendor, v.Vendor)
	}
	return &Context{APIUsed: apiUsed, VendorUsed: vendorUsed}, nil
}

// QueryDeviceEx is the version gate of mrc_query_device_ex and
// mrc_ctl_query_device_ex, which exist from 1.0.1: an older context gets
// ENOTSUP (CTL-VER-3).
func (c *Context) QueryDeviceEx() error {
	if c.APIUsed < APIVersion(1, 0, 1) {
		return ctlErr(ENOTSUP, "query_device_ex needs API 1.0.1, the context uses %#x", c.APIUsed)
	}
	return nil
}

// EVEventView is an EV event as a context of its version sees it: the
// state field exists from control API 1.0.1 and reads UNKNOWN before
// (CTL-VER-3).
func (c *Context) EVEventView(e EVEvent) EVEvent {
	if c.APIUsed < APIVersion(1, 0, 1) {
		e.State = EVUnknown
	}
	return e
}

// EPResponse is struct mrc_ctl_ep_rsp.
type EPResponse struct {
	ReqID uint16
	Port  uint8 // 1-based port the response arrived on
	RTT   Time
	// AdjSvcTime: the RTT has been reduced by the responder's service
	// time; always false, as no wire field carries it (EP-PRB-3).
	AdjSvcTime bool
}

// EPBatch is one call of mrc_ctl_ep_batch_send_wait (CTL-BAT-1 to
// CTL-BAT-4): requests of one operation type sent together, responses
// collected in arrival order until each request is answered or
// rsp_timeout elapses. Responses to other requests, and any arriving
// after the call has returned, are not the batch's: nothing is buffered
// between calls.
type EPBatch struct {
	op       wire.EndpointOp
	ids      []uint16
	answered []bool
	deadline Time
	rsps     []EPResponse
	closed   bool
}

// SendBatch sends reqs, all of operation op, and returns the batch
// waiting for their responses until now + timeout. An empty batch, a
// request of another type, or a request id repeated in the batch or still
// outstanding is EINVAL; more requests than the endpoint can have
// outstanding is EAGAIN; an operation other than EV_PROBE and
// PORT_STATUS_UPDATE is ENOTSUP. Nothing is sent unless every request is
// valid.
func (e *Endpoint) SendBatch(now Time, op wire.EndpointOp, reqs []EPRequest, timeout Time, out *Output) (*EPBatch, error) {
	if op != wire.EPEVProbe && op != wire.EPPortStatusUpdate {
		return nil, ctlErr(ENOTSUP, "endpoint op %d", op)
	}
	if len(reqs) == 0 || timeout <= 0 {
		return nil, ctlErr(EINVAL, "%d requests, timeout %d ns", len(reqs), timeout)
	}
	free := 0
	for i := range e.pend {
		if !e.pend[i].valid {
			free++
		}
	}
	if len(reqs) > free {
		return nil, ctlErr(EAGAIN, "%d requests, %d free slots", len(reqs), free)
	}
	b := &EPBatch{op: op, deadline: addSat(now, timeout), answered: make([]bool, len(reqs))}
	for i, r := range reqs {
		if r.Op != op {
			return nil, ctlErr(EINVAL, "request %d has op %d in a batch of op %d", i, r.Op, op)
		}
		if slices.Contains(b.ids, r.ReqID) || e.outstanding(r.ReqID) {
			return nil, ctlErr(EINVAL, "request id %d repeated or outstanding (EP-GEN-2)", r.ReqID)
		}
		b.ids = append(b.ids, r.ReqID)
	}
	for _, r := range reqs {
		if err := e.Send(now, r, out); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Collect takes the batch's responses out of a step's events, in arrival
// order, the first for each request only.
func (b *EPBatch) Collect(out *Output) {
	if b.closed {
		return
	}
	for i := range out.Events {
		ev := &out.Events[i]
		if ev.Kind != EvEPResponse || wire.EndpointOp(ev.Reason) != b.op {
			continue
		}
		k := slices.Index(b.ids, uint16(ev.PSN))
		if k < 0 || b.answered[k] || ev.Time > b.deadline {
			continue
		}
		b.answered[k] = true
		b.rsps = append(b.rsps, EPResponse{ReqID: uint16(ev.PSN), Port: ev.Plane + 1, RTT: Time(ev.Value)})
	}
}

// Done reports whether the call returns at now: every request answered,
// or the timeout passed.
func (b *EPBatch) Done(now Time) bool {
	return now >= b.deadline || !slices.Contains(b.answered, false)
}

// Deadline is when the call returns at the latest.
func (b *EPBatch) Deadline() Time { return b.deadline }

// Result returns the responses and closes the batch: ETIMEDOUT, with the
// responses that did arrive, when some request went unanswered (EP-GEN-7,
// CTL-BAT-3).
func (b *EPBatch) Result() ([]EPResponse, error) {
	b.closed = true
	if n := len(b.rsps); n < len(b.ids) {
		return b.rsps, ctlErr(ETIMEDOUT, "%d of %d requests answered", n, len(b.ids))
	}
	return b.rsps, nil
}
