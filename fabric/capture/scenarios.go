package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	"github.com/openmrc/mrc/pcap"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Scenario is a short simulator run with one impairment, small
// enough (a few hundred frames) to keep as evidence in a test corpus and
// to open in Wireshark: pcap/testdata/scenarios holds one capture per
// scenario, written by `mrc-sim capture`.
//
// Every capture scenario runs the same workload — node 0 writes 8 × 4 KiB
// (every fourth with immediate data) into node 1 over a 2-plane × 2-path
// fabric with 256-byte packets — so the captures differ only by the
// impairment. Evidence checks that the capture shows it on the wire.
type Scenario struct {
	Name  string
	Title string
	// Addressing says how nodes are addressed and where the capture is
	// taken; callers may change it before Write and Check.
	Addressing Addressing
	// impair sets up the fabric and applies the impairment at time 0.
	fabric func(*fabric.Config)
	impair func(h *workload.Harness) error
	// evidence checks the decoded capture shows the impairment.
	evidence func(e *Evidence) error
}

// Addressing is a capture scenario's addressing and capture point.
type Addressing struct {
	// PlaneAddresses gives each node one IPv6 address per plane
	// (fabric.PlaneAddr), as in the white paper's deployment.
	PlaneAddresses bool
	// Host, when set, captures on one node's ports as a capture tool on
	// that host would (Host); nil captures at the fabric's
	// edges, interfaces tx/planeN and rx/planeN.
	Host *HostConfig
	// DistinctQPNs numbers node 0's QP 0x101 and node 1's 0x201
	// (workload.Options.QPNSpan), so that a frame's destination QP names
	// the end it is for; otherwise both are 0x101.
	DistinctQPNs bool
}

// Capture workload.
const (
	capWRs   = 8
	capSize  = 4096
	capMTU   = 256
	capLimit = 20 * sm.Millisecond
)

