package peer

import (
	"context"
	"encoding/json"
	"errors"
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
}

// pender is a transport that tells whether frames wait to be read, or
// were read and not yet applied (netio.AFPacket): it counts the frame
// ReadFrame returned last until ReadFrame is called again, and Run's
// reader calls it again only once it has applied that frame.
type pender interface{ Pending() bool }

// maxFramesFirst bounds how long an expired timer waits for frames that
// reached the transport before it fired; framesPoll is how often it looks
// again meanwhile.
const (
	maxFramesFirst = 5 * statemachine.Millisecond
	framesPoll     = 200 * time.Microsecond
)

// framesFirst reports whether an expired timer waits, so that the frames
// the transport already holds are taken in before it fires: a SACK that
// arrived before the retransmission timeout ran out must stop the
// retransmission (LR-RTX-1), as on a NIC whose receive path is never
// starved. A loaded host deschedules the peer for tens of milliseconds;
// when it runs again, Go's scheduler wakes the timer's goroutine before it
// polls the sockets for the reader's, so without the wait the peer resent
// PSNs whose SACK had been waiting in its socket all along. A frame the
// reader goroutine holds, out of the socket but not yet applied (taken
// by ReadFrame, waiting for r.mu or to be scheduled), counts as held too.
// The wait ends when the transport holds nothing, or after
// maxFramesFirst.
func (r *Runner) framesFirst(now statemachine.Time) bool {
	p, ok := r.conn.(pender)
	if !ok || !p.Pending() {
		r.holding = false
		return false
	}
	if !r.holding {
		r.holding, r.heldSince = true, now
	}
	if now-r.heldSince >= maxFramesFirst {
		r.holding = false
		return false
	}
	return true
}

// NewRunner returns a runner of a over conn.
func NewRunner(a *Agent, conn netio.Conn) *Runner {
	r := &Runner{a: a, conn: conn, start: time.Now(), wake: make(chan struct{}, 1)}
	if rs, ok := conn.(remoteSetter); ok {
		if ra, fixed := rs.Remote(); fixed {
			r.pinned = ra
		}
	}
	return r
}

func (r *Runner) now() statemachine.Time { return statemachine.Time(time.Since(r.start)) }

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
			r.mu.Lock()
			r.a.Receive(r.now(), f.Plane, f.Data)
			r.flush()
			r.mu.Unlock()
		}
	}()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		r.mu.Lock()
		now := r.now()
		held := false
		if r.a.NextDeadline() <= now {
			if held = r.framesFirst(now); !held {
				r.a.Advance(now)
				r.flush()
			}
		}
		d := r.a.NextDeadline()
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
