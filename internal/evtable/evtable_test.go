package evtable

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// TestAllowed enumerates every (from, to, cause) and compares Allowed with
// the transitions the spec lists, one per line, so that a change to the
// table must change this list too (EV-ST-2 to EV-ST-10, EV-ST-14, EV-SM-5).
func TestAllowed(t *testing.T) {
	type tr struct {
		from, to sm.EVState
		c        sm.EVCause
	}
	want := map[tr]bool{
		{sm.EVGood, sm.EVSkip, sm.CauseSkipOnce}:           true, // EV-ST-2
		{sm.EVGood, sm.EVSkip, sm.CauseTrimmed}:            true, // EV-ST-3
		{sm.EVGood, sm.EVAssumedBad, sm.CauseAlwaysSkip}:   true, // EV-ST-4
		{sm.EVSkip, sm.EVAssumedBad, sm.CauseAlwaysSkip}:   true, // EV-ST-10
		{sm.EVGood, sm.EVAssumedBad, sm.CauseTimeout}:      true, // EV-ST-5
		{sm.EVSkip, sm.EVAssumedBad, sm.CauseTimeout}:      true, // EV-ST-5
		{sm.EVGood, sm.EVAssumedBad, sm.CauseInferredLoss}: true, // EV-SM-5
		{sm.EVSkip, sm.EVAssumedBad, sm.CauseInferredLoss}: true, // EV-SM-5
		{sm.EVSkip, sm.EVGood, sm.CauseRotation}:           true, // EV-ST-6
		{sm.EVAssumedBad, sm.EVGood, sm.CauseProbeOK}:      true, // EV-ST-7
		{sm.EVAssumedBad, sm.EVSkip, sm.CauseProbeSkip}:    true, // EV-ST-8
	}
	states := []sm.EVState{sm.EVGood, sm.EVSkip, sm.EVAssumedBad, sm.EVDenied}
	for _, from := range states {
		for _, to := range []sm.EVState{sm.EVGood, sm.EVAssumedBad, sm.EVDenied} {
			want[tr{from, to, sm.CauseController}] = true // EV-ST-9, EV-ST-14: from any state
		}
	}
	n := 0
	for _, from := range states {
		for _, to := range states {
			for c := sm.CauseNone; c <= sm.CauseInferredLoss; c++ {
				got := Allowed(from, to, c)
				if got != want[tr{from, to, c}] {
					t.Errorf("Allowed(%s, %s, cause %d) = %v", from, to, c, got)
				}
				if got {
					n++
				}
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d transitions allowed, the spec lists %d", n, len(want))
	}
}
