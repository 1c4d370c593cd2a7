package conformance

import "testing"

// TestSlotSameNodeOtherCopy checks the slot cache's test of its pair: a
// node named by another copy of its name (another data pointer) finds its
// slot as it was, pending counts kept, and another node of the same slot
// empties it, its counts moved to toNode.
func TestSlotSameNodeOtherCopy(t *testing.T) {
	e := newEngine(DefaultPICS())
	pt := e.point("p")
	a := "node-a"
	copyA := string([]byte(a))
	s := e.slot(pt, a)
	s.to = 3
	if got := e.slot(pt, copyA); got != s || got.to != 3 || got.pt != pt || got.node != a {
		t.Fatalf("another copy of the name: slot %p to %d, want %p to 3", got, got.to, s)
	}
	other := ""
	for c := byte(' '); other == ""; c++ {
		// Another node, of a's length, in a's slot.
		if n := "node-" + string([]byte{c}); slotIndex(pt, n) == slotIndex(pt, a) && n != a {
			other = n
		}
	}
	got := e.slot(pt, other)
	if got != s || got.to != 0 || got.node != other {
		t.Fatalf("another node in the slot: slot %p to %d node %q, want %p emptied for %q", got, got.to, got.node, s, other)
	}
	if n := e.toNode[nodePoint{a, "p"}]; n != 3 {
		t.Fatalf("toNode of %q: %d, want the 3 the slot held", a, n)
	}
}
