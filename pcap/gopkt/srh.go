package gopkt

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/wire"
)

// SRH is an IPv6 routing header as a gopacket DecodingLayer, so that a
// DecodingLayerParser can cross the SRv6 outer header of an MRC frame
// (outer IPv6, routing header 43, inner IPv6 41; WIRE-ENC-2). gopacket's
// own IPv6Routing layer serves gopacket.NewPacket but is not a
// DecodingLayer. SRH decodes and serializes routing headers of any type,
// so the parser always reaches the next header; Segments is filled for
// Segment Routing Headers (routing type 4) only.
//
// In a DecodingLayerParser the outer and inner IPv6 headers share one
// layers.IPv6, so after decoding it holds the inner header, the one MRC
// addresses; the outer destination is the SRv6 path.
type SRH struct {
	layers.BaseLayer
	NextHeader   layers.IPProtocol
	HdrExtLen    uint8
	RoutingType  uint8
	SegmentsLeft uint8
	LastEntry    uint8
	Flags        uint8
	Tag          uint16
	// Segments[0..NSegments) are the segment list (type 4 only).
	Segments  [wire.MaxSRHSegments][16]byte
	NSegments int
}

// LayerType returns layers.LayerTypeIPv6Routing, the type IPv6 next
// header 43 maps to.
func (s *SRH) LayerType() gopacket.LayerType { return layers.LayerTypeIPv6Routing }

// CanDecode returns layers.LayerTypeIPv6Routing.
func (s *SRH) CanDecode() gopacket.LayerClass { return layers.LayerTypeIPv6Routing }

// NextLayerType returns the next header's layer type (IPv6 for SRv6).
func (s *SRH) NextLayerType() gopacket.LayerType { return s.NextHeader.LayerType() }

// DecodeFromBytes decodes a routing header.
func (s *SRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 8 {
		df.SetTruncated()
		return &wire.Error{Kind: wire.ErrTruncated, Header: "SRH", Req: wire.ReqENC2, Msg: fmt.Sprintf("need 8 bytes, have %d", len(data))}
	}
	s.NextHeader, s.HdrExtLen, s.RoutingType, s.SegmentsLeft = layers.IPProtocol(data[0]), data[1], data[2], data[3]
	s.LastEntry, s.Flags, s.Tag = data[4], data[5], uint16(data[6])<<8|uint16(data[7])
	n := 8 + 8*int(s.HdrExtLen)
	if len(data) < n {
		df.SetTruncated()
		return &wire.Error{Kind: wire.ErrTruncated, Header: "SRH", Field: "hdr_ext_len", Req: wire.ReqENC2,
			Msg: fmt.Sprintf("need %d bytes, have %d", n, len(data))}
	}
	s.NSegments = 0
	if s.RoutingType == wire.SRHType {
		for i := 0; i <= int(s.LastEntry) && i < wire.MaxSRHSegments && 8+16*(i+1) <= n; i++ {
			copy(s.Segments[i][:], data[8+16*i:])
			s.NSegments = i + 1
		}
	}
	s.Contents, s.Payload = data[:n], data[n:]
	return nil
}

// SerializeTo writes the header; with opts.FixLengths, a type-4 header
// gets LastEntry and HdrExtLen from NSegments.
func (s *SRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if s.NSegments < 0 || s.NSegments > wire.MaxSRHSegments {
		return fmt.Errorf("gopkt: SRH with %d segments, at most %d", s.NSegments, wire.MaxSRHSegments)
	}
	if opts.FixLengths {
		s.HdrExtLen = uint8(2 * s.NSegments)
		if s.NSegments > 0 {
			s.LastEntry = uint8(s.NSegments - 1)
		}
	}
	n := 8 + 8*int(s.HdrExtLen)
	h, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	clear(h)
	h[0], h[1], h[2], h[3] = byte(s.NextHeader), s.HdrExtLen, s.RoutingType, s.SegmentsLeft
	h[4], h[5], h[6], h[7] = s.LastEntry, s.Flags, byte(s.Tag>>8), byte(s.Tag)
	for i := 0; i < s.NSegments && 8+16*(i+1) <= n; i++ {
		copy(h[8+16*i:], s.Segments[i][:])
	}
	return nil
}
