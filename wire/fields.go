package wire

// Field describes one field of a header the way spec/10-wire.md tables do:
// bit offset from the most significant bit of the header's first byte,
// width in bits, and whether it is reserved or signed. The Lua dissector
// and the JSON decoder are generated from / driven by these descriptions,
// and tests check that the hand-written codec agrees with them bit for bit.
// The headers below MRC's (LinkHeaders) also say how Wireshark names a
// field, whether tools show it in hex, and which fields are addresses.
type Field struct {
	Name     string
	Bit      int
	Width    int // 1..64; an Addr field 32, 48 or 128
	Signed   bool
	Reserved bool
	// Wireshark is Wireshark's display-filter name for a field of a
	// header Wireshark dissects itself (e.g. "ip.ttl"), else "".
	Wireshark string
	// Hex: tools show the value in hexadecimal, (Width+3)/4 digits.
	Hex bool
	// Addr: an IPv4 (32 bits), Ethernet (48) or IPv6 (128) address,
	// byte-aligned; read it with Bytes (Value holds at most 64 bits).
	Addr bool
}

// Bytes returns the bytes of a byte-aligned field in header bytes b.
func (f Field) Bytes(b []byte) []byte { return b[f.Bit/8 : (f.Bit+f.Width)/8] }

// Header describes one header: its name and length in bytes, and fields in
// wire order.
type Header struct {
	Name   string
	Len    int
	Fields []Field
}

// Value extracts f from header bytes b (which must hold the header).
func (f Field) Value(b []byte) uint64 {
	first, last := f.Bit/8, (f.Bit+f.Width-1)/8
	var v uint64
	if last-first >= 8 { // a 64-bit field not byte-aligned spans nine bytes
		for i := f.Bit; i < f.Bit+f.Width; i++ {
			v = v<<1 | uint64(b[i/8]>>(7-i%8)&1)
		}
		return v
	}
	for i := first; i <= last; i++ {
		v = v<<8 | uint64(b[i])
	}
	v >>= 7 - uint((f.Bit+f.Width-1)%8)
	if f.Width < 64 {
		v &= 1<<f.Width - 1
	}
	return v
}

// Int returns the field as a signed value when f.Signed, else as Value.
func (f Field) Int(b []byte) int64 {
	v := f.Value(b)
	if f.Signed && f.Width < 64 && v>>(f.Width-1) != 0 {
		return int64(v) - int64(1)<<f.Width
	}
	return int64(v)
}

func fld(name string, bit, width int) Field { return Field{Name: name, Bit: bit, Width: width} }
func rsv(bit, width int) Field {
	return Field{Name: "reserved", Bit: bit, Width: width, Reserved: true}
}
func sgn(name string, bit, width int) Field {
	return Field{Name: name, Bit: bit, Width: width, Signed: true}
}

// ehdrHead is the type/next_header word shared by the reliability and
// endpoint headers.
var ehdrHead = []Field{fld("type", 0, 4), fld("next_header", 4, 5)}

func cat(a []Field, b ...Field) []Field { return append(append([]Field(nil), a...), b...) }

// Headers returns the field descriptions of every MRC transport header
// under c's profile (only the BTH flag positions depend on it). The
// result is shared: do not modify it.
func (c *Codec) Headers() []Header { return c.headers() }

// headers returns c's header descriptions, built on first use: most
// codecs never describe a field (Default is made when the program
// starts; pcap.Fit makes one per preset), and building them is about
// half of NewCodec's CPU and allocations.
func (c *Codec) headers() []Header {
	c.hdrsOnce.Do(c.setHeaders)
	return c.hdrs
}

func (c *Codec) setHeaders() { c.hdrs = c.buildHeaders() }

