package conformance_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/pcap"
)

// TestPerPlanePICSMatchesCapture: the example PICS of the dumpcap-style
// simulator capture (pcap/testdata/scenarios/dumpcap-loss.pcapng, one
// IPv6 address per node and plane, interfaces eth1 and eth2 on node 1)
// declares each node with its address on every plane and each of the
// capture's interfaces as a capture point at node 1, so the judge can be
// tested on a connection whose planes use different addresses.
func TestPerPlanePICSMatchesCapture(t *testing.T) {
	p, err := conformance.LoadPICS("testdata/dumpcap-loss.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	for n, name := range []string{"node0", "node1"} {
		var want []netip.Addr
		for plane := 0; plane < 2; plane++ {
			want = append(want, fabric.PlaneAddr(n, plane, true))
		}
		var got []netip.Addr
		for _, a := range p.Nodes[name] {
			got = append(got, netip.MustParseAddr(a))
		}
		if !slices.Equal(got, want) {
			t.Errorf("PICS node %s: %v, the simulator's plane addresses are %v", name, got, want)
		}
	}
	r, err := pcap.Open("../pcap/testdata/scenarios/dumpcap-loss.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f pcap.Frame
	for r.Next(&f) == nil {
	}
	var names []string
	for _, in := range r.Interfaces() {
		names = append(names, in.Name)
		if p.Capture.Points[in.Name] != "node1" {
			t.Errorf("interface %s: PICS capture point at %q, want node1", in.Name, p.Capture.Points[in.Name])
		}
	}
	if len(names) != len(p.Capture.Points) {
		t.Errorf("capture interfaces %v, PICS capture points %v", names, p.Capture.Points)
	}
}
