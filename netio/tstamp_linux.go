//go:build linux

package netio

import (
	"encoding/binary"
	"syscall"
	"time"
)

// enableTimestamps asks the kernel to stamp every received packet
// (SO_TIMESTAMPNS), so that arrival times do not depend on when a
// goroutine gets to read the socket.
func enableTimestamps(fd uintptr) {
	_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
}

// oobSize is the control-message space a timestamp and a
// tpacket_auxdata need.
const oobSize = 128

// arrival returns the kernel's receive timestamp from control messages, or
// now when there is none.
func arrival(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Now()
	}
	for _, m := range msgs {
		if m.Header.Level != syscall.SOL_SOCKET || m.Header.Type != syscall.SCM_TIMESTAMPNS {
			continue
		}
		switch len(m.Data) {
		case 16: // struct timespec with 64-bit fields
			return time.Unix(int64(binary.NativeEndian.Uint64(m.Data)), int64(binary.NativeEndian.Uint64(m.Data[8:])))
		case 8:
			return time.Unix(int64(int32(binary.NativeEndian.Uint32(m.Data))), int64(int32(binary.NativeEndian.Uint32(m.Data[4:]))))
		}
	}
	return time.Now()
}
