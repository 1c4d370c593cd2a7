package active

import (
	"errors"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestEVModeOfAcceptsWireNames: a target's hello names its EV mode as wire
// does (any case), parsed by wire.ParseEVMode; no name is STEV.
func TestEVModeOfAcceptsWireNames(t *testing.T) {
	for _, m := range []wire.EVMode{wire.EVModeSTEV, wire.EVModeUDP, wire.EVModeSRv6} {
		got, err := evModeOf(m.String())
		if err != nil || got != m {
			t.Errorf("evModeOf(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	if m, err := evModeOf(""); err != nil || m != wire.EVModeSTEV {
		t.Errorf("evModeOf(\"\") = %v, %v; want STEV", m, err)
	}
	if _, err := evModeOf("roce"); !errors.Is(err, wire.ErrUnknownEVMode) {
		t.Errorf("evModeOf(\"roce\") = %v; want ErrUnknownEVMode", err)
	}
}
