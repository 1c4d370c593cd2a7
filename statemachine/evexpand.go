package statemachine

import "math/bits"

// EV identities and EV expansion as the OCP control API defines them
// (mrc_ctl.h: mrc_ctl_ev_t, struct mrc_ctl_ev, struct mrc_ctl_ev_field and
// the expansion steps of struct mrc_ctl_ev_profile_attr). An EV is up to
// 32 bytes: a compact bit string that an EV profile's fields expand, field
// by field, into the EV placed in packets, laid out by an EV Format
// profile (CTL-EVX-1 to CTL-EVX-6 of spec/36-api-objects.md).

// EVBytes is MRC_CTL_EV_MAX_BYTES: the size of an EV value.
const EVBytes = 32

// EVValue is mrc_ctl_ev_t. Its bits are read most significant first from
// byte 0: the compact EV an EV profile expands (CTL-EVX-1, AMB-60), or an
// expanded EV (the UDP/STEV value, or an SRv6 address then an SRH segment).
type EVValue [EVBytes]byte

// Bits returns n bits of v from bit offset off (0 = the most significant
// bit of byte 0), as the low n bits of the result; n ≤ 32.
func (v *EVValue) Bits(off, n int) uint32 {
	var x uint32
	for i := 0; i < n; i++ {
		b := off + i
		x = x<<1 | uint32(v[b/8]>>(7-b%8)&1)
	}
	return x
}

// putBits writes the low n bits of x at bit offset off, most significant
// first; the bits there must be zero.
func (v *EVValue) putBits(off, n int, x uint32) {
	for i := 0; i < n; i++ {
		if x>>(n-1-i)&1 != 0 {
			b := off + i
			v[b/8] |= 1 << (7 - b%8)
		}
	}
}

// zeroFrom reports whether every bit of v from offset off on is zero.
func (v *EVValue) zeroFrom(off int) bool {
	for b := off; b < 8*EVBytes; b++ {
		if v[b/8]>>(7-b%8)&1 != 0 {
			return false
		}
	}
	return true
}

// EVValueOf returns the EV value whose first n bits (n ≤ 32) are the low n
// bits of x: a 32-bit STEV EV is EVValueOf(ev, 32), most significant byte
// first (AMB-60).
func EVValueOf(x uint32, n int) EVValue {
	var v EVValue
	v.putBits(0, n, x)
	return v
}

// CtlEV is struct mrc_ctl_ev: an EV value and the 1-based NIC port it
// leaves on. The zero value is MRC_CTL_EV_UNPOPULATED.
type CtlEV struct {
	Val  EVValue
	Port uint8
}

// Unpopulated reports whether e is MRC_CTL_EV_UNPOPULATED.
func (e CtlEV) Unpopulated() bool { return e == CtlEV{} }

// EVField is struct mrc_ctl_ev_field: one field of an EV profile.
type EVField struct {
	Width   uint32 // bits, 1 to 32
	InitVal uint32 // the field's value before EV bits are overlaid
	MinVal  uint32 // smallest generated value (GEN mode)
	MaxVal  uint32 // largest generated value (GEN mode)
	Mask    uint32 // where EV bits are overlaid; its popcount is the bits taken from the EV
}

// EVBits returns the number of EV bits the field takes: the bits set in
// its mask.
func (f EVField) EVBits() int { return bits.OnesCount32(f.Mask) }

// genMax is the largest value generated for the field: max_val, or with
// max_val 0 every value of its mask bits (AMB-68).
func (f EVField) genMax() uint32 {
	if f.MaxVal == 0 {
		return widthMax(uint32(f.EVBits()))
	}
	return f.MaxVal
}

func widthMax(w uint32) uint32 {
	if w >= 32 {
		return ^uint32(0)
	}
	return 1<<w - 1
}

// checkEVFields applies the restrictions of an EV profile's fields against
// its EV Format profile's field widths fmtW (CTL-EVX-4) and the device's
// ev_max_width: E2BIG when the fields exceed what the format or the device
// holds, EINVAL for a field that is malformed in itself.
func checkEVFields(fmtW []uint8, fields []EVField, maxWidth uint32, gen bool) error {
	if len(fields) == 0 {
		return ctlErr(EINVAL, "EV fields: none given")
	}
	if len(fields) > len(fmtW) {
		return ctlErr(E2BIG, "EV fields: %d fields, the EV Format profile has %d", len(fields), len(fmtW))
	}
	sum, fmtSum, evBits := uint32(0), uint32(0), 0
	for _, w := range fmtW {
		fmtSum += uint32(w)
	}
	for i, f := range fields {
		switch {
		case f.Width == 0 || f.Width > 32:
			return ctlErr(EINVAL, "EV field %d: width %d, want 1 to 32", i, f.Width)
		case f.Width > uint32(fmtW[i]):
			return ctlErr(EINVAL, "EV field %d: width %d is wider than format field %d (%d bits) (AMB-61)", i, f.Width, i, fmtW[i])
		case f.InitVal > widthMax(f.Width):
			return ctlErr(EINVAL, "EV field %d: init_val %#x is wider than its %d bits", i, f.InitVal, f.Width)
		case f.Mask&^widthMax(f.Width) != 0:
			return ctlErr(EINVAL, "EV field %d: mask %#x has bits outside its %d bits", i, f.Mask, f.Width)
		case f.Mask != 0 && f.MaxVal > widthMax(uint32(f.EVBits())):
			return ctlErr(EINVAL, "EV field %d: max_val %#x is wider than the %d mask bits", i, f.MaxVal, f.EVBits())
		case gen && f.Mask != 0 && f.MinVal > f.genMax():
			return ctlErr(EINVAL, "EV field %d: min_val %#x above max_val %#x", i, f.MinVal, f.genMax())
		}
		sum += f.Width
		evBits += f.EVBits()
	}
	if sum > fmtSum {
		return ctlErr(E2BIG, "EV fields total %d bits, the EV Format profile %d", sum, fmtSum)
	}
	if maxWidth != 0 && sum > maxWidth {
		return ctlErr(E2BIG, "EV fields total %d bits, beyond ev_max_width %d", sum, maxWidth)
	}
	if evBits > 8*EVBytes {
		return ctlErr(E2BIG, "EV fields take %d EV bits, an EV holds %d", evBits, 8*EVBytes)
	}
	return nil
}

