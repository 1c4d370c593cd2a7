package statemachine

import (
	"github.com/openmrc/mrc/spec"
	"net/netip"
	"slices"
	"testing"

	"github.com/openmrc/mrc/wire"
)

func endpoints(t *testing.T) (a, b *Endpoint, pa, pb Peer) {
	pa = Peer{MAC: [6]byte{2, 0, 0, 0, 0, 1}, IP: netip.AddrFrom4([4]byte{10, 0, 0, 1})}
	pb = Peer{MAC: [6]byte{2, 0, 0, 0, 0, 2}, IP: netip.AddrFrom4([4]byte{10, 0, 0, 2})}
	var err error
	if a, err = NewEndpoint(EndpointConfig{SrcMAC: pa.MAC, SrcIP: pa.IP}); err != nil {
		t.Fatal(err)
	}
	if b, err = NewEndpoint(EndpointConfig{SrcMAC: pb.MAC, SrcIP: pb.IP}); err != nil {
		t.Fatal(err)
	}
	return a, b, pa, pb
}

// TestEndpointProbe: an EV probe goes to QP 0x2 with its request id in BTH
// psn bits 15:0 and the caller's DSCP; the answer repeats id and op,
// reflects the timestamp in DSCP_CONTROL from the arrival port, and yields
// the RTT from the timestamp; it leaves from req_ev's port with its EV
// (EP-GEN-3) (EP-GEN-1, EP-GEN-2, EP-GEN-4, EP-GEN-5,
// EP-GEN-6, EP-PRB-1, EP-PRB-2, WIRE-EP-1, WIRE-BTH-8, WIRE-EETH-1).
func TestEndpointProbe(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	if err := a.Send(1280, EPRequest{ReqID: 0xBEEF, Op: wire.EPEVProbe, Dst: pb, EV: 0x1234, Port: 3, DSCP: 10}, &out); err != nil {
		t.Fatal(err)
	}
	req := out.Packets[0]
	if req.Pkt.BTH.DestQP != wire.EndpointQPN || req.Pkt.BTH.PSN != 0xBEEF || req.Pkt.DSCP() != 10 || req.Plane != 2 ||
		req.Pkt.ERTH.Op != wire.EPEVProbe || req.Pkt.ERTH.TxTimestamp != 10 {
		t.Fatalf("request %+v", req.Pkt.BTH)
	}
	out.Reset()
	b.Receive(2000, 2, &req.Pkt, &out)
	rsp := out.Packets[0]
	if rsp.Pkt.BTH.Opcode != wire.OpEndpointResp || rsp.Pkt.BTH.PSN != 0xBEEF || rsp.Pkt.EETH.Op != wire.EPEVProbe ||
		rsp.Pkt.EETH.TxTimestamp != 10 || rsp.Pkt.DSCP() != 46 || rsp.Plane != 1 || rsp.Pkt.IP4.Dst != req.Pkt.IP4.Src {
		t.Fatalf("response %+v %+v", rsp.Pkt.BTH, rsp.Pkt.EETH)
	}
	out.Reset()
	a.Receive(1280*5, 1, &rsp.Pkt, &out)
	if len(out.Events) != 1 || out.Events[0].Kind != EvEPResponse || out.Events[0].Value != 4*1280 || out.Events[0].PSN != 0xBEEF {
		t.Errorf("events %v, want one response with RTT 5120 ns", out.Events)
	}
	out.Reset()
	a.Receive(1280*6, 1, &rsp.Pkt, &out) // a second answer matches nothing (EP-GEN-8)
	if len(out.Events) != 1 || out.Events[0].Kind != EvIgnored {
		t.Errorf("a response to no outstanding request: %v", out.Events)
	}
}

// TestEndpointPortStatus: a port status update carries the full mask
// (bit n = port n, bit 0 unused), is answered, and yields EvRemotePortMask
// for the caller to apply to its QPs (EP-PSU-1, EP-PSU-2, EP-PSU-3,
// WIRE-ERTH-2); a NIC-initiated update uses DSCP_CONTROL, a controller's
// (EP-PSU-5) its req_tc (EP-GEN-4).
func TestEndpointPortStatus(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	rq := EPRequest{ReqID: 1, Op: wire.EPPortStatusUpdate, Dst: pb, EV: 7, Port: 1, PortStatus: 0b1010, NICInitiated: true, DSCP: 3}
	if err := a.Send(0, rq, &out); err != nil {
		t.Fatal(err)
	}
	req := out.Packets[0]
	if req.Pkt.DSCP() != 46 || req.Pkt.ERTH.PortStatusMask != 0b1010 {
		t.Errorf("update DSCP %d mask %b", req.Pkt.DSCP(), req.Pkt.ERTH.PortStatusMask)
	}
	out.Reset()
	b.Receive(100, 1, &req.Pkt, &out)
	if len(out.Events) != 1 || out.Events[0].Kind != EvRemotePortMask || out.Events[0].Value != 0b1010 || len(out.Packets) != 1 {
		t.Errorf("receiver: events %v, %d packets", out.Events, len(out.Packets))
	}
	// The mask drives QP.SetPortStatus: port 3 down at the peer.
	o := newOne(t, func(c *testCfg, a *Attr) {
		c.EVProfiles[0].EVs = append(c.EVProfiles[0].EVs, EVEntry{0x300, 3}, EVEntry{0x301, 3})
	})
	o.q.SetPortStatus(0, 0b1110, uint32(out.Events[0].Value), &o.out)
	if n := len(o.events(EvPlane)); n != 1 {
		t.Errorf("%d plane events, want plane 2 down only", n)
	}
	rq.PortStatus = 1
	rq.ReqID = 2
	wantErr(t, a.Send(0, rq, &out), ErrInvalidAttr) // bit 0 is unused
	rq.PortStatus, rq.NICInitiated = 0b10, false
	out.Reset()
	if err := a.Send(0, rq, &out); err != nil || out.Packets[0].Pkt.DSCP() != 3 {
		t.Errorf("controller update: %v, DSCP %d; want req_tc 3", err, out.Packets[0].Pkt.DSCP())
	}
}

