package statemachine

import (
	"math/bits"
	"math/rand/v2"
)

// rng is a PCG held by value so that a QP copies (Clone) with its random
// stream. It is the only source of randomness in the package.
type rng struct{ pcg rand.PCG }

func newRNG(seed uint64) rng {
	return rng{pcg: *rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)}
}

func (r *rng) next() uint64 { return r.pcg.Uint64() }

// intn returns a uniform integer in [0, n) by Lemire's method; n > 0.
func (r *rng) intn(n int) int {
	hi, lo := bits.Mul64(r.next(), uint64(n))
	if lo < uint64(n) {
		thresh := -uint64(n) % uint64(n)
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), uint64(n))
		}
	}
	return int(hi)
}

// shuffle permutes s in place (Fisher-Yates).
func (r *rng) shuffle(s []uint16) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}
