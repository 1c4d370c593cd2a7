package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestStateBounded floods the judge with PSNs that are never acknowledged
// and with connections to many QPs: the tracked state stops at its bounds,
// the report says so, and no case can PASS on incomplete state.
func TestStateBounded(t *testing.T) {
	p := wire.Packet{IsIPv6: true}
	p.IP6 = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64, Src: [16]byte{0xfd, 15: 1}, Dst: [16]byte{0xfd, 15: 2}}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x10, AckReq: true}
	p.RETH = wire.RETH{DMALength: 4}
	p.Payload = []byte{1, 2, 3, 4}
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, bth := p.Offsets()
	e := newEngine(referencePICS(t))
	in := &pcap.Interface{Point: "A", Plane: 0, LinkType: layers.LinkTypeEthernet}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := MaxPSNsPerFlow + 2000
	for i := 0; i < n+MaxFlows+10; i++ {
		f := append([]byte(nil), frame...)
		psn, qp := uint32(i), uint32(0x10)
		if i >= n { // then one packet to each of many QPs
			psn, qp = 0, uint32(0x1000+i)
		}
		f[bth+5], f[bth+6], f[bth+7] = byte(qp>>16), byte(qp>>8), byte(qp)
		f[bth+9], f[bth+10], f[bth+11] = byte(psn>>16), byte(psn>>8), byte(psn)
		var q wire.Packet
		if err := wire.Default.Decode(f, &q); err != nil {
			t.Fatal(err)
		}
		icrc := wire.Default.ComputeICRC(f, &q)
		f[len(f)-4], f[len(f)-3], f[len(f)-2], f[len(f)-1] = byte(icrc), byte(icrc>>8), byte(icrc>>16), byte(icrc>>24)
		e.frame(&pcap.Frame{Number: i + 1, Timestamp: start.Add(time.Duration(i) * time.Microsecond), Data: f}, in)
	}
	e.finish()
	flows := 0
	for _, pt := range e.points {
		for _, fl := range pt.flows {
			flows++
			if fl.psns.len() > MaxPSNsPerFlow || len(fl.psns.ring) > MaxPSNsPerFlow || fl.arrived.len() > MaxPSNsPerFlow || len(fl.arrived.ring) > MaxPSNsPerFlow {
				t.Errorf("flow %s holds %d PSNs", fl.key, fl.psns.len())
			}
		}
	}
	if flows > MaxFlows {
		t.Errorf("%d flows tracked, bound %d", flows, MaxFlows)
	}
	rep := e.report(&CaptureInfo{}, nil, testDay)
	notes := strings.Join(rep.Capture.Notes, "\n")
	if !strings.Contains(notes, "state bound reached") {
		t.Errorf("no note of the bound: %q", notes)
	}
	for _, r := range rep.Results {
		if r.Verdict == Pass {
			t.Errorf("%s PASSes on bounded state", r.Case.ID)
		}
	}
}
