package statemachine

// Tests written against mutants scripts/mutate.sh found alive in
// window.go.

import (
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestMutantRingSize (RSP-RCV-4, MPR-WIN-1): the per-PSN rings hold the
// window and no more, in a power of two of at least 64 slots, so that a
// QP's memory is set by its MPR and nothing else.
func TestMutantRingSize(t *testing.T) {
	for w, want := range map[uint32]uint32{1: 64, 64: 64, 65: 128, 128: 128, 129: 256, 255 * 128: 32768} {
		if got := ringSize(w); got != want {
			t.Errorf("ringSize(%d) = %d, want %d", w, got, want)
		}
		tx, rx := newTxRing(w), newRxRing(w)
		if tx.size() != want || len(tx.sentAt) != int(want) || len(tx.ev) != int(want) || len(tx.fl) != int(want) ||
			len(tx.sacked) != int(want/64) {
			t.Errorf("window %d: tx ring of %d slots, %d/%d/%d/%d entries", w, tx.size(), len(tx.sentAt), len(tx.ev), len(tx.fl), len(tx.sacked))
		}
		if rx.mask != want-1 || len(rx.rcv) != int(want/64) || len(rx.last) != int(want/64) || len(rx.areq) != int(want/64) {
			t.Errorf("window %d: rx ring mask %d, %d/%d/%d words", w, rx.mask, len(rx.rcv), len(rx.last), len(rx.areq))
		}
	}
}

// TestMutantSmallWindowBitmap (RSP-SACK-2, WIRE-SETH-6): with a window
// smaller than the 64-bit bitmap (MPR unit 8), the SACK still reports
// every PSN held in it.
func TestMutantSmallWindowBitmap(t *testing.T) {
	o := newOne(t, func(c *testCfg, a *Attr) { c.Test.MPRUnit = 8 }) // W = 8
	o.recv(1, dataPkt(2, wire.OpWriteMiddle, 1024, 0x100))
	o.recv(1, dataPkt(5, wire.OpWriteMiddle, 1024, 0x100))
	ps := o.take()
	if len(ps) != 2 || ps[1].SETH.BitmapBase() != 0 || ps[1].SETH.SACKBitmap != 1<<2|1<<5 {
		t.Errorf("replies %+v, want the second SACK's bitmap at 0 with PSNs 2 and 5", replies(ps))
	}
}
