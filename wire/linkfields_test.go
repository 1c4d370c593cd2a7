package wire

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// handLink returns the decoded packet's values of the link header named
// name: numbers, and addresses as bytes.
func handLink(p *Packet, name string) (map[string]uint64, map[string][]byte) {
	ip6 := func(h *IPv6) (map[string]uint64, map[string][]byte) {
		return map[string]uint64{"version": 6, "dscp": uint64(h.TrafficClass >> 2), "ecn": uint64(h.TrafficClass & 3),
				"flow_label": uint64(h.FlowLabel), "payload_length": uint64(h.PayloadLength),
				"next_header": uint64(h.NextHeader), "hop_limit": uint64(h.HopLimit)},
			map[string][]byte{"src": h.Src[:], "dst": h.Dst[:]}
	}
	e := &p.Eth
	switch name {
	case HdrEthernet:
		return map[string]uint64{"ether_type": uint64(e.EtherType)}, map[string][]byte{"src": e.Src[:], "dst": e.Dst[:]}
	case HdrEthernetVLAN:
		return map[string]uint64{"tpid": EtherTypeVLAN, "vlan_tci": uint64(e.VLANTCI), "ether_type": uint64(e.EtherType)},
			map[string][]byte{"src": e.Src[:], "dst": e.Dst[:]}
	case HdrSRv6:
		return ip6(&p.Outer)
	case HdrSRH:
		s := &p.SRH
		return map[string]uint64{"segments_left": uint64(s.SegmentsLeft), "last_entry": uint64(s.LastEntry),
			"flags": uint64(s.Flags), "tag": uint64(s.Tag)}, nil
	case HdrIPv4:
		h := &p.IP4
		return map[string]uint64{"version": 4, "dscp": uint64(h.TOS >> 2), "ecn": uint64(h.TOS & 3),
				"total_length": uint64(h.TotalLength), "identification": uint64(h.ID), "ttl": uint64(h.TTL),
				"checksum": uint64(h.Checksum)},
			map[string][]byte{"src": h.Src[:], "dst": h.Dst[:]}
	case HdrIPv6:
		return ip6(&p.IP6)
	case HdrUDP:
		u := &p.UDP
		return map[string]uint64{"src_port": uint64(u.SrcPort), "dst_port": uint64(u.DstPort),
			"length": uint64(u.Length), "checksum": uint64(u.Checksum)}, nil
	}
	return nil, nil
}

// TestLinkFieldsMatchCodec (WIRE-ENC-1, WIRE-ENC-2, WIRE-UDP-1): every
// field that LinkHeaders describes reads, at the offset WalkLink gives,
// the value the decoder put in the Packet, on random frames of every
// shape (IPv4, IPv6, 802.1Q, SRv6 with and without an SRH); and WalkLink
// visits exactly the headers the frame has.
func TestLinkFieldsMatchCodec(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := samplePackets()[0]
		p.IsIPv6 = rapid.Bool().Draw(t, "v6")
		p.SRv6 = p.IsIPv6 && rapid.Bool().Draw(t, "srv6")
		p.HasSRH = p.SRv6 && rapid.Bool().Draw(t, "srh")
		p.Eth.HasVLAN = rapid.Bool().Draw(t, "vlan")
		tos := rapid.Uint8().Filter(func(v uint8) bool { tr, _ := Default.IsTrimmedDSCP(v >> 2); return !tr })
		b := func(n int) []byte { return rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "bytes") }
		copy(p.Eth.Dst[:], b(6))
		copy(p.Eth.Src[:], b(6))
		p.Eth.VLANTCI = rapid.Uint16().Draw(t, "tci")
		p.IP4 = IPv4{TOS: tos.Draw(t, "tos"), ID: rapid.Uint16().Draw(t, "id"),
			TTL: rapid.Uint8().Draw(t, "ttl"), Checksum: rapid.Uint16().Draw(t, "sum")}
		copy(p.IP4.Src[:], b(4))
		copy(p.IP4.Dst[:], b(4))
		for _, h := range []*IPv6{&p.IP6, &p.Outer} {
			*h = IPv6{TrafficClass: tos.Draw(t, "tc"), FlowLabel: rapid.Uint32Range(0, 0xFFFFF).Draw(t, "fl"),
				HopLimit: rapid.Uint8().Draw(t, "hl")}
			copy(h.Src[:], b(16))
			copy(h.Dst[:], b(16))
		}
		p.SRH = SRH{SegmentsLeft: rapid.Uint8().Draw(t, "sl"), LastEntry: rapid.Uint8Range(0, MaxSRHSegments-1).Draw(t, "le"),
			Flags: rapid.Uint8().Draw(t, "flags"), Tag: rapid.Uint16().Draw(t, "tag")}
		p.UDP.SrcPort, p.UDP.Checksum = rapid.Uint16().Draw(t, "sport"), rapid.Uint16().Draw(t, "csum")
		frame, err := Default.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		var d Packet
		if err := Default.Decode(frame, &d); err != nil {
			t.Fatal(err)
		}
		var names []string
		d.WalkLink(frame, func(h *Header, off int) {
			names = append(names, h.Name)
			nums, addrs := handLink(&d, h.Name)
			hb := frame[off : off+h.Len]
			for _, f := range h.Fields {
				if f.Addr {
					if want, ok := addrs[f.Name]; !ok || !bytes.Equal(f.Bytes(hb), want) {
						t.Fatalf("%s.%s: description reads %x, codec %x", h.Name, f.Name, f.Bytes(hb), want)
					}
				} else if want, ok := nums[f.Name]; !ok || f.Value(hb) != want {
					t.Fatalf("%s.%s: description reads %#x, codec %#x (present %v)", h.Name, f.Name, f.Value(hb), want, ok)
				}
			}
			if len(h.Fields) != len(nums)+len(addrs) {
				t.Fatalf("%s: %d fields described, codec has %d", h.Name, len(h.Fields), len(nums)+len(addrs))
			}
		})
		want := []string{HdrEthernet}
		if p.Eth.HasVLAN {
			want[0] = HdrEthernetVLAN
		}
		if p.SRv6 {
			want = append(want, HdrSRv6)
		}
		if p.HasSRH {
			want = append(want, HdrSRH)
		}
		if p.IsIPv6 {
			want = append(want, HdrIPv6, HdrUDP)
		} else {
			want = append(want, HdrIPv4, HdrUDP)
		}
		if len(names) != len(want) {
			t.Fatalf("walked %v, want %v", names, want)
		}
		for i := range want {
			if names[i] != want[i] {
				t.Fatalf("walked %v, want %v", names, want)
			}
		}
	})
}

