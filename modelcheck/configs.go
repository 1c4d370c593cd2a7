package modelcheck

import "slices"

// The configurations the tests explore. Each states its bounds; together
// the default ones run in well under a minute on two cores. Larger ones run
// with MRC_MC_LARGE=1.

// base is one plane with EVs 0x100 and 0x101 (both active), A posting a
// 2-packet WRITE and a 1-packet WRITE_WITH_IMM (PSNs 0-2), MPR window 2
// PSNs, retry budget 2 (linear_cnt 2, exp_cnt 0), max_wimm 1,
// max_wimm_dest 1, ev_min_active 1, one good probe restores an EV, base
// timeout 1.024 µs: the TLA+ model's MRC_small shape.
func base(name string) Config {
	return Config{Name: name, Planes: 1, EVsPerPlane: 2, Msgs: [2][]Msg{{{Packets: 2}, {Packets: 1, Imm: true}}}, MPR: 2,
		LinearCnt: 2, ExpCnt: 0, MaxWIMM: 1, MaxWIMMDest: 1, MinActive: 1, ProbeSuccesses: 1, SilentTimeouts: true}
}

// Configurations returns the configurations the default test run checks.
func Configurations() []Config {
	return slices.Concat(networkConfigs(), controlConfigs(), responderConfigs(), recoveryConfigs())
}

// networkConfigs are the configurations of network faults: reordering, loss, trims, CE marks, duplicates, path failures.
func networkConfigs() []Config {
	var cs []Config
	add := func(c Config) { cs = append(cs, c) }

	// Reordering and spurious timeouts: no network fault, but one timer
	// firing at any moment, packets still in flight (the network may delay
	// beyond any timeout).
	c := base("reorder-spurious-timeout")
	c.SilentTimeouts = false
	c.Bounds = Bounds{Timers: 1}
	add(c)

	c = base("loss")
	c.Bounds = Bounds{Drops: 1, Timers: 2}
	add(c)

	c = base("trim")
	c.Bounds = Bounds{Trims: 1, Timers: 2}
	add(c)

	c = base("ecn-always-skip")
	c.AlwaysSkipAfter = 1
	c.Bounds = Bounds{CEs: 1, Timers: 1}
	add(c)

	c = base("ecn-skip-once")
	c.Bounds = Bounds{CEs: 1, Timers: 2}
	add(c)

	c = base("duplicate")
	c.Bounds = Bounds{Dups: 1, Timers: 2}
	add(c)

	// A path fails for good; with a retry budget of 0 the first retry
	// fails the QP (LR-TMR-7, CMP-ERR-1).
	c = base("pathfail-retry-exhausted")
	c.LinearCnt = 0
	c.FailableEVs = []uint32{0x101}
	c.Bounds = Bounds{PathFails: 1, Timers: 3}
	add(c)

	// Both QPs send a WriteIMM: requester and responder halves interleave.
	c = base("bidirectional")
	c.Msgs = [2][]Msg{{{Packets: 1, Imm: true}}, {{Packets: 1, Imm: true}}}
	c.SilentTimeouts = false
	c.Bounds = Bounds{Drops: 1, Timers: 1}
	add(c)
	return cs
}

// controlConfigs are the configurations of the control plane and the requester's options: ports, the controller, backup EVs, windows, resource conditions, dynamic MPR, modify.
func controlConfigs() []Config {
	var cs []Config
	add := func(c Config) { cs = append(cs, c) }

	// Two planes of one EV each; a plane goes down and comes back.
	c := base("port-flap")
	c.Planes, c.EVsPerPlane = 2, 1
	c.Bounds = Bounds{PortFlaps: 2, Timers: 1}
	add(c)

	c = base("controller")
	c.Bounds = Bounds{Controller: 1, Timers: 1}
	add(c)

	// One active EV and one backup: a timeout replaces the active EV
	// from the backup set (EV-REP-1).
	c = base("backup-replacement")
	c.EVsPerPlane, c.BackupsPerPlane = 1, 1
	c.MinActive = 0
	c.Bounds = Bounds{Drops: 1, Timers: 2}
	add(c)

	// MPR window of one PSN and three WRs: the window and max_wimm hold
	// traffic back (MPR-WIN-1, WIMM-REQ-1).
	c = base("window-1")
	c.MPR = 1
	c.Msgs[0] = []Msg{{Packets: 1, Imm: true}, {Packets: 1}, {Packets: 1, Imm: true}}
	c.MaxWIMMDest = 2
	c.Bounds = Bounds{Trims: 1, Timers: 2}
	add(c)

	// The responder runs short of tracking state, buffers or another
	// resource once: resource NACKs, a hold-off, retries (RSP-NACK-3,
	// LR-NACK-2).
	c = base("resource-nack")
	c.Bounds = Bounds{Resource: 1, Timers: 1}
	add(c)

	// The responder shrinks its window with dynamic MPR: PSNs beyond it
	// are NACKed PSN_OOR_WINDOW and the requester follows the advertised
	// window (MPR-DYN-2, MPR-DYN-3, RSP-NACK-4, LR-NACK-3).
	c = base("dynamic-mpr")
	c.DynamicMPR = true
	c.Bounds = Bounds{DynMPR: 1, Timers: 1}
	add(c)

	// The application moves a QP to ERROR at any point: flush
	// completions, later posts complete at once (QP-ST-10, CMP-ERR-1).
	c = base("modify-to-error")
	c.Bounds = Bounds{Modify: 1, Timers: 1}
	add(c)
	return cs
}

