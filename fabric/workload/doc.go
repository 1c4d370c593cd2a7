// Package workload runs applications over the fabric simulator and checks
// what they see.
//
// A Harness owns a fabric.Sim, builds connections (an MRC QP pair, or RC
// baseline QP pairs, one path each) between nodes, posts RDMA WRITE and
// WRITE WITH IMM work requests, applies every placement to the destination
// node's memory and checks, as each step happens:
//
//   - no byte is placed from a stale packet: every write's data carries
//     its version in each word, so a placement names its write, and data
//     from a write that already completed, or a chunk placed twice, is a
//     violation (RSP-DUP-1);
//   - every completed WRITE's bytes are in memory (CMP-SND-1), and send
//     completions come in post order (CMP-SND-2);
//   - WriteIMM receive completions come exactly once, in send order, after
//     every earlier write of the QP is placed (WIMM-RSP-1, WIMM-RSP-2);
//   - requester and responder state stays bounded by the attributes
//     (window, EV table, WriteIMMs in flight and held), and no PSN is sent
//     beyond the MPR window (MPR-WIN-1);
//   - EV states change only as the path-state table allows, data leaves
//     only on GOOD EVs of planes that are up, and a retransmission never
//     uses the EV its NACK named (EV-ST-1 to EV-ST-13);
//   - no QP enters ERROR (no connection loss);
//   - while Drain holds a requester in SQD no work request of it starts,
//     and IBV_EVENT_SQ_DRAINED comes once, in the step in which every one
//     that had started has completed (QP-ST-12, CTL-AEV-6).
//
// Violations are collected (Violations) with the requirement each breaks.
// With Options.History set, the harness also records a linearize.History:
// a write per chunk from post to completion, reads at completion events
// and whenever Read is called, and each QP's WriteIMM stream.
package workload
