package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openmrc/mrc/spec"
)

// fataler is what a seed helper needs of its *testing.T, B or F; not
// testing.TB, which the *testing.F of the libFuzzer build
// (go-118-fuzz-build, .clusterfuzzlite/build.sh) does not implement.
type fataler interface{ Fatal(args ...any) }

// fastCodecs are the default codec and one whose profile moves everything
// the fast path reads from the codec: BTH flag order and masks, trimmed
// DSCPs, and a first accepted port that is not the one encoded.
func fastCodecs(t fataler) []*Codec {
	pr := spec.DefaultProfile()
	pr.Name = "fastpath-test"
	pr.BTHFlagOrder = spec.BTHFlagOrderSwapped
	pr.BTHRetransmitMask, pr.BTHTimestampMask = 0x04, 0x40
	pr.DSCP.Trimmed, pr.DSCP.TrimmedLastHop, pr.DSCP.Trimmable = 63, 1, 5
	pr.UDPDstPort, pr.AcceptUDPDstPorts = 4791, []uint16{1, 2, 3, 4791}
	other, err := NewCodec(pr)
	if err != nil {
		t.Fatal(err)
	}
	return []*Codec{Default, other}
}

// fastFrames returns frames of every shape, most of them the fast path's
// (Ethernet/IPv6/UDP/write, and IPv4 ones) with every TS, ImmDt and pad
// combination, and trimmed ones, under codec c.
func fastFrames(t fataler, c *Codec) [][]byte {
	var out [][]byte
	add := func(p Packet) {
		b, err := c.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	for _, p := range samplePackets() {
		add(p)
		if p.SRv6 || !p.BTH.Opcode.IsWrite() {
			continue
		}
		for _, n := range []int{0, 1, 2, 3, 4, 5, 8, 9} {
			q := p
			q.Payload = bytes.Repeat([]byte{0x77}, n)
			q.BTH.TSPresent, q.TSETH = n%2 == 1, TSETH{TxTimestamp: 0x1234, TSR: true, Rsvd: 5, FType: 3}
			q.BTH.AckReq, q.BTH.Retransmit, q.BTH.SE, q.BTH.M = n&2 != 0, n&4 != 0, n&1 != 0, n&2 == 0
			q.BTH.Variant, q.BTH.Rsvd, q.BTH.TVer = uint8(n), uint8(n)&c.rsvdMask, uint8(n)
			add(q)
		}
		q := p
		q.IP6.TrafficClass, q.IP4.TOS, q.Payload = c.prof.DSCP.Trimmed<<2, c.prof.DSCP.Trimmed<<2, nil
		add(q)
		q.IP6.TrafficClass, q.IP4.TOS = c.prof.DSCP.TrimmedLastHop<<2|3, c.prof.DSCP.TrimmedLastHop<<2|3
		add(q)
	}
	return out
}

// mutations returns b with single bytes changed around the headers and
// the ICRC, every truncation of the headers, and trailing bytes added.
func mutations(b []byte) [][]byte {
	var out [][]byte
	hdr := min(len(b), fastMax+8)
	for i := 0; i < len(b); i++ {
		if i >= hdr && i < len(b)-8 {
			continue
		}
		for _, x := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF} {
			m := bytes.Clone(b)
			m[i] ^= x
			out = append(out, m)
		}
	}
	for n := 0; n < hdr; n++ {
		out = append(out, b[:n])
	}
	for n := len(b) - 8; n < len(b); n++ {
		out = append(out, b[:n])
	}
	return append(out, append(bytes.Clone(b), 0, 0, 0, 0, 0, 0, 0, 0))
}

// checkSame decodes b with Decode and with decodeGeneral, each into a
// copy of prev, and fails unless the packets and errors are identical.
func checkSame(t *testing.T, c *Codec, b []byte, prev *Packet) {
	t.Helper()
	fast, gen := *prev, *prev
	e1, e2 := c.Decode(b, &fast), c.decodeGeneral(b, &gen)
	if (e1 == nil) != (e2 == nil) || e1 != nil && e1.Error() != e2.Error() {
		t.Fatalf("%x\nDecode error %v\ngeneral error %v", b, e1, e2)
	}
	if !samePacket(&fast, &gen) {
		t.Fatalf("%x\nDecode differs from the general decoder (-general +Decode):\n%s", b,
			cmp.Diff(gen, fast, cmp.AllowUnexported(Packet{})))
	}
}

