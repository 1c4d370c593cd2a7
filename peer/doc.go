// Package peer is the reference implementation under test: an MRC node
// (the QPs of package statemachine and its endpoint agent) behind the
// conformance control protocol. It is pure in the way statemachine is:
// time is an input, frames in and out are byte slices, and the caller
// owns the I/O. The conformance suite runs it in process against a
// simulated fabric (mrc-conform run --transport inproc), and cmd/mrc-peer
// serves it over a UDP tunnel or raw sockets with a real clock (Runner).
//
// Config.Faults seeds known bugs (Faults lists them; mrc-peer and
// mrc-conform run take them as a FaultSet flag, --fault) so that the
// suite can show that it catches them; with none the agent is the
// reference. Where one of the peer's own faults can break the agent, the
// agent asks a rule of rules.go, the specification's unless a fault
// overrides it, as statemachine does.
//
// Users: cmd/mrc-peer (the reference device under test), the conformance
// suite's in-process transport (conformance/active), and vendors who wrap
// their own verbs library in the same control protocol and compare.
package peer
