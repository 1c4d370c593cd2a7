package peer

// Port status: set_port_status, the port-status updates it sends and the
// remote port masks it learns.

import (
	"net/netip"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

func (a *Agent) setPortStatus(now statemachine.Time, p *control.SetPortStatusParams) (any, error) {
	if p.Mask&1 != 0 || p.Mask>>(a.ports+1) != 0 {
		return nil, control.Errorf(control.CodeInvalidArgument, "mask %#x: bit 0 is unused and this node has ports 1 to %d", p.Mask, a.ports)
	}
	a.local = p.Mask
	a.applyPorts(now)
	return control.Empty{}, nil
}

// applyPorts gives every QP the local port-status mask and tells every
// peer with QPs.
func (a *Agent) applyPorts(now statemachine.Time) {
	if up := a.localUp(); up != a.lastUp {
		for _, e := range statemachine.PortEvents(a.lastUp, up, nil) {
			if a.rules.raisesAsync(e.Type) {
				a.async.Add(e) // CTL-AEV-2
			}
		}
		a.lastUp = up
	}
	peers := map[netip.Addr][6]byte{}
	var order []netip.Addr
	for _, qpn := range a.order {
		e := a.qps[qpn]
		if e.qp == nil || !e.peer.IsValid() {
			continue
		}
		e.qp.SetPortStatus(now, a.localUp(), a.remoteOf(e.peer), &a.out)
		if _, ok := peers[e.peer]; !ok {
			peers[e.peer] = e.peerMAC
			order = append(order, e.peer)
		}
	}
	// Tell every peer with QPs (EP-PSU-1, EP-PSU-2), repeating until
	// answered (EP-PSU-4).
	a.psu = a.psu[:0]
	for _, ip := range order {
		a.psu = append(a.psu, psuPending{peer: ip, mac: peers[ip], mask: a.localUp(), next: now})
	}
	a.sendPSU(now)
}

func (a *Agent) sendPSU(now statemachine.Time) {
	port := 0
	for n := 1; n <= a.ports; n++ {
		if a.localUp()&(1<<n) != 0 {
			port = n
			break
		}
	}
	if port == 0 {
		return // no port up: nothing can be sent
	}
	for i := range a.psu {
		u := &a.psu[i]
		if u.answer || u.tries >= psuTries || u.next > now {
			continue
		}
		a.psuID++
		u.reqID = psuIDBase | a.psuID&0x0FFF
		u.tries++
		u.next = now + psuRetry
		err := a.ep.Send(now, statemachine.EPRequest{ReqID: u.reqID, Op: wire.EPPortStatusUpdate,
			Dst: statemachine.Peer{MAC: u.mac, IP: u.peer}, EV: 0xC000 | uint32(port), Port: uint8(port),
			NICInitiated: true, PortStatus: u.mask}, &a.out)
		if err != nil {
			u.tries = psuTries
		}
	}
}

func (a *Agent) psuDeadline() statemachine.Time {
	d := statemachine.Never
	for _, u := range a.psu {
		if !u.answer && u.tries < psuTries {
			d = min(d, u.next)
		}
	}
	return d
}

// MaxRemotePeers bounds the remote port masks the agent keeps from port
// status updates (EP-PSU-3). It is maxQPs, so that every peer a QP talks
// to fits: when the table is full, the masks of peers no QP names are
// forgotten first, and a new peer's mask is not kept if none was.
const MaxRemotePeers = maxQPs

func (a *Agent) remotePortMask(ev statemachine.Event) {
	src := a.curSrc
	if !src.IsValid() {
		return
	}
	if _, known := a.remote[src]; !known && len(a.remote) >= MaxRemotePeers {
		a.forgetIdlePeers()
	}
	if _, known := a.remote[src]; known || len(a.remote) < MaxRemotePeers {
		a.remote[src] = uint32(ev.Value)
	}
	if !a.rules.heedsPortStatus() {
		return
	}
	// EP-PSU-3: every QP to that node stops using the planes reported
	// down. The events of this step are being collected: apply the masks
	// into a scratch Output and collect it afterwards.
	var scratch statemachine.Output
	scratch.TracePackets = true
	for _, qpn := range a.order {
		if e := a.qps[qpn]; e.qp != nil && e.peer == src {
			e.qp.SetPortStatus(ev.Time, a.localUp(), uint32(ev.Value), &scratch)
		}
	}
	for i := range scratch.Packets {
		a.transmit(&scratch.Packets[i])
	}
}

// forgetIdlePeers drops the remote port masks of peers no QP names.
func (a *Agent) forgetIdlePeers() {
	used := map[netip.Addr]bool{}
	for _, e := range a.qps {
		used[e.peer] = true
	}
	for ip := range a.remote {
		if !used[ip] {
			delete(a.remote, ip)
		}
	}
}
