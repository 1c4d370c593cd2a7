package wire

// Tests written against mutants of packet.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
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
// is not reported as truncating that header. An IP or UDP length that
// overruns the cut frame (the UDP length left whole, the IP length cut)
// is reported with the bytes the frame has from that header on (WIRE-LEN-1).
func TestMutantTruncationCounts(t *testing.T) {
	n, seen := 0, [3]int{}
	for _, b := range fastFrames(t, Default) {
		var p Packet
		if err := Default.decodeGeneral(b, &p); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		for cut := 0; cut < len(b); cut++ {
			ipOnly := cutFrame(b, cut, &p)
			if cut >= p.udpOff+8 && !p.SRv6 {
				copy(ipOnly[p.udpOff+4:p.udpOff+6], b[p.udpOff+4:])
			}
			for _, c := range [][]byte{b[:cut], cutFrame(b, cut, &p), ipOnly} {
				var q Packet
				var e *Error
				if err := Default.Decode(c, &q); !errors.As(err, &e) || e.Kind != ErrTruncated {
					continue
				}
				var need, have int
				if _, err := fmt.Sscanf(e.Msg, "need %d bytes, have %d", &need, &have); err != nil {
					if k := checkOverrun(t, c, e); k >= 0 {
						seen[k]++
					}
					continue
				}
				if have < 0 || have >= need {
					t.Errorf("%x: %s at %d: need %d bytes, have %d", c, e.Header, e.Offset, need, have)
				}
				n++
			}
		}
	}
	if n == 0 || seen[0] == 0 || seen[1] == 0 || seen[2] == 0 {
		t.Fatalf("%d truncations, %v overrunning IPv4, IPv6 and UDP lengths", n, seen)
	}
}

// checkOverrun checks the byte count in the message of a length field that
// overruns frame c: the bytes the frame has from the header on (after the
// fixed IPv6 header for its payload length). It returns the index of the
// message's format (IPv4, IPv6, UDP), or -1 for another message.
func checkOverrun(t *testing.T, c []byte, e *Error) int {
	t.Helper()
	for i, f := range []struct {
		format string
		after  int
	}{
		{"total length %d, frame has %d bytes from the IP header", 0},
		{"payload length %d, frame has %d bytes after the IPv6 header", 40},
		{"length %d, IP datagram leaves %d bytes", 0},
	} {
		var length, have int
		if _, err := fmt.Sscanf(e.Msg, f.format, &length, &have); err == nil {
			if want := len(c) - e.Offset - f.after; have != want {
				t.Errorf("%x: %s at %d: %q, want %d bytes", c, e.Header, e.Offset, e.Msg, want)
			}
			return i
		}
	}
	return -1
}

