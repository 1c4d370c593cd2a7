// Package longconn writes a capture of one long connection: a reference
// requester and responder (package statemachine) back to back, the
// requester posting 16 KiB writes in 256-byte packets and the responder
// coalescing 16 packets per SACK, so that nine frames in ten are data;
// every frame is captured at the requester's NIC. Its size grows with the number of frames while the connection
// state stays that of one QP pair, so judging it shows whether the
// judge's memory grows with the length of a connection (issue 12's
// "2 M small frames under 64 MB" check, scripts/bench.sh).
package longconn

import (
	"fmt"
	"io"
	"time"

	"github.com/openmrc/mrc/pcap"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Sizes: the path MTU (each data packet's payload) and each write.
const (
	MTU     = 256
	Message = 64 * MTU
)

// coalesce is the responder's ack_coalesce.
const coalesce = 16

// Point is the capture point's name: interfaces Point/plane0 to
// Point/plane7.
const Point = "A"

// maxRounds bounds a run: each round trip moves at least one frame unless
// the pair stalls, which is an error.
const maxRounds = 1 << 26

// Write writes a pcapng of about frames frames (data packets and their
// acknowledgements; it stops at the first round trip reaching frames) to
// w and returns the number written.
func Write(w io.Writer, frames int) (int, error) {
	a, b, err := pair()
	if err != nil {
		return 0, err
	}
	var ifs []pcap.Interface
	for p := 0; p < 8; p++ {
		ifs = append(ifs, pcap.Interface{Point: Point, Plane: p})
	}
	pw, err := pcap.NewWriter(w, ifs...)
	if err != nil {
		return 0, err
	}
	g := &gen{w: pw, t0: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), data: make([]byte, Message)}
	var outA, outB sm.Output
	var now sm.Time
	for r := 0; g.n < frames; r++ {
		if r == maxRounds || a.State() != sm.StateRTS || b.State() != sm.StateRTS {
			return g.n, fmt.Errorf("longconn: the QP pair stalled after %d frames (states %v, %v)", g.n, a.State(), b.State())
		}
		if err := g.post(a, now, &outA); err != nil {
			return g.n, err
		}
		now += sm.Microsecond / 2
		if a.NextDeadline() <= now {
			a.Advance(now, &outA)
		}
		g.deliver(now, b, &outA, &outB)
		now += sm.Microsecond / 2
		if b.NextDeadline() <= now {
			b.Advance(now, &outB)
		}
		g.deliver(now, a, &outB, &outA)
		if g.err != nil {
			return g.n, g.err
		}
	}
	return g.n, pw.Flush()
}

// gen is one run's capture writer.
type gen struct {
	w    *pcap.Writer
	t0   time.Time
	buf  []byte
	tmp  wire.Packet
	data []byte
	wrid uint64
	n    int
	err  error
}

// post fills the requester's send queue with writes.
func (g *gen) post(a *sm.QP, now sm.Time, out *sm.Output) error {
	for {
		g.wrid++
		err := a.Post(now, sm.WorkRequest{WRID: g.wrid, Opcode: sm.OpWrite, RemoteVA: 0x1000, RKey: 1, Data: g.data}, out)
		if err != nil {
			g.wrid--
			if len(out.Packets) == 0 {
				return fmt.Errorf("longconn: post: %w", err)
			}
			return nil // the send queue is full
		}
	}
}

// deliver captures and hands the packets of from to the QP to, whose
// output goes to into; from is reset.
func (g *gen) deliver(now sm.Time, to *sm.QP, from, into *sm.Output) {
	for i := range from.Packets {
		o := &from.Packets[i]
		g.capture(now, int(o.Plane), &o.Pkt)
		to.Receive(now, int(o.Plane)+1, &o.Pkt, into)
	}
	from.Reset()
	into.Placements, into.Completions, into.Events = into.Placements[:0], into.Completions[:0], into.Events[:0]
}

func (g *gen) capture(now sm.Time, plane int, p *wire.Packet) {
	g.tmp = *p // Append fills derived fields; the QP keeps its packet as it is
	var err error
	if g.buf, err = wire.Default.Append(g.buf[:0], &g.tmp); err == nil {
		err = g.w.WritePacket(g.t0.Add(time.Duration(now)), plane, g.buf)
	}
	if err != nil && g.err == nil {
		g.err = err
	}
	g.n++
}

// pair is a requester and a responder in RTS: the default 8-plane EV
// profile, 256-byte MTU, MPR 8, SACKs coalesced.
func pair() (a, b *sm.QP, err error) {
	ca, cb := sm.DefaultConfig(1), sm.DefaultConfig(2)
	qa, qb := sm.DefaultQPConfig(0x101, 1), sm.DefaultQPConfig(0x201, 2)
	qb.Addr.SrcIP, qb.Addr.DstIP = qa.Addr.DstIP, qa.Addr.SrcIP
	cb.Policy.Ack.Coalesce = coalesce
	attr := func(dest uint32) sm.Attr {
		return sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 8, MPRDest: 8, MaxWIMM: 16, MaxWIMMDest: 16,
			Timeout: 8, Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: MTU, DestQPN: dest}
	}
	if a, err = sm.New(ca, qa); err != nil {
		return nil, nil, err
	}
	if b, err = sm.New(cb, qb); err != nil {
		return nil, nil, err
	}
	var out sm.Output
	if err = a.BringUp(0, attr(0x201), &out); err != nil {
		return nil, nil, err
	}
	if err = b.BringUp(0, attr(0x101), &out); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}
