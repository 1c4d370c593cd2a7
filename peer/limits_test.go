package peer

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// errorQP creates a QP, brings it through RTR to ERROR, where every
// post_send completes at once, flushed.
func errorQP(t *testing.T, a *Agent) uint32 {
	t.Helper()
	one, zero, acc, mtu, dest, mpr, wimm := uint64(1), 0, 0xF, 1024, uint32(0x20001), 2, 4
	av := control.AV{MAC: "02:00:00:00:00:09", IP: "10.0.0.9"}
	caps, psn := []string{}, uint32(0)
	r, err := call(t, a, 0, control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 8, MaxRecvWR: 8})
	if err != nil {
		t.Fatal(err)
	}
	qpn := r.(control.QPNResult).QPN
	for _, p := range []control.ModifyQPParams{
		{QPN: qpn, State: control.StateInit, Attr: control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: &acc}},
		{QPN: qpn, State: control.StateRTR, Attr: control.QPAttr{PathMTU: &mtu, DestQPN: &dest, AV: &av, MPRDest: &mpr,
			MaxWIMMDest: &wimm, Cap: &caps, RQPSN: &psn}},
		{QPN: qpn, State: control.StateError},
	} {
		if _, err := call(t, a, 0, control.MethodModifyQP, p); err != nil {
			t.Fatalf("QP %#x to %s: %v", qpn, p.State, err)
		}
	}
	return qpn
}

// flush posts n WRITEs to qpn, each completing at once in ERROR.
func flush(t *testing.T, a *Agent, qpn uint32, n int) {
	t.Helper()
	p, err := json.Marshal(control.PostSendParams{QPN: qpn, WRID: 1, Opcode: control.OpRDMAWrite})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := a.Handle(0, control.MethodPostSend, p); err != nil {
			t.Fatalf("post %d to QP %#x: %v", i, qpn, err)
		}
	}
}

// cqErrors returns the QPs of the IBV_EVENT_CQ_ERR events queued.
func cqErrors(t *testing.T, a *Agent) []uint32 {
	t.Helper()
	r, err := a.Handle(0, control.MethodGetAsyncEvents, nil)
	if err != nil {
		t.Fatal(err)
	}
	var qpns []uint32
	for _, e := range r.(control.AsyncEventsResult).Events {
		if e.Type == control.AsyncCQErr {
			qpns = append(qpns, e.QPN)
		}
	}
	return qpns
}

