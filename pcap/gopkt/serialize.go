package gopkt

import (
	"github.com/gopacket/gopacket"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// SerializeFrame serializes layers (Ethernet first) into buf like
// gopacket.SerializeLayers. With opts.ComputeChecksums it then sets the
// UDP checksum to 0, as MRC sends it (WIRE-UDP-3), and computes the ICRC
// with pcap.SetICRC: the ICRC covers the IP header, which the BTH layer
// cannot see when it serializes. c gives the profile (nil: wire.Default).
func SerializeFrame(c *wire.Codec, buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions, l ...gopacket.SerializableLayer) error {
	if err := gopacket.SerializeLayers(buf, opts, l...); err != nil {
		return err
	}
	if !opts.ComputeChecksums {
		return nil
	}
	return pcap.SetICRC(c, buf.Bytes())
}
