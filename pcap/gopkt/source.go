package gopkt

import (
	"slices"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap"
)

// Source reads a pcap.Reader for gopacket: it is a PacketDataSource and a
// ZeroCopyPacketDataSource, so gopacket.NewPacketSource reads pcap,
// pcapng and gzip-compressed captures through it.
type Source struct {
	r *pcap.Reader
	f pcap.Frame // the frame each read fills
}

var (
	_ gopacket.PacketDataSource         = (*Source)(nil)
	_ gopacket.ZeroCopyPacketDataSource = (*Source)(nil)
)

// NewSource returns a Source reading r's frames.
func NewSource(r *pcap.Reader) *Source { return &Source{r: r} }

// ReadPacketData reads the next frame for gopacket (PacketDataSource):
// its bytes, in a slice of their own, and its capture info (timestamp,
// lengths, pcapng interface index). It returns io.EOF at the clean end of
// the capture, and a *pcap.FormatError as pcap.Reader.Next does.
func (s *Source) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	data, ci, err := s.ZeroCopyReadPacketData()
	return slices.Clone(data), ci, err
}

// ZeroCopyReadPacketData is ReadPacketData without the copy: the bytes
// alias the Reader's buffer and are valid until the next read
// (ZeroCopyPacketDataSource).
func (s *Source) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	if err := s.r.Next(&s.f); err != nil {
		return nil, gopacket.CaptureInfo{}, err
	}
	f := &s.f
	return f.Data, gopacket.CaptureInfo{Timestamp: f.Timestamp, CaptureLength: len(f.Data),
		Length: max(f.Length, len(f.Data)), InterfaceIndex: f.Interface}, nil
}

// LinkType returns the link type of the capture's first interface as
// gopacket's decoder of it, to hand gopacket.NewPacketSource. A pcapng
// file declares its interfaces in blocks that the first read reaches, so
// before it this is layers.LinkTypeNull (0): pass layers.LinkTypeEthernet,
// the link MRC runs on.
func (s *Source) LinkType() layers.LinkType { return layers.LinkType(s.r.LinkType()) }