// TestEndpointRequests: request ids are unique while outstanding
// (EP-GEN-2), outstanding requests are bounded, and a request unanswered
// within the timeout is reported (EP-GEN-7).
func TestEndpointRequests(t *testing.T) {
	pb := Peer{IP: netip.AddrFrom4([4]byte{10, 0, 0, 2})}
	a, err := NewEndpoint(EndpointConfig{SrcIP: netip.AddrFrom4([4]byte{10, 0, 0, 1}), MaxOutstanding: 2, Timeout: Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	rq := EPRequest{ReqID: 1, Op: wire.EPEVProbe, Dst: pb, Port: 1}
	if err := a.Send(0, rq, &out); err != nil {
		t.Fatal(err)
	}
	wantErr(t, a.Send(0, rq, &out), ErrInvalidAttr)
	rq.ReqID = 2
	if err := a.Send(10, rq, &out); err != nil {
		t.Fatal(err)
	}
	rq.ReqID = 3
	wantErr(t, a.Send(10, rq, &out), ErrTooManyRequests)
	if d := a.NextDeadline(); d != Millisecond {
		t.Fatalf("deadline %d", d)
	}
	out.Reset()
	a.Advance(Millisecond, &out)
	if len(out.Events) != 1 || out.Events[0].Kind != EvEPTimeout || out.Events[0].PSN != 1 {
		t.Errorf("events %v, want request 1 timed out", out.Events)
	}
}

// TestProbeRTTHasNoServiceTimeAdjustment: the RTT an EV probe reports is
// the whole round trip, however long the responder held the request: the
// EETH carries no responder service time, so adj_svc_time is 0 and
// nothing is subtracted (EP-PRB-3, CC-SIG-4).
func TestProbeRTTHasNoServiceTimeAdjustment(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	const sent, held, back = 1280, 64 * 1280, 3 * 1280
	if err := a.Send(sent, EPRequest{ReqID: 7, Op: wire.EPEVProbe, Dst: pb, EV: 0x10, Port: 1}, &out); err != nil {
		t.Fatal(err)
	}
	req := out.Packets[0].Pkt
	out.Reset()
	b.Receive(sent+held, 1, &req, &out)
	rsp := out.Packets[0].Pkt
	if rsp.EETH != (wire.EETH{Op: wire.EPEVProbe, TxTimestamp: req.ERTH.TxTimestamp}) {
		t.Errorf("response EETH %+v carries more than op and the reflected timestamp", rsp.EETH)
	}
	out.Reset()
	a.Receive(sent+held+back, 1, &rsp, &out)
	if len(out.Events) != 1 || out.Events[0].Kind != EvEPResponse || out.Events[0].Value != held+back {
		t.Errorf("events %v, want RTT %d ns (the responder's %d ns not subtracted)", out.Events, held+back, held)
	}
}

// TestAnnouncePortsRepeatsUntilAnswered: the NIC's port status update
// goes to every peer with its complete mask in DSCP_CONTROL, is repeated
// once per millisecond (not sooner) while unanswered, stops once answered,
// and starts again when the mask changes (EP-PSU-1, EP-PSU-2, EP-PSU-4,
// EP-GEN-4).
func TestAnnouncePortsRepeatsUntilAnswered(t *testing.T) {
	a, b, _, pb := endpoints(t)
	var out Output
	peers := []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}
	sent := func() []wire.Packet {
		var ps []wire.Packet
		for _, o := range out.Packets {
			ps = append(ps, o.Pkt)
		}
		out.Reset()
		return ps
	}
	if err := a.AnnouncePorts(0, 0b1100, peers, &out); err != nil {
		t.Fatal(err)
	}
	first := sent()
	if len(first) != 1 || first[0].ERTH.Op != wire.EPPortStatusUpdate || first[0].ERTH.PortStatusMask != 0b1100 ||
		first[0].DSCP() != 46 {
		t.Fatalf("first update %+v", first)
	}
	// Lost. Nothing before a millisecond, one repeat at a millisecond.
	if d := a.NextDeadline(); d != Millisecond {
		t.Errorf("next deadline %d, want 1 ms", d)
	}
	a.Advance(Millisecond/2, &out)
	if n := len(sent()); n != 0 {
		t.Errorf("%d updates after 0.5 ms", n)
	}
	a.Advance(Millisecond, &out)
	again := sent()
	if len(again) != 1 || again[0].ERTH.PortStatusMask != 0b1100 || again[0].BTH.PSN == first[0].BTH.PSN {
		t.Fatalf("repeat %+v", again)
	}
	// Answered: no more repeats, and the same call changes nothing.
	b.Receive(Millisecond+100, 1, &again[0], &out)
	rsp := sent()
	a.Receive(Millisecond+200, 1, &rsp[0], &out)
	out.Reset()
	a.Advance(5*Millisecond, &out)
	_ = a.AnnouncePorts(5*Millisecond, 0b1100, peers, &out)
	if n := len(sent()); n != 0 {
		t.Errorf("%d updates after the answer", n)
	}
	// A port changed: the new mask goes out at once.
	_ = a.AnnouncePorts(6*Millisecond, 0b0100, peers, &out)
	if ps := sent(); len(ps) != 1 || ps[0].ERTH.PortStatusMask != 0b0100 {
		t.Errorf("after the change: %+v", ps)
	}
	if err := a.AnnouncePorts(0, 0b1, peers, &out); err == nil {
		t.Error("bit 0 accepted")
	}
	if _, err := NewEndpoint(EndpointConfig{SrcIP: pb.IP, RepeatInterval: Millisecond / 2}); err == nil {
		t.Error("a repeat interval under 1 ms accepted")
	}
}

// TestEndpointProbeLeavesQPsAlone: a controller EV probe is not tied to a
// QP (EP-PRB-4): an answered probe, an unanswered one and the probe and
// answer packets themselves, even delivered to a QP by mistake, change no
// QP's EV states, and the endpoint reports no EV state change.
func TestEndpointProbeLeavesQPsAlone(t *testing.T) {
	a, b, _, pb := endpoints(t)
	o := newOne(t, nil)
	o.q.begin(0, &o.out)
	o.q.setEV(mustLookup(t, o.q, 0x101), EVAssumedBad, CauseTimeout)
	o.q.end()
	o.take()
	before := o.q.EVs(nil)
	var out Output
	for id, ev := range []uint32{0x100, 0x101} {
		if err := a.Send(0, EPRequest{ReqID: uint16(id + 1), Op: wire.EPEVProbe, Dst: pb, EV: ev, Port: 1}, &out); err != nil {
			t.Fatal(err)
		}
	}
	reqs := append([]Outgoing(nil), out.Packets...)
	out.Reset()
	b.Receive(1000, 1, &reqs[0].Pkt, &out) // the probe on 0x100 is answered, the one on 0x101 is lost
	rsp := out.Packets[0]
	out.Reset()
	a.Receive(2000, 1, &rsp.Pkt, &out)
	a.Advance(Second, &out) // the lost one times out (EP-GEN-7)
	for _, e := range out.Events {
		if e.Kind == EvEVState || e.Kind == EvEVReplaced || e.Kind == EvEVRestored {
			t.Errorf("endpoint event %v changes an EV", e)
		}
	}
	for _, p := range []*wire.Packet{&reqs[0].Pkt, &reqs[1].Pkt, &rsp.Pkt} {
		o.recv(1, p)
	}
	if got := o.q.EVs(nil); !slices.Equal(got, before) {
		t.Errorf("QP EVs after controller EV probes:\n%v\nwant\n%v", got, before)
	}
	if ev := o.events(EvEVState); len(ev) != 0 {
		t.Errorf("the QP changed EV states: %v", ev)
	}
}

// TestAnnouncePortsNone: under a profile whose port_status_signal is none
// the NIC announces nothing, now or later (AMB-7).
func TestAnnouncePortsNone(t *testing.T) {
	_, _, pa, pb := endpoints(t)
	prof := spec.DefaultProfile()
	prof.PortStatus = spec.PortStatusNone
	a, err := NewEndpoint(EndpointConfig{SrcMAC: pa.MAC, SrcIP: pa.IP, Profile: &prof})
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	if err := a.AnnouncePorts(0, 0b1100, []PortPeer{{Peer: pb, EV: 0x10, Port: 1}}, &out); err != nil {
		t.Fatal(err)
	}
	a.Advance(5*Millisecond, &out)
	if len(out.Packets) != 0 {
		t.Errorf("%d packets sent without port-status signalling", len(out.Packets))
	}
}
