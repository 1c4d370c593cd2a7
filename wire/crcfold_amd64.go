//go:build !purego

package wire

// foldVec folds p (len(p) >= 256, a multiple of 16) from the CRC register
// s into the 16 bytes out, whose CRC from a register of zero is p's,
// with the constants k (foldK): with ZMM registers (zmm; AVX-512) or YMM
// registers.
//
//go:noescape
func foldVec(s uint32, p []byte, out *[16]byte, k *[10]uint64, zmm bool)

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv() (lo uint32)

// canFold reports whether the CPU runs foldVec with YMM registers: it has
// 256-bit VPCLMULQDQ and AVX2, and the OS saves YMM state. canFoldZMM
// reports whether it also runs it with ZMM registers: it has AVX-512F,
// and the OS saves ZMM state. Either is faster than crc32.Update: on AMD
// Zen 3 crc32.Update runs 128-bit PCLMULQDQ at about 10 GB/s and foldVec
// with YMM about twice that; on AMD Zen 5 crc32.Update's AVX-512 loop,
// one accumulator, runs at about 30 GB/s on 4 KiB and foldVec with ZMM,
// four, at about 47 (BenchmarkUpdateIEEE).
var canFold, canFoldZMM = foldable(readCPU(cpuid, xgetbv))

// cpuFeatures is what foldable reads: the highest CPUID leaf, ECX of leaf
// 1, EBX and ECX of leaf 7, and XCR0 (the state the OS saves).
type cpuFeatures struct{ maxLeaf, ecx1, ebx7, ecx7, xcr0 uint32 }

// CPUID and XCR0 bits foldable reads.
const (
	osxsave    = 1 << 27 // leaf 1 ECX: XGETBV is enabled
	avx        = 1 << 28 // leaf 1 ECX
	avx2       = 1 << 5  // leaf 7 EBX
	avx512f    = 1 << 16 // leaf 7 EBX
	vpclmulqdq = 1 << 10 // leaf 7 ECX
	xmmYMM     = 6       // XCR0: SSE and AVX state
	zmmState   = 0xe0    // XCR0: opmask and the ZMM halves
)

// readCPU reads the features with the instructions cpuid and xgetbv: a
// leaf only where the CPU has it, XCR0 only where XGETBV is enabled (it
// faults otherwise).
func readCPU(cpuid func(leaf, sub uint32) (a, b, c, d uint32), xgetbv func() uint32) cpuFeatures {
	var f cpuFeatures
	f.maxLeaf, _, _, _ = cpuid(0, 0)
	if f.maxLeaf < 1 {
		return f
	}
	_, _, f.ecx1, _ = cpuid(1, 0)
	if f.maxLeaf >= 7 {
		_, f.ebx7, f.ecx7, _ = cpuid(7, 0)
	}
	if f.ecx1&osxsave != 0 {
		f.xcr0 = xgetbv()
	}
	return f
}

// foldable reports whether a CPU with features f can run foldVec with YMM
// registers, and whether it can also with ZMM registers.
func foldable(f cpuFeatures) (can, zmm bool) {
	if f.maxLeaf < 7 || f.ecx1&osxsave == 0 || f.ecx1&avx == 0 || f.xcr0&xmmYMM != xmmYMM {
		return false, false
	}
	can = f.ebx7&avx2 != 0 && f.ecx7&vpclmulqdq != 0
	return can, can && f.xcr0&zmmState == zmmState && f.ebx7&avx512f != 0
}
