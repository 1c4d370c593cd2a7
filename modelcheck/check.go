package modelcheck

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"time"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Result reports one exploration.
type Result struct {
	Config string
	// States counts the successor states computed (transitions taken),
	// Distinct the states kept after hashing, Depth the length of the
	// longest shortest path from the initial state (BFS levels).
	States, Distinct, Depth int
	// Terminal counts distinct states with no enabled transition;
	// Constrained those not expanded because of Bounds.MaxBag; Rejected the
	// transitions the environment assumption (SilentTimeouts) ruled out.
	Terminal, Constrained, Rejected int
	Elapsed                         time.Duration
	// Reached counts the transitions that produced each kind of event
	// ("Timeout", "NACKSent TRIMMED", "EVState GOOD->SKIP", "QPError
	// RetryExceeded", ...): evidence of what the bounds let the search
	// reach.
	Reached map[string]int
	// Violation is the shortest counterexample, or nil.
	Violation *Violation
}

func (r *Result) String() string {
	s := fmt.Sprintf("%s: %d states, %d distinct, depth %d, %v", r.Config, r.States, r.Distinct, r.Depth,
		r.Elapsed.Round(time.Millisecond))
	if r.Violation != nil {
		s += "\n" + r.Violation.String()
	}
	return s
}

// Violation is a counterexample: the shortest sequence of transitions from
// the initial state to a state (or step) that violates an invariant.
type Violation struct {
	// Invariant is the first invariant the last step violates; All lists
	// every one it violates, Details says how.
	Invariant string
	All       []string
	Details   []string
	// Steps is the counterexample, one entry per transition, each a
	// description of the action followed by indented lines saying what the
	// QPs did.
	Steps [][]string
	// Trace is the counterexample as NDJSON (statemachine/trace.go), the
	// harness's records interleaved with both QPs' events.
	Trace []byte
}

// Len is the number of transitions in the counterexample.
func (v *Violation) Len() int { return len(v.Steps) }

func (v *Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invariant %s violated after %d steps:\n", v.Invariant, len(v.Steps))
	for i, st := range v.Steps {
		for j, line := range st {
			if j == 0 {
				fmt.Fprintf(&b, "%3d. %s\n", i+1, line)
			} else {
				fmt.Fprintf(&b, "       %s\n", strings.TrimLeft(line, " "))
			}
		}
	}
	for _, d := range v.Details {
		fmt.Fprintf(&b, "  => %s\n", d)
	}
	return b.String()
}

type parent struct {
	from uint64
	sh   uint64 // both QPs' StateHash, for the cross-check
	act  action
}

// stateHashes combines the QPs' own abstract-state hashes
// (statemachine.QP.StateHash).
func stateHashes(w *world) uint64 {
	return w.qp[0].StateHash() ^ bits.RotateLeft64(w.qp[1].StateHash(), 17)
}

// Check explores every state of cfg reachable within its bounds,
// breadth-first, and returns the statistics and, if an invariant fails,
// the shortest counterexample. It returns an error for a configuration it
// cannot run or a search beyond Config.MaxDistinct.
func Check(cfg Config) (*Result, error) { return check(cfg, nil, false) }

// check is Check, calling visit (when not nil) with every distinct state.
// With keepGoing it records the first violation and explores on, so that
// visit sees every reachable state.
func check(cfg Config, visit func(*checker, *world), keepGoing bool) (*Result, error) {
	x := &search{start: time.Now(), visit: visit, keepGoing: keepGoing, st: &stats{}}
	c, err := newChecker(cfg)
	if err != nil {
		return nil, err
	}
	x.c = c
	if x.w0, err = c.initial(); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg.Name}
	x.res = res
	if visit != nil {
		visit(c, x.w0)
	}
	x.root, _ = x.w0.hash(nil)
	x.seen = map[uint64]parent{x.root: {sh: stateHashes(x.w0)}}
	frontier := []node{{x.w0, x.root}}
	depth := 0
	defer func() { res.Reached = x.st.reached() }()
	for len(frontier) > 0 {
		var next []node
		for i, n := range frontier {
			// An expanded state is no longer needed: dropping it here lets
			// the collector free this level while the next one grows.
			frontier[i] = node{}
			var stop bool
			if next, stop, err = x.expand(n, next); err != nil {
				return nil, err
			} else if stop {
				return res, nil
			}
		}
		if len(next) > 0 {
			depth++
		}
		frontier = next
	}
	res.Distinct, res.Elapsed, res.Depth = len(x.seen), time.Since(x.start), depth
	return res, nil
}

