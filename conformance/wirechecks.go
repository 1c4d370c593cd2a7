package conformance

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

func itoa(n int) string { return strconv.Itoa(n) }

func slicesSort(s []uint32) { slices.Sort(s) }

func (pt *point) sortedFlows() []*flow {
	out := make([]*flow, 0, len(pt.flows))
	for _, f := range pt.flows {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *flow) int { return compareKeys(a.key, b.key) })
	return out
}

func compareKeys(a, b flowKey) int {
	switch {
	case a.req != b.req:
		return cmp.Compare(a.req, b.req)
	case a.rsp != b.rsp:
		return cmp.Compare(a.rsp, b.rsp)
	case a.qpn != b.qpn:
		return int(a.qpn) - int(b.qpn)
	case a.partial != b.partial:
		if a.partial {
			return 1
		}
		return -1
	}
	return 0
}

func sortedEP(m map[epKey]*epReq) []epKey {
	out := make([]epKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b epKey) int {
		if a.req != b.req {
			return cmp.Compare(a.req, b.req)
		}
		if a.rsp != b.rsp {
			return cmp.Compare(a.rsp, b.rsp)
		}
		return int(a.id) - int(b.id)
	})
	return out
}

// violationText is what a finding observed of a codec violation:
// "<header> field <field>: <message>", formatted in one allocation.
func violationText(v *wire.Violation) string {
	var buf [160]byte
	b := append(buf[:0], v.Header...)
	b = append(b, " field "...)
	b = append(b, v.Field...)
	b = append(b, ": "...)
	return string(v.AppendMessage(b))
}

func dupViolation(vs []wire.Violation, req wire.ReqID) bool {
	for i := range vs {
		if vs[i].Req == req {
			return true
		}
	}
	return false
}

// frameFailed reports whether the current frame failed case cs already;
// most frames failed none, and then it is one compare, inlined.
func (e *engine) frameFailed(cs caseID) bool {
	return len(e.failedCases) > 0 && slices.Contains(e.failedCases, cs)
}

// reset makes x the context of frame r, sent by src and captured at pt.
// Every field is stored one by one: a composite literal is built on the
// stack and copied, twice the stores.
func (x *frameCtx) reset(pt *point, src string, r *pcap.Record, atSender bool) {
	p := &r.Packet
	op := p.BTH.Opcode
	x.pt, x.src, x.r, x.p, x.op = pt, src, r, p, op
	x.control = op == wire.OpSACK || op == wire.OpNACK || op == wire.OpAcknowledge || op == wire.OpEndpointResp
	x.atSender = atSender
}

// runFrameHooks runs the frame hooks of checks cs. Out of wireChecks,
// whose many values live across the calls would be reloaded after each.
//
//go:noinline
func runFrameHooks(e *engine, x *frameCtx, cs []*check) {
	for _, c := range cs {
		c.frame(e, x)
	}
}

// wireChecks judges the per-packet wire rules of a decoded frame, as its
// sender sent it: the codec's findings, each under the case whose check
// declares it (check.codec), then the frame hook of every check that
// judges the frame's kind and opcode. The frame is a passing observation
// of each case of its kind and opcode it did not fail (passBy).
func (e *engine) wireChecks(pt *point, src string, r *pcap.Record) {
	p := &r.Packet
	op := p.BTH.Opcode
	x := &e.fx
	x.reset(pt, src, r, pt.capNode(e.pics) == src)
	for i := range r.Violations {
		v := &r.Violations[i]
		if dupViolation(r.Violations[:i], v.Req) {
			continue // one finding per violated requirement and frame
		}
		e.bad(codecReq(v.Req), x, func() (string, string) {
			return "no " + v.Req.String() + " violation", violationText(v)
		})
	}
	k, os := kindOf(p, r.Cut), opSlot(op)
	runFrameHooks(e, x, e.hk.frameBy[k][os])
	if len(e.failedCases) == 0 {
		// Most frames: a count in the pair's slot, added to each case's
		// row when the slot is flushed (flushPasses).
		if i, ok := e.passList(k, os); ok {
			s := e.senderSlot
			if s == nil || s.pt != pt || !sameString(s.node, src) {
				s = e.slot(pt, src)
			}
			s.passes[i]++
			s.anyPass = true
			return
		}
	}
	row := e.row(pt, src)
	for _, cs := range e.hk.passBy(k, os) {
		if !e.frameFailed(cs) {
			o := &row[cs]
			o.used = true
			o.ok++
			o.okF++
		}
	}
}
