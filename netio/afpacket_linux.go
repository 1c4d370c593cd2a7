//go:build linux

package netio

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

const (
	ethPAll        = 0x0003
	packetOutgoing = 4
	// packetIgnoreOutgoing is the PACKET_IGNORE_OUTGOING socket option
	// (Linux 4.20).
	packetIgnoreOutgoing = 23
	// packetStatistics is the PACKET_STATISTICS socket option: a struct
	// tpacket_stats (packets, drops), each reset when read.
	packetStatistics = 6
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// AFPacketSupported reports whether this build has AF_PACKET support.
const AFPacketSupported = true

type afIf struct {
	name string
	mac  [6]byte
	send syscall.RawConn // sends (and, without a tap, receives)
	recv syscall.RawConn
	fs   []*os.File
}

// AFPacket moves frames over AF_PACKET raw sockets, one interface per
// plane. It needs CAP_NET_RAW.
type AFPacket struct {
	ifs    []*afIf
	ports  []uint16
	tap    bool
	frames chan Frame
	errc   chan error
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	// held counts, per plane, the frames out of its socket that the
	// caller of ReadFrame has not finished with (Pending, PendingOn):
	// from just before a reader's recvmsg until the ReadFrame call after
	// the one that returned the frame. handed counts, per plane, the
	// frames ReadFrame returned that no later call has released: at most
	// one in all when one goroutine calls it; counts rather than a flag,
	// so that goroutines calling at once cannot leave held counting a
	// frame for good.
	held   []atomic.Int64
	handed []atomic.Int64
	// dropped counts, per plane, the frames the kernel dropped on the
	// plane's reading socket (Dropped).
	dropMu  sync.Mutex
	dropped []uint64
}

// PermissionError reports that raw sockets need privileges this process
// lacks.
type PermissionError struct{ Err error }

func (e *PermissionError) Error() string {
	return "netio: AF_PACKET sockets need root (CAP_NET_RAW): " + e.Err.Error()
}

func (e *PermissionError) Unwrap() error { return e.Err }

func rawSocket(ifindex int, proto uint16, name string) (syscall.RawConn, *os.File, error) {
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, int(htons(proto)))
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			return nil, nil, &PermissionError{Err: err}
		}
		return nil, nil, fmt.Errorf("netio: AF_PACKET socket: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(proto), Ifindex: ifindex}); err != nil {
		syscall.Close(fd)
		return nil, nil, fmt.Errorf("netio: binding to %s: %w", name, err)
	}
	enableTimestamps(uintptr(fd))
	enableAuxdata(uintptr(fd))
	if proto != 0 {
		setRecvQueue(fd)
	}
	f := os.NewFile(uintptr(fd), "afpacket:"+name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return rc, f, nil
}

// OpenAFPacket opens raw sockets on the named interfaces: plane i is
// ifaces[i]. It reads only IPv4/IPv6 UDP frames to one of ports. With
// tap, a second socket per interface sees both directions, including
// this process's own transmissions (Frame.Out), for a capture. Frames
// keep their 802.1Q tag: VLAN offload takes it off before the socket
// sees the frame, and the reader puts it back from PACKET_AUXDATA.
func OpenAFPacket(ifaces []string, ports []uint16, tap bool) (*AFPacket, error) {
	if len(ifaces) == 0 {
		return nil, errors.New("netio: no interface given")
	}
	a := &AFPacket{ports: slices.Clone(ports), tap: tap, frames: make(chan Frame, MaxQueuedFrames), errc: make(chan error, 1),
		done: make(chan struct{})}
	for _, name := range ifaces {
		ni, err := net.InterfaceByName(name)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("netio: interface %q: %w", name, err)
		}
		in := &afIf{name: name}
		copy(in.mac[:], ni.HardwareAddr)
		sendProto := uint16(ethPAll)
		if tap {
			sendProto = 0 // a send-only socket: the tap socket reads
		}
		rc, f, err := rawSocket(ni.Index, sendProto, name)
		if err != nil {
			a.Close()
			return nil, err
		}
		in.send, in.recv, in.fs = rc, rc, append(in.fs, f)
		if !tap {
			// Not a tap: this host's own frames are not read, so the
			// socket need not queue them (Pending would see them). An
			// older kernel queues them and the reader skips them.
			_ = rc.Control(func(fd uintptr) {
				_ = syscall.SetsockoptInt(int(fd), syscall.SOL_PACKET, packetIgnoreOutgoing, 1)
			})
		}
		if tap {
			rc, f, err := rawSocket(ni.Index, ethPAll, name)
			if err != nil {
				in.fs[0].Close()
				a.Close()
				return nil, err
			}
			in.recv, in.fs = rc, append(in.fs, f)
		}
		a.ifs = append(a.ifs, in)
	}
	a.held, a.handed = make([]atomic.Int64, len(a.ifs)), make([]atomic.Int64, len(a.ifs))
	a.dropped = make([]uint64, len(a.ifs))
	for i, in := range a.ifs {
		a.wg.Add(1)
		go a.read(i, in)
	}
	return a, nil
}

