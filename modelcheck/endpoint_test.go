package modelcheck

import (
	"testing"
	"time"

	sm "github.com/openmrc/mrc/statemachine"
)

// TestEndpointConfigurations explores the endpoint agent (QP 0x2): every
// request is answered once by the peer with its id and op (EP-GEN-5), ends
// in exactly one response or timeout (EP-GEN-7, EP-GEN-8), responses match
// answered requests with the reflected RTT (EP-PRB-1, EP-PRB-2), timeouts
// wait for the request timeout, and a port status update reports the
// sender's whole mask (EP-PSU-2).
func TestEndpointConfigurations(t *testing.T) {
	for _, cfg := range EndpointConfigurations() {
		t.Run(cfg.Name, func(t *testing.T) {
			r, err := CheckEndpoint(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d states, %d distinct, depth %d, %d terminal, %d rejected, %v", cfg.Name, r.States, r.Distinct, r.Depth,
				r.Terminal, r.Rejected, r.Elapsed.Round(time.Millisecond))
			if r.Violation != nil {
				t.Fatalf("invariant violated:\n%s", r.Violation)
			}
			if r.Terminal == 0 {
				t.Error("no terminal state: EPProgress was never checked")
			}
		})
	}
}

// TestEPAnnounceCatchesFastRepeat: the EPAnnounce check fails when the
// endpoint repeats its port status update sooner than the check demands
// (here the check wants 2 ms, the endpoint repeats every 1 ms): the
// shortest counterexample is announce, timer (the request times out while
// the update is still in flight), timer (the repeat).
func TestEPAnnounceCatchesFastRepeat(t *testing.T) {
	cfg := EndpointConfig{Name: "ep-announce-strict", Announce: []uint32{0b110}, Drops: 1, Timers: 3, minRepeat: 2 * sm.Millisecond}
	r, err := CheckEndpoint(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil || r.Violation.Invariant != InvEPAnnounce {
		t.Fatalf("no EPAnnounce violation: %v", r)
	}
	t.Logf("%v", r.Violation)
}
