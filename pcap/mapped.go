package pcap

import (
	"io"
	"runtime/debug"
	"sync"
	"unsafe"
)

// dropStep is how far a Reader reads a mapped file past the pages it
// dropped last before it drops those behind it again: each drop is a
// system call, and each dropped page touched again a fault. Tests shrink
// it.
var dropStep = 2 << 20

// dropAlign aligns the pages dropped: a multiple of every page size.
const dropAlign = 64 << 10

// mappings holds the address ranges of the files OpenMapped mapped that
// are open, for FaultError.
var mappings struct {
	sync.Mutex
	live map[uintptr]int // start address -> length
}

// mapIn maps the Reader's file unless it is gzip-compressed (read as a
// stream), with the file positioned after the mapping, where reading
// goes on should the file grow.
func (r *Reader) mapIn() {
	m := mapFile(r.file, r.size)
	if m == nil {
		return
	}
	if m[0] == 0x1f && len(m) > 1 && m[1] == 0x8b {
		unmapFile(m)
		return
	}
	if _, err := r.file.Seek(int64(len(m)), io.SeekStart); err != nil {
		unmapFile(m)
		return
	}
	r.mapped, r.inMap, r.buf, r.r, r.w = m, true, m, 0, len(m)
	mappings.Lock()
	if mappings.live == nil {
		mappings.live = map[uintptr]int{}
	}
	mappings.live[uintptr(unsafe.Pointer(unsafe.SliceData(m)))] = len(m)
	mappings.Unlock()
}

// unmap undoes mapIn.
func (r *Reader) unmap() {
	if r.mapped == nil {
		return
	}
	mappings.Lock()
	delete(mappings.live, uintptr(unsafe.Pointer(unsafe.SliceData(r.mapped))))
	mappings.Unlock()
	unmapFile(r.mapped)
	r.mapped, r.inMap = nil, false
}

// drop drops the mapping's pages before off, once they are dropStep
// bytes past those dropped last.
func (r *Reader) drop(off int64) {
	end := int(min(off, int64(len(r.mapped)))) &^ (dropAlign - 1)
	if end-r.dropped < dropStep {
		return
	}
	dropPages(r.mapped[r.dropped:end])
	r.dropped = end
}

// prefetchLen is how much of a mapped file after a frame the CPU is
// asked to fetch while the frame is judged: the next frame, up to 4 KiB.
// Mapped, the file is read from memory where the frames are used, not by
// a copy that streams it through the caches beforehand, and a frame's
// first touches otherwise wait for memory: the judge took 5-10 % less
// CPU with it (BenchmarkJudge).
const prefetchLen = 4 << 10

// ahead is Next's step after a frame of a mapped file: it asks the CPU
// to fetch what follows, and drops the pages behind a Reader that
// retains nothing.
func (r *Reader) ahead() {
	// Each byte once: the last call asked for some of it.
	if lo, hi := max(r.r, r.fetched), min(r.r+prefetchLen, r.w); lo < hi {
		prefetch(&r.buf[lo], hi-lo)
		r.fetched = hi
	}
	if !r.retain && r.r-r.dropped >= dropStep {
		r.drop(int64(r.r))
	}
}

// carryMapped moves the partial block at the end of the mapping, which
// is read-only, to a chunk, where reading the file goes on.
func (r *Reader) carryMapped() error {
	b, err := r.take(max(chunkSize, r.w-r.r))
	if err != nil {
		return err
	}
	n := copy(b, r.buf[r.r:r.w])
	r.buf, r.inMap, r.base, r.r, r.w = b, false, r.base+int64(r.r), 0, n
	return nil
}

// seekMapped is Seek to a place in the mapping.
func (r *Reader) seekMapped(m Mark) bool {
	if _, err := r.file.Seek(int64(len(r.mapped)), io.SeekStart); err != nil {
		return false
	}
	r.retire()
	r.buf, r.inMap, r.base, r.r, r.w = r.mapped, true, 0, int(m.off), len(r.mapped)
	r.srcErr, r.frameNo = nil, m.frames
	r.dropped = min(r.dropped, int(m.off)&^(dropAlign-1))
	r.fetched = 0
	return true
}

// cutShort returns err, an error reading a mapped file, or, when the
// file is shorter than its mapping, ErrFileChanged: the bytes past the
// file's new end in its last page read as zeros, so a file cut short
// also shows as a malformed block.
func (r *Reader) cutShort(err error) error {
	if st, serr := r.file.Stat(); serr == nil && st.Size() < int64(len(r.mapped)) {
		return &FormatError{Offset: st.Size(), Msg: "mapped file cut short", Err: ErrFileChanged}
	}
	return err
}

// Guard runs read, which touches the frames of capture files OpenMapped
// mapped and that stay open meanwhile, with faults turned into panics in
// the calling goroutine (debug.SetPanicOnFault), and returns read's
// error or, when it touched a file cut short, the fault's (FaultError).
// Any other panic goes on.
func Guard(read func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if err = FaultError(v); err == nil {
				panic(v)
			}
		}
	}()
	return read()
}

// FaultError returns the error of v, a value recovered from a panic, when
// it is the fault of touching a mapped capture file (OpenMapped) that
// was cut short while open: a *FormatError whose Err is ErrFileChanged
// and whose Offset is where the file was touched. It returns nil for any
// other value.
func FaultError(v any) error {
	f, ok := v.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	a := f.Addr()
	mappings.Lock()
	defer mappings.Unlock()
	for start, n := range mappings.live {
		if a >= start && a-start < uintptr(n) {
			return &FormatError{Offset: int64(a - start), Msg: "mapped file cut short", Err: ErrFileChanged}
		}
	}
	return nil
}
