package evstate

import "github.com/openmrc/mrc/wire"

// State is an EV's path state (EV-ST-1). The zero value is the API's
// UNKNOWN (an EV a query cannot find); the order is the one traces and
// events carry as a number.
type State uint8

// Path states.
const (
	Unknown    State = iota
	Good             // usable
	Skip             // skipped until the end of the current rotation
	AssumedBad       // retired: out of use, probed in the background
	Denied           // out of use by controller decision
)

// String returns the state's name as the spec and the API write it.
func (s State) String() string {
	switch s {
	case Good:
		return "GOOD"
	case Skip:
		return "SKIP"
	case AssumedBad:
		return "ASSUMED_BAD"
	case Denied:
		return "DENIED"
	}
	return "UNKNOWN"
}

// ParseState returns the state a name gives as String writes it: GOOD,
// SKIP, ASSUMED_BAD or DENIED. UNKNOWN, which names no state an EV is in,
// and any other name give false.
func ParseState(name string) (State, bool) {
	for s := Good; s <= Denied; s++ {
		if name == s.String() {
			return s, true
		}
	}
	return Unknown, false
}

// Cause is the event that moves an EV: a row of the path-state table. The
// order is the one traces and events carry as a number.
type Cause uint8

// The events of the path-state table.
const (
	CauseNone         Cause = iota // no event: the EV stays as it is
	CauseSkipOnce                  // SACK m = SKIP_ONCE (EV-ST-2)
	CauseTrimmed                   // NACK TRIMMED (EV-ST-3)
	CauseAlwaysSkip                // SACK m = ALWAYS_SKIP (EV-ST-4)
	CauseTimeout                   // an untrimmed packet on the EV timed out (EV-ST-5)
	CauseRotation                  // end of the rotation (EV-ST-6)
	CauseProbeOK                   // probes answered with m = NONE, probe_success_threshold in a row (EV-ST-7)
	CauseProbeSkip                 // a probe answered with m = SKIP_ONCE (EV-ST-8)
	CauseController                // the controller's MODIFY_EV_STATE (EV-ST-9, EV-ST-14)
	CauseInferredLoss              // a packet on the EV inferred lost from SACKs (EV-SM-5)
)

var causeNames = [...]string{"none", "SKIP_ONCE", "TRIMMED", "ALWAYS_SKIP", "timeout", "rotation",
	"probe ok", "probe skip", "controller", "inferred loss"}

// String names the event briefly: the wire verdict or reason it is, or
// what happened.
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "unknown"
}

// Transition is one row of the path-state table: an EV in From moves to To
// on Cause, as requirement Req says.
type Transition struct {
	From  State
	Cause Cause
	To    State
	Req   string
}

// Table is the path-state table of spec/21-paths.md with EV-ST-10's and
// EV-SM-5's additions: every change of state an event other than the
// controller's makes. An event not listed for a state leaves the EV as it
// is: a SKIP EV stays SKIP on SKIP_ONCE or TRIMMED, an ASSUMED_BAD EV
// changes only on probe answers, a DENIED EV only by the controller
// (EV-ST-9, EV-ST-10). The controller's moves are ControllerMay's.
var Table = [...]Transition{
	{Good, CauseSkipOnce, Skip, "EV-ST-2"},
	{Good, CauseTrimmed, Skip, "EV-ST-3"},
	{Good, CauseAlwaysSkip, AssumedBad, "EV-ST-4"},
	{Good, CauseTimeout, AssumedBad, "EV-ST-5"},
	{Good, CauseInferredLoss, AssumedBad, "EV-SM-5"},
	{Skip, CauseRotation, Good, "EV-ST-6"},
	{AssumedBad, CauseProbeOK, Good, "EV-ST-7"},
	{AssumedBad, CauseProbeSkip, Skip, "EV-ST-8"},
	{Skip, CauseAlwaysSkip, AssumedBad, "EV-ST-10"},
	{Skip, CauseTimeout, AssumedBad, "EV-ST-10"},
	{Skip, CauseInferredLoss, AssumedBad, "EV-ST-10"},
}

// ControllerMay reports whether the controller may set an EV to s: GOOD,
// ASSUMED_BAD or DENIED, from any state (EV-ST-9, EV-ST-14).
func ControllerMay(s State) bool { return s == Good || s == AssumedBad || s == Denied }

