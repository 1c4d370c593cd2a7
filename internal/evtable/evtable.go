package evtable

import sm "github.com/openmrc/mrc/statemachine"

// Allowed reports whether an EV may move from one state to another for
// cause c. The controller may set GOOD, ASSUMED_BAD or DENIED from any
// state (MRC_CTL_EV_OP_MODIFY_EV_STATE; EV-ST-9, EV-ST-14).
func Allowed(from, to sm.EVState, c sm.EVCause) bool {
	switch {
	case c == sm.CauseController:
		return to == sm.EVGood || to == sm.EVAssumedBad || to == sm.EVDenied
	case from == sm.EVGood && to == sm.EVSkip:
		return c == sm.CauseSkipOnce || c == sm.CauseTrimmed // EV-ST-2, EV-ST-3
	case (from == sm.EVGood || from == sm.EVSkip) && to == sm.EVAssumedBad:
		return c == sm.CauseAlwaysSkip || c == sm.CauseTimeout || c == sm.CauseInferredLoss // EV-ST-4, EV-ST-5, EV-ST-10, EV-SM-5
	case from == sm.EVSkip && to == sm.EVGood:
		return c == sm.CauseRotation // EV-ST-6
	case from == sm.EVAssumedBad && to == sm.EVGood:
		return c == sm.CauseProbeOK // EV-ST-7
	case from == sm.EVAssumedBad && to == sm.EVSkip:
		return c == sm.CauseProbeSkip // EV-ST-8
	}
	return false
}
