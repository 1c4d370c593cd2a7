package wire

// MaxCutLen bounds the original length of a frame DecodeCut rebuilds: an
// IP datagram's largest (65535 bytes) behind Ethernet, a VLAN tag and an
// SRv6 outer header with its SRH.
const MaxCutLen = 65535 + 18 + 40 + 8 + 16*MaxSRHSegments

// DecodeCut decodes b, the first bytes of a frame of length bytes that a
// capture's snap length cut (length > len(b)), from its headers: when
// every header up to the last transport header is in b, it returns the
// frame rebuilt to its length in *buf (b, then zeros) and decodes it, so
// that every length field holds and the payload has its length; its
// payload, pad and ICRC past the cut are not the frame's, and no caller
// may judge them. A rebuilt frame that does not decode, with the same
// error whatever the bytes past the cut (zeros, or all ones), breaks a
// rule in the bytes b keeps: DecodeCut returns that error, with the frame
// rebuilt. Otherwise, and for a frame that was not cut or is longer than
// MaxCutLen, it decodes b itself, as DecodeInto (a cut header is then a
// truncated error). *buf grows to at most MaxCutLen.
func (c *Codec) DecodeCut(b []byte, length int, buf *[]byte, p *Packet, e *Error) ([]byte, bool, error) {
	if length <= len(b) || length > MaxCutLen {
		return b, false, c.DecodeInto(b, p, e)
	}
	if cap(*buf) < length {
		*buf = make([]byte, length, MaxCutLen)
	}
	r := (*buf)[:length]
	clear(r[copy(r, b):])
	err := c.DecodeInto(r, p, e)
	switch {
	case err == nil && p.hdrEnd <= len(b):
		return r, true, nil
	case err != nil && c.keptError(r, len(b), e):
		return r, true, err
	}
	return b, false, c.DecodeInto(b, p, e)
}

// keptError reports whether r, a frame rebuilt from its first kept bytes
// and zeros, fails to decode as it does (*e) with ones in place of the
// zeros: its error is then in the bytes kept. r is zeros again after.
func (c *Codec) keptError(r []byte, kept int, e *Error) bool {
	rest := r[kept:]
	for i := range rest {
		rest[i] = 0xFF
	}
	var q Packet
	var f Error
	err := c.DecodeInto(r, &q, &f)
	clear(rest)
	return err != nil && f == *e
}
