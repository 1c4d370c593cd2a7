package active

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/netio"
)

// SocketTarget is an IUT reached over real sockets: a netio transport
// (AF_PACKET or the UDP tunnel) for the data path and a control
// connection. Its clock is real. Every frame the tester sends passes the
// transport's guard (netio.Guard): it leaves only on the transport's
// planes, to the IUT's unicast MAC of that plane, as UDP to an MRC port,
// to a configured peer address; an SRv6 outer destination only within
// the tester's uSID locator block (testerSRv6Prefix).
type SocketTarget struct {
	name  string
	ips   []netip.Addr // the tester's addresses, one per IP version
	conn  netio.Conn
	ctl   *control.Client
	local Addrs
	tun   string
	start time.Time
	tap   tapper
	rx    chan Frame
	errc  chan error
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
	timer *time.Timer
	// rxBytes is the data buffered in rx; rxDropped counts the frames
	// dropped because rx was full.
	rxBytes   atomic.Int64
	rxDropped atomic.Uint64
}

// Receive buffer limits of a SocketTarget (the README's "Resource
// limits"): frames from the IUT wait here until a case reads them. When
// either limit is reached, further frames are dropped as a congested
// fabric would drop them, and memory stays bounded whatever the IUT (or
// anyone who can reach the tester's socket) sends.
const (
	MaxBufferedFrames = 4096
	MaxBufferedBytes  = 8 << 20
)

// SocketConfig configures a SocketTarget.
type SocketConfig struct {
	// Name is the transport's name in the report ("udp", "afpacket").
	Name string
	// Conn is the data path.
	Conn netio.Conn
	// Control is the IUT's control client.
	Control *control.Client
	// TesterIP is the tester's own MRC address.
	TesterIP netip.Addr
	// TesterIPs are further addresses of the tester, at most one per IP
	// version: the run uses the one of the IUT's version (CheckPeer).
	TesterIPs []netip.Addr
	// Peers are the IUT addresses frames may be sent to; empty means the
	// address the IUT announces in hello (UDP tunnel only: an AF_PACKET
	// target requires them).
	Peers []netip.Addr
	// Ports are the MRC UDP ports frames may be sent to.
	Ports []uint16
	// Tunnel is the tester's UDP tunnel address as the IUT reaches it,
	// announced in hello (udp transport only).
	Tunnel string
}

// NewSocketTarget starts a target over an open transport and control
// connection.
func NewSocketTarget(cfg SocketConfig) (*SocketTarget, error) {
	var ips []netip.Addr
	for _, a := range append([]netip.Addr{cfg.TesterIP}, cfg.TesterIPs...) {
		if !a.IsValid() {
			continue
		}
		if slices.ContainsFunc(ips, func(b netip.Addr) bool { return b.Is4() == a.Is4() }) {
			return nil, &UsageError{fmt.Sprintf("two tester addresses of one IP version (%v)", append(ips, a))}
		}
		ips = append(ips, a)
	}
	if len(ips) == 0 {
		return nil, &UsageError{"the tester's IP address is required"}
	}
	if cfg.Name == "afpacket" && len(cfg.Peers) == 0 {
		return nil, &UsageError{"an AF_PACKET run needs the IUT's addresses (--peer): the tester sends to nothing else"}
	}
	// The clock is the wall clock, like the kernel's receive timestamps:
	// the monotonic clock can drift from it by milliseconds over a run
	// while NTP slews, which would reorder a frame and the feedback it
	// answered.
	s := &SocketTarget{name: cfg.Name, ips: ips, ctl: cfg.Control, start: time.Now().Round(0), rx: make(chan Frame, MaxBufferedFrames),
		errc: make(chan error, 1), done: make(chan struct{})}
	s.conn = &netio.Guarded{Conn: cfg.Conn, G: netio.Guard{Peers: slices.Clone(cfg.Peers), Ports: slices.Clone(cfg.Ports),
		SRv6: []netip.Prefix{testerSRv6Prefix}}}
	s.local = Addrs{IP: ips[0], MACs: cfg.Conn.MACs()}
	s.tun = cfg.Tunnel
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	s.wg.Add(1)
	go s.read()
	return s, nil
}

// CheckPeer makes sure the tester may send to the IUT's announced
// address; for a target without configured peers it adopts it. The
// tester's own address becomes the one of the IUT's IP version.
func (s *SocketTarget) CheckPeer(ip netip.Addr) error {
	i := slices.IndexFunc(s.ips, func(a netip.Addr) bool { return a.Is4() == ip.Is4() })
	if i < 0 {
		return &UsageError{fmt.Sprintf("the IUT announces %v and the tester has no address of its IP version (%v): give one", ip, s.ips)}
	}
	g := s.conn.(*netio.Guarded)
	switch {
	case len(g.G.Peers) == 0:
		g.G.Peers = []netip.Addr{ip}
	case !slices.Contains(g.G.Peers, ip):
		return &UsageError{fmt.Sprintf("the IUT announces address %v, which is not among the configured peers %v: refusing to send to it", ip, g.G.Peers)}
	}
	s.local.IP = s.ips[i]
	return nil
}

