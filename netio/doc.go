// Package netio moves MRC frames between the conformance tester and an
// implementation under test over real sockets: AF_PACKET raw sockets on
// named interfaces (one per plane, Linux, root) and a UDP tunnel (one
// Ethernet frame per datagram behind a small shim, no privileges). Both
// the tester (mrc-conform run) and the reference peer (mrc-peer) use it.
//
// The tester's transmissions go through a Guard, which checks every layer:
// a frame leaves only on one of the transport's planes, to a unicast
// Ethernet destination (the peer's MAC of the plane), as IPv4 or IPv6 UDP
// to an MRC port, addressed to a configured peer, with any SRv6 outer
// destination and segment inside the allowed prefixes; anything else is
// refused with a *RefusedError and never written. Reads are bounded too:
// frames over MaxFrame bytes are dropped, and a tunnel with a fixed
// remote reads nothing from anyone else.
//
// Users: the active tester (conformance/active) and cmd/mrc-peer.
package netio
