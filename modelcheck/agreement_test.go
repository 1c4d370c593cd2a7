//go:build tlc

package modelcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The shared configuration of the Go/TLA+ agreement check: tla/MRC_small.cfg
// (EVs {1, 2}, EV 2 may fail, WRs of 2 and 1 packets, the second a
// WriteIMM, MPR 2, retry limit 2, max_wimm 1, max_wimm_dest 1,
// ev_min_active 1, one probe restores, one network fault of any kind,
// timers only for silent packets) with the two settings Go fixes:
// TransportACK = TRUE (the Go responder always sends the AETH ACK) and
// ReorderGuard = 2 (Go's default without congestion control: the MPR
// window). The Go side explores the same shape with two timer firings, for
// four random seeds (the EV rotation order is pseudo-random in Go and a
// free choice in the model).
func sharedConfig(seed uint64) Config {
	c := base(fmt.Sprintf("shared-seed-%d", seed))
	c.Seed = seed
	c.FailableEVs = []uint32{0x101}
	c.ReorderThreshold = 2
	c.Bounds = Bounds{Drops: 1, Dups: 1, Trims: 1, CEs: 1, NetFaults: 1, PathFails: 1, Timers: 2}
	return c
}

var sharedSeeds = []uint64{0, 1, 2, 3}

// tlaProject projects one TLC state onto Abstract, as project does a Go
// world.
func tlaProject(st map[string]tlaValue) Abstract {
	var a Abstract
	a.QPState = st["qpState"].s
	a.Posted = int(st["posted"].i)
	a.Nxt = int(st["nxt"].i)
	a.Una = int(st["una"].i)
	a.Inflight = st["inflight"].ints()
	a.Sacked = st["sacked"].ints()
	a.Lost = st["lost"].ints()
	tx := st["txEV"]
	for p := a.Una; p < a.Nxt; p++ {
		v, _ := tx.get(p)
		a.TxEV = append(a.TxEV, int(v.i))
	}
	a.Retries = int(st["retries"].i)
	a.SndOK = int(st["sndOK"].i)
	ev := st["evState"]
	for k := 1; ; k++ {
		v, ok := ev.get(k)
		if !ok {
			break
		}
		a.EVState = append(a.EVState, v.s)
	}
	a.RspErr = st["rspErr"].b
	a.Epsn = int(st["epsn"].i)
	a.Rbits = st["rbits"].ints()
	a.ExpRQ = int(st["expRQ"].i)
	a.RcvCQ = len(st["rcvCQ"].elem)
	return a
}

// goStable reports whether the Go requester, which sends everything it can
// in the step that makes it possible (pump), could be in projected state a
// of the shared configuration (WRs of 2 and 1 packets, MPR 2): nothing new
// it could send, no queued PSN it could retransmit.
func goStable(a Abstract) bool {
	if a.QPState == "ERROR" {
		return true
	}
	usable := func(e int) bool {
		return e >= 1 && e <= len(a.EVState) && (a.EVState[e-1] == "GOOD" || a.EVState[e-1] == "SKIP")
	}
	anyUsable := usable(1) || usable(2)
	end := []int{0, 2, 3}[a.Posted]
	if len(a.Lost) == 0 {
		return !(a.Nxt < end && a.Nxt-a.Una < 2 && anyUsable)
	}
	m := a.Lost[0]
	for _, p := range a.Lost {
		m = min(m, p)
	}
	for e := 1; e <= 2; e++ {
		if e != a.TxEV[m-a.Una] && usable(e) {
			return false
		}
	}
	return true
}

