package conformance

import (
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// tieTick is one clock tick at one capture point for the planners: each
// queue's frames.
type tieTick [][]tieFrame

// tieFrame is a frame of a tieTick: its tie key and its one data byte.
type tieFrame struct {
	key  tieKey
	data byte
}

// loadTieTick puts tick's frames in a merger's queues (interface q holds
// tick[q]) and loads them (loadTick) as planPoint is given them.
func loadTieTick(tick tieTick) (*merger, []tieCand) {
	var frames []tieFrame
	m := &merger{key: func(f *pcap.Frame, _ *pcap.Interface) tieKey { return frames[f.Number].key }}
	m.queues = make([]mqueue, len(tick))
	var g []tieCand
	for q, fs := range tick {
		for _, fr := range fs {
			i := m.slot()
			i.f = pcap.Frame{Number: len(frames), Interface: q, Data: []byte{fr.data}}
			frames = append(frames, fr)
			m.queues[q].push(i)
		}
		g = append(g, tieCand{id: q, n: len(fs)})
	}
	m.loadTick(g)
	return m, g
}

// planBoth plans tick by planPoint and by planScan, the general planner,
// and returns both plans (runs of queue and count) and tie counts, and
// whether planPoint took planMerge's way.
func planBoth(tick tieTick) (fast, scan []tieRun, fastTies, scanTies int, merged bool) {
	m, g := loadTieTick(tick)
	merged = m.ts.mergeable()
	m.planPoint(g)
	fast, fastTies = slices.Clone(m.plan), m.ties
	m, g = loadTieTick(tick)
	m.ts.link()
	m.planScan(g)
	return fast, m.plan, fastTies, m.ties, merged
}

// randomTieTick returns a tick of 2 to 6 queues of 1 to 5 frames each,
// one of them (byte 0) sometimes alike to another, of two sequences or
// more, whose PSNs are near one another or, in one tick of three, spread
// over the PSN space. Each queue's frames are of one sequence in most
// ticks.
func randomTieTick(rng *rand.Rand) tieTick {
	spread := rng.Intn(3) == 0
	oneSeq := rng.Intn(4) != 0
	base := uint32(rng.Intn(1 << 24))
	tick := make(tieTick, 2+rng.Intn(5))
	for q := range tick {
		seq := rng.Intn(3)
		for range 1 + rng.Intn(5) {
			if !oneSeq {
				seq = rng.Intn(3)
			}
			k := tieKey{rank: uint8(rng.Intn(2)), mrc: rng.Intn(8) != 0, kind: seqKind(seq % 2), qp: 0x100, pair: uint64(seq / 2)}
			k.pos = (base + uint32(rng.Intn(6))) & 0xFFFFFF
			if spread {
				k.pos = uint32(rng.Intn(1 << 24))
			}
			if oneSeq {
				k.rank, k.mrc = uint8(seq%2), true // a sequence's frames share their rank
			}
			tick[q] = append(tick[q], tieFrame{k, byte(rng.Intn(2))})
		}
	}
	return tick
}

// TestPlanMergeAsPlanScan: planPoint plans every tick as planScan, the
// general planner, does: random ticks, those planMerge plans (mergeable)
// and the others, and ticks whose PSNs are no order (three heads of one
// sequence, each a third of the PSN space after the one before, so that
// psnAfter goes round), which mergeable must leave to planScan.
func TestPlanMergeAsPlanScan(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	w := func(psn uint32) tieFrame {
		return tieFrame{key: tieKey{rank: 1, mrc: true, pos: psn, qp: 0x101}}
	}
	third := uint32(1 << 24 / 3)
	ticks := []tieTick{
		{{w(0)}, {w(third)}, {w(2 * third)}},
		{{w(2 * third)}, {w(0)}, {w(third)}},
		{{w(third)}, {w(2 * third)}, {w(0)}},
		{{w(0), w(1)}, {w(third)}, {w(2 * third)}},
	}
	for range 20000 {
		ticks = append(ticks, randomTieTick(rng))
	}
	merged := 0
	for i, tick := range ticks {
		fast, scan, fastTies, scanTies, m := planBoth(tick)
		if !slices.Equal(fast, scan) || fastTies != scanTies {
			t.Fatalf("seed %d, tick %d %v (planMerge's: %v): planPoint planned %v (%d ties), planScan %v (%d ties)",
				seed, i, tick, m, fast, fastTies, scan, scanTies)
		}
		if m {
			merged++
		}
	}
	t.Logf("planMerge planned %d ticks of %d", merged, len(ticks))
	if merged < len(ticks)/3 || merged > len(ticks)*9/10 {
		t.Errorf("seed %d: planMerge planned %d ticks of %d: the test tries too few of one way", seed, merged, len(ticks))
	}
}

// TestPlanTickPairAsPlanScan: a tick of two frames at one capture point
// on two interfaces, which planTick plans by pairFirst alone, is planned
// as planScan, the general planner, plans it: random keys of few values,
// so that keys and then bytes are often alike, in either order of the
// queues.
func TestPlanTickPairAsPlanScan(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	key := func() tieKey {
		return tieKey{rank: uint8(rng.Intn(2)), mrc: rng.Intn(4) != 0, kind: seqKind(rng.Intn(2)), pos: uint32(rng.Intn(3)), qp: uint32(rng.Intn(2)), pair: uint64(rng.Intn(2))}
	}
	for i := range 5000 {
		a, b := rng.Intn(4), rng.Intn(4)
		if a == b {
			continue
		}
		frames := []tieFrame{{key(), byte(rng.Intn(2))}, {key(), byte(rng.Intn(2))}}
		load := func() *merger {
			m := &merger{key: func(f *pcap.Frame, _ *pcap.Interface) tieKey { return frames[f.Number].key }}
			m.queues = make([]mqueue, 4)
			for k, q := range []int{a, b} {
				s := m.slot()
				s.f = pcap.Frame{Number: k, Interface: q, Data: []byte{frames[k].data}}
				m.queues[q].push(s)
				m.queues[q].rank = 1
			}
			return m
		}
		m := load()
		m.cand = []tieCand{{id: a, n: 1}, {id: b, n: 1}}
		m.planTick()
		scan := load()
		g := []tieCand{{id: min(a, b), n: 1}, {id: max(a, b), n: 1}} // planTick's order
		scan.loadTick(g)
		scan.ts.link()
		scan.planScan(g)
		if !slices.Equal(m.plan, scan.plan) || m.ties != scan.ties {
			t.Fatalf("seed %d, tick %d: queues %d, %d holding %v: planTick planned %v (%d ties), planScan %v (%d ties)",
				seed, i, a, b, frames, m.plan, m.ties, scan.plan, scan.ties)
		}
	}
}
