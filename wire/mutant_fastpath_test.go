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

// lengthBases returns two write frames without payload, each as IPv4 and
// as IPv6: a WRITE Middle with pad count 0, whose header stack is the
// shortest, and a WRITE Only with Immediate, TSETH and pad count 3, whose
// stack is the longest.
func lengthBases(t *testing.T) (v4, v6 [][]byte) {
	for _, p := range samplePackets() {
		if p.SRv6 || p.Eth.HasVLAN || p.BTH.Opcode != OpWriteMiddle && p.BTH.Opcode != OpWriteOnlyImm {
			continue
		}
		long := p.BTH.Opcode == OpWriteOnlyImm
		p.Payload, p.BTH.TSPresent = nil, long
		b, err := Default.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		bth := fastV4BTH
		if p.IsIPv6 {
			bth = fastBTH
		}
		if long {
			b[bth+1] |= 3 << 4
		}
		if b = b[:len(b)-ICRCLen]; p.IsIPv6 {
			v6 = append(v6, b)
		} else {
			v4 = append(v4, b)
		}
	}
	if len(v4) != 2 || len(v6) != 2 {
		t.Fatalf("%d IPv4 and %d IPv6 base frames, want 2 of each", len(v4), len(v6))
	}
	return v4, v6
}

// sweepLengths runs checkSame on base, cut or extended with zero bytes,
// at every frame length in [lo, hi], under every IP length that ends the
// IP datagram from before the UDP header to one byte past the frame, and
// every UDP length that ends the UDP datagram from its own header to one
// byte past the IP datagram; into a fresh Packet and into prev by turns.
// ipBase is where the IP length starts counting, ipLenAt where it is,
// udpOff the UDP header's offset. It returns how many frames it checked.
func sweepLengths(t *testing.T, base []byte, lo, hi, ipBase, ipLenAt, udpOff int, prev *Packet) int {
	n := 0
	for size := lo; size <= hi; size++ {
		f := make([]byte, size)
		copy(f, base)
		for il := 0; ipBase+il <= size+1; il++ {
			be.PutUint16(f[ipLenAt:], uint16(il))
			for ul := 0; ul <= max(0, ipBase+il+1-udpOff); ul++ {
				be.PutUint16(f[udpOff+4:], uint16(ul))
				if n++; n%2 == 0 {
					checkSame(t, Default, f, &Packet{})
				} else {
					checkSame(t, Default, f, prev)
				}
			}
		}
	}
	return n
}

// TestFastPathLengths (WIRE-LEN-1, WIRE-ENC-1): on the shortest and the
// longest write stack, over IPv4 and IPv6, with every frame length from
// two bytes short of the fast path's minimum to past its largest header
// stack, and every IP and UDP length up to one byte past the frame and
// the IP datagram, Decode gives exactly the packet and the error of the
// general decoder. These are both sides of each bound the fast path tests
// before it stores (frame length against the IPv4 prefix, the IPv6 header
// stack and the largest write stack; IP length against the frame; UDP
// length against the BTH and the IP length; payload end against the
// header stack), and every length its arithmetic can produce.
func TestFastPathLengths(t *testing.T) {
	v4, v6 := lengthBases(t)
	var prev Packet // a packet of another shape: a SACK over IPv6
	for _, b := range fastFrames(t, Default) {
		if err := Default.decodeGeneral(b, &prev); err == nil && prev.BTH.Opcode == OpSACK && prev.IsIPv6 {
			break
		}
	}
	if prev.BTH.Opcode != OpSACK || !prev.IsIPv6 {
		t.Fatal("fastFrames has no SACK over IPv6")
	}
	n := 0
	for _, b := range v6 {
		n += sweepLengths(t, b, fastStk-2, fastMax+ICRCLen+4, fastUDP, fastIP+4, fastUDP, &prev)
	}
	for _, b := range v4 {
		n += sweepLengths(t, b, fastV4BTH-2, fastV4BTH+fastMax-fastBTH+ICRCLen+4, fastIP, fastIP+2, fastV4UDP, &prev)
	}
	if n < 100000 {
		t.Fatalf("%d frames checked", n)
	}
	t.Logf("%d frames", n)
}
