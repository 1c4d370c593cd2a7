package pcap

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"time"
)

// FileFormat is a capture file format.
type FileFormat uint8

// Capture file formats.
const (
	FormatPcap   FileFormat = iota + 1 // libpcap, microsecond or nanosecond timestamps
	FormatPcapNG                       // pcapng
)

func (f FileFormat) String() string {
	switch f {
	case FormatPcap:
		return "pcap"
	case FormatPcapNG:
		return "pcapng"
	}
	return "FileFormat(" + strconv.Itoa(int(f)) + ")"
}

// MaxBlockLen bounds a pcapng block or pcap record (header, packet and
// options). A length field larger than this is a format error rather than
// an allocation: the buffer only grows as bytes actually arrive, and never
// beyond this. 4 MiB is far above any snap length in use (262144).
const MaxBlockLen = 4 << 20

// ErrUnknownFormat is returned by NewReader when the input starts with
// neither a pcap, a pcapng nor a gzip magic number.
var ErrUnknownFormat = errors.New("pcap: not a pcap, pcapng or gzip file")

// ErrFileChanged is the cause (FormatError.Err) when a capture file Open
// opened ends before the size it had when it was opened: it was cut short
// while it was read.
var ErrFileChanged = errors.New("pcap: the file changed while it was read (truncated?)")

// MaxRetained bounds the memory a Reader reads frames into: the chunk it
// reads into, the chunks holding frames a retaining Reader keeps valid
// (Retain) until Release, and the released chunks it reuses. Reading on
// when the frames kept hold it all returns ErrRetainLimit.
const MaxRetained = 32 << 20

// ErrRetainLimit is Next's error when the chunks a retaining Reader
// keeps, and the next block, would take more than MaxRetained bytes: the
// caller holds frames from too far back. After a Release the same call
// to Next can be made again.
var ErrRetainLimit = errors.New("pcap: more than MaxRetained bytes of frames retained (call Release)")

// errIsDir is Open's error for a directory (a read would say less).
var errIsDir = errors.New("is a directory, not a capture file")

// FormatError reports a malformed capture file: where, and what.
type FormatError struct {
	Offset int64 // byte offset in the (decompressed) file of the bad block
	Msg    string
	Err    error // underlying cause, e.g. io.ErrUnexpectedEOF; may be nil
}

