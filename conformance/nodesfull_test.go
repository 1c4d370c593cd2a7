package conformance

import (
	"strconv"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestNodesFullMatchesBound: countNode's nodesFull, set where nodes and
// toNode grow, agrees after every call with the bound it stands for, with
// the senders or the addressees reaching it, and once set nothing more is
// counted (a node already counted included).
func TestNodesFullMatchesBound(t *testing.T) {
	p, err := ParsePICS([]byte(scenePICS))
	if err != nil {
		t.Fatal(err)
	}
	for _, senders := range []bool{true, false} {
		e := newEngine(p)
		pts := []*point{{name: "A", num: 0}, {name: "B", num: 1}}
		var pk wire.Packet
		full := func() bool {
			return len(e.nodes) >= MaxNodes*MaxPoints || len(e.toNode)+e.toPend >= MaxNodes*MaxPoints
		}
		for i := 0; i < 2*MaxNodes*MaxPoints; i++ {
			pt, src, dst := pts[i%2], "n0", "d"+strconv.Itoa(i/2)
			if senders {
				src, dst = "n"+strconv.Itoa(i/2), ""
			}
			e.countNode(pt, src, dst, &pk)
			if e.nodesFull != full() {
				t.Fatalf("senders %v, call %d: nodesFull %v, bound reached %v", senders, i, e.nodesFull, full())
			}
		}
		if !e.nodesFull {
			t.Fatalf("senders %v: bound never reached", senders)
		}
		first := nodePoint{"n0", "A"}
		n, frames := len(e.nodes), e.nodes[first].frames
		e.countNode(pts[0], "n0", "", &pk)
		e.countNode(pts[0], "new", "", &pk)
		if len(e.nodes) != n || e.nodes[first].frames != frames {
			t.Errorf("senders %v: counted past the bound: %d nodes (want %d), %d frames of n0 (want %d)", senders, len(e.nodes), n, e.nodes[first].frames, frames)
		}
	}
}
