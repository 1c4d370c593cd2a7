package active

import (
	"context"
	"slices"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/statemachine"
)

// TestEVRetiredAgainByEarlierLoss replays, in synthetic time, what made
// MRC-EV-BAD-101 fail EV-ST-7 in TestE2EAFPacket/ipv6 on a loaded
// machine. The real-time profile (RealTiming) gives the IUT a base
// timeout (67 ms) shorter than its probe interval (80 ms). A data packet
// the IUT sent on an EV while it was GOOD is lost before the tester's
// tap; the EV is retired by another loss, probed, and restored by a
// prompt answer; then the lost packet's timer expires and retires the EV
// again, as EV-ST-5 requires of a GOOD EV, and the next probe round
// probes it. On the wire that is a probe one interval after a prompt
// answer with no data seen on the EV in between, which the case took for
// an ignored answer twice in these seeds (4 of 3000 seeds at 10 % loss).
// The tester cannot see which EV a lost packet took, so a retransmission
// between the answer and the probe of a PSN it never saw before excuses
// the probe.
func TestEVRetiredAgainByEarlierLoss(t *testing.T) {
	for _, seed := range []uint64{496, 783, 968, 2404} {
		var tr reretireTrace
		tgt, err := NewInproc(InprocConfig{Seed: seed, Loss: 10, IPv6: true, Delay: 100 * statemachine.Microsecond, Trace: tr.event})
		if err != nil {
			t.Fatal(err)
		}
		tim := RealTiming(20 * statemachine.Millisecond)
		rep, err := Run(context.Background(), tgt, Options{Seed: seed, Today: today, Timing: &tim, Cases: "MRC-EV-BAD-101"})
		if err != nil {
			t.Fatal(err)
		}
		// The run must hold the situation, or the test tests nothing.
		if tr.again == 0 {
			t.Errorf("seed %d: no probe-restored EV was retired again by the timeout of a packet sent on it before the restore", seed)
		}
		r, _ := rep.Result("MRC-EV-BAD-101")
		if r.Verdict != conformance.Pass {
			t.Errorf("seed %d: MRC-EV-BAD-101 %s: %s", seed, r.Verdict, r.Reason)
			for _, f := range r.Findings {
				t.Logf("    %s %s frame %d: expected %s; observed %s", f.Verdict, f.Requirement, f.Frame, f.Expected, f.Observed)
			}
		}
	}
}

// reretireTrace follows the EV MRC-EV-BAD-101 retires in the peer's
// events and counts the times a timeout of a packet sent on it before a
// probe answer restored it retires it again.
type reretireTrace struct {
	qpn, ev    uint32
	restoredAt statemachine.Time
	good       bool                         // restored by a probe answer and not retired since
	sentAt     map[uint32]statemachine.Time // the EV's data packets by PSN: when last sent on it
	again      int
}

func (tr *reretireTrace) event(e statemachine.Event) {
	switch {
	case tr.sentAt == nil:
		if e.Kind == statemachine.EvEVState && e.Reason == uint8(statemachine.CauseAlwaysSkip) {
			tr.qpn, tr.ev, tr.sentAt = e.QPN, e.EV, map[uint32]statemachine.Time{}
		}
	case e.QPN != tr.qpn || e.EV != tr.ev:
	case e.Kind == statemachine.EvPacketSent:
		tr.sentAt[e.PSN] = e.Time
	case e.Kind == statemachine.EvEVState:
		tr.good = e.Reason == uint8(statemachine.CauseProbeOK)
		if tr.good {
			tr.restoredAt = e.Time
		}
	case e.Kind == statemachine.EvTimeout && tr.good:
		if at, ok := tr.sentAt[e.PSN]; ok && at < tr.restoredAt {
			tr.again++
		}
	}
}

// TestNoRestoreFailsDespiteLoss runs MRC-EV-BAD-101 as
// TestEVRetiredAgainByEarlierLoss does against a peer seeded with
// no-restore, which never returns a probed EV to GOOD: the losses that
// excuse a probe after a prompt answer must not excuse them all, or the
// case would pass a peer that ignores every answer whenever the link
// loses packets (EV-ST-7).
func TestNoRestoreFailsDespiteLoss(t *testing.T) {
	fs, err := peer.ParseFaults("no-restore")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		tgt, err := NewInproc(InprocConfig{Seed: seed, Loss: 10, IPv6: true, Delay: 100 * statemachine.Microsecond, Faults: fs})
		if err != nil {
			t.Fatal(err)
		}
		tim := RealTiming(20 * statemachine.Millisecond)
		rep, err := Run(context.Background(), tgt, Options{Seed: seed, Today: today, Timing: &tim, Cases: "MRC-EV-BAD-101"})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := rep.Result("MRC-EV-BAD-101")
		if r.Verdict != conformance.Fail || !slices.ContainsFunc(r.Findings, func(f conformance.Finding) bool { return f.Requirement == "EV-ST-7" }) {
			t.Errorf("seed %d: MRC-EV-BAD-101 %s (%s), want FAIL with EV-ST-7", seed, r.Verdict, r.Reason)
		}
	}
}
