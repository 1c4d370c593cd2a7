package statemachine

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMutantRNGIntnMatchesLemire: intn draws a uniform integer in [0, n)
// (EV-SET-3: the pseudo-random rotation order and the EVs drawn at random
// must not favour some values). For n that is not a power of two,
// math/rand/v2's Uint64N is Lemire's method with the same rejection, so the
// two agree draw for draw on the same PCG stream. n = 2^62 + 1 rejects about
// a quarter of the draws: the rejection loop (intn's lo < thresh) runs. With
// n = 3 × 2^61, lo takes only the values 2^61 × k and thresh is 2^62: an
// eighth of the draws give lo == thresh exactly, which Lemire's method
// accepts.
func TestMutantRNGIntnMatchesLemire(t *testing.T) {
	const seed = 11
	for _, n := range []int{3, 7, 1000, 1<<62 + 1, 3<<61 + 5, 3 << 61, 1<<63 - 1} {
		r := newRNG(seed)
		ref := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		rejected := 0
		for i := range 4000 {
			probe := r
			if _, lo := bits.Mul64(probe.next(), uint64(n)); lo < -uint64(n)%uint64(n) {
				rejected++
			}
			got, want := r.intn(n), int(ref.Uint64N(uint64(n)))
			if got != want {
				t.Fatalf("n=%d draw %d: intn %d, Lemire's method %d", n, i, got, want)
			}
			if got < 0 || got >= n {
				t.Fatalf("n=%d draw %d: intn %d outside [0, n)", n, i, got)
			}
		}
		if n == 1<<62+1 && rejected < 500 {
			t.Errorf("n=%d: %d of 4000 draws rejected, want about 1000: the rejection loop is not exercised", n, rejected)
		}
	}
}

// TestMutantRNGShuffleFisherYates: shuffle is Fisher-Yates over intn, one
// draw per position from the last down to 1 (EV-SET-3: every order of the
// active set equally likely; EV-ST-6 draws the next order from the same
// stream, so shuffle consumes exactly len(s) - 1 draws).
func TestMutantRNGShuffleFisherYates(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 17} {
		s := make([]uint16, n)
		for i := range s {
			s[i] = uint16(i)
		}
		want := slices.Clone(s)
		r, ref := newRNG(5), newRNG(5)
		r.shuffle(s)
		for i := n - 1; i > 0; i-- {
			j := ref.intn(i + 1)
			want[i], want[j] = want[j], want[i]
		}
		if !slices.Equal(s, want) {
			t.Errorf("n=%d: shuffle gave %v, Fisher-Yates %v", n, s, want)
		}
		if a, b := r.next(), ref.next(); a != b {
			t.Errorf("n=%d: the stream after shuffle differs (%#x, want %#x): shuffle took a draw too many or too few", n, a, b)
		}
	}
	// All 6 orders of 3 elements come up over 600 shuffles.
	r := newRNG(9)
	seen := map[[3]uint16]bool{}
	for range 600 {
		s := []uint16{0, 1, 2}
		r.shuffle(s)
		seen[[3]uint16(s)] = true
	}
	if len(seen) != 6 {
		t.Errorf("600 shuffles of 3 elements gave %d orders, want 6", len(seen))
	}
}

// TestMutantRNGMatchesPCG: rng is math/rand/v2's PCG-DXSM written out, so
// a seed draws the same stream as before (the simulator's and the
// statemachine's seeded runs do not change) and the stream keeps PCG's
// statistical quality, which the rotation order and the EVs drawn at
// random rely on (EV-SET-3, EV-ST-6).
func TestMutantRNGMatchesPCG(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1<<63 + 12345, ^uint64(0)} {
		r := newRNG(seed)
		ref := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
		for i := range 10000 {
			if got, want := r.next(), ref.Uint64(); got != want {
				t.Fatalf("seed %#x draw %d: %#x, math/rand/v2's PCG %#x", seed, i, got, want)
			}
		}
	}
}
