package modelcheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/internal/testenv"
)

// Planted bugs of the responder that the adversary's trimmed, CE-marked
// and forged WriteIMM packets (AdvTrim, AdvCE, AdvForgeIMM) catch. They
// are planted in a mutated copy of statemachine/responder.go that go
// build's -overlay puts in place of the file, not seeded through
// statemachine.Config.Test.Faults: each mutation runs only while the
// overlay's statemachine.planted names it, so one test binary holds all
// three, and the reference code holds none of them.

// plant is one mutation of statemachine/responder.go: old, which must
// occur exactly once, becomes mutant, guarded by planted == name.
type plant struct {
	name, old, mutant string
}

var plants = []plant{{
	// A trimmed packet NACKed for its trim before its PSN is classed:
	// a trimmed duplicate or out-of-window PSN gets a TRIMMED NACK
	// (breaks RSP-DUP-2, RSP-SM-3).
	name: "trim-before-window",
	old:  "\tif trimmed, lastHop := q.isTrimmed(p); trimmed {\n",
	mutant: "\tif trimmed, lastHop := q.isTrimmed(p); trimmed {\n" +
		"\t\tif planted == \"trim-before-window\" {\n\t\t\tdup, oor = false, false\n\t\t}\n",
}, {
	// A CE-marked duplicate answered with m = NONE (breaks RSP-SACK-3).
	name: "ce-dup-unmarked",
	old:  "\t\tq.sendSACK(psn, ev, ts, pl, q.verdict(ev, ce))\n\t\treturn\n\tcase oor:\n",
	mutant: "\t\tm := q.verdict(ev, ce)\n\t\tif planted == \"ce-dup-unmarked\" {\n\t\t\tm = wire.MNone\n\t\t}\n" +
		"\t\tq.sendSACK(psn, ev, ts, pl, m)\n\t\treturn\n\tcase oor:\n",
}, {
	// A WriteIMM whose RQMSN is held placed as a WRITE instead of
	// discarded unanswered (breaks WIMM-SM-1).
	name: "wimm-conflict-placed",
	old:  "\t\tif r.slot(k-1).rqmsn == rqmsn {\n\t\t\tq.ignore(IgnoreWIMMConflict, psn, ev)\n\t\t\treturn false\n",
	mutant: "\t\tif r.slot(k-1).rqmsn == rqmsn {\n\t\t\tq.ignore(IgnoreWIMMConflict, psn, ev)\n" +
		"\t\t\treturn planted == \"wimm-conflict-placed\"\n",
}}

// plantedHunt is the configuration that catches one plant, the invariant
// its minimal counterexample violates first and its length.
type plantedHunt struct {
	plant string
	cfg   func() Config
	inv   string
	steps int
}

var plantedHunts = []plantedHunt{
	// The adversary's trimmed PSN 2, beyond B's window of 2, gets a
	// TRIMMED NACK instead of PSN_OOR_WINDOW.
	{"trim-before-window", func() Config { return advMoves("trim-hunt", AdvTrim|AdvCE, 2) }, InvResponderAnswers, 2},
	// The adversary sends PSN 0, then PSN 0 CE-marked: the duplicate's
	// SACK says m = NONE.
	{"ce-dup-unmarked", func() Config { return advMoves("ce-hunt", AdvTrim|AdvCE, 2) }, InvResponderAnswers, 4},
	// The adversary sends PSN 2 as a WriteIMM with RQMSN 0, then the
	// WriteIMM (PSN 3, RQMSN 0): B places the second.
	{"wimm-conflict-placed", func() Config {
		c := advMoves("wimm-hunt", AdvForgeIMM, 2)
		c.MPR, c.MaxWIMMDest = 4, 2
		return c
	}, InvResponderAnswers, 4},
}

// advMoves is the adversary with moves m and n injections, 1 timer.
func advMoves(name string, m AdvMoves, n int) Config {
	c := adversary(name)
	c.AdversaryMoves = m
	c.Bounds = Bounds{Injects: n, Timers: 1}
	return c
}

