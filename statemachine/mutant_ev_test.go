package statemachine

// Tests written against mutants of ev.go that the package's other tests
// let live (found by applying them by hand, scripts/mutate.sh's stage 2
// applier).

import (
	"errors"
	"testing"
)

// TestMutantEVProfileLimits: an EV profile at each upper limit is
// accepted and one past it refused: ports 1 to 31, port-status masks
// having bit n for port n (WIRE-ERTH-2); probe_success_threshold up to 7,
// the count the EV table holds (EV-ST-7); MaxEVs EVs, the most an 11-bit
// per-PSN EV index names.
func TestMutantEVProfileLimits(t *testing.T) {
	evs := func(n int, port uint8) []EVEntry {
		e := make([]EVEntry, n)
		for i := range e {
			e[i] = EVEntry{uint32(i + 1), port}
		}
		return e
	}
	for _, c := range []struct {
		name string
		mod  func(*EVProfile)
		ok   bool
	}{
		{"port 31", func(p *EVProfile) { p.EVs = evs(2, MaxPlanes) }, true},
		{"port 32", func(p *EVProfile) { p.EVs = evs(2, MaxPlanes+1) }, false},
		{"probe successes 7", func(p *EVProfile) { p.ProbeSuccesses = maxProbeOK }, true},
		{"probe successes 8", func(p *EVProfile) { p.ProbeSuccesses = maxProbeOK + 1 }, false},
		{"MaxEVs EVs", func(p *EVProfile) { p.EVs = evs(MaxEVs, 1) }, true},
		{"MaxEVs + 1 EVs", func(p *EVProfile) { p.EVs = evs(MaxEVs+1, 1) }, false},
	} {
		cf := testConfig(qpnA)
		c.mod(&cf.EVProfiles[0])
		_, err := cf.new()
		var ce *ConfigError
		if c.ok && err != nil || !c.ok && !errors.As(err, &ce) {
			t.Errorf("%s: error %v, want accepted %v", c.name, err, c.ok)
		}
	}
}
