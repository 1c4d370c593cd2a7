// Package gopkt decodes and builds MRC frames with gopacket: a gopacket
// layer for every MRC transport header, built on wire's header codecs,
// and a gopacket packet source over a pcap.Reader.
//
// It provides:
//
//   - Layers for every MRC header (LayerTypeBTH, ..., one type each:
//     BTH, METH, TSETH, RETH, ImmDt, AETH, SETH with its CC_STATE, NETH,
//     PETH, ERTH, EETH). Register hooks them to the profile's UDP ports
//     for gopacket.NewPacket; NewLayers links one of each for
//     gopacket.DecodingLayerParser, and its SRH layer lets the parser
//     cross an SRv6 outer header. Every layer serializes; SerializeFrame
//     then computes the ICRC (pcap.SetICRC).
//   - Source: a pcap.Reader as a gopacket PacketDataSource and
//     ZeroCopyPacketDataSource, so gopacket.NewPacketSource reads pcap,
//     pcapng and gzip-compressed captures.
//
// The layers parse nothing on their own: they call wire's Decode and
// Append methods, and the header stack of each opcode comes from the
// codec, so they agree with wire.Codec bit for bit (the tests decode the
// pcap corpus both ways). It is a package of its own so that programs
// that read captures without gopacket (mrc-conform) do not link it:
// gopacket/layers' initialisation and its 5 MB of pointer-holding
// tables cost every run start-up time and every garbage collection a
// scan.
package gopkt
