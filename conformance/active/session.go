package active

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Timing is the timing profile of a run: the QP timeout the tester gives
// the IUT and how long the tester waits for things to happen. Synthetic
// time needs no slack; real time allows for scheduling and loss.
type Timing struct {
	// Timeout is the QP timeout attribute (base timeout 1.024 µs × 2^Timeout).
	Timeout uint8
	// Answer is how long the tester waits for an answer to a stimulus.
	Answer Time
	// Reaction is how long the IUT may take to act on a packet: behaviour
	// within it is not held against the packet.
	Reaction Time
	// Settle is how long the tester watches for something that must not
	// happen.
	Settle Time
	// Poll is the interval of poll_cq while waiting for completions.
	Poll Time
	// Tries is how many times a liveness check is repeated before a
	// missing answer counts as a failure (answers may be lost).
	Tries int
	// BaseRTT is the NSCC base_rtt of the resource-NACK case.
	BaseRTT Time
	// Transfer bounds a whole transfer.
	Transfer Time
	// Probe is the probe interval the tester gives the IUT's EV profile.
	Probe Time
}

// BaseTimeout is the QP's base timeout.
func (tm *Timing) BaseTimeout() Time { return statemachine.Timeout(tm.Timeout) }

// SyntheticTiming is the profile of the in-process transport.
func SyntheticTiming() Timing {
	return Timing{Timeout: 8, Answer: 50 * statemachine.Microsecond, Reaction: 5 * statemachine.Microsecond,
		Settle: 100 * statemachine.Microsecond, Poll: 5 * statemachine.Microsecond, Tries: 3,
		BaseRTT: 50 * statemachine.Microsecond, Transfer: 200 * statemachine.Millisecond, Probe: 20 * statemachine.Microsecond}
}

// RealTiming is the profile of socket transports. tolerance is the slack
// allowed for scheduling, the fabric and the IUT's reaction (0 means
// 20 ms, enough for a software IUT on a loaded two-core machine; a NIC can
// be held to far less through the PICS's capture.timer_tolerance_ns). The
// QP timeout is chosen so that a base timeout is at least three
// tolerances: timer-driven and feedback-driven behaviour stay apart.
func RealTiming(tolerance Time) Timing {
	if tolerance <= 0 {
		tolerance = 20 * statemachine.Millisecond
	}
	to := uint8(0)
	for to < statemachine.MaxTimeout && statemachine.Timeout(to) < 3*tolerance {
		to++
	}
	return Timing{Timeout: to, Answer: 5 * tolerance, Reaction: tolerance, Settle: 3 * tolerance,
		Poll: max(tolerance/10, statemachine.Millisecond), Tries: 5, BaseRTT: 3 * tolerance,
		Transfer: 10 * statemachine.Second, Probe: 4 * tolerance}
}

// session is what the cases of one run share.
type session struct {
	ctx    context.Context
	tgt    Target
	ctl    *control.Client
	hello  *control.HelloResult
	pics   *conformance.PICS
	codec  *wire.Codec
	mode   wire.EVMode
	tim    Timing
	seed   uint64
	tester Addrs
	iut    Addrs
	logf   func(string, ...any)

	delayed []delayedSend
	dseq    int
	tqpn    uint32 // the last tester QP number used
	wire    wireAcc
	// rxFrames counts the frames received from the link; dataRan lists
	// the results of data cases run while it was 0; deadPath, once set,
	// says why the data path is dead (checkDataPath).
	rxFrames int
	dataRan  []int
	deadPath string
	// caseBytes counts the bytes received in the running case.
	caseBytes int
}

type delayedSend struct {
	at    Time
	seq   int
	plane int
	data  []byte
}

// wireAcc accumulates the strict wire checks of every frame the IUT sent
// during the run; the wire case reports them.
type wireAcc struct {
	ok       int
	total    int
	findings []conformance.Finding
}

func (w *wireAcc) fail(f conformance.Finding) {
	w.total++
	if len(w.findings) < conformance.MaxFindings {
		w.findings = append(w.findings, f)
	}
}

