package active

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Time is the tester's clock in nanoseconds since the run started:
// synthetic for the in-process transport, real for sockets.
type Time = statemachine.Time

// Frame is one frame of the data path as the tester's tap saw it.
type Frame struct {
	// Seq numbers the frames of a run from 1, in tap order; with a
	// capture it is the frame number in the capture file.
	Seq   int
	At    Time
	Plane int
	// Out is set for frames the tester sent (else the IUT sent them).
	Out  bool
	Data []byte
}

// Link is the tester's data path to the IUT: frames out on a plane,
// frames in, and the clock they are timed by. Implementations call the
// tap (SetTap) for every frame in both directions, in the order the
// capture point saw them.
type Link interface {
	// Planes is the number of planes (NIC ports) the link has.
	Planes() int
	// Now is the current time.
	Now() Time
	// Send transmits a frame to the IUT on plane (0-based).
	Send(plane int, frame []byte) error
	// Recv returns the next frame from the IUT; ok is false when
	// deadline passed first.
	Recv(deadline Time) (f Frame, ok bool, err error)
	// SetTap installs the tap.
	SetTap(func(Frame))
	// Close releases the link.
	Close() error
}

// Target is an implementation under test: its data path and control
// channel.
type Target interface {
	Link
	Control() *control.Client
	// RealTime reports whether the clock is real (sockets) rather than
	// synthetic (in process).
	RealTime() bool
	// Name describes the target for the report.
	Name() string
	// Local returns the tester's own addresses on the link.
	Local() Addrs
}

// TransportError reports a transport that cannot be used here; Unsupported
// is set when the platform or build lacks it (exit status 127).
type TransportError struct {
	Transport   string
	Unsupported bool
	Err         error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("active: transport %s: %v", e.Transport, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// tapper numbers frames and calls the tap; it is safe for concurrent use.
type tapper struct {
	mu  sync.Mutex
	seq int
	tap func(Frame)
}

func (t *tapper) set(f func(Frame)) {
	t.mu.Lock()
	t.tap = f
	t.mu.Unlock()
}

func (t *tapper) record(f *Frame) {
	t.mu.Lock()
	t.seq++
	f.Seq = t.seq
	if t.tap != nil {
		t.tap(*f)
	}
	t.mu.Unlock()
}

// InprocConfig configures the in-process transport.
type InprocConfig struct {
	// Planes is the number of planes; 0 means 2.
	Planes int
	// Faults seeds bugs into the reference peer.
	Faults peer.FaultSet
	// Seed seeds the peer.
	Seed uint64
	// Delay is the one-way delay of every frame; 0 means 1 µs.
	Delay Time
	// Loss drops that percentage of the IUT's frames (seeded), like the
	// nftables egress rule of the end-to-end test.
	Loss int
	// IPv6 gives the IUT and the tester IPv6 addresses (fd00::2 and
	// fd00::1) instead of IPv4 ones (10.0.0.2 and 10.0.0.1).
	IPv6 bool
	// Profile is the peer's wire profile; nil means the default.
	Profile *spec.Profile
	// ExplicitRange makes the peer's device advertise and enforce
	// MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE (peer.Config.ExplicitRange).
	ExplicitRange bool
	// Trace, when set, receives the peer's statemachine events
	// (peer.Config.Trace), for tests that check why the IUT did what the
	// tester saw.
	Trace func(statemachine.Event)
}

// Addresses of the simulated fabric.
var (
	inprocIUTIP     = netip.AddrFrom4([4]byte{10, 0, 0, 2})
	inprocTesterIP  = netip.AddrFrom4([4]byte{10, 0, 0, 1})
	inprocIUTIP6    = netip.MustParseAddr("fd00::2")
	inprocTesterIP6 = netip.MustParseAddr("fd00::1")
	inprocIUTMAC    = [6]byte{0x02, 0x4d, 0x52, 0x43, 0x00, 0x02}
	inprocTesterMAC = [6]byte{0x02, 0x4d, 0x52, 0x43, 0x00, 0x01}
)

type inflight struct {
	at    Time
	seq   int
	plane int
	data  []byte
}

// Inproc is the in-process transport: the reference peer (package
// peer) on a simulated fabric with a fixed delay and a
// synthetic clock, so a run is deterministic and takes no real time.
type Inproc struct {
	agent  *peer.Agent
	tester netip.Addr
	now    Time
	delay  Time
	planes int
	seq    int
	toIUT  []inflight
	fromIU []inflight
	tx     []peer.Tx
	ctl    *control.Client
	tap    tapper
	loss   int
	rng    *rand.Rand
}

// NewInproc starts the in-process reference peer.
func NewInproc(cfg InprocConfig) (*Inproc, error) {
	if cfg.Planes == 0 {
		cfg.Planes = 2
	}
	if cfg.Delay == 0 {
		cfg.Delay = statemachine.Microsecond
	}
	if cfg.Planes < 1 || cfg.Planes > 8 {
		return nil, &TransportError{Transport: "inproc", Err: fmt.Errorf("%d planes: want 1 to 8", cfg.Planes)}
	}
	macs := make([][6]byte, cfg.Planes)
	for i := range macs {
		macs[i] = inprocIUTMAC
		macs[i][5] = byte(0x10 + i)
	}
	iut, tester := inprocIUTIP, inprocTesterIP
	if cfg.IPv6 {
		iut, tester = inprocIUTIP6, inprocTesterIP6
	}
	a, err := peer.New(peer.Config{MACs: macs, IP: iut, Seed: cfg.Seed, Faults: cfg.Faults, Profile: cfg.Profile, ExplicitRange: cfg.ExplicitRange, Trace: cfg.Trace,
		Implementation: control.Implementation{Vendor: "openmrc", Model: "reference peer (in process)", Version: "statemachine"}})
	if err != nil {
		return nil, &TransportError{Transport: "inproc", Err: err}
	}
	if cfg.Loss < 0 || cfg.Loss > 100 {
		return nil, &TransportError{Transport: "inproc", Err: fmt.Errorf("loss %d %%", cfg.Loss)}
	}
	s := &Inproc{agent: a, tester: tester, delay: cfg.Delay, planes: cfg.Planes, loss: cfg.Loss,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x10557))}
	s.ctl = control.NewClient(s)
	return s, nil
}

