package evstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

var states = []State{Good, Skip, AssumedBad, Denied}

// specEvents names the events of the table in spec/21-paths.md by the
// cause that stands for them; a row whose event is not here fails the test,
// so a new row in the spec needs a cause.
var specEvents = map[string]Cause{
	"SACK with `m` = SKIP_ONCE":   CauseSkipOnce,
	"NACK TRIMMED":                CauseTrimmed,
	"NACK TRIMMED_LASTHOP":        CauseNone,
	"SACK with `m` = ALWAYS_SKIP": CauseAlwaysSkip,
	"timeout of a packet sent on the EV, with no trim and no SACK":                                  CauseTimeout,
	"loss of a packet sent on the EV inferred from SACKs, with no trim (EV-SM-5, project decision)": CauseInferredLoss,
	"end of the current rotation":                                      CauseRotation,
	"probe answered with `m` = NONE (enough times)":                    CauseProbeOK,
	"probe answered with `m` = SKIP_ONCE":                              CauseProbeSkip,
	"controller sets DENIED":                                           CauseController,
	"controller sets GOOD":                                             CauseController,
	"controller sets GOOD or ASSUMED_BAD (EV-ST-14, project decision)": CauseController,
}

// specRow is one row of the spec's path-state table.
type specRow struct {
	from, to string
	c        Cause
}

func specTable(t *testing.T) []specRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "spec", "21-paths.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []specRow
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "| From | Event | To |":
			in = true
			continue
		case !in || strings.HasPrefix(l, "|---"):
			continue
		case !strings.HasPrefix(l, "|"):
			in = false
			continue
		}
		f := strings.Split(strings.Trim(l, "|"), "|")
		if len(f) != 3 {
			t.Fatalf("21-paths.md: table row %q has %d cells", l, len(f))
		}
		ev := strings.TrimSpace(f[1])
		c, ok := specEvents[ev]
		if !ok {
			t.Fatalf("21-paths.md: the table's event %q has no cause here", ev)
		}
		rows = append(rows, specRow{strings.TrimSpace(f[0]), strings.TrimSpace(f[2]), c})
	}
	if len(rows) == 0 {
		t.Fatal("21-paths.md: no path-state table found")
	}
	return rows
}

// TestTableIsTheSpecs: every row of the spec's path-state table is a row of
// Table or a controller move ControllerMay allows, and every row of Table
// is in the spec's table or cites the requirement that adds it (EV-ST-2 to
// EV-ST-10, EV-ST-14, EV-SM-5).
func TestTableIsTheSpecs(t *testing.T) {
	inSpec := map[Transition]bool{}
	for _, r := range specTable(t) {
		for _, from := range states {
			if r.from != from.String() && r.from != "any" && r.from != "any other" {
				continue
			}
			for _, to := range states {
				if !strings.Contains(" "+r.to+" ", " "+to.String()+" ") {
					continue
				}
				if !Allowed(from, to, r.c) && from != to {
					t.Errorf("spec row %s -[%s]-> %s: Allowed(%s, %s, %s) is false", r.from, r.c, r.to, from, to, r.c)
				}
				inSpec[Transition{From: from, Cause: r.c, To: to}] = true
			}
		}
	}
	for _, tr := range Table {
		if _, ok := spec.Lookup(tr.Req); !ok {
			t.Errorf("row %v cites %s, which is no requirement", tr, tr.Req)
		}
		key := Transition{From: tr.From, Cause: tr.Cause, To: tr.To}
		if !inSpec[key] && tr.Req != "EV-ST-10" {
			t.Errorf("row %v is not in the spec's table and is not one of EV-ST-10's additions", tr)
		}
	}
}

// TestAllowedExhaustive enumerates every (from, to, cause): only Table's
// rows and the controller's GOOD, ASSUMED_BAD and DENIED are allowed
// (EV-ST-9, EV-ST-10, EV-ST-14).
func TestAllowedExhaustive(t *testing.T) {
	n := 0
	for _, from := range append(states, Unknown) {
		for _, to := range append(states, Unknown) {
			for c := CauseNone; c <= CauseInferredLoss; c++ {
				if !Allowed(from, to, c) {
					continue
				}
				n++
				if c == CauseController {
					if to != Good && to != AssumedBad && to != Denied {
						t.Errorf("controller may set %s", to)
					}
					continue
				}
				if from == Denied {
					t.Errorf("DENIED moves to %s on %s: only the controller moves it (EV-ST-9)", to, c)
				}
				if from == AssumedBad && c != CauseProbeOK && c != CauseProbeSkip {
					t.Errorf("ASSUMED_BAD moves to %s on %s: only probe answers move it (EV-ST-10)", to, c)
				}
			}
		}
	}
	if want := len(Table) + 3*5; n != want {
		t.Errorf("%d moves allowed, want %d (Table's rows and 3 controller targets from 5 states)", n, want)
	}
}