// RxFrame is a frame from the IUT, decoded.
type RxFrame struct {
	Frame
	Pkt wire.Packet
	// Err is the decode error, if the frame did not decode.
	Err error
	// Viol are the strict-check findings of a frame that decoded.
	Viol []wire.Violation
	// EV is the EV the frame carries.
	EV uint32
	// Src and Dst are the frame's inner IP addresses.
	Src, Dst netip.Addr
}

// MaxCaseBytes bounds the frame data one case takes from the IUT (the
// README's "Resource limits"): a case keeps what it receives until it
// ends, so an IUT that never stops sending would otherwise grow the
// tester without bound. The whole reference suite stays far below it.
const MaxCaseBytes = 64 << 20

// Recv returns the next frame the IUT sent to the tester before deadline,
// sending the tester's delayed frames as they come due. Every frame is
// checked against the wire rules (the wire case reports the findings).
func (t *T) Recv(deadline Time) (*RxFrame, bool) {
	s := t.s
	for {
		if err := t.ctx.Err(); err != nil {
			t.Fatalf("run cancelled: %v", err)
		}
		s.flushDelayed(t)
		d := deadline
		if len(s.delayed) > 0 {
			d = min(d, s.delayed[0].at)
		}
		f, ok, err := s.tgt.Recv(d)
		if err != nil {
			t.Fatalf("receiving from the IUT: %v", err)
		}
		if ok {
			s.rxFrames++
			if s.caseBytes += len(f.Data); s.caseBytes > MaxCaseBytes {
				t.Fatalf("the IUT sent more than %d MiB in this case (MaxCaseBytes): stopped, as a storm of frames cannot be judged", MaxCaseBytes>>20)
			}
		}
		if !ok {
			if t.Now() >= deadline && (len(s.delayed) == 0 || s.delayed[0].at > deadline) {
				return nil, false
			}
			continue
		}
		rf := &RxFrame{Frame: f}
		if err := s.codec.Decode(f.Data, &rf.Pkt); err != nil {
			rf.Err = err
			s.wireFinding(rf, err)
			continue
		}
		p := &rf.Pkt
		if p.IsIPv6 {
			rf.Src, rf.Dst = netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst)
		} else {
			rf.Src, rf.Dst = netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst)
		}
		if rf.Dst != s.tester.IP {
			continue // not for the tester (the link's filter lets other MRC traffic through)
		}
		rf.EV = s.codec.EV(p, s.mode)
		rf.Viol = s.codec.Check(f.Data, p, nil)
		if len(rf.Viol) == 0 {
			s.wire.ok++
		}
		for _, v := range rf.Viol {
			psn, ev := p.BTH.PSN, rf.EV
			s.wire.fail(conformance.Finding{Verdict: conformance.Fail, Requirement: conformance.CodecRequirement(v.Req), Node: "iut", Frame: f.Seq,
				TimeNs: int64(f.At), Plane: f.Plane, PSN: &psn, EV: &ev, Expected: "a frame that passes " + v.Req.String(),
				Observed: fmt.Sprintf("%s (%s) in %s", v.Message(), v.Field, p.BTH.Opcode)})
		}
		return rf, true
	}
}

func (s *session) wireFinding(rf *RxFrame, err error) {
	req := conformance.CodecRequirement(wire.NoReq)
	var we *wire.Error
	if errors.As(err, &we) {
		req = conformance.CodecRequirement(we.Req)
	}
	s.wire.fail(conformance.Finding{Verdict: conformance.Fail, Requirement: req, Node: "iut", Frame: rf.Seq,
		TimeNs: int64(rf.At), Plane: rf.Plane, Expected: "a frame that decodes", Observed: err.Error()})
}

