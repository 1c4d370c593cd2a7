package conformance

import (
	"math/bits"
	"math/rand/v2"
)

// evTimes maps EVs to times (ns since the first frame): an open-addressing
// table with linear probing and backward-shift deletion, so that the
// lookup, insert and delete a write or SACK makes cost a hash and a probe
// or two, not a Go map's delete. It doubles at half full; callers bound
// its entries (len) by MaxEVsPerFlow, so it holds at most twice as many
// slots. The hash is seeded per table: EVs are the capture's, and a seed
// it cannot know keeps them from piling into one probe run. Iteration
// order (each) follows the seed: callers only count.
type evTimes struct {
	slots []evTime
	n     int
	seed  uint32
	shift uint8 // 32 - log2(len(slots))
}

type evTime struct {
	ev   uint32
	used bool
	ns   int64
}

// home is the slot where ev's probe run starts.
func (t *evTimes) home(ev uint32) int {
	h := ev ^ t.seed
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	h *= 0xC2B2AE35
	h ^= h >> 16
	return int(h >> t.shift)
}

func (t *evTimes) len() int { return t.n }

// get returns the time of ev, if it holds one.
func (t *evTimes) get(ev uint32) (int64, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(ev); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return 0, false
		}
		if s.ev == ev {
			return s.ns, true
		}
	}
}

// put stores ns as the time of ev, which the table does not hold.
func (t *evTimes) put(ev uint32, ns int64) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	i := t.home(ev)
	for t.slots[i].used {
		i = (i + 1) & mask
	}
	t.slots[i] = evTime{ev: ev, used: true, ns: ns}
	t.n++
}

func (t *evTimes) grow() {
	old := t.slots
	if old == nil {
		t.seed = rand.Uint32()
	}
	size := max(16, 2*len(old))
	t.slots, t.n, t.shift = make([]evTime, size), 0, uint8(32-bits.Len(uint(size-1)))
	for _, s := range old {
		if s.used {
			t.put(s.ev, s.ns)
		}
	}
}

// del removes ev, if held. The entries after it in its probe run move
// back into the hole where their own run allows, so that no lookup stops
// short at it (no tombstones).
func (t *evTimes) del(ev uint32) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(ev)
	for ; t.slots[i].ev != ev || !t.slots[i].used; i = (i + 1) & mask {
		if !t.slots[i].used {
			return
		}
	}
	for j := (i + 1) & mask; t.slots[j].used; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home lies
		// cyclically in (i, j].
		if k := t.home(t.slots[j].ev); (j-k)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = evTime{}
	t.n--
}

// each calls fn with every EV held.
func (t *evTimes) each(fn func(ev uint32)) {
	for i := range t.slots {
		if t.slots[i].used {
			fn(t.slots[i].ev)
		}
	}
}
