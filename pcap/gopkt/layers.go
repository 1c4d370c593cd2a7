package gopkt

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap/internal/opstack"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// Layer types of the MRC transport headers. They sit in gopacket's
// application range (1000-1999); 1791 echoes RoCEv2's port 4791.
const (
	LayerTypeBTH   = gopacket.LayerType(1791)
	LayerTypeMETH  = gopacket.LayerType(1792)
	LayerTypeTSETH = gopacket.LayerType(1793)
	LayerTypeRETH  = gopacket.LayerType(1794)
	LayerTypeImmDt = gopacket.LayerType(1795)
	LayerTypeAETH  = gopacket.LayerType(1796)
	LayerTypeSETH  = gopacket.LayerType(1797) // SETH and its CC_STATE
	LayerTypeNETH  = gopacket.LayerType(1798)
	LayerTypePETH  = gopacket.LayerType(1799)
	LayerTypeERTH  = gopacket.LayerType(1800)
	LayerTypeEETH  = gopacket.LayerType(1801)
)

// layerOf maps wire header names to layer types. CC_STATE is decoded as
// part of the SETH layer, as wire.SETH holds it.
var layerOf = map[string]gopacket.LayerType{
	"BTH": LayerTypeBTH, "METH": LayerTypeMETH, "TSETH": LayerTypeTSETH, "RETH": LayerTypeRETH,
	"ImmDt": LayerTypeImmDt, "AETH": LayerTypeAETH, "SETH": LayerTypeSETH, "NETH": LayerTypeNETH,
	"PETH": LayerTypePETH, "ERTH": LayerTypeERTH, "EETH": LayerTypeEETH,
}

func init() {
	reg := func(t gopacket.LayerType, name string, d gopacket.Decoder) {
		gopacket.RegisterLayerType(int(t), gopacket.LayerTypeMetadata{Name: name, Decoder: d})
	}
	reg(LayerTypeBTH, "MRC-BTH", gopacket.DecodeFunc(decodeBTH))
	for _, t := range []struct {
		t    gopacket.LayerType
		name string
	}{{LayerTypeMETH, "MRC-METH"}, {LayerTypeTSETH, "MRC-TSETH"}, {LayerTypeRETH, "MRC-RETH"},
		{LayerTypeImmDt, "MRC-ImmDt"}, {LayerTypeAETH, "MRC-AETH"}, {LayerTypeSETH, "MRC-SETH"},
		{LayerTypeNETH, "MRC-NETH"}, {LayerTypePETH, "MRC-PETH"}, {LayerTypeERTH, "MRC-ERTH"},
		{LayerTypeEETH, "MRC-EETH"}} {
		reg(t.t, t.name, extDecoder{typ: t.t})
	}
}

// registered is the codec that gopacket's registered decoders use.
var registered atomic.Pointer[wire.Codec]

// Register makes gopacket decode UDP datagrams to each of the profile's
// accepted destination ports (WIRE-UDP-1) as MRC, with the profile's BTH
// flag layout. Nothing is registered until it is called: gopacket's own
// port table is not relied on, so decoding never changes behind the
// caller's back. Like gopacket's registration functions it is not safe to
// call while packets are being decoded; call it at start-up.
func Register(p spec.Profile) (*wire.Codec, error) {
	c, err := wire.NewCodec(p)
	if err != nil {
		return nil, err
	}
	registered.Store(c)
	for _, port := range p.AcceptUDPDstPorts {
		layers.RegisterUDPPortLayerType(layers.UDPPort(port), LayerTypeBTH)
	}
	return c, nil
}

func registeredCodec() *wire.Codec {
	if c := registered.Load(); c != nil {
		return c
	}
	return wire.Default
}

// stackState links the layers of one packet: which header follows METH
// and RETH, and how much of the payload is pad, depend on the BTH.
type stackState struct {
	stack *opstack.Stack
	pad   int
}

// next returns the layer type after header name, given the BTH's stack.
func (s *stackState) next(name string, rest []byte) gopacket.LayerType {
	if s == nil || s.stack == nil {
		// Without a BTH we cannot know what follows (see Layers).
		return gopacket.LayerTypeZero
	}
	h := s.stack.Headers
	for i, x := range h {
		if x.Name != name {
			continue
		}
		for _, y := range h[i+1:] {
			if t, ok := layerOf[y.Name]; ok {
				return t
			}
		}
		break
	}
	if len(rest) > 0 {
		return gopacket.LayerTypePayload
	}
	return gopacket.LayerTypeZero
}

