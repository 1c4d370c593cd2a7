// Package rc is the baseline MRC is measured against: a RoCEv2 Reliable
// Connection QP as IBTA specifies it, reduced to what RDMA WRITE needs, as
// a pure state machine with the same shape as statemachine.QP so that the
// fabric can drive either.
//
// Standard RC behaviour, on purpose and nothing smarter:
//
//   - One path: every packet of the QP carries the same UDP source port,
//     so ECMP (or SRv6) keeps it on one path of one plane (NIC port).
//   - In-order placement: the responder accepts only the expected PSN. The
//     first out-of-order packet draws one NAK (PSN sequence error) and is
//     discarded, as is everything after it until the expected PSN arrives;
//     duplicates are re-acknowledged and discarded.
//   - Cumulative ACKs, one per packet received in order.
//   - Go-back-N: on a sequence-error NAK, or when the local ACK timeout
//     expires with no progress, the requester resends everything from the
//     oldest unacknowledged PSN. Each such event counts against retry_cnt
//     (at most 7); the counter resets on progress, and when it runs out the
//     QP goes to ERROR, completing the oldest work request with
//     RETRY_EXC_ERR and flushing the rest, as IBTA requires.
//   - No trimming: data is sent in the NO_TRIM class, so a full switch
//     queue drops it.
//   - Congestion: a window of outstanding packets, halved at most once per
//     window when the responder echoes a CE mark and grown by one packet
//     per window acknowledged. This stands in for DCQCN's reaction to
//     CNPs; the echo rides in the ACK's BTH SE bit, since the model has no
//     separate CNP packet.
//
// Packets use the MRC opcodes and header stack (the fabric sizes and
// encodes them with the wire codec), which costs RC about 20 bytes per
// packet more than real RoCE framing: under 0.5 % at a 4 KiB MTU.
package rc
