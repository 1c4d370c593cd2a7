package scenario

import (
	"fmt"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	sm "github.com/openmrc/mrc/statemachine"
)

// run streams on connection 0→1 (or the connections conns makes) until
// end, calling act at time at.
func run(st setup, end, at Time, conns func(h *workload.Harness) error, act func(h *workload.Harness) error) (*workload.Harness, error) {
	h, err := st.harness()
	if err != nil {
		return nil, err
	}
	if conns == nil {
		conns = func(h *workload.Harness) error {
			_, err := h.Connect(0, 1, st.transport)
			return err
		}
	}
	if err := conns(h); err != nil {
		return nil, err
	}
	for _, c := range h.Conns() {
		if err := h.Stream(c.ID, wrSize, wrDepth, immN); err != nil {
			return nil, err
		}
	}
	var actErr error
	if act != nil {
		h.Sim.At(at, func() { actErr = act(h) })
	}
	h.Sim.Run(end)
	if actErr != nil {
		return nil, actErr
	}
	if v := h.Violations(); len(v) > 0 {
		return nil, fmt.Errorf("scenario: %v", v[0])
	}
	return h, flushErr(h)
}

// evObserver records path-state events of one EV of one QP, once armed
// (EV value 0 is a valid EV, so arming is a flag of its own).
type evObserver struct {
	armed    bool
	qpn, ev  uint32
	bad      Time // first move to ASSUMED_BAD; Never: none
	cause    sm.EVCause
	replaced bool
}

func (o *evObserver) arm(qpn, ev uint32) {
	*o = evObserver{armed: true, qpn: qpn, ev: ev, bad: sm.Never}
}

func (o *evObserver) Observe(now Time, id fabric.EndpointID, out *sm.Output) {
	for _, e := range out.Events {
		if !o.armed || e.QPN != o.qpn || e.EV != o.ev {
			continue
		}
		switch {
		case e.Kind == sm.EvEVState && sm.EVState(e.To) == sm.EVAssumedBad && o.bad == sm.Never:
			o.bad, o.cause = now, sm.EVCause(e.Reason)
		case e.Kind == sm.EvEVReplaced:
			o.replaced = true
		}
	}
}

