package conformance

import "testing"

// TestPeakEntries: engine.peak is the most entries roomIn let the
// connections hold at once, as if every roomIn recorded it, though only
// recount and peak look: a count recount sets is no peak until roomIn
// grows it.
func TestPeakEntries(t *testing.T) {
	e := newEngine(DefaultPICS())
	for range 5 {
		e.roomIn(0, MaxPending)
	}
	if got := e.peak(); got != 5 {
		t.Fatalf("after 5 entries: peak %d, want 5", got)
	}
	e.recount() // no connections: 0 entries
	e.roomIn(0, MaxPending)
	if got := e.peak(); got != 5 {
		t.Fatalf("after a recount to 0 and 1 entry: peak %d, want 5", got)
	}
	e.entries, e.counted = 7, 7 // as a recount finding 7 leaves them
	if got := e.peak(); got != 5 {
		t.Fatalf("after a recount to 7: peak %d, want 5 (no roomIn since)", got)
	}
	e.roomIn(0, MaxPending)
	if got := e.peak(); got != 8 {
		t.Fatalf("after a recount to 7 and 1 entry: peak %d, want 8", got)
	}
	e.recount()
	if got := e.peak(); got != 8 {
		t.Fatalf("after a recount to 0: peak %d, want 8", got)
	}
}
