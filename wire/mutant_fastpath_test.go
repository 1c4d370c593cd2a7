package wire

// Tests written against mutants of fastpath.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"bytes"
	"testing"
)

// fastWrites returns the IPv4 and the IPv6 write frames of fastFrames
// under the default codec, each a copy.
func fastWrites(t *testing.T) (v4, v6 [][]byte) {
	for _, b := range fastFrames(t, Default) {
		switch {
		case len(b) > fastV4BTH && b[12] == 0x08 && b[13] == 0x00 && b[14] == 0x45 && Opcode(b[fastV4BTH]).IsWrite():
			v4 = append(v4, bytes.Clone(b))
		case len(b) > fastBTH && b[12] == 0x86 && b[13] == 0xDD && b[fastIP+6] == ProtoUDP && Opcode(b[fastBTH]).IsWrite():
			v6 = append(v6, bytes.Clone(b))
		}
	}
	if len(v4) == 0 || len(v6) == 0 {
		t.Fatalf("fastFrames: %d IPv4 and %d IPv6 write frames", len(v4), len(v6))
	}
	return v4, v6
}

// TestMutantFastPathNotUDP (WIRE-ENC-1): a frame whose IP protocol or next
// header is not UDP decodes as the general decoder decodes it, whatever
// the Ethernet addresses hold (here 17, UDP's number, where a misplaced
// read of the protocol byte would find it).
func TestMutantFastPathNotUDP(t *testing.T) {
	v4, v6 := fastWrites(t)
	for _, b := range v4 {
		b[5], b[fastIP+9] = ProtoUDP, 6
		checkSame(t, Default, b, &Packet{})
	}
	for _, b := range v6 {
		b[8], b[fastIP+6] = ProtoUDP, 6
		checkSame(t, Default, b, &Packet{})
	}
}

// TestMutantFastPathIPLength (WIRE-ENC-1): the IP length the fast path
// checks and stores is the IP header's own, not bytes near it: an IPv4
// datagram longer than its UDP datagram by over 2 KB, and an IPv6 one
// claiming more bytes than the frame holds while the source MAC's last
// two bytes hold the true length, decode as the general decoder decodes
// them.
func TestMutantFastPathIPLength(t *testing.T) {
	v4, v6 := fastWrites(t)
	for _, b := range v4 {
		b = append(b, make([]byte, 2100)...)
		be.PutUint16(b[fastIP+2:], uint16(len(b)-fastIP))
		checkSame(t, Default, b, &Packet{})
	}
	for _, b := range v6 {
		be.PutUint16(b[10:], uint16(len(b)-fastUDP))
		be.PutUint16(b[fastIP+4:], uint16(len(b)-fastUDP+100))
		checkSame(t, Default, b, &Packet{})
	}
}