func (e *FormatError) Error() string {
	s := "pcap: offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *FormatError) Unwrap() error { return e.Err }

// Interface is a capture interface: a pcapng Interface Description Block,
// or the single implicit interface of a pcap file. MRC captures use one
// interface per fabric plane and capture point, named Point+"/plane"+N
// (see InterfaceName), so the plane of every packet is in the file.
type Interface struct {
	Name        string // if_name
	Description string // if_description
	LinkType    LinkType
	SnapLen     uint32 // 0: unlimited
	// Point and Plane are parsed from Name when it has the form
	// "<point>/plane<N>"; otherwise Point is Name and Plane is -1.
	Point string
	Plane int
	// Dropped is how many frames the capture lost on the interface, as its
	// last interface statistics block counted them (isb_ifdrop and
	// isb_osdrop): frames the file does not hold. Known says such a block
	// gave a count (0 included); it comes at the end of a capture, so
	// both hold once the frames before it are read.
	Dropped uint64
	Known   bool

	tsUnits  uint64 // timestamp ticks per second when a power of ten
	tsShift  uint8  // or 2^-tsShift seconds per tick when tsPow2
	tsPow2   bool
	tsOffset int64 // seconds added to every timestamp (if_tsoffset)
}

// InterfaceName returns the interface name for a capture point and plane,
// "<point>/plane<N>"; ParseInterfaceName is its inverse.
func InterfaceName(point string, plane int) string {
	return point + "/plane" + strconv.Itoa(plane)
}

// ParseInterfaceName splits a name made by InterfaceName. For any other
// name it returns the name and plane -1.
func ParseInterfaceName(name string) (point string, plane int) {
	i := strings.LastIndex(name, "/plane")
	if i < 0 {
		return name, -1
	}
	n, err := strconv.Atoi(name[i+len("/plane"):])
	if err != nil || n < 0 || strings.HasPrefix(name[i+len("/plane"):], "+") {
		return name, -1
	}
	return name[:i], n
}

// Frame is one captured packet. The Reader fills it without allocating:
// Data and Comments alias the Reader's buffer and are valid only until the
// next call to Next.
type Frame struct {
	Number    int // 1-based position in the file
	Timestamp time.Time
	Interface int // pcapng interface ID; 0 in pcap files
	Length    int // original length on the wire (≥ len(Data) when snapped)
	Data      []byte
	// Comments are the packet's opt_comment options (pcapng only), where
	// tools record verdicts.
	Comments [][]byte
	// Offset is the byte offset in the (decompressed) file of the block
	// or record that holds the frame (Reader.Release takes it).
	Offset int64
}

// Reader reads pcap and pcapng files, gzip-compressed or not, one frame at
// a time in bounded memory: it reads the input a chunk (chunkSize bytes)
// at a time into a buffer it reuses, and a block is always whole in one
// chunk (one that ends in the middle of a block is carried to the front
// of the next). Frames alias the chunk. A capture file Open opens can
// also keep its frames valid for longer (Retain) and go back to a place
// (Mark, Seek).
type Reader struct {
	src    io.Reader
	closer io.Closer
	format FileFormat
	// file is the capture file when Open opened one that is not gzip:
	// Seek repositions it, and Retain keeps frames. size is its size when
	// it was opened: a read ending before it is ErrFileChanged.
	file *os.File
	size int64

	buf    []byte // the current chunk
	r, w   int    // unread window buf[r:w]
	base   int64  // file offset of buf[0]
	srcErr error  // sticky error from src (io.EOF at end)

	big bool // byte order of the pcap file / current pcapng section

	// pcap
	nanos    bool
	snapLen  uint32
	ifaces   []Interface
	comments [][]byte
	frameNo  int
	section  int // section headers read
	// past holds the interfaces of the sections before the current one,
	// in file order, up to MaxPastInterfaces (PastInterfaces).
	past []Interface

	// retain is set by Retain: a chunk the Reader has read past goes to
	// used, where its frames stay valid until Release passes its end;
	// otherwise it is reused at once. free holds the chunks released, for
	// reuse; total counts the bytes of every chunk (buf, used and free),
	// at most MaxRetained.
	retain bool
	used   []chunk
	free   [][]byte
	total  int
	// chunks holds the pooled chunks of a Reader Open made (chunkpool.go),
	// which Close gives back; nil: chunks come from the Go heap.
	chunks *chunkSet
	// mapped is the file OpenMapped mapped, as long as it was when
	// opened; inMap tells that buf is mapped (base 0) rather than a
	// chunk. The mapping's pages below dropped are dropped (drop), and
	// the CPU was asked to fetch it up to fetched (ahead).
	mapped           []byte
	inMap            bool
	dropped, fetched int
}

// A chunk holds frames a retaining Reader keeps valid: every block in it
// starts before end, its file offset up to which it was read.
type chunk struct {
	buf []byte
	end int64
}

// chunkSize is the size of the chunks a Reader reads into (a chunk grows
// beyond it, up to MaxBlockLen, only to hold a larger block); tests shrink
// it so that small inputs cross chunks. The judge and decode took 5 to
// 10 % less CPU than with 1 MiB chunks.
var chunkSize = 256 << 10

// Open opens a capture file by name ("-" is standard input). Close the
// Reader to close the file.
func Open(name string) (*Reader, error) { return open(name, false) }

// OpenMapped opens a capture file as Open does, but maps a regular file
// that is not gzip-compressed into memory rather than reading it, where
// the system can: its frames alias the page cache rather than being
// copied out of it, which takes less CPU (BenchmarkReadFile). What the
// file grows by after it is opened is read as Open reads it. A Reader
// keeps at most about dropStep bytes of the mapping behind where it
// reads, or behind what it was last told to Release, in the process's
// memory. A mapped Reader retains frames beyond MaxRetained: they hold
// no memory of the process's own.
//
// A file cut short while mapped faults where a frame past its new end is
// touched, and the rest of its last page reads as zeros, which may make
// frames before Next notices the cut (ErrFileChanged). A program that
// must survive that calls debug.SetPanicOnFault(true) in every goroutine
// that touches the frames, and turns the panic it recovers into an error
// with FaultError.
func OpenMapped(name string) (*Reader, error) { return open(name, true) }

func open(name string, mapped bool) (*Reader, error) {
	if name == "-" {
		return NewReader(os.Stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err // an *fs.PathError: it names the file
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errIsDir}
	}
	rd := &Reader{src: f, chunks: &chunkSet{}}
	if err == nil && st.Mode().IsRegular() {
		rd.file, rd.size = f, st.Size()
		if mapped {
			rd.mapIn()
		}
	}
	r, err := rd.start()
	if err != nil {
		rd.chunks.putAll()
		rd.unmap()
		f.Close()
		if _, named := errors.AsType[*fs.PathError](err); named {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.closer = f
	return r, nil
}

// NewReader sniffs the format of r (pcap in either byte order and
// timestamp precision, pcapng, or either of them gzip-compressed) and
// reads the file header.
func NewReader(r io.Reader) (*Reader, error) {
	return (&Reader{src: r}).start()
}

// start sniffs the format and reads the file header.
func (rd *Reader) start() (*Reader, error) {
	r := rd.src
	if err := rd.fill(4); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, ErrUnknownFormat
		}
		return nil, err
	}
	if rd.buf[rd.r] == 0x1f && rd.buf[rd.r+1] == 0x8b {
		// gzip: restart on the decompressed stream. The bytes already
		// read are replayed in front of the rest of r.
		pre := append([]byte(nil), rd.buf[rd.r:rd.w]...)
		gz, err := gzip.NewReader(io.MultiReader(bytes.NewReader(pre), r))
		if err != nil {
			return nil, &FormatError{Offset: 0, Msg: "bad gzip header", Err: err}
		}
		rd.src, rd.r, rd.w, rd.srcErr = gz, 0, 0, nil
		rd.file, rd.size = nil, 0 // offsets are in the decompressed stream
		if err := rd.fill(4); err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return nil, ErrUnknownFormat
			}
			return nil, &FormatError{Offset: 0, Msg: "corrupt gzip stream", Err: err}
		}
	}
	magic := rd.buf[rd.r : rd.r+4]
	switch {
	case bytes.Equal(magic, []byte{0x0a, 0x0d, 0x0d, 0x0a}):
		rd.format = FormatPcapNG
		// The first block must be a section header; Next reads it.
		return rd, nil
	case bytes.Equal(magic, []byte{0xd4, 0xc3, 0xb2, 0xa1}):
		rd.format = FormatPcap
	case bytes.Equal(magic, []byte{0xa1, 0xb2, 0xc3, 0xd4}):
		rd.format, rd.big = FormatPcap, true
	case bytes.Equal(magic, []byte{0x4d, 0x3c, 0xb2, 0xa1}):
		rd.format, rd.nanos = FormatPcap, true
	case bytes.Equal(magic, []byte{0xa1, 0xb2, 0x3c, 0x4d}):
		rd.format, rd.nanos, rd.big = FormatPcap, true, true
	default:
		return nil, fmt.Errorf("%w (magic % x)", ErrUnknownFormat, magic)
	}
	if err := rd.fill(24); err != nil {
		return nil, rd.ferr(0, "truncated pcap file header", err)
	}
	h := rd.buf[rd.r:]
	if v := rd.u16(h[4:]); v != 2 {
		return nil, rd.ferr(0, "pcap major version "+strconv.Itoa(int(v))+", want 2", nil)
	}
	rd.snapLen = rd.u32(h[16:])
	lt := rd.u32(h[20:])
	point, plane := ParseInterfaceName("")
	rd.ifaces = []Interface{{LinkType: LinkType(lt & 0xFFFF), SnapLen: rd.snapLen,
		Point: point, Plane: plane}}
	rd.r += 24
	return rd, nil
}

