package spec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// levelTableDiff lists how table differs from the requirements reqs: an
// ID missing, extra, out of order or with another level.
func levelTableDiff(table []levelEntry, reqs []Requirement) []string {
	var out []string
	want := map[string]Level{}
	for _, q := range reqs {
		want[q.ID] = q.Level
	}
	for i, e := range table {
		if i > 0 && strings.Compare(table[i-1].id, e.id) >= 0 {
			out = append(out, fmt.Sprintf("%s: after %s, not sorted or twice", e.id, table[i-1].id))
		}
		switch l, ok := want[e.id]; {
		case !ok:
			out = append(out, e.id+": in the table, not in the registry")
		case l != e.level:
			out = append(out, fmt.Sprintf("%s: table %q, registry %q", e.id, e.level, l))
		}
		delete(want, e.id)
	}
	for id := range want {
		out = append(out, id+": in the registry, not in the table")
	}
	slices.Sort(out)
	return out
}

// TestLevelTableMatchesRegistry: the generated level table (LevelOf,
// NumRequirements) holds exactly the registry's requirements with their
// levels, sorted by ID; `go generate ./spec` rewrites it. The comparison
// catches a table missing a requirement, holding a removed one, one with
// another level and one out of order.
func TestLevelTableMatchesRegistry(t *testing.T) {
	reqs := Requirements()
	for _, d := range levelTableDiff(levelTable[:], reqs) {
		t.Errorf("%s (run go generate ./spec)", d)
	}
	if n := NumRequirements(); n != len(reqs) || n < 150 {
		t.Errorf("NumRequirements() = %d, registry %d", n, len(reqs))
	}
	if l, ok := LevelOf("WIRE-BTH-1"); !ok || l != Must {
		t.Errorf("LevelOf(WIRE-BTH-1) = %q, %v", l, ok)
	}
	if _, ok := LevelOf("WIRE-" + "XYZ-99"); ok {
		t.Error("LevelOf found an ID the specification does not define")
	}
	stale := slices.Clone(levelTable[:])
	stale = slices.Delete(stale, 3, 4)                    // a requirement missing
	stale = append(stale, levelEntry{"ZZ-" + "X-1", May}) // one the registry lacks
	stale[0].level = May                                  // another level
	if levelTable[0].level == May {
		stale[0].level = Must
	}
	stale[1], stale[2] = stale[2], stale[1] // out of order
	if d := levelTableDiff(stale, reqs); len(d) != 4 {
		t.Errorf("a stale table: %d differences, want 4:\n%s", len(d), strings.Join(d, "\n"))
	}
}