// Impair says what the tester's impairment stage does to one frame.
type Impair struct {
	Drop bool
	// Trim removes the payload and ICRC and marks the DSCP trimmed (or
	// trimmed at the last hop), as a trimming switch does.
	Trim        bool
	TrimLastHop bool
	// CE marks ECN congestion experienced.
	CE bool
	// Dup sends that many extra copies.
	Dup int
	// Delay holds the frame back.
	Delay Time
	// BadICRC corrupts the ICRC.
	BadICRC bool
}

// apply changes p as the impairment says, before encoding.
func (im Impair) apply(codec *wire.Codec, p *wire.Packet) {
	tos := &p.IP4.TOS
	if p.IsIPv6 {
		tos = &p.IP6.TrafficClass
	}
	if p.SRv6 {
		tos = &p.Outer.TrafficClass
	}
	d := codec.Profile().DSCP
	if im.Trim || im.TrimLastHop {
		dscp := d.Trimmed
		if im.TrimLastHop {
			dscp = d.TrimmedLastHop
		}
		*tos = dscp<<2 | *tos&3
		p.Payload = nil
	}
	if im.CE {
		*tos |= 3
	}
}

// SendPacket encodes p and sends it to the IUT on plane through the
// impairment stage. p's derived fields are filled by the encoder.
func (t *T) SendPacket(plane int, p *wire.Packet, im Impair) {
	if im.Drop {
		return
	}
	im.apply(t.s.codec, p)
	b, err := t.s.codec.Append(nil, p)
	if err != nil {
		t.Fatalf("encoding a %s: %v", p.BTH.Opcode, err)
	}
	if im.BadICRC && !p.Trimmed {
		b[len(b)-1] ^= 0x5A
	}
	t.SendFrame(plane, b, im.Delay, im.Dup)
}

// SendFrame sends raw bytes to the IUT on plane after delay, dup+1 times.
func (t *T) SendFrame(plane int, b []byte, delay Time, dup int) {
	s := t.s
	for i := 0; i <= dup; i++ {
		if delay > 0 {
			s.dseq++
			d := delayedSend{at: t.Now() + delay, seq: s.dseq, plane: plane, data: slices.Clone(b)}
			k, _ := slices.BinarySearchFunc(s.delayed, d, func(a, b delayedSend) int {
				if a.at != b.at {
					return int(a.at - b.at)
				}
				return a.seq - b.seq
			})
			s.delayed = slices.Insert(s.delayed, k, d)
			continue
		}
		if err := s.tgt.Send(plane, b); err != nil {
			t.Fatalf("sending to the IUT: %v", err)
		}
	}
}

func (s *session) flushDelayed(t *T) {
	for len(s.delayed) > 0 && s.delayed[0].at <= s.tgt.Now() {
		d := s.delayed[0]
		s.delayed = s.delayed[1:]
		if err := s.tgt.Send(d.plane, d.data); err != nil {
			t.Fatalf("sending to the IUT: %v", err)
		}
	}
}

// Sleep lets time pass, receiving (and discarding) what the IUT sends.
func (t *T) Sleep(d Time) {
	end := t.Now() + d
	for {
		if _, ok := t.Recv(end); !ok {
			return
		}
	}
}

// fillL2L3 writes the tester's and IUT's addresses into a packet the
// tester sends on plane, with the given DSCP, ECT and EV.
func (t *T) fillL2L3(p *wire.Packet, plane int, dscp uint8, ect bool, ev uint32) {
	s := t.s
	p.Eth.Src, p.Eth.Dst = s.tester.MACs[plane], s.iut.MACs[plane]
	tos := dscp << 2
	if ect {
		tos |= 2
	}
	if s.iut.IP.Is6() {
		p.IsIPv6 = true
		p.IP6.TrafficClass, p.IP6.HopLimit, p.IP6.Src, p.IP6.Dst = tos, 64, s.tester.IP.As16(), s.iut.IP.As16()
	} else {
		p.IP4.TOS, p.IP4.TTL, p.IP4.FlagsFrag, p.IP4.Src, p.IP4.Dst = tos, 64, 0x4000, s.tester.IP.As4(), s.iut.IP.As4()
	}
	s.codec.SetEV(p, ev, s.mode)
}