// EVLoss is WP §5's 16-path test: 2 paths per plane × 8 planes, each QP
// with 2 active and 2 backup EVs per plane, and 20 % of the packets sent on
// one active EV dropped from 100 µs on. The EV must be retired
// (ASSUMED_BAD, EV-ST-5) and replaced by a backup of its plane (EV-REP-1),
// and goodput stay within 5 % of the lossless run. The RC baseline loses
// 20 % of the packets of the one QP whose path that EV is.
func EVLoss(seed uint64, o Options) (*Result, error) {
	const t0, end = 100 * us, 1200 * us
	prof := sm.EVProfile{ID: 1, ActivePerPlane: 2, MinActive: 8}
	for pl := 0; pl < 8; pl++ {
		for k := 0; k < 4; k++ {
			// The SRv6 template puts the plane in bits 13-11 and the T0
			// uplink in bits 7-0: EVs k and k+2 share path k%2.
			prof.EVs = append(prof.EVs, sm.EVEntry{Value: uint32(pl)<<11 | uint32(k), Port: uint8(pl + 1)})
		}
	}
	mut := func(op *workload.Options) { op.MRC.EVProfiles = []sm.EVProfile{prof} }
	base := setup{seed: seed, nodes: 2, planes: 8, paths: 2, mutate: mut}
	r := &Result{Name: "ev-loss", Title: "(a) 16 active EVs (2 per plane × 8 planes), 20 % drop on one",
		Claim: "EV immediately inactive, a backup EV activated, line rate maintained"}

	var lossy uint32
	obs := evObserver{bad: sm.Never}
	drop := func(h *workload.Harness) error {
		c := h.Conns()[0]
		if q := h.QP(c.Req[0]); q != nil {
			for _, e := range q.EVs(nil) {
				if e.Active {
					lossy = e.Value
					break
				}
			}
			obs.arm(q.QPN(), lossy)
		} else {
			lossy = h.RCQP(c.Req[0]).EV()
		}
		rule := fabric.NewRule()
		rule.Src, rule.MatchEV, rule.EV, rule.Drop = 0, true, lossy, 0.2
		_, err := h.Sim.AddRule(rule)
		return err
	}
	var out [2][2]float64 // transport × {lossless, lossy}
	var rcErr int
	for ti, tr := range []workload.Transport{workload.MRC, workload.RC} {
		st := base
		st.transport = tr
		h0, err := run(st, end, 0, nil, nil)
		if err != nil {
			return nil, err
		}
		out[ti][0] = rate(h0.Conns()[0], t0, end)
		if tr == workload.MRC {
			st.opts = o
		}
		st.mutate = func(op *workload.Options) {
			mut(op)
			op.AllowErrors = tr == workload.RC
		}
		lossy = 0
		h1, err := runObserved(st, end, t0, drop, &obs, tr == workload.MRC)
		if err != nil {
			return nil, err
		}
		c := h1.Conns()[0]
		out[ti][1] = rate(c, t0, end)
		if tr == workload.MRC {
			st, _ := h1.QP(c.Req[0]).EVStateOf(lossy)
			active := false
			for _, e := range h1.QP(c.Req[0]).EVs(nil) {
				if e.Value == lossy {
					active = e.Active
				}
			}
			r.set("ev_state", float64(st))
			r.check("the lossy EV is retired", st == sm.EVAssumedBad || !active)
			r.check("a backup EV replaced it", obs.replaced)
			r.check("no QP error", qpErrors(h1, c) == 0)
		} else {
			rcErr = qpErrors(h1, c)
		}
	}
	ratio, rcRatio := out[0][1]/out[0][0], out[1][1]/out[1][0]
	r.set("mrc_ratio", ratio)
	r.set("rc_ratio", rcRatio)
	r.set("mrc_gbps", out[0][1])
	r.set("rc_gbps", out[1][1])
	r.check("goodput ≥ 95 % of lossless", ratio >= 0.95)
	detect := "the EV stays GOOD and active (losses repaired from the SACK bitmap)"
	if obs.bad != sm.Never {
		how := "a timeout"
		if obs.cause == sm.CauseInferredLoss {
			how = "a loss inferred from the SACK bitmap (EV-SM-5)"
		}
		detect = fmt.Sprintf("the EV goes ASSUMED_BAD %.1f µs after the drop starts, on %s", float64(obs.bad-t0)/float64(us), how)
		if obs.replaced {
			detect += ", and a backup EV takes its place"
		}
	}
	r.MRC = fmt.Sprintf("%.0f Gb/s, %s of lossless; %s", out[0][1], pct(ratio), detect)
	r.RC = fmt.Sprintf("%.0f Gb/s, %s of lossless; the QP on that path goes back N on every loss", out[1][1], pct(rcRatio))
	if rcErr > 0 {
		r.RC += fmt.Sprintf(" and fails (%d QP errors)", rcErr)
	}
	return r, nil
}

// runObserved is run with an observer attached (for MRC runs) before the
// first step.
func runObserved(st setup, end, at Time, act func(h *workload.Harness) error, ob fabric.Observer, attach bool) (*workload.Harness, error) {
	conns := func(h *workload.Harness) error {
		if attach {
			h.Sim.Observe(ob)
		}
		_, err := h.Connect(0, 1, st.transport)
		return err
	}
	return run(st, end, at, conns, act)
}

// failover runs a failure at tf on the default fabric for both transports
// and measures goodput before, after, and how long it took to recover.
type failover struct {
	pre, post float64
	rec       Time
	errs      int
}

// failoverBoth runs the failure with MRC (under o) and with the RC
// baseline (default options).
func failoverBoth(seed uint64, o Options, fail func(h *workload.Harness) error) (m, b failover, err error) {
	if m, err = runFailover(seed, o, workload.MRC, fail); err != nil {
		return m, b, err
	}
	b, err = runFailover(seed, Options{}, workload.RC, fail)
	return m, b, err
}

func runFailover(seed uint64, o Options, tr workload.Transport, fail func(h *workload.Harness) error) (failover, error) {
	const tf, end = 400 * us, 1500 * us
	st := setup{seed: seed, nodes: 2, planes: 8, paths: 4, transport: tr,
		mutate: func(op *workload.Options) { op.AllowErrors = tr == workload.RC }}
	if tr == workload.MRC {
		st.opts = o
	}
	h, err := run(st, end, tf, nil, fail)
	if err != nil {
		return failover{}, err
	}
	c := h.Conns()[0]
	f := failover{pre: rate(c, 100*us, tf), post: rate(c, end-500*us, end), errs: qpErrors(h, c)}
	f.rec = recovery(c, tf, end, 50*us, f.pre, 0.9)
	return f, nil
}

