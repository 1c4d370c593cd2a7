package netio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Resource limits of the transports (the README's "Resource limits").
const (
	// MaxFrame bounds the bytes of one frame read: a 9216-byte jumbo MTU
	// plus link headers. Longer frames are dropped, never buffered.
	MaxFrame = 9216 + 64
	// MaxQueuedFrames bounds the frames an AF_PACKET transport holds
	// between its socket readers and ReadFrame (at most MaxFrame bytes
	// each); when it is full the readers wait and the kernel drops.
	MaxQueuedFrames = 1024
)

// Conn is a multi-plane frame transport.
type Conn interface {
	// Planes is the number of planes (interfaces) of the transport.
	Planes() int
	// WriteFrame sends an Ethernet frame on plane. A frame the host's
	// egress path drops (ENOBUFS) counts as lost, not as an error.
	WriteFrame(plane int, frame []byte) error
	// ReadFrame returns the next frame. Out marks a frame this host sent
	// on the interface, seen by a tap (AF_PACKET only).
	ReadFrame() (Frame, error)
	// MACs are the MAC addresses of the planes' interfaces.
	MACs() [][6]byte
	// TapsOutgoing reports whether ReadFrame also returns the frames this
	// host sent (a capture tap); otherwise the caller records them.
	TapsOutgoing() bool
	Close() error
}

// Frame is one frame read from a Conn.
type Frame struct {
	Plane int
	Out   bool
	Data  []byte
	// At is when the frame reached the socket: the kernel's receive
	// timestamp where the platform gives one.
	At time.Time
}

// ErrClosed is returned by a closed Conn.
var ErrClosed = errors.New("netio: connection closed")

// RefusedError reports a frame the Guard would not send.
type RefusedError struct {
	Plane  int
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("netio: refusing to send on plane %d: %s", e.Plane, e.Reason)
}

// Guard restricts what a Conn may send: MRC frames (IPv4 or IPv6, UDP to
// one of Ports) to one of Peers, on a configured plane.
type Guard struct {
	Peers []netip.Addr
	Ports []uint16
}

// Check returns a *RefusedError when frame may not be sent on plane of a
// transport with planes planes.
func (g *Guard) Check(plane, planes int, frame []byte) error {
	refuse := func(f string, a ...any) error { return &RefusedError{Plane: plane, Reason: fmt.Sprintf(f, a...)} }
	if plane < 0 || plane >= planes {
		return refuse("no such plane (the transport has %d)", planes)
	}
	if len(g.Peers) == 0 {
		return refuse("no peer address is configured")
	}
	dst, port, why := parse(frame)
	switch {
	case why != "":
		return refuse("%s", why)
	case !slices.Contains(g.Ports, port):
		return refuse("UDP destination port %d is not an MRC port %v", port, g.Ports)
	case !slices.Contains(g.Peers, dst.Unmap()):
		return refuse("destination %v is not a configured peer %v", dst, g.Peers)
	}
	return nil
}

// parse returns the destination node address (the inner one under SRv6)
// and UDP destination port of an Ethernet frame, or why it has none.
func parse(frame []byte) (dst netip.Addr, port uint16, why string) {
	if len(frame) < 14 {
		return dst, 0, fmt.Sprintf("a %d-byte frame is not Ethernet", len(frame))
	}
	off := 14
	et := binary.BigEndian.Uint16(frame[12:])
	if et == 0x8100 {
		if len(frame) < 18 {
			return dst, 0, "truncated VLAN tag"
		}
		et, off = binary.BigEndian.Uint16(frame[16:]), 18
	}
	var proto uint8
	switch et {
	case 0x0800:
		if len(frame) < off+20 || frame[off]>>4 != 4 {
			return dst, 0, "truncated or malformed IPv4 header"
		}
		ihl := int(frame[off]&0xF) * 4
		dst, proto = netip.AddrFrom4([4]byte(frame[off+16:off+20])), frame[off+9]
		off += ihl
	case 0x86DD:
		if len(frame) < off+40 || frame[off]>>4 != 6 {
			return dst, 0, "truncated or malformed IPv6 header"
		}
		dst, proto = netip.AddrFrom16([16]byte(frame[off+24:off+40])), frame[off+6]
		off += 40
		// An SRv6 outer header is addressed to a segment, not the peer:
		// the inner header names the destination node.
		for proto == 41 || proto == 43 {
			if proto == 43 {
				if len(frame) < off+8 {
					return dst, 0, "truncated routing header"
				}
				proto, off = frame[off], off+8+8*int(frame[off+1])
				continue
			}
			if len(frame) < off+40 {
				return dst, 0, "truncated inner IPv6 header"
			}
			dst, proto = netip.AddrFrom16([16]byte(frame[off+24:off+40])), frame[off+6]
			off += 40
		}
	default:
		return dst, 0, fmt.Sprintf("EtherType %#04x is neither IPv4 nor IPv6", et)
	}
	if proto != 17 || len(frame) < off+8 {
		return dst, 0, fmt.Sprintf("not UDP (IP protocol %d)", proto)
	}
	return dst, binary.BigEndian.Uint16(frame[off+2:]), ""
}

// Guarded wraps a Conn so that every frame passes the guard first.
type Guarded struct {
	Conn
	G Guard
}

// WriteFrame implements Conn.
func (g *Guarded) WriteFrame(plane int, frame []byte) error {
	if err := g.G.Check(plane, g.Conn.Planes(), frame); err != nil {
		return err
	}
	return g.Conn.WriteFrame(plane, frame)
}

// IsMRC reports whether frame is IPv4 or IPv6 UDP to one of ports, and
// returns its destination node address: the frames the tester and the
// peer read (everything else on an interface is left alone).
func IsMRC(frame []byte, ports []uint16) (netip.Addr, bool) {
	dst, port, why := parse(frame)
	return dst.Unmap(), why == "" && slices.Contains(ports, port)
}
