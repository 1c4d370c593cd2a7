package statemachine

// Tests written against mutants of endpoint.go that the package's other
// tests let live (applied by hand, as scripts/mutate.sh's stage 2 does).

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantEndpointOutstandingLimit: the table of outstanding requests
// holds 1 to 65 536 (one per request id, EP-GEN-2); both ends are accepted
// and 65 537 refused, and a table of one refuses a second request while the
// first waits.
func TestMutantEndpointOutstandingLimit(t *testing.T) {
	src := netip.AddrFrom4([4]byte{10, 0, 0, 1})
	for _, c := range []struct {
		n  int
		ok bool
	}{{1, true}, {1 << 16, true}, {1<<16 + 1, false}} {
		e, err := NewEndpoint(EndpointConfig{SrcIP: src, MaxOutstanding: c.n})
		var ce *ConfigError
		if c.ok && (err != nil || len(e.pend) != c.n) || !c.ok && !errors.As(err, &ce) {
			t.Errorf("MaxOutstanding %d: error %v, want accepted %v", c.n, err, c.ok)
		}
	}
	e, err := NewEndpoint(EndpointConfig{SrcIP: src, MaxOutstanding: 1})
	if err != nil {
		t.Fatal(err)
	}
	dst := Peer{IP: netip.AddrFrom4([4]byte{10, 0, 0, 2})}
	var out Output
	if err := e.Send(0, EPRequest{ReqID: 1, Op: wire.EPEVProbe, Dst: dst, Port: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if err := e.Send(0, EPRequest{ReqID: 2, Op: wire.EPEVProbe, Dst: dst, Port: 1}, &out); !errors.Is(err, ErrTooManyRequests) {
		t.Errorf("second request with a table of one: %v, want ErrTooManyRequests", err)
	}
}

// TestMutantEndpointLastPortAndDSCP: a request may leave from port 31, the
// highest a port-status mask names (WIRE-ERTH-2), with DSCP 63, the highest
// six bits hold (EP-GEN-3, EP-GEN-4); port 32 and DSCP 64 are refused. A
// request arriving on port 31 is answered from it (EP-GEN-6).
func TestMutantEndpointLastPortAndDSCP(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	if err := a.Send(0, EPRequest{ReqID: 1, Op: wire.EPEVProbe, Dst: pb, EV: 5, Port: MaxPlanes, DSCP: 63}, &out); err != nil {
		t.Fatalf("port %d, DSCP 63: %v", MaxPlanes, err)
	}
	req := out.Packets[0]
	if req.Plane != MaxPlanes-1 || req.Pkt.DSCP() != 63 {
		t.Errorf("request on plane %d with DSCP %d", req.Plane, req.Pkt.DSCP())
	}
	for _, rq := range []EPRequest{{ReqID: 2, Port: MaxPlanes + 1}, {ReqID: 3, Port: 1, DSCP: 64}} {
		rq.Op, rq.Dst = wire.EPEVProbe, pb
		if err := a.Send(0, rq, &out); !errors.Is(err, ErrInvalidAttr) {
			t.Errorf("port %d, DSCP %d: %v, want ErrInvalidAttr", rq.Port, rq.DSCP, err)
		}
	}
	out.Reset()
	b.Receive(100, MaxPlanes, &req.Pkt, &out)
	if len(out.Packets) != 1 || out.Packets[0].Plane != MaxPlanes-1 || out.Packets[0].Pkt.BTH.Opcode != wire.OpEndpointResp {
		t.Errorf("a request on port %d: %d packets, events %v; want its response from that port", MaxPlanes, len(out.Packets), out.Events)
	}
}

// TestMutantEndpointRepeatDropsWait: a repeated port status update takes
// the place of the one it repeats (EP-PSU-4): the earlier request no longer
// waits, so it never times out and an answer to it matches nothing
// (EP-GEN-8).
func TestMutantEndpointRepeatDropsWait(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	if err := a.AnnouncePorts(0, 0b110, []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}, &out); err != nil {
		t.Fatal(err)
	}
	first := out.Packets[0].Pkt
	out.Reset()
	a.Advance(Millisecond, &out) // the repeat, under a new request id
	if len(out.Packets) != 1 || out.Packets[0].Pkt.BTH.PSN == first.BTH.PSN {
		t.Fatalf("repeat: %d packets", len(out.Packets))
	}
	out.Reset()
	a.Advance(2*Millisecond, &out) // the first request's timeout, had it waited
	for _, e := range out.Events {
		if e.Kind == EvEPTimeout && e.PSN == first.BTH.PSN {
			t.Errorf("the repeated update %d timed out: it still waited", e.PSN)
		}
	}
	var rsp Output
	b.Receive(2*Millisecond, 1, &first, &rsp)
	out.Reset()
	a.Receive(2*Millisecond, 1, &rsp.Packets[0].Pkt, &out)
	if len(out.Events) != 1 || out.Events[0].Kind != EvIgnored {
		t.Errorf("an answer to the repeated update: events %v, want it ignored", out.Events)
	}
}
