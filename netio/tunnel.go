package netio

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"syscall"
)

// The UDP tunnel shim: every datagram starts with these 8 bytes.
const (
	shimLen     = 8
	shimVersion = 1
	shimFrame   = 0 // an Ethernet frame follows
	shimHello   = 1 // no payload: announces the sender's address
)

var shimMagic = [4]byte{'M', 'R', 'C', 'T'}

// Tunnel carries Ethernet frames in UDP datagrams between the tester and
// an IUT that runs as a process (the reference peer, a simulator, a
// software implementation): "MRCT", version 1, type (0 frame, 1 hello),
// plane, one reserved byte, then the frame. It needs no privileges. The
// remote address is fixed (ListenTunnel's remote, or SetRemote), and then
// only datagrams from exactly that address and port are read: anything
// else on the socket is someone else's, and dropped. Without a fixed
// remote the tunnel learns it from the last valid datagram received.
// Datagrams carrying a frame over MaxFrame bytes are dropped.
type Tunnel struct {
	c       *net.UDPConn
	planes  int
	macs    [][6]byte
	mu      sync.Mutex
	remote  *net.UDPAddr
	fixed   bool
	buf     []byte
	oob     []byte
	dropped TunnelDrops
}

// TunnelDrops counts the datagrams a tunnel dropped, by cause.
type TunnelDrops struct {
	Stranger  uint64 // from an address other than the fixed remote
	Oversized uint64 // a frame over MaxFrame bytes
	Malformed uint64 // no valid shim, or a plane the tunnel lacks
}

// ListenTunnel opens a tunnel endpoint on local ("host:port"; port 0
// picks one) with planes planes whose interfaces have the given MACs.
// remote, when not empty, fixes the peer's address.
func ListenTunnel(local, remote string, macs [][6]byte) (*Tunnel, error) {
	if len(macs) == 0 || len(macs) > 31 {
		return nil, fmt.Errorf("netio: tunnel with %d planes", len(macs))
	}
	la, err := net.ResolveUDPAddr("udp", local)
	if err != nil {
		return nil, err
	}
	c, err := net.ListenUDP("udp", la)
	if err != nil {
		return nil, err
	}
	_ = c.SetReadBuffer(8 << 20)
	_ = c.SetWriteBuffer(8 << 20)
	if rc, err := c.SyscallConn(); err == nil {
		_ = rc.Control(enableTimestamps)
	}
	t := &Tunnel{c: c, planes: len(macs), macs: slices.Clone(macs), buf: make([]byte, 65536), oob: make([]byte, oobSize)}
	if remote != "" {
		if err := t.SetRemote(remote); err != nil {
			c.Close()
			return nil, err
		}
	}
	return t, nil
}

// SetRemote fixes the remote address ("host:port"): the tunnel sends
// there and reads nothing from anywhere else.
func (t *Tunnel) SetRemote(remote string) error {
	ra, err := net.ResolveUDPAddr("udp", remote)
	if err != nil {
		return fmt.Errorf("netio: tunnel remote %q: %w", remote, err)
	}
	if ra.Port == 0 || ra.IP == nil || ra.IP.IsUnspecified() {
		return fmt.Errorf("netio: tunnel remote %q: want a host address and a port", remote)
	}
	t.mu.Lock()
	t.remote, t.fixed = ra, true
	t.mu.Unlock()
	return nil
}

// Remote returns the remote address and whether it is fixed.
func (t *Tunnel) Remote() (*net.UDPAddr, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.remote, t.fixed
}

// Drops returns the datagrams dropped so far, by cause.
func (t *Tunnel) Drops() TunnelDrops {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}

func sameUDPAddr(a, b *net.UDPAddr) bool {
	return a.Port == b.Port && a.AddrPort().Addr().Unmap() == b.AddrPort().Addr().Unmap()
}

// LocalAddr returns the tunnel's UDP address.
func (t *Tunnel) LocalAddr() *net.UDPAddr { return t.c.LocalAddr().(*net.UDPAddr) }

// Hello tells the remote this endpoint's address, so that a peer that
// learns its remote can send before it has received a frame.
func (t *Tunnel) Hello() error { return t.send(shimHello, 0, nil) }

func (t *Tunnel) send(typ byte, plane int, frame []byte) error {
	t.mu.Lock()
	ra := t.remote
	t.mu.Unlock()
	if ra == nil {
		return nil // nobody to send to yet: lost
	}
	b := make([]byte, 0, shimLen+len(frame))
	b = append(b, shimMagic[:]...)
	b = append(b, shimVersion, typ, byte(plane), 0)
	b = append(b, frame...)
	_, err := t.c.WriteToUDP(b, ra)
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Planes implements Conn.
func (t *Tunnel) Planes() int { return t.planes }

// MACs implements Conn.
func (t *Tunnel) MACs() [][6]byte { return slices.Clone(t.macs) }

// TapsOutgoing implements Conn.
func (t *Tunnel) TapsOutgoing() bool { return false }

// WriteFrame implements Conn.
func (t *Tunnel) WriteFrame(plane int, frame []byte) error {
	if plane < 0 || plane >= t.planes {
		return fmt.Errorf("netio: plane %d of %d", plane, t.planes)
	}
	return t.send(shimFrame, plane, frame)
}

// ReadFrame implements Conn. It drops datagrams from anyone but a fixed
// remote, datagrams without a valid shim, and frames over MaxFrame bytes.
func (t *Tunnel) ReadFrame() (Frame, error) {
	for {
		n, oobn, flags, ra, err := t.c.ReadMsgUDP(t.buf, t.oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return Frame{}, ErrClosed
			}
			return Frame{}, err
		}
		b := t.buf[:n]
		t.mu.Lock()
		switch {
		case t.fixed && !sameUDPAddr(ra, t.remote):
			t.dropped.Stranger++
		case n < shimLen || [4]byte(b[:4]) != shimMagic || b[4] != shimVersion || int(b[6]) >= t.planes:
			t.dropped.Malformed++
		case n-shimLen > MaxFrame || flags&syscall.MSG_TRUNC != 0:
			t.dropped.Oversized++
		default:
			if !t.fixed {
				t.remote = ra
			}
			t.mu.Unlock()
			if b[5] != shimFrame {
				continue
			}
			return Frame{Plane: int(b[6]), Data: slices.Clone(b[shimLen:]), At: arrival(t.oob[:oobn])}, nil
		}
		t.mu.Unlock()
	}
}

// Close implements Conn.
func (t *Tunnel) Close() error { return t.c.Close() }