func (a *AFPacket) read(plane int, in *afIf) {
	defer a.wg.Done()
	buf := make([]byte, MaxFrame+1) // one byte more: a longer frame shows as truncated
	oob := make([]byte, oobSize)
	for {
		var n, oobn int
		var from syscall.Sockaddr
		var rerr error
		err := in.recv.Read(func(fd uintptr) bool {
			// Counted before the frame leaves the socket, so that it
			// is never out of Pending's sight on its way to the caller.
			a.held[plane].Add(1)
			n, oobn, _, from, rerr = syscall.Recvmsg(int(fd), buf, oob, 0)
			if rerr != nil {
				a.held[plane].Add(-1)
			}
			return rerr != syscall.EAGAIN
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			select {
			case <-a.done:
			case a.errc <- fmt.Errorf("netio: reading %s: %w", in.name, err):
			default:
			}
			return
		}
		out := false
		if ll, ok := from.(*syscall.SockaddrLinklayer); ok {
			out = ll.Pkttype == packetOutgoing
		}
		f, ok := a.frame(plane, buf[:n], oob[:oobn], out)
		if !ok {
			a.held[plane].Add(-1)
			continue
		}
		select {
		case a.frames <- f:
		case <-a.done:
			return
		}
	}
}

// frame returns the Frame a reader passes on for data, the bytes one
// recvmsg read into its buffer (one byte longer than MaxFrame, so a longer
// frame shows as such), or false for a frame it drops.
func (a *AFPacket) frame(plane int, data, oob []byte, out bool) (Frame, bool) {
	if (out && !a.tap) || len(data) > MaxFrame {
		return Frame{}, false
	}
	if tpid, tci, ok := vlanTag(oob); ok {
		if len(data)+4 > MaxFrame {
			return Frame{}, false // longer than MaxFrame as it was on the wire
		}
		data = withVLAN(data, tpid, tci) // as it was on the wire
	} else {
		data = slices.Clone(data)
	}
	if _, ok := IsMRC(data, a.ports); !ok {
		return Frame{}, false
	}
	return Frame{Plane: plane, Out: out, Data: data, At: arrival(oob)}, true
}

// Planes implements Conn.
func (a *AFPacket) Planes() int { return len(a.ifs) }

// RecvQueueBytes is the kernel receive queue a reading AF_PACKET socket
// asks for (SO_RCVBUFFORCE with CAP_NET_ADMIN, else SO_RCVBUF, which
// net.core.rmem_max caps): about 7,000 frames of 1 KiB with their kernel
// overhead, for the times the host deschedules the socket's reader; when
// it is full the kernel drops, and Dropped counts the frames dropped.
const RecvQueueBytes = 8 << 20

// setRecvQueue sets socket fd's receive queue to RecvQueueBytes, or as
// close to it as the process may.
func setRecvQueue(fd int) {
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, RecvQueueBytes) != nil {
		_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, RecvQueueBytes)
	}
}

