package wire

// Tests written against mutants of packet.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// cutFrame returns b's first n bytes with the IP and UDP lengths, where
// the cut keeps them, rewritten to end at the cut, so that the decoder
// reaches the header the cut falls in (an SRv6 frame's outer IPv6 header
// too). p is b decoded.
func cutFrame(b []byte, n int, p *Packet) []byte {
	c := bytes.Clone(b[:n])
	if p.SRv6 && n >= fastIP+40 { // the outer IPv6 header, before the SRH
		be.PutUint16(c[fastIP+4:], uint16(n-fastIP-40))
	}
	switch {
	case p.IsIPv6 && n >= p.ipOff+40:
		be.PutUint16(c[p.ipOff+4:], uint16(n-p.ipOff-40))
	case !p.IsIPv6 && n >= p.ipOff+20:
		be.PutUint16(c[p.ipOff+2:], uint16(n-p.ipOff))
	}
	if n >= p.udpOff+8 {
		be.PutUint16(c[p.udpOff+4:], uint16(n-p.udpOff))
	}
	return c
}

// TestMutantTruncationCounts (WIRE-ENC-1): every truncation of every frame
// shape, with and without its IP and UDP lengths cut to match, that the
// decoder reports as a header cut short names a header that does not fit: the
// bytes it says the frame has from that header on are fewer than the
// header needs, and not negative. A frame cut exactly at a header's end
// is not reported as truncating that header.
func TestMutantTruncationCounts(t *testing.T) {
	n := 0
	for _, b := range fastFrames(t, Default) {
		var p Packet
		if err := Default.decodeGeneral(b, &p); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		for cut := 0; cut < len(b); cut++ {
			for _, c := range [][]byte{b[:cut], cutFrame(b, cut, &p)} {
				var q Packet
				var e *Error
				if err := Default.Decode(c, &q); !errors.As(err, &e) || e.Kind != ErrTruncated {
					continue
				}
				var need, have int
				if _, err := fmt.Sscanf(e.Msg, "need %d bytes, have %d", &need, &have); err != nil {
					continue // a length field that overruns the frame, not a header cut short
				}
				if have < 0 || have >= need {
					t.Errorf("%x: %s at %d: need %d bytes, have %d", c, e.Header, e.Offset, need, have)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no truncation reported")
	}
}
