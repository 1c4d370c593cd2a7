package wire

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/openmrc/mrc/spec"
)

// TestPreICRCIsComputeICRC (WIRE-ICRC-1): an ICRC computed before the
// decode (PreICRC) and taken by ComputeICRCPre equals ComputeICRC on the
// decoded frame, for every sample packet, IPv4 and IPv6 writes of every
// payload length up to 300 bytes and some longer, under the default
// profile, with the source port masked (WIRE-ICRC-4) and under the emu
// preset (AMB-90), and on frames with random bytes overwritten in their
// headers and lengths: wherever Decode finds other offsets than PreICRC
// assumed, the ICRC is computed again. PreICRC computes one for the
// plain shapes and none for SRv6, a VLAN tag, a trimmed packet's DSCP
// (WIRE-DSCP-2) or another UDP port.
func TestPreICRCIsComputeICRC(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	prof := Default.Profile()
	prof.ICRCMaskUDPSrcPort = true
	masked, err := NewCodec(prof)
	if err != nil {
		t.Fatal(err)
	}
	emu, err := NewCodec(spec.EmuProfile())
	if err != nil {
		t.Fatal(err)
	}
	var ps PreScratch
	var s ICRCScratch
	var p Packet
	checked, ahead := 0, 0
	check := func(c *Codec, b []byte, what string) {
		pre := c.PreICRC(b, &ps)
		if pre.Computed() {
			ahead++
		}
		if c.Decode(b, &p) != nil || p.Trimmed {
			return
		}
		checked++
		if got, want := c.ComputeICRCPre(b, &p, pre, &s), c.ComputeICRC(b, &p); got != want {
			t.Fatalf("seed %d: %s, %s: ICRC 0x%08x computed ahead, 0x%08x after the decode", seed, c.Profile().Name, what, got, want)
		}
	}
	for _, c := range []*Codec{Default, masked, emu} {
		frames := preFrames(t, c, rng)
		for _, b := range frames {
			check(c, b, "as built")
			// Another frame's ICRC, taken with this one's decode: a frame
			// of other offsets (length, IP version) has its own computed.
			pre := c.PreICRC(frames[rng.IntN(len(frames))], &ps)
			if c.Decode(b, &p) == nil && !p.Trimmed {
				if got, want := c.ComputeICRCPre(b, &p, pre, &s), c.ComputeICRC(b, &p); got != want && (pre.end != uint32(p.end) || int(pre.udp) != p.udpOff) {
					t.Fatalf("seed %d: %s: another frame's ICRC 0x%08x taken for a frame of other offsets (ICRC 0x%08x)", seed, c.Profile().Name, got, want)
				}
			}
			for k := 0; k < 20; k++ {
				g := append([]byte(nil), b...)
				for m := rng.IntN(3) + 1; m > 0; m-- {
					g[rng.IntN(min(len(g), 80))] = byte(rng.Uint32())
				}
				check(c, g, "with header bytes overwritten")
			}
		}
	}
	if checked < 10000 || ahead < checked/2 {
		t.Fatalf("seed %d: %d frames checked, %d with an ICRC computed ahead", seed, checked, ahead)
	}
	t.Logf("seed %d: %d frames checked, %d with an ICRC computed ahead", seed, checked, ahead)
}

