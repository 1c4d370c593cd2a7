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

// Guard restricts what a Conn may send, at every layer: a frame leaves
// only on one of the transport's planes (its interfaces), to a unicast
// Ethernet destination (the peer's MAC of that plane when PeerMACs is
// set), as IPv4 or IPv6 UDP to one of Ports, addressed to one of Peers;
// in SRv6 encapsulation the outer destination and every SRH segment must
// lie in one of the SRv6 prefixes, and the inner destination is the one
// that must be a peer.
type Guard struct {
	Peers []netip.Addr
	Ports []uint16
	// PeerMACs, when set, holds the peer's MAC of each plane: a frame on
	// plane i may go to PeerMACs[i] only.
	PeerMACs [][6]byte
	// SRv6 are the prefixes an SRv6 outer destination may lie in; without
	// any, SRv6 frames are refused.
	SRv6 []netip.Prefix
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
	h, why := parse(frame)
	if why != "" {
		return refuse("%s", why)
	}
	if h.ethDst[0]&1 != 0 {
		return refuse("Ethernet destination %s is not unicast", macString(h.ethDst))
	}
	if plane < len(g.PeerMACs) && h.ethDst != g.PeerMACs[plane] {
		return refuse("Ethernet destination %s is not the peer's %s on plane %d", macString(h.ethDst), macString(g.PeerMACs[plane]), plane)
	}
	if !slices.Contains(g.Ports, h.port) {
		return refuse("UDP destination port %d is not an MRC port %v", h.port, g.Ports)
	}
	if !slices.Contains(g.Peers, h.dst.Unmap()) {
		return refuse("destination %v is not a configured peer %v", h.dst, g.Peers)
	}
	if h.tooMany {
		return refuse("more than %d SRv6 outer addresses and segments", maxOuter)
	}
	for _, o := range h.outer[:h.nOuter] {
		if !slices.ContainsFunc(g.SRv6, func(p netip.Prefix) bool { return p.Contains(o) }) {
			return refuse("SRv6 outer destination or segment %v is not in the allowed prefixes %v", o, g.SRv6)
		}
	}
	return nil
}

func macString(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// maxOuter bounds the SRv6 outer addresses (outer destinations and SRH
// segments) of a frame the guard lets through.
const maxOuter = 16

func (h *headers) addOuter(a netip.Addr) {
	if h.nOuter == maxOuter {
		h.tooMany = true
		return
	}
	h.outer[h.nOuter] = a
	h.nOuter++
}

// headers are the addresses of a frame the guard checks.
type headers struct {
	ethDst [6]byte
	// outer are an SRv6 frame's outer destination and SRH segments, the
	// first nOuter of them; tooMany says there were more than fit.
	outer   [maxOuter]netip.Addr
	nOuter  int
	tooMany bool
	dst     netip.Addr // the destination node (the inner one under SRv6)
	port    uint16     // UDP destination port
}

// parse returns the addresses of an Ethernet frame, or why it has none.
func parse(frame []byte) (h headers, why string) {
	if len(frame) < 14 {
		return h, fmt.Sprintf("a %d-byte frame is not Ethernet", len(frame))
	}
	h.ethDst = [6]byte(frame[:6])
	off := 14
	et := binary.BigEndian.Uint16(frame[12:])
	if et == 0x8100 {
		if len(frame) < 18 {
			return h, "truncated VLAN tag"
		}
		et, off = binary.BigEndian.Uint16(frame[16:]), 18
	}
	var proto uint8
	switch et {
	case 0x0800:
		if len(frame) < off+20 || frame[off]>>4 != 4 {
			return h, "truncated or malformed IPv4 header"
		}
		ihl := int(frame[off]&0xF) * 4
		h.dst, proto = netip.AddrFrom4([4]byte(frame[off+16:off+20])), frame[off+9]
		off += ihl
	case 0x86DD:
		if len(frame) < off+40 || frame[off]>>4 != 6 {
			return h, "truncated or malformed IPv6 header"
		}
		h.dst, proto = netip.AddrFrom16([16]byte(frame[off+24:off+40])), frame[off+6]
		off += 40
		// An SRv6 outer header is addressed to a segment, not the peer:
		// the inner header names the destination node.
		for proto == 41 || proto == 43 {
			if proto == 43 {
				if len(frame) < off+8 || len(frame) < off+8+8*int(frame[off+1]) {
					return h, "truncated routing header"
				}
				for seg := off + 8; seg+16 <= off+8+8*int(frame[off+1]); seg += 16 {
					h.addOuter(netip.AddrFrom16([16]byte(frame[seg : seg+16])))
				}
				proto, off = frame[off], off+8+8*int(frame[off+1])
				continue
			}
			if len(frame) < off+40 || frame[off]>>4 != 6 {
				return h, "truncated or malformed inner IPv6 header"
			}
			h.addOuter(h.dst)
			h.dst, proto = netip.AddrFrom16([16]byte(frame[off+24:off+40])), frame[off+6]
			off += 40
		}
	default:
		return h, fmt.Sprintf("EtherType %#04x is neither IPv4 nor IPv6", et)
	}
	if proto != 17 || len(frame) < off+8 {
		return h, fmt.Sprintf("not UDP (IP protocol %d)", proto)
	}
	h.port = binary.BigEndian.Uint16(frame[off+2:])
	return h, ""
}

// Guarded wraps a Conn so that every frame passes the guard first.
type Guarded struct {
	Conn
	G Guard
}

// Dropper is a Conn that counts, per plane, the frames it lost before its
// reader took them (AFPacket.Dropped).
type Dropper interface {
	Dropped() []uint64
}

// Dropped returns the guarded Conn's drop counts, or nil when it keeps
// none.
func (g *Guarded) Dropped() []uint64 {
	if d, ok := g.Conn.(Dropper); ok {
		return d.Dropped()
	}
	return nil
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
	h, why := parse(frame)
	return h.dst.Unmap(), why == "" && slices.Contains(ports, h.port)
}
