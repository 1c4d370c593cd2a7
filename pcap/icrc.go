package pcap

import (
	"encoding/binary"

	"github.com/openmrc/mrc/wire"
)

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
