// Package pcap reads and writes MRC packet captures and decodes them with
// the wire codec.
//
// It provides:
//
//   - Reader: pcap and pcapng files, gzip-compressed or not (the format
//     is sniffed), streamed in constant memory with no allocation per
//     frame; a file Open opens can keep frames valid until released and
//     go back to a frame (Retain, Release, Mark, Seek). Frames carry their pcapng interface, which MRC captures use
//     for the fabric plane and capture point (InterfaceName), and their
//     comments, where tools record verdicts.
//   - Writer: pcapng with one interface per plane and capture point and
//     per-packet comments, or classic pcap.
//   - Decoder, Printer and Stats: decode frames with wire.Codec (lenient
//     Decode, strict Check with requirement IDs) and show them one line
//     per packet, as a full header tree, or as JSON lines with the spec's
//     field names, every header from wire's field descriptions (Headers,
//     LinkHeaders); summarise per QP and per EV. mrc-conform decode is a
//     thin command over these.
//   - CompileFilter: display filters over the dissector's field names
//     (mrc.bth.psn == 5 && mrc.ev == 0x10001) with tshark's semantics,
//     compiled once; Filter.Match allocates nothing.
//   - SetICRC: zeroes the UDP checksum of a frame and writes its ICRC.
//   - WriteLua: a Wireshark dissector generated from the same header
//     descriptions (wireshark/mrc.lua is the one for wire.Default).
//
// The gopacket layers and packet source are in package pcap/gopkt, so
// that reading captures does not link gopacket.
//
// Nothing here parses MRC headers on its own: the printers walk wire's
// field descriptions, and the dissector is generated from them, so both
// agree with the codec bit for bit. The corpus under testdata/ and the
// dissector are generated; `go generate ./pcap` rewrites them and the
// tests fail when a checked-in copy is stale.
package pcap

//go:generate go run ./internal/gen