// Scenarios returns the capture scenarios, one per impairment the fabric
// models.
func Scenarios() []Scenario {
	slow := func(k fabric.LinkKind, bps int64) func(h *workload.Harness) error {
		return func(h *workload.Harness) error { return h.Sim.SetLinkRate(k, 0, 0, 0, bps) }
	}
	rule := func(set func(r *fabric.Rule)) func(h *workload.Harness) error {
		return func(h *workload.Harness) error {
			r := fabric.NewRule()
			set(&r)
			_, err := h.Sim.AddRule(r)
			return err
		}
	}
	return []Scenario{
		{Name: "loss", Title: "10 % random loss of data packets: SACK gaps, selective retransmissions (LR-RTX-1, LR-RTX-4, LR-TMR-5)",
			impair: rule(func(r *fabric.Rule) { r.Class, r.Drop = fabric.DataPackets, 0.1 }),
			evidence: func(e *Evidence) error {
				return e.need("data packets lost", e.Lost, "retransmitted data packets", e.Retransmits)
			}},
		{Name: "trim", Title: "a congested T0 uplink trims packets mid-fabric: NACK TRIMMED, retransmission, SKIP (WIRE-DSCP-2, LR-NACK-1, EV-ST-3)",
			fabric: func(c *fabric.Config) { c.TrimBytes, c.ECNMin = 1024, -1 },
			impair: slow(fabric.LinkT0Up, 5e9),
			evidence: func(e *Evidence) error {
				return e.need("trimmed packets (DSCP TRIMMED)", e.Trimmed, "NACKs TRIMMED", e.NACKs[wire.NACKTrimmed],
					"retransmitted data packets", e.Retransmits)
			}},
		{Name: "trim-lasthop", Title: "a slow last hop trims packets: NACK TRIMMED_LASTHOP, the EV stays GOOD (WIRE-DSCP-2, LR-NACK-1)",
			fabric: func(c *fabric.Config) { c.TrimBytes, c.ECNMin = 1024, -1 },
			impair: func(h *workload.Harness) error { return h.Sim.SetLinkRate(fabric.LinkLastHop, 0, 1, 0, 5e9) },
			evidence: func(e *Evidence) error {
				return e.need("packets trimmed on the last hop", e.TrimmedLastHop, "NACKs TRIMMED_LASTHOP",
					e.NACKs[wire.NACKTrimmedLastHop])
			}},
		{Name: "ecn", Title: "a congested T0 uplink marks CE: SACKs with m = SKIP_ONCE (RSP-SACK-3, EV-ST-2)",
			fabric: func(c *fabric.Config) { c.TrimBytes, c.ECNMin, c.ECNMax = -1, 512, 2048 },
			impair: slow(fabric.LinkT0Up, 5e9),
			evidence: func(e *Evidence) error {
				return e.need("CE-marked data packets", e.CE, "SACKs with m = SKIP_ONCE", e.SkipOnce)
			}},
		{Name: "reorder", Title: "30 % of data packets delayed by 1–3 µs: packets overtaken on their own path, placed out of order (RSP-RCV-1)",
			impair: rule(func(r *fabric.Rule) { r.Class, r.Delay, r.DelayBy, r.Jitter = fabric.DataPackets, 0.3, 1000, 2000 }),
			evidence: func(e *Evidence) error {
				return e.need("data packets overtaken on their own EV", e.Reordered)
			}},
		{Name: "duplicate", Title: "10 % of data packets duplicated: placed once, acknowledged again (RSP-DUP-1)",
			impair: rule(func(r *fabric.Rule) { r.Class, r.Dup, r.DupDelay = fabric.DataPackets, 0.1, 500 }),
			evidence: func(e *Evidence) error {
				return e.need("duplicate receptions", e.Duplicates)
			}},
		{Name: "blackhole", Title: "one path of plane 0 black-holed: timeouts, retransmission elsewhere, reliability probes (EV-ST-5, EV-PRB-1)",
			impair: rule(func(r *fabric.Rule) { r.Plane, r.Path, r.Class, r.Drop = 0, 0, fabric.DataPackets, 1 }),
			evidence: func(e *Evidence) error {
				return e.need("data packets lost", e.Lost, "retransmitted data packets", e.Retransmits,
					"reliability probes", e.Probes)
			}},
		{Name: "plane-down", Title: "plane 1 fails after the first write: traffic moves to plane 0 (EV-PORT-1, EP-PSU-3)",
			impair: func(h *workload.Harness) error {
				h.Sim.At(2*sm.Microsecond, func() { _ = h.Sim.SetPlaneUp(1, false) })
				return nil
			},
			evidence: func(e *Evidence) error {
				if err := e.need("data packets sent on plane 1 before the failure", e.PlaneData[1]); err != nil {
					return err
				}
				if e.LateOnPlane1 > 0 {
					return fmt.Errorf("%d data packets sent on the failed plane 1 more than 30 µs after it failed", e.LateOnPlane1)
				}
				return nil
			}},
		{Name: "reverse-loss", Title: "30 % loss of SACKs and NACKs: later cumulative acknowledgements cover the lost ones (LR-SACK-1)",
			impair: rule(func(r *fabric.Rule) { r.Class, r.Drop = fabric.ControlPackets, 0.3 }),
			evidence: func(e *Evidence) error {
				if e.AcksSent < 0 {
					return errors.New("acknowledgement loss is not measurable at one capture point")
				}
				if e.AcksSent <= e.AcksReceived {
					return fmt.Errorf("no acknowledgement lost: %d sent, %d received", e.AcksSent, e.AcksReceived)
				}
				return nil
			}},
		{Name: "perplane-loss", Title: "the loss scenario with one IPv6 address per node and plane (fd00:P::N+1): one QP pair across planes whose addresses differ",
			Addressing: Addressing{PlaneAddresses: true, DistinctQPNs: true},
			impair:     rule(func(r *fabric.Rule) { r.Class, r.Drop = fabric.DataPackets, 0.1 }),
			evidence: func(e *Evidence) error {
				return e.need("data packets lost", e.Lost, "retransmitted data packets", e.Retransmits)
			}},
		{Name: "dumpcap-loss", Title: "the per-plane loss scenario captured on node 1's ports as dumpcap -i eth1 -i eth2 writes it: no plane in the interface names, runs of frames per interface out of time order",
			Addressing: Addressing{PlaneAddresses: true, DistinctQPNs: true, Host: &HostConfig{Node: 1, Run: DumpcapRun}},
			impair:     rule(func(r *fabric.Rule) { r.Class, r.Drop = fabric.DataPackets, 0.1 }),
			evidence: func(e *Evidence) error {
				return e.need("retransmitted data packets received", e.Retransmits, "SACK holes", e.SACKHoles,
					"frames earlier than the frame before them", e.OutOfOrder)
			}},
	}
}

