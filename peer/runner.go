package peer

import (
	"context"
	"encoding/json"
	"errors"
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
	// Logf, when set, reports transport errors.
	Logf func(format string, args ...any)
}

// NewRunner returns a runner of a over conn.
func NewRunner(a *Agent, conn netio.Conn) *Runner {
	return &Runner{a: a, conn: conn, start: time.Now(), wake: make(chan struct{}, 1)}
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

// Handler answers control requests against the running agent.
func (r *Runner) Handler() control.HandlerFunc {
	return func(method string, params json.RawMessage) (any, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		res, err := r.a.Handle(r.now(), method, params)
		r.flush()
		return res, err
	}
}

// Run moves frames and fires timers until ctx ends or the transport fails.
func (r *Runner) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() {
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
		if r.a.NextDeadline() <= now {
			r.a.Advance(now)
			r.flush()
		}
		d := r.a.NextDeadline()
		r.mu.Unlock()
		wait := time.Hour
		if d != statemachine.Never {
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
