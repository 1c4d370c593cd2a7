package conformance

import "testing"

// TestTimelinesHoldEvents: every timeline of the golden captures' reports
// holds the connection's events around its failures (the frames before the
// first, from the connection's ring, and after), so recording them stops
// only where no snapshot can take them (tlDone).
func TestTimelinesHoldEvents(t *testing.T) {
	n := 0
	for _, c := range goldenCaptures(t) {
		rep, err := judgeGolden(t, c, "default")
		if err != nil {
			continue
		}
		for _, tl := range rep.Timelines {
			n++
			if len(tl.Events) < 2 {
				t.Errorf("%s: timeline of %s holds %d events, want the connection's frames around its failure", c, tl.Connection, len(tl.Events))
			}
		}
	}
	if n < 10 {
		t.Errorf("%d timelines over the golden captures, want at least 10", n)
	}
}
