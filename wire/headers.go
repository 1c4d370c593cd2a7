package wire

import "encoding/binary"

var be = binary.BigEndian

// Header lengths in bytes (WIRE-BTH-1, WIRE-METH-1, ...).
const (
	BTHLen     = 12
	METHLen    = 4
	TSETHLen   = 4
	RETHLen    = 16
	ImmDtLen   = 4
	AETHLen    = 4
	SETHLen    = 28
	CCStateLen = 8
	NETHLen    = 20
	PETHLen    = 16
	ERTHLen    = 16
	EETHLen    = 36
	ICRCLen    = 4
)

func u24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func app24(b []byte, v uint32) []byte { return append(b, byte(v>>16), byte(v>>8), byte(v)) }

func b2u(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// ehdrWord0 is the first two bytes shared by SETH, NETH, PETH, ERTH and
// EETH: type in bits 15-12, next_header in bits 11-7 (WIRE-SETH-1).
func ehdrWord0(typ, next uint8) uint16 { return uint16(typ&0xF)<<12 | uint16(next&0x1F)<<7 }

// METH is the Message Extended Transport Header (WIRE-METH-1).
type METH struct {
	RQMSN uint16 // receive-queue MSN: advances once per WriteIMM message
	MSN   uint16 // message sequence number
}

// Decode reads a METH from the start of b.
func (h *METH) Decode(b []byte) error {
	if len(b) < METHLen {
		return truncated("METH", 0, METHLen, len(b), ReqMETH1)
	}
	h.RQMSN, h.MSN = be.Uint16(b), be.Uint16(b[2:])
	return nil
}

// Append appends the encoded header to b.
func (h *METH) Append(b []byte) []byte {
	return append(b, byte(h.RQMSN>>8), byte(h.RQMSN), byte(h.MSN>>8), byte(h.MSN))
}

// TSETH is the requester timestamp extension header (WIRE-TSETH-1).
type TSETH struct {
	TxTimestamp uint16
	TSR         bool   // timestamp resolution flag
	Rsvd        uint16 // 11 reserved bits
	FType       uint8  // format type, 4 bits
}

// Decode reads a TSETH from the start of b.
func (h *TSETH) Decode(b []byte) error {
	if len(b) < TSETHLen {
		return truncated("TSETH", 0, TSETHLen, len(b), ReqTSETH1)
	}
	h.decode(b)
	return nil
}

func (h *TSETH) decode(b []byte) {
	h.TxTimestamp = be.Uint16(b)
	h.TSR, h.Rsvd, h.FType = decodeTSWord(be.Uint16(b[2:]))
}

// decodeTSWord splits the tsr(1) reserved(11) ftype(4) word that TSETH,
// PETH and ERTH share.
func decodeTSWord(w uint16) (bool, uint16, uint8) {
	return w&0x8000 != 0, w >> 4 & 0x7FF, uint8(w & 0xF)
}

func tsWord(tsr bool, rsvd uint16, ftype uint8) uint16 {
	return uint16(b2u(tsr))<<15 | (rsvd&0x7FF)<<4 | uint16(ftype&0xF)
}

// Append appends the encoded header to b.
func (h *TSETH) Append(b []byte) []byte {
	w := tsWord(h.TSR, h.Rsvd, h.FType)
	return append(b, byte(h.TxTimestamp>>8), byte(h.TxTimestamp), byte(w>>8), byte(w))
}

// RETH is the RDMA Extended Transport Header, carried by every write packet
// so it can be placed on arrival (WIRE-RETH-1).
type RETH struct {
	VA        uint64
	RKey      uint32
	DMALength uint32 // length of the whole message
}

// Decode reads a RETH from the start of b.
func (h *RETH) Decode(b []byte) error {
	if len(b) < RETHLen {
		return truncated("RETH", 0, RETHLen, len(b), ReqRETH1)
	}
	h.VA, h.RKey, h.DMALength = be.Uint64(b), be.Uint32(b[8:]), be.Uint32(b[12:])
	return nil
}

// Append appends the encoded header to b.
func (h *RETH) Append(b []byte) []byte {
	b = be.AppendUint64(b, h.VA)
	b = be.AppendUint32(b, h.RKey)
	return be.AppendUint32(b, h.DMALength)
}

// AETH is the RoCE ACK extended transport header (WIRE-AETH-1).
type AETH struct {
	Syndrome uint8
	MSN      uint32 // 24 bits
}

// AETH syndrome types (bits 6-5 of the syndrome).
const (
	AETHTypeACK = 0
	AETHTypeRNR = 1
	AETHTypeNAK = 3
	// AETHNoCredit is the credit value of an MRC ACK syndrome (WIRE-AETH-2).
	AETHNoCredit = 0x1F
	// AETHNAKInvalidRequest is the NAK code for an invalid request.
	AETHNAKInvalidRequest = 1
)

// Type returns the syndrome type (ACK, RNR, NAK).
func (h *AETH) Type() uint8 { return h.Syndrome >> 5 & 3 }

// Value returns the low five syndrome bits (credit count or NAK code).
func (h *AETH) Value() uint8 { return h.Syndrome & 0x1F }

// Decode reads an AETH from the start of b.
func (h *AETH) Decode(b []byte) error {
	if len(b) < AETHLen {
		return truncated("AETH", 0, AETHLen, len(b), ReqAETH1)
	}
	h.Syndrome, h.MSN = b[0], u24(b[1:])
	return nil
}

// Append appends the encoded header to b.
func (h *AETH) Append(b []byte) []byte { return app24(append(b, h.Syndrome), h.MSN) }

// CCState is the congestion-control state carried after the SETH (WIRE-SETH-2).
type CCState struct {
	TxTimestamp uint16 // reflected TSETH timestamp
	Rsvd        uint8  // 1 reserved bit
	OOOCount    uint16 // 15 bits
	RC          bool   // restore-cwnd flag
	RcvCwndPen  uint8  // 7 bits, 0-127
	RcvdBytes   uint32 // 24 bits, cumulative, in profile units
}

// decode reads a CC_STATE from b, which holds one whole. The header is
// read as an array, its length checked once; the 24-bit field is a 32-bit
// word's low three bytes.
func (h *CCState) decode(s []byte) {
	b := (*[CCStateLen]byte)(s)
	h.TxTimestamp = be.Uint16(b[:])
	w := be.Uint16(b[2:])
	h.Rsvd, h.OOOCount = uint8(w>>15), w&0x7FFF
	h.RC, h.RcvCwndPen, h.RcvdBytes = b[4]&0x80 != 0, b[4]&0x7F, be.Uint32(b[4:])&0xFFFFFF
}

func (h *CCState) append(b []byte) []byte {
	w := uint16(h.Rsvd&1)<<15 | h.OOOCount&0x7FFF
	b = append(b, byte(h.TxTimestamp>>8), byte(h.TxTimestamp), byte(w>>8), byte(w),
		b2u(h.RC)<<7|h.RcvCwndPen&0x7F)
	return app24(b, h.RcvdBytes)
}

// SETH is the Reliability SACK header; CC is the CC_STATE that follows it
// (WIRE-SETH-1, WIRE-SETH-2).
type SETH struct {
	Type         uint8     // 4 bits
	NextHeader   uint8     // 5 bits
	M            Multipath // 2 bits
	PR           bool
	Rsvd1        uint8 // reserved bits of byte 1 (mask 0x1D)
	AckPSNOffset int16 // PSN that triggered this SACK = CACKPSN + offset
	Entropy      uint32
	SPDCID       uint16
	DPDCID       uint16
	Rsvd2        uint8
	CACKPSN      uint32 // 24 bits: everything before it was received
	CCType       uint8  // 4 bits
	CCFlags      uint8  // 4 bits
	MPR          uint8  // in units of 128 PSNs; 0 unless dynamic MPR
	SACKOffset   int16  // bitmap base = CACKPSN + offset
	SACKBitmap   uint64 // bit i (LSB = 0) is PSN base+i
	CC           CCState
}

// Decode reads a SETH and its CC_STATE from the start of b.
func (h *SETH) Decode(b []byte) error {
	if len(b) < SETHLen+CCStateLen {
		return truncated("SETH", 0, SETHLen+CCStateLen, len(b), ReqSETH1)
	}
	h.decode(b)
	return nil
}

// decode reads a SETH and its CC_STATE from b, which holds both (len(b)
// >= SETHLen+CCStateLen). The headers are read as an array, their length
// checked once; the 24-bit field is a 32-bit word's low three bytes.
func (h *SETH) decode(b []byte) {
	a := (*[SETHLen + CCStateLen]byte)(b)
	b0, b1 := a[0], a[1]
	h.Type, h.NextHeader = b0>>4, (b0&0xF)<<1|b1>>7
	h.M, h.PR, h.Rsvd1 = Multipath(b1>>5&3), b1&0x02 != 0, b1&0x1D
	h.AckPSNOffset = int16(be.Uint16(a[2:]))
	h.Entropy = be.Uint32(a[4:])
	h.SPDCID, h.DPDCID = be.Uint16(a[8:]), be.Uint16(a[10:])
	h.Rsvd2, h.CACKPSN = a[12], be.Uint32(a[12:])&0xFFFFFF
	h.CCType, h.CCFlags, h.MPR = a[16]>>4, a[16]&0xF, a[17]
	h.SACKOffset = int16(be.Uint16(a[18:]))
	h.SACKBitmap = be.Uint64(a[20:])
	h.CC.decode(a[SETHLen:])
}

// Append appends the SETH and CC_STATE to b.
func (h *SETH) Append(b []byte) []byte {
	w := ehdrWord0(h.Type, h.NextHeader) | uint16(h.M&3)<<5 | uint16(b2u(h.PR))<<1 | uint16(h.Rsvd1&0x1D)
	b = append(b, byte(w>>8), byte(w), byte(uint16(h.AckPSNOffset)>>8), byte(h.AckPSNOffset))
	b = be.AppendUint32(b, h.Entropy)
	b = be.AppendUint16(b, h.SPDCID)
	b = be.AppendUint16(b, h.DPDCID)
	b = app24(append(b, h.Rsvd2), h.CACKPSN)
	b = append(b, h.CCType<<4|h.CCFlags&0xF, h.MPR, byte(uint16(h.SACKOffset)>>8), byte(h.SACKOffset))
	b = be.AppendUint64(b, h.SACKBitmap)
	return h.CC.append(b)
}

// AckPSN is the PSN whose arrival triggered this SACK (WIRE-SETH-5).
func (h *SETH) AckPSN() uint32 { return (h.CACKPSN + uint32(int32(h.AckPSNOffset))) & PSNMask }

// BitmapBase is the PSN of bitmap bit 0 (WIRE-SETH-5).
func (h *SETH) BitmapBase() uint32 { return (h.CACKPSN + uint32(int32(h.SACKOffset))) & PSNMask }

// NETH is the Reliability NACK header (WIRE-NETH-1).
type NETH struct {
	Type        uint8
	NextHeader  uint8
	Rsvd1       uint8 // 7 bits
	Reason      NACKReason
	VendorInfo  uint8
	Entropy     uint32
	SPDCID      uint16
	DPDCID      uint16
	Rsvd2       uint8
	NACKPSN     uint32 // 24 bits
	CCType      uint8
	CCFlags     uint8
	Rsvd3       uint8
	TxTimestamp uint16
}

// Decode reads a NETH from the start of b.
func (h *NETH) Decode(b []byte) error {
	if len(b) < NETHLen {
		return truncated("NETH", 0, NETHLen, len(b), ReqNETH1)
	}
	h.decode(b)
	return nil
}

func (h *NETH) decode(b []byte) {
	h.Type, h.NextHeader, h.Rsvd1 = b[0]>>4, (b[0]&0xF)<<1|b[1]>>7, b[1]&0x7F
	h.Reason, h.VendorInfo = NACKReason(b[2]), b[3]
	h.Entropy = be.Uint32(b[4:])
	h.SPDCID, h.DPDCID = be.Uint16(b[8:]), be.Uint16(b[10:])
	h.Rsvd2, h.NACKPSN = b[12], u24(b[13:])
	h.CCType, h.CCFlags, h.Rsvd3 = b[16]>>4, b[16]&0xF, b[17]
	h.TxTimestamp = be.Uint16(b[18:])
}

// Append appends the encoded header to b.
func (h *NETH) Append(b []byte) []byte {
	w := ehdrWord0(h.Type, h.NextHeader) | uint16(h.Rsvd1&0x7F)
	b = append(b, byte(w>>8), byte(w), byte(h.Reason), h.VendorInfo)
	b = be.AppendUint32(b, h.Entropy)
	b = be.AppendUint16(b, h.SPDCID)
	b = be.AppendUint16(b, h.DPDCID)
	b = app24(append(b, h.Rsvd2), h.NACKPSN)
	b = append(b, h.CCType<<4|h.CCFlags&0xF, h.Rsvd3)
	return be.AppendUint16(b, h.TxTimestamp)
}

// PETH is the Reliability Probe request header (WIRE-PETH-1).
type PETH struct {
	Type        uint8
	NextHeader  uint8
	Rsvd1       uint8 // 7 bits
	Rsvd2       uint8
	VendorInfo  uint8
	ProbeID     uint16
	Rsvd3       uint16
	SPDCID      uint16
	DPDCID      uint16
	TxTimestamp uint16
	TSR         bool
	Rsvd4       uint16 // 11 bits
	FType       uint8
}

// Decode reads a PETH from the start of b.
func (h *PETH) Decode(b []byte) error {
	if len(b) < PETHLen {
		return truncated("PETH", 0, PETHLen, len(b), ReqPETH1)
	}
	h.decode(b)
	return nil
}

func (h *PETH) decode(b []byte) {
	h.Type, h.NextHeader, h.Rsvd1 = b[0]>>4, (b[0]&0xF)<<1|b[1]>>7, b[1]&0x7F
	h.Rsvd2, h.VendorInfo = b[2], b[3]
	h.ProbeID, h.Rsvd3 = be.Uint16(b[4:]), be.Uint16(b[6:])
	h.SPDCID, h.DPDCID = be.Uint16(b[8:]), be.Uint16(b[10:])
	h.TxTimestamp = be.Uint16(b[12:])
	h.TSR, h.Rsvd4, h.FType = decodeTSWord(be.Uint16(b[14:]))
}

// Append appends the encoded header to b.
func (h *PETH) Append(b []byte) []byte {
	w := ehdrWord0(h.Type, h.NextHeader) | uint16(h.Rsvd1&0x7F)
	b = append(b, byte(w>>8), byte(w), h.Rsvd2, h.VendorInfo)
	b = be.AppendUint16(b, h.ProbeID)
	b = be.AppendUint16(b, h.Rsvd3)
	b = be.AppendUint16(b, h.SPDCID)
	b = be.AppendUint16(b, h.DPDCID)
	b = be.AppendUint16(b, h.TxTimestamp)
	return be.AppendUint16(b, tsWord(h.TSR, h.Rsvd4, h.FType))
}

// ERTH is the Endpoint Operation request header (WIRE-ERTH-1).
type ERTH struct {
	Type           uint8
	NextHeader     uint8
	Rsvd1          uint8 // 5 bits
	Op             EndpointOp
	Rsvd2          uint8
	VendorInfo     uint8
	PortStatusMask uint32 // bit i-1 = local port i is up
	Rsvd3          uint32
	TxTimestamp    uint16
	TSR            bool
	Rsvd4          uint16 // 11 bits
	FType          uint8
}

// Decode reads an ERTH from the start of b.
func (h *ERTH) Decode(b []byte) error {
	if len(b) < ERTHLen {
		return truncated("ERTH", 0, ERTHLen, len(b), ReqERTH1)
	}
	h.decode(b)
	return nil
}

func (h *ERTH) decode(b []byte) {
	h.Type, h.NextHeader = b[0]>>4, (b[0]&0xF)<<1|b[1]>>7
	h.Rsvd1, h.Op = b[1]>>2&0x1F, EndpointOp(b[1]&3)
	h.Rsvd2, h.VendorInfo = b[2], b[3]
	h.PortStatusMask, h.Rsvd3 = be.Uint32(b[4:]), be.Uint32(b[8:])
	h.TxTimestamp = be.Uint16(b[12:])
	h.TSR, h.Rsvd4, h.FType = decodeTSWord(be.Uint16(b[14:]))
}

// Append appends the encoded header to b.
func (h *ERTH) Append(b []byte) []byte {
	w := ehdrWord0(h.Type, h.NextHeader) | uint16(h.Rsvd1&0x1F)<<2 | uint16(h.Op&3)
	b = append(b, byte(w>>8), byte(w), h.Rsvd2, h.VendorInfo)
	b = be.AppendUint32(b, h.PortStatusMask)
	b = be.AppendUint32(b, h.Rsvd3)
	b = be.AppendUint16(b, h.TxTimestamp)
	return be.AppendUint16(b, tsWord(h.TSR, h.Rsvd4, h.FType))
}

// EETH is the Endpoint Operation response header (WIRE-EETH-1, AMB-16).
type EETH struct {
	Type        uint8
	NextHeader  uint8
	Rsvd1       uint8 // 1 bit
	Op          EndpointOp
	Rsvd2       uint8 // 4 bits
	Rsvd3       uint8
	VendorInfo  uint8
	Rsvd4       [24]byte
	TxTimestamp uint16 // reflected from the request
	Rsvd5       uint16
	Rsvd6       uint32
}

// Decode reads an EETH from the start of b.
func (h *EETH) Decode(b []byte) error {
	if len(b) < EETHLen {
		return truncated("EETH", 0, EETHLen, len(b), ReqEETH1)
	}
	h.decode(b)
	return nil
}

func (h *EETH) decode(b []byte) {
	h.Type, h.NextHeader = b[0]>>4, (b[0]&0xF)<<1|b[1]>>7
	h.Rsvd1, h.Op, h.Rsvd2 = b[1]>>6&1, EndpointOp(b[1]>>4&3), b[1]&0xF
	h.Rsvd3, h.VendorInfo = b[2], b[3]
	copy(h.Rsvd4[:], b[4:28])
	h.TxTimestamp, h.Rsvd5, h.Rsvd6 = be.Uint16(b[28:]), be.Uint16(b[30:]), be.Uint32(b[32:])
}

// Append appends the encoded header to b.
func (h *EETH) Append(b []byte) []byte {
	w := ehdrWord0(h.Type, h.NextHeader) | uint16(h.Rsvd1&1)<<6 | uint16(h.Op&3)<<4 | uint16(h.Rsvd2&0xF)
	b = append(b, byte(w>>8), byte(w), h.Rsvd3, h.VendorInfo)
	b = append(b, h.Rsvd4[:]...)
	b = be.AppendUint16(b, h.TxTimestamp)
	b = be.AppendUint16(b, h.Rsvd5)
	return be.AppendUint32(b, h.Rsvd6)
}