// isLast reports whether name is the last header before the payload.
func (s *stackState) isLast(name string) bool {
	if s == nil || s.stack == nil {
		return false
	}
	h := s.stack.Headers
	last := h[len(h)-1].Name
	if last == "CC_STATE" {
		last = "SETH"
	}
	return last == name
}

// BTH is the gopacket layer of the MRC Base Transport Header. Its
// LayerPayload is the extension headers and payload, without the trailing
// ICRC, which the layer keeps.
type BTH struct {
	layers.BaseLayer
	wire.BTH
	// ICRC is the invariant CRC that ends the datagram (WIRE-ICRC-1).
	ICRC uint32
	// Trimmed says the datagram ends right after its headers, with no
	// payload and no ICRC, as a switch leaves a trimmed packet
	// (WIRE-DSCP-2). A layer cannot see the IP DSCP that marks trimming,
	// so decoding infers it from the length; wire.Codec.Decode, which
	// sees the whole frame, uses the DSCP. When serializing, no ICRC is
	// written if Trimmed.
	Trimmed bool
	// Codec gives the BTH flag layout; nil means the codec of the last
	// Register call, or wire.Default.
	Codec *wire.Codec

	st *stackState
}

func (b *BTH) codec() *wire.Codec {
	if b.Codec != nil {
		return b.Codec
	}
	return registeredCodec()
}

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns the first extension header's layer type.
func (b *BTH) NextLayerType() gopacket.LayerType { return b.st.next("BTH", b.Payload) }

// DecodeFromBytes decodes the BTH with wire's DecodeBTH and splits off
// the ICRC.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if b.st == nil {
		b.st = &stackState{}
	}
	*b.st = stackState{}
	b.Contents, b.Payload, b.ICRC, b.Trimmed = nil, nil, 0, false
	if err := b.codec().DecodeBTH(data, &b.BTH); err != nil {
		df.SetTruncated()
		return err
	}
	s := opstack.Of(&b.BTH)
	if s == nil {
		return &wire.Error{Kind: wire.ErrInvalid, Header: "BTH", Field: "opcode", Req: wire.ReqBTH2,
			Msg: fmt.Sprintf("opcode 0x%02X is not an MRC opcode", uint8(b.Opcode))}
	}
	rest := data[wire.BTHLen:]
	need := s.HdrLen - wire.BTHLen
	switch {
	case len(rest) == need:
		b.Trimmed = true
	case len(rest) < need+wire.ICRCLen:
		df.SetTruncated()
		return &wire.Error{Kind: wire.ErrTruncated, Header: "ICRC", Offset: len(data), Req: wire.ReqICRC1,
			Msg: fmt.Sprintf("need %d bytes of headers and ICRC after the BTH, have %d", need+wire.ICRCLen, len(rest))}
	default:
		b.ICRC = binary.LittleEndian.Uint32(rest[len(rest)-wire.ICRCLen:])
		rest = rest[:len(rest)-wire.ICRCLen]
	}
	b.Contents, b.Payload = data[:wire.BTHLen], rest
	b.st.stack, b.st.pad = s, int(b.PadCount)
	return nil
}

// SerializeTo prepends the BTH and appends the pad bytes and ICRC. With
// opts.FixLengths the pad count is set from the payload length
// (WIRE-BTH-9). The ICRC covers the IP header, which is not serialized
// yet: use SerializeFrame, or pcap.SetICRC afterwards, to compute it.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	c := b.codec()
	if s := opstack.Of(&b.BTH); s != nil && s.Payload {
		if opts.FixLengths {
			n := len(buf.Bytes()) - (s.HdrLen - wire.BTHLen)
			if n < 0 {
				n = 0
			}
			b.PadCount = uint8(-n & 3)
		}
		pad, err := buf.AppendBytes(int(b.PadCount))
		if err != nil {
			return err
		}
		clear(pad)
	}
	if !b.Trimmed {
		t, err := buf.AppendBytes(wire.ICRCLen)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(t, b.ICRC)
	}
	h, err := buf.PrependBytes(wire.BTHLen)
	if err != nil {
		return err
	}
	c.AppendBTH(h[:0], &b.BTH)
	return nil
}

