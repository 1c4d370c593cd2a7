package wire

// Tests written against mutants of check.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"testing"

	"github.com/openmrc/mrc/spec"
)

// TestMutantSameICRC (WIRE-ICRC-1, WIRE-ICRC-4): two codecs share an ICRC
// verdict only when both the algorithm and the masking of the UDP source
// port agree; a difference in either makes them differ.
func TestMutantSameICRC(t *testing.T) {
	mk := func(edit func(*spec.Profile)) *Codec {
		p := spec.DefaultProfile()
		edit(&p)
		c, err := NewCodec(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := mk(func(*spec.Profile) {})
	if !base.SameICRC(mk(func(*spec.Profile) {})) {
		t.Error("two default codecs: SameICRC false")
	}
	alg := mk(func(p *spec.Profile) { p.ICRC = spec.ICRCEmu })
	mask := mk(func(p *spec.Profile) { p.ICRCMaskUDPSrcPort = !p.ICRCMaskUDPSrcPort })
	if base.SameICRC(alg) || alg.SameICRC(base) {
		t.Error("another ICRC algorithm: SameICRC true")
	}
	if base.SameICRC(mask) || mask.SameICRC(base) {
		t.Error("the UDP source port masked in one only: SameICRC true")
	}
}

// TestMutantIPv4ViolationOffsets (WIRE-ENC-1): a wrong IPv4 header
// checksum is reported at the checksum field, 10 bytes into the header,
// and a fragment offset at the flags field, 6 bytes in: frame offsets 24
// and 20 behind a 14-byte Ethernet header.
func TestMutantIPv4ViolationOffsets(t *testing.T) {
	var p Packet
	for _, s := range samplePackets() {
		if s.BTH.Opcode == OpWriteOnly && !s.IsIPv6 && !s.Eth.HasVLAN {
			p = s
		}
	}
	for _, tc := range []struct {
		field string
		off   int
		edit  func(b []byte)
	}{
		{"checksum", 24, func(b []byte) { b[24] ^= 1 }},
		{"flags", 20, func(b []byte) { b[21] = 1 }}, // fragment offset 1, DF still set
	} {
		q := p
		b, err := Default.Append(nil, &q)
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(b)
		var d Packet
		if err := Default.Decode(b, &d); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, v := range Default.CheckHeaders(b, &d, nil) {
			if v.Req == ReqENC1 && v.Field == tc.field {
				found = true
				if v.Header != "IPv4" || v.Offset != tc.off {
					t.Errorf("%s: %s at offset %d, want IPv4 at %d", tc.field, v.Header, v.Offset, tc.off)
				}
			}
		}
		if !found {
			t.Errorf("%s: no WIRE-ENC-1 violation of the %s field", tc.field, tc.field)
		}
	}
}