// node is a state on the search's frontier and its fingerprint.
type node struct {
	w *world
	h uint64
}

// search is one breadth-first exploration.
type search struct {
	c         *checker
	res       *Result
	w0        *world
	root      uint64
	seen      map[uint64]parent
	visit     func(*checker, *world)
	keepGoing bool
	start     time.Time
	st        *stats
	acts      []action
	scratch   []uint64
}

// found records a violation; it reports whether the search stops.
func (x *search) found(h uint64, last []action, v *violations) bool {
	if x.res.Violation == nil {
		x.res.Violation = x.c.counterexample(x.w0, x.root, x.seen, h, last, v)
		x.res.Distinct, x.res.Elapsed, x.res.Depth = len(x.seen), time.Since(x.start), len(x.res.Violation.Steps)
	}
	return !x.keepGoing
}

// expand takes every transition enabled in n, checks each step and
// appends the new states to next; stop reports a violation that ends the
// search.
func (x *search) expand(n node, next []node) (_ []node, stop bool, err error) {
	c, res := x.c, x.res
	if b := c.cfg.Bounds.MaxBag; b > 0 && len(n.w.net) > b {
		res.Constrained++
		return next, false, nil
	}
	x.acts = c.actions(n.w, x.acts[:0])
	enabled := 0
	for _, a := range x.acts {
		nw, err := c.apply(n.w, a)
		if err != nil {
			return nil, true, err
		}
		if c.log.rejected {
			res.Rejected++
			continue
		}
		enabled++
		res.States++
		x.st.note(&c.log)
		if v := c.check(n.w, nw); c.counts(v) && x.found(n.h, []action{a}, v) {
			return nil, true, nil
		}
		if a.kind == actTimer {
			var v *violations
			if v, x.scratch = c.livelock(n.w, nw, x.scratch); v != nil && x.found(n.h, []action{a}, v) {
				return nil, true, nil
			}
		}
		if next, err = x.keep(n, a, nw, next); err != nil {
			return nil, true, err
		}
	}
	if enabled == 0 {
		res.Terminal++
		if v := c.progress(n.w); v != nil && x.found(n.h, nil, v) {
			return nil, true, nil
		}
	}
	return next, false, nil
}

// keep adds nw, reached from n by a, to next unless it was seen before.
func (x *search) keep(n node, a action, nw *world, next []node) ([]node, error) {
	var h uint64
	h, x.scratch = nw.hash(x.scratch)
	sh := stateHashes(nw)
	if p, ok := x.seen[h]; ok {
		// The fingerprint covers everything StateHash does: equal
		// fingerprints with different StateHashes would mean the
		// fingerprint misses a field (or a 64-bit collision).
		if p.sh != sh {
			return nil, fmt.Errorf("modelcheck: %s: two states with the same fingerprint differ in StateHash", x.c.cfg.Name)
		}
		return next, nil
	}
	x.seen[h] = parent{from: n.h, sh: sh, act: a}
	if x.visit != nil {
		x.visit(x.c, nw)
	}
	next = append(next, node{nw, h})
	if len(x.seen) > x.c.cfg.MaxDistinct {
		return nil, fmt.Errorf("modelcheck: %s: more than %d distinct states; tighten the bounds", x.c.cfg.Name, x.c.cfg.MaxDistinct)
	}
	return next, nil
}

