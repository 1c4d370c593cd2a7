package modelcheck

import (
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// TestSharedProfileReachesBoth: on a shared Node the controller's
// MODIFY_EV_STATE is one operation on the EV profile and changes the EV in
// both QPs, each reporting its own EVState event (EV-ST-11, EV-ST-14); on
// separate Nodes the same action changes only the QP it names.
func TestSharedProfileReachesBoth(t *testing.T) {
	for _, shared := range []bool{true, false} {
		cfg := sharedProfile("shared")
		cfg.SharedNode = shared
		cfg.Bounds = Bounds{Controller: 1}
		c, err := newChecker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.initial()
		if err != nil {
			t.Fatal(err)
		}
		nw, err := c.apply(w, action{kind: actCtl, side: 0, idx: 0, arg: uint8(sm.EVDenied)})
		if err != nil {
			t.Fatal(err)
		}
		if v := c.check(w, nw); v.any() {
			t.Fatalf("shared=%v: %v", shared, v.details)
		}
		for s := range 2 {
			st, _ := nw.qp[s].EVStateOf(c.evs[0])
			want := sm.EVDenied
			if !shared && s == 1 {
				want = sm.EVGood
			}
			if st != want {
				t.Errorf("shared=%v: %s's EV %#x is %s, want %s", shared, side[s], c.evs[0], st, want)
			}
			if got := len(c.log.ev[s]) > 0; got != (want == sm.EVDenied) {
				t.Errorf("shared=%v: %s reported %d events", shared, side[s], len(c.log.ev[s]))
			}
		}
	}
}
