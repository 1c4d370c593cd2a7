// Package control is the MRC conformance control protocol: how the tester
// (mrc-conform run) drives an implementation under test (IUT) — create
// and modify QPs, register memory, post work requests, poll completions,
// read counters and inject configuration — so that a vendor can put the
// IUT behind the suite by wrapping its verbs library in a small server.
//
// The protocol is JSON lines over a stream socket (Unix or TCP): the
// client writes one Request per line, the server answers each with one
// Response line carrying the same id, in order. The normative description,
// with every method, its parameters, results and errors, is
// conformance/control-protocol.md; the Go types here are its reference
// encoding. Version is the protocol version; a server answers hello with
// the version it speaks and the client refuses a different major version.
//
// Client is the tester's side (Dial, or NewClient over any RoundTripper);
// Serve is the server loop a Go implementation can reuse (cmd/mrc-peer
// does, around package peer).
//
// Users: the active tester (conformance/active, the client side), the
// reference peer (package peer, the server side) and vendors' own agents.
package control