func (c *Codec) buildHeaders() []Header {
	bit := func(mask byte) int { // bit offset of a one-bit mask within a byte
		for i := 0; i < 8; i++ {
			if mask&(0x80>>i) != 0 {
				return i
			}
		}
		return 0
	}
	bth := []Field{fld("opcode", 0, 8)}
	flags1 := []Field{fld("se", 8+bit(c.seMask), 1), fld("m", 8+bit(c.mMask), 1)}
	if flags1[0].Bit > flags1[1].Bit {
		flags1[0], flags1[1] = flags1[1], flags1[0]
	}
	bth = append(bth, flags1...)
	bth = append(bth, fld("pad_cnt", 10, 2), fld("tver", 12, 4), fld("p_key", 16, 16),
		fld("reserved_variant", 32, 8), fld("dest_qp", 40, 24))
	for i := 0; i < 8; i++ {
		m := byte(0x80 >> i)
		switch m {
		case 0x80:
			bth = append(bth, fld("ack_req", 64, 1))
		case c.rtxMask:
			bth = append(bth, fld("rtx", 64+i, 1))
		case c.tsMask:
			bth = append(bth, fld("ts", 64+i, 1))
		default:
			bth = append(bth, rsv(64+i, 1))
		}
	}
	bth = append(bth, fld("psn", 72, 24))
	tsTail := func(bit int) []Field {
		return []Field{fld("tx_timestamp", bit, 16), fld("tsr", bit+16, 1), rsv(bit+17, 11), fld("ftype", bit+28, 4)}
	}
	return []Header{
		{"BTH", BTHLen, bth},
		{"METH", METHLen, []Field{fld("rqmsn", 0, 16), fld("msn", 16, 16)}},
		{"TSETH", TSETHLen, tsTail(0)},
		{"RETH", RETHLen, []Field{fld("va", 0, 64), fld("r_key", 64, 32), fld("dma_length", 96, 32)}},
		{"ImmDt", ImmDtLen, []Field{fld("imm_data", 0, 32)}},
		{"AETH", AETHLen, []Field{fld("syndrome", 0, 8), fld("msn", 8, 24)}},
		{"SETH", SETHLen, cat(ehdrHead, fld("m", 9, 2), rsv(11, 3), fld("pr", 14, 1), rsv(15, 1),
			sgn("ack_psn_offset", 16, 16), fld("entropy", 32, 32), fld("spdcid", 64, 16), fld("dpdcid", 80, 16),
			rsv(96, 8), fld("cack_psn", 104, 24), fld("cc_type", 128, 4), fld("cc_flags", 132, 4), fld("mpr", 136, 8),
			sgn("sack_offset", 144, 16), fld("sack_bitmap", 160, 64))},
		{"CC_STATE", CCStateLen, []Field{fld("tx_timestamp", 0, 16), rsv(16, 1), fld("ooo_count", 17, 15),
			fld("r_c", 32, 1), fld("rcv_cwnd_pen", 33, 7), fld("rcvd_bytes", 40, 24)}},
		{"NETH", NETHLen, cat(ehdrHead, rsv(9, 7), fld("nack_reason", 16, 8), fld("vendor_info", 24, 8),
			fld("entropy", 32, 32), fld("spdcid", 64, 16), fld("dpdcid", 80, 16), rsv(96, 8), fld("nack_psn", 104, 24),
			fld("cc_type", 128, 4), fld("cc_flags", 132, 4), rsv(136, 8), fld("tx_timestamp", 144, 16))},
		{"PETH", PETHLen, cat(ehdrHead, append([]Field{rsv(9, 7), rsv(16, 8), fld("vendor_info", 24, 8),
			fld("probe_id", 32, 16), rsv(48, 16), fld("spdcid", 64, 16), fld("dpdcid", 80, 16)}, tsTail(96)...)...)},
		{"ERTH", ERTHLen, cat(ehdrHead, append([]Field{rsv(9, 5), fld("op", 14, 2), rsv(16, 8), fld("vendor_info", 24, 8),
			fld("port_status_mask", 32, 32), rsv(64, 32)}, tsTail(96)...)...)},
		{"EETH", EETHLen, cat(ehdrHead, rsv(9, 1), fld("op", 10, 2), rsv(12, 4), rsv(16, 8), fld("vendor_info", 24, 8),
			rsv(32, 64), rsv(96, 64), rsv(160, 64), fld("tx_timestamp", 224, 16), rsv(240, 16), rsv(256, 32))},
	}
}

// Header returns the description of the named header, or false.
func (c *Codec) Header(name string) (Header, bool) {
	for _, h := range c.headers() {
		if h.Name == name {
			return h, true
		}
	}
	return Header{}, false
}

// Walk calls f with the description and frame offset of each transport
// header that Decode found in p (BTH first), in wire order. Tools use it to
// print or export every field by its spec name.
func (c *Codec) Walk(p *Packet, f func(h *Header, off int)) {
	if p.bthOff == 0 || p.BTH.Opcode.Stack() == 0 {
		return
	}
	off := p.bthOff
	hdrs := c.headers()
	for i := range hdrs {
		h := &hdrs[i]
		var has bool
		switch h.Name {
		case "BTH":
			has = true
		case "METH":
			has = p.Decoded&HasMETH != 0
		case "TSETH":
			has = p.Decoded&HasTSETH != 0
		case "RETH":
			has = p.Decoded&HasRETH != 0
		case "ImmDt":
			has = p.Decoded&HasImmDt != 0
		case "AETH":
			has = p.Decoded&HasAETH != 0
		case "SETH", "CC_STATE":
			has = p.Decoded&HasSETH != 0
		case "NETH":
			has = p.Decoded&HasNETH != 0
		case "PETH":
			has = p.Decoded&HasPETH != 0
		case "ERTH":
			has = p.Decoded&HasERTH != 0
		case "EETH":
			has = p.Decoded&HasEETH != 0
		}
		if has {
			f(h, off)
			off += h.Len
		}
	}
}
