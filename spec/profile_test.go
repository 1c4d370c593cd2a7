package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonName returns the json name of a struct field, or "" when it has none.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// profileFieldExists reports whether a dotted json path names a field of
// typ (e.g. "dscp" or "dscp.control").
func profileFieldExists(typ reflect.Type, path string) bool {
	head, rest, nested := strings.Cut(path, ".")
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if jsonName(f) != head {
			continue
		}
		if !nested {
			return true
		}
		return f.Type.Kind() == reflect.Struct && profileFieldExists(f.Type, rest)
	}
	return false
}

func TestProfileAmbTags(t *testing.T) {
	typ := reflect.TypeFor[Profile]()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name := jsonName(f)
		amb := f.Tag.Get("amb")
		if name == "" {
			t.Errorf("Profile.%s has no json name", f.Name)
			continue
		}
		if amb == "" {
			if f.Name != "Name" {
				t.Errorf("Profile.%s (%s) has no amb tag", f.Name, name)
			}
			continue
		}
		a, ok := LookupAmbiguity(amb)
		if !ok {
			t.Errorf("Profile.%s: amb tag %s is not in the ambiguity register", f.Name, amb)
			continue
		}
		if !slices.Contains(a.ProfileFields, name) {
			t.Errorf("Profile.%s: %s's Profile line %v does not list %q", f.Name, amb, a.ProfileFields, name)
		}
	}
	for _, a := range Ambiguities() {
		for _, p := range a.ProfileFields {
			if !profileFieldExists(typ, p) {
				t.Errorf("%s lists profile field %q, which Profile does not have", a.ID, p)
			}
		}
	}
}

func TestDefaultProfileValid(t *testing.T) {
	p := DefaultProfile()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if !p.AcceptsUDPDstPort(4791) || !p.AcceptsUDPDstPort(4971) || p.AcceptsUDPDstPort(4792) {
		t.Error("default accepted ports wrong")
	}
	// The defaults the Markdown states (00-overview.md) match the code.
	if p.UDPDstPort != 4791 || p.BTHRetransmitMask != 0x20 || p.BTHTimestampMask != 0x10 ||
		p.TimestampUnitNs != 128 || p.RcvdBytesUnit != 256 || p.BTHFlagOrder != BTHFlagOrderIBTA ||
		p.ICRCMaskUDPSrcPort || p.Retransmit != RetransmitTrimmableRetx ||
		p.WIMMLimit != WIMMLimitAETHInvalidRequest || p.PortStatus != PortStatusEndpointOp {
		t.Errorf("DefaultProfile differs from the documented defaults: %+v", p)
	}
	if (p.DSCP != DSCPs{Control: 46, Trimmed: 12, TrimmedLastHop: 16, Trimmable: 4, NoTrim: 0, TrimmableRetx: 8}) {
		t.Errorf("default DSCPs %+v differ from the documented ones", p.DSCP)
	}
}

