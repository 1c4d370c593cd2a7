package active

import (
	"fmt"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Step mode: the IUT sends single-packet writes one at a time, and the
// tester's feedback reaches it between any two of them, so the EV of each
// packet shows where the requester's rotation stands (EV-SET-3, EV-SET-4)
// and what a SACK or NACK did to an EV's state. Path states are invisible
// on the wire except through this: which EVs carry data, in which order.

// stepper has the IUT send its QP's single-packet writes one at a time.
type stepper struct {
	c    *Conn
	next uint32 // PSN of the next write
	wr   uint64
}

func (c *Conn) stepper() *stepper { return &stepper{c: c, next: c.SQPSN, wr: 50000} }

// step posts one single-packet write and returns its first transmission.
// It returns false when the packet was not seen within the answer time or
// another data packet (a retransmission) came instead: a loss disturbed
// the exchange.
func (s *stepper) step() (DataTx, bool) {
	c, t := s.c, s.c.t
	psn := s.next
	s.next = wire.PSNAdd(s.next, 1)
	n0 := len(c.Sent)
	s.wr++
	c.Post(s.wr, control.OpRDMAWrite, 256, 0) // one packet: the path MTU is 1024
	var got DataTx
	ok := false
	c.Run(t.Now()+t.s.tim.Answer, func() bool {
		if len(c.Sent) == n0 {
			return false
		}
		d := c.Sent[n0]
		got, ok = d, d.PSN == psn && !d.Rtx
		return true
	})
	return got, ok
}

// steps takes n steps; false as for step.
func (s *stepper) steps(n int) ([]DataTx, bool) {
	var out []DataTx
	for range n {
		d, ok := s.step()
		if !ok {
			return out, false
		}
		out = append(out, d)
	}
	return out, true
}

// trialLog buffers the observations of one trial: they count only when
// the trial ends undisturbed.
type trialLog struct {
	t     *T
	items []func()
	inc   []string
}

// inconclusive records that the trial could not decide.
func (l *trialLog) inconclusive(format string, args ...any) {
	l.inc = append(l.inc, fmt.Sprintf(format, args...))
}

func (l *trialLog) check(cond bool, req conformance.RequirementID, ev Evidence, expected, observed string, args ...any) {
	if len(args) > 0 {
		observed = fmt.Sprintf(observed, args...)
	}
	l.items = append(l.items, func() { l.t.Check(cond, req, ev, expected, "%s", observed) })
}

// trialResult says how a trial ended.
type trialResult int

const (
	trialDone      trialResult = iota // undisturbed: its observations count
	trialDisturbed                    // a loss, or a precondition the tester could not set up: try again
)

// trials runs trial, each time on a fresh QP, until want trials ended
// undisturbed or the attempts run out. On a lossless link every trial
// counts (want of them); on a lossy one, the first undisturbed one is
// enough, since losses disturb most trials. It returns the undisturbed
// trials.
func (t *T) trials(want int, trial func(l *trialLog) trialResult) int {
	if !t.Lossless() {
		want = 1
	}
	done := 0
	for try := 0; try < 32 && done < want; try++ {
		l := &trialLog{t: t}
		if trial(l) != trialDone {
			t.Logf("trial %d disturbed: tried again on a fresh QP", try)
			continue
		}
		for _, f := range l.items {
			f()
		}
		for _, r := range l.inc {
			t.Inconclusive("%s", r)
		}
		done++
	}
	if done == 0 {
		t.Inconclusive("every trial was disturbed by losses")
	}
	return done
}

// allEVs returns every EV of the IUT's profile, plane by plane.
func (c *Conn) allEVs() []uint32 {
	var out []uint32
	for _, evs := range c.IUTEVs {
		out = append(out, evs...)
	}
	return out
}

// planeOf returns the plane of one of the IUT's EVs, or -1.
func (c *Conn) planeOf(ev uint32) int {
	for pl, evs := range c.IUTEVs {
		if slices.Contains(evs, ev) {
			return pl
		}
	}
	return -1
}

// evsOf returns the EVs of the packets.
func evsOf(ds []DataTx) []uint32 {
	out := make([]uint32, len(ds))
	for i, d := range ds {
		out[i] = d.EV
	}
	return out
}

// sameSet reports whether a holds each element of b exactly once and
// nothing else.
func sameSet(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// duplicated returns an EV that occurs twice in evs, if any.
func duplicated(evs []uint32) (uint32, bool) {
	seen := map[uint32]bool{}
	for _, e := range evs {
		if seen[e] {
			return e, true
		}
		seen[e] = true
	}
	return 0, false
}

func hexList(evs []uint32) string {
	s := ""
	for i, e := range evs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%#x", e)
	}
	return s
}

// redeliver hands a copy of a frame the IUT sent to the tester's reference
// QP once more, impaired: a duplicate the fabric made (and marked) on the
// way. The reference answers it as any responder would.
func (c *Conn) redeliver(f *RxFrame, im Impair) {
	q := f.Pkt
	im.apply(c.t.s.codec, &q)
	c.ref.Receive(c.t.Now(), f.Plane+1, &q, &c.out)
	c.flush()
}

// sendOut sends a packet the reference QP produced (held back earlier).
func (c *Conn) sendOut(o *statemachine.Outgoing) {
	t := c.t
	c.noteAck(&o.Pkt)
	pl := int(o.Plane)
	o.Pkt.Eth.Src, o.Pkt.Eth.Dst = t.s.tester.MACs[pl], t.s.iut.MACs[pl]
	t.SendPacket(pl, &o.Pkt, Impair{})
}