// responderConfigs are the configurations of the responder's error paths and options, and congestion control.
func responderConfigs() []Config {
	var cs []Config
	add := func(c Config) { cs = append(cs, c) }

	// Error paths of the responder: no receive WR for a WriteIMM
	// (WIMM-RSP-3, RSP-NACK-5, LR-NACK-4), more WriteIMMs than
	// max_wimm_dest (WIMM-RSP-4), a write outside registered memory
	// (RSP-RCV-2, CMP-ERR-2), and an unsignaled WR (CMP-SND-3).
	c := base("no-receive-wr")
	c.RecvWRs = -1
	c.Bounds = Bounds{Timers: 1}
	add(c)

	c = base("wimm-dest-overflow")
	c.Msgs[0] = []Msg{{Packets: 1, Imm: true}, {Packets: 1, Imm: true}}
	c.MaxWIMM = 2
	c.Bounds = Bounds{Drops: 1, Timers: 1}
	add(c)

	c = base("bad-address-unsignaled")
	c.Msgs[0] = []Msg{{Packets: 1, Unsignaled: true}, {Packets: 1, BadAddress: true}, {Packets: 1, Imm: true}}
	c.Bounds = Bounds{Timers: 1}
	add(c)

	// Congestion control on (NSCC, max_cwnd two packets): the window and
	// cwnd both hold traffic back; a trim shrinks cwnd (CC-NSCC-6).
	c = base("nscc")
	c.NSCC = true
	c.Bounds = Bounds{Trims: 1, Timers: 1, Ticks: 1}
	add(c)

	// With congestion control, resource NACKs wait base_rtt (LR-NACK-2).
	c = base("nscc-resource")
	c.NSCC = true
	c.Bounds = Bounds{Resource: 1, Timers: 1}
	add(c)

	// Loss inferred from the SACK bitmap with reorder_guard 1 (LR-RTX-4)
	// and an MPR window of 3 PSNs.
	c = base("reorder-guard-1")
	c.MPR = 3
	c.ReorderThreshold = 1
	c.Bounds = Bounds{Drops: 1, Timers: 1}
	add(c)

	// A responder that cannot NACK trims: the requester sends data as
	// DSCP_NO_TRIM, so the network cannot trim it (RSP-NACK-2, WIRE-DSCP-5).
	c = base("no-trim-nack")
	c.NoTrimNACK = true
	c.Bounds = Bounds{Trims: 1, CEs: 1, NetFaults: 1, Timers: 1}
	add(c)
	return cs
}

