package modelcheck

import (
	"errors"
	"fmt"
	"strings"
	"time"

	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Invalid inputs. In every reachable state of a configuration, the
// rejection check hands a private copy of each QP every input in
// rejections (API calls the QP must refuse) and a corrupted copy of every
// packet in flight to it (packets it must ignore), and requires the input
// to be inert: the call returns an error, or the packet yields an
// EvIgnored event; nothing is sent, placed or completed; and the QP's full
// fingerprint is unchanged. An implementation that half-applies a bad
// input — a counter bumped, a timer re-armed, an EV moved — before
// noticing it is wrong fails here.

// rejection is one invalid API call, the error class it must return and
// a word its message must contain, so that the caller learns what was
// wrong.
type rejection struct {
	name, req string
	call      func(q *sm.QP, now sm.Time, ev uint32, out *sm.Output) error
	class     error
	says      string
}

var rejections = []rejection{
	{"post RDMA READ", "REQ-OP-1", func(q *sm.QP, now sm.Time, _ uint32, out *sm.Output) error {
		return q.Post(now, sm.WorkRequest{WRID: 99, Opcode: sm.OpRead, Data: make([]byte, 8)}, out)
	}, sm.ErrUnsupportedOpcode, "RDMA_READ"},
	{"post SEND", "REQ-OP-1", func(q *sm.QP, now sm.Time, _ uint32, out *sm.Output) error {
		return q.Post(now, sm.WorkRequest{WRID: 99, Opcode: sm.OpSend}, out)
	}, sm.ErrUnsupportedOpcode, "SEND"},
	{"MODIFY_EV_STATE of an EV not in the profile", "EV-ST-9", func(q *sm.QP, now sm.Time, _ uint32, out *sm.Output) error {
		return q.SetEVState(now, 0xABCDE, sm.EVGood, out)
	}, sm.ErrUnknownEV, "0xabcde"},
	{"MODIFY_EV_STATE to SKIP", "EV-ST-9", func(q *sm.QP, now sm.Time, ev uint32, out *sm.Output) error {
		return q.SetEVState(now, ev, sm.EVSkip, out)
	}, sm.ErrInvalidAttr, "SKIP"},
	{"rcv_cwnd_pen 200", "CC-RSP-3", func(q *sm.QP, _ sm.Time, _ uint32, _ *sm.Output) error {
		return q.SetReceivePenalty(200, false)
	}, sm.ErrInvalidAttr, "200"},
	{"dynamic MPR 0", "MPR-DYN-2", func(q *sm.QP, _ sm.Time, _ uint32, _ *sm.Output) error {
		return q.SetDynamicMPR(0)
	}, nil, "dynamic MPR"},
	{"modify RTS (or ERROR) to INIT", "QP-ATTR-1", func(q *sm.QP, now sm.Time, _ uint32, out *sm.Output) error {
		return q.Modify(now, sm.StateInit, sm.Attr{}, 0, out)
	}, sm.ErrInvalidTransition, "INIT"},
	{"modify RTR to RTS with path MTU 300", "QP-ATTR-1", func(q *sm.QP, now sm.Time, _ uint32, out *sm.Output) error {
		return q.Modify(now, sm.StateRTS, sm.Attr{PathMTU: 300, Timeout: 40}, sm.AttrPathMTU|sm.AttrTimeout, out)
	}, nil, "RTS"},
	{"modify with vendor_cfg and a hint to RTS with timeout 40", "CTL-QPH-3", func(q *sm.QP, now sm.Time, _ uint32, out *sm.Output) error {
		a := sm.Attr{Timeout: 40, Hint: 9}
		a.VendorCfg[0] = 0xA5
		return q.Modify(now, sm.StateRTS, a, sm.AttrTimeout|sm.AttrVendorCfg|sm.AttrQPHint, out)
	}, nil, "RTS"},
	{"REPLACE_EV rebind to another EV profile", "CTL-OP-3", func(q *sm.QP, now sm.Time, ev uint32, out *sm.Output) error {
		return q.RebindEVProfile(now, sm.EVProfile{ID: 0xBAD, EVs: []sm.EVEntry{{Value: ev, Port: 1}, {Value: ev + 1, Port: 1}}}, out)
	}, sm.ErrInvalidAttr, "EV profile"},
	{"REPLACE_EV rebind that drops EVs", "CTL-OP-3", func(q *sm.QP, now sm.Time, ev uint32, out *sm.Output) error {
		a, _ := q.Attr()
		p := sm.EVProfile{ID: a.EVProfileID}
		for i := uint32(0); i < 37; i++ { // no configuration has 37 EVs
			p.EVs = append(p.EVs, sm.EVEntry{Value: 0x7000 + i, Port: 1})
		}
		return q.RebindEVProfile(now, p, out)
	}, sm.ErrInvalidAttr, "EV"},
}

// corruption is one way to spoil a packet in flight to the QP; it reports
// false when it does not apply to the packet.
type corruption struct {
	name, req string
	spoil     func(p *wire.Packet, q *sm.QP) bool
}

var corruptions = []corruption{
	{"wrong destination QP", "RSP-RCV-1", func(p *wire.Packet, _ *sm.QP) bool {
		p.BTH.DestQP ^= 0x40
		return true
	}},
	{"data or probe of another partition (P_Key)", "WIRE-BTH-12", func(p *wire.Packet, _ *sm.QP) bool {
		if !p.BTH.Opcode.IsWrite() && p.BTH.Opcode != wire.OpProbe {
			return false
		}
		p.BTH.PKey ^= 0x0F0F
		return true
	}},
	{"NACK with an unknown reason", "LR-NACK-7", func(p *wire.Packet, _ *sm.QP) bool {
		if p.BTH.Opcode != wire.OpNACK {
			return false
		}
		p.NETH.Reason = 0x5A
		return true
	}},
	{"SACK acknowledging PSNs never sent", "LR-SACK-1", func(p *wire.Packet, q *sm.QP) bool {
		if p.BTH.Opcode != wire.OpSACK {
			return false
		}
		p.SETH.CACKPSN = wire.PSNAdd(q.NextPSN(), 3)
		return true
	}},
	{"an endpoint request sent to a QP", "RSP-RCV-1", func(p *wire.Packet, _ *sm.QP) bool {
		p.BTH.Opcode = wire.OpEndpointReq
		return true
	}},
	{"RDMA WRITE middle packet shorter than the path MTU", "RSP-RCV-1", func(p *wire.Packet, _ *sm.QP) bool {
		if p.BTH.Opcode != wire.OpWriteMiddle && p.BTH.Opcode != wire.OpWriteFirst || len(p.Payload) < 16 {
			return false
		}
		p.Payload = p.Payload[:len(p.Payload)-8]
		return true
	}},
}

// RejectResult is what CheckRejections did.
type RejectResult struct {
	Config   string
	States   int // distinct states visited
	Inputs   int // invalid inputs applied
	Failures []string
	Elapsed  time.Duration
}

// CheckRejections explores cfg and applies the invalid inputs in every
// reachable state; it reports every input that was not inert (at most 20).
func CheckRejections(cfg Config) (*RejectResult, error) {
	rr := &RejectResult{Config: cfg.Name}
	start := time.Now()
	for s := range 2 {
		rr.Failures = append(rr.Failures, cfg.checkValidation(s)...)
	}
	var out sm.Output
	out.TracePackets = true
	fail := func(w *world, s int, what, req, format string, args ...any) {
		if len(rr.Failures) < 20 {
			rr.Failures = append(rr.Failures, fmt.Sprintf("%s (%s) to QP %#x at t=%d: %s", what, req, qpns[s], w.now,
				fmt.Sprintf(format, args...)))
		}
	}
	inert := func(w *world, s int, q *sm.QP, what, req string) {
		if len(out.Packets)+len(out.Placements)+len(out.Completions) > 0 {
			fail(w, s, what, req, "%d packets, %d placements, %d completions", len(out.Packets), len(out.Placements), len(out.Completions))
		}
		if fingerprint(q, w.now) != w.fingerprint(s) {
			fail(w, s, what, req, "the QP's state changed")
		}
	}
	res, err := check(cfg, func(c *checker, w *world) {
		rr.States++
		for s := range 2 {
			ev := c.evs[0]
			for _, r := range rejections {
				q := w.qp[s].Clone()
				out.Reset()
				err := r.call(q, w.now, ev, &out)
				rr.Inputs++
				if err == nil {
					fail(w, s, r.name, r.req, "accepted")
					continue
				}
				if r.class != nil && !errors.Is(err, r.class) || !strings.Contains(err.Error(), r.says) {
					fail(w, s, r.name, r.req, "error %q: want %v naming %q", err, r.class, r.says)
				}
				inert(w, s, q, r.name, r.req)
			}
			seen := map[[2]int]bool{} // one packet per opcode and corruption
			for _, k := range w.net {
				if k.to() != s {
					continue
				}
				for ci, co := range corruptions {
					key := [2]int{int(k.op()), ci}
					if seen[key] {
						continue
					}
					p := k.p
					if !co.spoil(&p, w.qp[s]) {
						continue
					}
					seen[key] = true
					q := w.qp[s].Clone()
					out.Reset()
					q.Receive(w.now, int(k.port), &p, &out)
					rr.Inputs++
					ignored := false
					for _, e := range out.Events {
						ignored = ignored || e.Kind == sm.EvIgnored
					}
					if !ignored {
						fail(w, s, co.name, co.req, "not ignored (events %v)", eventKinds(out.Events))
						continue
					}
					inert(w, s, q, co.name, co.req)
				}
			}
		}
	}, true)
	if err != nil {
		return nil, err
	}
	if res.Violation != nil {
		return nil, fmt.Errorf("%s: invariant violation: %s", cfg.Name, res.Violation.Invariant)
	}
	rr.Elapsed = time.Since(start)
	return rr, nil
}

func eventKinds(es []sm.Event) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.Kind.String())
	}
	return b.String()
}
