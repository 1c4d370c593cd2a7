package fabric

import (
	"errors"
	"fmt"
	"io"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/statemachine"
)

// Time is synthetic time in nanoseconds, the statemachine's clock.
type Time = statemachine.Time

// Never is the time of nothing.
const Never = statemachine.Never

// Config is the fabric: a two-tier Clos per plane. Each node has one NIC
// port per plane, attached to a T0 switch of that plane; every T0 has one
// uplink to each of the plane's PathsPerPlane T1 switches. A packet from
// node a to node b on plane p and path k crosses the links
//
//	a's NIC → T0(a) → T1 k → T0(b) → b's NIC
//
// (NIC uplink, T0 uplink, T1 downlink, last hop), or NIC → T0 → NIC when a
// and b share a T0. The zero value of every field means its documented
// default, so Config{} is an 8-plane, 4-path, 100 Gb/s fabric.
type Config struct {
	// Seed seeds every random choice of the fabric (loss, duplication,
	// jitter, ECN marks). Endpoints carry their own seeds.
	Seed uint64
	// Nodes is the number of NICs; 0 means 2.
	Nodes int
	// Planes is the number of NIC ports per node, one per plane; 0 means 8.
	Planes int
	// PathsPerPlane is the number of T1 switches (T0 uplinks) per plane;
	// 0 means 4.
	PathsPerPlane int
	// NodesPerT0 is the number of nodes sharing each T0; 0 means 1, so
	// that every packet crosses a T1 and its EV matters.
	NodesPerT0 int
	// LinkRate is every link's rate in bits per second; 0 means 100 Gb/s
	// (an 800G NIC broken out into 8 planes, WP §2). 8e12 / LinkRate
	// should be an integer number of picoseconds per byte.
	LinkRate int64
	// HopDelay is each hop's propagation plus switching latency; 0 means
	// 500 ns.
	HopDelay Time
	// QueueBytes is the egress buffer of every switch port; a packet that
	// neither fits nor can be trimmed is dropped. 0 means 512 KiB. NIC
	// uplinks are the sending host's own queue and never drop.
	QueueBytes int
	// ECNMin and ECNMax are the marking thresholds: an ECN-capable packet
	// that finds q bytes queued is CE-marked with probability
	// (q−ECNMin)/(ECNMax−ECNMin), always above ECNMax. 0 means 32 KiB and
	// 128 KiB; a negative ECNMin disables marking.
	ECNMin, ECNMax int
	// ECNLastHop also marks on the last hop. The deployment in WP §2.1
	// does not, so that a mark means mid-fabric imbalance, not incast.
	ECNLastHop bool
	// TrimBytes is the trimming threshold: a trimmable data packet that
	// finds more than this queued loses its payload and is forwarded as a
	// header with priority, its DSCP rewritten to the profile's TRIMMED
	// (TRIMMED_LASTHOP on the last hop) (WIRE-DSCP-2). 0 means 128 KiB; a
	// negative value disables trimming.
	TrimBytes int
	// LinkDetect is how long a NIC takes to notice that its own port
	// went down or came back; 0 means 1 µs. PortStatusDelay is how long
	// the news takes to reach its peers (the Port Status Update endpoint
	// operation, EP-PSU-3, modelled as a delayed control-plane message);
	// 0 means 20 µs. Only endpoints that implement PortStatusSetter react.
	LinkDetect, PortStatusDelay Time
	// Mapper maps an EV to a path within its plane; nil means
	// HashMapper{}. The plane itself is the NIC port the endpoint chose.
	Mapper Mapper
	// Profile gives the DSCP code points; nil means the default (spec.OrDefault).
	Profile *spec.Profile
	// Trace, when set, receives an NDJSON event trace (see trace.go).
	Trace io.Writer
	// TraceHops adds one trace line per hop (enqueue) to Trace.
	TraceHops bool
	// Frames, when set, receives every frame at each capture point (tx at
	// injection, rx at delivery); fabric/capture writes them as pcapng.
	Frames FrameSink
	// PlaneAddresses gives every node one address per plane, as in the
	// white paper's deployment (one NIC port and one address per plane):
	// the fabric writes the sending and receiving ports' addresses
	// (PlaneAddr) into every packet it carries, whatever single address
	// the endpoint filled in. Off, packets keep the endpoints' addresses.
	PlaneAddresses bool
	// EndpointEvents asks endpoints for their per-packet events
	// (statemachine.Output.TracePackets), for observers that check them.
	EndpointEvents bool
	// WireCheck encodes every delivered packet with Profile's codec and
	// decodes it again before delivery, so that what endpoints receive
	// is exactly what the codec makes of the bytes.
	WireCheck bool
}

