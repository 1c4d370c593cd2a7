package pcap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// ErrNoComments is returned when a packet comment is written to a classic
// pcap file, which has nowhere to keep it.
var ErrNoComments = errors.New("pcap: classic pcap files cannot hold packet comments; use pcapng")

// Writer writes a pcapng capture (one interface per plane and capture
// point, per-packet comments) or a classic pcap capture. Call Flush
// before closing the underlying file.
type Writer struct {
	format FileFormat
	ng     *pcapgo.NgWriter
	pc     *pcapgo.Writer
	bw     *bufio.Writer
	nIf    int
	strs   []string // reused comment conversions
}

// NewWriter starts a pcapng file on w with one section declaring ifaces
// in order, so the interface IDs of WriteFrame are their indices. An
// interface with an empty Name but a Point gets InterfaceName(Point,
// Plane). LinkType 0 is written as Ethernet, the only link MRC uses.
// Timestamps are written with nanosecond resolution.
func NewWriter(w io.Writer, ifaces ...Interface) (*Writer, error) {
	if len(ifaces) == 0 {
		return nil, errors.New("pcap: a pcapng file needs at least one interface")
	}
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "openmrc"}}
	var ng *pcapgo.NgWriter
	for i, in := range ifaces {
		ngi := pcapgo.NgInterface{Name: in.Name, Description: in.Description,
			LinkType: layers.LinkType(in.LinkType), SnapLength: in.SnapLen, TimestampResolution: 9}
		if ngi.Name == "" && in.Point != "" {
			ngi.Name = InterfaceName(in.Point, in.Plane)
		}
		if ngi.LinkType == 0 {
			ngi.LinkType = layers.LinkTypeEthernet
		}
		var err error
		if i == 0 {
			ng, err = pcapgo.NewNgWriterInterface(w, ngi, opts)
		} else {
			_, err = ng.AddInterface(ngi)
		}
		if err != nil {
			return nil, err
		}
	}
	return &Writer{format: FormatPcapNG, ng: ng, nIf: len(ifaces)}, nil
}

// NewPcapWriter starts a classic pcap file (nanosecond timestamps) with
// one interface. It cannot record planes or comments.
func NewPcapWriter(w io.Writer, linkType LinkType, snapLen uint32) (*Writer, error) {
	if linkType == 0 {
		linkType = LinkTypeEthernet
	}
	if snapLen == 0 {
		snapLen = 262144
	}
	bw := bufio.NewWriter(w)
	pc := pcapgo.NewWriterNanos(bw)
	if err := pc.WriteFileHeader(snapLen, layers.LinkType(linkType)); err != nil {
		return nil, err
	}
	return &Writer{format: FormatPcap, pc: pc, bw: bw, nIf: 1}, nil
}

// Format returns the file format being written.
func (w *Writer) Format() FileFormat { return w.format }

// WriteFrame writes f: its Timestamp, Interface, Length (0 means
// len(Data)), Data and Comments. Number is ignored.
func (w *Writer) WriteFrame(f *Frame) error {
	if f.Interface < 0 || f.Interface >= w.nIf {
		return fmt.Errorf("pcap: frame on interface %d, the file declares %d", f.Interface, w.nIf)
	}
	n := f.Length
	if n < len(f.Data) {
		n = len(f.Data)
	}
	ci := gopacket.CaptureInfo{Timestamp: f.Timestamp, CaptureLength: len(f.Data), Length: n, InterfaceIndex: f.Interface}
	if w.format == FormatPcap {
		if len(f.Comments) > 0 {
			return ErrNoComments
		}
		return w.pc.WritePacket(ci, f.Data)
	}
	w.strs = w.strs[:0]
	for _, c := range f.Comments {
		w.strs = append(w.strs, string(c))
	}
	return w.ng.WritePacketWithOptions(ci, f.Data, pcapgo.NgPacketOptions{Comments: w.strs})
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

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if w.ng != nil {
		return w.ng.Flush()
	}
	return w.bw.Flush()
}
