package statemachine

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// The worked examples of the OCP API repository (commit 662a150:
// examples/ev_expansion/ev_expansion.c, examples/mrc_ctl_gen_ev.md,
// examples/mrc_ctl_exp_ev.md) as facts: each format and EV profile
// configuration, with a compact EV chosen here and the expansion worked
// out by hand from the expansion steps of struct mrc_ctl_ev_profile_attr.
// The examples draw their EVs at random, so the inputs are ours; the
// configurations are theirs (CTL-EVX-2, CTL-EVX-3).

func fld(width, init, lo, hi, mask uint32) EVField {
	return EVField{Width: width, InitVal: init, MinVal: lo, MaxVal: hi, Mask: mask}
}

func rep(n int, f EVField) []EVField {
	out := make([]EVField, n)
	for i := range out {
		out[i] = f
	}
	return out
}

func widths(w ...uint8) []uint8 { return w }

func evHex(s string) EVValue {
	var v EVValue
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	copy(v[:], b)
	return v
}

var upstreamExpansions = []struct {
	name   string
	fmtW   []uint8
	fields []EVField
	ev     string // compact EV, most significant bits first
	want   string // expanded EV, bytes from 0
	bits   int
}{
	// ev_expansion.c stev_exp and stev_gen_1: two 16-bit fields, all EV bits.
	{"stev_exp", widths(16, 16), rep(2, fld(16, 0, 0, 0, 0xffff)), "1234 5678", "1234 5678", 32},
	{"stev_gen_1", widths(16, 16), rep(2, fld(16, 0, 0, 0, 0xffff)), "beef 0001", "beef 0001", 32},
	// stev_gen_2: one 32-bit field.
	{"stev_gen_2", widths(32), []EVField{fld(32, 0, 0, 0, 0xffffffff)}, "dead beef", "dead beef", 32},
	// stev_gen_with_fixed: init (i+1)<<8, the low nibble generated (1..15).
	{"stev_gen_with_fixed", widths(16, 16), []EVField{fld(16, 0x100, 1, 0xf, 0xf), fld(16, 0x200, 1, 0xf, 0xf)},
		"3a", "0103 020a", 32},
	// stev_gen_with_fixed_weird_mask: mask 0x0f0f takes 8 EV bits, the
	// high nibble of them landing on bits 11-8.
	{"stev_gen_with_fixed_weird_mask", widths(16, 16), []EVField{fld(16, 0x1000, 1, 0xff, 0x0f0f), fld(16, 0x2000, 1, 0xff, 0x0f0f)},
		"abcd", "1a0b 2c0d", 32},
	// srv6_exp: a fixed 32-bit locator, four 16-bit uSIDs from the EV.
	{"srv6_exp", widths(32, 16, 16, 16, 16), append([]EVField{fld(32, 0xcafecafe, 0, 0, 0)}, rep(4, fld(16, 0, 0, 0, 0xffff))...),
		"1111 2222 3333 4444", "cafecafe 1111 2222 3333 4444", 96},
	// srv6_exp_subset: five format fields, three profile fields; the
	// format fields beyond them are left out.
	{"srv6_exp_subset", widths(32, 16, 16, 16, 16), append([]EVField{fld(32, 0xdeaddead, 0, 0, 0)}, rep(2, fld(16, 0, 0, 0, 0xffff))...),
		"aaaa 5555", "deaddead aaaa 5555", 64},
	// srv6_gen: 4-bit profile fields in 16-bit format fields, zero-filled.
	{"srv6_gen", widths(32, 16, 16, 16, 16), append([]EVField{fld(32, 0x42424242, 0, 0, 0)}, rep(4, fld(4, 0, 1, 0xf, 0xf))...),
		"1234", "42424242 0001 0002 0003 0004", 96},
	// srv6_gen_with_fixed: uSID i is i<<8 with a generated low nibble.
	{"srv6_gen_with_fixed", widths(32, 16, 16, 16, 16), []EVField{fld(32, 0x13131313, 0, 0, 0),
		fld(16, 0x100, 1, 0xf, 0xf), fld(16, 0x200, 1, 0xf, 0xf), fld(16, 0x300, 1, 0xf, 0xf), fld(16, 0x400, 1, 0xf, 0xf)},
		"1234", "13131313 0101 0202 0303 0404", 96},
	// srv6_srh_exp: SRv6 address (locator + six uSIDs = 128 bits), then
	// the SRH segment (locator + two uSIDs).
	{"srv6_srh_exp", widths(32, 16, 16, 16, 16, 16, 16, 32, 16, 16),
		append(append(append([]EVField{fld(32, 0xcafecafe, 0, 0, 0)}, rep(6, fld(16, 0, 0, 0, 0xffff))...),
			fld(32, 0xdecafbad, 0, 0, 0)), rep(2, fld(16, 0, 0, 0, 0xffff))...),
		"0001 0002 0003 0004 0005 0006 0007 0008", "cafecafe 0001 0002 0003 0004 0005 0006 decafbad 0007 0008", 192},
	// mrc_ctl_gen_ev.md, STEV: tiers T0 (8 bits), T1 and T2 (4 bits).
	{"gen_ev_stev_tiers", widths(8, 4, 4), []EVField{fld(8, 0, 0, 255, 0xff), fld(4, 0, 0, 15, 0xf), fld(4, 0, 0, 15, 0xf)},
		"b3 7c", "b37c", 16},
	// mrc_ctl_gen_ev.md, SRv6: fixed locator 0xdeadcafe, uSID i with tier
	// number i in its high byte and a generated low byte (the example's
	// intent; its code writes every field into element 0).
	{"gen_ev_srv6_tiers", widths(32, 16, 16, 16, 16), []EVField{fld(32, 0xdeadcafe, 0, 0, 0),
		fld(16, 0x100, 0, 255, 0xff), fld(16, 0x200, 0, 255, 0xff), fld(16, 0x300, 0, 255, 0xff), fld(16, 0x400, 0, 255, 0xff)},
		"1122 3344", "deadcafe 0111 0222 0333 0444", 96},
	// mrc_ctl_exp_ev.md: an explicit STEV profile of two 16-bit fields
	// with the array index in both (EV 13 shown).
	{"exp_ev_stev_index", widths(16, 16), rep(2, fld(16, 0, 0, 0, 0xffff)), "000d 000d", "000d 000d", 32},
}

