package modelcheck

import (
	"fmt"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// A Scenario is one scripted run of the model's world: the same QPs,
// network and harness records as the exhaustive search, but one schedule
// instead of all of them. The network delivers packets in the order they
// were sent, except that a scenario's rules drop, duplicate, trim,
// CE-mark or hold back chosen packets; when nothing is in flight, time
// jumps to the next deadline. Scenario runs produce the example traces of
// testdata/traces (NDJSON, statemachine/trace.go) that tla/MRCTrace.tla
// validates.
type Scenario struct {
	Name string
	Doc  string
	// Config gives the QPs and WRs; its Bounds are ignored except Timers,
	// which bounds the timer firings of the run (0: 8).
	Config Config
	// Start are actions applied before anything is posted (a path
	// failure, a controller operation).
	start []action
	rules []rule
	// latency delays every delivery by this long after the send (0:
	// packets are delivered as soon as they are next in line).
	latency sm.Time
}

// rule applies a fault to the first packets that match.
type rule struct {
	from  int     // sending QP
	kind  pktKind // which packets
	psn   int     // PSN of a data packet or NACK, the cack of a SACK; −1: any
	rtx   bool    // data: match retransmissions (else first transmissions)
	act   actKind // actDrop, actDup, actTrim, actTrimLast, actCE or actHold
	count int     // how many matching packets it applies to; 0: 1
}

type pktKind uint8

const (
	pkData pktKind = iota
	pkSACK
	pkNACK
	pkACK
	pkProbe
)

// actHold holds a packet back: it is delivered only when nothing else is in
// flight (reordering). It is a scheduling choice, not a model transition.
const actHold actKind = 255

func (r *rule) matches(k *packet) bool {
	if int(k.from) != r.from {
		return false
	}
	switch r.kind {
	case pkData:
		return k.isData() && (r.psn < 0 || int(k.p.BTH.PSN) == r.psn) && k.p.BTH.Retransmit == r.rtx
	case pkSACK:
		return k.op() == wire.OpSACK && !k.p.SETH.PR && (r.psn < 0 || int32(k.p.SETH.CACKPSN<<8)>>8 == int32(r.psn))
	case pkNACK:
		return k.op() == wire.OpNACK && (r.psn < 0 || int(k.p.NETH.NACKPSN) == r.psn)
	case pkACK:
		return k.op() == wire.OpAcknowledge
	case pkProbe:
		return k.op() == wire.OpProbe
	}
	return false
}

// Scenarios returns the scripted runs whose traces are checked in under
// testdata/traces. All are one-way (A sends to B) in the shape of the
// TLA+ trace configurations (tla/MRCTrace_*.cfg): EVs 0x100 and 0x101 on
// one plane, MPR window 2, retry budget 2, max_wimm 1, ev_min_active 1,
// one good probe restores an EV.
func Scenarios() []Scenario {
	two := func(name, doc string, rules ...rule) Scenario {
		c := base(name)
		c.Msgs[0] = []Msg{{Packets: 2}, {Packets: 1, Imm: true}}
		return Scenario{Name: name, Doc: doc, Config: c, rules: rules}
	}
	var sc []Scenario
	sc = append(sc,
		two("clean", "two WRs, no fault: the window holds PSN 2 until PSN 0 is acknowledged (MPR-WIN-1), the WriteIMM completes last (WIMM-RSP-1)"),
		two("reorder", "PSN 0 arrives after PSN 1: selective acknowledgement, cumulative ACK on its arrival (RSP-RCV-3, LR-SACK-2)",
			rule{from: 0, kind: pkData, psn: 0, act: actHold}),
		two("loss-timeout-probe", "PSN 1 is lost: its timer expires, its EV becomes ASSUMED_BAD, it is retransmitted on the other EV and a probe restores the EV (LR-TMR-5, EV-ST-5, EV-PRB-1, EV-ST-7)",
			rule{from: 0, kind: pkData, psn: 1, act: actDrop}),
		two("trim", "PSN 0 is trimmed: NACK TRIMMED, the EV skips until the rotation ends, the retransmission avoids it (RSP-NACK-1, LR-NACK-1, EV-ST-3, EV-ST-13, EV-ST-6)",
			rule{from: 0, kind: pkData, psn: 0, act: actTrim}),
		two("trim-lasthop", "PSN 1 is trimmed at the last hop: NACK TRIMMED_LASTHOP leaves the EV GOOD (EV-ST-3)",
			rule{from: 0, kind: pkData, psn: 1, act: actTrimLast}),
		two("ecn", "PSN 0 is CE-marked: SACK m = SKIP_ONCE, the EV skips (RSP-SACK-3, EV-ST-2)",
			rule{from: 0, kind: pkData, psn: 0, act: actCE}),
		two("duplicate", "PSN 1 is duplicated: placed once, acknowledged twice (RSP-DUP-1, RSP-DUP-2)",
			rule{from: 0, kind: pkData, psn: 1, act: actDup}),
		two("sack-loss", "the SACK of PSN 0 is lost: a later SACK acknowledges it cumulatively (LR-SACK-1)",
			rule{from: 1, kind: pkSACK, psn: 0, act: actDrop}),
	)
	s := two("pathfail-retry-exhausted", "EV 0x101 fails for good with a retry budget of 0: the first timeout fails the QP, which completes its WRs with RETRY_EXC_ERR and flush errors (LR-TMR-7, CMP-ERR-1)")
	s.Config.LinearCnt = 0
	s.start = []action{{kind: actFail, side: 0, idx: 1}}
	sc = append(sc, s)
	s = two("trim-then-loss", "PSN 0 is trimmed and its retransmission lost: NACK, SKIP, retry, timeout, ASSUMED_BAD, probe (LR-NACK-5, LR-TMR-6)",
		rule{from: 0, kind: pkData, psn: 0, act: actTrim}, rule{from: 0, kind: pkData, psn: 0, rtx: true, act: actDrop})
	sc = append(sc, s)
	s = two("double-loss", "PSNs 0 and 1 are lost and time out in the same timer step: only the oldest outstanding PSN's timeout counts a retry (LR-TMR-6)",
		rule{from: 0, kind: pkData, psn: 0, act: actDrop}, rule{from: 0, kind: pkData, psn: 1, act: actDrop})
	s.Config.Bounds.Drops = 2
	sc = append(sc, s)
	s = two("reorder-loss", "reorder_guard 1: PSN 0 is lost, PSN 1's SACK shows it missing one packet later, so it is inferred lost (LR-RTX-4), retransmitted on the other EV, and the EV it was sent on becomes ASSUMED_BAD at once, until a probe restores it (EV-SM-5, EV-ST-7)",
		rule{from: 0, kind: pkData, psn: 0, act: actDrop})
	s.Config.ReorderThreshold = 1
	sc = append(sc, s)
	s = two("nscc", "congestion control on, 300 ns one-way delay: RTT samples, a CE mark and a trim move cwnd (CC-NSCC-1 to CC-NSCC-6)",
		rule{from: 0, kind: pkData, psn: 1, act: actCE}, rule{from: 0, kind: pkData, psn: 2, act: actTrim})
	s.Config.NSCC = true
	s.Config.Msgs[0] = []Msg{{Packets: 2}, {Packets: 2}, {Packets: 1, Imm: true}}
	s.Config.MaxCwnd = 3 * pathMTU
	s.Config.Bounds.Timers = 40 // B probes its reverse paths every base RTT (EV-REV-2)
	s.latency = 300
	sc = append(sc, s)
	s = two("nscc-penalty", "congestion control on, B's host backpressure: rcv_cwnd_pen 64 in its SACKs holds cwnd down (CC-RSP-3)")
	s.Config.NSCC = true
	s.Config.Msgs[0] = []Msg{{Packets: 2}, {Packets: 2}, {Packets: 1, Imm: true}}
	s.Config.MaxCwnd = 3 * pathMTU
	s.Config.Bounds.Timers = 40
	s.latency = 300
	s.start = []action{{kind: actPenalty, side: 1, arg: 64}}
	sc = append(sc, s)
	return sc
}

// RunScenario runs s and returns its NDJSON trace and the counterexample
// text of any invariant it violates (nil when none).
func RunScenario(s Scenario) (trace []byte, v *Violation, err error) {
	c, err := newChecker(s.Config)
	if err != nil {
		return nil, nil, err
	}
	c.trace = true
	w, err := c.initial()
	if err != nil {
		return nil, nil, err
	}
	r := &scenarioRun{c: c, s: &s, w: w, used: make([]int, len(s.rules)), held: map[*packet]bool{}, born: map[uint32]sm.Time{},
		maxTimers: s.Config.Bounds.Timers}
	if r.maxTimers == 0 {
		r.maxTimers = 8
	}
	for _, a := range s.start {
		if err := r.step(a); err != nil {
			return nil, nil, err
		}
	}
	for range c.msgs[0] {
		if err := r.step(action{kind: actPost, side: 0}); err != nil {
			return nil, nil, err
		}
	}
	for n := 0; n < 1000 && r.v == nil; n++ {
		progressed, err := r.applyRules()
		if err != nil {
			return nil, nil, err
		}
		if progressed {
			continue
		}
		a, ok := r.next()
		if !ok {
			return r.trace, r.v, nil
		}
		if err := r.step(a); err != nil {
			return nil, nil, err
		}
	}
	if r.v == nil {
		return r.trace, nil, fmt.Errorf("modelcheck: scenario %s did not finish in 1000 steps", s.Name)
	}
	return r.trace, r.v, nil
}

// scenarioRun is one scripted run: the world, the rules used, the packets
// held back and when each packet was sent.
type scenarioRun struct {
	c         *checker
	s         *Scenario
	w         *world
	used      []int
	held      map[*packet]bool
	born      map[uint32]sm.Time
	lastSeq   uint32
	acts      []action
	maxTimers int
	trace     []byte
	v         *Violation
}

// step applies a, records its trace and keeps the first violation.
func (r *scenarioRun) step(a action) error {
	c := r.c
	nw, err := c.apply(r.w, a)
	if err != nil {
		return err
	}
	r.trace = append(r.trace, c.rec...)
	r.acts = append(r.acts, a)
	if vs := c.check(r.w, nw); vs.any() && r.v == nil {
		steps, _ := c.replayFresh(r.s.Config, r.acts)
		r.v = &Violation{Invariant: vs.names[0], All: vs.names, Details: vs.details, Steps: steps, Trace: r.trace}
	}
	r.w = nw
	return nil
}

// applyRules applies the scenario's rules to the packets sent since the
// last step, in sending order; progressed reports a fault applied.
func (r *scenarioRun) applyRules() (progressed bool, err error) {
	for {
		var k *packet
		idx := -1
		for i, x := range r.w.net {
			if x.seq > r.lastSeq && (k == nil || x.seq < k.seq) {
				k, idx = x, i
			}
		}
		if k == nil {
			return progressed, nil
		}
		r.lastSeq = k.seq
		r.born[k.seq] = r.w.now
		for i := range r.s.rules {
			ru := &r.s.rules[i]
			if r.used[i] >= max(1, ru.count) || !ru.matches(k) {
				continue
			}
			r.used[i]++
			if ru.act == actHold {
				r.held[k] = true
				break
			}
			if err := r.step(action{kind: ru.act, idx: uint16(idx)}); err != nil {
				return false, err
			}
			// A trimmed or marked copy keeps the packet's seq: it is not
			// matched again.
			progressed = true
			break
		}
	}
}

// next picks the next step: deliver the oldest packet that has arrived
// and is not held back, else the oldest held one; else wait for the next
// arrival or fire the timers; ok is false when the run is over.
func (r *scenarioRun) next() (a action, ok bool) {
	w := r.w
	best := -1
	arrival := sm.Never
	for i, x := range w.net {
		at := r.born[x.seq] + r.s.latency
		if at > w.now {
			arrival = min(arrival, at)
			continue
		}
		if best < 0 || r.held[w.net[best]] && !r.held[x] || r.held[w.net[best]] == r.held[x] && x.seq < w.net[best].seq {
			best = i
		}
	}
	timersLeft := int(w.cnt.timers) < r.maxTimers
	switch {
	case best < 0 && arrival != sm.Never && arrival < deadline(w):
		return action{kind: actWait, dt: uint32(arrival - w.now)}, true
	case best < 0 && arrival != sm.Never && timersLeft:
		return action{kind: actTimer}, true
	case best >= 0:
		return action{kind: actDeliver, idx: uint16(best)}, true
	case deadline(w) != sm.Never && timersLeft && (!r.c.done(w) || recovering(w)):
		return action{kind: actTimer}, true
	}
	return action{}, false
}

// recovering reports whether A is in RTS with an EV still ASSUMED_BAD:
// scenarios run its probes until the EV is restored.
func recovering(w *world) bool {
	if w.qp[0].State() != sm.StateRTS {
		return false
	}
	for _, e := range w.qp[0].EVs(nil) {
		if e.State == sm.EVAssumedBad {
			return true
		}
	}
	return false
}

// replayFresh replays acts from a new initial world of cfg, for the
// readable steps of a violation found in a scenario.
func (c *checker) replayFresh(cfg Config, acts []action) ([][]string, error) {
	c2, err := newChecker(cfg)
	if err != nil {
		return nil, err
	}
	w0, err := c2.initial()
	if err != nil {
		return nil, err
	}
	steps, _ := c2.replay(w0, acts)
	return steps, nil
}