// Format returns the file format (after decompression).
func (r *Reader) Format() FileFormat { return r.format }

// Interfaces returns the interfaces declared so far in the current
// section. A pcapng file may declare more as it goes; a pcap file has one.
// The result is shared: do not modify it.
func (r *Reader) Interfaces() []Interface { return r.ifaces }

// MaxPastInterfaces bounds the interfaces of ended sections a Reader
// keeps (PastInterfaces): a file of many sections keeps the first ones'.
const MaxPastInterfaces = 1024

// PastInterfaces returns the interfaces the sections before the current
// one declared, section after section, in the order each declared them
// (Wireshark's frame.interface_id numbering: the current section's
// interface i is number len(PastInterfaces())+i when none was left out),
// each with the statistics its section gave it (Dropped, Known), up to
// MaxPastInterfaces. The result is shared: do not modify it.
func (r *Reader) PastInterfaces() []Interface { return r.past }

// Section counts the pcapng section headers read so far (0 for pcap): a
// new section declares its interfaces afresh, and Interface's pointers
// then show the new section's.
func (r *Reader) Section() int { return r.section }

// Interface returns interface i of the current section, or nil.
func (r *Reader) Interface(i int) *Interface {
	if i < 0 || i >= len(r.ifaces) {
		return nil
	}
	return &r.ifaces[i]
}

// LinkType returns the link type of the capture's first interface. A
// pcapng file declares its interfaces in blocks that the first read
// reaches, so before it LinkType is 0.
func (r *Reader) LinkType() LinkType {
	if len(r.ifaces) == 0 {
		return 0
	}
	return r.ifaces[0].LinkType
}

// Close closes the file if the Reader was made by Open or OpenMapped, and
// drops the Reader's chunks and mapping: the frames it read are no longer
// valid after it.
func (r *Reader) Close() error {
	r.buf, r.r, r.w, r.used, r.free, r.total = nil, 0, 0, nil, nil, 0
	r.chunks.putAll()
	r.unmap()
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return c.Close()
	}
	return nil
}

