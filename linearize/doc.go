// Package linearize checks MRC runs for linearizability with porcupine.
//
// A run of the fabric simulator records a History: the operations the
// applications performed and what they observed, each an interval on a
// logical clock that ticks once per call and return. Two sequential models
// judge it:
//
//   - Registers: responder memory as one register per chunk (the bytes one
//     write packet places). A WRITE's interval runs from its post to its
//     completion; reads happen at completion events and at arbitrary
//     times. A read that returns a version no linearization allows shows
//     a stale retransmission overwriting newer data, PSN aliasing across a
//     wrap, or a completion reported before its data landed.
//   - FIFO: each QP's WRITE WITH IMM completion stream as a channel: posts
//     enqueue immediates, receive completions dequeue them, and the queue
//     must be empty once every send has completed — exactly once, in send
//     order.
//
// Both models are partitioned (per chunk, per QP), so checking a
// 10,000-operation history takes milliseconds. A failed check can write
// porcupine's HTML visualization as a test artifact (Report).
package linearize
