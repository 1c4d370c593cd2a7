package fabric

import (
	"math"
	"math/rand/v2"
)

// rng is the fabric's only source of randomness: a PCG seeded from
// Config.Seed. Every impairment, ECN mark and jitter draws from it in event
// order, so a run is a function of (seed, scenario).
type rng struct{ pcg rand.PCG }

func newRNG(seed uint64) rng {
	return rng{pcg: *rand.NewPCG(seed, seed^0x6a09e667f3bcc909)}
}

func (r *rng) next() uint64 { return r.pcg.Uint64() }

// hit reports true with probability p/2^32.
func (r *rng) hit(p uint32) bool {
	switch p {
	case 0:
		return false
	case math.MaxUint32:
		return true // prob(1): certain, not 1 − 2^-32
	}
	return uint32(r.next()>>32) < p
}

// upto returns a uniform value in [0, n]; n ≥ 0.
func (r *rng) upto(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return int64(r.next() % uint64(n+1))
}

// prob converts a probability to the threshold hit compares against.
// Probabilities at or above 1 always hit.
func prob(p float64) uint32 {
	switch {
	case p <= 0 || math.IsNaN(p):
		return 0
	case p >= 1:
		return math.MaxUint32
	}
	return uint32(p * (1 << 32))
}
