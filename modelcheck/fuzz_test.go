package modelcheck

import (
	"slices"
	"testing"
)

// walkConfigs are the configurations FuzzWalk draws from: the default and
// the large ones, whose bounds a walk may scale up beyond what the
// exhaustive search covers (network faults and timers only).
var walkConfigs = append(Configurations(), LargeConfigurations()...)

// maxWalkSteps bounds one walk; every budget is finite, so a walk ends
// sooner unless the environment assumption keeps rejecting steps.
const maxWalkSteps = 2000

// walkConfig decodes a configuration and a budget scale from two bytes.
func walkConfig(b0, b1 byte) Config {
	cfg := walkConfigs[int(b0)%len(walkConfigs)]
	k := 1 + int(b1%3)
	b := &cfg.Bounds
	b.Drops, b.Dups, b.Trims, b.CEs = k*b.Drops, k*b.Dups, k*b.Trims, k*b.CEs
	b.NetFaults *= k
	b.Timers, b.Ticks = k*b.Timers+int(b1>>2&3), k*b.Ticks
	// Control-plane budgets stay as configured: a second controller
	// operation can DENY the last path that works, and what a QP should
	// then do is not settled (fuzz/README.md, findings).
	b.MaxBag = 0
	return cfg
}

// walk runs one path through the model: choice i picks the i-th step
// among the enabled transitions (the first one once the choices run out,
// which delivers, posts or fires timers until every budget is spent). After
// every step it evaluates the model's invariants (check, livelock, and
// Progress in a terminal state) exactly as the exhaustive search does. It
// returns the world fingerprints after every step.
func walk(t *testing.T, cfg Config, choices []byte) []uint64 {
	c, err := newChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w0, err := c.initial()
	if err != nil {
		t.Fatal(err)
	}
	w := w0
	var acts, path []action
	var scratch, fps []uint64
	fail := func(v *violations) {
		steps, _ := c.replay(w0, path)
		x := &Violation{Invariant: v.names[0], All: v.names, Details: v.details, Steps: steps}
		t.Fatalf("%s: %s", cfg.Name, x)
	}
	for i := 0; i < maxWalkSteps; i++ {
		acts = c.actions(w, acts[:0])
		if len(acts) == 0 {
			if v := c.progress(w); v != nil {
				fail(v)
			}
			break
		}
		a := acts[0]
		if i < len(choices) {
			a = acts[int(choices[i])%len(acts)]
		}
		nw, err := c.apply(w, a)
		if err != nil {
			t.Fatalf("%s: step %d (%s): %v", cfg.Name, i, actNames[a.kind], err)
		}
		if c.log.rejected {
			continue // the environment assumption rules the step out
		}
		path = append(path, a)
		if v := c.check(w, nw); v.any() {
			fail(v)
		}
		if a.kind == actTimer {
			var v *violations
			if v, scratch = c.livelock(w, nw, scratch); v != nil {
				fail(v)
			}
		}
		if n := len(nw.net); n > maxWalkBag {
			t.Fatalf("%s: %d packets in flight after %d steps: the network grows beyond the budgets", cfg.Name, n, len(path))
		}
		w = nw
		var h uint64
		h, scratch = w.hash(scratch)
		fps = append(fps, h)
	}
	return fps
}

// maxWalkBag bounds the packets in flight: every packet answers a post, a
// delivery, a budgeted fault or a timer, so the bag stays far below this.
const maxWalkBag = 256

// FuzzWalk drives the model's two QPs through an arbitrary sequence of
// transitions decoded from the input: posts, deliveries in any order,
// drops, duplicates, trims, CE marks, path failures, timer firings and
// ticks, port flaps, controller EV changes, resource conditions, dynamic
// MPR and receive penalties, with fault budgets up to three times the
// exhaustive search's. After every step every invariant of the model holds
// (Invariants: no duplicate placement, windows, ACK soundness, EV
// transitions only as the table allows and as the step justifies, ...),
// the network stays bounded, and the same input walks the same path to the
// same states (fingerprints equal step by step).
func FuzzWalk(f *testing.F) {
	for i := range walkConfigs {
		f.Add([]byte{byte(i), 0})
		f.Add([]byte{byte(i), 1, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9})
		f.Add([]byte{byte(i), 2, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || len(data) > maxWalkSteps {
			return
		}
		cfg := walkConfig(data[0], data[1])
		first := walk(t, cfg, data[2:])
		if again := walk(t, cfg, data[2:]); !slices.Equal(first, again) {
			t.Fatalf("%s: the same input walked to different states (%d and %d steps)", cfg.Name, len(first), len(again))
		}
	})
}
