// Package netio moves MRC frames between the conformance tester and an
// implementation under test over real sockets: AF_PACKET raw sockets on
// named interfaces (one per plane, Linux, root) and a UDP tunnel (one
// Ethernet frame per datagram behind a small shim, no privileges). Both
// the tester (mrc-conform run) and the reference peer (mrc-peer) use it.
//
// The tester's transmissions go through a Guard: a frame leaves only if
// it is an MRC frame (IPv4 or IPv6, UDP to an MRC port) addressed to one
// of the configured peer addresses; anything else is refused with a
// *RefusedError and never written.
//
// Users: the active tester (conformance/active) and cmd/mrc-peer.
package netio