// TestLinkFieldsWellFormed: names are unique within a header, every field
// lies inside its header, and addresses are whole bytes of a known size.
func TestLinkFieldsWellFormed(t *testing.T) {
	for _, h := range LinkHeaders() {
		seen := map[string]bool{}
		for _, f := range h.Fields {
			if seen[f.Name] {
				t.Errorf("%s.%s twice", h.Name, f.Name)
			}
			seen[f.Name] = true
			if f.Bit < 0 || f.Bit+f.Width > 8*h.Len || f.Width < 1 {
				t.Errorf("%s.%s at bit %d width %d outside %d bytes", h.Name, f.Name, f.Bit, f.Width, h.Len)
			}
			if f.Addr != (f.Bit%8 == 0 && (f.Width == 32 || f.Width == 48 || f.Width == 128)) && f.Addr {
				t.Errorf("%s.%s: an address must be 4, 6 or 16 whole bytes", h.Name, f.Name)
			}
			if !f.Addr && f.Width > 64 {
				t.Errorf("%s.%s: %d bits is too wide for a number", h.Name, f.Name, f.Width)
			}
		}
	}
}

// TestEndsHeader (WIRE-ENC-1, WIRE-ENC-2): the header naming a frame's
// ends is its inner IP header, also when decoding read that header and
// then rejected it (ipOff unset), at the same offset, behind an SRv6
// outer header with or without an SRH; the outer header when the inner
// one was not read; else Ethernet.
func TestEndsHeader(t *testing.T) {
	for _, shape := range []struct{ v6, vlan, srv6, srh bool }{
		{false, false, false, false}, {true, true, false, false}, {true, false, true, false}, {true, true, true, true}} {
		p := samplePackets()[0]
		p.IsIPv6, p.SRv6, p.HasSRH, p.Eth.HasVLAN = shape.v6, shape.srv6, shape.srh, shape.vlan
		p.IP6.Src, p.IP6.Dst = [16]byte{0xfd, 15: 1}, [16]byte{0xfd, 15: 2}
		p.Outer = IPv6{HopLimit: 9, Src: [16]byte{0xfc, 15: 1}, Dst: [16]byte{0xfc, 15: 2}}
		p.SRH = SRH{LastEntry: 2}
		frame, err := Default.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		var d Packet
		if err := Default.Decode(frame, &d); err != nil {
			t.Fatal(err)
		}
		ip, _, _ := d.Offsets()
		want := HdrIPv4
		if shape.v6 {
			want = HdrIPv6
		}
		check := func(what string, name string, off int, src []byte) {
			h, got := d.EndsHeader()
			if h.Name != name || got != off || !bytes.Equal(h.Fields[1].Bytes(frame[got:]), src) {
				t.Errorf("%+v %s: ends from %s at %d (src %x), want %s at %d (src %x)",
					shape, what, h.Name, got, h.Fields[1].Bytes(frame[got:]), name, off, src)
			}
		}
		if shape.v6 {
			check("valid", want, ip, d.IP6.Src[:])
			be.PutUint16(frame[ip+4:], 0xFFFF) // payload length past the frame: read, then rejected
			if err := Default.Decode(frame, &d); err == nil {
				t.Fatal("a payload length past the frame decoded")
			}
			check("rejected", HdrIPv6, ip, d.IP6.Src[:])
			if shape.srv6 {
				frame[ip] = 0x40 // version 4: not read
				_ = Default.Decode(frame, &d)
				ethEnd := 14
				if shape.vlan {
					ethEnd = 18
				}
				check("unread", HdrSRv6, ethEnd, d.Outer.Src[:])
			}
		} else {
			check("valid", want, ip, d.IP4.Src[:])
		}
		d.Eth.EtherType = 0
		if err := Default.Decode(frame[:13], &d); err == nil {
			t.Fatal("13 bytes decoded")
		}
		if h, off := d.EndsHeader(); h.Name[:8] != HdrEthernet || off != 0 {
			t.Errorf("%+v: a 13-byte frame's ends from %s at %d, want Ethernet", shape, h.Name, off)
		}
	}
}
