package wire

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestFoldConstants: foldConst gives, for a distance of 512 bits, the
// constants crc32's own 128-bit loop folds with (Intel's white paper on
// CRC with PCLMULQDQ: 0x154442bd4, 0x1c6e41596), and for 128 bits the
// ones it reduces with (0x1751997d0, 0xccaa009e).
func TestFoldConstants(t *testing.T) {
	if got := [2]uint64{foldConst(512 + 32), foldConst(512 - 32)}; got != [2]uint64{0x154442bd4, 0x1c6e41596} {
		t.Errorf("512-bit fold constants %#x", got)
	}
	if got := [2]uint64{foldConst(128 + 32), foldConst(128 - 32)}; got != [2]uint64{0x1751997d0, 0x0ccaa009e} {
		t.Errorf("128-bit fold constants %#x", got)
	}
}

// foldWidths lists the register widths this CPU runs foldVec with, as its
// zmm argument: none, YMM only (false), or YMM and ZMM (false, true).
func foldWidths() []bool {
	switch {
	case canFoldZMM:
		return []bool{false, true}
	case canFold:
		return []bool{false}
	}
	return nil
}

// TestUpdateIEEE: updateIEEE, and foldVec with each register width the
// CPU runs (whichever updateIEEE uses), are crc32.Update for every length
// to 4 KiB and past it, at every alignment mod 64, from random registers.
func TestUpdateIEEE(t *testing.T) {
	t.Logf("canFold %v, canFoldZMM %v", canFold, canFoldZMM)
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	buf := make([]byte, 9000+64)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	lengths := []int{}
	for n := 0; n <= 4200; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 8191, 8192, 8193, 9000)
	for _, n := range lengths {
		off := int(rng.Uint32() % 64)
		p := buf[off : off+n]
		c := rng.Uint32()
		want := crc32.Update(c, crc32.IEEETable, p)
		if got := updateIEEE(c, p); got != want {
			t.Fatalf("seed %d: length %d at offset %d from %#x: %#x, crc32.Update %#x", seed, n, off, c, got, want)
		}
		for _, zmm := range foldWidths() {
			if n < 256 {
				break
			}
			if got := foldUpdateWith(zmm, c, p); got != want {
				t.Fatalf("seed %d: foldUpdateWith(zmm %v), length %d at offset %d from %#x: %#x, crc32.Update %#x", seed, zmm, n, off, c, got, want)
			}
		}
	}
}

func BenchmarkUpdateIEEE(b *testing.B) {
	buf := make([]byte, 4096)
	for _, n := range []int{256, 512, 1024, 2048, 4096} {
		b.Run(fmt.Sprintf("fold/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				updateIEEE(0, buf[:n])
			}
		})
		for _, zmm := range foldWidths() {
			name := map[bool]string{false: "ymm", true: "zmm"}[zmm]
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for range b.N {
					foldUpdateWith(zmm, 0, buf[:n])
				}
			})
		}
		b.Run(fmt.Sprintf("crc32/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				crc32.Update(0, crc32.IEEETable, buf[:n])
			}
		})
	}
}

// FuzzUpdateIEEE: updateIEEE and foldVec with each register width the CPU
// runs agree with crc32.Update on any input from any register.
func FuzzUpdateIEEE(f *testing.F) {
	f.Add(uint32(0), make([]byte, 256))
	f.Add(^uint32(0), make([]byte, 4157))
	f.Fuzz(func(t *testing.T, c uint32, p []byte) {
		want := crc32.Update(c, crc32.IEEETable, p)
		if got := updateIEEE(c, p); got != want {
			t.Fatalf("updateIEEE, length %d from %#x: %#x, crc32.Update %#x", len(p), c, got, want)
		}
		for _, zmm := range foldWidths() {
			if len(p) < 256 {
				break
			}
			if got := foldUpdateWith(zmm, c, p); got != want {
				t.Fatalf("foldUpdateWith(zmm %v), length %d from %#x: %#x, crc32.Update %#x", zmm, len(p), c, got, want)
			}
		}
	})
}
