package conformance

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestEVTimesIsAMap: evTimes answers as a Go map does (get, len, the EVs
// each visits) after every step of long random runs of puts and deletes,
// over key sets small enough that probe runs overlap, wrap around the
// table's end and are cut by deletes, and large enough to grow it several
// times; a zero time is an entry like any other.
func TestEVTimesIsAMap(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, keys := range []uint32{4, 40, 400, 4000} {
		var tab evTimes
		ref := map[uint32]int64{}
		for step := range 20000 {
			ev := rng.Uint32N(keys) * 0x10001 // also keys equal in their low bits
			if _, ok := ref[ev]; ok && rng.IntN(2) == 0 {
				tab.del(ev)
				delete(ref, ev)
			} else if !ok {
				ns := int64(rng.IntN(3))
				tab.put(ev, ns)
				ref[ev] = ns
			} else {
				tab.del(ev + 1) // not held (ev + 1 is no key): nothing changes
			}
			if tab.len() != len(ref) {
				t.Fatalf("seed %d keys %d step %d: len %d, map %d", seed, keys, step, tab.len(), len(ref))
			}
			probe := rng.Uint32N(keys) * 0x10001
			ns, ok := tab.get(probe)
			if want, wok := ref[probe]; ok != wok || ns != want {
				t.Fatalf("seed %d keys %d step %d: get(%d) = %d, %v; map %d, %v", seed, keys, step, probe, ns, ok, want, wok)
			}
		}
		seen := map[uint32]bool{}
		tab.each(func(ev uint32) { seen[ev] = true })
		for ev, ns := range ref {
			if got, ok := tab.get(ev); !ok || got != ns || !seen[ev] {
				t.Fatalf("seed %d keys %d: EV %d: get %d, %v, visited %v; map %d", seed, keys, ev, got, ok, seen[ev], ns)
			}
		}
		if len(seen) != len(ref) {
			t.Fatalf("seed %d keys %d: each visits %d EVs, map holds %d", seed, keys, len(seen), len(ref))
		}
		if len(tab.slots) > max(16, 4*int(keys)) { // doubled at half full: under four slots an entry at its peak
			t.Errorf("seed %d keys %d: %d slots for at most %d entries", seed, keys, len(tab.slots), keys)
		}
	}
}
