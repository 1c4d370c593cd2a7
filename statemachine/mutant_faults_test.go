package statemachine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openmrc/mrc/wire"
)

// TestMutantFaultUnmade: the bit just past the last fault NewFault made
// is no fault: it breaks no rule, has no description or requirement, and
// is named by its bit (the seeded-fault machinery; no requirement names
// it).
func TestMutantFaultUnmade(t *testing.T) {
	n := len(faultInfo)
	if n >= 64 {
		t.Fatalf("%d faults made, no bit left", n)
	}
	f := Faults(1) << n
	if BreakRules(f, specRules) != nil || BreakRules(f|FaultNoRestore, specRules) == nil {
		t.Error("BreakRules: an unmade bit breaks a rule, or hides a made one")
	}
	if f.Doc() != "" || f.Requirement() != "" {
		t.Errorf("unmade bit %d: doc %q, requirement %q", n, f.Doc(), f.Requirement())
	}
	if got, want := f.Name(), fmt.Sprintf("fault-%d", n); got != want {
		t.Errorf("unmade bit %d named %q, want %q", n, got, want)
	}
}

// TestMutantFaultPlaceShifted: place-shifted breaks RSP-RCV-3 by exactly
// one packet length down, for every packet but its message's first: the
// first goes to its VA, a middle packet over the packet before it.
func TestMutantFaultPlaceShifted(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Test.Faults = FaultPlaceShifted })
	o.recv(1, dataPkt(0, wire.OpWriteFirst, 1024, 0x100))
	o.recv(1, dataPkt(1, wire.OpWriteMiddle, 1024, 0x100))
	var got []uint64
	for _, p := range o.out.Placements {
		got = append(got, p.VA)
	}
	if d := cmp.Diff([]uint64{baseVA, baseVA}, got); d != "" {
		t.Errorf("placed at (-want +got): %s", d)
	}
}

// TestMutantFaultHalfSpaceOffByOne: half-space-off-by-one breaks RSP-RCV-6
// at d = 2^23 only: that PSN is NACKed PSN_OOR_WINDOW instead of answered
// as a duplicate, while a duplicate at cack is still not placed again.
func TestMutantFaultHalfSpaceOffByOne(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Test.Faults = FaultHalfSpaceOffByOne }) // cack = 2^24 − 1
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100))
	o.out.Reset()
	o.recv(1, dataPkt(0, wire.OpWriteMiddle, 1024, 0x100)) // d = 0: a duplicate
	o.recv(1, dataPkt(1<<23, wire.OpWriteMiddle, 1024, 0x100))
	if ps := placed(o); len(ps) != 0 {
		t.Errorf("placed %v, want nothing", ps)
	}
	r := replies(o.take())
	if len(r) != 2 || r[0].Op != wire.OpSACK || r[1].Op != wire.OpNACK || r[1].Reason != wire.NACKPSNOutOfWindow {
		t.Errorf("replies %+v, want a SACK for the duplicate, then PSN 2^23 NACKed PSN_OOR_WINDOW", r)
	}
}
