package pcap

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"

	"github.com/openmrc/mrc/wire"
)

// SerializeFrame serializes layers (Ethernet first) into buf like
// gopacket.SerializeLayers. With opts.ComputeChecksums it then sets the
// UDP checksum to 0, as MRC sends it (WIRE-UDP-3), and computes the ICRC
// with SetICRC: the ICRC covers the IP header, which the BTH layer cannot
// see when it serializes. c gives the profile (nil: wire.Default).
func SerializeFrame(c *wire.Codec, buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions, l ...gopacket.SerializableLayer) error {
	if err := gopacket.SerializeLayers(buf, opts, l...); err != nil {
		return err
	}
	if !opts.ComputeChecksums {
		return nil
	}
	return SetICRC(c, buf.Bytes())
}

// SetICRC zeroes the UDP checksum of the MRC frame in place and writes
// its ICRC (WIRE-ICRC-1). A trimmed frame has no ICRC and is left with
// only its checksum zeroed.
func SetICRC(c *wire.Codec, frame []byte) error {
	if c == nil {
		c = wire.Default
	}
	var p wire.Packet
	if err := c.Decode(frame, &p); err != nil {
		return err
	}
	_, udp, _ := p.Offsets()
	frame[udp+6], frame[udp+7] = 0, 0
	if p.Trimmed {
		return nil
	}
	p.UDP.Checksum = 0
	end := udp + int(p.UDP.Length)
	binary.LittleEndian.PutUint32(frame[end-wire.ICRCLen:], c.ComputeICRC(frame, &p))
	return nil
}