// Next returns the state an EV in from moves to on event c, and false when
// the table has no such move (the EV stays in from). The controller's
// event names no target; see ControllerMay.
func Next(from State, c Cause) (State, bool) {
	if int(from) < len(moves) && int(c) < len(moves[from]) {
		if m := moves[from][c]; m.ok {
			return m.to, true
		}
	}
	return from, false
}

// moves is Table indexed by state and cause (its first row for each), so
// that Next, which the judge and the state machine call for every EV
// event, is an index rather than a scan of Table.
var moves = func() (m [Denied + 1][len(causeNames)]struct {
	to State
	ok bool
}) {
	for _, t := range &Table {
		if n := &m[t.From][t.Cause]; !n.ok {
			n.to, n.ok = t.To, true
		}
	}
	return m
}()

// Allowed reports whether an EV may move from one state to another on
// event c: a row of Table, or the controller setting a state it may set.
func Allowed(from, to State, c Cause) bool {
	if c == CauseController {
		return ControllerMay(to)
	}
	n, ok := Next(from, c)
	return ok && n == to
}

// Retires reports whether event c retires a usable (GOOD or SKIP) EV, that
// is moves it to ASSUMED_BAD on the requester's own inference, subject to
// the ev_min_active floor (EV-ST-4, EV-ST-5, EV-ST-10, EV-SM-5, EV-SET-6).
func Retires(c Cause) bool {
	n, ok := Next(Good, c)
	return ok && n == AssumedBad
}

// Revives reports whether event c takes an ASSUMED_BAD EV back into use
// (to GOOD or SKIP): a probe answer (EV-ST-7, EV-ST-8). CauseProbeOK needs
// probe_success_threshold answers in a row; one answer with m = NONE is
// one step toward it.
func Revives(c Cause) bool {
	n, ok := Next(AssumedBad, c)
	return ok && n != AssumedBad
}

// FloorHolds reports whether the ev_min_active floor keeps an EV from
// moving to ASSUMED_BAD on event c: of evs EVs, out are in ASSUMED_BAD or
// DENIED, and one more would leave fewer than minActive outside them
// (EV-SET-6). The floor binds the requester's own inferences, not the
// controller (EV-ST-14).
func FloorHolds(c Cause, evs, out, minActive int) bool {
	return c != CauseController && evs-out-1 < minActive
}

// OfSACK returns the event a SACK is for the EV it reflects: for a probe
// answer (pr = 1), m = NONE counts toward CauseProbeOK and SKIP_ONCE is
// CauseProbeSkip, while ALWAYS_SKIP leaves the EV ASSUMED_BAD (EV-ST-10);
// for data, SKIP_ONCE and ALWAYS_SKIP are their own events and NONE is
// none. A reserved m reads as NONE (WIRE-SETH-3).
func OfSACK(m wire.Multipath, probe bool) Cause {
	switch {
	case m == wire.MSkipOnce && probe:
		return CauseProbeSkip
	case m == wire.MSkipOnce:
		return CauseSkipOnce
	case m == wire.MAlwaysSkip && probe:
		return CauseNone
	case m == wire.MAlwaysSkip:
		return CauseAlwaysSkip
	case probe:
		return CauseProbeOK
	}
	return CauseNone
}

// OfNACK returns the event a NACK is for the EV it reflects: TRIMMED is
// CauseTrimmed; TRIMMED_LASTHOP (incast at the last hop, not the path's
// fault) and every resource or window reason leave the EV as it is
// (EV-ST-3).
func OfNACK(r wire.NACKReason) Cause {
	if r == wire.NACKTrimmed {
		return CauseTrimmed
	}
	return CauseNone
}

// Named returns the path state a SACK's m verdict points to for the EV it
// reflects: NONE a usable path (GOOD), SKIP_ONCE a congested one (SKIP),
// ALWAYS_SKIP a bad one (ASSUMED_BAD); a reserved m points to none
// (false). It serves a reader of a capture, who lacks the timer-driven
// moves the table needs (a rotation ending, a timeout retiring the EV).
func Named(m wire.Multipath) (State, bool) {
	switch m {
	case wire.MNone:
		return Good, true
	case wire.MSkipOnce:
		return Skip, true
	case wire.MAlwaysSkip:
		return AssumedBad, true
	}
	return Unknown, false
}
