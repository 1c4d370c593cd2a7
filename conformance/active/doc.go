// Package active is the active conformance suite for MRC: the tester plays
// the peer of an implementation under test (IUT), as responder and as
// requester, drives it through the control protocol (package control,
// conformance/control-protocol.md), exchanges frames with it through a
// user-space impairment stage, and judges the answers. mrc-conform run is
// the command over it.
//
// # Cases
//
// Every case (Cases) is a conformance.Case of the shared catalog, with the
// requirement IDs it checks, a role (the IUT as responder, requester,
// endpoint, controller, or the format of everything it sends) and a
// procedure written against T, much like a testing.T: T.Check and
// T.Fail record observations with the frame that proves them, T.Inconclusive
// notes a precondition the tester could not create, T.NotSupported and
// T.Fatalf end the case. The verdict follows: ERROR for a tester fault,
// NOT-SUPPORTED when the IUT lacks a method, FAIL (NON-STRICT for a
// SHOULD) on any violation, INCONCLUSIVE without observations, else PASS.
// The PICS decides NOT-APPLICABLE (missing features) and NOT-SUPPORTED
// (cases the vendor declares unsupported) before a case runs.
//
// Cases set up a QP pair with T.NewConn: the IUT's QP through the control
// channel, and the tester's own reference QP (package statemachine), which
// answers the IUT's data like a conformant peer. Conn hooks impair or
// rewrite traffic in either direction (drop, trim, CE-mark, duplicate,
// delay, corrupt, rewrite a SACK's verdict); crafted packets (package wire)
// cover what no conformant peer would send: bad ICRCs and opcodes,
// out-of-window PSNs, duplicates with other payloads, resource and
// UNEXP_EVENT NACKs, probes, endpoint requests.
//
// # Transports and time
//
// A Target is the IUT's data path and control channel. Inproc runs the
// reference (package peer) in process on a simulated fabric with a
// synthetic clock: a run is deterministic for its seed and takes no real
// time, which is how the detection matrix of README.md is computed.
// SocketTarget reaches an IUT over the netio UDP tunnel or AF_PACKET raw
// sockets, on a real clock, with the timing tolerances of RealTiming;
// liveness checks are repeated before a missing answer counts, since
// answers may be lost. Every frame the tester sends passes netio.Guard:
// only MRC frames to the configured peer addresses leave.
//
// Run runs the selected cases and returns a conformance.Report (mode
// active) with one result per case, the findings' frame numbers pointing
// into the pcapng capture of the run when one is requested. ExitCode maps
// a report to the process status: 0 pass, 1 a MUST failed, 2 a tester
// error, 127 nothing the IUT supports was selected.
package active
