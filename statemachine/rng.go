package statemachine

import "math/bits"

// rng is PCG-DXSM: a 128-bit linear congruential state and the "double
// xorshift multiply" output function, the generator math/rand/v2's PCG
// implements, so the same seed draws the same stream (a test holds the two
// together). It is held by value so that a QP copies (Clone) with its
// random stream, and it is the only source of randomness in the package.
// It is written out here so that shuffle, which draws once per entry of the
// active set at every rotation (EV-SET-3), keeps the state in registers.
type rng struct{ hi, lo uint64 }

func newRNG(seed uint64) rng {
	return rng{hi: seed, lo: seed ^ 0x9e3779b97f4a7c15}
}

// The 128-bit multiplier and increment of the LCG, and the 64-bit
// multiplier of the DXSM output step.
const (
	pcgMulHi    = 2549297995355413924
	pcgMulLo    = 4865540595714422341
	pcgIncHi    = 6364136223846793005
	pcgIncLo    = 1442695040888963407
	pcgDXSMMult = 0xda942042e4dd58b5
)

// pcgStep advances the state (hi, lo) one step and returns the new state
// and the draw it gives.
func pcgStep(hi, lo uint64) (nhi, nlo, x uint64) {
	nhi, nlo = bits.Mul64(lo, pcgMulLo)
	nhi += hi*pcgMulLo + lo*pcgMulHi
	var c uint64
	nlo, c = bits.Add64(nlo, pcgIncLo, 0)
	nhi, _ = bits.Add64(nhi, pcgIncHi, c)
	x = nhi ^ nhi>>32
	x *= pcgDXSMMult
	x ^= x >> 48
	return nhi, nlo, x * (nlo | 1)
}

func (r *rng) next() uint64 {
	var x uint64
	r.hi, r.lo, x = pcgStep(r.hi, r.lo)
	return x
}

// intn returns a uniform integer in [0, n) by Lemire's multiply-and-reject
// method; n > 0.
func (r *rng) intn(n int) int {
	var x uint64
	r.hi, r.lo, x = pcgStep(r.hi, r.lo)
	j, low := bits.Mul64(x, uint64(n))
	if low < uint64(n) {
		j, r.hi, r.lo = lemireReject(r.hi, r.lo, uint64(n), j, low)
	}
	return int(j)
}

// lemireReject is intn's rare path: it draws again while the low half of
// the product falls below 2^64 mod n, the draws that would favour some
// values, and returns the draw with the new state.
func lemireReject(hi, lo, n, j, low uint64) (uint64, uint64, uint64) {
	thresh := -n % n
	for low < thresh {
		var x uint64
		hi, lo, x = pcgStep(hi, lo)
		j, low = bits.Mul64(x, n)
	}
	return j, hi, lo
}

// shuffle permutes s in place (Fisher-Yates), drawing as intn does, with
// the state in locals.
func (r *rng) shuffle(s []uint16) {
	hi, lo := r.hi, r.lo
	for i := len(s) - 1; i > 0; i-- {
		n := uint64(i + 1)
		var x uint64
		hi, lo, x = pcgStep(hi, lo)
		j, low := bits.Mul64(x, n)
		if low < n {
			j, hi, lo = lemireReject(hi, lo, n, j, low)
		}
		s[i], s[j] = s[j], s[i]
	}
	r.hi, r.lo = hi, lo
}
