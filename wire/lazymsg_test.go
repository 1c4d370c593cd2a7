package wire

import (
	"fmt"
	"math"
	"testing"
)

// TestLazyMessageAsFmt: an error DecodeInto wrote formats its message
// (Message, AppendMessage, Error) as fmt.Sprintf would the same format and
// operands, for every format the decoder uses, over small, large and
// negative operands.
func TestLazyMessageAsFmt(t *testing.T) {
	formats := []string{
		"need %d bytes, have %d",
		"EtherType 0x%04x is neither IPv4 nor IPv6",
		"version %d, want 4",
		"IHL %d: IPv4 options are not used by MRC",
		"total length %d, frame has %d bytes from the IP header",
		"protocol %d, want UDP (17)",
		"version %d, want 6",
		"payload length %d, frame has %d bytes after the IPv6 header",
		"next header %d, want UDP (17), IPv6 (41) or routing (43)",
		"inner next header %d, want UDP (17)",
		"routing type %d, want 4 (SRH)",
		"%d segments, at most %d",
		"hdr ext len %d, want %d for %d segments and no TLVs",
		"next header %d, want IPv6 (41)",
		"length %d, IP datagram leaves %d bytes",
		"destination port %d is not MRC under profile %q",
		"opcode 0x%02X is not an MRC opcode",
		"pad count %d exceeds the %d payload bytes",
		"100%% of %d",
	}
	values := []int{0, 1, 7, 10, 0xab, 255, 256, 0xABCD, 65535, 1 << 20, -1, -12, -0xabc, math.MaxInt, math.MinInt}
	for _, f := range formats {
		for i, v := range values {
			a := []int{v, values[(i+3)%len(values)], values[(i+5)%len(values)]}
			q := `openmrc "x"`
			var p Packet
			p.errTo = new(Error)
			e := p.errAtQ(ErrInvalid, "BTH", 3, "f", ReqBTH2, f, q, a...)
			var want string
			if n := countVerbs(f); f == formats[15] {
				want = fmt.Sprintf(f, a[0], q)
			} else {
				args := make([]any, n)
				for j := range args {
					args[j] = a[j]
				}
				want = fmt.Sprintf(f, args...)
			}
			if got := e.Message(); got != want {
				t.Errorf("%q with %v: %q, want %q", f, a, got, want)
			}
			if got := string(e.AppendMessage([]byte("x"))); got != "x"+want {
				t.Errorf("AppendMessage: %q, want %q", got, "x"+want)
			}
			eager := (&Packet{}).errAtQ(ErrInvalid, "BTH", 3, "f", ReqBTH2, f, q, a...)
			if eager.Msg != want || eager.Error() != e.Error() {
				t.Errorf("%q: Decode's error %q (Msg %q), DecodeInto's %q", f, eager.Error(), eager.Msg, e.Error())
			}
		}
	}
}

func countVerbs(f string) int {
	n := 0
	for i := 0; i < len(f)-1; i++ {
		if f[i] == '%' {
			if f[i+1] == '%' {
				i++
				continue
			}
			n++
		}
	}
	return n
}

// TestDecodeIntoAsDecode: for frames of every shape and their mutations,
// DecodeInto gives Decode's packet and an error with Decode's fields and
// text, and on the frames that fail it allocates nothing.
func TestDecodeIntoAsDecode(t *testing.T) {
	for _, c := range fastCodecs(t) {
		var bad [][]byte
		for _, f := range fastFrames(t, c) {
			for _, m := range mutations(f) {
				var p1, p2 Packet
				var e Error
				e1, e2 := c.Decode(m, &p1), c.DecodeInto(m, &p2, &e)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("%x\nDecode error %v\nDecodeInto error %v", m, e1, e2)
				}
				if !samePacket(&p1, &p2) {
					t.Fatalf("%x: DecodeInto's packet differs from Decode's", m)
				}
				if e1 == nil {
					continue
				}
				w1 := e1.(*Error)
				if e2 != error(&e) || w1.Error() != e.Error() || w1.Msg != e.Message() || e.Msg != "" ||
					w1.Kind != e.Kind || w1.Header != e.Header || w1.Offset != e.Offset || w1.Field != e.Field || w1.Req != e.Req {
					t.Fatalf("%x\nDecode error %#v\nDecodeInto error %#v", m, w1, e2)
				}
				bad = append(bad, m)
			}
		}
		if len(bad) == 0 {
			t.Fatal("no mutation fails to decode")
		}
		var p Packet
		var e Error
		if a := testing.AllocsPerRun(10, func() {
			for _, m := range bad {
				_ = c.DecodeInto(m, &p, &e)
			}
		}); a != 0 {
			t.Errorf("%s: DecodeInto of %d malformed frames: %.1f allocations, want 0", c.prof.Name, len(bad), a)
		}
	}
}
