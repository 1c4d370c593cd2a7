package active

import (
	"fmt"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/wire"
)

// Exchange sends a stimulus and runs the exchange until a frame matches,
// repeating the stimulus (send is told the attempt number) when no answer
// comes within the answer time, at most Tries times. Stimuli must be
// safe to repeat (a duplicate, a probe, a trimmed packet). It returns the
// matching frame, or nil.
func (c *Conn) Exchange(send func(try int), match func(*RxFrame) bool) *RxFrame {
	t := c.t
	for try := 0; try < t.s.tim.Tries; try++ {
		var got *RxFrame
		prev := c.Watch
		c.Watch = chainWatch(prev, func(f *RxFrame) {
			if got == nil && match(f) {
				got = f
			}
		})
		send(try)
		c.Run(t.Now()+t.s.tim.Answer, func() bool { return got != nil })
		c.Watch = prev
		if got != nil {
			return got
		}
	}
	return nil
}

// Expect runs the exchange for within and returns the first frame that
// matches, or nil.
func (c *Conn) Expect(within Time, match func(*RxFrame) bool) *RxFrame {
	var got *RxFrame
	prev := c.Watch
	c.Watch = chainWatch(prev, func(f *RxFrame) {
		if got == nil && match(f) {
			got = f
		}
	})
	c.Run(c.t.Now()+within, func() bool { return got != nil })
	c.Watch = prev
	return got
}

// Collect runs the exchange for within and returns every frame that
// matches.
func (c *Conn) Collect(within Time, match func(*RxFrame) bool) []*RxFrame {
	var got []*RxFrame
	prev := c.Watch
	c.Watch = chainWatch(prev, func(f *RxFrame) {
		if match(f) {
			got = append(got, f)
		}
	})
	c.Run(c.t.Now()+within, nil)
	c.Watch = prev
	return got
}

// NACK sends a Reliability NACK from the tester for psn, reflecting ev,
// on plane.
func (c *Conn) NACK(psn, ev uint32, reason wire.NACKReason, plane int) {
	p := &wire.Packet{}
	p.BTH = wire.BTH{Opcode: wire.OpNACK, PKey: 0xFFFF, DestQP: c.IUT, PSN: psn & wire.PSNMask}
	p.NETH = wire.NETH{Reason: reason, Entropy: ev, NACKPSN: psn & wire.PSNMask, SPDCID: uint16(c.TQPN), DPDCID: uint16(c.IUT)}
	c.Send(p, plane, c.TEV(plane, 0), Impair{})
}

// isData reports whether f is a data packet of the IUT's QP to the tester.
func isData(f *RxFrame) bool { return f.Pkt.BTH.Opcode.IsWrite() && toTester(f) }

// toTester reports whether f is addressed to one of the tester's QPs.
func toTester(f *RxFrame) bool { return f.Pkt.BTH.DestQP&^0xFFFF == testerQPNs }

// sackFor matches the SACK (not a probe answer) the IUT sent for psn.
func sackFor(psn uint32) func(*RxFrame) bool {
	return func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpSACK && !f.Pkt.SETH.PR && f.Pkt.SETH.AckPSN() == psn&wire.PSNMask
	}
}

// nackFor matches a NACK for psn.
func nackFor(psn uint32) func(*RxFrame) bool {
	return func(f *RxFrame) bool {
		return f.Pkt.BTH.Opcode == wire.OpNACK && f.Pkt.NETH.NACKPSN == psn&wire.PSNMask
	}
}

// feedbackFor matches a SACK or NACK for psn.
func feedbackFor(psn uint32) func(*RxFrame) bool {
	s, n := sackFor(psn), nackFor(psn)
	return func(f *RxFrame) bool { return s(f) || n(f) }
}

// fill returns n bytes of a pattern seeded by k.
func fill(k, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*29 + k*101 + 7)
	}
	return b
}

// describe summarises a frame for findings.
func describe(f *RxFrame) string {
	if f == nil {
		return "nothing"
	}
	p := &f.Pkt
	switch op := p.BTH.Opcode; {
	case op == wire.OpSACK:
		s := fmt.Sprintf("SACK cack_psn %d ack_psn %d m %s entropy %#x", p.SETH.CACKPSN, p.SETH.AckPSN(), p.SETH.M, p.SETH.Entropy)
		if p.SETH.PR {
			s = fmt.Sprintf("probe answer (pr) probe_id %#x cack_psn %d m %s entropy %#x", uint16(p.SETH.AckPSNOffset), p.SETH.CACKPSN, p.SETH.M, p.SETH.Entropy)
		}
		return s + fmt.Sprintf(" bitmap %#x@%d (frame %d)", p.SETH.SACKBitmap, p.SETH.BitmapBase(), f.Seq)
	case op == wire.OpNACK:
		return fmt.Sprintf("NACK %s nack_psn %d entropy %#x (frame %d)", p.NETH.Reason, p.NETH.NACKPSN, p.NETH.Entropy, f.Seq)
	case op == wire.OpAcknowledge:
		return fmt.Sprintf("ACKNOWLEDGE psn %d syndrome %#x msn %d (frame %d)", p.BTH.PSN, p.AETH.Syndrome, p.AETH.MSN, f.Seq)
	case op.IsWrite():
		r := ""
		if p.BTH.Retransmit {
			r = " rtx"
		}
		return fmt.Sprintf("%s psn %d ev %#x plane %d%s (frame %d)", op, p.BTH.PSN, f.EV, f.Plane, r, f.Seq)
	}
	return fmt.Sprintf("%s psn %d ev %#x plane %d (frame %d)", p.BTH.Opcode, p.BTH.PSN, f.EV, f.Plane, f.Seq)
}

// Traffic keeps the IUT sending for duration (or until stop returns
// true): it posts an RDMA write of n bytes every Settle/16, keeping at
// most depth outstanding. It returns the number of writes posted.
func (c *Conn) Traffic(duration Time, depth, n int, stop func() bool) int {
	t := c.t
	end := t.Now() + duration
	every := max(t.s.tim.Settle/16, 1)
	posted, done := 0, 0
	for t.Now() < end {
		if posted-done < depth {
			c.Post(uint64(1000+len(c.posted)), control.OpRDMAWrite, n, 0)
			posted++
		}
		if c.Run(min(end, t.Now()+every), stop) {
			return posted
		}
		done += len(c.Poll())
	}
	return posted
}

// TrafficUntil keeps the IUT sending (Traffic, four writes of 2 KiB deep)
// for duration and then, while seen reports false, for up to the transfer
// time more. A loss recovered by a retransmission timeout on a loaded host
// can outlast a short window; a case that still sees nothing then fails or
// is inconclusive as before.
func (c *Conn) TrafficUntil(duration Time, seen func() bool) {
	c.Traffic(duration, 4, 2048, nil)
	if !seen() {
		c.Traffic(c.t.s.tim.Transfer, 4, 2048, seen)
	}
}

// ptrU32 returns a pointer to v.
func ptrU32(v uint32) *uint32 { return &v }