// Lookup finds a capture scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, c := range Scenarios() {
		if c.Name == name {
			return c, true
		}
	}
	return Scenario{}, false
}

// Write runs the scenario with seed and writes its pcapng (interfaces
// tx/planeN and rx/planeN, or as c.Addressing.Host says) to w. It fails if a write does not complete,
// a QP fails or the harness sees a broken invariant.
func (c Scenario) Write(seed uint64, w io.Writer) error {
	var prof = sm.EVProfile{ID: 1, ActivePerPlane: 2, MinActive: 1}
	for pl := 0; pl < 2; pl++ {
		for k := 0; k < 4; k++ {
			// SRv6 template: plane in bits 13-11, T0 uplink in bits 7-0.
			prof.EVs = append(prof.EVs, sm.EVEntry{Value: uint32(pl)<<11 | uint32(k), Port: uint8(pl + 1)})
		}
	}
	m, err := fabric.NewSRv6Mapper(fabric.DefaultSRv6Template())
	if err != nil {
		return err
	}
	o := workload.Options{
		Fabric: fabric.Config{Seed: seed, Nodes: 2, Planes: 2, PathsPerPlane: 2, Mapper: m, Frames: NewPcapng(w),
			PlaneAddresses: c.Addressing.PlaneAddresses},
		Check: true,
		Attr:  workload.DefaultAttr(),
	}
	if c.Addressing.Host != nil {
		o.Fabric.Frames = NewHost(w, *c.Addressing.Host)
	}
	if c.Addressing.DistinctQPNs {
		o.QPNSpan = 0x100
	}
	if c.fabric != nil {
		c.fabric(&o.Fabric)
	}
	o.Attr.PathMTU = capMTU
	o.MRC = sm.DefaultConfig(seed)
	o.MRC.EVProfiles = []sm.EVProfile{prof}
	h, err := workload.New(o)
	if err != nil {
		return err
	}
	if _, err := h.Connect(0, 1, workload.MRC); err != nil {
		return err
	}
	if err := c.impair(h); err != nil {
		return err
	}
	n := capSize / capMTU
	for i := 0; i < capWRs; i++ {
		if _, err := h.Post(workload.WR{Conn: 0, Imm: i%4 == 3, Chunk: i * n, Size: capSize}); err != nil {
			return err
		}
	}
	if !h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, capLimit) {
		return fmt.Errorf("scenario %s: %d work requests still outstanding after %d µs", c.Name, h.Outstanding(), capLimit/sm.Microsecond)
	}
	if v := h.Violations(); len(v) > 0 {
		return fmt.Errorf("scenario %s: %v", c.Name, v[0])
	}
	if h.Failed() {
		return fmt.Errorf("scenario %s: a QP failed", c.Name)
	}
	if cc := h.Conns()[0]; cc.Completed != capWRs {
		return fmt.Errorf("scenario %s: %d of %d writes completed", c.Name, cc.Completed, capWRs)
	}
	return h.Sim.Flush()
}

// Evidence is what a capture scenario's pcapng shows, counted from the
// decoded frames alone. A host capture (Addressing.Host) sees each
// frame once, at one end: its frames count as both sent and received,
// and Lost, Duplicates and the acknowledgement counts, which compare the
// two ends, are not measured (−1).
type Evidence struct {
	Frames, Malformed, Violations int
	Retransmits                   int // data frames sent (tx) with the RTX flag
	Trimmed, TrimmedLastHop       int // trimmed data frames received (rx)
	CE                            int // CE-marked data frames received
	Probes                        int // reliability probes sent
	SACKHoles                     int // runs of missing PSNs in SACKs sent
	SkipOnce                      int // SACKs sent with m = SKIP_ONCE
	NACKs                         map[wire.NACKReason]int
	// Reordered counts first transmissions received after a higher PSN
	// sent on the same EV: one EV is one path, and a path is FIFO unless
	// the fabric delays packets.
	Reordered int
	// Lost and Duplicates compare the data frames sent (tx) with those
	// received (rx), by PSN and RTX flag.
	Lost, Duplicates       int
	AcksSent, AcksReceived int // SACK/ACK/NACK frames at tx and at rx
	PlaneData              [2]int
	LateOnPlane1           int // data sent on plane 1 more than 30 µs after 2 µs
	// OutOfOrder counts frames earlier than the frame before them in the
	// file (a capture tool's runs per interface).
	OutOfOrder int
	// DestQPs counts frames by destination QP and WriteQPs data frames:
	// one QP pair, on every plane, is two destinations, one of them
	// receiving the writes.
	DestQPs, WriteQPs map[uint32]int
	// PlaneAddrs counts frames by plane and source address.
	PlaneAddrs map[PlaneSource]int
	// WrongPlaneAddr counts frames, under per-plane addressing, whose
	// source or destination is not one of the two nodes' addresses on the
	// frame's plane.
	WrongPlaneAddr int
}