// SetPeerMACs pins the Ethernet destination of each plane to the IUT's
// MAC of that plane, as hello announced it.
func (s *SocketTarget) SetPeerMACs(macs [][6]byte) {
	s.conn.(*netio.Guarded).G.PeerMACs = slices.Clone(macs)
}

func (s *SocketTarget) read() {
	defer s.wg.Done()
	for {
		f, err := s.conn.ReadFrame()
		if err != nil {
			select {
			case <-s.done:
			case s.errc <- err:
			}
			return
		}
		at := s.Now()
		if !f.At.IsZero() {
			at = min(at, Time(f.At.Sub(s.start))) // the kernel's arrival time
		}
		fr := Frame{At: at, Plane: f.Plane, Out: f.Out, Data: f.Data}
		s.tap.record(&fr)
		if f.Out {
			continue
		}
		n := int64(len(fr.Data))
		if s.rxBytes.Load()+n > MaxBufferedBytes {
			s.rxDropped.Add(1)
			continue
		}
		s.rxBytes.Add(n)
		select {
		case s.rx <- fr:
		case <-s.done:
			return
		default:
			// The tester fell behind by a whole buffer: the frame is lost,
			// like any frame the fabric drops.
			s.rxBytes.Add(-n)
			s.rxDropped.Add(1)
		}
	}
}

// TunnelAddr is the tester's tunnel address announced in hello ("" when
// the data path is not the tunnel).
func (s *SocketTarget) TunnelAddr() string { return s.tun }

// Planes implements Link.
func (s *SocketTarget) Planes() int { return s.conn.Planes() }

// Now implements Link.
func (s *SocketTarget) Now() Time { return Time(time.Now().Round(0).Sub(s.start)) }

// RealTime implements Target.
func (s *SocketTarget) RealTime() bool { return true }

// Name implements Target.
func (s *SocketTarget) Name() string { return s.name }

// Control implements Target.
func (s *SocketTarget) Control() *control.Client { return s.ctl }

// Local implements Target.
func (s *SocketTarget) Local() Addrs { return s.local }

// LostFrames counts the frames the tester's data path lost before the
// cases saw them: those its sockets' kernel queues dropped (Dropped) and
// those the tester dropped when it fell behind by MaxBufferedBytes.
func (s *SocketTarget) LostFrames() uint64 {
	n := s.rxDropped.Load()
	for _, d := range s.Dropped() {
		n += d
	}
	return n
}

// Dropped returns, per plane, the frames the tap lost before its reader
// took them (netio.Dropper), or nil when the transport keeps no count.
func (s *SocketTarget) Dropped() []uint64 {
	if d, ok := s.conn.(netio.Dropper); ok {
		return d.Dropped()
	}
	return nil
}

// SetTap implements Link.
func (s *SocketTarget) SetTap(f func(Frame)) { s.tap.set(f) }

// Send implements Link.
func (s *SocketTarget) Send(plane int, frame []byte) error {
	if err := s.conn.WriteFrame(plane, frame); err != nil {
		return err
	}
	if !s.conn.TapsOutgoing() {
		s.tap.record(&Frame{At: s.Now(), Plane: plane, Out: true, Data: slices.Clone(frame)})
	}
	return nil
}

// Recv implements Link.
func (s *SocketTarget) Recv(deadline Time) (Frame, bool, error) {
	select {
	case f := <-s.rx:
		s.rxBytes.Add(-int64(len(f.Data)))
		return f, true, nil
	case err := <-s.errc:
		return Frame{}, false, err
	default:
	}
	d := deadline - s.Now()
	if d <= 0 {
		return Frame{}, false, nil
	}
	s.timer.Reset(time.Duration(d))
	defer s.timer.Stop()
	select {
	case f := <-s.rx:
		s.rxBytes.Add(-int64(len(f.Data)))
		return f, true, nil
	case err := <-s.errc:
		return Frame{}, false, err
	case <-s.timer.C:
		return Frame{}, false, nil
	}
}

// Close implements Link: it closes the transport and the control
// connection.
func (s *SocketTarget) Close() error {
	s.once.Do(func() {
		close(s.done)
		s.conn.Close()
		s.ctl.Close()
	})
	s.wg.Wait()
	return nil
}

// DialControl connects to an IUT's control server.
func DialControl(ctx context.Context, addr string) (*control.Client, error) {
	c, err := control.Dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("active: control channel %s: %w", addr, err)
	}
	return control.NewClient(c), nil
}
