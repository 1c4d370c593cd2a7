package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// ErrNoComments is returned when a packet comment is written to a classic
// pcap file, which has nowhere to keep it.
var ErrNoComments = errors.New("pcap: classic pcap files cannot hold packet comments; use pcapng")

// Writer writes a pcapng capture (one interface per plane and capture
// point, per-packet comments) or a classic pcap capture, little-endian,
// with nanosecond timestamps. Call Flush before closing the underlying
// file.
type Writer struct {
	format FileFormat
	bw     *bufio.Writer
	nIf    int
	blk    []byte // the block or record being built, reused
}

// application is the shb_userappl option of the pcapng section header.
const application = "openmrc"

// pcap and pcapng constants the Writer needs beyond the Reader's.
const (
	ngOptSHBUserAppl = 4          // shb_userappl
	ngTSResolNanos   = 9          // if_tsresol: 10^-9 s
	pcapMagicNanos   = 0xA1B23C4D // classic pcap, nanosecond timestamps
	pcapDefaultSnap  = 262144     // NewPcapWriter's snap length for 0
	ngOptMaxLen      = math.MaxUint16
)

// NewWriter starts a pcapng file on w with one section declaring ifaces
// in order, so the interface IDs of WriteFrame are their indices. An
// interface with an empty Name but a Point gets InterfaceName(Point,
// Plane). LinkType 0 is written as Ethernet, the only link MRC uses.
// Timestamps are written with nanosecond resolution (if_tsresol 9).
func NewWriter(w io.Writer, ifaces ...Interface) (*Writer, error) {
	if len(ifaces) == 0 {
		return nil, errors.New("pcap: a pcapng file needs at least one interface")
	}
	wr := &Writer{format: FormatPcapNG, bw: bufio.NewWriter(w), nIf: len(ifaces)}
	wr.blk = appendSHB(wr.blk[:0])
	for _, in := range ifaces {
		name := in.Name
		if name == "" && in.Point != "" {
			name = InterfaceName(in.Point, in.Plane)
		}
		if in.LinkType == 0 {
			in.LinkType = LinkTypeEthernet
		}
		if len(name) > ngOptMaxLen || len(in.Description) > ngOptMaxLen {
			return nil, fmt.Errorf("pcap: interface %q: name or description longer than %d bytes", name, ngOptMaxLen)
		}
		wr.blk = appendIDB(wr.blk, name, in.Description, in.LinkType, in.SnapLen)
	}
	if _, err := wr.bw.Write(wr.blk); err != nil {
		return nil, err
	}
	return wr, nil
}

// NewPcapWriter starts a classic pcap file (nanosecond timestamps) with
// one interface. It cannot record planes or comments. LinkType 0 is
// written as Ethernet, snapLen 0 as 262144.
func NewPcapWriter(w io.Writer, linkType LinkType, snapLen uint32) (*Writer, error) {
	if linkType == 0 {
		linkType = LinkTypeEthernet
	}
	if snapLen == 0 {
		snapLen = pcapDefaultSnap
	}
	var h [24]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], pcapMagicNanos)
	le.PutUint16(h[4:], 2) // version 2.4
	le.PutUint16(h[6:], 4)
	// 8:16 are thiszone and sigfigs, 0.
	le.PutUint32(h[16:], snapLen)
	le.PutUint32(h[20:], uint32(linkType))
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(h[:]); err != nil {
		return nil, err
	}
	return &Writer{format: FormatPcap, bw: bw, nIf: 1}, nil
}

// Format returns the file format being written.
func (w *Writer) Format() FileFormat { return w.format }