// recoveryConfigs are the configurations of the stall timer, coalesced SACKs, RTO backoff, PSN wrap-around, the adversarial requester and the shared EV profile.
func recoveryConfigs() []Config {
	var cs []Config
	add := func(c Config) { cs = append(cs, c) }

	// A stall that would deadlock: EV 0x100 black-holes while the
	// controller DENIES 0x101; 0x100 cannot become ASSUMED_BAD
	// (ev_min_active 1, EV-SET-6), so the timed-out PSNs must avoid the only
	// GOOD EV (EV-ST-13). The stall timer spends the retry budget (1 here)
	// and the QP fails instead of hanging (LR-SM-3, LR-TMR-7).
	c := base("stall-deadlock")
	c.PostUpfront = true
	c.LinearCnt = 1
	c.FailableEVs = []uint32{0x100}
	c.Bounds = Bounds{Controller: 1, PathFails: 1, Timers: 2}
	add(c)

	// A stall that would livelock: both paths black-hole; one EV is
	// retired, the floor keeps the other GOOD, and the lost PSN must avoid
	// it. Only probes on the dead EV would go out, forever; the stall timer
	// spends the retries instead (LR-SM-3, LR-TMR-6, LR-TMR-7).
	c = base("stall-livelock")
	c.Bounds = Bounds{PathFails: 2, Timers: 3}
	add(c)

	// Coalesced SACKs (ack_coalesce 2, RSP-SACK-5) and timestamps in
	// every data packet (REQ-HDR-1, CC-SIG-1).
	c = base("coalesce-timestamps")
	c.Coalesce = 2
	c.Timestamps = true
	c.Bounds = Bounds{Drops: 1, Timers: 2}
	add(c)

	// RTO backoff: retries beyond linear_cnt (0 here) double the RTO
	// (LR-TMR-4); two losses of one WRITE make its retransmission time
	// out again, after 2T.
	c = rtoBackoff("rto-backoff")
	add(c)

	// PSN wrap-around: the first PSN is 2^24 − 2, so the WRITE's PSNs are
	// 0xFFFFFE and 0xFFFFFF and the WriteIMM's is 0 (WIRE-BTH-4, RSP-RCV-5,
	// RSP-RCV-6: every comparison modulo 2^24).
	c = base("psn-wrap")
	c.StartPSN = 1<<24 - 2
	c.Bounds = Bounds{Drops: 1, Timers: 2}
	add(c)

	// B's responder on its own: an adversarial requester sends any of
	// PSNs 0-3 (three WRITEs and a WriteIMM), in any order, duplicated, in
	// and out of B's window of 2 PSNs (RSP-RCV-6, RSP-NACK-4, RSP-DUP-1).
	c = adversary("adversarial-requester")
	c.Bounds = Bounds{Injects: 4, Timers: 1}
	add(c)

	// The adversary also resends each PSN (rtx flag, retransmit class, on
	// the other EV) and sends PSN 0's packet under PSNs of no WR: the one
	// before the first, one aliasing PSN 1 in the tracking ring far beyond
	// the window, and one half the PSN space from the initial cumulative
	// ACK (RSP-RCV-6, RSP-DUP-2, RSP-DUP-3, RSP-NACK-4).
	c = adversary("adversarial-requester-hostile")
	c.AdversaryMoves = AdvResend | AdvForge
	c.Bounds = Bounds{Injects: 3, Timers: 1}
	add(c)

	// The adversary also sends trimmed packets of its own (mid-fabric and
	// last hop) and CE-marked ones: new, duplicate or out of the window as
	// B's state makes them (RSP-NACK-1, RSP-DUP-2, RSP-SM-3, RSP-SACK-3).
	c = adversary("adversarial-requester-trim-ce")
	c.AdversaryMoves = AdvTrim | AdvCE
	c.Bounds = Bounds{Injects: 3, Timers: 1}
	add(c)

	// The adversary sends the WriteIMM under PSNs of no WR, under an RQMSN
	// not its own, and the WRITE before it as a WriteIMM with the
	// WriteIMM's RQMSN; a window of 4 PSNs takes every PSN of A's WRs at
	// once (WIMM-SM-1, WIMM-RSP-1, WIMM-RSP-2, WIMM-RSP-4).
	c = adversary("adversarial-requester-wimm")
	c.AdversaryMoves = AdvForgeIMM
	c.MPR, c.MaxWIMMDest = 4, 2
	c.Bounds = Bounds{Injects: 3, Timers: 1}
	add(c)

	// Two QPs on one EV profile: both ends on one Node (SharedNode), each
	// sending a WriteIMM; one profile-wide MODIFY_EV_STATE reaches both
	// QPs, each keeping its own path state (EV-ST-11, EV-ST-14).
	c = sharedProfile("shared-profile")
	c.Bounds = Bounds{Controller: 1, Timers: 1}
	add(c)
	return cs
}

// adversary is base with A's requester replaced by the adversary of
// Config.Adversary, sending any of PSNs 0-3: WRITEs of one packet, then a
// WriteIMM.
func adversary(name string) Config {
	c := base(name)
	c.Adversary = true
	c.Msgs[0] = []Msg{{Packets: 1}, {Packets: 1}, {Packets: 1}, {Packets: 1, Imm: true}}
	return c
}