// Agent returns the peer, for tests.
func (s *Inproc) Agent() *peer.Agent { return s.agent }

// Planes implements Link.
func (s *Inproc) Planes() int { return s.planes }

// Now implements Link.
func (s *Inproc) Now() Time { return s.now }

// RealTime implements Target.
func (s *Inproc) RealTime() bool { return false }

// Lossless reports whether the simulated fabric drops nothing.
func (s *Inproc) Lossless() bool { return s.loss == 0 }

// Name implements Target.
func (s *Inproc) Name() string { return "inproc (reference peer, synthetic time)" }

// Control implements Target.
func (s *Inproc) Control() *control.Client { return s.ctl }

// Local implements Target.
func (s *Inproc) Local() Addrs {
	a := Addrs{IP: s.tester}
	for i := 0; i < s.planes; i++ {
		m := inprocTesterMAC
		m[5] = byte(0x20 + i)
		a.MACs = append(a.MACs, m)
	}
	return a
}

// SetTap implements Link.
func (s *Inproc) SetTap(f func(Frame)) { s.tap.set(f) }

// Close implements Link.
func (s *Inproc) Close() error { return nil }

// RoundTrip runs a control request at the current synthetic time.
func (s *Inproc) RoundTrip(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	b, err := control.Local{H: s.agent.Handler(func() Time { return s.now })}.RoundTrip(ctx, method, params)
	s.drain()
	return b, err
}

func (s *Inproc) push(q *[]inflight, f inflight) {
	s.seq++
	f.seq = s.seq
	i, _ := slices.BinarySearchFunc(*q, f, func(a, b inflight) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.seq - b.seq
	})
	*q = slices.Insert(*q, i, f)
}

// Send implements Link.
func (s *Inproc) Send(plane int, frame []byte) error {
	if plane < 0 || plane >= s.planes {
		return fmt.Errorf("active: plane %d of %d", plane, s.planes)
	}
	data := slices.Clone(frame)
	s.tap.record(&Frame{At: s.now, Plane: plane, Out: true, Data: data})
	s.push(&s.toIUT, inflight{at: s.now + s.delay, plane: plane, data: data})
	return nil
}

func (s *Inproc) drain() {
	s.tx = s.agent.TakeTx(s.tx[:0])
	for _, t := range s.tx {
		if s.loss > 0 && s.rng.IntN(100) < s.loss {
			continue
		}
		s.push(&s.fromIU, inflight{at: s.now + s.delay, plane: t.Plane, data: t.Frame})
	}
}

// Recv implements Link: it runs the simulation until a frame from the IUT
// arrives or deadline passes.
func (s *Inproc) Recv(deadline Time) (Frame, bool, error) {
	for {
		if len(s.fromIU) > 0 && s.fromIU[0].at <= s.now {
			f := s.fromIU[0]
			s.fromIU = s.fromIU[1:]
			fr := Frame{At: s.now, Plane: f.plane, Data: f.data}
			s.tap.record(&fr)
			return fr, true, nil
		}
		next := s.agent.NextDeadline()
		if len(s.toIUT) > 0 {
			next = min(next, s.toIUT[0].at)
		}
		if len(s.fromIU) > 0 {
			next = min(next, s.fromIU[0].at)
		}
		if next > deadline {
			s.now = max(s.now, deadline)
			return Frame{}, false, nil
		}
		s.now = max(s.now, next)
		for len(s.toIUT) > 0 && s.toIUT[0].at <= s.now {
			f := s.toIUT[0]
			s.toIUT = s.toIUT[1:]
			s.agent.Receive(s.now, f.plane, f.data)
			s.drain()
		}
		if s.agent.NextDeadline() <= s.now {
			s.agent.Advance(s.now)
			s.drain()
		}
	}
}

// frameTime converts a link time to wall-clock time for captures:
// synthetic times are laid on a fixed epoch so that captures of the
// in-process transport are reproducible.
func frameTime(real bool, start time.Time, at Time) time.Time {
	if real {
		return start.Add(time.Duration(at))
	}
	return time.Unix(1_767_225_600, 0).UTC().Add(time.Duration(at)) // 2026-01-01
}

// evModeOf parses the EV mode a target's hello announces (wire's names,
// any case); none is STEV.
func evModeOf(s string) (wire.EVMode, error) {
	if s == "" {
		return wire.EVModeSTEV, nil
	}
	return wire.ParseEVMode(s)
}
