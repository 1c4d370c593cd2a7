//go:build linux

package netio

import (
	"encoding/binary"
	"syscall"
)

// Linux packet-socket constants (linux/if_packet.h).
const (
	solPacket             = 263
	packetAuxdata         = 8
	tpStatusVLANValid     = 1 << 4
	tpStatusVLANTPIDValid = 1 << 6
)

// enableAuxdata asks the kernel for each packet's tpacket_auxdata, which
// carries the 802.1Q tag that VLAN offload removes from the frame's
// bytes before an AF_PACKET socket sees them.
func enableAuxdata(fd uintptr) {
	_ = syscall.SetsockoptInt(int(fd), solPacket, packetAuxdata, 1)
}

// vlanTag returns the 802.1Q tag the kernel took off the frame, from the
// control messages of its read, if it did.
func vlanTag(oob []byte) (tpid, tci uint16, ok bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, 0, false
	}
	for _, m := range msgs {
		// struct tpacket_auxdata: status, len, snaplen (u32), mac, net,
		// vlan_tci, vlan_tpid (u16).
		if m.Header.Level != solPacket || m.Header.Type != packetAuxdata || len(m.Data) < 20 {
			continue
		}
		status := binary.NativeEndian.Uint32(m.Data)
		if status&tpStatusVLANValid == 0 {
			return 0, 0, false
		}
		tpid = 0x8100
		if status&tpStatusVLANTPIDValid != 0 {
			tpid = binary.NativeEndian.Uint16(m.Data[18:])
		}
		return tpid, binary.NativeEndian.Uint16(m.Data[16:]), true
	}
	return 0, 0, false
}

// withVLAN returns frame with the tag put back after its MAC addresses,
// as it was on the wire.
func withVLAN(frame []byte, tpid, tci uint16) []byte {
	if len(frame) < 12 {
		return frame
	}
	out := make([]byte, 0, len(frame)+4)
	out = append(out, frame[:12]...)
	out = binary.BigEndian.AppendUint16(out, tpid)
	out = binary.BigEndian.AppendUint16(out, tci)
	return append(out, frame[12:]...)
}