// preFrames returns c's frames for TestPreICRCIsComputeICRC: every sample
// packet, and IPv4 and IPv6 writes of every payload length up to 300
// bytes and some longer; it checks which shapes PreICRC computes an ICRC
// for.
func preFrames(t *testing.T, c *Codec, rng *rand.Rand) [][]byte {
	var ps PreScratch
	var frames [][]byte
	for _, sp := range samplePackets() {
		b, err := c.Append(nil, &sp)
		if err != nil {
			t.Fatal(err)
		}
		plain := !sp.SRv6 && !sp.Eth.HasVLAN
		if got := c.PreICRC(b, &ps).Computed(); got != plain {
			t.Errorf("%s, %v SRv6=%v VLAN=%v: PreICRC computed %v, want %v", c.Profile().Name, sp.BTH.Opcode, sp.SRv6, sp.Eth.HasVLAN, got, plain)
		}
		frames = append(frames, b)
		if !plain {
			continue
		}
		// Neither a trimmed packet nor a datagram to another port.
		udp := fastV4UDP
		if sp.IsIPv6 {
			udp = fastUDP
		}
		g := append([]byte(nil), b...)
		if tc := c.Profile().DSCP.Trimmed << 2; sp.IsIPv6 {
			g[fastIP], g[fastIP+1] = g[fastIP]&0xF0|tc>>4, g[fastIP+1]&0x0F|tc<<4
		} else {
			g[fastIP+1] = tc
		}
		h := append([]byte(nil), b...)
		h[udp+2], h[udp+3] = 0, 9
		for what, x := range map[string][]byte{"trimmed": g, "to port 9": h} {
			if c.PreICRC(x, &ps).Computed() {
				t.Errorf("%s, %v IPv6=%v %s: PreICRC computed an ICRC", c.Profile().Name, sp.BTH.Opcode, sp.IsIPv6, what)
			}
		}
	}
	for _, v6 := range []bool{false, true} {
		sp := samplePackets()[0]
		for _, q := range samplePackets() {
			if q.BTH.Opcode == OpWriteOnly && q.IsIPv6 == v6 && !q.SRv6 && !q.Eth.HasVLAN {
				sp = q
			}
		}
		for n := 0; n <= 4200; n++ {
			if n > 300 && n%61 != 0 {
				continue
			}
			sp.Payload = make([]byte, n)
			for i := range sp.Payload {
				sp.Payload[i] = byte(rng.Uint32())
			}
			sp.BTH.PadCount = uint8(-n & 3)
			sp.RETH.DMALength = uint32(n)
			b, err := c.Append(nil, &sp)
			if err != nil {
				t.Fatal(err)
			}
			frames = append(frames, b)
		}
	}
	return frames
}

// TestPreICRCTaken (WIRE-ICRC-1): ComputeICRCPre takes the value computed
// ahead, without computing again, when Decode found the offsets PreICRC
// assumed (a value altered after PreICRC comes back as altered), and
// PreICRC computes one for a UDP datagram just long enough for a BTH and
// an ICRC, none for one a byte shorter.
func TestPreICRCTaken(t *testing.T) {
	var ps PreScratch
	var s ICRCScratch
	var p Packet
	taken := 0
	for _, sp := range samplePackets() {
		if sp.SRv6 || sp.Eth.HasVLAN {
			continue
		}
		b, err := Default.Append(nil, &sp)
		if err != nil {
			t.Fatal(err)
		}
		pre := Default.PreICRC(b, &ps)
		if Default.Decode(b, &p) != nil || p.Trimmed || !pre.Computed() {
			continue
		}
		pre.icrc ^= 0x5a5a5a5a
		if got := Default.ComputeICRCPre(b, &p, pre, &s); got != pre.icrc {
			t.Errorf("%v IPv6=%v: ComputeICRCPre = 0x%08x, want the value computed ahead 0x%08x", sp.BTH.Opcode, sp.IsIPv6, got, pre.icrc)
		}
		taken++

		udp := fastV4UDP
		if sp.IsIPv6 {
			udp = fastUDP
		}
		short := append([]byte(nil), b...)
		for _, n := range []int{8 + BTHLen + ICRCLen, 8 + BTHLen + ICRCLen - 1} {
			be.PutUint16(short[udp+4:], uint16(n))
			if got, want := Default.PreICRC(short, &ps).Computed(), n == 8+BTHLen+ICRCLen; got != want {
				t.Errorf("%v IPv6=%v, UDP length %d: PreICRC computed %v, want %v", sp.BTH.Opcode, sp.IsIPv6, n, got, want)
			}
		}
	}
	if taken < 2 {
		t.Fatalf("only %d sample packets had an ICRC computed ahead", taken)
	}
}