func TestProfileJSONRoundTrip(t *testing.T) {
	p := DefaultProfile()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Profile
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Errorf("round trip changed the profile:\n%+v\n%+v", p, q)
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*Profile)
		want   string
	}{
		{"zero port", func(p *Profile) { p.UDPDstPort = 0 }, "udp_dst_port is 0"},
		{"port not accepted", func(p *Profile) { p.UDPDstPort = 1234 }, "not in accept_udp_dst_ports"},
		{"empty accept list", func(p *Profile) { p.AcceptUDPDstPorts = nil }, "not in accept_udp_dst_ports"},
		{"rtx mask zero", func(p *Profile) { p.BTHRetransmitMask = 0 }, "bth_rtx_mask"},
		{"rtx mask two bits", func(p *Profile) { p.BTHRetransmitMask = 0x30 }, "bth_rtx_mask"},
		{"rtx mask is AckReq", func(p *Profile) { p.BTHRetransmitMask = 0x80 }, "bth_rtx_mask"},
		{"ts mask two bits", func(p *Profile) { p.BTHTimestampMask = 0x03 }, "bth_ts_mask"},
		{"ts mask is AckReq", func(p *Profile) { p.BTHTimestampMask = 0x80 }, "bth_ts_mask"},
		{"masks equal", func(p *Profile) { p.BTHTimestampMask = p.BTHRetransmitMask }, "are both"},
		{"dscp too large", func(p *Profile) { p.DSCP.Control = 64 }, "exceeds 63"},
		{"dscp duplicate", func(p *Profile) { p.DSCP.Trimmed = p.DSCP.TrimmedLastHop }, "are both"},
		{"dscp duplicate with zero", func(p *Profile) { p.DSCP.TrimmableRetx = 0 }, "are both"},
		{"timestamp unit zero", func(p *Profile) { p.TimestampUnitNs = 0 }, "timestamp_unit_ns"},
		{"rcvd bytes unit zero", func(p *Profile) { p.RcvdBytesUnit = 0 }, "rcvd_bytes_unit"},
		{"flag order undefined", func(p *Profile) { p.BTHFlagOrder = 2 }, "bth_flag_order"},
		{"wimm signal undefined", func(p *Profile) { p.WIMMLimit = 2 }, "wimm_limit_signal"},
		{"port status undefined", func(p *Profile) { p.PortStatus = 2 }, "port_status_signal"},
		{"stev halves undefined", func(p *Profile) { p.STEVHalves = 2 }, "stev_halves"},
		{"icrc undefined", func(p *Profile) { p.ICRC = 2 }, "icrc"},
		{"erth op order undefined", func(p *Profile) { p.ERTHOpOrder = 2 }, "erth_op_order"},
		{"neth cc_type too wide", func(p *Profile) { p.NETHCCType = 16 }, "neth_cc_type"},
		{"retransmit class undefined", func(p *Profile) { p.Retransmit = 2 }, "retransmit_class"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultProfile()
			c.modify(&p)
			err := p.Validate()
			if err == nil {
				t.Fatalf("Validate accepted %+v", p)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestValidateAcceptsAlternatives(t *testing.T) {
	p := DefaultProfile()
	p.Name = "alt"
	p.UDPDstPort = 4971
	p.BTHFlagOrder = BTHFlagOrderSwapped
	p.BTHRetransmitMask, p.BTHTimestampMask = 0x04, 0x02
	p.ICRCMaskUDPSrcPort = true
	p.WIMMLimit = WIMMLimitNACKUnexpEvent
	p.Retransmit = RetransmitControl
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestPresets: every preset validates, has its own name, and an unknown
// name is a typed error that lists the presets.
func TestPresets(t *testing.T) {
	for _, n := range PresetNames() {
		p, err := Preset(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("preset %s: %v", n, err)
		}
	}
	if p, _ := Preset("default"); p.Name != DefaultProfile().Name {
		t.Errorf("default preset is %q", p.Name)
	}
	e, _ := Preset("emu")
	if e.STEVHalves != STEVHighInSrcPort || e.ICRC != ICRCEmu || e.BTHFlagOrder != BTHFlagOrderSwapped || e.NETHCCType != 2 || e.UDPDstPort != 4971 {
		t.Errorf("emu preset %+v", e)
	}
	_, err := Preset("nope")
	var pe *PresetError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "default, emu") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestOrDefault(t *testing.T) {
	if got := OrDefault(nil); got == nil || got.Name != DefaultProfile().Name {
		t.Fatalf("OrDefault(nil) = %+v, want the default profile", got)
	}
	a, b := OrDefault(nil), OrDefault(nil)
	a.UDPDstPort = 1
	if b.UDPDstPort == 1 {
		t.Fatal("OrDefault(nil) shares one Profile between callers")
	}
	p := EmuProfile()
	if got := OrDefault(&p); got != &p {
		t.Fatal("OrDefault(p) did not return p")
	}
}
