package conformance

import (
	"hash/maphash"
	"unsafe"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// payloadID pins the payload of a PSN's first whole copy, so that a resend
// can be checked to repeat it (REQ-PSN-2) without hashing every write's
// payload: the copy's ICRC, already verified, covers its payload and pad
// bytes; with the copy's header bytes from the inner IP header to the
// payload, kept here, the ICRC a resend's payload would give under the
// original headers is computed when a resend comes (samePayload), and
// equals the original's exactly when the payloads and pads agree, but
// for a CRC-32 collision (never for a difference within 32 consecutive
// bits). A copy whose headers do not fit in hdr, or whose payload is
// empty, is pinned by a hash of its payload instead.
type payloadID struct {
	ok     bool   // a whole copy was seen
	n      int    // its payload length
	icrc   uint32 // its ICRC
	hdrLen uint8  // bytes of hdr held; 0: hash holds the payload's hash
	hdr    [maxIDHeader]byte
	hash   uint64
}

// maxIDHeader bounds the header bytes a payloadID keeps: an IPv6 header,
// UDP, the BTH and a write's extension headers fit.
const maxIDHeader = 104

// fpSeed seeds the payload hashes; they are compared within one run only.
var fpSeed = maphash.MakeSeed()

// payloadStart returns the offset of p's payload in the frame data it was
// decoded from (bth: the BTH's offset), or -1 when it has none there.
func payloadStart(data []byte, p *wire.Packet, bth int) int {
	if len(p.Payload) == 0 {
		return -1
	}
	// The payload is a slice of data: the distance between their first
	// bytes' addresses is the offset, checked by its address.
	d := uintptr(unsafe.Pointer(unsafe.SliceData(p.Payload))) - uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	if i := int(d); d < uintptr(len(data)) && i >= bth+wire.BTHLen && i <= bth+wire.BTHLen+maxIDHeader && &data[i] == &p.Payload[0] {
		return i
	}
	for i := bth + wire.BTHLen; i < len(data) && i <= bth+wire.BTHLen+maxIDHeader; i++ {
		if &data[i] == &p.Payload[0] {
			return i
		}
	}
	return -1
}

// keep pins the payload of r, a whole (untrimmed) write whose ICRC is good.
func (id *payloadID) keep(r *pcap.Record) {
	p := &r.Packet
	id.ok, id.n, id.icrc, id.hdrLen = true, len(p.Payload), p.ICRC, 0
	ip, _, bth := p.Offsets()
	if s := payloadStart(r.Data, p, bth); s >= 0 && s-ip <= maxIDHeader {
		id.hdrLen = uint8(copy(id.hdr[:], r.Data[ip:s]))
		return
	}
	id.hash = maphash.Bytes(fpSeed, p.Payload)
}

// samePayload reports whether r, a whole resend with a good ICRC, carries
// the payload id pins: it rebuilds r with the original's header bytes in
// place of its own (e.scratch) and compares that frame's ICRC with the
// original's.
func (e *engine) samePayload(id *payloadID, r *pcap.Record) bool {
	p := &r.Packet
	if len(p.Payload) != id.n {
		return false
	}
	if id.hdrLen == 0 {
		return maphash.Bytes(fpSeed, p.Payload) == id.hash
	}
	ip, _, bth := p.Offsets()
	s := payloadStart(r.Data, p, bth)
	if s < 0 {
		return false
	}
	b := append(e.scratch[:0], r.Data[:ip]...)
	b = append(b, id.hdr[:id.hdrLen]...)
	b = append(b, r.Data[s:]...)
	e.scratch = b
	q := &e.scratchPkt
	if e.codec.DecodeInto(b, q, &e.scratchErr) != nil || q.Trimmed || len(q.Payload) != id.n {
		return false
	}
	return e.codec.ComputeICRC(b, q) == id.icrc
}
