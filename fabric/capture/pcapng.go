package capture

import (
	"io"
	"strconv"
	"time"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/pcap"
)

// Pcapng is a fabric.FrameSink that writes a pcapng file with two
// interfaces per plane: tx/planeN (2N), where frames enter the fabric, and
// rx/planeN (2N+1), where they are delivered, so Wireshark shows each
// plane's traffic at both ends. Each frame's comment carries the fabric's
// packet id, nodes and path.
type Pcapng struct {
	dst io.Writer
	w   *pcap.Writer
	cm  []byte
	cms [1][]byte
	fr  pcap.Frame
	err error // the first write error, returned by Flush
}

// NewPcapng returns a sink that writes to w once the fabric opens it.
func NewPcapng(w io.Writer) *Pcapng { return &Pcapng{dst: w} }

// Open starts the file, declaring the interfaces of planes planes.
func (c *Pcapng) Open(planes int) error {
	ifs := make([]pcap.Interface, 0, 2*planes)
	for p := 0; p < planes; p++ {
		ifs = append(ifs, pcap.Interface{Point: "tx", Plane: p}, pcap.Interface{Point: "rx", Plane: p})
	}
	w, err := pcap.NewWriter(c.dst, ifs...)
	c.w = w
	return err
}

// Frame writes one frame.
func (c *Pcapng) Frame(f *fabric.Frame) {
	iface := 2 * f.Plane
	if f.Point == fabric.AtRx {
		iface++
	}
	c.cm = append(c.cm[:0], "pkt="...)
	c.cm = strconv.AppendUint(c.cm, f.Packet, 10)
	c.cm = append(c.cm, " src="...)
	c.cm = strconv.AppendInt(c.cm, int64(f.Src), 10)
	c.cm = append(c.cm, " dst="...)
	c.cm = strconv.AppendInt(c.cm, int64(f.Dst), 10)
	c.cm = append(c.cm, " path="...)
	c.cm = strconv.AppendInt(c.cm, int64(f.Path), 10)
	if f.Copy {
		c.cm = append(c.cm, " copy"...)
	}
	c.cms[0] = c.cm
	c.fr = pcap.Frame{Timestamp: time.Unix(0, int64(f.At)).UTC(), Interface: iface, Data: f.Data, Comments: c.cms[:]}
	if err := c.w.WriteFrame(&c.fr); err != nil && c.err == nil {
		c.err = err
	}
}

// Flush writes out buffered frames. It returns the first error met while
// writing a frame, if any.
func (c *Pcapng) Flush() error {
	if c.w == nil || c.err != nil {
		return c.err
	}
	return c.w.Flush()
}
