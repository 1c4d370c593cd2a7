package statemachine

// Tests written against mutants of apievents.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantPortEventsLastPort: port 31, the highest a port mask names,
// raises its port events too (CTL-AEV-2).
func TestMutantPortEventsLastPort(t *testing.T) {
	pe := PortEvents(1<<MaxPlanes, 0, nil)
	if len(pe) != 1 || pe[0] != (AsyncEvent{Type: AsyncPortErr, Port: MaxPlanes}) {
		t.Errorf("port %d going down: %+v, want one IBV_EVENT_PORT_ERR", MaxPlanes, pe)
	}
}

// TestMutantAsyncQueueBound: the queue's bound counts the events waiting,
// not those already got, and a zero Cap means MaxAsyncEvents, not zero
// (CTL-AEV-3).
func TestMutantAsyncQueueBound(t *testing.T) {
	ev := AsyncEvent{Type: AsyncPortErr, Port: 1}
	q := AsyncQueue{Cap: 2}
	q.Add(ev, ev, ev) // the third is dropped
	if _, ok := q.Get(); !ok {
		t.Fatal("no event to get")
	}
	q.Add(ev) // one waits: room for this one
	if q.Dropped != 1 {
		t.Errorf("dropped %d, want 1: after a Get the queue of 2 holds one and has room", q.Dropped)
	}
	var z AsyncQueue
	z.Add(ev)
	if z.Dropped != 0 {
		t.Errorf("a queue with Cap 0 dropped %d, want the default bound of %d", z.Dropped, MaxAsyncEvents)
	}
}

// TestMutantContextVersionBounds: the versions at both ends of [last
// supported, current] are accepted, for the API and the vendor API
// (CTL-VER-2).
func TestMutantContextVersionBounds(t *testing.T) {
	v := Versions{Current: APIVersion(1, 0, 1), LastSupported: APIVersion(0, 9, 0), Vendor: APIVersion(1, 0, 0), LastSupportedVendor: APIVersion(0, 5, 0)}
	for _, c := range [][2]uint32{{v.LastSupported, v.LastSupportedVendor}, {v.Current, v.Vendor}} {
		if _, err := NewContext(c[0], c[1], v); err != nil {
			t.Errorf("API %#x, vendor %#x: %v, want accepted", c[0], c[1], err)
		}
	}
	if _, err := NewContext(v.LastSupported-1, 0, v); !errors.Is(err, EINVAL) {
		t.Errorf("API below the last supported: %v, want EINVAL", err)
	}
}

// TestMutantBatchBounds: a batch as large as the free request slots is
// sent (CTL-BAT-2); a response arriving exactly at the deadline counts, and
// with every request answered the result is no error (CTL-BAT-3).
func TestMutantBatchBounds(t *testing.T) {
	_, _, _, pb := endpoints(t)
	e, err := NewEndpoint(EndpointConfig{SrcIP: netip.AddrFrom4([4]byte{10, 0, 0, 3}), MaxOutstanding: 2})
	if err != nil {
		t.Fatal(err)
	}
	reqs := []EPRequest{{ReqID: 1, Op: wire.EPEVProbe, Dst: pb, Port: 1}, {ReqID: 2, Op: wire.EPEVProbe, Dst: pb, Port: 1}}
	var out Output
	b, err := e.SendBatch(0, wire.EPEVProbe, reqs, 1000, &out)
	if err != nil {
		t.Fatalf("a batch of 2 with 2 free slots: %v", err)
	}
	at := func(id uint16, when Time) *Output {
		return &Output{Events: []Event{{Kind: EvEPResponse, Reason: uint8(wire.EPEVProbe), PSN: uint32(id), Time: when}}}
	}
	b.Collect(at(1, 500))
	b.Collect(at(2, b.Deadline()))
	if rsps, err := b.Result(); err != nil || len(rsps) != 2 {
		t.Errorf("both answered, the second at the deadline: %d responses, %v; want 2 and no error", len(rsps), err)
	}
}

// TestMutantBatchTimeoutPositive (CTL-BAT-3): a batch waits for its
// responses until rsp_timeout elapses, so a timeout of 0, which would
// elapse before any request could be answered, is EINVAL and sends
// nothing; the shortest positive one, 1 ns, is accepted.
func TestMutantBatchTimeoutPositive(t *testing.T) {
	_, _, _, pb := endpoints(t)
	e, err := NewEndpoint(EndpointConfig{SrcIP: netip.AddrFrom4([4]byte{10, 0, 0, 3})})
	if err != nil {
		t.Fatal(err)
	}
	reqs := []EPRequest{{ReqID: 1, Op: wire.EPEVProbe, Dst: pb, Port: 1}}
	var out Output
	if _, err := e.SendBatch(0, wire.EPEVProbe, reqs, 0, &out); !errors.Is(err, EINVAL) || len(out.Packets) != 0 {
		t.Errorf("timeout 0: %v, %d packets sent; want EINVAL and none", err, len(out.Packets))
	}
	b, err := e.SendBatch(0, wire.EPEVProbe, reqs, 1, &out)
	if err != nil || len(out.Packets) != 1 || b.Deadline() != 1 {
		t.Errorf("timeout 1 ns: %v, %d packets sent; want the request sent with deadline 1", err, len(out.Packets))
	}
}
