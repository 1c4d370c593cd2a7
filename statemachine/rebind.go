package statemachine

import "fmt"

// RebindEVProfile gives q its EV profile again after the controller
// replaced EVs in it while ONLINE (REPLACE_EV with
// MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE): from now on q sends nothing
// on a replaced EV and uses its replacement in its place, GOOD, in the
// active or backup set the replaced EV was in (CTL-OP-3). p must have q's
// profile ID and as many EVs, each on the port of the EV it replaces; EVs
// that did not change keep their state.
func (q *QP) RebindEVProfile(now Time, p EVProfile, out *Output) error {
	q.begin(now, out)
	defer q.end()
	t := &q.ev
	if t.set == nil || t.set.id != p.ID {
		return fmt.Errorf("%w: the QP does not use EV profile %d", ErrInvalidAttr, p.ID)
	}
	old := t.set
	p.ActivePerPlane, p.ProbeInterval, p.ProbeSuccesses = 0, old.probeInterval, int(old.probeSuccesses)
	ns, err := buildEVSet(&p)
	if err != nil {
		return err
	}
	if len(ns.values) != len(old.values) {
		return fmt.Errorf("%w: EV profile %d now has %d EVs, the QP's table %d", ErrInvalidAttr, p.ID, len(ns.values), len(old.values))
	}
	for i := range ns.plane {
		if ns.plane[i] != old.plane[i] {
			return fmt.Errorf("%w: EV %#x replaces one on another port", ErrInvalidAttr, ns.values[i])
		}
	}
	ns.active = old.active
	for i, v := range ns.values {
		if v == old.values[i] {
			continue
		}
		switch t.state(i) {
		case EVAssumedBad:
			t.nBad--
		case EVSkip:
			t.nSkip--
		case EVDenied:
			t.nDenied--
		}
		t.e[i] = t.e[i]&evActive | uint8(EVGood)
		for pl := range t.rev {
			if int(t.rev[pl]) == i {
				t.rev[pl] = -1
			}
		}
	}
	t.set = ns
	q.pump()
	return nil
}