// PlaneSource is a source address seen on a plane.
type PlaneSource struct {
	Plane int
	Addr  netip.Addr
}

// need requires each named count to be positive; a count that is not
// measured (−1) is passed over, but not all of them.
func (e *Evidence) need(kv ...any) error {
	var missing []error
	var unmeasured []any
	for i := 0; i+1 < len(kv); i += 2 {
		switch n := kv[i+1].(int); {
		case n == 0:
			missing = append(missing, fmt.Errorf("no %s", kv[i]))
		case n < 0:
			unmeasured = append(unmeasured, kv[i])
		}
	}
	if len(unmeasured) == len(kv)/2 {
		return fmt.Errorf("none of %v is measurable at one capture point", unmeasured)
	}
	return errors.Join(missing...)
}

// Check decodes capture and checks that it is well formed (no malformed
// frame, no strict-check violation), carries one QP pair, under per-plane
// addressing carries each plane's own addresses on both planes, and shows
// the scenario's impairment.
func (c Scenario) Check(capture []byte) (*Evidence, error) {
	r, err := pcap.NewReader(bytes.NewReader(capture))
	if err != nil {
		return nil, err
	}
	sc := &scan{c: c, e: &Evidence{NACKs: map[wire.NACKReason]int{}, DestQPs: map[uint32]int{}, WriteQPs: map[uint32]int{},
		PlaneAddrs: map[PlaneSource]int{}}, oneEnd: c.Addressing.Host != nil,
		sent: map[psnKey]int{}, rcvd: map[psnKey]int{}, maxPSN: map[uint32]uint32{}, first: true}
	d := &pcap.Decoder{Codec: wire.Default}
	if err := d.Each(r, sc.record); err != nil {
		return sc.e, err
	}
	e := sc.e
	if sc.oneEnd {
		e.Lost, e.Duplicates, e.AcksSent, e.AcksReceived = -1, -1, -1, -1
	} else {
		for k, n := range sc.sent {
			e.Lost += max(0, n-sc.rcvd[k])
		}
		for k, n := range sc.rcvd {
			e.Duplicates += max(0, n-sc.sent[k])
		}
	}
	errs := c.wellFormed(e)
	if err := c.evidence(e); err != nil {
		errs = append(errs, fmt.Errorf("the capture does not show the impairment: %w", err))
	}
	return e, errors.Join(errs...)
}

// psnKey tells a first transmission of a PSN from its retransmissions.
type psnKey struct {
	psn uint32
	rtx bool
}

// scan is Check's pass over the capture: the evidence so far, the writes
// sent and received per PSN (to count losses and duplicates), and the
// time of the first and the previous frame. oneEnd is a capture at one
// host, which sees both directions on every interface.
type scan struct {
	c          Scenario
	e          *Evidence
	oneEnd     bool
	sent, rcvd map[psnKey]int
	maxPSN     map[uint32]uint32 // per EV, of first transmissions received
	first      bool
	t0, prev   int64
}

// record counts one frame.
func (s *scan) record(rec *pcap.Record) error {
	e := s.e
	e.Frames++
	if rec.Err != nil || !rec.MRC() {
		e.Malformed++
		return nil
	}
	e.Violations += len(rec.Violations)
	ts := rec.Timestamp.UnixNano()
	if s.first {
		s.t0, s.prev, s.first = ts, ts, false
	}
	if ts < s.prev {
		e.OutOfOrder++
	}
	s.prev = ts
	point, plane := "", -1
	if rec.Iface != nil {
		point, plane = rec.Iface.Point, rec.Iface.Plane
	}
	if s.oneEnd {
		plane = rec.Interface // one interface per plane, in plane order
	}
	p := &rec.Packet
	s.c.planeAddr(e, plane, p)
	op := p.BTH.Opcode
	tx := point == "tx"
	e.DestQPs[p.BTH.DestQP]++
	switch {
	case op.IsWrite():
		s.write(rec, tx, plane, ts-s.t0)
	case op == wire.OpProbe:
		if tx || s.oneEnd {
			e.Probes++
		}
	case op == wire.OpSACK || op == wire.OpNACK || op == wire.OpAcknowledge:
		s.feedback(p, tx)
	}
	return nil
}

