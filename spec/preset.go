package spec

import (
	"fmt"
	"sort"
	"strings"
)

// EmuProfile follows the MRC-Client emulator (EMU; anichol67/MRC-Client,
// core/packet_builder.py): UDP port 4971, M before SE in BTH byte 1
// (AMB-4), EV[31:16] in the UDP source port (AMB-23), its ICRC (AMB-90),
// NETH cc_type 2 (AMB-34) and the port status update endpoint operation
// (AMB-7); its ERTH op numbering (AMB-25) and DSCP values (AMB-5) are the
// default's. It does not make EMU's departures from the specification
// conformant: P_Key 0, no ack_req, trimmable probes (AMB-93) and Not-ECT
// data remain findings.
func EmuProfile() Profile {
	p := DefaultProfile()
	p.Name = "emu"
	p.UDPDstPort = 4971
	p.BTHFlagOrder = BTHFlagOrderSwapped
	p.STEVHalves = STEVHighInSrcPort
	p.ICRC = ICRCEmu
	p.ERTHOpOrder = ERTHOpEMU
	p.NETHCCType = 2
	p.PortStatus = PortStatusEndpointOp
	return p
}

// presets are the named profiles, by the name --profile takes.
var presets = map[string]func() Profile{
	"default": DefaultProfile,
	"emu":     EmuProfile,
}

// PresetNames lists the named profiles, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PresetError is an unknown preset name.
type PresetError struct{ Name string }

func (e *PresetError) Error() string {
	return fmt.Sprintf("spec: unknown profile %q (presets: %s; or a JSON file)", e.Name, strings.Join(PresetNames(), ", "))
}

// Preset returns the named profile.
func Preset(name string) (Profile, error) {
	f, ok := presets[name]
	if !ok {
		return Profile{}, &PresetError{name}
	}
	return f(), nil
}
