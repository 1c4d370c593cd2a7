package conformance

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// One violation, one finding: a single wrong field of one write is
// reported once, on that write, under the one requirement it breaks —
// not again under a neighbouring requirement of the same frame, nor on
// the correct writes after it.

// fault is a change to one field of one write of a test message.
type fault struct {
	pad    int    // the BTH pad_cnt written over the encoder's (-1: none)
	va     uint64 // added to the RETH va
	dmaLen uint32 // the RETH dma_length, when not 0
	trim   bool   // trimmed on its way (DSCP 12): headers only
}

var noFault = fault{pad: -1}

// msgWrite is a T→D write at PSN psn of n payload bytes, each fill, at va
// of a message of dmaLen bytes, with fault f. A pad count written over the
// encoder's is followed by a recomputed ICRC: then the frame's last pad_cnt
// payload bytes read as pad, and only the pad count is wrong.
func (s *scene) msgWrite(psn uint32, op wire.Opcode, va uint64, dmaLen uint32, n int, fill byte, f fault, rtx bool) int {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	if rtx {
		p.IP6.TrafficClass = 8<<2 | 2
	}
	if f.trim {
		p.IP6.TrafficClass, n = 12<<2, 0
	}
	p.BTH = wire.BTH{Opcode: op, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn & wire.PSNMask, AckReq: op.IsLast(), Retransmit: rtx}
	p.RETH = wire.RETH{VA: va + f.va, RKey: 0x1234, DMALength: dmaLen}
	if f.dmaLen != 0 {
		p.RETH.DMALength = f.dmaLen
	}
	p.Payload = make([]byte, n)
	for i := range p.Payload {
		p.Payload[i] = fill
	}
	p.SetEV(0x100, wire.EVModeSTEV)
	return s.emitMutated(sceneT, sceneD, p, 10_000, func(b []byte) {
		if f.pad < 0 {
			return
		}
		var q wire.Packet
		if err := wire.Default.Decode(b, &q); err != nil {
			s.t.Fatal(err)
		}
		_, _, bth := q.Offsets()
		b[bth+1] = b[bth+1]&^0x30 | byte(f.pad)<<4
		if err := wire.Default.Decode(b, &q); err != nil {
			s.t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[len(b)-4:], wire.Default.ComputeICRC(b, &q))
	})
}

// testMTU is the path MTU of the test messages, which the PICS leaves
// the judge to infer.
const testMTU = 512

// fiveWrites sends a message of five path-MTU writes, PSN 1 to 5 at va
// 0x10000000, the write at index bad with fault f.
func (s *scene) fiveWrites(bad int, f fault, fill byte) {
	ops := []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteMiddle, wire.OpWriteMiddle, wire.OpWriteLast}
	for k, op := range ops {
		g := noFault
		if k == bad {
			g = f
		}
		s.msgWrite(uint32(1+k), op, 0x10000000+uint64(k*testMTU), 5*testMTU, testMTU, fill, g, false)
	}
}

// findingSet returns the report's findings but INCONCLUSIVE ones, each as
// "case requirement frame", sorted.
func findingSet(rep *Report) []string {
	var out []string
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Verdict != Inconclusive {
				out = append(out, fmt.Sprintf("%s %s frame %d", r.Case.ID, f.Requirement, f.Frame))
			}
		}
	}
	slices.Sort(out)
	return out
}

func wantFindings(t *testing.T, rep *Report, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := findingSet(rep); !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
		for _, r := range rep.Results {
			for _, f := range r.Findings {
				if f.Verdict != Inconclusive {
					t.Logf("%s %s frame %d: %s | %s", r.Case.ID, f.Requirement, f.Frame, f.Expected, f.Observed)
				}
			}
		}
	}
}