// TestTLAAgreement compares the reachable states of the Go model checker
// (the real statemachine code) and of TLC on tla/MRC.tla for the shared
// configuration, projected onto the model's variables (project.go). It
// requires every abstract state Go reaches to be reachable in the model,
// and reports, at four levels of abstraction, how many model states Go
// does not reach.
func TestTLAAgreement(t *testing.T) {
	jar := tlaTools(t)
	dir := tlaWorkdir(t)
	writeSharedCfg(t, dir)
	o := runTLC(t, jar, dir, "MRC.tla", "shared.cfg", "-workers", "2", "-dump", filepath.Join(dir, "states"))
	if !o.ok {
		t.Fatalf("TLC on the shared configuration: %s\n%s", o, tail(o.out, 40))
	}
	states, err := readDump(filepath.Join(dir, "states.dump"))
	if err != nil {
		t.Fatal(err)
	}
	var tlaAll []Abstract
	for _, st := range states {
		tlaAll = append(tlaAll, tlaProject(st))
	}
	t.Logf("TLC: %d distinct states (%v)", len(states), o.elapsed.Round(time.Second))

	var goAll []Abstract
	goStates := 0
	for _, seed := range sharedSeeds {
		set, r, err := Reachable(sharedConfig(seed))
		if err != nil {
			t.Fatal(err)
		}
		goStates += r.Distinct
		t.Logf("Go seed %d: %d states, %d distinct, depth %d, %v; %d projected", seed, r.States, r.Distinct, r.Depth,
			r.Elapsed.Round(time.Millisecond), len(set))
		if r.Violation != nil {
			t.Logf("  (the search also found: %s after %d steps; it explored on)", r.Violation.Invariant, r.Violation.Len())
		}
		for _, a := range set {
			goAll = append(goAll, a)
		}
	}

	table := compareProjections(t, goAll, tlaAll)
	t.Logf("Go: %d distinct states over seeds %v; TLC: %d distinct states\n"+
		"| projection | Go | TLA+ | Go only | TLA+ only | of which Go-stable |\n|---|---|---|---|---|---|\n%s",
		goStates, sharedSeeds, len(states), strings.Join(table, "\n"))
}

// writeSharedCfg writes shared.cfg into dir: tla/MRC_small.cfg with the
// two settings Go fixes (sharedConfig).
func writeSharedCfg(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "MRC_small.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, r := range [][2]string{{"TransportACK = FALSE", "TransportACK = TRUE"}, {"ReorderGuard = 0", "ReorderGuard = 2"}} {
		if !strings.Contains(cfg, r[0]) {
			t.Fatalf("tla/MRC_small.cfg has no %q: update sharedConfig and this test", r[0])
		}
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "shared.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compareProjections compares the projected states of both checkers at
// four levels of abstraction: every Go state must be a TLA+ state. It
// returns the README table's rows.
func compareProjections(t *testing.T, goAll, tlaAll []Abstract) []string {
	t.Helper()
	levels := []struct {
		name string
		f    func(Abstract) Abstract
	}{
		{"all 16 variables", func(a Abstract) Abstract { return a }},
		{"without txEV", func(a Abstract) Abstract { a.TxEV = nil; return a }},
		{"without txEV, evState", func(a Abstract) Abstract { a.TxEV, a.EVState = nil, nil; return a }},
		{"without txEV, evState, retries", func(a Abstract) Abstract { a.TxEV, a.EVState, a.Retries = nil, nil, 0; return a }},
	}
	var table []string
	for i, l := range levels {
		gs, ts := map[string]bool{}, map[string]bool{}
		for _, a := range goAll {
			gs[l.f(a).Key()] = true
		}
		stable := map[string]bool{}
		for _, a := range tlaAll {
			k := l.f(a).Key()
			ts[k] = true
			if goStable(a) {
				stable[k] = true
			}
		}
		var goOnly, tlaOnly []string
		tlaOnlyStable := 0
		for k := range gs {
			if !ts[k] {
				goOnly = append(goOnly, k)
			}
		}
		for k := range ts {
			if !gs[k] {
				tlaOnly = append(tlaOnly, k)
				if stable[k] {
					tlaOnlyStable++
				}
			}
		}
		sort.Strings(goOnly)
		sort.Strings(tlaOnly)
		table = append(table, fmt.Sprintf("| %s | %d | %d | %d | %d | %d |", l.name, len(gs), len(ts), len(goOnly),
			len(tlaOnly), tlaOnlyStable))
		if len(goOnly) > 0 {
			t.Errorf("%s: %d abstract states the Go implementation reaches are not reachable in the TLA+ model, e.g.:\n  %s",
				l.name, len(goOnly), strings.Join(goOnly[:min(10, len(goOnly))], "\n  "))
		}
		if i == 0 {
			for _, k := range tlaOnly[:min(5, len(tlaOnly))] {
				t.Logf("model only, e.g.: %s", k)
			}
		}
	}
	return table
}
