package pcap

import (
	"slices"

	"github.com/gopacket/gopacket"
)

// The Reader is a gopacket packet source, so gopacket.NewPacketSource
// reads pcap, pcapng and gzip-compressed captures through it.
var (
	_ gopacket.PacketDataSource         = (*Reader)(nil)
	_ gopacket.ZeroCopyPacketDataSource = (*Reader)(nil)
)

// ReadPacketData reads the next frame for gopacket (PacketDataSource):
// its bytes, in a slice of their own, and its capture info (timestamp,
// lengths, pcapng interface index). It returns io.EOF at the clean end of
// the capture, and a *FormatError as Next does.
func (r *Reader) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	data, ci, err := r.ZeroCopyReadPacketData()
	return slices.Clone(data), ci, err
}

// ZeroCopyReadPacketData is ReadPacketData without the copy: the bytes
// alias the Reader's buffer and are valid until the next read
// (ZeroCopyPacketDataSource).
func (r *Reader) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	if err := r.Next(&r.gp); err != nil {
		return nil, gopacket.CaptureInfo{}, err
	}
	f := &r.gp
	return f.Data, gopacket.CaptureInfo{Timestamp: f.Timestamp, CaptureLength: len(f.Data),
		Length: max(f.Length, len(f.Data)), InterfaceIndex: f.Interface}, nil
}

// LinkType returns the link type of the capture's first interface
// (gopacket.NewPacketSource takes it as layers.LinkType(r.LinkType())).
// A pcapng file declares its interfaces in blocks that the first read
// reaches, so before it LinkType is 0: pass LinkTypeEthernet, the link
// MRC runs on.
func (r *Reader) LinkType() LinkType {
	if len(r.ifaces) == 0 {
		return 0
	}
	return r.ifaces[0].LinkType
}
