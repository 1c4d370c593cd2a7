package evstate_test

import (
	"fmt"

	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// A SACK with m = ALWAYS_SKIP retires the GOOD EV it reflects; a probe
// answered with m = SKIP_ONCE brings it back as SKIP.
func Example() {
	s := evstate.Good
	for _, c := range []evstate.Cause{
		evstate.OfSACK(wire.MAlwaysSkip, false),
		evstate.OfSACK(wire.MSkipOnce, true),
		evstate.CauseRotation,
	} {
		if to, ok := evstate.Next(s, c); ok {
			fmt.Printf("%s -[%s]-> %s\n", s, c, to)
			s = to
		}
	}
	// Output:
	// GOOD -[ALWAYS_SKIP]-> ASSUMED_BAD
	// ASSUMED_BAD -[probe skip]-> SKIP
	// SKIP -[rotation]-> GOOD
}
