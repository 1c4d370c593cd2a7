package conformance

import (
	"cmp"
	"fmt"
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

func dupViolation(vs []wire.Violation, req string) bool {
	for _, v := range vs {
		if v.Req == req {
			return true
		}
	}
	return false
}

// frameFailed reports whether the current frame failed case cs already.
func (e *engine) frameFailed(cs caseID) bool { return slices.Contains(e.failedCases, cs) }

// wireChecks judges the per-packet wire rules of a decoded frame, as its
// sender sent it: the codec's strict findings and the profile-dependent
// rules the codec cannot know (traffic classes, flags, EV encoding).
func (e *engine) wireChecks(pt *point, src string, f *pcap.Frame, r *pcap.Record) {
	p := &r.Packet
	op := p.BTH.Opcode
	bad := func(cs caseID, req, exp, obs string) {
		e.failedCases = append(e.failedCases, cs)
		e.fail(cs, pt, src, false, Finding{Requirement: req, PSN: u32p(p.BTH.PSN), EV: u32p(r.EV), Expected: exp, Observed: obs})
	}
	for i, v := range r.Violations {
		if dupViolation(r.Violations[:i], v.Req) {
			continue // one finding per violated requirement and frame
		}
		bad(e.caseFor(v.Req), v.Req, "no "+v.Req+" violation", fmt.Sprintf("%s field %s: %s", v.Header, v.Field, v.Msg))
	}
	applicable := append(e.applicable[:0], cWireENC, cWireUDP, cWireGEN, cWireBTH1, cWireBTH2, cWireBTH3, cWireBTH4, cWireFlags)
	prof := e.prof
	control := op == wire.OpSACK || op == wire.OpNACK || op == wire.OpAcknowledge || op == wire.OpEndpointResp
	if !p.Trimmed {
		applicable = append(applicable, cWireICRC)
		if !op.IsWrite() {
			applicable = append(applicable, cWireOP)
		}
	}
	// Flags (WIRE-BTH-14, WIRE-BTH-10, WIRE-BTH-11).
	switch {
	case op.IsWrite() && p.BTH.AckReq != op.IsLast():
		bad(cWireFlags, "WIRE-BTH-14", fmt.Sprintf("ack_req = %v on %s", op.IsLast(), op), fmt.Sprintf("ack_req = %v", p.BTH.AckReq))
	case !op.IsWrite() && op != wire.OpSACK && p.BTH.AckReq:
		bad(cWireFlags, "WIRE-BTH-14", "ack_req = 0 on "+op.String(), "ack_req = 1")
	}
	if p.BTH.SE && !op.HasImm() {
		bad(cWireFlags, "WIRE-BTH-10", "se only on RDMA_WRITE_LAST_IMM and RDMA_WRITE_ONLY_IMM", "se = 1 on "+op.String())
	}
	if p.BTH.M {
		bad(cWireFlags, "WIRE-BTH-11", "m = 0 (MRC has no path migration)", "m = 1")
	}
	// Traffic classes and ECN (WIRE-DSCP-1, WIRE-DSCP-3, EP-GEN-4).
	if !p.Trimmed {
		switch {
		case control:
			applicable = append(applicable, cDSCP, cECN)
			if d := p.DSCP(); d != prof.DSCP.Control {
				req := "WIRE-DSCP-1"
				if op == wire.OpEndpointResp {
					req = "EP-GEN-4"
				}
				bad(cDSCP, req, fmt.Sprintf("DSCP %d (DSCP_CONTROL) on %s", prof.DSCP.Control, op), fmt.Sprintf("DSCP %d", d))
			}
			if ecn := p.ECN(); ecn != 0 {
				bad(cECN, "WIRE-DSCP-3", "Not-ECT (00) on a control packet", fmt.Sprintf("ECN %02b", ecn))
			}
		case op == wire.OpProbe:
			applicable = append(applicable, cDSCP, cECN)
			if d := p.DSCP(); d != prof.DSCP.NoTrim {
				bad(cDSCP, "WIRE-DSCP-1", fmt.Sprintf("DSCP %d (DSCP_NO_TRIM) on a probe", prof.DSCP.NoTrim), fmt.Sprintf("DSCP %d", d))
			}
			if ecn := p.ECN(); ecn < 2 {
				bad(cECN, "WIRE-DSCP-3", "ECT(0) (10) on a probe", fmt.Sprintf("ECN %02b", ecn))
			}
		case op.IsWrite():
			applicable = append(applicable, cECN)
			if ecn := p.ECN(); ecn < 2 {
				bad(cECN, "WIRE-DSCP-3", "ECT(0) (10) on a write", fmt.Sprintf("ECN %02b", ecn))
			}
		}
	}
	// The variant byte is 0 as sent; switches may change it (WIRE-BTH-13).
	atSender := e.pics.Capture.Points[pt.name] == src
	if atSender && p.BTH.Variant != 0 {
		bad(cWireGEN, "WIRE-BTH-13", "reserved_variant 0 as sent", fmt.Sprintf("reserved_variant 0x%02x", p.BTH.Variant))
	}
	// Trimmed code points come from switches only (WIRE-DSCP-4).
	if p.Trimmed {
		if atSender {
			bad(cDSCPTrim, "WIRE-DSCP-4", "no trimmed DSCP on a frame captured at its sender", fmt.Sprintf("DSCP %d", p.DSCP()))
		} else if !e.frameFailed(cDSCPTrim) {
			e.undecided(cDSCPTrim, pt, src, "a trimmed frame at a capture point the PICS does not place at its sender", nil)
		}
	} else {
		applicable = append(applicable, cDSCPTrim)
	}
	if p.SRv6 {
		applicable = append(applicable, cDSCPSRv6)
		if p.Outer.TrafficClass != p.IP6.TrafficClass {
			bad(cDSCPSRv6, "WIRE-DSCP-6", fmt.Sprintf("inner traffic class 0x%02x equal to the outer", p.Outer.TrafficClass), fmt.Sprintf("0x%02x", p.IP6.TrafficClass))
		}
	}
	// EV encoding in the flow label (WIRE-EV-6, WIRE-EV-2).
	if p.IsIPv6 {
		applicable = append(applicable, cEVEnc)
		fl := p.IP6.FlowLabel
		switch e.mode {
		case wire.EVModeUDP:
			if fl != 0 {
				bad(cEVEnc, "WIRE-EV-2", "flow label 0 in UDP EV mode", fmt.Sprintf("flow label 0x%05x", fl))
			}
		default:
			if fl>>16 != 0 {
				bad(cEVEnc, "WIRE-EV-6", "flow label bits 19:16 zero", fmt.Sprintf("flow label 0x%05x", fl))
			}
		}
	}
	// Header-specific rules.
	if p.Decoded&wire.HasTSETH != 0 {
		applicable = append(applicable, cWireTSETH)
		if p.TSETH.TSR || p.TSETH.FType != 1 {
			bad(cWireTSETH, "WIRE-TSETH-2", "tsr = 0, ftype = 1", fmt.Sprintf("tsr = %v, ftype = %d", p.TSETH.TSR, p.TSETH.FType))
		}
	}
	switch op {
	case wire.OpAcknowledge:
		applicable = append(applicable, cWireAETH)
		a := &p.AETH
		switch t, v := a.Type(), a.Value(); {
		case t == wire.AETHTypeRNR:
			bad(cWireAETH, "WIRE-AETH-3", "no RNR NAK (MRC has no RNR)", fmt.Sprintf("syndrome 0x%02x", a.Syndrome))
		case t == wire.AETHTypeNAK && (v == 0 || v > 3):
			bad(cWireAETH, "WIRE-AETH-3", "NAK codes 1, 2 or 3 only", fmt.Sprintf("NAK code %d", v))
		case t == 2:
			bad(cWireAETH, "WIRE-AETH-1", "syndrome type ACK or NAK", fmt.Sprintf("reserved type in syndrome 0x%02x", a.Syndrome))
		}
	case wire.OpSACK:
		applicable = append(applicable, cWireSETH, cWireDCID)
		s := &p.SETH
		if s.Type != 0 || s.NextHeader != 0 || s.CCType != 0 || s.CCFlags != 0 {
			bad(cWireSETH, "WIRE-SETH-8", "type, next_header, cc_type, cc_flags 0", fmt.Sprintf("%d, %d, %d, %d", s.Type, s.NextHeader, s.CCType, s.CCFlags))
		}
		if e.pics.Has("dynamic_mpr") {
			hi := 255
			if m := e.pics.Parameters.MPRDest; m != nil {
				hi = *m
			}
			if int(s.MPR) < 1 || int(s.MPR) > hi {
				bad(cWireSETH, "MPR-DYN-2", fmt.Sprintf("mpr between 1 and mpr_dest %d with dynamic MPR", hi), fmt.Sprintf("mpr %d", s.MPR))
			}
		} else if s.MPR != 0 {
			bad(cWireSETH, "WIRE-SETH-4", "mpr 0 without dynamic MPR", fmt.Sprintf("mpr %d", s.MPR))
		}
		if s.DPDCID != uint16(p.BTH.DestQP) {
			bad(cWireDCID, "WIRE-SETH-9", fmt.Sprintf("dpdcid 0x%04x (dest_qp bits 15:0)", uint16(p.BTH.DestQP)), fmt.Sprintf("dpdcid 0x%04x", s.DPDCID))
		}
	case wire.OpNACK:
		applicable = append(applicable, cWireNETH, cWireDCID)
		n := &p.NETH
		if n.Type != 0 || n.NextHeader != 0 || n.CCType != prof.NETHCCType || n.CCFlags != 0 { // cc_type per profile (AMB-34)
			bad(cWireNETH, "WIRE-SETH-8", fmt.Sprintf("type, next_header 0, cc_type %d, cc_flags 0", prof.NETHCCType), fmt.Sprintf("%d, %d, %d, %d", n.Type, n.NextHeader, n.CCType, n.CCFlags))
		}
		if n.DPDCID != uint16(p.BTH.DestQP) {
			bad(cWireDCID, "WIRE-SETH-9", fmt.Sprintf("dpdcid 0x%04x (dest_qp bits 15:0)", uint16(p.BTH.DestQP)), fmt.Sprintf("dpdcid 0x%04x", n.DPDCID))
		}
	case wire.OpProbe:
		applicable = append(applicable, cWirePETH, cWireDCID)
		q := &p.PETH
		if q.Type != 0 || q.NextHeader != 0 {
			bad(cWirePETH, "WIRE-SETH-8", "type and next_header 0", fmt.Sprintf("%d, %d", q.Type, q.NextHeader))
		}
		if q.TSR || q.FType != 1 {
			bad(cWirePETH, "WIRE-PETH-1", "tsr = 0, ftype = 1", fmt.Sprintf("tsr = %v, ftype = %d", q.TSR, q.FType))
		}
		if q.DPDCID != uint16(p.BTH.DestQP) {
			bad(cWireDCID, "WIRE-SETH-9", fmt.Sprintf("dpdcid 0x%04x (dest_qp bits 15:0)", uint16(p.BTH.DestQP)), fmt.Sprintf("dpdcid 0x%04x", q.DPDCID))
		}
	case wire.OpEndpointReq, wire.OpEndpointResp:
		if p.BTH.PKey != 0xFFFF {
			e.fail(cWirePKey, pt, src, false, Finding{Requirement: "WIRE-BTH-12", Expected: "P_Key 0xFFFF on endpoint operations", Observed: fmt.Sprintf("P_Key 0x%04x", p.BTH.PKey)})
		} else {
			e.ok(cWirePKey, pt, src, false)
		}
	}
	for _, cs := range applicable {
		if !e.frameFailed(cs) {
			e.ok(cs, pt, src, false)
		}
	}
	e.applicable = applicable[:0]
}
