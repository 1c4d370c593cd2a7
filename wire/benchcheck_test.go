package wire

import "testing"

// BenchmarkCheck measures Check on a frame that breaks no rule (the ICRC
// dominates a data frame's) and CheckHeaders on frames that break some:
// the cost of recording a Violation.
func BenchmarkCheck(b *testing.B) {
	f, _ := benchData(b)
	sack, _ := benchCtl(b, OpSACK)
	b.Run("data4096", func(b *testing.B) { benchCheck(b, f, (*Codec).Check, 0) })
	b.Run("sack", func(b *testing.B) { benchCheck(b, sack, (*Codec).Check, 0) })
	b.Run("headers/sack", func(b *testing.B) { benchCheck(b, sack, (*Codec).CheckHeaders, 0) })
	// BTH reserved bits (byte 8) and transport version: two violations.
	bad := append([]byte(nil), sack...)
	_, _, bth := offsets(b, bad)
	bad[bth+8] |= 0x40
	bad[bth+1] |= 0x01
	b.Run("headers/sack-2-violations", func(b *testing.B) { benchCheck(b, bad, (*Codec).CheckHeaders, 2) })
	badICRC := append([]byte(nil), f...)
	badICRC[len(badICRC)-1] ^= 0xFF
	b.Run("data4096-bad-icrc", func(b *testing.B) { benchCheck(b, badICRC, (*Codec).Check, 1) })
}

func offsets(b *testing.B, f []byte) (ip, udp, bth int) {
	var p Packet
	if err := Default.Decode(f, &p); err != nil {
		b.Fatal(err)
	}
	return p.Offsets()
}

func benchCheck(b *testing.B, f []byte, check func(*Codec, []byte, *Packet, []Violation) []Violation, want int) {
	var p Packet
	if err := Default.Decode(f, &p); err != nil {
		b.Fatal(err)
	}
	vs := check(Default, f, &p, nil)
	if len(vs) != want {
		b.Fatalf("%d violations, want %d: %v", len(vs), want, vs)
	}
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		vs = check(Default, f, &p, vs[:0])
	}
}
