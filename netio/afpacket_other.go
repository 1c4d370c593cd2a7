//go:build !linux

package netio

import "errors"

// AFPacketSupported reports whether this build has AF_PACKET support.
const AFPacketSupported = false

// ErrNoAFPacket is returned by OpenAFPacket where AF_PACKET does not exist.
var ErrNoAFPacket = errors.New("netio: AF_PACKET raw sockets exist on Linux only")

// AFPacket is unavailable on this platform.
type AFPacket struct{ Conn }

// PermissionError reports missing privileges (Linux only).
type PermissionError struct{ Err error }

func (e *PermissionError) Error() string { return "netio: " + e.Err.Error() }

// OpenAFPacket always fails on this platform.
func OpenAFPacket(ifaces []string, ports []uint16, tap bool) (*AFPacket, error) {
	return nil, ErrNoAFPacket
}

// Dropped returns nothing on this platform.
func (a *AFPacket) Dropped() []uint64 { return nil }
