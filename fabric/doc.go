// Package fabric is a deterministic discrete-event simulator of the lossy
// multi-plane two-tier Clos that MRC runs on (WP §2): every node has one NIC
// port per plane, each plane is a T0/T1 Clos of its own, and a packet's
// plane is the port its sender chose while its path within the plane (the
// T0 uplink, hence the T1) follows from its EV, by static SRv6 source
// routing (SRv6Mapper, WP §2.2-2.3) or by ECMP hashing (HashMapper).
//
// The simulator drives pure endpoints — statemachine.QP, or the RC
// go-back-N baseline of fabric/rc — through the Endpoint interface,
// exactly as the statemachine expects: packets in with Receive, timers with
// Advance at NextDeadline, outputs collected from a statemachine.Output.
// Observers see every step's output (placements, completions, events)
// before the fabric takes its packets, which is where fabric/workload
// checks invariants.
//
// # Model
//
// Each directed link is an output queue at a fixed rate, modelled by
// virtual finish times, so a hop costs one event and no event is needed per
// departure. Switch queues trim trimmable data above TrimBytes (payload
// stripped, DSCP rewritten to the profile's TRIMMED, or TRIMMED_LASTHOP on
// the last hop, header forwarded on a strict-priority lane with the control
// class), drop what does not fit QueueBytes, and ECN-mark above ECNMin with
// a probability rising to 1 at ECNMax, on every hop but the last (WP §2.1).
// Impairment rules, applied where a packet leaves its first switch, add
// random loss, blackholes, duplication, reordering delays and jitter,
// matched by plane, path, source, destination, EV, PSN and class (data or
// control, so reverse-path loss is a rule on control packets). Links, T1
// switches, ports and whole planes fail and recover at any time; a NIC
// notices its own port after LinkDetect and its peers after
// PortStatusDelay, and endpoints implementing PortStatusSetter are told.
//
// # Determinism
//
// Time is synthetic (nanoseconds; links compute in picoseconds). Events
// are ordered by time and then by creation sequence (a timing wheel of
// one-nanosecond buckets, FIFO each, with a heap beyond its horizon), so
// simultaneous events run in the order they were scheduled. All randomness
// comes from one PCG seeded with Config.Seed and is drawn in event order.
// Endpoints carry their own seeds. A run is therefore a function of (seed,
// scenario): the same inputs give the same trace, byte for byte.
//
// # Output
//
// With Config.Trace set the simulator writes an NDJSON trace — packets
// sent, trimmed, marked, duplicated, dropped (with the reason) and
// delivered, link and port changes, and every endpoint event — and hands
// every frame, encoded, to Config.Frames (a FrameSink) where it enters and
// where it leaves the fabric. The simulator knows no capture format:
// package fabric/capture's Pcapng writes the frames as a pcapng file with
// interfaces tx/planeN and rx/planeN and a comment per packet naming its
// fabric id, nodes and path; its Host writes one node's ports as a capture
// tool on that host does. Config.PlaneAddresses gives every node one
// address per plane (PlaneAddr), as the white paper's deployment does: the
// fabric writes the plane's addresses into every packet it carries.
//
// # Cost
//
// Flights (packets in the fabric) are pooled with their payload buffers,
// events are values in a timing wheel, and tracing appends into a reused buffer:
// once the pools have grown to a run's peak, the fabric allocates nothing
// per event. Payloads are copied at injection, as a NIC's DMA reads the
// buffer when it sends, so a duplicate still in flight after its work
// request completed carries the data it was sent with.
package fabric