// plantedChild is the test the overlay adds to this package: with each
// plant switched on in turn, its hunt must end in the expected minimal
// counterexample, and the adversary of adversarial-requester-hostile
// (resends, PSNs of no WR, 2 injections) must miss every plant.
const plantedChild = `package modelcheck

import (
	"slices"
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

func TestPlantedChild(t *testing.T) {
	for _, h := range plantedHunts {
		sm.SetPlanted(h.plant)
		r, err := Check(h.cfg())
		if err != nil {
			t.Fatal(err)
		}
		v := r.Violation
		if v == nil {
			t.Errorf("planted %s not caught: %d states, %d distinct", h.plant, r.States, r.Distinct)
			continue
		}
		t.Logf("planted %s: %d states, %d distinct before the counterexample:\n%s", h.plant, r.States, r.Distinct, v)
		if v.Invariant != h.inv || !slices.Contains(v.All, h.inv) || v.Len() != h.steps {
			t.Errorf("planted %s: %s (all %v) in %d steps, want %s in %d", h.plant, v.Invariant, v.All, v.Len(), h.inv, h.steps)
		}
		r, err = Check(hostile("hostile-2", 2))
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation != nil {
			t.Errorf("planted %s: the hostile adversary caught it:\n%s", h.plant, r.Violation)
		} else {
			t.Logf("planted %s: hostile adversary, %d states, %d distinct, no violation", h.plant, r.States, r.Distinct)
		}
	}
	sm.SetPlanted("")
}
`

// TestPlantedResponderBugs builds this package's tests with the mutated
// responder.go through -overlay and runs TestPlantedChild there: each
// plant is caught by ResponderAnswers in its hunt, and missed by the
// adversary without the new moves (RSP-SM-3, RSP-SACK-3, WIMM-SM-1). With
// -short it does not run: it compiles statemachine and this package again.
func TestPlantedResponderBugs(t *testing.T) {
	if testing.Short() {
		testenv.Unavailable(t, "-short: it builds a second test binary with the mutated responder (-overlay)")
	}
	src, err := filepath.Abs("../statemachine/responder.go")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	code := string(b)
	for _, p := range plants {
		if n := strings.Count(code, p.old); n != 1 {
			t.Fatalf("plant %s: its snippet occurs %d times in responder.go, want once (the code changed: update the plant)", p.name, n)
		}
		code = strings.Replace(code, p.old, p.mutant, 1)
	}
	dir := t.TempDir()
	files := map[string]string{
		src:                             code,
		"../statemachine/zz_planted.go": "package statemachine\n\nvar planted string\n\n// SetPlanted switches a planted bug on.\nfunc SetPlanted(name string) { planted = name }\n",
		"zz_planted_child_test.go":      plantedChild,
	}
	replace := map[string]string{}
	for at, text := range files {
		abs, err := filepath.Abs(at)
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(abs, "/"), "/", "_"))
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[abs] = tmp
	}
	ov, _ := json.Marshal(map[string]any{"Replace": replace})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "test", "-overlay", ovPath, "-count=1", "-run", "^TestPlantedChild$", "-v", ".").CombinedOutput()
	t.Logf("go test -overlay (mutated responder.go):\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPlantedChild") {
		t.Fatalf("the planted bugs' child test failed: %v", err)
	}
}

// TestPlantedHuntsCoverPlants: every plant has exactly one hunt, whose
// configuration gives the adversary the moves the plant needs, and every
// hunt names a plant (TestPlantedChild, built only by
// TestPlantedResponderBugs, runs them).
func TestPlantedHuntsCoverPlants(t *testing.T) {
	hunts := map[string]int{}
	for _, h := range plantedHunts {
		hunts[h.plant]++
		if c := h.cfg(); c.AdversaryMoves == 0 || h.steps <= 0 || h.inv == "" {
			t.Errorf("hunt for %s: moves %v, %d steps, invariant %q", h.plant, c.AdversaryMoves, h.steps, h.inv)
		}
	}
	for _, p := range plants {
		if hunts[p.name] != 1 {
			t.Errorf("plant %s has %d hunts, want 1", p.name, hunts[p.name])
		}
		delete(hunts, p.name)
	}
	for name := range hunts {
		t.Errorf("hunt for %s, which is no plant", name)
	}
}
