package conformance

import (
	"math/rand/v2"
	"testing"
)

// TestCountCopyByInterface: countCopy counts each interface's first
// transmissions and copies in that interface's entry of flow.copies (found
// through copyAt), one entry per interface in the order they were first
// seen, the last interface number included, and none for a number past
// MaxInterfaces; with every interface number seen, each has its entry.
func TestCountCopyByInterface(t *testing.T) {
	fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	gs := []int{MaxInterfaces - 1, 0, 7, 3, 200, -1, MaxInterfaces}
	firsts, copies := map[int]int{}, map[int]int{}
	var order []int
	for range copyRun - 1 {
		g := gs[rng.IntN(len(gs))]
		first := rng.IntN(3) > 0
		fl.countCopy(g, first)
		if g < 0 || g >= MaxInterfaces {
			continue
		}
		if firsts[g]+copies[g] == 0 {
			order = append(order, g)
		}
		if first {
			firsts[g]++
		} else {
			copies[g]++
		}
	}
	if len(fl.copies) != len(order) {
		t.Fatalf("%d entries, want %d (interfaces %v)", len(fl.copies), len(order), order)
	}
	for i, c := range fl.copies {
		if g := order[i]; c.g != g || c.firsts != firsts[g] || c.copies != copies[g] {
			t.Errorf("entry %d: interface %d, %d firsts, %d copies; want interface %d, %d, %d", i, c.g, c.firsts, c.copies, g, firsts[g], copies[g])
		}
	}
	all := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
	for g := range MaxInterfaces {
		all.countCopy(g, true)
	}
	for g := range MaxInterfaces {
		all.countCopy(g, false)
	}
	if len(all.copies) != MaxInterfaces {
		t.Fatalf("every interface seen: %d entries, want %d", len(all.copies), MaxInterfaces)
	}
	for i, c := range all.copies {
		if c.g != i || c.firsts != 1 || c.copies != 1 {
			t.Errorf("every interface seen: entry %d: interface %d, %d firsts, %d copies; want interface %d, 1, 1", i, c.g, c.firsts, c.copies, i)
		}
	}
}