// WriteFrame writes f: its Timestamp, Interface, Length (0 means
// len(Data)), Data and Comments. Number is ignored. In a classic pcap
// file a zero Timestamp is written as the time of writing.
func (w *Writer) WriteFrame(f *Frame) error {
	if f.Interface < 0 || f.Interface >= w.nIf {
		return fmt.Errorf("pcap: frame on interface %d, the file declares %d", f.Interface, w.nIf)
	}
	n := max(f.Length, len(f.Data))
	if uint64(n) > math.MaxUint32 || uint64(epbLen(f)) > math.MaxUint32 {
		return fmt.Errorf("pcap: frame of %d bytes and %d comments: longer than a capture block can be", n, len(f.Comments))
	}
	if w.format == FormatPcap {
		if len(f.Comments) > 0 {
			return ErrNoComments
		}
		w.blk = appendRecord(w.blk[:0], f.Timestamp, len(f.Data), n)
	} else {
		for _, c := range f.Comments {
			if len(c) > ngOptMaxLen {
				return fmt.Errorf("pcap: packet comment of %d bytes, pcapng holds at most %d", len(c), ngOptMaxLen)
			}
		}
		w.blk = appendEPBHead(w.blk[:0], f, n)
	}
	if _, err := w.bw.Write(w.blk); err != nil {
		return err
	}
	if _, err := w.bw.Write(f.Data); err != nil {
		return err
	}
	if w.format == FormatPcapNG {
		w.blk = appendEPBTail(w.blk[:0], f)
		_, err := w.bw.Write(w.blk)
		return err
	}
	return nil
}

// WritePacket writes one packet captured at ts on interface iface, with
// optional comments (pcapng only).
func (w *Writer) WritePacket(ts time.Time, iface int, data []byte, comments ...string) error {
	f := Frame{Timestamp: ts, Interface: iface, Data: data}
	if len(comments) > 0 {
		if w.format == FormatPcap {
			return ErrNoComments
		}
		f.Comments = make([][]byte, len(comments))
		for i, c := range comments {
			f.Comments[i] = []byte(c)
		}
	}
	return w.WriteFrame(&f)
}

// ErrNoStatistics is returned when interface statistics are written to a
// classic pcap file, which has nowhere to keep them.
var ErrNoStatistics = errors.New("pcap: classic pcap files cannot hold interface statistics; use pcapng")

// WriteDropped writes an interface statistics block for interface iface
// at ts: the capture lost dropped frames on it (isb_ifdrop), which the
// file does not hold (Interface.Dropped). 0 says it lost none.
func (w *Writer) WriteDropped(ts time.Time, iface int, dropped uint64) error {
	if w.format == FormatPcap {
		return ErrNoStatistics
	}
	if iface < 0 || iface >= w.nIf {
		return fmt.Errorf("pcap: statistics of interface %d, the file declares %d", iface, w.nIf)
	}
	le := binary.LittleEndian
	const isbLen = 12 + 12 + 4 + 8 + 4 // header and trailer, ID and time, isb_ifdrop, end of options
	t := ts.UnixNano()
	b := le.AppendUint32(w.blk[:0], ngISB)
	b = le.AppendUint32(b, isbLen)
	b = le.AppendUint32(b, uint32(iface))
	b = le.AppendUint32(b, uint32(t>>32))
	b = le.AppendUint32(b, uint32(t))
	b = appendOption(b, ngOptISBIfDrop, le.AppendUint64(nil, dropped))
	b = appendEndOfOptions(b)
	w.blk = le.AppendUint32(b, isbLen)
	_, err := w.bw.Write(w.blk)
	return err
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// pad4 returns the zero bytes that align n to 4.
func pad4(n int) int { return -n & 3 }

// optionsLen returns the length of pcapng options with values of the
// given lengths, end-of-options included (0 for none).
func optionsLen(lens ...int) int {
	if len(lens) == 0 {
		return 0
	}
	n := 4 // opt_endofopt
	for _, l := range lens {
		n += 4 + l + pad4(l)
	}
	return n
}

func appendOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	return append(b, make([]byte, pad4(len(v)))...)
}

func appendStrOption(b []byte, code uint16, v string) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	return append(b, make([]byte, pad4(len(v)))...)
}

// appendEndOfOptions appends opt_endofopt.
func appendEndOfOptions(b []byte) []byte { return append(b, 0, 0, 0, 0) }

