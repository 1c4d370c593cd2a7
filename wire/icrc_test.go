package wire

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestICRCMatchesReference: the codec's ICRC, which masks the variant
// fields in a copy of the headers and hands the rest to hash/crc32, equals
// refICRC's byte-by-byte statement of the rule for IPv4 and IPv6 frames
// with random header bytes, every length from a bare BTH to past
// hash/crc32's vectorised cut-offs and some longer ones, and the source
// port covered or masked (WIRE-ICRC-1, WIRE-ICRC-2, WIRE-ICRC-4); so does
// its computation in an ICRCScratch, one reused for every frame.
func TestICRCMatchesReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var s ICRCScratch
	prof := Default.Profile()
	prof.ICRCMaskUDPSrcPort = true
	masked, err := NewCodec(prof)
	if err != nil {
		t.Fatal(err)
	}
	codecs := map[bool]*Codec{false: Default, true: masked}
	for _, v6 := range []bool{false, true} {
		ipOff, ipLen := 14, 20
		if v6 {
			ipLen = 40
		}
		udpOff := ipOff + ipLen
		bthOff := udpOff + 8
		for n := bthOff + BTHLen; n <= bthOff+BTHLen+4200; n++ {
			if n > bthOff+BTHLen+300 && n%61 != 0 {
				continue
			}
			frame := make([]byte, n+ICRCLen)
			for i := range frame {
				frame[i] = byte(rng.Uint32())
			}
			for _, maskPort := range []bool{false, true} {
				got := icrc(frame, ipOff, udpOff, bthOff, n, v6, maskPort)
				pk := Packet{ipOff: ipOff, udpOff: udpOff, bthOff: bthOff, end: n + ICRCLen, IsIPv6: v6}
				if sc := codecs[maskPort].ComputeICRCScratch(frame, &pk, &s); sc != got {
					t.Fatalf("seed %d: v6=%v length %d masked source port=%v: ICRC 0x%08x in a scratch, 0x%08x without", seed, v6, n, maskPort, sc, got)
				}
				want := refICRC(frame, ipOff, udpOff, bthOff, v6)
				if maskPort {
					g := append([]byte(nil), frame...)
					g[udpOff], g[udpOff+1] = 0xff, 0xff
					want = refICRC(g, ipOff, udpOff, bthOff, v6)
				}
				if got != want {
					t.Fatalf("seed %d: v6=%v length %d masked source port=%v: ICRC 0x%08x, reference 0x%08x", seed, v6, n, maskPort, got, want)
				}
			}
		}
	}
}