// ext is what the extension-header layers share.
type ext struct {
	layers.BaseLayer
	st *stackState
}

// split sets Contents to the first n bytes of data and Payload to the
// rest, without the pad bytes when this header is the last before a write
// payload.
func (e *ext) split(name string, data []byte, n int, df gopacket.DecodeFeedback) error {
	if len(data) < n {
		df.SetTruncated()
		return &wire.Error{Kind: wire.ErrTruncated, Header: name, Msg: fmt.Sprintf("need %d bytes, have %d", n, len(data))}
	}
	e.Contents, e.Payload = data[:n], data[n:]
	if e.st.isLast(name) && e.st.stack.Payload {
		if e.st.pad > len(e.Payload) {
			return &wire.Error{Kind: wire.ErrInvalid, Header: "BTH", Field: "pad_count", Req: wire.ReqBTH9,
				Msg: fmt.Sprintf("pad count %d exceeds the %d payload bytes", e.st.pad, len(e.Payload))}
		}
		e.Payload = e.Payload[:len(e.Payload)-e.st.pad]
	}
	return nil
}

func prepend(buf gopacket.SerializeBuffer, n int, app func([]byte) []byte) error {
	b, err := buf.PrependBytes(n)
	if err != nil {
		return err
	}
	app(b[:0])
	return nil
}

// METH is the gopacket layer of the Message Extended Transport Header.
type METH struct {
	ext
	wire.METH
}

// LayerType returns LayerTypeMETH.
func (h *METH) LayerType() gopacket.LayerType { return LayerTypeMETH }

// CanDecode returns LayerTypeMETH.
func (h *METH) CanDecode() gopacket.LayerClass { return LayerTypeMETH }

// NextLayerType returns TSETH or RETH, as the BTH's TS flag says; it
// returns gopacket.LayerTypeZero when the layer was not linked to a BTH
// (see Layers).
func (h *METH) NextLayerType() gopacket.LayerType { return h.st.next("METH", h.Payload) }

