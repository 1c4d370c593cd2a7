//go:build !purego

package wire

import "testing"

// TestFoldable: foldable's answer for CPUs it must tell apart.
func TestFoldable(t *testing.T) {
	zen3 := cpuFeatures{maxLeaf: 0x10, ecx1: osxsave | avx, ebx7: avx2, ecx7: vpclmulqdq, xcr0: 7}
	with := func(edit func(*cpuFeatures)) cpuFeatures { f := zen3; edit(&f); return f }
	for _, c := range []struct {
		name     string
		f        cpuFeatures
		can, zmm bool
	}{
		{"Zen 3: AVX2 and VPCLMULQDQ, no AVX-512", zen3, true, false},
		{"highest leaf 7", with(func(f *cpuFeatures) { f.maxLeaf = 7 }), true, false},
		{"highest leaf 6", with(func(f *cpuFeatures) { f.maxLeaf = 6 }), false, false},
		{"AVX-512 with ZMM state", with(func(f *cpuFeatures) { f.ebx7 |= avx512f; f.xcr0 = 0xe7 }), true, true},
		{"AVX-512 with ZMM state, no VPCLMULQDQ", with(func(f *cpuFeatures) { f.ebx7 |= avx512f; f.xcr0 = 0xe7; f.ecx7 = 0 }), false, false},
		{"AVX-512F without ZMM state", with(func(f *cpuFeatures) { f.ebx7 |= avx512f }), true, false},
		{"AVX-512F with part of the ZMM state", with(func(f *cpuFeatures) { f.ebx7 |= avx512f; f.xcr0 = 0x67 }), true, false},
		{"ZMM state without AVX-512F", with(func(f *cpuFeatures) { f.xcr0 = 0xe7 }), true, false},
		{"no VPCLMULQDQ", with(func(f *cpuFeatures) { f.ecx7 = 0 }), false, false},
		{"no AVX2", with(func(f *cpuFeatures) { f.ebx7 = 0 }), false, false},
		{"no OSXSAVE", with(func(f *cpuFeatures) { f.ecx1 = avx }), false, false},
		{"no AVX", with(func(f *cpuFeatures) { f.ecx1 = osxsave }), false, false},
		{"YMM state not saved", with(func(f *cpuFeatures) { f.xcr0 = 3 }), false, false},
	} {
		if can, zmm := foldable(c.f); can != c.can || zmm != c.zmm {
			t.Errorf("%s: foldable = %v, %v; want %v, %v", c.name, can, zmm, c.can, c.zmm)
		}
	}
}

// TestReadCPU: readCPU asks for a leaf only up to the highest the CPU
// reports, and for XCR0 only where OSXSAVE says XGETBV is enabled.
func TestReadCPU(t *testing.T) {
	for _, c := range []struct {
		name    string
		maxLeaf uint32
		ecx1    uint32
		want    cpuFeatures
	}{
		{"leaves 0 to 16", 16, osxsave | avx, cpuFeatures{16, osxsave | avx, avx2, vpclmulqdq, 7}},
		{"leaves 0 to 7", 7, osxsave | avx, cpuFeatures{7, osxsave | avx, avx2, vpclmulqdq, 7}},
		{"leaves 0 to 6", 6, osxsave | avx, cpuFeatures{6, osxsave | avx, 0, 0, 7}},
		{"leaves 0 and 1", 1, osxsave | avx, cpuFeatures{1, osxsave | avx, 0, 0, 7}},
		{"leaf 0 only", 0, osxsave | avx, cpuFeatures{}},
		{"XGETBV not enabled", 16, avx, cpuFeatures{16, avx, avx2, vpclmulqdq, 0}},
	} {
		id := func(leaf, sub uint32) (a, b, cx, d uint32) {
			if leaf > c.maxLeaf {
				t.Errorf("%s: leaf %d asked for", c.name, leaf)
			}
			switch leaf {
			case 0:
				return c.maxLeaf, 0, 0, 0
			case 1:
				return 0, 0, c.ecx1, 0
			case 7:
				return 0, avx2, vpclmulqdq, 0
			}
			return 0, 0, 0, 0
		}
		xcr0 := func() uint32 {
			if c.ecx1&osxsave == 0 {
				t.Errorf("%s: XGETBV without OSXSAVE", c.name)
			}
			return 7
		}
		if got := readCPU(id, xcr0); got != c.want {
			t.Errorf("%s: readCPU = %+v, want %+v", c.name, got, c.want)
		}
	}
}
