package fabric

import "github.com/openmrc/mrc/wire"

// FrameSink receives every frame the fabric carries, at its two capture
// points: where a packet enters the fabric (tx) and where it is delivered
// (rx). The fabric encodes the frame with the profile's codec; how it is
// stored is the sink's business (package fabric/capture writes pcapng), so
// the simulator needs no capture format.
type FrameSink interface {
	// Open is called once, by New, with the fabric's number of planes.
	Open(planes int) error
	// Frame is called for each frame at a capture point. f and f.Data are
	// valid only during the call.
	Frame(f *Frame)
	// Flush writes out what the sink buffers; Sim.Flush calls it.
	Flush() error
}

// Point is a capture point of the fabric.
type Point uint8

const (
	// AtTx is where a packet enters the fabric, at the sender's port.
	AtTx Point = iota
	// AtRx is where a packet is delivered, at the receiver's port.
	AtRx
)

func (p Point) String() string {
	if p == AtRx {
		return "rx"
	}
	return "tx"
}

// Frame is one frame handed to a FrameSink.
type Frame struct {
	At    Time
	Point Point
	Plane int
	// Data is the frame as the codec encodes it.
	Data []byte
	// Packet is the fabric's id of the packet; Src and Dst its nodes and
	// Path its path (-1 before one is chosen); Copy marks a duplicate
	// made by a Dup rule.
	Packet   uint64
	Src, Dst int
	Path     int
	Copy     bool
}

// frameSink encodes flights for a FrameSink into reused buffers, so that
// capturing allocates nothing per frame.
type frameSink struct {
	FrameSink
	buf []byte
	tmp wire.Packet
	f   Frame
}

func (c *frameSink) write(s *Sim, at Point, fl *flight) {
	c.tmp = fl.pkt // Append fills derived fields; keep the flight's copy as it is
	var err error
	c.buf, err = s.codec.Append(c.buf[:0], &c.tmp)
	if err != nil {
		return
	}
	c.f = Frame{At: s.now, Point: at, Plane: int(fl.plane), Data: c.buf, Packet: fl.id,
		Src: int(fl.src), Dst: int(fl.dst), Path: int(fl.path), Copy: fl.dup}
	c.FrameSink.Frame(&c.f)
}
