package wire

// Tests written against mutants of icrc.go that the package's other tests
// let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/openmrc/mrc/spec"
)

// verifyPartial runs VerifyICRC on frame b decoded into p, with a panic
// reported as an error.
func verifyPartial(b []byte, p *Packet) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("VerifyICRC panics: %v", r)
		}
	}()
	return Default.VerifyICRC(b, p), nil
}

// TestMutantVerifyICRCPartial (WIRE-ICRC-5, WIRE-GEN-3): on frames whose
// UDP datagram ends 0 to 16 bytes after the BTH's start, which Decode
// refuses as truncated, VerifyICRC reports false, without panicking, when
// the datagram ends before the BTH and 4 ICRC bytes; with exactly the BTH
// and an ICRC, which Decode reads before it finds the opcode's headers
// missing, it checks that ICRC: true when it is the BTH's, false when one
// bit differs.
func TestMutantVerifyICRCPartial(t *testing.T) {
	for _, sp := range samplePackets() {
		if sp.SRv6 || sp.Eth.HasVLAN {
			continue
		}
		b, err := Default.Append(nil, &sp)
		if err != nil {
			t.Fatal(err)
		}
		ipOff, udpOff, bthOff := fastIP, fastV4UDP, fastV4BTH
		if sp.IsIPv6 {
			udpOff, bthOff = fastUDP, fastBTH
		}
		for k := 0; k <= BTHLen+ICRCLen; k++ {
			f := bytes.Clone(b[:bthOff+k])
			if sp.IsIPv6 {
				be.PutUint16(f[ipOff+4:], uint16(len(f)-udpOff))
			} else {
				be.PutUint16(f[ipOff+2:], uint16(len(f)-ipOff))
			}
			be.PutUint16(f[udpOff+4:], uint16(len(f)-udpOff))
			want := k == BTHLen+ICRCLen
			if want {
				binary.LittleEndian.PutUint32(f[len(f)-ICRCLen:], refICRC(f, ipOff, udpOff, bthOff, sp.IsIPv6))
			}
			for _, bad := range []bool{false, want} {
				if bad {
					f[len(f)-1] ^= 0x10
				}
				var p Packet
				if err := Default.Decode(f, &p); err == nil {
					t.Fatalf("%v cut to %d bytes after the BTH's start: decoded", sp.BTH.Opcode, k)
				}
				ok, err := verifyPartial(f, &p)
				if err != nil || ok != (want && !bad) {
					t.Errorf("%v (IPv6 %v) cut to %d bytes after the BTH's start, ICRC changed %v: VerifyICRC %v %v",
						sp.BTH.Opcode, sp.IsIPv6, k, bad, ok, err)
				}
			}
		}
	}
}

// TestMutantComputeICRCScratch (WIRE-ICRC-1): ComputeICRCScratch, with one
// ICRCScratch reused, gives ComputeICRC's ICRC on every frame shape, under
// the default profile and under the emu preset (EMU's own CRC over the UDP
// payload, AMB-90), and that ICRC is the one the codec's encoder wrote.
func TestMutantComputeICRCScratch(t *testing.T) {
	emu, err := NewCodec(spec.EmuProfile())
	if err != nil {
		t.Fatal(err)
	}
	var s ICRCScratch
	for _, c := range []*Codec{Default, emu} {
		n := 0
		for _, sp := range samplePackets() {
			b, err := c.Append(nil, &sp)
			if err != nil {
				t.Fatal(err)
			}
			var p Packet
			if err := c.Decode(b, &p); err != nil {
				t.Fatal(err)
			}
			if got, want := c.ComputeICRCScratch(b, &p, &s), c.ComputeICRC(b, &p); got != want || got != p.ICRC {
				t.Errorf("%s, %v: ComputeICRCScratch 0x%08x, ComputeICRC 0x%08x, carried 0x%08x",
					c.Profile().Name, sp.BTH.Opcode, got, want, p.ICRC)
			}
			n++
		}
		if n == 0 {
			t.Fatal("no sample packet")
		}
	}
}
