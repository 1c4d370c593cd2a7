package capture

import (
	"fmt"
	"io"
	"time"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/pcap"
)

// Host is a fabric.FrameSink that writes a pcapng as a capture tool
// running on one node writes it (dumpcap -i eth1 -i eth2): one interface
// per plane, named as the host names its ports, holding what that node
// sent and received on the plane, with no packet comments. A tool
// capturing several interfaces reads each one's buffer in turn, so its
// file holds runs of frames per interface, in time order within an
// interface but not across interfaces; Host writes runs of HostConfig.Run
// frames the same way.
type Host struct {
	cfg    HostConfig
	planes int
	dst    io.Writer
	w      *pcap.Writer
	fr     pcap.Frame
	// runs holds, per plane, the frames not yet written.
	runs [][]heldFrame
	err  error // the first write error, returned by Flush
}

// HostConfig says which node's ports a Host captures and how.
type HostConfig struct {
	// Node is the captured node.
	Node int
	// Names are the interface names by plane; nil means eth1, eth2, …
	// (plane P is eth<P+1>), names that say nothing about planes.
	Names []string
	// Run is how many frames of one interface are written together; at
	// Flush every interface's rest is written, in plane order. 0 or 1
	// writes each frame when it is captured, in time order.
	Run int
}

// MaxHostRun bounds HostConfig.Run: a Host holds up to Run frames per
// plane.
const MaxHostRun = 4096

// DumpcapRun is the run length of the dumpcap-style captures: frames of
// one interface written together (HostConfig.Run).
const DumpcapRun = 16

// heldFrame is a captured frame waiting for its interface's run to fill.
type heldFrame struct {
	at   fabric.Time
	data []byte
}

// NewHost returns a sink that writes node cfg.Node's frames to w once the
// fabric opens it.
func NewHost(w io.Writer, cfg HostConfig) *Host { return &Host{dst: w, cfg: cfg} }

// name returns the interface name of plane p.
func (c *HostConfig) name(p int) string {
	if c.Names != nil {
		return c.Names[p]
	}
	return fmt.Sprintf("eth%d", p+1)
}

// HostConfigError reports a HostConfig that does not fit the fabric.
type HostConfigError struct{ Reason string }

func (e *HostConfigError) Error() string { return "capture: host capture: " + e.Reason }

// Open checks the configuration against the fabric's planes and starts
// the file.
func (c *Host) Open(planes int) error {
	h := &c.cfg
	switch {
	case h.Node < 0:
		return &HostConfigError{fmt.Sprintf("node %d", h.Node)}
	case h.Names != nil && len(h.Names) != planes:
		return &HostConfigError{fmt.Sprintf("%d interface names for %d planes", len(h.Names), planes)}
	case h.Run < 0 || h.Run > MaxHostRun:
		return &HostConfigError{fmt.Sprintf("run %d: want [0, %d]", h.Run, MaxHostRun)}
	}
	seen := map[string]bool{}
	ifs := make([]pcap.Interface, planes)
	for p := range ifs {
		n := h.name(p)
		if n == "" || seen[n] {
			return &HostConfigError{fmt.Sprintf("plane %d: interface name %q empty or repeated", p, n)}
		}
		seen[n] = true
		ifs[p] = pcap.Interface{Name: n}
	}
	w, err := pcap.NewWriter(c.dst, ifs...)
	c.w, c.planes = w, planes
	if h.Run > 1 {
		c.runs = make([][]heldFrame, planes)
	}
	return err
}

// Frame writes or holds a frame the captured node sent or received.
func (c *Host) Frame(f *fabric.Frame) {
	node := f.Dst
	if f.Point == fabric.AtTx {
		node = f.Src
	}
	if node != c.cfg.Node || f.Plane < 0 || f.Plane >= c.planes {
		return
	}
	if c.runs == nil {
		c.write(f.At, f.Plane, f.Data)
		return
	}
	r := c.runs[f.Plane]
	if n := len(r); n < cap(r) {
		r = r[:n+1]
	} else {
		r = append(r, heldFrame{})
	}
	h := &r[len(r)-1]
	h.at, h.data = f.At, append(h.data[:0], f.Data...)
	c.runs[f.Plane] = r
	if len(r) >= c.cfg.Run {
		c.writeRun(f.Plane)
	}
}

func (c *Host) write(at fabric.Time, plane int, data []byte) {
	c.fr = pcap.Frame{Timestamp: time.Unix(0, int64(at)).UTC(), Interface: plane, Data: data}
	if err := c.w.WriteFrame(&c.fr); err != nil && c.err == nil {
		c.err = err
	}
}

// writeRun writes the frames held for plane's interface.
func (c *Host) writeRun(plane int) {
	for i := range c.runs[plane] {
		h := &c.runs[plane][i]
		c.write(h.at, plane, h.data)
	}
	c.runs[plane] = c.runs[plane][:0]
}

// Flush writes every held frame, interface by interface, and the buffer.
// It returns the first error met while writing a frame, if any.
func (c *Host) Flush() error {
	if c.w == nil {
		return c.err
	}
	for p := range c.runs {
		c.writeRun(p)
	}
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}
