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
	start := time.Now()
	c, err := newChecker(cfg)
	if err != nil {
		return nil, err
	}
	w0, err := c.initial()
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg.Name}
	if visit != nil {
		visit(c, w0)
	}
	h0, _ := w0.hash(nil)
	seen := map[uint64]parent{h0: {sh: stateHashes(w0)}}
	root := h0
	type node struct {
		w *world
		h uint64
	}
	frontier := []node{{w0, h0}}
	depth := 0
	var acts []action
	var scratch []uint64
	st := &stats{}
	defer func() { res.Reached = st.reached() }()
	// found records a violation; it reports whether the search stops.
	found := func(h uint64, last []action, v *violations) bool {
		if res.Violation == nil {
			res.Violation = c.counterexample(w0, root, seen, h, last, v)
			res.Distinct, res.Elapsed, res.Depth = len(seen), time.Since(start), len(res.Violation.Steps)
		}
		return !keepGoing
	}
	for len(frontier) > 0 {
		var next []node
		for _, n := range frontier {
			if b := cfg.Bounds.MaxBag; b > 0 && len(n.w.net) > b {
				res.Constrained++
				continue
			}
			acts = c.actions(n.w, acts[:0])
			enabled := 0
			for _, a := range acts {
				nw, err := c.apply(n.w, a)
				if err != nil {
					return nil, err
				}
				if c.log.rejected {
					res.Rejected++
					continue
				}
				enabled++
				res.States++
				st.note(&c.log)
				if v := c.check(n.w, nw); c.counts(v) && found(n.h, []action{a}, v) {
					return res, nil
				}
				if a.kind == actTimer {
					var v *violations
					if v, scratch = c.livelock(n.w, nw, scratch); v != nil && found(n.h, []action{a}, v) {
						return res, nil
					}
				}
				var h uint64
				h, scratch = nw.hash(scratch)
				sh := stateHashes(nw)
				if p, ok := seen[h]; ok {
					// The fingerprint covers everything StateHash does: equal
					// fingerprints with different StateHashes would mean the
					// fingerprint misses a field (or a 64-bit collision).
					if p.sh != sh {
						return nil, fmt.Errorf("modelcheck: %s: two states with the same fingerprint differ in StateHash", cfg.Name)
					}
					continue
				}
				seen[h] = parent{from: n.h, sh: sh, act: a}
				if visit != nil {
					visit(c, nw)
				}
				next = append(next, node{nw, h})
				if len(seen) > c.cfg.MaxDistinct {
					return nil, fmt.Errorf("modelcheck: %s: more than %d distinct states; tighten the bounds", cfg.Name, c.cfg.MaxDistinct)
				}
			}
			if enabled == 0 {
				res.Terminal++
				if v := c.progress(n.w); v != nil && found(n.h, nil, v) {
					return res, nil
				}
			}
		}
		if len(next) > 0 {
			depth++
		}
		frontier = next
	}
	res.Distinct, res.Elapsed, res.Depth = len(seen), time.Since(start), depth
	return res, nil
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
		if n > 0 && c < len(causeNames) {
			m["EVCause "+causeNames[c]] = n
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
