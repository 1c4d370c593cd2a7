package statemachine

import "math/bits"

// Per-PSN requester flags.
const (
	txInFlight uint8 = 1 << iota // a transmission is outstanding and counts against cwnd
	txSACKed                     // selectively acknowledged
	txLost                       // queued for retransmission
	txRetx                       // retransmitted at least once
	txHold                       // lost, held back until sentAt (resource NACK, LR-NACK-2)
	txFree                       // lost, and its stall timer expired: it may go on the EV it avoided (LR-SM-3, AMB-44)
)

// txRing is the requester's per-PSN state for the PSNs between the
// cumulative ACK and the next PSN to send, in a ring indexed by the low PSN
// bits. Its size is a power of two that divides 2^24, so the index stays
// right across PSN wraparound (WIRE-BTH-4, RSP-RCV-5). It is sized once, at
// RTS, from the MPR window: its memory does not depend on anything a peer
// sends.
type txRing struct {
	mask   uint32
	sentAt []Time   // last transmission; for a held PSN, when it may go again
	ev     []uint16 // EV index of the last transmission (or the EV to avoid) | timer exponent << 11
	fl     []uint8
	// sacked mirrors fl's txSACKed bits, one bit per slot, so that a SACK
	// bitmap is merged a word at a time: under loss every SACK after a
	// hole repeats up to 64 PSNs already SACKed (LR-SACK-2).
	sacked []uint64
}

func ringSize(n uint32) uint32 {
	if n <= 64 {
		return 64
	}
	return 1 << bits.Len32(n-1)
}

func newTxRing(window uint32) txRing {
	n := ringSize(window)
	return txRing{mask: n - 1, sentAt: make([]Time, n), ev: make([]uint16, n), fl: make([]uint8, n), sacked: make([]uint64, n/64)}
}

func (r *txRing) clone() txRing {
	return txRing{mask: r.mask, sentAt: append([]Time(nil), r.sentAt...),
		ev: append([]uint16(nil), r.ev...), fl: append([]uint8(nil), r.fl...), sacked: append([]uint64(nil), r.sacked...)}
}

// setFlags sets slot i's flags to f, keeping sacked in step.
func (r *txRing) setFlags(i uint32, f uint8) {
	r.fl[i] = f
	b := uint64(1) << (i & 63)
	if f&txSACKed != 0 {
		r.sacked[i>>6] |= b
	} else {
		r.sacked[i>>6] &^= b
	}
}

// sacked64 returns the SACKed bits of the 64 slots from the one of psn,
// bit k for psn+k.
func (r *txRing) sacked64(psn uint32) uint64 { return bits64At(r.sacked, psn&r.mask) }

// bits64At returns the 64 bits of a ring bitset (at least one word) from
// bit i on, wrapping around its end.
func bits64At(words []uint64, i uint32) uint64 {
	w, off := i>>6, i&63
	v := words[w] >> off
	if off != 0 {
		v |= words[(int(w)+1)%len(words)] << (64 - off)
	}
	return v
}

func (r *txRing) size() uint32 { return r.mask + 1 }

// rxRing is the responder's PSN tracking bitmap over its MPR window
// (RSP-RCV-4): bit set = PSN received. Two more bitmaps mark the PSNs that
// end a message (to count complete messages, RSP-ACK-1) and that carried
// ack_req (to send the transport ACK when cack passes them).
type rxRing struct {
	mask uint32
	rcv  []uint64
	last []uint64
	areq []uint64
}

func newRxRing(window uint32) rxRing {
	n := ringSize(window)
	return rxRing{mask: n - 1, rcv: make([]uint64, n/64), last: make([]uint64, n/64), areq: make([]uint64, n/64)}
}

func (r *rxRing) clone() rxRing {
	return rxRing{mask: r.mask, rcv: append([]uint64(nil), r.rcv...), last: append([]uint64(nil), r.last...),
		areq: append([]uint64(nil), r.areq...)}
}

func (r *rxRing) get(psn uint32) bool {
	i := psn & r.mask
	return r.rcv[i>>6]&(1<<(i&63)) != 0
}

func (r *rxRing) set(psn uint32, last, areq bool) {
	i := psn & r.mask
	b := uint64(1) << (i & 63)
	r.rcv[i>>6] |= b
	if last {
		r.last[i>>6] |= b
	}
	if areq {
		r.areq[i>>6] |= b
	}
}

// clear resets psn's bits and reports whether it ended a message and
// whether it carried ack_req.
func (r *rxRing) clear(psn uint32) (last, areq bool) {
	i := psn & r.mask
	b := uint64(1) << (i & 63)
	last, areq = r.last[i>>6]&b != 0, r.areq[i>>6]&b != 0
	r.rcv[i>>6] &^= b
	r.last[i>>6] &^= b
	r.areq[i>>6] &^= b
	return last, areq
}

// bits64 returns the received bits of the 64 PSNs from base, bit k for
// base+k. PSNs at or beyond limit (distance from base) read as 0.
func (r *rxRing) bits64(base uint32, limit int) uint64 {
	if limit <= 0 {
		return 0
	}
	v := bits64At(r.rcv, base&r.mask)
	if limit < 64 {
		v &= 1<<limit - 1
	}
	return v
}