// Retain asks that the frames Next returns stay valid after the next call
// to Next, until Release passes their Offset or the Reader is closed, and
// reports whether they do: true for a capture file Open opened, false for
// a stream (a gzip-compressed file, standard input, a Reader made by
// NewReader), whose frame data the caller must copy to keep. A retaining
// Reader reuses memory only through Release, and holds at most
// MaxRetained bytes (ErrRetainLimit).
func (r *Reader) Retain() bool {
	r.retain = r.file != nil
	return r.retain
}

// A Mark is a place in a capture file: where the Reader's next frame
// starts (Reader.Mark), to come back to with Seek.
type Mark struct {
	off             int64
	frames          int // frames read before it
	section, ifaces int
}

// Frames returns the number of frames before the mark: the next frame
// read there is numbered Frames()+1.
func (m Mark) Frames() int { return m.frames }

// Mark returns the place of the frame Next reads next.
func (r *Reader) Mark() Mark {
	return Mark{off: r.base + int64(r.r), frames: r.frameNo, section: r.section, ifaces: len(r.ifaces)}
}

// Seek moves a Reader over a capture file Open opened to m, a Mark of
// this Reader or of another over the same file, and reports whether it
// did: it does not for a stream, nor when the Reader is in another section
// than m, or has not read the interfaces declared before m (read a frame
// of the section first). The frames after m are numbered on from m, and
// the interfaces declared after m are forgotten until they are read
// again. Frames a retaining Reader returned before stay valid until
// released.
func (r *Reader) Seek(m Mark) bool {
	if r.file == nil || m.section != r.section || m.ifaces > len(r.ifaces) || m.off < 0 {
		return false
	}
	r.ifaces = r.ifaces[:m.ifaces]
	if r.mapped != nil && m.off <= int64(len(r.mapped)) {
		return r.seekMapped(m)
	}
	if !r.retain && m.off >= r.base && m.off <= r.base+int64(r.w) {
		r.r, r.frameNo = int(m.off-r.base), m.frames // in the chunk
		return true
	}
	if _, err := r.file.Seek(m.off, io.SeekStart); err != nil {
		return false
	}
	if r.retain || r.inMap {
		r.retire()
		r.buf, r.inMap = nil, false // Next takes a chunk
	}
	r.base, r.r, r.w, r.srcErr, r.frameNo = m.off, 0, 0, nil, m.frames
	return true
}

// Release tells a retaining Reader that no frame before offset off (a
// Frame.Offset) is used any more: the chunks holding only such frames are
// reused, and the pages of a mapping before off dropped, so memory does
// not grow with the file.
func (r *Reader) Release(off int64) {
	if r.mapped != nil {
		r.drop(off)
	}
	k := 0
	for _, c := range r.used {
		if c.end <= off {
			r.free = append(r.free, c.buf)
		} else {
			r.used[k] = c
			k++
		}
	}
	clear(r.used[k:])
	r.used = r.used[:k]
}

// retire hands the current chunk, which the Reader reads past, to used
// when it holds frames a retaining Reader keeps, else to free.
func (r *Reader) retire() {
	switch {
	case r.buf == nil, r.inMap:
	case r.retain && r.r > 0:
		r.used = append(r.used, chunk{r.buf, r.base + int64(r.r)})
	case r.retain:
		r.free = append(r.free, r.buf)
	default:
		r.total -= len(r.buf) // no frame in it is valid any more
		r.chunks.put(r.buf)
	}
}

// take returns a chunk of at least size bytes: a free one, or a new one
// if every chunk stays within MaxRetained (free chunks too small are
// dropped to make room).
func (r *Reader) take(size int) ([]byte, error) {
	for i, b := range r.free {
		if len(b) >= size {
			r.free[i] = r.free[len(r.free)-1]
			r.free[len(r.free)-1] = nil
			r.free = r.free[:len(r.free)-1]
			return b, nil
		}
	}
	for len(r.free) > 0 && r.total+size > MaxRetained {
		r.total -= len(r.free[len(r.free)-1])
		r.chunks.put(r.free[len(r.free)-1])
		r.free[len(r.free)-1] = nil
		r.free = r.free[:len(r.free)-1]
	}
	if r.total+size > MaxRetained {
		return nil, ErrRetainLimit
	}
	r.total += size
	return r.chunks.get(size), nil
}

