package control

import (
	"testing"

	"github.com/openmrc/mrc/wire/evstate"
)

// TestEVStateNames: the protocol's EV state names are the path-state
// vocabulary's (EV-ST-1), so a state the peer reports or a tester sets
// reads the same everywhere.
func TestEVStateNames(t *testing.T) {
	for name, want := range map[string]evstate.State{EVGood: evstate.Good, EVSkip: evstate.Skip,
		EVAssumedBad: evstate.AssumedBad, EVDenied: evstate.Denied} {
		if s, ok := evstate.ParseState(name); !ok || s != want {
			t.Errorf("control names %s %q, the vocabulary %q", want, name, want.String())
		}
	}
}
