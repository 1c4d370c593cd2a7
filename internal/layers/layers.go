package layers

import (
	"fmt"
	"slices"
	"strings"
)

// Module is the module path the layer table's paths are relative to.
const Module = "github.com/openmrc/mrc"

// Layer is one step of the data flow. Packages of one layer may import
// each other (a folder's sub-packages), and any package of a lower rank;
// two layers of the same rank are parallel and may not import each other.
type Layer struct {
	Name string
	Rank int
	// Paths are package paths relative to Module; a path covers its
	// sub-packages unless a longer path names them.
	Paths []string
	// Shown is how the README's data-flow line names the layer.
	Shown string
}

// Flow is the data flow, lowest first.
var Flow = []Layer{
	{Name: "tools", Rank: 0, Paths: []string{"internal/testenv", "internal/cli", "internal/emuclient", "internal/hugeheap"}, Shown: ""},
	{Name: "spec", Rank: 1, Paths: []string{"spec"}, Shown: "spec"},
	{Name: "wire", Rank: 2, Paths: []string{"wire"}, Shown: "wire"},
	{Name: "statemachine", Rank: 3, Paths: []string{"statemachine"}, Shown: "statemachine"},
	{Name: "oracles", Rank: 4, Paths: []string{"internal/evtable", "linearize", "modelcheck", "tla/tracegen"},
		Shown: "oracles (internal/evtable, linearize, modelcheck, tla/tracegen)"},
	{Name: "simulator", Rank: 5, Paths: []string{"fabric"}, Shown: "fabric"},
	{Name: "device", Rank: 5, Paths: []string{"peer", "control", "netio"}, Shown: "device (peer, control, netio)"},
	{Name: "pcap", Rank: 6, Paths: []string{"pcap"}, Shown: "pcap"},
	{Name: "capture", Rank: 7, Paths: []string{"fabric/capture"}, Shown: "fabric/capture"},
	{Name: "conformance", Rank: 8, Paths: []string{"conformance"}, Shown: "conformance"},
	{Name: "commands", Rank: 9, Paths: []string{"cmd"}, Shown: "cmd"},
	{Name: "harness", Rank: 10, Paths: []string{"fuzz", "scripts", "internal/layers"}, Shown: ""},
}

// Of returns the layer of pkg (a path relative to Module): the layer with
// the longest path that is pkg or one of its folders.
func Of(pkg string) (Layer, bool) {
	best, n := Layer{}, -1
	for _, l := range Flow {
		for _, p := range l.Paths {
			if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > n {
				best, n = l, len(p)
			}
		}
	}
	return best, n >= 0
}

// Allowed reports whether a package of layer from may import one of layer to.
func Allowed(from, to Layer) bool {
	return from.Name == to.Name || to.Rank < from.Rank
}

// Edge is one import, package paths relative to Module.
type Edge struct{ From, To string }

// Check returns the imports of edges that run against the flow, and the
// packages no layer names, sorted.
func Check(edges []Edge) (against []Edge, unplaced []string) {
	for _, e := range edges {
		from, ok1 := Of(e.From)
		to, ok2 := Of(e.To)
		if !ok1 {
			unplaced = append(unplaced, e.From)
		}
		if !ok2 {
			unplaced = append(unplaced, e.To)
		}
		if ok1 && ok2 && !Allowed(from, to) {
			against = append(against, e)
		}
	}
	slices.SortFunc(against, func(a, b Edge) int { return strings.Compare(a.From+" "+a.To, b.From+" "+b.To) })
	slices.Sort(unplaced)
	return against, slices.Compact(unplaced)
}

// Line is the README's data-flow line: the shown layers by rank, parallel
// layers in parentheses.
func Line() string {
	var steps []string
	for r := 0; ; r++ {
		var same []string
		more := false
		for _, l := range Flow {
			if l.Rank > r {
				more = true
			}
			if l.Rank == r && l.Shown != "" {
				same = append(same, l.Shown)
			}
		}
		switch len(same) {
		case 0:
		case 1:
			steps = append(steps, same[0])
		default:
			steps = append(steps, "("+strings.Join(same, " | ")+")")
		}
		if !more {
			break
		}
	}
	return fmt.Sprintf("Data flows one way: %s.", strings.Join(steps, " → "))
}