// T1Down is WP §3's T1 failure: T1 switch 0 of every plane stops
// forwarding without any signal, blackholing a quarter of all paths. MRC
// must keep every QP, retire the EVs through those switches on their first
// timeouts (EV-ST-5) and recover its throughput within a few base timeouts.
// RC QPs whose path crosses a dead switch go back N into the blackhole
// until their retry budget runs out.
func T1Down(seed uint64, o Options) (*Result, error) {
	r := &Result{Name: "t1-down", Title: "(b) T1 switch stops forwarding (¼ of paths blackholed)",
		Claim: "~¼ of QPs affected, ~580K packets dropped, throughput largely unaffected after remap; no QP failure"}
	fail := func(h *workload.Harness) error {
		for pl := 0; pl < h.Sim.Config().Planes; pl++ {
			if err := h.Sim.SetT1Up(pl, 0, false); err != nil {
				return err
			}
		}
		return nil
	}
	m, b, err := failoverBoth(seed, o, fail)
	if err != nil {
		return nil, err
	}
	r.set("mrc_recovery_us", float64(m.rec/us))
	r.set("mrc_post_ratio", m.post/m.pre)
	r.set("rc_post_ratio", b.post/b.pre)
	r.set("rc_errors", float64(b.errs))
	r.check("no QP error", m.errs == 0)
	r.check("recovers to 90 % within 500 µs", m.rec <= 500*us)
	r.check("settles ≥ 90 % of before", m.post >= 0.9*m.pre)
	rec := "back to 90 % in " + micro(m.rec)
	if m.rec == sm.Never {
		rec = "does not recover within the run"
	}
	r.MRC = fmt.Sprintf("no QP error; %s: %s of the pre-failure %.0f Gb/s at the end", rec, pct(m.post/m.pre), m.pre)
	r.RC = fmt.Sprintf("%d of 8 QPs fail (retry exceeded); %s of the pre-failure goodput at the end", b.errs, pct(b.post/b.pre))
	return r, nil
}

// PlaneDown is WP §3's port failure: every node's port on plane 0 goes
// down. NICs notice after 1 µs and tell their peers 20 µs later
// (EV-PORT-1, EV-PORT-2); MRC moves all traffic to the 7 other planes and
// settles near 7/8 of line rate with no QP error. RC QPs bound to the
// plane have nowhere to go.
func PlaneDown(seed uint64, o Options) (*Result, error) {
	r := &Result{Name: "plane-down", Title: "(c) one plane down",
		Claim: "job continues at 7/8 of the bandwidth (8 planes); no QP failure"}
	fail := func(h *workload.Harness) error { return h.Sim.SetPlaneUp(0, false) }
	m, b, err := failoverBoth(seed, o, fail)
	if err != nil {
		return nil, err
	}
	ratio := m.post / m.pre
	r.set("mrc_post_ratio", ratio)
	r.set("rc_post_ratio", b.post/b.pre)
	r.set("rc_errors", float64(b.errs))
	r.check("no QP error", m.errs == 0)
	r.check("settles at 7/8 ± 5 %", ratio >= 0.875-0.05 && ratio <= 0.875+0.05)
	r.MRC = fmt.Sprintf("no QP error; settles at %s of before (%.0f Gb/s), 7/8 = 88 %%", pct(ratio), m.post)
	r.RC = fmt.Sprintf("%d of 8 QPs fails (the one on that plane); %s of before", b.errs, pct(b.post/b.pre))
	return r, nil
}