// write counts a write packet: sent where it leaves (tx), received where
// it arrives; at nanoseconds at since the first frame.
func (s *scan) write(rec *pcap.Record, tx bool, plane int, at int64) {
	e, p := s.e, &rec.Packet
	k := psnKey{p.BTH.PSN, p.BTH.Retransmit}
	e.WriteQPs[p.BTH.DestQP]++
	if tx || s.oneEnd {
		s.sent[k]++
		if p.BTH.Retransmit {
			e.Retransmits++
		}
		if plane >= 0 && plane < 2 {
			e.PlaneData[plane]++
		}
		if plane == 1 && at > 32_000 {
			e.LateOnPlane1++
		}
	}
	if !tx || s.oneEnd {
		e.received(p, rec.EV, s.maxPSN)
		s.rcvd[k]++
	}
}

// feedback counts an ACK, SACK or NACK: received where it arrives, and
// its holes, SKIP_ONCE marks and NACK reasons where it is sent.
func (s *scan) feedback(p *wire.Packet, tx bool) {
	e := s.e
	if !tx && !s.oneEnd {
		e.AcksReceived++
		return
	}
	e.AcksSent++
	switch p.BTH.Opcode {
	case wire.OpSACK:
		holes, _ := pcap.SACKGaps(&p.SETH)
		e.SACKHoles += holes
		if p.SETH.M == wire.MSkipOnce {
			e.SkipOnce++
		}
	case wire.OpNACK:
		e.NACKs[p.NETH.Reason]++
	}
}

// received counts a data frame at its receiving end.
func (e *Evidence) received(p *wire.Packet, ev uint32, maxPSN map[uint32]uint32) {
	if p.Trimmed {
		if p.TrimmedLastHop {
			e.TrimmedLastHop++
		} else {
			e.Trimmed++
		}
	}
	if p.ECN() == 3 {
		e.CE++
	}
	if !p.BTH.Retransmit {
		if m, ok := maxPSN[ev]; ok && p.BTH.PSN < m {
			e.Reordered++
		}
		maxPSN[ev] = max(maxPSN[ev], p.BTH.PSN)
	}
}

// planeAddr records a frame's source address on its plane and, under
// per-plane addressing, whether both its addresses are the plane's.
func (c Scenario) planeAddr(e *Evidence, plane int, p *wire.Packet) {
	src, dst := netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst)
	if p.IsIPv6 {
		src, dst = netip.AddrFrom16(p.IP6.Src), netip.AddrFrom16(p.IP6.Dst)
	}
	e.PlaneAddrs[PlaneSource{plane, src}]++
	if !c.Addressing.PlaneAddresses {
		return
	}
	a, b := fabric.PlaneAddr(0, plane, true), fabric.PlaneAddr(1, plane, true)
	if !(src == a && dst == b || src == b && dst == a) {
		e.WrongPlaneAddr++
	}
}

// wellFormed lists what makes a capture unfit whatever its impairment.
func (c Scenario) wellFormed(e *Evidence) []error {
	var errs []error
	if e.Malformed > 0 || e.Violations > 0 {
		errs = append(errs, fmt.Errorf("%d malformed frames, %d strict-check violations", e.Malformed, e.Violations))
	}
	if e.Frames == 0 {
		errs = append(errs, errors.New("empty capture"))
	}
	if len(e.WriteQPs) > 1 || len(e.DestQPs) > 2 {
		errs = append(errs, fmt.Errorf("more than one QP pair: data to QPs %v, frames to QPs %v", e.WriteQPs, e.DestQPs))
	}
	if c.Addressing.PlaneAddresses {
		if e.WrongPlaneAddr > 0 {
			errs = append(errs, fmt.Errorf("%d frames do not carry their plane's addresses", e.WrongPlaneAddr))
		}
		if e.PlaneData[0] == 0 || e.PlaneData[1] == 0 {
			errs = append(errs, fmt.Errorf("data frames per plane %v: per-plane addressing needs traffic on both", e.PlaneData))
		}
	}
	return errs
}
