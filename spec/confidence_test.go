package spec

import (
	"regexp"
	"testing"
)

// TestPrimaryNamesPrimarySource: a requirement marked primary names a
// primary source in its provenance (WP, API, OAI, or P2 read directly);
// P2 relayed by RB is a secondary basis (issue 13: EV-SET-4, LR-RTX-2,
// LR-TMR-3 and MPR-WIN-1 were primary on it alone).
func TestPrimaryNamesPrimarySource(t *testing.T) {
	for _, q := range Requirements() {
		if q.Confidence == Primary && !namesPrimary(q.Provenance) {
			t.Errorf("%s is primary, but its provenance %q names no primary source", q.ID, q.Provenance)
		}
	}
	for _, p := range []string{"P2 via RB", "P2 Table I via RB, MANI", "MANI, NS3"} {
		if namesPrimary(p) {
			t.Errorf("%q taken as a primary basis", p)
		}
	}
	for _, p := range []string{"WP §2.1", "API mrc.h", "P2 via RB, WP §4", "IBTA RoCEv2 annex"} {
		if !namesPrimary(p) {
			t.Errorf("%q not taken as a primary basis", p)
		}
	}
}

var (
	relayedP2    = regexp.MustCompile(`P2[^,;]*via RB`)
	primaryTagRE = regexp.MustCompile(`\b(WP|API|OAI|P2|RFC|IBTA)\b`)
)

func namesPrimary(prov string) bool {
	return primaryTagRE.MatchString(relayedP2.ReplaceAllString(prov, ""))
}