// TestMutantPadCountExceeds (WIRE-BTH-9): a write with no payload bytes
// and a pad count of 3 is refused at the BTH's pad_cnt byte, one past the
// opcode, naming the 0 payload bytes it has.
func TestMutantPadCountExceeds(t *testing.T) {
	n := 0
	for _, b := range fastFrames(t, Default) {
		var p Packet
		if err := Default.Decode(b, &p); err != nil || p.Trimmed || !p.BTH.Opcode.IsWrite() || len(p.Payload) != 0 || p.BTH.PadCount != 0 {
			continue
		}
		c := bytes.Clone(b)
		c[p.bthOff+1] |= 0x30
		var q Packet
		var e *Error
		if err := Default.Decode(c, &q); !errors.As(err, &e) || e.Field != "pad_cnt" || e.Offset != p.bthOff+1 ||
			!strings.HasSuffix(e.Msg, "exceeds the 0 payload bytes") {
			t.Errorf("%x: %v, want pad_cnt at %d exceeding the 0 payload bytes", c, err, p.bthOff+1)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no write without payload")
	}
}

// TestMutantSRHSegmentCount (WIRE-ENC-2): an SRH of 9 segments (last_entry
// 8, hdr_ext_len 18 to match) is refused at last_entry as more than
// MaxSRHSegments; one whose hdr_ext_len does not match its last_entry is
// refused naming its segment count, last_entry + 1.
func TestMutantSRHSegmentCount(t *testing.T) {
	n := 0
	for _, b := range fastFrames(t, Default) {
		if b[12] != 0x86 || b[13] != 0xDD || b[fastIP+6] != 43 {
			continue
		}
		srh := fastIP + 40
		c := bytes.Clone(b)
		c[srh+4], c[srh+1] = MaxSRHSegments, 2*(MaxSRHSegments+1)
		var e *Error
		if err := Default.Decode(c, &Packet{}); !errors.As(err, &e) || e.Field != "last_entry" ||
			e.Msg != fmt.Sprintf("%d segments, at most %d", MaxSRHSegments+1, MaxSRHSegments) {
			t.Errorf("%x: %v, want last_entry refused", c, err)
		}
		c = bytes.Clone(b)
		c[srh+1] += 2
		segs := int(c[srh+4]) + 1
		if err := Default.Decode(c, &Packet{}); !errors.As(err, &e) || e.Field != "hdr_ext_len" ||
			!strings.HasSuffix(e.Msg, fmt.Sprintf("for %d segments and no TLVs", segs)) {
			t.Errorf("%x: %v, want hdr_ext_len refused for %d segments", c, err, segs)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no SRv6 frame")
	}
}

// ipv4Writes returns the IPv4 write frames of samplePackets, encoded.
func ipv4Writes(t *testing.T) [][]byte {
	var out [][]byte
	for _, sp := range samplePackets() {
		if sp.IsIPv6 || sp.Eth.HasVLAN || !sp.BTH.Opcode.IsWrite() {
			continue
		}
		b, err := Default.Append(nil, &sp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		t.Fatal("no IPv4 write")
	}
	return out
}

// TestMutantIPv4HeaderOnly (WIRE-LEN-1): an IPv4 total length of 20, the
// header alone, in a frame that holds all of it leaves the UDP header no
// bytes: the decoder reports the UDP header truncated with 0 bytes, with a
// trimmed DSCP or not, rather than the total length as overrunning.
func TestMutantIPv4HeaderOnly(t *testing.T) {
	for _, b := range ipv4Writes(t) {
		for _, dscp := range []uint8{b[fastIP+1] >> 2, Default.Profile().DSCP.Trimmed} {
			b[fastIP+1] = dscp << 2
			be.PutUint16(b[fastIP+2:], 20)
			var e *Error
			if err := Default.Decode(b, &Packet{}); !errors.As(err, &e) || e.Kind != ErrTruncated || e.Header != "UDP" ||
				e.Offset != fastV4UDP || e.Msg != "need 8 bytes, have 0" {
				t.Errorf("DSCP %d, total length 20: %v, want the UDP header truncated to 0 bytes", dscp, err)
			}
		}
	}
}

// TestMutantTrimmedIPv4Lengths (WIRE-TRIM-2): a trimmed IPv4 write whose
// total and UDP lengths are the original packet's, longer than the frame
// cut after its headers, decodes as trimmed; one whose total length is
// under the IPv4 header's 20 bytes is refused at total_length.
func TestMutantTrimmedIPv4Lengths(t *testing.T) {
	prof := Default.Profile()
	for _, b := range ipv4Writes(t) {
		var full Packet
		if err := Default.Decode(b, &full); err != nil {
			t.Fatal(err)
		}
		for _, dscp := range []uint8{prof.DSCP.Trimmed, prof.DSCP.TrimmedLastHop} {
			cut := bytes.Clone(b[:full.hdrEnd+3])
			cut[fastIP+1] = dscp<<2 | 1
			var p Packet
			if err := Default.Decode(cut, &p); err != nil || !p.Trimmed || p.RETH != full.RETH || len(p.Payload) != 0 ||
				p.IP4.TotalLength != full.IP4.TotalLength {
				t.Errorf("DSCP %d, original lengths: %v, trimmed %v, RETH %+v, want %+v", dscp, err, p.Trimmed, p.RETH, full.RETH)
			}
			for tl := range 20 {
				be.PutUint16(cut[fastIP+2:], uint16(tl))
				var e *Error
				if err := Default.Decode(cut, &Packet{}); !errors.As(err, &e) || e.Header != "IPv4" || e.Field != "total_length" {
					t.Errorf("DSCP %d, total length %d: %v, want total_length refused", dscp, tl, err)
				}
			}
		}
	}
}

// TestSRv6InnerLengthOuterDSCP (WIRE-DSCP-6, WIRE-TRIM-2, WIRE-LEN-1): the
// outermost DSCP alone says whether an SRv6 packet is trimmed, for the
// inner IPv6 header's payload length as for the rest. An untrimmed packet
// whose inner payload length overruns the frame is refused there, even
// with a trimmed DSCP in the inner traffic class; a trimmed one whose
// outer length is the trimmed packet's and whose inner length is the
// original's decodes as trimmed, whatever the inner traffic class.
func TestSRv6InnerLengthOuterDSCP(t *testing.T) {
	trimmedTC := Default.Profile().DSCP.Trimmed << 2
	n := 0
	for _, s := range samplePackets() {
		if !s.SRv6 {
			continue
		}
		s.IP6.TrafficClass = trimmedTC
		b, d := frameOf(t, &s, nil)
		be.PutUint16(b[d.ipOff+4:], d.IP6.PayloadLength+64)
		var e *Error
		if err := Default.Decode(b, &Packet{}); !errors.As(err, &e) || e.Kind != ErrTruncated || e.Header != "IPv6" ||
			e.Field != "payload_length" || e.Offset != d.ipOff {
			t.Errorf("SRH %v, untrimmed outer, inner length overrunning: %v, want the inner payload_length refused", s.HasSRH, err)
		}

		s.Outer.TrafficClass, s.IP6.TrafficClass, s.Payload = trimmedTC, 0, nil
		b, d = frameOf(t, &s, nil)
		be.PutUint16(b[d.ipOff+4:], d.IP6.PayloadLength+1024)
		be.PutUint16(b[d.udpOff+4:], d.UDP.Length+1024)
		var p Packet
		if err := Default.Decode(b, &p); err != nil || !p.Trimmed || p.RETH != d.RETH {
			t.Errorf("SRH %v, trimmed, inner lengths the original's: %v, trimmed %v", s.HasSRH, err, p.Trimmed)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d SRv6 samples, want 2", n)
	}
}
