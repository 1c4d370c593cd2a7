package wire

import (
	"hash/crc32"
	"math/bits"
)

// foldMin is the shortest input updateIEEE folds with foldVec, the
// shortest it takes; at 256 and 512 bytes either register width already
// takes two thirds of crc32.Update's time or less (BenchmarkUpdateIEEE).
const foldMin = 256

// updateIEEE is crc32.Update(crc, crc32.IEEETable, p), through
// foldUpdate where canFold holds.
func updateIEEE(crc uint32, p []byte) uint32 {
	if canFold && len(p) >= foldMin {
		return foldUpdate(crc, p)
	}
	return crc32.Update(crc, crc32.IEEETable, p)
}

// foldUpdate is crc32.Update(crc, crc32.IEEETable, p) for len(p) >= 256
// where canFold holds: foldUpdateWith, with ZMM registers where the CPU
// runs them.
func foldUpdate(crc uint32, p []byte) uint32 { return foldUpdateWith(canFoldZMM, crc, p) }

// foldUpdateWith is crc32.Update(crc, crc32.IEEETable, p) for len(p) >=
// 256: p's whole 16-byte blocks go through foldVec, with ZMM registers
// (zmm) or YMM ones, and the 16 bytes it leaves, then the rest of p,
// through update8 (handed to crc32.Update, out would escape to the heap).
func foldUpdateWith(zmm bool, crc uint32, p []byte) uint32 {
	n := len(p) &^ 15
	var out [16]byte
	foldVec(^crc, p[:n], &out, &foldK, zmm)
	return ^update8(slicing8, update8(slicing8, 0, out[:]), p[n:])
}

// foldK holds foldVec's constants for moving a 128-bit lane on by 2048,
// 1024, 512, 256 and 128 bits: for a distance d, the lane's low quadword
// is multiplied by foldConst(d+32), its high one by foldConst(d-32).
var foldK = [10]uint64{
	foldConst(2048 + 32), foldConst(2048 - 32),
	foldConst(1024 + 32), foldConst(1024 - 32),
	foldConst(512 + 32), foldConst(512 - 32),
	foldConst(256 + 32), foldConst(256 - 32),
	foldConst(128 + 32), foldConst(128 - 32),
}

// foldConst is x^e mod P for CRC-32 (IEEE), bit-reflected and shifted
// left by one: a carry-less product of two reflected operands comes out
// one bit short.
func foldConst(e int) uint64 {
	const p = 0x104C11DB7
	r := uint64(1)
	for range e {
		r <<= 1
		if r>>32 != 0 {
			r ^= p
		}
	}
	return uint64(bits.Reverse32(uint32(r))) << 1
}
