package modelcheck

import (
	"testing"
	"time"
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
