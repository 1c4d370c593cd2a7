package statemachine

import "github.com/openmrc/mrc/wire"

// Receive hands the QP one packet addressed to it; port is the 1-based
// local NIC port it arrived on (0 if unknown), which selects the plane of
// the answer (EV-REV-4). The packet must have passed the codec's checks
// (RSP-RCV-1); it is only read, and Placements alias its payload.
func (q *QP) Receive(now Time, port int, p *wire.Packet, out *Output) {
	q.begin(now, out)
	q.receive(port, p)
	q.end()
}

// receive is what happens to an arriving packet, by kind, in order:
//
//   - every packet is traced, and dropped unless it names this QP;
//   - a request (write or probe) goes to the responder: past its QP-state
//     and partition gates, and COMM_EST, to onData or onProbe
//     (responder.go);
//   - feedback goes to the requester: past its QP-state gate to onSACK
//     (which hands the SACK's verdict on the EV it reflects to sackVerdict,
//     ev.go), onNACK or onAETH (requester.go); then the requester sends
//     what the window now allows (pump);
//   - anything else is ignored.
func (q *QP) receive(port int, p *wire.Packet) {
	op := p.BTH.Opcode
	if q.trace() {
		q.emit(Event{Kind: EvPacketReceived, PSN: p.BTH.PSN, EV: q.st.codec.EV(p, q.st.qp.Addr.EVMode), Reason: uint8(op)})
	}
	if p.BTH.DestQP != q.st.qp.QPN {
		q.ignore(IgnoreWrongQP, p.BTH.PSN, 0)
		return
	}
	switch {
	case op.IsWrite() || op == wire.OpProbe:
		// The responder acts in RTR, RTS and SQD only and drops data or
		// probes of another partition (QP-ST-9, QP-ST-11, RSP-RCV-1,
		// WIRE-BTH-12); the first request accepted in RTR raises COMM_EST
		// (CTL-AEV-4).
		if !q.responding() {
			q.ignore(IgnoreQPState, p.BTH.PSN, 0)
			return
		}
		if p.BTH.PKey != q.st.pkey {
			q.ignore(IgnoreMalformed, p.BTH.PSN, 0)
			return
		}
		if q.state == StateRTR && q.st.rules.commEst(!q.commEst) {
			q.commEst = true
			q.emit(Event{Kind: EvCommEst, PSN: p.BTH.PSN})
		}
		if op == wire.OpProbe {
			q.onProbe(port, p)
		} else {
			q.onData(port, p)
		}
	case op == wire.OpSACK || op == wire.OpNACK || op == wire.OpAcknowledge:
		// The requester acts in RTS and SQD only (QP-ST-9, QP-ST-11).
		if !q.sending() {
			q.ignore(IgnoreQPState, p.BTH.PSN, 0)
			return
		}
		switch op {
		case wire.OpSACK:
			q.onSACK(&p.SETH)
		case wire.OpNACK:
			q.onNACK(p)
		default:
			q.onAETH(p)
		}
		q.pump()
	default:
		q.ignore(IgnoreUnexpectedOp, p.BTH.PSN, 0)
	}
}
