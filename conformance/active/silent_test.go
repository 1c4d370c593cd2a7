package active

import (
	"context"
	"strings"
	"testing"
)

// TestSilentIUTNoPanic: against an IUT none of whose frames arrive (the
// simulated fabric drops them all), no case panics; each ends with a
// verdict that says what was missing (issue 14: reqStaleNACK indexed the
// data it never got). IPv6, so that every case applies.
func TestSilentIUTNoPanic(t *testing.T) {
	tgt, err := NewInproc(InprocConfig{Seed: 1, Loss: 100, IPv6: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), tgt, Options{Seed: 1, Today: today})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if strings.Contains(r.Reason, "panic") {
			t.Errorf("%s: %s: %.300s", r.Case.ID, r.Verdict, r.Reason)
		}
	}
}
