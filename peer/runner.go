package peer

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"sync"
	"time"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/statemachine"
)

// Runner drives an Agent in real time over a netio transport: frames in,
// timers, control requests, frames out. It is what cmd/mrc-peer runs.
type Runner struct {
	a     *Agent
	conn  netio.Conn
	start time.Time
	mu    sync.Mutex
	wake  chan struct{}
	tx    []Tx
	// pinned is the tunnel remote fixed before any hello (mrc-peer
	// --remote); a hello may not move it.
	pinned *net.UDPAddr
	// Logf, when set, reports transport errors.
	Logf func(format string, args ...any)
	// holding: an expired timer waits for frames the transport holds,
	// since heldSince (framesFirst).
	holding   bool
	heldSince statemachine.Time
	// arrived is, per plane, when the last frame the reader applied from
	// it reached the transport, on r's clock (arrival); noArrival before
	// the first.
	arrived []statemachine.Time
}

// noArrival is arrived's value for a plane none of whose frames was
// applied yet: its pending frames may have arrived at any time.
const noArrival = statemachine.Time(math.MinInt64)

// pender is a transport that tells whether frames wait to be read, or
// were read and not yet applied (netio.AFPacket): it counts the frame
// ReadFrame returned last until ReadFrame is called again, and Run's
// reader calls it again only once it has applied that frame.
type pender interface{ Pending() bool }

// planePender is a pender that also tells per plane, and stamps each
// frame with when it reached the transport (Frame.At; netio.AFPacket). A
// plane's frames reach ReadFrame in the order they arrived.
type planePender interface {
	pender
	PendingOn(plane int) bool
}

// maxArrivedFirst bounds how long an expired timer waits for frames that
// arrived before its deadline on a planePender, maxFramesFirst how long it
// waits for whatever another pender holds; framesPoll is how often it
// looks again meanwhile. The first wait ends by itself once the reader has
// caught up to the deadline: it runs long only while the reader is
// starved, and a loaded two-core host was seen to leave it 60 ms behind.
// 100 ms covers that with margin and is the answer window the tester
// gives a software peer on real transports (five 20 ms tolerances,
// active.RealTiming): a peer whose reader is further behind is late
// answering it already.
const (
	maxArrivedFirst = 100 * statemachine.Millisecond
	maxFramesFirst  = 5 * statemachine.Millisecond
	framesPoll      = 200 * time.Microsecond
)

// framesFirst reports whether the timer due at deadline waits, at now, so
// that the frames that reached the transport before deadline are taken in
// before it fires: a SACK that arrived before the retransmission timeout
// ran out must stop the retransmission (LR-RTX-1), as on a NIC whose
// receive path is never starved. A loaded host deschedules the peer for
// tens of milliseconds; when it runs again, Go's scheduler wakes the
// timer's goroutine before it polls the sockets for the reader's, and the
// reader may be far behind, so without the wait the peer resent PSNs
// whose SACK had been waiting all along. A frame the reader goroutine
// holds, out of the socket but not yet applied (taken by ReadFrame,
// waiting for r.mu or to be scheduled), counts as pending too.
//
// On a planePender the timer waits while a plane has frames pending and
// the last frame applied from it arrived before deadline (the pending ones
// may have too), up to maxArrivedFirst: once the reader has applied a
// frame that arrived after the deadline, that plane's pending frames
// arrived later still and do not hold it. On another pender it waits
// while anything is pending, up to maxFramesFirst. A deadline not yet due
// ends the hold (a frame stopped the timer), so that the next expiry gets
// its own wait.
func (r *Runner) framesFirst(now, deadline statemachine.Time) bool {
	p, ok := r.conn.(pender)
	if !ok || deadline > now {
		r.holding = false
		return false
	}
	limit, wait := maxFramesFirst, false
	if pp, ok := p.(planePender); ok {
		limit = maxArrivedFirst
		for plane, at := range r.arrived {
			if at < deadline && pp.PendingOn(plane) {
				wait = true
				break
			}
		}
	} else {
		wait = p.Pending()
	}
	if !wait {
		r.holding = false
		return false
	}
	if !r.holding {
		r.holding, r.heldSince = true, now
	}
	if now-r.heldSince >= limit {
		r.holding = false
		return false
	}
	return true
}

