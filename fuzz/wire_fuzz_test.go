package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/openmrc/mrc/wire"
)

// fataler is what a seed helper needs of its *testing.T, B or F; not
// testing.TB, which the *testing.F of the libFuzzer build
// (go-118-fuzz-build, .clusterfuzzlite/build.sh) does not implement.
type fataler interface{ Fatal(args ...any) }

// seedFrames returns one valid frame of every opcode over IPv4, IPv6 and
// SRv6, for the seed corpus.
func seedFrames(t fataler) [][]byte {
	var out [][]byte
	ops := []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteLastImm, wire.OpWriteOnly,
		wire.OpWriteOnlyImm, wire.OpAcknowledge, wire.OpEndpointReq, wire.OpEndpointResp, wire.OpSACK, wire.OpNACK, wire.OpProbe}
	for i, op := range ops {
		for v := 0; v < 3; v++ {
			p := wire.Packet{IsIPv6: v > 0, SRv6: v == 2, HasSRH: v == 2 && i%2 == 0}
			p.IP4.TTL, p.IP6.HopLimit = 64, 64
			p.IP4.FlagsFrag = 0x4000 // DF (WIRE-ENC-5)
			p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: 0x42, PSN: uint32(1000 * i)}
			p.SetEV(uint32(0x10001*i), wire.EVModeSTEV)
			if op.IsWrite() {
				p.BTH.TSPresent = i%2 == 1
				p.METH.MSN = uint16(i)
				p.Payload = bytes.Repeat([]byte{byte(i)}, 61)
				p.RETH = wire.RETH{VA: 0x1000, RKey: 1, DMALength: uint32(len(p.Payload))}
			}
			// Strictly valid control packets, so that the re-encoding
			// property applies to their mutations (WIRE-SETH-10,
			// WIRE-NETH-4, WIRE-PETH-2, WIRE-AETH-2).
			p.SETH.SACKBitmap, p.NETH.Reason, p.ERTH.Op = 0xFF, wire.NACKTrimmed, wire.EPEVProbe
			p.SETH.CACKPSN, p.NETH.NACKPSN, p.AETH.Syndrome = p.BTH.PSN, p.BTH.PSN, 0x1F
			if op == wire.OpProbe {
				p.BTH.PSN = 0
			}
			if op == wire.OpEndpointReq || op == wire.OpEndpointResp {
				p.BTH.DestQP, p.BTH.PSN = wire.EndpointQPN, 7
			}
			b, err := wire.Default.Append(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

var ignoreUnexported = cmpopts.IgnoreUnexported(wire.Packet{})

// FuzzDecode: no input makes the decoder panic; every error is a typed
// *wire.Error naming a header and a requirement; whatever decodes
// re-encodes, and decodes again to the same packet up to the fields the
// encoder derives (lengths, checksums, pad count, ICRC); a frame with no
// strict violation re-encodes to exactly its own bytes. A mutated frame
// almost never has a valid IPv4 checksum and ICRC, so each input is also
// checked with those two recomputed (consistent), which brings the last
// property to bear on every field the fuzzer changes.
func FuzzDecode(f *testing.F) {
	for _, b := range seedFrames(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
		if c := consistent(b); c != nil {
			checkDecode(t, c)
		}
	})
}

// consistent returns a copy of b with its IPv4 header checksum and ICRC
// recomputed (UDP checksum 0, as MRC sends it), or nil when b does not
// decode.
func consistent(b []byte) []byte {
	var p wire.Packet
	if wire.Default.Decode(b, &p) != nil || p.Trimmed {
		return nil
	}
	c := bytes.Clone(b)
	ip, udp, _ := p.Offsets()
	if !p.IsIPv6 {
		binary.BigEndian.PutUint16(c[ip+10:], wire.IPv4Checksum(c[ip:]))
	}
	c[udp+6], c[udp+7] = 0, 0
	end := udp + int(p.UDP.Length)
	if end < udp+8+wire.ICRCLen || end > len(c) {
		return nil
	}
	if wire.Default.Decode(c, &p) != nil {
		return nil
	}
	binary.LittleEndian.PutUint32(c[end-wire.ICRCLen:], wire.Default.ComputeICRC(c, &p))
	return c
}

// checkDecode checks FuzzDecode's properties on one frame.
func checkDecode(t *testing.T, b []byte) {
	var p wire.Packet
	err := wire.Default.Decode(b, &p)
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) || we.Header == "" || !we.Req.Valid() {
			t.Fatalf("untyped or anonymous error %T %v", err, err)
		}
		return
	}
	viol := wire.Default.Check(b, &p, nil)
	wire.Default.Walk(&p, func(h *wire.Header, off int) {
		if off+h.Len > len(b) {
			t.Fatalf("Walk: %s at %d runs past the %d-byte frame", h.Name, off, len(b))
		}
		for _, f := range h.Fields {
			_ = f.Value(b[off:])
		}
	})
	q := p
	b2, err := wire.Default.Append(nil, &q)
	if err != nil {
		t.Fatalf("decoded packet does not re-encode: %v", err)
	}
	var p2 wire.Packet
	if err := wire.Default.Decode(b2, &p2); err != nil {
		t.Fatalf("re-encoded frame does not decode: %v\n%x", err, b2)
	}
	if d := cmp.Diff(q, p2, ignoreUnexported, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("decode(encode(decode(b))) differs (-first +second):\n%s", d)
	}
	// A trim may keep the original lengths (WIRE-TRIM-2); the encoder
	// writes the trimmed ones, so only untrimmed frames must match.
	if len(viol) == 0 && !p.Trimmed && !bytes.Equal(b2, b[:len(b2)]) {
		t.Fatalf("frame with no violations re-encodes differently:\n in %x\nout %x", b[:len(b2)], b2)
	}
}