// appendSHB appends a Section Header Block: byte-order magic, version
// 1.0, section length unspecified, and the shb_userappl option.
func appendSHB(b []byte) []byte {
	le := binary.LittleEndian
	n := uint32(24 + optionsLen(len(application)) + 4)
	b = le.AppendUint32(b, ngSHB)
	b = le.AppendUint32(b, n)
	b = le.AppendUint32(b, ngByteOrderMagic)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint64(b, math.MaxUint64) // section length: unspecified
	b = appendStrOption(b, ngOptSHBUserAppl, application)
	b = appendEndOfOptions(b)
	return le.AppendUint32(b, n)
}

// appendIDB appends an Interface Description Block with the if_name and
// if_description options when they are set, and if_tsresol 9.
func appendIDB(b []byte, name, desc string, lt LinkType, snapLen uint32) []byte {
	le := binary.LittleEndian
	var lens []int
	if name != "" {
		lens = append(lens, len(name))
	}
	if desc != "" {
		lens = append(lens, len(desc))
	}
	lens = append(lens, 1)
	n := uint32(16 + optionsLen(lens...) + 4)
	b = le.AppendUint32(b, ngIDB)
	b = le.AppendUint32(b, n)
	b = le.AppendUint16(b, uint16(lt))
	b = le.AppendUint16(b, 0) // reserved
	b = le.AppendUint32(b, snapLen)
	if name != "" {
		b = appendStrOption(b, ngOptIfName, name)
	}
	if desc != "" {
		b = appendStrOption(b, ngOptIfDesc, desc)
	}
	b = appendOption(b, ngOptIfTSResol, []byte{ngTSResolNanos})
	b = appendEndOfOptions(b)
	return le.AppendUint32(b, n)
}

// epbLen returns the total length of f's Enhanced Packet Block.
func epbLen(f *Frame) int {
	n := 28 + len(f.Data) + pad4(len(f.Data)) + 4
	if len(f.Comments) > 0 {
		n += 4
		for _, c := range f.Comments {
			n += 4 + len(c) + pad4(len(c))
		}
	}
	return n
}

// appendEPBHead appends the part of f's Enhanced Packet Block before
// its data: block type and length, interface, nanosecond timestamp,
// captured and original lengths.
func appendEPBHead(b []byte, f *Frame, origLen int) []byte {
	le := binary.LittleEndian
	ts := f.Timestamp.UnixNano()
	b = le.AppendUint32(b, ngEPB)
	b = le.AppendUint32(b, uint32(epbLen(f)))
	b = le.AppendUint32(b, uint32(f.Interface))
	b = le.AppendUint32(b, uint32(ts>>32))
	b = le.AppendUint32(b, uint32(ts))
	b = le.AppendUint32(b, uint32(len(f.Data)))
	return le.AppendUint32(b, uint32(origLen))
}

// appendEPBTail appends the part of f's Enhanced Packet Block after its
// data: padding, one opt_comment per comment, and the trailing length.
func appendEPBTail(b []byte, f *Frame) []byte {
	b = append(b, make([]byte, pad4(len(f.Data)))...)
	for _, c := range f.Comments {
		b = appendOption(b, ngOptComment, c)
	}
	if len(f.Comments) > 0 {
		b = appendEndOfOptions(b)
	}
	return binary.LittleEndian.AppendUint32(b, uint32(epbLen(f)))
}

// appendRecord appends a classic pcap record header (seconds,
// nanoseconds, captured and original lengths) for a frame captured at
// ts, or now when ts is zero.
func appendRecord(b []byte, ts time.Time, capLen, origLen int) []byte {
	if ts.IsZero() {
		ts = time.Now()
	}
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(ts.Unix()))
	b = le.AppendUint32(b, uint32(ts.Nanosecond()))
	b = le.AppendUint32(b, uint32(capLen))
	return le.AppendUint32(b, uint32(origLen))
}
