package statemachine

import "github.com/openmrc/mrc/wire"

// What happens to an arriving packet, by kind, in the order it happens:
//
//   - every packet: traced, and dropped unless it names this QP;
//   - a request (write or probe) at the responder: the QP-state and
//     partition gates, COMM_EST, then the responder's onData or onProbe
//     (responder.go);
//   - feedback at the requester: the QP-state gate, then
//     – a SACK: its acknowledgements (onSACK, requester.go), its verdict on
//     the EV it reflects (sackVerdict, ev.go), then its window and
//     congestion state (sackWindow, requester.go);
//     – a NACK: onNACK (requester.go);
//     – a RoCE ACK or NAK: onAETH (requester.go);
//     after which the requester sends what the window now allows (pump);
//   - anything else is ignored.

// Receive hands the QP one packet addressed to it; port is the 1-based
// local NIC port it arrived on (0 if unknown), which selects the plane of
// the answer (EV-REV-4). The packet must have passed the codec's checks
// (RSP-RCV-1); it is only read, and Placements alias its payload.
func (q *QP) Receive(now Time, port int, p *wire.Packet, out *Output) {
	q.begin(now, out)
	defer q.end()
	op := p.BTH.Opcode
	if q.trace() {
		q.emit(Event{Kind: EvPacketReceived, PSN: p.BTH.PSN, EV: p.EV(q.st.qp.Addr.EVMode), Reason: uint8(op)})
	}
	if p.BTH.DestQP != q.st.qp.QPN {
		q.ignore(IgnoreWrongQP, p.BTH.PSN, 0)
		return
	}
	switch {
	case op.IsWrite() || op == wire.OpProbe:
		q.receiveRequest(port, p)
	case op == wire.OpSACK || op == wire.OpNACK || op == wire.OpAcknowledge:
		q.receiveFeedback(p)
	default:
		q.ignore(IgnoreUnexpectedOp, p.BTH.PSN, 0)
	}
}

// receiveRequest takes a write or probe to the responder. A responder acts
// in RTR, RTS and SQD only and drops data or probes of another partition
// (QP-ST-9, QP-ST-11, RSP-RCV-1, WIRE-BTH-12); the first request accepted
// in RTR raises COMM_EST (CTL-AEV-4).
func (q *QP) receiveRequest(port int, p *wire.Packet) {
	if !q.responding() {
		q.ignore(IgnoreQPState, p.BTH.PSN, 0)
		return
	}
	if p.BTH.PKey != q.st.pkey {
		q.ignore(IgnoreMalformed, p.BTH.PSN, 0)
		return
	}
	if q.state == StateRTR && (!q.commEst || q.st.seeded(FaultCommEstRepeated)) {
		q.commEst = true
		q.emit(Event{Kind: EvCommEst, PSN: p.BTH.PSN})
	}
	if p.BTH.Opcode == wire.OpProbe {
		q.onProbe(port, p)
	} else {
		q.onData(port, p)
	}
}

// receiveFeedback takes a SACK, NACK or RoCE ACK/NAK to the requester,
// which acts on them in RTS and SQD only (QP-ST-9, QP-ST-11), then sends
// what the window allows.
func (q *QP) receiveFeedback(p *wire.Packet) {
	if !q.sending() {
		q.ignore(IgnoreQPState, p.BTH.PSN, 0)
		return
	}
	switch p.BTH.Opcode {
	case wire.OpSACK:
		s := &p.SETH
		if a, ok := q.onSACK(s); ok {
			m := q.sackVerdict(s, a.ev, a.evOK)
			q.sackWindow(s, a, m)
		}
	case wire.OpNACK:
		q.onNACK(p)
	default:
		q.onAETH(p)
	}
	q.pump()
}