// Incast is WP §5's 7→1 incast with a victim: nodes 0-6 write to node 8
// while node 7 writes to node 9, which shares node 8's T0, so the victim's
// packets cross the same T1→T0 links as the incast's. Trimming at the last
// hop (TRIMMED_LASTHOP, which does not penalise the EV, EV-ST-3) and NSCC
// hold the incast to the receiver's rate, so the victim keeps its
// throughput.
func Incast(seed uint64, o Options) (*Result, error) {
	const t0, end = 300 * us, 1500 * us
	r := &Result{Name: "incast", Title: "(d) 7→1 incast with a victim flow",
		Claim: "MRC: no victim impact; RoCE+DCQCN: victim −25 % (1 QP) to −75 %"}
	victimOnly := func(tr workload.Transport) func(h *workload.Harness) error {
		return func(h *workload.Harness) error {
			_, err := h.Connect(7, 9, tr)
			return err
		}
	}
	withIncast := func(tr workload.Transport) func(h *workload.Harness) error {
		return func(h *workload.Harness) error {
			if _, err := h.Connect(7, 9, tr); err != nil {
				return err
			}
			for n := 0; n < 7; n++ {
				if _, err := h.Connect(n, 8, tr); err != nil {
					return err
				}
			}
			return nil
		}
	}
	type res struct{ solo, victim, incast float64 }
	var got [2]res
	var trimmed [2]uint64
	for ti, tr := range []workload.Transport{workload.MRC, workload.RC} {
		st := setup{seed: seed, nodes: 10, perT0: 2, planes: 8, paths: 4, transport: tr,
			mutate: func(op *workload.Options) { op.AllowErrors = tr == workload.RC }}
		h, err := run(st, end, 0, victimOnly(tr), nil)
		if err != nil {
			return nil, err
		}
		got[ti].solo = rate(h.Conns()[0], t0, end)
		if tr == workload.MRC {
			st.opts = o
		}
		h, err = run(st, end, 0, withIncast(tr), nil)
		if err != nil {
			return nil, err
		}
		got[ti].victim = rate(h.Conns()[0], t0, end)
		for _, c := range h.Conns()[1:] {
			got[ti].incast += rate(c, t0, end)
		}
		trimmed[ti] = h.Sim.Stats().TrimmedLastHop
		if tr == workload.MRC {
			for _, c := range h.Conns() {
				if qpErrors(h, c) > 0 {
					r.check("no QP error", false)
				}
			}
		}
	}
	m, b := got[0], got[1]
	r.set("mrc_victim_ratio", m.victim/m.solo)
	r.set("rc_victim_ratio", b.victim/b.solo)
	r.set("mrc_incast_gbps", m.incast)
	r.set("rc_incast_gbps", b.incast)
	r.set("mrc_trimmed_lasthop", float64(trimmed[0]))
	r.check("victim keeps ≥ 90 % of its solo throughput", m.victim >= 0.9*m.solo)
	r.check("the incast is trimmed at the last hop", trimmed[0] > 0)
	r.MRC = fmt.Sprintf("victim %s of solo (%.0f Gb/s); incast %.0f Gb/s into an 800G NIC; %d last-hop trims",
		pct(m.victim/m.solo), m.victim, m.incast, trimmed[0])
	r.RC = fmt.Sprintf("victim %s of solo (%.0f Gb/s); incast %.0f Gb/s", pct(b.victim/b.solo), b.victim, b.incast)
	return r, nil
}

// RandomLoss drops 0.1 % and 1 % of all packets, both directions, on every
// path, and compares goodput with the lossless run of the same transport.
// MRC recovers each loss selectively (LR-RTX-1); go-back-N resends a
// window per loss.
func RandomLoss(seed uint64, o Options) (*Result, error) {
	const t0, end = 100 * us, 1200 * us
	r := &Result{Name: "loss", Title: "(e) random loss 0.1 % / 1 % on every path",
		Claim: "0.1 %: little impact on MRC; 1 %: MRC ≈ ⅓ of line rate, RoCE unusable"}
	var g [2][3]float64 // transport × {0, 0.1 %, 1 %}
	for ti, tr := range []workload.Transport{workload.MRC, workload.RC} {
		for li, p := range []float64{0, 0.001, 0.01} {
			st := setup{seed: seed, nodes: 2, planes: 8, paths: 4, transport: tr,
				mutate: func(op *workload.Options) { op.AllowErrors = tr == workload.RC }}
			if tr == workload.MRC && li == 2 {
				st.opts = o
			}
			loss := func(h *workload.Harness) error {
				if p == 0 {
					return nil
				}
				rule := fabric.NewRule()
				rule.Drop = p
				_, err := h.Sim.AddRule(rule)
				return err
			}
			h, err := run(st, end, 0, nil, loss)
			if err != nil {
				return nil, err
			}
			g[ti][li] = rate(h.Conns()[0], t0, end)
		}
	}
	line := g[0][0]
	for ti, name := range []string{"mrc", "rc"} {
		r.set(name+"_lossless_gbps", g[ti][0])
		r.set(name+"_0.1_ratio", g[ti][1]/g[ti][0])
		r.set(name+"_1_ratio", g[ti][2]/g[ti][0])
	}
	r.check("0.1 %: ≥ 90 % of lossless", g[0][1] >= 0.9*g[0][0])
	r.check("1 %: ≥ ⅓ of line rate", g[0][2] >= line/3)
	r.check("MRC beats RC at 1 %", g[0][2] > g[1][2])
	r.MRC = fmt.Sprintf("0.1 %%: %.0f Gb/s (%s); 1 %%: %.0f Gb/s (%s of lossless)", g[0][1], pct(g[0][1]/g[0][0]),
		g[0][2], pct(g[0][2]/g[0][0]))
	r.RC = fmt.Sprintf("0.1 %%: %.0f Gb/s (%s); 1 %%: %.0f Gb/s (%s)", g[1][1], pct(g[1][1]/g[1][0]),
		g[1][2], pct(g[1][2]/g[1][0]))
	return r, nil
}
