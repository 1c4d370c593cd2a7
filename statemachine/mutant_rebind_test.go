package statemachine

import (
	"slices"
	"testing"
)

// TestMutantRebindResetsReplaced: a REPLACE_EV the QP takes (CTL-OP-3)
// makes each replaced EV a new GOOD EV: the counts of DENIED, SKIP and
// ASSUMED_BAD EVs drop by the replaced ones (they match the table after the
// rebind), and a plane whose reverse EV (EV-REV-1) was a replaced one has
// none until feedback names another; a plane whose reverse EV stays keeps it.
func TestMutantRebindResetsReplaced(t *testing.T) {
	for _, st := range []EVState{EVDenied, EVSkip, EVAssumedBad} {
		c := testConfig(qpnA)
		q, err := c.new()
		if err != nil {
			t.Fatal(err)
		}
		var out Output
		if err := q.BringUp(0, testAttr(qpnB), &out); err != nil {
			t.Fatal(err)
		}
		tb := &q.ev
		i := slices.IndexFunc(tb.set.values, func(v uint32) bool { return v == 0x101 })
		keep := slices.IndexFunc(tb.set.values, func(v uint32) bool { return v == 0x200 })
		tb.e[i] = tb.e[i]&evActive | uint8(st)
		tb.count(st, 1)
		pi, pk := tb.set.plane[i], tb.set.plane[keep]
		tb.rev[pi], tb.rev[pk] = int16(i), int16(keep)
		p := c.EVProfiles[0]
		p.EVs = slices.Clone(p.EVs)
		for k := range p.EVs {
			if p.EVs[k].Value == 0x101 {
				p.EVs[k].Value = 0x102
			}
		}
		if err := q.RebindEVProfile(0, p, &out); err != nil {
			t.Fatal(err)
		}
		if s, ok := q.EVStateOf(0x102); !ok || s != EVGood {
			t.Fatalf("%v replaced: the new EV is %v (%v), want GOOD", st, s, ok)
		}
		var n [8]int
		for k := range tb.e {
			n[tb.state(k)]++
		}
		if tb.nBad != n[EVAssumedBad] || tb.nSkip != n[EVSkip] || tb.nDenied != n[EVDenied] {
			t.Errorf("%v replaced: counts bad %d skip %d denied %d, the table has %d %d %d", st,
				tb.nBad, tb.nSkip, tb.nDenied, n[EVAssumedBad], n[EVSkip], n[EVDenied])
		}
		if tb.rev[pi] != -1 || tb.rev[pk] != int16(keep) {
			t.Errorf("%v replaced: reverse EVs of planes %d and %d are %d and %d, want -1 and %d", st,
				pi, pk, tb.rev[pi], tb.rev[pk], keep)
		}
	}
}