// Next reads the next frame into f. It returns io.EOF at the clean end of
// the file and a *FormatError when the file is malformed or ends inside a
// block (a capture killed mid-write).
func (r *Reader) Next(f *Frame) error {
	var err error
	switch {
	case r.format == FormatPcap:
		err = r.nextPcap(f)
	case !r.nextEPB(f):
		err = r.nextNG(f)
	}
	if err == nil {
		r.frameNo++
		f.Number = r.frameNo
		if r.inMap {
			r.ahead()
		}
	} else if err != io.EOF && r.mapped != nil {
		err = r.cutShort(err)
	}
	return err
}

func (r *Reader) u16(b []byte) uint16 {
	if r.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *Reader) u32(b []byte) uint32 {
	if r.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *Reader) u64(b []byte) uint64 {
	if r.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// ferr returns a *FormatError for the block at buf[off:], or err itself
// when it is ErrRetainLimit, which is the caller's and not the file's.
func (r *Reader) ferr(off int, msg string, err error) error {
	if err == ErrRetainLimit {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &FormatError{Offset: r.base + int64(off), Msg: msg, Err: err}
}

// fill makes at least n unread bytes available in buf[r:w]. It returns
// io.EOF if the input ended exactly at r, io.ErrUnexpectedEOF if it ended
// after some of the n bytes, ErrFileChanged if a file ended before its
// size at Open, ErrRetainLimit, or the source's error. A chunk grows
// beyond chunkSize only as a block's bytes arrive, and never beyond
// MaxBlockLen, so no length field can make the Reader allocate more than
// the input holds.
func (r *Reader) fill(n int) error {
	if r.w-r.r >= n {
		return nil
	}
	if n > MaxBlockLen {
		return fmt.Errorf("block of %d bytes exceeds the %d-byte limit", n, MaxBlockLen)
	}
	for r.w-r.r < n {
		if r.srcErr != nil {
			switch {
			case r.srcErr != io.EOF:
				return r.srcErr
			case r.base+int64(r.w) < r.size:
				return ErrFileChanged
			case r.w == r.r:
				return io.EOF
			}
			return io.ErrUnexpectedEOF
		}
		if r.w == len(r.buf) {
			if err := r.carry(); err != nil {
				return err
			}
		}
		m, err := r.src.Read(r.buf[r.w:])
		r.w += m
		if err != nil {
			r.srcErr = err
		}
	}
	return nil
}

// carry moves the partial block buf[r:w] of a full chunk to the front of
// a chunk with room for more: the same chunk when no frame before r is
// kept, else another (see Retain). A block that fills its chunk from the
// front has arrived in full as far as the chunk goes: the next chunk
// doubles, up to MaxBlockLen.
func (r *Reader) carry() error {
	if r.inMap {
		return r.carryMapped()
	}
	size := max(len(r.buf), chunkSize)
	if r.r == 0 && len(r.buf) > 0 {
		size = min(2*len(r.buf), MaxBlockLen)
	}
	if !r.retain && size <= len(r.buf) {
		r.base += int64(r.r)
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
		return nil
	}
	b, err := r.take(size)
	if err != nil {
		return err
	}
	n := copy(b, r.buf[r.r:r.w])
	r.retire()
	r.buf, r.base, r.r, r.w = b, r.base+int64(r.r), 0, n
	return nil
}

func (r *Reader) nextPcap(f *Frame) error {
	if err := r.fill(16); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return r.ferr(r.r, "truncated pcap record header", err)
	}
	h := r.buf[r.r:]
	sec, frac := r.u32(h), r.u32(h[4:])
	capLen, origLen := r.u32(h[8:]), r.u32(h[12:])
	if capLen > MaxBlockLen-16 {
		return r.ferr(r.r, fmt.Sprintf("record captures %d bytes, more than the %d-byte limit", capLen, MaxBlockLen-16), nil)
	}
	if err := r.fill(16 + int(capLen)); err != nil {
		return r.ferr(r.r, "truncated pcap record", err)
	}
	nsec := int64(frac)
	if !r.nanos {
		nsec *= 1000
	}
	f.Timestamp = time.Unix(int64(sec), nsec).UTC()
	f.Offset = r.base + int64(r.r)
	f.Interface = 0
	f.Length = int(origLen)
	f.Data = r.buf[r.r+16 : r.r+16+int(capLen) : r.r+16+int(capLen)]
	f.Comments = r.comments[:0]
	r.r += 16 + int(capLen)
	return nil
}

// pcapng block types and option codes.
const (
	ngSHB = 0x0A0D0D0A
	ngIDB = 0x00000001
	ngOPB = 0x00000002 // obsolete Packet Block
	ngSPB = 0x00000003
	ngISB = 0x00000005
	ngEPB = 0x00000006

	ngOptEnd         = 0
	ngOptComment     = 1
	ngOptIfName      = 2
	ngOptIfDesc      = 3
	ngOptIfTSResol   = 9
	ngOptIfTSOffset  = 14
	ngOptISBIfDrop   = 5 // isb_ifdrop: frames the interface dropped
	ngOptISBOSDrop   = 7 // isb_osdrop: frames the operating system dropped
	ngByteOrderMagic = 0x1A2B3C4D
)

func (r *Reader) nextNG(f *Frame) error {
	for {
		if err := r.fill(12); err != nil {
			if err == io.EOF {
				return io.EOF
			}
			return r.ferr(r.r, "truncated pcapng block header", err)
		}
		h := r.buf[r.r:]
		typ := r.u32(h)
		if typ == ngSHB {
			// The section header's byte-order magic decides how to read
			// its own length and everything up to the next section.
			switch binary.LittleEndian.Uint32(h[8:]) {
			case ngByteOrderMagic:
				r.big = false
			case 0x4D3C2B1A:
				r.big = true
			default:
				return r.ferr(r.r, fmt.Sprintf("section header byte-order magic % x", h[8:12]), nil)
			}
		}
		blen := r.u32(h[4:])
		if blen < 12 || blen%4 != 0 {
			return r.ferr(r.r, fmt.Sprintf("block length %d is not a multiple of 4 of at least 12", blen), nil)
		}
		if blen > MaxBlockLen {
			return r.ferr(r.r, fmt.Sprintf("block length %d exceeds the %d-byte limit", blen, MaxBlockLen), nil)
		}
		n := int(blen)
		if err := r.fill(n); err != nil {
			return r.ferr(r.r, fmt.Sprintf("truncated block (type 0x%08x, %d bytes)", typ, n), err)
		}
		b := r.buf[r.r : r.r+n]
		if r.u32(b[n-4:]) != blen {
			return r.ferr(r.r, fmt.Sprintf("block trailer length %d, header says %d", r.u32(b[n-4:]), blen), nil)
		}
		body := b[8 : n-4]
		start := r.r
		f.Offset = r.base + int64(start)
		r.r += n
		var ok bool
		var err error
		switch typ {
		case ngSHB:
			err = r.readSHB(start, body)
		case ngIDB:
			err = r.readIDB(start, body)
		case ngISB:
			err = r.readISB(start, body)
		case ngEPB:
			ok, err = r.readEPB(start, body, f)
		case ngOPB:
			ok, err = r.readOPB(start, body, f)
		case ngSPB:
			ok, err = r.readSPB(start, body, f)
		}
		if err != nil || ok {
			return err
		}
	}
}

// nextEPB reads the next block as nextNG would when it is what almost
// every block of a capture is: an enhanced packet block of a
// little-endian section, whole in the chunk, well formed. It reports
// false, having changed nothing but maybe f, for anything else, which
// nextNG reads from the same place. One function without calls but ts's,
// as it runs for every frame.
func (r *Reader) nextEPB(f *Frame) bool {
	h := r.buf[r.r:r.w]
	if r.big || len(h) < 32 || binary.LittleEndian.Uint32(h) != ngEPB {
		return false
	}
	blen := binary.LittleEndian.Uint32(h[4:])
	n := int(blen)
	if blen < 32 || blen%4 != 0 || blen > MaxBlockLen || n > len(h) || binary.LittleEndian.Uint32(h[n-4:]) != blen {
		return false
	}
	b := h[8 : n-4] // the block's body
	id := binary.LittleEndian.Uint32(b)
	capLen := binary.LittleEndian.Uint32(b[12:])
	rest := b[20:]
	if int64(id) >= int64(len(r.ifaces)) || int64(capLen) > int64(len(rest)) {
		return false
	}
	opts := rest[min((int(capLen)+3)&^3, len(rest)):]
	comments := r.comments[:0]
	for len(opts) >= 4 {
		code, end := binary.LittleEndian.Uint16(opts), 4+int(binary.LittleEndian.Uint16(opts[2:]))
		if code == ngOptEnd {
			break
		}
		if end > len(opts) {
			return false // an overrun: nextNG's error
		}
		if code == ngOptComment {
			comments = append(comments, opts[4:end:end])
		}
		if end = (end + 3) &^ 3; end >= len(opts) {
			break // the padding runs to the end, or past it
		}
		opts = opts[end:]
	}
	f.Comments, r.comments = comments, comments[:0]
	in := &r.ifaces[id]
	f.Timestamp = r.ts(in, uint64(binary.LittleEndian.Uint32(b[4:]))<<32|uint64(binary.LittleEndian.Uint32(b[8:])))
	f.Interface = int(id)
	f.Length = int(binary.LittleEndian.Uint32(b[16:]))
	f.Data = rest[:capLen:capLen]
	f.Offset = r.base + int64(r.r)
	r.r += n
	return true
}

func (r *Reader) readSHB(off int, body []byte) error {
	if len(body) < 16 {
		return r.ferr(off, "section header block too short", nil)
	}
	if v := r.u16(body[4:]); v != 1 {
		return r.ferr(off, fmt.Sprintf("pcapng major version %d, want 1", v), nil)
	}
	if n := min(len(r.ifaces), MaxPastInterfaces-len(r.past)); n > 0 {
		r.past = append(r.past, r.ifaces[:n]...)
	}
	r.ifaces = r.ifaces[:0]
	if r.ifaces == nil {
		r.ifaces = []Interface{}
	}
	r.section++
	return nil
}

func (r *Reader) readIDB(off int, body []byte) error {
	if len(body) < 8 {
		return r.ferr(off, "interface description block too short", nil)
	}
	if len(r.ifaces) >= 1<<16 {
		return r.ferr(off, "more than 65536 interfaces in a section", nil)
	}
	in := Interface{LinkType: LinkType(r.u16(body)), SnapLen: r.u32(body[4:]), tsUnits: 1e6}
	err := r.options(off, body[8:], func(code uint16, v []byte) error {
		switch code {
		case ngOptIfName:
			in.Name = string(v)
		case ngOptIfDesc:
			in.Description = string(v)
		case ngOptIfTSResol:
			if len(v) < 1 {
				return nil
			}
			if v[0]&0x80 != 0 {
				if v[0]&0x7F > 63 {
					return r.ferr(off, fmt.Sprintf("if_tsresol 2^-%d", v[0]&0x7F), nil)
				}
				in.tsPow2, in.tsShift = true, v[0]&0x7F
			} else {
				if v[0] > 19 {
					return r.ferr(off, fmt.Sprintf("if_tsresol 10^-%d", v[0]), nil)
				}
				in.tsUnits = pow10(v[0])
			}
		case ngOptIfTSOffset:
			if len(v) >= 8 {
				in.tsOffset = int64(r.u64(v))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	in.Point, in.Plane = ParseInterfaceName(in.Name)
	r.ifaces = append(r.ifaces, in)
	return nil
}

// readISB reads an interface statistics block: the frames its interface
// dropped, as counted when it was written (Interface.Dropped).
func (r *Reader) readISB(off int, body []byte) error {
	if len(body) < 12 {
		return r.ferr(off, "interface statistics block too short", nil)
	}
	id := r.u32(body)
	if int64(id) >= int64(len(r.ifaces)) {
		return r.ferr(off, fmt.Sprintf("interface statistics of interface %d, the section declares %d", id, len(r.ifaces)), nil)
	}
	var dropped uint64
	known := false
	err := r.options(off, body[12:], func(code uint16, v []byte) error {
		if (code == ngOptISBIfDrop || code == ngOptISBOSDrop) && len(v) == 8 {
			n := r.u64(v)
			if dropped += n; dropped < n {
				dropped = math.MaxUint64 // the counts overflow: as many as can be
			}
			known = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if known {
		in := &r.ifaces[id]
		in.Dropped, in.Known = dropped, true
	}
	return nil
}

func pow10(n uint8) uint64 {
	v := uint64(1)
	for ; n > 0; n-- {
		v *= 10
	}
	return v
}

// options walks a pcapng option list. Values alias the buffer.
func (r *Reader) options(off int, b []byte, fn func(code uint16, v []byte) error) error {
	for {
		code, v, rest, more := r.option(b)
		if !more {
			return r.optionErr(off, b)
		}
		if err := fn(code, v); err != nil {
			return err
		}
		b = rest
	}
}

// option splits the first option off the option list b: its code, its
// value (aliasing b) and the list after it. more is false at the end of
// the list (opt_endofopt, or fewer than 4 bytes left) and when the option
// overruns the list (optionErr tells which). Small enough to inline: a
// packet block's options are walked for every frame.
func (r *Reader) option(b []byte) (code uint16, v, rest []byte, more bool) {
	if len(b) < 4 {
		return
	}
	code, end := r.u16(b), 4+int(r.u16(b[2:]))
	if code == ngOptEnd || end > len(b) {
		return
	}
	return code, b[4:end:end], b[min(end+(-end&3), len(b)):], true
}

// optionErr returns the error of the option list b where option found no
// next option: nil at its end, a *FormatError when its first option
// overruns it (overrun). Small enough to inline: a packet block's list
// ends well on every frame.
func (r *Reader) optionErr(off int, b []byte) error {
	if len(b) < 4 || b[0]|b[1] == 0 { // opt_endofopt: code 0 in either byte order
		return nil
	}
	return r.overrun(off, b)
}

// overrun returns the *FormatError of an option list whose first option
// overruns it.
func (r *Reader) overrun(off int, b []byte) error {
	code, n := r.u16(b), int(r.u16(b[2:]))
	return r.ferr(off, fmt.Sprintf("option %d of %d bytes overruns its block", code, n), nil)
}

func (r *Reader) ts(in *Interface, ticks uint64) time.Time {
	var sec, nsec uint64
	if in.tsPow2 {
		s := in.tsShift
		sec = ticks >> s
		if s > 0 {
			// nsec = frac·1e9 / 2^s, in 128 bits: frac·1e9 overflows 64
			// bits for resolutions finer than 2^-34.
			hi, lo := bits.Mul64(ticks&(1<<s-1), 1e9)
			nsec = hi<<(64-s) | lo>>s
		}
	} else {
		switch u := in.tsUnits; {
		// Nanoseconds and microseconds (the default) divide by a constant,
		// which compiles to a multiplication: this runs for every frame.
		case u == 1e9:
			sec, nsec = ticks/1e9, ticks%1e9
		case u == 1e6:
			sec, nsec = ticks/1e6, ticks%1e6*1e3
		case u <= 1e9:
			sec, nsec = ticks/u, ticks%u*(1e9/u)
		default:
			sec, nsec = ticks/u, ticks%u/(u/1e9)
		}
	}
	return time.Unix(int64(sec)+in.tsOffset, int64(nsec)).UTC()
}

func (r *Reader) iface(off int, id uint32) (*Interface, error) {
	if int64(id) >= int64(len(r.ifaces)) {
		return nil, r.ferr(off, fmt.Sprintf("packet on interface %d, section declares %d", id, len(r.ifaces)), nil)
	}
	return &r.ifaces[id], nil
}

func (r *Reader) packet(off int, f *Frame, in *Interface, id int, ts uint64, capLen, origLen uint32, rest []byte) ([]byte, error) {
	if int64(capLen) > int64(len(rest)) {
		return nil, r.ferr(off, fmt.Sprintf("captured length %d overruns the %d-byte block", capLen, len(rest)), nil)
	}
	f.Timestamp = r.ts(in, ts)
	f.Interface = id
	f.Length = int(origLen)
	f.Data = rest[:capLen:capLen]
	f.Comments = r.comments[:0]
	pad := (int(capLen) + 3) &^ 3
	if pad > len(rest) {
		pad = len(rest)
	}
	return rest[pad:], nil
}

func (r *Reader) packetOptions(off int, f *Frame, opts []byte) error {
	for {
		code, v, rest, more := r.option(opts)
		if !more {
			break
		}
		if code == ngOptComment {
			f.Comments = append(f.Comments, v)
		}
		opts = rest
	}
	r.comments = f.Comments[:0]
	return r.optionErr(off, opts)
}

func (r *Reader) readEPB(off int, body []byte, f *Frame) (bool, error) {
	if len(body) < 20 {
		return false, r.ferr(off, "enhanced packet block too short", nil)
	}
	id := r.u32(body)
	in, err := r.iface(off, id)
	if err != nil {
		return false, err
	}
	ts := uint64(r.u32(body[4:]))<<32 | uint64(r.u32(body[8:]))
	opts, err := r.packet(off, f, in, int(id), ts, r.u32(body[12:]), r.u32(body[16:]), body[20:])
	if err != nil {
		return false, err
	}
	return true, r.packetOptions(off, f, opts)
}

func (r *Reader) readOPB(off int, body []byte, f *Frame) (bool, error) {
	if len(body) < 20 {
		return false, r.ferr(off, "packet block too short", nil)
	}
	id := uint32(r.u16(body))
	in, err := r.iface(off, id)
	if err != nil {
		return false, err
	}
	ts := uint64(r.u32(body[4:]))<<32 | uint64(r.u32(body[8:]))
	opts, err := r.packet(off, f, in, int(id), ts, r.u32(body[12:]), r.u32(body[16:]), body[20:])
	if err != nil {
		return false, err
	}
	return true, r.packetOptions(off, f, opts)
}

func (r *Reader) readSPB(off int, body []byte, f *Frame) (bool, error) {
	if len(body) < 4 {
		return false, r.ferr(off, "simple packet block too short", nil)
	}
	in, err := r.iface(off, 0)
	if err != nil {
		return false, err
	}
	orig := r.u32(body)
	capLen := orig
	if in.SnapLen != 0 && capLen > in.SnapLen {
		capLen = in.SnapLen
	}
	if int64(capLen) > int64(len(body)-4) {
		capLen = uint32(len(body) - 4)
	}
	// A simple packet block carries no timestamp.
	_, err = r.packet(off, f, in, 0, 0, capLen, orig, body[4:])
	f.Timestamp = time.Time{}
	return true, err
}