// TestRetiresRevives: the events that retire a usable EV are ALWAYS_SKIP,
// a timeout and an inferred loss (EV-ST-4, EV-ST-5, EV-SM-5); those that
// revive one are the probe answers (EV-ST-7, EV-ST-8).
func TestRetiresRevives(t *testing.T) {
	for c := CauseNone; c <= CauseInferredLoss; c++ {
		retires := c == CauseAlwaysSkip || c == CauseTimeout || c == CauseInferredLoss
		revives := c == CauseProbeOK || c == CauseProbeSkip
		if Retires(c) != retires || Revives(c) != revives {
			t.Errorf("%s: Retires %v Revives %v, want %v %v", c, Retires(c), Revives(c), retires, revives)
		}
	}
}

// TestFloorHolds: ev_min_active keeps an EV out of ASSUMED_BAD when one
// more would leave fewer than the floor usable (EV-SET-6), but not against
// the controller (EV-ST-14).
func TestFloorHolds(t *testing.T) {
	for _, tc := range []struct {
		c                   Cause
		evs, out, minActive int
		want                bool
	}{
		{CauseTimeout, 8, 0, 0, false},
		{CauseTimeout, 8, 5, 2, false}, // 2 left
		{CauseTimeout, 8, 6, 2, true},  // 1 would be left
		{CauseAlwaysSkip, 4, 0, 4, true},
		{CauseInferredLoss, 4, 3, 1, true},
		{CauseController, 4, 3, 4, false},
	} {
		if got := FloorHolds(tc.c, tc.evs, tc.out, tc.minActive); got != tc.want {
			t.Errorf("FloorHolds(%s, %d, %d, %d) = %v", tc.c, tc.evs, tc.out, tc.minActive, got)
		}
	}
}

// TestOfFeedback: what a SACK or NACK is for the EV it reflects (EV-ST-2,
// EV-ST-3, EV-ST-4, EV-ST-7, EV-ST-8, EV-ST-10; a reserved m reads as NONE,
// WIRE-SETH-3).
func TestOfFeedback(t *testing.T) {
	for _, tc := range []struct {
		m     wire.Multipath
		probe bool
		want  Cause
	}{
		{wire.MNone, false, CauseNone},
		{wire.MSkipOnce, false, CauseSkipOnce},
		{wire.MAlwaysSkip, false, CauseAlwaysSkip},
		{3, false, CauseNone},
		{wire.MNone, true, CauseProbeOK},
		{wire.MSkipOnce, true, CauseProbeSkip},
		{wire.MAlwaysSkip, true, CauseNone},
		{3, true, CauseProbeOK},
	} {
		if got := OfSACK(tc.m, tc.probe); got != tc.want {
			t.Errorf("OfSACK(%s, probe %v) = %s, want %s", tc.m, tc.probe, got, tc.want)
		}
	}
	for r := wire.NACKReason(0); r < 255; r++ {
		want := CauseNone
		if r == wire.NACKTrimmed {
			want = CauseTrimmed
		}
		if got := OfNACK(r); got != want {
			t.Errorf("OfNACK(%s) = %s, want %s", r, got, want)
		}
	}
	for m, want := range map[wire.Multipath]State{wire.MNone: Good, wire.MSkipOnce: Skip, wire.MAlwaysSkip: AssumedBad, 3: Unknown} {
		if got, ok := Named(m); got != want || ok != (want != Unknown) {
			t.Errorf("Named(%s) = %s, %v", m, got, ok)
		}
	}
}

// TestNames: the states carry the API's names (mrc_ctl_ev_state) and SKIP;
// the causes are all named.
func TestNames(t *testing.T) {
	want := []string{"UNKNOWN", "GOOD", "SKIP", "ASSUMED_BAD", "DENIED"}
	for i, w := range want {
		if got := State(i).String(); got != w {
			t.Errorf("State(%d) = %s, want %s", i, got, w)
		}
	}
	for _, s := range states {
		if p, ok := ParseState(s.String()); !ok || p != s {
			t.Errorf("ParseState(%q) = %s, %v", s.String(), p, ok)
		}
	}
	for _, n := range []string{"UNKNOWN", "good", "", "ASSUMED BAD"} {
		if p, ok := ParseState(n); ok {
			t.Errorf("ParseState(%q) = %s", n, p)
		}
	}
	if got := State(9).String(); got != "UNKNOWN" {
		t.Errorf("State(9) = %s", got)
	}
	seen := map[string]bool{}
	for c := CauseNone; c <= CauseInferredLoss; c++ {
		if s := c.String(); s == "unknown" || seen[s] {
			t.Errorf("cause %d named %q", c, s)
		} else {
			seen[s] = true
		}
	}
	if got := Cause(99).String(); got != "unknown" {
		t.Errorf("Cause(99) = %s", got)
	}
}

// TestNextIsTheTable: Next, an index, answers as a scan of Table (its
// first matching row) for every state and cause value, in range or not.
func TestNextIsTheTable(t *testing.T) {
	for f := 0; f < 256; f++ {
		for c := 0; c < 256; c++ {
			from, cause := State(f), Cause(c)
			want, wantOK := from, false
			for _, tr := range Table {
				if tr.From == from && tr.Cause == cause {
					want, wantOK = tr.To, true
					break
				}
			}
			if got, ok := Next(from, cause); got != want || ok != wantOK {
				t.Fatalf("Next(%v, %v) = %v, %v; Table says %v, %v", from, cause, got, ok, want, wantOK)
			}
		}
	}
}
