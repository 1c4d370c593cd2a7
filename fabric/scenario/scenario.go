package scenario

import (
	"fmt"
	"io"
	"strings"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	sm "github.com/openmrc/mrc/statemachine"
)

// Time is synthetic time in nanoseconds.
type Time = sm.Time

const us = sm.Microsecond

// Check is one asserted outcome.
type Check struct {
	What string
	OK   bool
	// Finding names a known statemachine finding (Findings) that makes
	// this check fail today; tests then expect the failure, and report
	// when the check starts to pass.
	Finding string
}

// Findings are the open statemachine defects the scenarios expose, by ID;
// a Check naming one is expected to fail. None is open.
var Findings = map[string]string{}

// Result is one scenario's outcome.
type Result struct {
	Name  string
	Title string
	Claim string // what the white paper reports
	MRC   string // the table cell for MRC
	RC    string // the table cell for the RC baseline
	// Checks are the outcomes asserted of MRC.
	Checks []Check
	// Values holds the measured numbers by name, for tests and tools.
	Values map[string]float64
}

// OK reports whether every check passed.
func (r *Result) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

func (r *Result) check(what string, ok bool) { r.Checks = append(r.Checks, Check{What: what, OK: ok}) }

func (r *Result) set(name string, v float64) {
	if r.Values == nil {
		r.Values = map[string]float64{}
	}
	r.Values[name] = v
}

// Options are what a caller may add to a run.
type Options struct {
	// Trace, when set, receives the NDJSON trace of the scenario's main
	// MRC run, and Frames its frames (capture.NewPcapng writes a pcapng).
	Trace  io.Writer
	Frames fabric.FrameSink
	// PlaneAddresses gives every node one IPv6 address per plane
	// (fabric.Config.PlaneAddresses) in the main MRC run.
	PlaneAddresses bool
}

// Scenario is one experiment.
type Scenario struct {
	Name  string
	Title string
	Run   func(seed uint64, o Options) (*Result, error)
}

// All returns the scenarios in table order.
func All() []Scenario {
	return []Scenario{
		{"ev-loss", "(a) 16 EVs, 20 % drop on one EV", EVLoss},
		{"t1-down", "(b) a T1 switch stops forwarding (¼ of paths)", T1Down},
		{"plane-down", "(c) one plane down", PlaneDown},
		{"incast", "(d) 7→1 incast with a victim flow", Incast},
		{"loss", "(e) random loss 0.1 % and 1 %", RandomLoss},
	}
}

// Lookup returns the scenario with the given name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Table writes results as a Markdown table.
func Table(w io.Writer, rs []*Result) error {
	var b strings.Builder
	b.WriteString("| Scenario | MRC | RC baseline (go-back-N) | White paper |\n|---|---|---|---|\n")
	for _, r := range rs {
		mark := "✓"
		if !r.OK() {
			var bad []string
			for _, c := range r.Checks {
				if !c.OK {
					s := c.What
					if c.Finding != "" {
						s += ": finding " + c.Finding
					}
					bad = append(bad, s)
				}
			}
			mark = "✗ (not met: " + strings.Join(bad, "; ") + ")"
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s | %s |\n", r.Title, r.MRC, mark, r.RC, r.Claim)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// setup is one run's fabric and workload.
type setup struct {
	seed      uint64
	nodes     int
	perT0     int
	planes    int
	paths     int
	transport workload.Transport
	mutate    func(*workload.Options)
	opts      Options
}

const bin = 10 * us

func (st setup) harness() (*workload.Harness, error) {
	m, err := fabric.NewSRv6Mapper(fabric.DefaultSRv6Template())
	if err != nil {
		return nil, err
	}
	o := workload.Options{
		Fabric: fabric.Config{Seed: st.seed, Nodes: st.nodes, NodesPerT0: st.perT0, Planes: st.planes,
			PathsPerPlane: st.paths, Mapper: m, Trace: st.opts.Trace, Frames: st.opts.Frames,
			PlaneAddresses: st.opts.PlaneAddresses},
		Bin: bin,
	}
	o.MRC = sm.DefaultConfig(st.seed)
	o.QP.MaxSendWR = 64
	o.QP.MaxRecvWR = 64
	if st.mutate != nil {
		st.mutate(&o)
	}
	return workload.New(o)
}

// Stream parameters: 256 KiB writes, 16 outstanding per connection (4 MiB,
// several bandwidth-delay products), every 8th a WRITE WITH IMM.
const (
	wrSize  = 256 << 10
	wrDepth = 16
	immN    = 8
)

// gbps converts bytes over a duration to Gb/s.
func gbps(bytes uint64, d Time) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) * 8 / float64(d)
}

// rate is a connection's goodput in Gb/s over [from, to).
func rate(c *workload.Conn, from, to Time) float64 {
	var n uint64
	for b := int(from / bin); b < int(to/bin) && b < len(c.Series); b++ {
		n += c.Series[b]
	}
	return gbps(n, to-from)
}

// recovery returns how long after t0 the goodput, averaged over a window
// of w, first reaches frac of ref and, averaged from there to the end,
// stays there; Never if it does not.
func recovery(c *workload.Conn, t0, end, w Time, ref, frac float64) Time {
	for t := t0; t+w <= end; t += bin {
		if rate(c, t, t+w) >= frac*ref && rate(c, t, end) >= frac*ref {
			return t - t0
		}
	}
	return sm.Never
}

// qpErrors counts the QP pairs of a connection with either end in ERROR.
func qpErrors(h *workload.Harness, c *workload.Conn) int {
	n := 0
	for i, id := range c.Req {
		if q, p := h.QP(id), h.QP(c.Rsp[i]); q != nil && (q.State() == sm.StateError || p.State() == sm.StateError) {
			n++
		}
		if q, p := h.RCQP(id), h.RCQP(c.Rsp[i]); q != nil && (q.Failed() || p.Failed()) {
			n++
		}
	}
	return n
}

func pct(x float64) string { return fmt.Sprintf("%.0f %%", 100*x) }

func micro(t Time) string {
	if t == sm.Never {
		return "never"
	}
	return fmt.Sprintf("%d µs", t/us)
}

// flushErr is the first error of a run's trace or capture.
func flushErr(h *workload.Harness) error { return h.Sim.Flush() }