// FuzzICRCBitFlip: a single-bit change anywhere in the invariant part of a
// frame is always caught by the ICRC check (WIRE-ICRC-1).
func FuzzICRCBitFlip(f *testing.F) {
	f.Add([]byte("payload"), uint32(7), uint32(1), uint16(0))
	f.Add(bytes.Repeat([]byte{0xFF}, 300), uint32(0xFFFFFF), uint32(0xFFFFFF), uint16(999))
	f.Fuzz(func(t *testing.T, payload []byte, qp, psn uint32, bit uint16) {
		if len(payload) > 4096 {
			payload = payload[:4096]
		}
		p := wire.Packet{IsIPv6: bit&1 == 0}
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, DestQP: qp & wire.PSNMask, PSN: psn & wire.PSNMask}
		p.RETH.DMALength = uint32(len(payload))
		p.Payload = payload
		b, err := wire.Default.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		var d wire.Packet
		if err := wire.Default.Decode(b, &d); err != nil {
			t.Fatal(err)
		}
		ipOff, udpOff, bthOff := d.Offsets()
		i := ipOff + int(bit/8)%(len(b)-wire.ICRCLen-ipOff)
		m := byte(1) << (bit % 8)
		if variant(i-ipOff, udpOff-ipOff, bthOff-ipOff, d.IsIPv6)&m != 0 {
			return
		}
		b[i] ^= m
		if wire.Default.ComputeICRC(b, &d) == binary.LittleEndian.Uint32(b[len(b)-4:]) {
			t.Fatalf("flip of byte %d bit %d not caught", i, bit%8)
		}
	})
}

// variant returns the mask of variant bits at offset r from the IP header.
func variant(r, udp, bth int, v6 bool) byte {
	switch {
	case v6 && r == 0:
		return 0x0f
	case v6 && (r == 1 || r == 2 || r == 3 || r == 7):
		return 0xff
	case !v6 && (r == 1 || r == 8 || r == 10 || r == 11):
		return 0xff
	case r == udp+6 || r == udp+7 || r == bth+4:
		return 0xff
	}
	return 0
}