// NewRunner returns a runner of a over conn.
func NewRunner(a *Agent, conn netio.Conn) *Runner {
	r := &Runner{a: a, conn: conn, start: time.Now(), wake: make(chan struct{}, 1), arrived: make([]statemachine.Time, conn.Planes())}
	for i := range r.arrived {
		r.arrived[i] = noArrival
	}
	if rs, ok := conn.(remoteSetter); ok {
		if ra, fixed := rs.Remote(); fixed {
			r.pinned = ra
		}
	}
	return r
}

func (r *Runner) now() statemachine.Time { return statemachine.Time(time.Since(r.start)) }

// receive applies frame f and notes when it arrived (framesFirst).
func (r *Runner) receive(f netio.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := time.Now()
	now := statemachine.Time(t.Sub(r.start))
	if f.Plane >= 0 && f.Plane < len(r.arrived) {
		r.arrived[f.Plane] = arrival(t, now, f.At)
	}
	r.a.Receive(now, f.Plane, f.Data)
	r.flush()
}

// arrival returns when a frame stamped at reached the transport, on the
// runner's clock, given t, the time that is now there. The kernel stamps
// frames with the wall clock (CLOCK_REALTIME) and the runner's clock is
// monotonic from start, so the frame's age on the wall clock, t minus at,
// converts one to the other: a step of the wall clock since start does not
// shift it, one since the frame arrived does by the step, and a frame
// from the future counts as arrived now. So does one without a stamp.
func arrival(t time.Time, now statemachine.Time, at time.Time) statemachine.Time {
	if at.IsZero() {
		return now
	}
	return now - statemachine.Time(max(t.Sub(at), 0))
}

// flush sends what the agent produced; r.mu is held.
func (r *Runner) flush() {
	r.tx = r.a.TakeTx(r.tx[:0])
	for _, t := range r.tx {
		if err := r.conn.WriteFrame(t.Plane, t.Frame); err != nil && r.Logf != nil {
			r.Logf("send on plane %d: %v", t.Plane, err)
		}
	}
	clear(r.tx)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// remoteSetter is a transport whose peer address the control session
// announces (the netio tunnel).
type remoteSetter interface {
	SetRemote(addr string) error
	Remote() (*net.UDPAddr, bool)
}

// Handler answers control requests against the running agent. A hello
// that announces the tester's tunnel address fixes the tunnel's remote to
// it, so that the peer answers that tester only and reads nothing from
// anyone else; a tunnel fixed at start (mrc-peer --remote) refuses
// another address.
func (r *Runner) Handler() control.HandlerFunc {
	return func(method string, params json.RawMessage) (any, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if method == control.MethodHello {
			if err := r.announce(params); err != nil {
				return nil, err
			}
		}
		res, err := r.a.Handle(r.now(), method, params)
		r.flush()
		return res, err
	}
}

func (r *Runner) announce(params json.RawMessage) error {
	var p control.HelloParams
	if err := control.Decode(params, &p); err != nil || p.Tunnel == "" {
		return err
	}
	rs, ok := r.conn.(remoteSetter)
	if !ok {
		return nil // not a tunnel: the address means nothing here
	}
	if r.pinned != nil {
		if a, err := net.ResolveUDPAddr("udp", p.Tunnel); err != nil || a.String() != r.pinned.String() {
			return control.Errorf(control.CodeInvalidArgument, "this peer's tunnel is fixed to %v (--remote), the tester announces %q", r.pinned, p.Tunnel)
		}
		return nil
	}
	if err := rs.SetRemote(p.Tunnel); err != nil {
		return control.Errorf(control.CodeInvalidArgument, "tunnel %q: %v", p.Tunnel, err)
	}
	return nil
}

// Run moves frames and fires timers until ctx ends or the transport fails.
func (r *Runner) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() {
		// ReadFrame is called again only once the frame it returned is
		// applied: that call tells a pender the frame is done (framesFirst).
		for {
			f, err := r.conn.ReadFrame()
			if err != nil {
				errc <- err
				return
			}
			r.receive(f)
		}
	}()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		r.mu.Lock()
		now := r.now()
		d := r.a.NextDeadline()
		held := r.framesFirst(now, d)
		if !held && d <= now {
			r.a.Advance(now)
			r.flush()
		}
		d = r.a.NextDeadline()
		r.mu.Unlock()
		wait := time.Hour
		switch {
		case held:
			wait = framesPoll
		case d != statemachine.Never:
			wait = max(time.Duration(d-now), 0)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			r.conn.Close()
			return nil
		case err := <-errc:
			if errors.Is(err, netio.ErrClosed) && ctx.Err() != nil {
				return nil
			}
			return err
		case <-r.wake:
		case <-t.C:
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
	}
}