// LargeConfigurations returns the configurations checked with
// MRC_MC_LARGE=1: more faults and timer firings.
func LargeConfigurations() []Config {
	var cs []Config
	add := func(c Config) { cs = append(cs, c) }

	c := base("any-one-fault")
	c.FailableEVs = []uint32{0x101}
	c.Bounds = Bounds{Drops: 1, Dups: 1, Trims: 1, CEs: 1, NetFaults: 1, PathFails: 1, Timers: 2}
	add(c)

	// Its state space is beyond the default limit of 4 000 000 distinct
	// states (modelcheck/README: its size, time and memory).
	c = base("reorder-spurious-timeout-2")
	c.SilentTimeouts = false
	c.Bounds = Bounds{Timers: 2}
	c.MaxDistinct = 8_000_000
	add(c)

	c = base("loss-3-timers")
	c.Bounds = Bounds{Drops: 1, Timers: 3}
	add(c)

	c = base("two-faults")
	c.Bounds = Bounds{Drops: 1, Trims: 1, CEs: 1, Dups: 1, NetFaults: 2, Timers: 2}
	add(c)

	c = base("pathfail-trim-retry-1")
	c.LinearCnt = 1
	c.FailableEVs = []uint32{0x101}
	c.Bounds = Bounds{PathFails: 1, Trims: 1, Timers: 3}
	add(c)

	// The responder's host backpressure: rcv_cwnd_pen and the restore
	// flag in its SACKs (CC-RSP-3), with resource NACKs.
	c = base("nscc-penalty-resource")
	c.NSCC = true
	c.Bounds = Bounds{Penalty: 2, Resource: 1, Timers: 1}
	add(c)

	// A loss makes an EV ASSUMED_BAD; a CE-marked probe answer moves it
	// to SKIP (EV-ST-8).
	c = base("loss-ce-probe")
	c.Bounds = Bounds{Drops: 1, CEs: 1, Timers: 2}
	add(c)

	c = base("three-evs")
	c.EVsPerPlane = 3
	c.FailableEVs = []uint32{0x102}
	c.Bounds = Bounds{Drops: 1, Trims: 1, NetFaults: 1, PathFails: 1, Timers: 2}
	add(c)

	// The backup pool (EV-REP-1): one active EV and two backups; the
	// active one and then its replacement may fail for good.
	c = base("backup-pool")
	c.EVsPerPlane, c.BackupsPerPlane = 1, 2
	c.MinActive = 0
	c.LinearCnt = 3
	c.Bounds = Bounds{PathFails: 2, Timers: 3}
	add(c)

	// Traffic both ways with a loss each way possible and two timers.
	c = base("bidirectional-2")
	c.Msgs = [2][]Msg{{{Packets: 1}, {Packets: 1, Imm: true}}, {{Packets: 1, Imm: true}}}
	c.Bounds = Bounds{Drops: 1, Trims: 1, NetFaults: 1, Timers: 2}
	add(c)

	// shared-profile with a loss either way possible.
	c = sharedProfile("shared-profile-loss")
	c.Bounds = Bounds{Drops: 1, Controller: 1, Timers: 1}
	add(c)

	// adversarial-requester-hostile with 4 injections.
	c = adversary("adversarial-requester-hostile-4")
	c.AdversaryMoves = AdvResend | AdvForge
	c.Bounds = Bounds{Injects: 4, Timers: 1}
	add(c)

	c = adversary("adversarial-requester-5")
	c.Bounds = Bounds{Injects: 5, Timers: 1}
	add(c)
	return cs
}

// sharedProfile is base with both QPs on one Node sharing its EV profile
// (Config.SharedNode), each posting a 1-packet WriteIMM.
func sharedProfile(name string) Config {
	c := base(name)
	c.SharedNode = true
	c.Msgs = [2][]Msg{{{Packets: 1, Imm: true}}, {{Packets: 1, Imm: true}}}
	return c
}

// rtoBackoff: one 1-packet WRITE, retry budget linear_cnt 0 + exp_cnt 3,
// two drops, three timer firings.
func rtoBackoff(name string) Config {
	c := base(name)
	c.Msgs[0] = []Msg{{Packets: 1}}
	c.LinearCnt, c.ExpCnt = 0, 3
	c.Bounds = Bounds{Drops: 2, Timers: 3}
	return c
}