// counts reports whether v has a violation the search stops for: any, or
// with Config.only set, one of that invariant alone (the others are
// dropped from v).
func (c *checker) counts(v *violations) bool {
	if c.cfg.only == "" || !v.any() {
		return v.any()
	}
	var keep violations
	for i, n := range v.names {
		if n == c.cfg.only {
			keep.names, keep.details = append(keep.names, n), append(keep.details, v.details[i])
		}
	}
	*v = keep
	return v.any()
}

// stats counts what the transitions produced.
type stats struct {
	kinds  [64]int
	ev     [5][5]int
	causes [16]int
	nack   [32]int
	errors [16]int
}

func (s *stats) note(l *stepLog) {
	for q := range 2 {
		for _, e := range l.ev[q] {
			s.kinds[e.Kind&63]++
			switch e.Kind {
			case sm.EvEVState:
				s.ev[e.From%5][e.To%5]++
				s.causes[e.Reason&15]++
			case sm.EvNACKSent:
				s.nack[e.Reason&31]++
			case sm.EvQPError:
				s.errors[e.Reason&15]++
			}
		}
	}
}

var errorCauses = [...]string{"None", "Modify", "RetryExceeded", "RemoteUnexp", "RemoteInvalid", "RemoteAccess", "RemoteOp",
	"WIMMLimit", "NoRecvWR", "Access"}

func (s *stats) reached() map[string]int {
	m := map[string]int{}
	for k, n := range s.kinds {
		if n > 0 {
			m[sm.EventKind(k).String()] = n
		}
	}
	for f := range s.ev {
		for t, n := range s.ev[f] {
			if n > 0 {
				m["EVState "+sm.EVState(f).String()+"->"+sm.EVState(t).String()] = n
			}
		}
	}
	for c, n := range s.causes {
		if n > 0 {
			m["EVCause "+sm.EVCause(c).String()] = n
		}
	}
	for r, n := range s.nack {
		if n > 0 {
			m["NACKSent "+wire.NACKReason(r).String()] = n
		}
	}
	for c, n := range s.errors {
		if n > 0 && c < len(errorCauses) {
			m["QPError "+errorCauses[c]] = n
		}
	}
	return m
}

// ReachedList returns the keys of Reached, sorted.
func (r *Result) ReachedList() []string {
	var l []string
	for k := range r.Reached {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

// path returns the actions from the root to state h.
func path(seen map[uint64]parent, root, h uint64) []action {
	var acts []action
	for h != root {
		p := seen[h]
		acts = append(acts, p.act)
		h = p.from
	}
	for i, j := 0, len(acts)-1; i < j; i, j = i+1, j-1 {
		acts[i], acts[j] = acts[j], acts[i]
	}
	return acts
}

// counterexample replays the path to h, then last, recording each step.
func (c *checker) counterexample(w0 *world, root uint64, seen map[uint64]parent, h uint64, last []action, v *violations) *Violation {
	acts := append(path(seen, root, h), last...)
	steps, trace := c.replay(w0, acts)
	return &Violation{Invariant: v.names[0], All: v.names, Details: v.details, Steps: steps, Trace: trace}
}

// replay applies acts from w0, describing each step and collecting the
// NDJSON trace.
func (c *checker) replay(w0 *world, acts []action) ([][]string, []byte) {
	c.trace = true
	defer func() { c.trace = false }()
	var steps [][]string
	var trace []byte
	w := w0
	for _, a := range acts {
		nw, err := c.apply(w, a)
		if err != nil {
			steps = append(steps, []string{"replay failed: " + err.Error()})
			break
		}
		steps = append(steps, c.describe(w, a, nw))
		trace = append(trace, c.rec...)
		c.check(w, nw) // keep the ghost state as in the search
		w = nw
	}
	return steps, trace
}
