package statemachine

import (
	"strings"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantConfigBoundsInclusive: every range Config and QPConfig
// validation documents is inclusive at both ends; a value at a bound is
// accepted (issue 18: no field accepted and ignored, none refused inside its
// documented range). The NSCC parameters' ranges are CC-NSCC-1's.
func TestMutantConfigBoundsInclusive(t *testing.T) {
	for name, mod := range map[string]func(*testCfg){
		"Test.MPRUnit 1":            func(c *testCfg) { c.Test.MPRUnit = 1 },
		"Device.MPRResolution 1":    func(c *testCfg) { c.Device.MPRResolution = 1 },
		"Device.MPRResolution 255":  func(c *testCfg) { c.Device.MPRResolution = 255 },
		"Device.MaxWIMM 1":          func(c *testCfg) { c.Device.MaxWIMM = 1 },
		"Device.MaxWIMM 65535":      func(c *testCfg) { c.Device.MaxWIMM = 65535 },
		"Device.MaxWIMMDest 1":      func(c *testCfg) { c.Device.MaxWIMMDest = 1 },
		"Device.MaxWIMMDest 65535":  func(c *testCfg) { c.Device.MaxWIMMDest = 65535 },
		"Device.MaxMPR 1":           func(c *testCfg) { c.Device.MaxMPR = 1 },
		"Device.MaxMPR 255":         func(c *testCfg) { c.Device.MaxMPR = 255 },
		"Policy.ReorderThreshold 0": func(c *testCfg) { c.Policy.ReorderThreshold = 0 },
		"Policy.ReorderThreshold 32768": func(c *testCfg) {
			c.Policy.ReorderThreshold = 1 << 15
		},
		"Policy.Ack.Coalesce 32768":         func(c *testCfg) { c.Policy.Ack.Coalesce = 1 << 15 },
		"Policy.Ack.AlwaysSkipAfter 0xFFFF": func(c *testCfg) { c.Policy.Ack.AlwaysSkipAfter = 0xFFFF },
		"QPN 0xFFFFFF":                      func(c *testCfg) { c.QPN = wire.PSNMask },
		"MaxSendWR 1":                       func(c *testCfg) { c.MaxSendWR = 1 },
		"MaxSendWR 32768":                   func(c *testCfg) { c.MaxSendWR = 1 << 15 },
		"MaxRecvWR 1":                       func(c *testCfg) { c.MaxRecvWR = 1 },
		"MaxRecvWR 32768":                   func(c *testCfg) { c.MaxRecvWR = 1 << 15 },
		"NSCC.Eta 0":                        func(c *testCfg) { c.CCProfiles[1].NSCC.Eta = 0 },
		"NSCC.Gamma 1":                      func(c *testCfg) { c.CCProfiles[1].NSCC.Gamma = 1 },
		"NSCC.MaxMDJump 1":                  func(c *testCfg) { c.CCProfiles[1].NSCC.MaxMDJump = 1 },
		"NSCC.QAGate 16":                    func(c *testCfg) { c.CCProfiles[1].NSCC.QAGate = 16 },
	} {
		c := testConfig(qpnA)
		c.CCProfiles = append([]CCProfile(nil), c.CCProfiles...)
		mod(&c)
		if _, err := c.new(); err != nil {
			t.Errorf("%s (at its bound): %v", name, err)
		}
	}
}

// TestMutantProtocolVersionTwoBits: a ProtocolVersion with two bits set
// requests more than one version and is refused as such (QP-ATTR-4), not as
// an unknown version.
func TestMutantProtocolVersionTwoBits(t *testing.T) {
	c := testConfig(qpnA)
	c.ProtocolVersion = 3
	_, err := c.new()
	if err == nil || !strings.Contains(err.Error(), "more than one version") {
		t.Errorf("ProtocolVersion 3: %v, want a refusal naming more than one version", err)
	}
}

// TestMutantGenerateEVProfileBounds: GenerateEVProfile takes 1 to
// MaxPlanes planes of 1 or more EVs each, at most MaxEVs in all
// (EV-SET-1), and returns no EVs outside that.
func TestMutantGenerateEVProfileBounds(t *testing.T) {
	for _, c := range []struct{ planes, per, want int }{
		{1, 1, 1}, {MaxPlanes, 1, MaxPlanes}, {1, MaxEVs, MaxEVs}, {2, MaxEVs / 2, MaxEVs},
		{0, 1, 0}, {MaxPlanes + 1, 1, 0}, {1, 0, 0}, {2, MaxEVs, 0}, {2, MaxEVs/2 + 1, 0},
	} {
		if got := len(GenerateEVProfile(1, c.planes, c.per, 1).EVs); got != c.want {
			t.Errorf("GenerateEVProfile(planes %d, per plane %d): %d EVs, want %d", c.planes, c.per, got, c.want)
		}
	}
}