// packetFields is every field of a Packet but Payload, in a comparable
// struct, so that samePacket is fast enough to fuzz with.
type packetFields struct {
	Eth                                        Ethernet
	SRv6                                       bool
	Outer                                      IPv6
	HasSRH                                     bool
	SRH                                        SRH
	IsIPv6                                     bool
	IP4                                        IPv4
	IP6                                        IPv6
	UDP                                        UDP
	BTH                                        BTH
	METH                                       METH
	TSETH                                      TSETH
	RETH                                       RETH
	ImmDt                                      uint32
	AETH                                       AETH
	SETH                                       SETH
	NETH                                       NETH
	PETH                                       PETH
	ERTH                                       ERTH
	EETH                                       EETH
	ICRC                                       uint32
	Trimmed, TrimmedLastHop                    bool
	Decoded                                    Stack
	ipOff, udpOff, bthOff, hdrEnd, padEnd, end int
	parts                                      uint16
	errTo                                      *Error
}

func fieldsOf(p *Packet) packetFields {
	return packetFields{p.Eth, p.SRv6, p.Outer, p.HasSRH, p.SRH, p.IsIPv6, p.IP4, p.IP6, p.UDP, p.BTH, p.METH,
		p.TSETH, p.RETH, p.ImmDt, p.AETH, p.SETH, p.NETH, p.PETH, p.ERTH, p.EETH, p.ICRC, p.Trimmed, p.TrimmedLastHop,
		p.Decoded, p.ipOff, p.udpOff, p.bthOff, p.hdrEnd, p.padEnd, p.end, p.parts, p.errTo}
}

// samePacket reports whether a and b are equal in every field, exported
// or not, with payloads that are the same slice of the same frame.
func samePacket(a, b *Packet) bool {
	return fieldsOf(a) == fieldsOf(b) && len(a.Payload) == len(b.Payload) && cap(a.Payload) == cap(b.Payload) &&
		(a.Payload == nil) == (b.Payload == nil) && (len(a.Payload) == 0 || &a.Payload[0] == &b.Payload[0])
}

// TestPacketFieldsComplete: packetFields has every field of Packet but
// Payload, so samePacket misses none.
func TestPacketFieldsComplete(t *testing.T) {
	pt, ft := reflect.TypeFor[Packet](), reflect.TypeFor[packetFields]()
	if pt.NumField() != ft.NumField()+1 {
		t.Fatalf("Packet has %d fields, packetFields %d: add the new ones", pt.NumField(), ft.NumField())
	}
	for i, j := 0, 0; i < pt.NumField(); i++ {
		if pt.Field(i).Name == "Payload" {
			continue
		}
		if f, g := pt.Field(i), ft.Field(j); f.Name != g.Name || f.Type != g.Type {
			t.Errorf("Packet field %s %v, packetFields has %s %v", f.Name, f.Type, g.Name, g.Type)
		}
		j++
	}
}

// TestFastPathMatchesGeneral: for frames of every shape and their
// mutations, decoded into a fresh Packet and into Packets that held
// frames of other shapes, Decode's fast path gives exactly the packet and
// the error of the general decoder.
func TestFastPathMatchesGeneral(t *testing.T) {
	for _, c := range fastCodecs(t) {
		frames := fastFrames(t, c)
		prevs := []Packet{{}}
		for _, f := range frames {
			var p Packet
			_ = c.decodeGeneral(f, &p)
			prevs = append(prevs, p)
		}
		n := 0
		for i, f := range frames {
			for j, m := range mutations(f) {
				prev := &prevs[(i+j)%len(prevs)]
				checkSame(t, c, m, &Packet{})
				checkSame(t, c, m, prev)
				n++
			}
		}
		t.Logf("%s: %d frames", c.prof.Name, n)
	}
}

// FuzzFastPath: Decode and the general decoder agree on every input, into
// a fresh Packet or one that held a frame of another shape.
func FuzzFastPath(f *testing.F) {
	codecs := fastCodecs(f)
	frames := fastFrames(f, Default)
	for i, b := range frames {
		f.Add(b, uint8(i), false)
	}
	prevs := make([]Packet, len(frames))
	for i, b := range frames {
		_ = Default.decodeGeneral(b, &prevs[i])
	}
	f.Fuzz(func(t *testing.T, b []byte, prev uint8, other bool) {
		c := codecs[0]
		if other {
			c = codecs[1]
		}
		checkSame(t, c, b, &Packet{})
		checkSame(t, c, b, &prevs[int(prev)%len(prevs)])
	})
}
