package pcap

import (
	"time"
	"unsafe"

	"github.com/openmrc/mrc/wire"
)

// DefaultKeysErr exposes, to tests, whether the field keys the printers
// interpret could be found in wire.Default's header descriptions.
func DefaultKeysErr() error { _, err := defaultKeys(); return err }

// SetChunkSize sets the size of the chunks Readers read into and returns
// a function that restores it.
func SetChunkSize(n int) (restore func()) {
	old := chunkSize
	chunkSize = n
	return func() { chunkSize = old }
}

// Chunks returns how many chunks a Reader keeps for retained frames, and
// the bytes of all its chunks.
func (r *Reader) Chunks() (used, total int) { return len(r.used), r.total }

// MarkOffset returns the file offset of m.
func MarkOffset(m Mark) int64 { return m.off }

// Timestamp converts ticks as an interface with the given if_tsresol
// value (10^-v, or 2^-(v&0x7f) when v&0x80) does.
func Timestamp(tsresol uint8, ticks uint64) time.Time {
	in := Interface{tsUnits: 1e6}
	if tsresol&0x80 != 0 {
		in.tsPow2, in.tsShift = true, tsresol&0x7F
	} else {
		in.tsUnits = pow10(tsresol)
	}
	return (&Reader{}).ts(&in, ticks)
}

// PooledChunks returns how many pooled chunks a Reader holds, and how
// many the pool has free.
func (r *Reader) PooledChunks() (held, free int) {
	pool.Lock()
	defer pool.Unlock()
	if r.chunks == nil {
		return 0, len(pool.free)
	}
	return len(r.chunks.held), len(pool.free)
}

// NewFitEager is NewFit with the other presets' codecs made at once, as
// NewFit made them before they were made on first use.
func NewFitEager(sel *wire.Codec, mode wire.EVMode) *Fit {
	f := NewFit(sel, mode)
	f.makeAlts()
	return f
}

// AddSelected feeds r as AdviseFile's first pass does: counted under the
// selected profile and matched for echoes, never compared under the other
// presets.
func (f *Fit) AddSelected(r *Record) {
	if f.addSelected(r) {
		f.addEcho(r)
	}
}

// AltsMade reports whether f made the other presets' codecs.
func (f *Fit) AltsMade() bool { return f.altsOK }

// SetDropStep sets how far a Reader reads a mapped file between drops of
// the pages behind it, and returns a function that restores it.
func SetDropStep(n int) (restore func()) {
	old := dropStep
	dropStep = n
	return func() { dropStep = old }
}

// Mapping returns the address and length of the file r mapped (0, 0
// when r maps none).
func (r *Reader) Mapping() (uintptr, int) {
	if r.mapped == nil {
		return 0, 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(r.mapped))), len(r.mapped)
}

// ReadFileFit reads the capture name as AdviseFile does, under the
// default codec, handing each record to add.
func ReadFileFit(name string, add func(*Record) bool) error {
	f := NewFit(wire.Default, wire.EVModeSTEV)
	return f.readFile(name, wire.Default, wire.EVModeSTEV, add)
}