// DecodeFromBytes decodes with wire.METH.Decode.
func (h *METH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("METH", data, wire.METHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.METH.Append.
func (h *METH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.METHLen, h.Append)
}

// TSETH is the gopacket layer of the requester timestamp header.
type TSETH struct {
	ext
	wire.TSETH
}

// LayerType returns LayerTypeTSETH.
func (h *TSETH) LayerType() gopacket.LayerType { return LayerTypeTSETH }

// CanDecode returns LayerTypeTSETH.
func (h *TSETH) CanDecode() gopacket.LayerClass { return LayerTypeTSETH }

// NextLayerType returns LayerTypeRETH.
func (h *TSETH) NextLayerType() gopacket.LayerType { return LayerTypeRETH }

// DecodeFromBytes decodes with wire.TSETH.Decode.
func (h *TSETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("TSETH", data, wire.TSETHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.TSETH.Append.
func (h *TSETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.TSETHLen, h.Append)
}

// RETH is the gopacket layer of the RDMA Extended Transport Header. For
// the non-immediate writes its LayerPayload is the write data, pad
// removed.
type RETH struct {
	ext
	wire.RETH
}

// LayerType returns LayerTypeRETH.
func (h *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns LayerTypeRETH.
func (h *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// NextLayerType returns ImmDt for the immediate writes, else the payload;
// gopacket.LayerTypeZero when the layer was not linked to a BTH.
func (h *RETH) NextLayerType() gopacket.LayerType { return h.st.next("RETH", h.Payload) }

// DecodeFromBytes decodes with wire.RETH.Decode.
func (h *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("RETH", data, wire.RETHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.RETH.Append.
func (h *RETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.RETHLen, h.Append)
}

// ImmDt is the gopacket layer of the immediate data (WIRE-IMM-1).
type ImmDt struct {
	ext
	Imm uint32
}

// LayerType returns LayerTypeImmDt.
func (h *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns LayerTypeImmDt.
func (h *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// NextLayerType returns the payload.
func (h *ImmDt) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes reads the 32-bit immediate, big-endian like every MRC
// field (wire keeps it as Packet.ImmDt).
func (h *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("ImmDt", data, wire.ImmDtLen, df); err != nil {
		return err
	}
	h.Imm = binary.BigEndian.Uint32(data)
	return nil
}

// SerializeTo prepends the immediate.
func (h *ImmDt) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.ImmDtLen, func(x []byte) []byte { return binary.BigEndian.AppendUint32(x, h.Imm) })
}

// AETH is the gopacket layer of the RoCE ACK extended header.
type AETH struct {
	ext
	wire.AETH
}

// LayerType returns LayerTypeAETH.
func (h *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (h *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// NextLayerType returns the payload if bytes follow (a length violation),
// else nothing.
func (h *AETH) NextLayerType() gopacket.LayerType { return trailing(h.Payload) }

// DecodeFromBytes decodes with wire.AETH.Decode.
func (h *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("AETH", data, wire.AETHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.AETH.Append.
func (h *AETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.AETHLen, h.Append)
}

func trailing(p []byte) gopacket.LayerType {
	if len(p) > 0 {
		return gopacket.LayerTypePayload
	}
	return gopacket.LayerTypeZero
}

// SETH is the gopacket layer of the Reliability SACK header and the
// CC_STATE that follows it (wire.SETH holds both).
type SETH struct {
	ext
	wire.SETH
}

// LayerType returns LayerTypeSETH.
func (h *SETH) LayerType() gopacket.LayerType { return LayerTypeSETH }

// CanDecode returns LayerTypeSETH.
func (h *SETH) CanDecode() gopacket.LayerClass { return LayerTypeSETH }

// NextLayerType returns the payload if bytes follow, else nothing.
func (h *SETH) NextLayerType() gopacket.LayerType { return trailing(h.Payload) }

// DecodeFromBytes decodes with wire.SETH.Decode.
func (h *SETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("SETH", data, wire.SETHLen+wire.CCStateLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.SETH.Append.
func (h *SETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.SETHLen+wire.CCStateLen, h.Append)
}

// NETH is the gopacket layer of the Reliability NACK header.
type NETH struct {
	ext
	wire.NETH
}

// LayerType returns LayerTypeNETH.
func (h *NETH) LayerType() gopacket.LayerType { return LayerTypeNETH }

// CanDecode returns LayerTypeNETH.
func (h *NETH) CanDecode() gopacket.LayerClass { return LayerTypeNETH }

// NextLayerType returns the payload if bytes follow, else nothing.
func (h *NETH) NextLayerType() gopacket.LayerType { return trailing(h.Payload) }

// DecodeFromBytes decodes with wire.NETH.Decode.
func (h *NETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("NETH", data, wire.NETHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.NETH.Append.
func (h *NETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.NETHLen, h.Append)
}

// PETH is the gopacket layer of the Reliability Probe header.
type PETH struct {
	ext
	wire.PETH
}

// LayerType returns LayerTypePETH.
func (h *PETH) LayerType() gopacket.LayerType { return LayerTypePETH }

// CanDecode returns LayerTypePETH.
func (h *PETH) CanDecode() gopacket.LayerClass { return LayerTypePETH }

// NextLayerType returns the payload if bytes follow, else nothing.
func (h *PETH) NextLayerType() gopacket.LayerType { return trailing(h.Payload) }

// DecodeFromBytes decodes with wire.PETH.Decode.
func (h *PETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("PETH", data, wire.PETHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.PETH.Append.
func (h *PETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.PETHLen, h.Append)
}

// ERTH is the gopacket layer of the Endpoint Operation request header.
type ERTH struct {
	ext
	wire.ERTH
}

// LayerType returns LayerTypeERTH.
func (h *ERTH) LayerType() gopacket.LayerType { return LayerTypeERTH }

// CanDecode returns LayerTypeERTH.
func (h *ERTH) CanDecode() gopacket.LayerClass { return LayerTypeERTH }

// NextLayerType returns the payload if bytes follow, else nothing.
func (h *ERTH) NextLayerType() gopacket.LayerType { return trailing(h.Payload) }

// DecodeFromBytes decodes with wire.ERTH.Decode.
func (h *ERTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("ERTH", data, wire.ERTHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.ERTH.Append.
func (h *ERTH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.ERTHLen, h.Append)
}

// EETH is the gopacket layer of the Endpoint Operation response header.
type EETH struct {
	ext
	wire.EETH
}

// LayerType returns LayerTypeEETH.
func (h *EETH) LayerType() gopacket.LayerType { return LayerTypeEETH }

// CanDecode returns LayerTypeEETH.
func (h *EETH) CanDecode() gopacket.LayerClass { return LayerTypeEETH }

// NextLayerType returns the payload if bytes follow, else nothing.
func (h *EETH) NextLayerType() gopacket.LayerType { return trailing(h.Payload) }

// DecodeFromBytes decodes with wire.EETH.Decode.
func (h *EETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.split("EETH", data, wire.EETHLen, df); err != nil {
		return err
	}
	return h.Decode(data)
}

// SerializeTo prepends the header with wire.EETH.Append.
func (h *EETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, wire.EETHLen, h.Append)
}

// Layers holds one of each MRC layer, linked so that the extension
// headers follow their BTH, plus an SRH layer for SRv6 frames. Add
// DecodingLayers to a gopacket.DecodingLayerParser along with Ethernet,
// IPv4, IPv6 and UDP layers. The layers of one Layers value are reused
// for every packet; use one per goroutine.
//
// METH and RETH need the BTH of the same packet to know whether a TSETH
// or an ImmDt follows: layers declared on their own, outside a Layers,
// stop decoding after METH and RETH (NextLayerType returns
// gopacket.LayerTypeZero). gopacket.NewPacket links them itself.
type Layers struct {
	BTH   BTH
	METH  METH
	TSETH TSETH
	RETH  RETH
	ImmDt ImmDt
	AETH  AETH
	SETH  SETH
	NETH  NETH
	PETH  PETH
	ERTH  ERTH
	EETH  EETH
	SRH   SRH
	st    stackState
}

// NewLayers returns linked layers that decode with c's BTH flag layout
// (nil: the registered codec, or wire.Default).
func NewLayers(c *wire.Codec) *Layers {
	l := &Layers{}
	l.BTH.Codec = c
	for _, e := range []*ext{&l.METH.ext, &l.TSETH.ext, &l.RETH.ext, &l.ImmDt.ext, &l.AETH.ext,
		&l.SETH.ext, &l.NETH.ext, &l.PETH.ext, &l.ERTH.ext, &l.EETH.ext} {
		e.st = &l.st
	}
	l.BTH.st = &l.st
	return l
}

// DecodingLayers returns the layers for gopacket.NewDecodingLayerParser.
func (l *Layers) DecodingLayers() []gopacket.DecodingLayer {
	return []gopacket.DecodingLayer{&l.BTH, &l.METH, &l.TSETH, &l.RETH, &l.ImmDt, &l.AETH,
		&l.SETH, &l.NETH, &l.PETH, &l.ERTH, &l.EETH, &l.SRH}
}

// decodeBTH is the gopacket.Decoder of LayerTypeBTH: it decodes the BTH
// and hands the extension headers to decoders linked to it.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	b := &BTH{st: &stackState{}}
	err := b.DecodeFromBytes(data, p)
	p.AddLayer(b)
	if err != nil {
		return err
	}
	return p.NextDecoder(extDecoder{typ: b.NextLayerType(), st: b.st})
}

// extDecoder decodes one extension header; st links it to its BTH (nil
// when decoding starts at the extension header).
type extDecoder struct {
	typ gopacket.LayerType
	st  *stackState
}

func (d extDecoder) Decode(data []byte, p gopacket.PacketBuilder) error {
	var l interface {
		gopacket.DecodingLayer
		gopacket.Layer
	}
	e := ext{st: d.st}
	switch d.typ {
	case LayerTypeMETH:
		l = &METH{ext: e}
	case LayerTypeTSETH:
		l = &TSETH{ext: e}
	case LayerTypeRETH:
		l = &RETH{ext: e}
	case LayerTypeImmDt:
		l = &ImmDt{ext: e}
	case LayerTypeAETH:
		l = &AETH{ext: e}
	case LayerTypeSETH:
		l = &SETH{ext: e}
	case LayerTypeNETH:
		l = &NETH{ext: e}
	case LayerTypePETH:
		l = &PETH{ext: e}
	case LayerTypeERTH:
		l = &ERTH{ext: e}
	case LayerTypeEETH:
		l = &EETH{ext: e}
	case gopacket.LayerTypePayload:
		return gopacket.LayerTypePayload.Decode(data, p)
	default:
		return nil // nothing follows
	}
	err := l.DecodeFromBytes(data, p)
	p.AddLayer(l)
	if err != nil {
		return err
	}
	next := l.NextLayerType()
	if next == gopacket.LayerTypeZero {
		return nil
	}
	return p.NextDecoder(extDecoder{typ: next, st: d.st})
}
