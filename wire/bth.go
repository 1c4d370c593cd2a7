package wire

// BTH is the MRC Base Transport Header (WIRE-BTH-1). Reserved and variant
// bits are kept so that re-encoding a decoded header reproduces its bytes.
type BTH struct {
	Opcode     Opcode
	SE         bool
	M          bool
	PadCount   uint8 // 2 bits (WIRE-BTH-9)
	TVer       uint8 // 4 bits, 0 (WIRE-BTH-3)
	PKey       uint16
	Variant    uint8  // byte 4: FECN/BECN/reserved, masked in the ICRC
	DestQP     uint32 // 24 bits
	AckReq     bool
	Retransmit bool  // RTX: this packet is a retransmission (WIRE-BTH-5)
	TSPresent  bool  // TS: a TSETH follows the METH (WIRE-BTH-6)
	Rsvd       uint8 // the reserved bits of byte 8, in place (WIRE-BTH-7)
	PSN        uint32
}

// DecodeBTH reads a BTH from the start of b using c's flag layout.
func (c *Codec) DecodeBTH(b []byte, h *BTH) error {
	if len(b) < BTHLen {
		return truncated("BTH", 0, BTHLen, len(b), ReqBTH1)
	}
	c.decodeBTH(b, h)
	return nil
}

// decodeBTH reads a BTH from b, which holds one whole (len(b) >= BTHLen).
// The header is read as an array, its length checked once; the 24-bit
// fields are a 32-bit word's low three bytes.
func (c *Codec) decodeBTH(b []byte, h *BTH) {
	a := (*[BTHLen]byte)(b)
	b1, f := a[1], a[8]
	h.Opcode = Opcode(a[0])
	h.SE, h.M = b1&c.seMask != 0, b1&c.mMask != 0
	h.PadCount, h.TVer = b1>>4&3, b1&0xF
	h.PKey, h.Variant, h.DestQP = be.Uint16(a[2:]), a[4], be.Uint32(a[4:])&0xFFFFFF
	h.AckReq, h.Retransmit, h.TSPresent = f&0x80 != 0, f&c.rtxMask != 0, f&c.tsMask != 0
	h.Rsvd = f & c.rsvdMask
	h.PSN = be.Uint32(a[8:]) & 0xFFFFFF
}

// AppendBTH appends h to b using c's flag layout.
func (c *Codec) AppendBTH(b []byte, h *BTH) []byte {
	b1 := h.PadCount&3<<4 | h.TVer&0xF
	if h.SE {
		b1 |= c.seMask
	}
	if h.M {
		b1 |= c.mMask
	}
	f := h.Rsvd & c.rsvdMask
	if h.AckReq {
		f |= 0x80
	}
	if h.Retransmit {
		f |= c.rtxMask
	}
	if h.TSPresent {
		f |= c.tsMask
	}
	b = append(b, byte(h.Opcode), b1, byte(h.PKey>>8), byte(h.PKey), h.Variant)
	b = app24(b, h.DestQP)
	return app24(append(b, f), h.PSN)
}
