package wire

// Tests written against mutants of build.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestMutantAppendAfterPrefix (WIRE-ICRC-1): Append after bytes already in
// dst writes the same frame as into an empty buffer, ICRC included, and
// leaves the packet with the same header offsets, measured from the
// frame's own start.
func TestMutantAppendAfterPrefix(t *testing.T) {
	prefix := []byte("prefix!")
	for _, p := range samplePackets() {
		alone, inBuf := p, p
		want, err := Default.Append(nil, &alone)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Default.Append(append([]byte(nil), prefix...), &inBuf)
		if err != nil {
			t.Fatalf("%s after a prefix: %v", p.BTH.Opcode, err)
		}
		if !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Errorf("%s after a %d-byte prefix:\n got %x\nwant %x", p.BTH.Opcode, len(prefix), got[len(prefix):], want)
		}
		if !reflect.DeepEqual(alone, inBuf) {
			t.Errorf("%s: the packet after Append behind a prefix differs from one appended alone:\n%+v\n%+v", p.BTH.Opcode, inBuf, alone)
		}
	}
}

// TestMutantDatagramSizeLimit (WIRE-LEN-1): the largest datagram Append
// takes is 0xFFFF − 60 bytes of UDP (an IPv4 total length that fits with
// the longest IPv4 header); a packet with a payload 4 bytes longer (the
// datagram grows in 4-byte steps) is refused with WIRE-LEN-1, naming its
// size.
func TestMutantDatagramSizeLimit(t *testing.T) {
	mk := func(n int) Packet {
		var p Packet
		for _, s := range samplePackets() {
			if s.BTH.Opcode == OpWriteOnly && !s.IsIPv6 && !s.Eth.HasVLAN {
				p = s
			}
		}
		if p.BTH.Opcode != OpWriteOnly {
			t.Fatal("no sample WRITE_ONLY over IPv4")
		}
		p.Payload, p.RETH.DMALength = make([]byte, n), uint32(n)
		return p
	}
	p := mk(0)
	if _, err := Default.Append(nil, &p); err != nil {
		t.Fatal(err)
	}
	const limit = 0xFFFF - 60 - 3 // the largest multiple of 4 at or below 0xFFFF − 60
	n := limit - int(p.UDP.Length)
	p = mk(n)
	if _, err := Default.Append(nil, &p); err != nil || p.UDP.Length != limit {
		t.Fatalf("payload %d: %v, UDP length %d; want accepted at %d", n, err, p.UDP.Length, limit)
	}
	p = mk(n + 4)
	_, err := Default.Append(nil, &p)
	var e *Error
	if !errors.As(err, &e) || e.Req != ReqLEN1 || !strings.Contains(e.Msg, "datagram of 65476 bytes") {
		t.Errorf("payload %d (a datagram of %d bytes): %v; want WIRE-LEN-1 naming 65476 bytes", n+4, limit+4, err)
	}
}

// TestMutantSRHSegmentLimit (WIRE-ENC-2): an SRH of MaxSRHSegments segments
// (last_entry MaxSRHSegments − 1) is encoded; one more is refused with
// WIRE-ENC-2, naming the count.
func TestMutantSRHSegmentLimit(t *testing.T) {
	var base Packet
	for _, s := range samplePackets() {
		if s.HasSRH {
			base = s
		}
	}
	if !base.HasSRH {
		t.Fatal("no sample packet with an SRH")
	}
	for i := range base.SRH.Segments {
		base.SRH.Segments[i] = base.SRH.Segments[0]
	}
	p := base
	p.SRH.LastEntry, p.SRH.SegmentsLeft = MaxSRHSegments-1, MaxSRHSegments-1
	b, err := Default.Append(nil, &p)
	if err != nil {
		t.Fatalf("%d segments: %v", MaxSRHSegments, err)
	}
	var got Packet
	if err := Default.Decode(b, &got); err != nil || got.SRH.LastEntry != MaxSRHSegments-1 {
		t.Errorf("%d segments: decoded last_entry %d, %v", MaxSRHSegments, got.SRH.LastEntry, err)
	}
	p = base
	p.SRH.LastEntry = MaxSRHSegments
	_, err = Default.Append(nil, &p)
	var e *Error
	if !errors.As(err, &e) || e.Req != ReqENC2 || !strings.Contains(e.Msg, "9 segments, at most 8") {
		t.Errorf("%d segments: %v; want WIRE-ENC-2 naming 9 segments", MaxSRHSegments+1, err)
	}
}

// TestMutantIPv4ChecksumCapture: IPv4Checksum gives the header checksum a
// NIC wrote (RFC 791's one's complement sum; no requirement of the spec
// names it) on the captured CNP, whose identification (0x718C) and flags
// (DF) are not zero, so that every 16-bit word of the header counts.
func TestMutantIPv4ChecksumCapture(t *testing.T) {
	b := unhex(t, cnpFrame)
	h := append([]byte(nil), b[14:34]...)
	if got := IPv4Checksum(h); got != 0x9161 {
		t.Errorf("checksum %#04x of the captured header, want the NIC's 0x9161", got)
	}
}
