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

// TestMutantEndpointPortMaskPlane: a port status update arriving on port 3
// is reported with plane 2, the plane of the port it came in on, so the
// caller applies the sender's mask to the right node (EP-PSU-3).
func TestMutantEndpointPortMaskPlane(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	if err := a.Send(0, EPRequest{ReqID: 1, Op: wire.EPPortStatusUpdate, Dst: pb, EV: 7, Port: 3, PortStatus: 0b1010}, &out); err != nil {
		t.Fatal(err)
	}
	req := out.Packets[0].Pkt
	out.Reset()
	b.Receive(100, 3, &req, &out)
	if len(out.Events) != 1 || out.Events[0].Kind != EvRemotePortMask || out.Events[0].Plane != 2 {
		t.Errorf("events %v, want one EvRemotePortMask on plane 2", out.Events)
	}
}

// TestMutantEndpointReverseEV: a response leaves on the reverse EV
// configured for the port its request arrived on, and on the request's own
// EV where none is configured (EP-GEN-6).
func TestMutantEndpointReverseEV(t *testing.T) {
	a, _, _, pb := endpoints(t)
	b, err := NewEndpoint(EndpointConfig{SrcMAC: pb.MAC, SrcIP: pb.IP, ReverseEV: [MaxPlanes]uint32{2: 0x99}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		port int
		want uint32
	}{{3, 0x99}, {1, 7}} {
		var out Output
		if err := a.Send(0, EPRequest{ReqID: uint16(c.port), Op: wire.EPEVProbe, Dst: pb, EV: 7, Port: uint8(c.port)}, &out); err != nil {
			t.Fatal(err)
		}
		req := out.Packets[0].Pkt
		out.Reset()
		b.Receive(100, c.port, &req, &out)
		if len(out.Packets) != 1 {
			t.Fatalf("a request on port %d: %d packets, want one response", c.port, len(out.Packets))
		}
		if out.Packets[0].EV != c.want {
			t.Errorf("a request on port %d answered on EV %#x, want %#x", c.port, out.Packets[0].EV, c.want)
		}
	}
}

// TestMutantEndpointRepeatAfterInterval: an unanswered port status update
// is repeated one RepeatInterval after it was sent, not earlier (EP-PSU-4).
func TestMutantEndpointRepeatAfterInterval(t *testing.T) {
	a, _, _, pb := endpoints(t)
	var out Output
	if err := a.AnnouncePorts(5*Millisecond, 0b110, []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}, &out); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	a.Advance(6*Millisecond-1, &out)
	if len(out.Packets) != 0 {
		t.Errorf("%d packets 1 ns before the repeat interval ends, want none", len(out.Packets))
	}
	a.Advance(6*Millisecond, &out)
	if len(out.Packets) != 1 {
		t.Errorf("%d packets when the repeat interval ends, want the repeat", len(out.Packets))
	}
}

// TestMutantEndpointAnnounceReportsFailure: AnnouncePorts reports a peer it
// could not send the update to: with a table of one outstanding request the
// second peer's update finds no request id free (EP-GEN-2, EP-PSU-1).
func TestMutantEndpointAnnounceReportsFailure(t *testing.T) {
	_, _, pa, pb := endpoints(t)
	e, err := NewEndpoint(EndpointConfig{SrcIP: netip.AddrFrom4([4]byte{10, 0, 0, 3}), MaxOutstanding: 1})
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	err = e.AnnouncePorts(0, 0b110, []PortPeer{{Peer: pa, EV: 1, Port: 1}, {Peer: pb, EV: 2, Port: 1}}, &out)
	if !errors.Is(err, ErrTooManyRequests) || len(out.Packets) != 1 {
		t.Errorf("two peers, a table of one: %v, %d packets; want ErrTooManyRequests and one update", err, len(out.Packets))
	}
}

// TestMutantEndpointAnnounceNewPeers: the same mask to the same peers sends
// nothing new, and the same mask to another peer starts over and notifies
// it (EP-PSU-1, EP-PSU-4).
func TestMutantEndpointAnnounceNewPeers(t *testing.T) {
	a, _, pa, pb := endpoints(t)
	var out Output
	if err := a.AnnouncePorts(0, 0b110, []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}, &out); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := a.AnnouncePorts(1, 0b110, []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}, &out); err != nil || len(out.Packets) != 0 {
		t.Errorf("the same mask to the same peer: %v, %d packets; want none", err, len(out.Packets))
	}
	if err := a.AnnouncePorts(2, 0b110, []PortPeer{{Peer: pa, EV: 0x10, Port: 1}}, &out); err != nil || len(out.Packets) != 1 ||
		out.Packets[0].Pkt.IP4.Dst != pa.IP.As4() {
		t.Errorf("the same mask to another peer: %v, %d packets; want one update to it", err, len(out.Packets))
	}
}

// TestMutantEndpointAnnounceSkipsOutstandingID: the id of a NIC-initiated
// update skips the ids of outstanding requests (EP-GEN-2): with request 1
// waiting, the update (whose automatic id would otherwise be 1) takes
// another.
func TestMutantEndpointAnnounceSkipsOutstandingID(t *testing.T) {
	a, _, _, pb := endpoints(t)
	var out Output
	if err := a.Send(0, EPRequest{ReqID: 1, Op: wire.EPEVProbe, Dst: pb, EV: 7, Port: 1}, &out); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := a.AnnouncePorts(0, 0b110, []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}, &out); err != nil || len(out.Packets) != 1 {
		t.Fatalf("announce with request 1 outstanding: %v, %d packets", err, len(out.Packets))
	}
	if id := out.Packets[0].Pkt.BTH.PSN; id == 1 {
		t.Errorf("update id %d, the id of an outstanding request", id)
	}
}