// TestWrongPadCountOnce: a write whose pad_cnt is 3 instead of 0 is one
// finding on that write. When the bytes it marks as pad are not zero, the
// pad count is visibly wrong (WIRE-BTH-9) and the payload's length unknown,
// so nothing is judged of it; when they are zero, the write reads as three
// bytes short: a FIRST or MIDDLE that is not one path MTU (WIRE-PAY-1), an
// ONLY or LAST whose message falls short of its dma_length (WIRE-PAY-2).
// The writes after it are at va start + k × path MTU (WIRE-RETH-2) and
// are correct.
func TestWrongPadCountOnce(t *testing.T) {
	pad3 := fault{pad: 3}
	for _, c := range []struct {
		name string
		bad  int // the faulty write of five; -1: one ONLY write; -2: the FIRST of two
		fill byte
		want string
	}{
		{"only zero pad bytes", -1, 0, "MRC-WIRE-MSG-001 WIRE-PAY-2 frame 1"},
		{"only non-zero pad bytes", -1, 0xab, "MRC-WIRE-BTH-003 WIRE-BTH-9 frame 1"},
		{"first zero pad bytes", 0, 0, "MRC-WIRE-PAY-001 WIRE-PAY-1 frame 1"},
		{"first of two zero pad bytes", -2, 0, "MRC-WIRE-PAY-001 WIRE-PAY-1 frame 1"},
		{"first of two non-zero pad bytes", -2, 0xab, "MRC-WIRE-BTH-003 WIRE-BTH-9 frame 1"},
		{"first non-zero pad bytes", 0, 0xab, "MRC-WIRE-BTH-003 WIRE-BTH-9 frame 1"},
		{"middle zero pad bytes", 1, 0, "MRC-WIRE-PAY-001 WIRE-PAY-1 frame 2"},
		{"middle non-zero pad bytes", 1, 0xab, "MRC-WIRE-BTH-003 WIRE-BTH-9 frame 2"},
		{"last zero pad bytes", 4, 0, "MRC-WIRE-MSG-001 WIRE-PAY-2 frame 5"},
		{"last non-zero pad bytes", 4, 0xab, "MRC-WIRE-BTH-003 WIRE-BTH-9 frame 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScene(t, bothDUTPICS)
			switch c.bad {
			case -1:
				s.msgWrite(1, wire.OpWriteOnly, 0x1000, 16, 16, c.fill, pad3, false)
			case -2: // no path MTU known before the FIRST
				s.msgWrite(1, wire.OpWriteFirst, 0x1000, testMTU+100, testMTU, c.fill, pad3, false)
				s.msgWrite(2, wire.OpWriteLast, 0x1000+testMTU, testMTU+100, 100, c.fill, noFault, false)
			default:
				s.fiveWrites(c.bad, pad3, c.fill)
			}
			wantFindings(t, s.report(), c.want)
		})
	}
}

// TestWrongPadCountResend (REQ-PSN-2): a FIRST sent with a wrong pad
// count and resent with the right one is one finding, on the first
// copy: the resend repeats the write the requester meant, not the
// malformed copy's payload.
func TestWrongPadCountResend(t *testing.T) {
	for _, fill := range []byte{0, 0xab} {
		t.Run(fmt.Sprintf("fill 0x%02x", fill), func(t *testing.T) {
			s := newScene(t, bothDUTPICS)
			s.fiveWrites(0, fault{pad: 3}, fill)
			s.sackBits(0, 5, 0b11110, 0x100) // PSN 1 discarded, 2 to 5 arrived
			s.msgWrite(1, wire.OpWriteFirst, 0x10000000, 5*testMTU, testMTU, fill, noFault, true)
			s.sackBits(5, 1, 0, 0x100)
			want := "MRC-WIRE-PAY-001 WIRE-PAY-1 frame 1"
			if fill != 0 {
				want = "MRC-WIRE-BTH-003 WIRE-BTH-9 frame 1"
			}
			wantFindings(t, s.report(), want)
		})
	}
}

// TestSingleFaultOneFinding: one wrong RETH field of one write of a
// message is one finding on that write (WIRE-RETH-2), none on the writes
// after it; a write after a trimmed one is placed by the path MTU.
func TestSingleFaultOneFinding(t *testing.T) {
	for _, c := range []struct {
		name string
		bad  int
		f    fault
		want string
	}{
		{"middle va", 2, fault{pad: -1, va: 8}, "MRC-WIRE-MSG-001 WIRE-RETH-2 frame 3"},
		{"middle dma_length", 2, fault{pad: -1, dmaLen: 5*testMTU + 4}, "MRC-WIRE-MSG-001 WIRE-RETH-2 frame 3"},
		{"last dma_length", 4, fault{pad: -1, dmaLen: 5*testMTU + 4}, "MRC-WIRE-MSG-001 WIRE-RETH-2 frame 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScene(t, bothDUTPICS)
			s.fiveWrites(c.bad, c.f, 0)
			wantFindings(t, s.report(), c.want)
		})
	}
	t.Run("va after a trimmed write", func(t *testing.T) {
		s := newScene(t, bothDUTPICS)
		ops := []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteMiddle, wire.OpWriteMiddle, wire.OpWriteLast}
		for k, op := range ops {
			f := noFault
			switch k {
			case 1:
				f.trim = true
			case 3:
				f.va = 8
			}
			s.msgWrite(uint32(1+k), op, 0x10000000+uint64(k*testMTU), 5*testMTU, testMTU, 0, f, false)
		}
		wantFindings(t, s.report(), "MRC-WIRE-MSG-001 WIRE-RETH-2 frame 4")
	})
}

// TestDeclaredMTUNotTheSenders: a sender whose packets carry 512 bytes
// where the PICS declares a path MTU of 256 breaks WIRE-PAY-1 on each
// FIRST, MIDDLE and LAST; its packets are placed and summed by the 512
// bytes they carry, so that each is one finding, not also WIRE-RETH-2 or
// WIRE-PAY-2.
func TestDeclaredMTUNotTheSenders(t *testing.T) {
	s := newScene(t, strings.Replace(bothDUTPICS, `"mpr": 1,`, `"mpr": 1, "path_mtu": 256,`, 1))
	s.fiveWrites(-1, noFault, 0)
	var want []string
	for n := 1; n <= 5; n++ {
		want = append(want, fmt.Sprintf("MRC-WIRE-PAY-001 WIRE-PAY-1 frame %d", n))
	}
	wantFindings(t, s.report(), want...)
}