func TestExpandEVUpstreamExamples(t *testing.T) {
	// CTL-EVX-2, CTL-EVX-3: every worked example of the upstream API.
	for _, c := range upstreamExpansions {
		t.Run(c.name, func(t *testing.T) {
			got, n, err := ExpandEV(c.fmtW, c.fields, evHex(c.ev))
			if err != nil {
				t.Fatal(err)
			}
			if want := evHex(c.want); got != want || n != c.bits {
				t.Errorf("expanded %x (%d bits), want %x (%d bits)", got, n, want, c.bits)
			}
		})
	}
}

func TestExpandEVRejects(t *testing.T) {
	// The restrictions of struct mrc_ctl_ev_profile_attr (CTL-EVX-4) and
	// the zero tail of the EV (CTL-EVX-5), each with its errno.
	f16 := fld(16, 0, 0, 0, 0xffff)
	for _, c := range []struct {
		name   string
		fmtW   []uint8
		fields []EVField
		ev     string
		errno  Errno
	}{
		{"more fields than format fields", widths(16), []EVField{f16, f16}, "", E2BIG},
		{"fields exactly as wide as the format", widths(8, 8), []EVField{fld(8, 0, 0, 0, 0xff), fld(8, 0, 0, 0, 0xff)}, "", 0},
		{"init_val wider than the field", widths(16), []EVField{fld(8, 0x100, 0, 0, 0)}, "", EINVAL},
		{"mask outside the field", widths(16), []EVField{fld(8, 0, 0, 0, 0x100)}, "", EINVAL},
		{"max_val wider than the mask bits", widths(16), []EVField{fld(16, 0, 0, 0x10, 0xf)}, "", EINVAL},
		{"field wider than its format field", widths(8, 24), []EVField{fld(16, 0, 0, 0, 0xffff)}, "", EINVAL},
		{"width 0", widths(16), []EVField{fld(0, 0, 0, 0, 0)}, "", EINVAL},
		{"EV bits beyond the masks", widths(16, 16), []EVField{fld(16, 0x100, 1, 0xf, 0xf), fld(16, 0x200, 1, 0xf, 0xf)}, "3a 80", EINVAL},
	} {
		_, _, err := ExpandEV(c.fmtW, c.fields, evHex(c.ev))
		if c.errno == 0 {
			if err != nil {
				t.Errorf("%s: %v, want success", c.name, err)
			}
			continue
		}
		if !errors.Is(err, c.errno) {
			t.Errorf("%s: err %v, want %s", c.name, err, c.errno)
		}
	}
}

