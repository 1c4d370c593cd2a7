package statemachine

// Tests written against mutants of events.go that the package's other
// tests let live.

import (
	"strconv"
	"testing"
)

// TestMutantEventKindPastTheNames: a kind past the last named one (a
// newer trace's, read by an older reader) prints as EventKind(n), from
// the first unnamed value on, instead of indexing past the names.
func TestMutantEventKindPastTheNames(t *testing.T) {
	if s := EvSQDrained.String(); s != "SQDrained" {
		t.Errorf("the last named kind prints %q, want SQDrained", s)
	}
	for _, k := range []EventKind{EvSQDrained + 1, EvSQDrained + 2, 255} {
		want := "EventKind(" + strconv.Itoa(int(k)) + ")"
		if s := k.String(); s != want {
			t.Errorf("kind %d prints %q, want %q", uint8(k), s, want)
		}
	}
}
