// Package wire is the MRC codec: the headers of spec/10-wire.md as Go
// types, with decode and append-style encode, the full-packet parser and
// builder (Ethernet, IPv4 or IPv6, SRv6 outer IPv6 with or without SRH,
// UDP, the opcode's header stack, payload, ICRC), the RoCEv2 invariant CRC,
// and the EV encodings.
//
// The package is pure: no I/O, no goroutines, no global mutable state.
// Decoding reads into a caller-owned Packet and never allocates on success;
// the payload is a sub-slice of the input. Encoding appends to a
// caller-owned buffer. No length field read from the wire can make the
// codec allocate or loop in proportion to it.
//
// Decode is lenient: it fills what it can and returns the first error that
// stops it. Check is strict: it reports every reserved-bit, length, flag
// and ICRC violation of a decoded packet with the requirement ID it breaks,
// which is what the conformance judge needs.
//
// Codec.Headers and LinkHeaders describe every field of the MRC transport
// headers and of the headers below them (name, bit offset, width; for the
// latter also Wireshark's field name, hex display and addresses), and
// Codec.Walk and Packet.WalkLink say where a decoded frame holds each
// header. Tools print, export and dissect frames from these descriptions,
// and tests hold the hand-written codec, and tshark, to them.
package wire