func TestGenerateEVsUpstreamTiers(t *testing.T) {
	// CTL-GEN-1, CTL-GEN-2 on the STEV tiers of mrc_ctl_gen_ev.md: 256 ×
	// 16 × 16 combinations; the example caps ev_count at the device's
	// ev_max_count_profile (2048 here).
	fields := []EVField{fld(8, 0, 0, 255, 0xff), fld(4, 0, 0, 15, 0xf), fld(4, 0, 0, 15, 0xf)}
	for _, order := range []GenOrder{GenFirstFieldFastest, GenLastFieldFastest} {
		evs, err := GenerateEVs(fields, MaxEVs, order)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[EVValue]bool{}
		for k, v := range evs {
			if seen[v] {
				t.Fatalf("%s: EV %d %x generated twice", order, k, v[:2])
			}
			seen[v] = true
			t0, t1, t2 := v.Bits(0, 8), v.Bits(8, 4), v.Bits(12, 4)
			want := [3]uint32{uint32(k % 256), uint32(k / 256 % 16), uint32(k / 4096)}
			if order == GenLastFieldFastest {
				want = [3]uint32{uint32(k / 256), uint32(k / 16 % 16), uint32(k % 16)}
			}
			if [3]uint32{t0, t1, t2} != want {
				t.Fatalf("%s: EV %d is T0=%d T1=%d T2=%d, want %v", order, k, t0, t1, t2, want)
			}
		}
	}
	if _, err := GenerateEVs(fields, 256*16*16+1, GenFirstFieldFastest); !errors.Is(err, EINVAL) {
		t.Errorf("more EVs than combinations: %v, want EINVAL", err)
	}
	// ev_expansion.c's generated examples leave max_val 0 and draw over
	// the whole mask (AMB-68); min_val 1 to max 15 gives 15 values.
	evs, err := GenerateEVs([]EVField{fld(16, 0, 0, 0, 0xffff)}, 3, GenFirstFieldFastest)
	if err != nil || evs[2].Bits(0, 16) != 2 {
		t.Errorf("max_val 0: %v %x", err, evs)
	}
	if _, err := GenerateEVs(rep(2, fld(16, 0x100, 1, 0xf, 0xf)), 15*15+1, GenFirstFieldFastest); !errors.Is(err, EINVAL) {
		t.Errorf("stev_gen_with_fixed: 226 of 225 combinations: %v", err)
	}
}

func TestOverlayMatchesBitByBit(t *testing.T) {
	// overlay against a plain restatement of step 2 of the expansion:
	// walk the mask from its most significant bit down, taking the EV
	// bits most significant first.
	r := newRNG(7)
	for i := 0; i < 2000; i++ {
		v, mask := uint32(r.next()), uint32(r.next())
		n := 0
		for m := mask; m != 0; m &= m - 1 {
			n++
		}
		x := uint32(r.next()) & widthMax(uint32(n))
		want, k := v, n
		for b := 31; b >= 0; b-- {
			if mask>>b&1 != 0 {
				k--
				want = want&^(1<<b) | (x>>k&1)<<b
			}
		}
		if got := overlay(v, x, mask); got != want {
			t.Fatalf("overlay(%#x, %#x, %#x) = %#x, want %#x (seed 7, step %d)", v, x, mask, got, want, i)
		}
	}
}
