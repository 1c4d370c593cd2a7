package wire

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestIPv4ChecksumMatchesReference: IPv4Checksum, which sums the header
// 32 bits at a time in little-endian order, equals RFC 791's sum of
// big-endian 16-bit words on random headers and on headers of all zeros,
// all ones and single set bytes (the sums that fold to 0 and 0xFFFF).
func TestIPv4ChecksumMatchesReference(t *testing.T) {
	ref := func(h []byte) uint16 {
		s := 0
		for i := 0; i < 20; i += 2 {
			if i != 10 {
				s += int(h[i])<<8 | int(h[i+1])
			}
		}
		for s > 0xFFFF {
			s = s&0xFFFF + s>>16
		}
		return ^uint16(s)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var hs [][]byte
	for i := range 21 {
		for _, v := range []byte{0, 0xFF, 0x80, 0x01} {
			h := make([]byte, 20)
			if i < 20 {
				h[i] = v
			} else {
				for k := range h {
					h[k] = v
				}
			}
			hs = append(hs, h)
		}
	}
	for range 100000 {
		h := make([]byte, 20)
		for k := range h {
			h[k] = byte(rng.Uint32())
		}
		hs = append(hs, h)
	}
	for _, h := range hs {
		if got, want := IPv4Checksum(h), ref(h); got != want {
			t.Fatalf("seed %d: header % x: checksum %#04x, reference %#04x", seed, h, got, want)
		}
	}
}