// ExpandEV expands EV ev by an EV profile's fields laid out by an EV
// Format profile's field widths fmtW, and returns the expanded EV and its
// width in bits (CTL-EVX-2, CTL-EVX-3). Field i starts at its init_val;
// its mask bits, from the most significant down, take the EV's next most
// significant bits; the field then fills format field i, right-aligned
// (the format field's extra high bits are zero), and the format fields are
// concatenated in order. Format fields beyond the profile's fields are
// left out. An EV with bits set beyond those the masks take is invalid
// (CTL-EVX-5).
func ExpandEV(fmtW []uint8, fields []EVField, ev EVValue) (EVValue, int, error) {
	var out EVValue
	if err := checkEVFields(fmtW, fields, 0, false); err != nil {
		return out, 0, err
	}
	src, dst := 0, 0
	for i, f := range fields {
		v := f.InitVal
		if n := f.EVBits(); n > 0 {
			v = overlay(v, ev.Bits(src, n), f.Mask)
			src += n
		}
		w := int(fmtW[i])
		if dst+w > 8*EVBytes {
			return out, 0, ctlErr(E2BIG, "expanded EV exceeds %d bits", 8*EVBytes)
		}
		if w > 32 {
			dst += w - 32 // the extra high bits of a wide format field stay zero
			w = 32
		}
		out.putBits(dst, w, v)
		dst += w
	}
	if !ev.zeroFrom(src) {
		return out, 0, ctlErr(EINVAL, "EV has bits set beyond the %d its profile's masks take", src)
	}
	return out, dst, nil
}

// overlay sets the mask bits of v, lowest first, to x's bits, lowest
// first: x's most significant bit lands on the mask's highest bit.
func overlay(v, x, mask uint32) uint32 {
	for m := mask; m != 0; m &= m - 1 {
		low := m & -m
		v = v&^low | -(x&1)&low
		x >>= 1
	}
	return v
}

// GenOrder is the order in which a generated EV profile enumerates its
// fields' values (AMB-62).
type GenOrder uint8

// Generation orders.
const (
	// GenFirstFieldFastest varies the first generated field fastest, so
	// consecutive EVs differ in the field nearest the source.
	GenFirstFieldFastest GenOrder = iota
	// GenLastFieldFastest counts like an odometer, first field most
	// significant.
	GenLastFieldFastest
)

// GenerateEVs returns count compact EVs of a GEN-mode profile: every
// combination of the generated fields' values from min_val to max_val,
// each field's value in its mask's bit count, concatenated in field order
// (CTL-GEN-1); a max_val of 0 means every value of the mask bits (AMB-68). Fixed fields (mask 0) take no EV bits. count beyond the
// number of distinct combinations is EINVAL (CTL-GEN-2).
func GenerateEVs(fields []EVField, count int, order GenOrder) ([]EVValue, error) {
	var radix []uint64
	var gen []int
	combos := uint64(1)
	for i, f := range fields {
		if f.Mask == 0 {
			continue
		}
		hi := f.genMax()
		if f.MinVal > hi {
			return nil, ctlErr(EINVAL, "EV field %d: min_val %#x above max_val %#x", i, f.MinVal, hi)
		}
		r := uint64(hi-f.MinVal) + 1
		radix, gen = append(radix, r), append(gen, i)
		if combos <= uint64(MaxEVs) {
			combos *= r
		}
	}
	if count < 0 || uint64(count) > combos {
		return nil, ctlErr(EINVAL, "ev_count %d: the fields generate %d distinct EVs", count, combos)
	}
	out := make([]EVValue, count)
	digit := make([]uint64, len(gen))
	for k := range out {
		off := 0
		for j, i := range gen {
			f := fields[i]
			n := f.EVBits()
			out[k].putBits(off, n, f.MinVal+uint32(digit[j]))
			off += n
		}
		step(digit, radix, order)
	}
	return out, nil
}

// step advances the mixed-radix counter digit.
func step(digit, radix []uint64, order GenOrder) {
	for j := range digit {
		if order == GenLastFieldFastest {
			j = len(digit) - 1 - j
		}
		digit[j]++
		if digit[j] < radix[j] {
			return
		}
		digit[j] = 0
	}
}

func (o GenOrder) String() string {
	if o == GenLastFieldFastest {
		return "last-field-fastest"
	}
	return "first-field-fastest"
}
