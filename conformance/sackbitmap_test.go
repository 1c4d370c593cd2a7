package conformance

import (
	"math/rand/v2"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestSACKBitmapFastPath checks sackBitmap (bits past maxSent masked at
// once, the highest PSN from the top bit) against sackBitmapWrapped (bit
// by bit, psnAfter on each) on random SACKs near cack and maxSent,
// including bitmaps that cross the half-space point and the 2^24 wrap
// (LR-SACK selective acknowledgement, LR-RTX-4's highest acknowledged
// PSN), over a few SACKs in a row with PSNs acknowledged cumulatively and
// sent between them (the table's used and ackSel slots, psnTable.open).
func TestSACKBitmapFastPath(t *testing.T) {
	seed := uint64(rand.Uint32())
	rng := rand.New(rand.NewPCG(seed, 1))
	near := func(x uint32) uint32 {
		switch rng.IntN(4) {
		case 0:
			return wire.PSNAdd(x, rng.IntN(200)-100)
		case 1:
			return wire.PSNAdd(x, 1<<23+rng.IntN(200)-100) // around the half-space point
		default:
			return wire.PSNAdd(x, rng.IntN(80)-40)
		}
	}
	for n := 0; n < 5000; n++ {
		first := uint32(rng.IntN(1 << 24))
		if rng.IntN(4) == 0 {
			first = wire.PSNAdd(wire.PSNMask, -rng.IntN(100)) // the table wraps 2^24
		}
		sent := 64 + rng.IntN(64)
		mk := func() *flow {
			fl := newFlow(flowKey{req: "a", rsp: "b", qpn: 1}, 1)
			for i := 0; i < sent; i++ {
				if i%5 != 3 { // PSNs the table does not hold (sent before this point saw the connection)
					fl.psns.put(wire.PSNAdd(first, i), psnInfo{firstFrame: 1, ackSel: i%7 == 0})
				}
			}
			return fl
		}
		fa, fb := mk(), mk()
		fa.haveMax, fa.maxSent = rng.IntN(8) != 0, wire.PSNAdd(first, rng.IntN(sent))
		fb.haveMax, fb.maxSent = fa.haveMax, fa.maxSent
		e := newEngine(DefaultPICS())
		// A few SACKs in a row, the table moving between them (cumulative
		// acknowledgement, new PSNs sent): the fast path skips what the
		// earlier ones marked.
		for k := 0; k < 4; k++ {
			s := &wire.SETH{CACKPSN: near(first), SACKBitmap: rng.Uint64()}
			if rng.IntN(3) == 0 {
				s.SACKBitmap &= rng.Uint64() & rng.Uint64()
			}
			base := near(first)
			s.SACKOffset = int16(wire.PSNDiff(base, s.CACKPSN)) // BitmapBase = cack + offset
			if s.BitmapBase() != base {
				continue
			}
			ha, oka := e.sackBitmap(fa, s)
			hb, okb := e.sackBitmapWrapped(fb, s)
			if ha != hb || oka != okb {
				t.Fatalf("seed %d: cack %d base %d bitmap %#x maxSent %d (%v): high %d, bit by bit %d", seed, s.CACKPSN, base, s.SACKBitmap, fa.maxSent, fa.haveMax, ha, hb)
			}
			for i := -64; i < sent+64; i++ {
				q := wire.PSNAdd(first, i)
				a, b := fa.psns.get(q), fb.psns.get(q)
				if (a == nil) != (b == nil) || a != nil && a.ackSel != b.ackSel {
					t.Fatalf("seed %d: SACK %d, cack %d base %d bitmap %#x maxSent %d (%v): PSN %d %+v, bit by bit %+v", seed, k, s.CACKPSN, base, s.SACKBitmap, fa.maxSent, fa.haveMax, q, a, b)
				}
			}
			if rng.IntN(2) == 0 {
				cack := wire.PSNAdd(first, rng.IntN(sent))
				fa.psns.dropThrough(cack)
				fb.psns.dropThrough(cack)
			}
			if rng.IntN(2) == 0 {
				for i := 0; i < 8; i++ {
					fa.psns.put(wire.PSNAdd(first, sent), psnInfo{firstFrame: 2})
					fb.psns.put(wire.PSNAdd(first, sent), psnInfo{firstFrame: 2})
					sent++
				}
			}
		}
	}
}

// TestBitsAfter checks bitsAfter against psnAfter bit by bit: it may keep
// a bit of a PSN not after x only where it keeps the whole bitmap.
func TestBitsAfter(t *testing.T) {
	seed := uint64(rand.Uint32())
	rng := rand.New(rand.NewPCG(seed, 2))
	for n := 0; n < 100000; n++ {
		x := uint32(rng.IntN(1 << 24))
		base := wire.PSNAdd(x, rng.IntN(160)-100)
		if rng.IntN(4) == 0 {
			base = wire.PSNAdd(x, 1<<23+rng.IntN(200)-100)
		}
		bm := rng.Uint64()
		got := bitsAfter(bm, base, x)
		for i := 0; i < 64; i++ {
			after := psnAfter(wire.PSNAdd(base, i), x)
			kept := got&(1<<i) != 0
			if bm&(1<<i) != 0 && after && !kept || kept && !after && got != bm {
				t.Fatalf("seed %d: base %d x %d bit %d: after %v, kept %v", seed, base, x, i, after, kept)
			}
		}
	}
}