// Dropped returns, per plane, how many frames the kernel dropped on the
// plane's reading socket since the transport opened, its receive queue
// being full (its reader fell behind: MaxQueuedFrames, RecvQueueBytes).
// A tap's capture does not hold them. The kernel counts every frame the
// socket's filter passed (not only MRC frames) and resets its count when
// read; Dropped adds them up.
func (a *AFPacket) Dropped() []uint64 {
	a.dropMu.Lock()
	defer a.dropMu.Unlock()
	for p, in := range a.ifs {
		_ = in.recv.Control(func(fd uintptr) {
			var st struct{ packets, drops uint32 }
			n := uint32(unsafe.Sizeof(st))
			_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.SOL_PACKET, packetStatistics,
				uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&n)), 0)
			if e == 0 {
				a.dropped[p] += uint64(st.drops)
			}
		})
	}
	return slices.Clone(a.dropped)
}

// TapsOutgoing implements Conn.
func (a *AFPacket) TapsOutgoing() bool { return a.tap }

// MACs implements Conn.
func (a *AFPacket) MACs() [][6]byte {
	out := make([][6]byte, len(a.ifs))
	for i, in := range a.ifs {
		out[i] = in.mac
	}
	return out
}

// WriteFrame implements Conn. A frame dropped by the egress path
// (ENOBUFS, e.g. an nftables egress rule) is lost, not an error.
func (a *AFPacket) WriteFrame(plane int, frame []byte) error {
	if plane < 0 || plane >= len(a.ifs) {
		return fmt.Errorf("netio: plane %d of %d", plane, len(a.ifs))
	}
	var werr error
	err := a.ifs[plane].send.Write(func(fd uintptr) bool {
		_, werr = syscall.Write(int(fd), frame)
		return werr != syscall.EAGAIN
	})
	if err == nil {
		err = werr
	}
	if errors.Is(err, syscall.ENOBUFS) {
		return nil
	}
	if errors.Is(err, os.ErrClosed) {
		return ErrClosed
	}
	return err
}

// ReadFrame implements Conn. Calling it again tells Pending that the
// caller is done with the frame it returned last.
func (a *AFPacket) ReadFrame() (Frame, error) {
	a.release()
	select {
	case f := <-a.frames:
		a.handed[f.Plane].Add(1)
		return f, nil
	case err := <-a.errc:
		return Frame{}, err
	case <-a.done:
		return Frame{}, ErrClosed
	}
}

// release tells Pending that the caller is done with a frame ReadFrame
// returned: with one goroutine calling, the only one handed out.
func (a *AFPacket) release() {
	for p := range a.handed {
		for h := a.handed[p].Load(); h > 0; h = a.handed[p].Load() {
			if a.handed[p].CompareAndSwap(h, h-1) {
				a.held[p].Add(-1)
				return
			}
		}
	}
}

// Pending reports whether frames reached the transport that its caller has
// not finished with: ones still in a socket's receive buffer because its
// reader has not run (a loaded host deschedules it), ones a reader has
// taken out of the socket or queued, and the one ReadFrame returned last,
// until ReadFrame is called again. A caller about to act on an expired
// timer can let them in first. One that calls ReadFrame again only once
// it has applied the last frame is never told "nothing" while a frame it
// has not applied is on its way, even one that ReadFrame has handed to a
// goroutine not yet running. A reader's recvmsg counts from just before
// the call, so one that finds nothing shows as pending while it runs.
func (a *AFPacket) Pending() bool {
	for p := range a.ifs {
		if a.PendingOn(p) {
			return true
		}
	}
	return false
}

// PendingOn is Pending for the frames of one plane. A plane's frames reach
// a caller of ReadFrame in the order they reached its socket (one reader
// per socket, one queue), so a caller that knows when the last frame it
// applied from plane arrived (Frame.At) knows that the pending ones did
// not arrive earlier.
func (a *AFPacket) PendingOn(plane int) bool {
	if plane < 0 || plane >= len(a.ifs) {
		return false
	}
	if a.held[plane].Load() > 0 {
		return true
	}
	var b [1]byte
	ready := false
	_ = a.ifs[plane].recv.Control(func(fd uintptr) {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ready = err == nil
	})
	return ready
}

// Close implements Conn.
func (a *AFPacket) Close() error {
	a.once.Do(func() {
		close(a.done)
		for _, in := range a.ifs {
			for _, f := range in.fs {
				f.Close()
			}
		}
	})
	a.wg.Wait()
	return nil
}