// ConfigError reports a bad Config field.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return "fabric: config " + e.Field + ": " + e.Reason }

// Errors of the fabric's API; test with errors.Is.
var (
	ErrUnknownNode     = errors.New("fabric: no such node")
	ErrUnknownEndpoint = errors.New("fabric: no such endpoint")
	ErrDuplicateQPN    = errors.New("fabric: QPN already attached on that node")
	ErrBadPlane        = errors.New("fabric: no such plane or path")
)

func (c Config) normalized() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Nodes, 2)
	def(&c.Planes, 8)
	def(&c.PathsPerPlane, 4)
	def(&c.NodesPerT0, 1)
	def(&c.QueueBytes, 512<<10)
	def(&c.TrimBytes, 128<<10)
	if c.ECNMin == 0 && c.ECNMax == 0 {
		c.ECNMin, c.ECNMax = 32<<10, 128<<10
	}
	if c.LinkRate == 0 {
		c.LinkRate = 100e9
	}
	if c.HopDelay == 0 {
		c.HopDelay = 500
	}
	if c.LinkDetect == 0 {
		c.LinkDetect = 1000
	}
	if c.PortStatusDelay == 0 {
		c.PortStatusDelay = 20_000
	}
	if c.Mapper == nil {
		c.Mapper = HashMapper{}
	}
	c.Profile = spec.OrDefault(c.Profile)
	switch {
	case c.Nodes < 1 || c.Nodes > 1<<16:
		return c, &ConfigError{"Nodes", fmt.Sprintf("%d: want [1, 65536]", c.Nodes)}
	case c.Planes < 1 || c.Planes > statemachine.MaxPlanes:
		return c, &ConfigError{"Planes", fmt.Sprintf("%d: want [1, %d]", c.Planes, statemachine.MaxPlanes)}
	case c.PathsPerPlane < 1 || c.PathsPerPlane > 1<<12:
		return c, &ConfigError{"PathsPerPlane", fmt.Sprintf("%d: want [1, 4096]", c.PathsPerPlane)}
	case c.NodesPerT0 < 1:
		return c, &ConfigError{"NodesPerT0", "must be positive"}
	case c.LinkRate < 1e6 || c.LinkRate > 8e12:
		return c, &ConfigError{"LinkRate", fmt.Sprintf("%d b/s: want [1 Mb/s, 8 Tb/s]", c.LinkRate)}
	case c.HopDelay < 0 || c.LinkDetect < 0 || c.PortStatusDelay < 0:
		return c, &ConfigError{"HopDelay/LinkDetect/PortStatusDelay", "negative"}
	case c.QueueBytes < 0:
		return c, &ConfigError{"QueueBytes", "negative"}
	case c.ECNMin >= 0 && c.ECNMax <= c.ECNMin:
		return c, &ConfigError{"ECNMax", fmt.Sprintf("%d: must exceed ECNMin %d", c.ECNMax, c.ECNMin)}
	}
	if err := c.Profile.Validate(); err != nil {
		return c, &ConfigError{"Profile", err.Error()}
	}
	return c, nil
}
