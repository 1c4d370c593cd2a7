//go:build !purego

package wire

// foldYMM folds p (len(p) >= 256, a multiple of 16) from the CRC register
// s into the 16 bytes out, whose CRC from a register of zero is p's,
// with the constants k (foldK).
//
//go:noescape
func foldYMM(s uint32, p []byte, out *[16]byte, k *[6]uint64)

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv() (lo uint32)

// canFold reports whether the CPU runs foldYMM: it has 256-bit VPCLMULQDQ
// and AVX2, and the OS saves YMM state. useFold reports whether
// updateIEEE uses it: the CPU also lacks AVX-512, with which crc32.Update's
// own loop is as fast (on AMD Zen 3, for one, crc32.Update runs 128-bit
// PCLMULQDQ at about 10 GB/s; foldYMM about twice that).
var canFold, useFold = foldable()

func foldable() (can, use bool) {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false, false
	}
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c1&osxsave == 0 || c1&avx == 0 {
		return false, false
	}
	xcr0 := xgetbv()
	if xcr0&6 != 6 { // XMM and YMM state
		return false, false
	}
	_, b7, c7, _ := cpuid(7, 0)
	const avx2, avx512f, vpclmulqdq = 1 << 5, 1 << 16, 1 << 10
	zmm := xcr0&0xe0 == 0xe0 && b7&avx512f != 0
	can = b7&avx2 != 0 && c7&vpclmulqdq != 0
	return can, can && !zmm
}