// TestCQBounded: CTL-CQ-4. Completions nobody polls fill a QP's CQ up to
// MaxCQEntries, and all CQs together up to MaxCQEntriesTotal; a
// completion beyond is lost and raises IBV_EVENT_CQ_ERR for its QP, once
// until poll_cq makes room (AMB-95), and the CQ works again after the
// poll.
func TestCQBounded(t *testing.T) {
	a := ctlAgent(t)
	if _, err := call(t, a, 0, control.MethodSetEVProfile, control.EVProfile{ID: 1, ActivePerPlane: 1,
		EVs: []control.EV{{Value: 0x4101, Port: 1}, {Value: 0x4102, Port: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, a, 0, control.MethodSetCCProfile, control.CCProfile{ID: 1, Algorithm: control.CCNone}); err != nil {
		t.Fatal(err)
	}
	q := errorQP(t, a)
	flush(t, a, q, MaxCQEntries+10)
	if n := len(a.qps[q].cq); n != MaxCQEntries {
		t.Fatalf("%d completions posted, none polled: the CQ holds %d, want the limit %d", MaxCQEntries+10, n, MaxCQEntries)
	}
	if got := cqErrors(t, a); len(got) != 1 || got[0] != q {
		t.Fatalf("CQ_ERR events %#x, want one for QP %#x", got, q)
	}
	r, err := call(t, a, 0, control.MethodPollCQ, control.PollCQParams{QPN: q, Max: 10})
	if err != nil || len(r.(control.PollCQResult).Completions) != 10 {
		t.Fatalf("poll_cq of a full CQ: %v %v", r, err)
	}
	flush(t, a, q, 11)
	if n := len(a.qps[q].cq); n != MaxCQEntries {
		t.Fatalf("after polling 10 and posting 11: %d completions held", n)
	}
	if got := cqErrors(t, a); len(got) != 1 || got[0] != q {
		t.Fatalf("CQ_ERR events after the CQ filled again: %#x", got)
	}
	full := []uint32{q}
	for len(full)*MaxCQEntries < MaxCQEntriesTotal {
		qpn := errorQP(t, a)
		flush(t, a, qpn, MaxCQEntries)
		full = append(full, qpn)
	}
	last := errorQP(t, a)
	flush(t, a, last, 1)
	if n := len(a.qps[last].cq); n != 0 || a.cqHeld != MaxCQEntriesTotal {
		t.Fatalf("all CQs full (%d completions): QP %#x took %d more", a.cqHeld, last, n)
	}
	if got := cqErrors(t, a); len(got) != 1 || got[0] != last {
		t.Fatalf("CQ_ERR events when all CQs are full: %#x, want one for QP %#x", got, last)
	}
}

// psuFrom is a NIC-initiated PORT_STATUS_UPDATE to 10.0.0.2 from src
// reporting mask.
func psuFrom(t *testing.T, src netip.Addr, mask uint32) []byte {
	t.Helper()
	ep, err := statemachine.NewEndpoint(statemachine.EndpointConfig{SrcMAC: [6]byte{2, 9, 0, 0, 0, 1}, SrcIP: src})
	if err != nil {
		t.Fatal(err)
	}
	var out statemachine.Output
	if err := ep.Send(0, statemachine.EPRequest{ReqID: 0xF001, Op: wire.EPPortStatusUpdate, EV: 0xC001, Port: 1,
		Dst: statemachine.Peer{MAC: [6]byte{2, 0, 0, 0, 0, 1}, IP: netip.MustParseAddr("10.0.0.2")}, NICInitiated: true,
		PortStatus: mask}, &out); err != nil || len(out.Packets) != 1 {
		t.Fatalf("PORT_STATUS_UPDATE from %v: %v, %d packets", src, err, len(out.Packets))
	}
	b, err := wire.Default.Append(nil, &out.Packets[0].Pkt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRemotePortMasksBounded: port status updates from ever new source
// addresses keep at most MaxRemotePeers masks, and the mask of a peer a
// QP talks to is still learned once the table is full (EP-PSU-3).
func TestRemotePortMasksBounded(t *testing.T) {
	a := ctlAgent(t)
	data := agentSetup(t) // a QP to 10.0.0.9
	for len(data) > 0 {
		i := 0
		for data[i] != '\n' {
			i++
		}
		if _, err := a.Handle(0, control.Methods[data[1]], json.RawMessage(data[2:i])); err != nil {
			t.Fatal(err)
		}
		data = data[i+1:]
	}
	for i := 0; i < MaxRemotePeers+100; i++ {
		a.Receive(0, 0, psuFrom(t, netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 0b110))
	}
	if n := len(a.remote); n > MaxRemotePeers || n == 0 {
		t.Fatalf("%d remote port masks kept after updates from %d peers, limit %d", n, MaxRemotePeers+100, MaxRemotePeers)
	}
	peer := netip.MustParseAddr("10.0.0.9")
	a.Receive(0, 0, psuFrom(t, peer, 0b010))
	if m, ok := a.remote[peer]; !ok || m != 0b010 {
		t.Fatalf("the QP's peer's mask with the table full: %#x, %v; want 0b010", m, ok)
	}
	if n := len(a.remote); n > MaxRemotePeers {
		t.Fatalf("%d remote port masks kept, limit %d", n, MaxRemotePeers)
	}
}
