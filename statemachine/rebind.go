package statemachine

import "fmt"

// RebindEVProfile gives q its EV profile again after the controller
// replaced EVs in it while ONLINE (REPLACE_EV with
// MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE): from now on q sends nothing
// on a replaced EV and uses its replacement in its place, GOOD, in the
// active or backup set the replaced EV was in (CTL-OP-3). p must have q's
// profile ID and as many EVs, each on the port of the EV it replaces; EVs
// that did not change keep their state. CheckRebindEVProfile tells
// beforehand whether it would.
func (q *QP) RebindEVProfile(now Time, p EVProfile, out *Output) error {
	q.begin(now, out)
	defer q.end()
	ns, err := q.rebindSet(p)
	if err != nil {
		return err
	}
	t := &q.ev
	old := t.set
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

// CheckRebindEVProfile reports the error RebindEVProfile would return for
// p, changing nothing: the controller's REPLACE_EV on a profile QPs use
// asks every QP before it commits (Controller.ModifyEVProfileBound).
func (q *QP) CheckRebindEVProfile(p EVProfile) error {
	_, err := q.rebindSet(p)
	return err
}

// rebindSet builds the EV set q would use for p, or says why q cannot.
func (q *QP) rebindSet(p EVProfile) (*evSet, error) {
	old := q.ev.set
	if old == nil || old.id != p.ID {
		return nil, fmt.Errorf("%w: the QP does not use EV profile %d", ErrInvalidAttr, p.ID)
	}
	p.ActivePerPlane, p.ProbeInterval, p.ProbeSuccesses = 0, old.probeInterval, int(old.probeSuccesses)
	ns, err := buildEVSet(&p)
	if err != nil {
		return nil, err
	}
	if len(ns.values) != len(old.values) {
		return nil, fmt.Errorf("%w: EV profile %d now has %d EVs, the QP's table %d", ErrInvalidAttr, p.ID, len(ns.values), len(old.values))
	}
	for i := range ns.plane {
		if ns.plane[i] != old.plane[i] {
			return nil, fmt.Errorf("%w: EV %#x replaces one on another port", ErrInvalidAttr, ns.values[i])
		}
	}
	return ns, nil
}
