package conformance

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestPlanesTiedWithoutPICSNodes: the simulator's per-plane addressing
// capture (one address per node and plane, no PICS nodes) is one QP over
// both planes, with 1 worker and with 2 (the parallel judge gives a
// node's plane addresses to one worker), and the PSN that arrived on the
// other plane is no longer "never seen arriving" (case MRC-RSP-SACK-001).
func TestPlanesTiedWithoutPICSNodes(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		rep, err := judgeGoldenJobs(t, "../pcap/testdata/scenarios/perplane-loss.pcapng", "default", jobs)
		if err != nil {
			t.Fatal(err)
		}
		var data []Connection
		for _, c := range rep.Connections {
			if c.ResponderQPN == 0x201 {
				data = append(data, c)
			}
		}
		if len(data) != 1 || !slices.Equal(data[0].Planes, []int{0, 1}) || data[0].Writes != 140 {
			t.Errorf("jobs %d: connections to QP 0x201 %+v, want one over planes [0 1] with all 140 writes", jobs, data)
		}
		for _, r := range rep.Results {
			if r.Case.ID == "MRC-RSP-SACK-001" && r.Verdict != Pass {
				t.Errorf("jobs %d: MRC-RSP-SACK-001 %s: %s", jobs, r.Verdict, r.Reason)
			}
		}
		if !slices.ContainsFunc(rep.Capture.Notes, func(n string) bool { return strings.Contains(n, "one address per plane, tied by the traffic") }) {
			t.Errorf("jobs %d: no note of the tie in %q", jobs, rep.Capture.Notes)
		}
	}
}

// TestSameHost: addresses are tied only when they differ in the network
// part alone.
func TestSameHost(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"fd00::1", "fd00:1::1", true},
		{"fd00::1", "fd00:1::2", false},
		{"10.1.0.5", "10.2.0.5", true},
		{"10.1.0.5", "10.2.1.5", false},
		{"10.1.0.5", "::ffff:10.2.0.5", true},
		{"10.1.0.5", "fd00::a01:5", false},
	} {
		if got := sameHost(netip.MustParseAddr(c.a), netip.MustParseAddr(c.b)); got != c.want {
			t.Errorf("sameHost(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
