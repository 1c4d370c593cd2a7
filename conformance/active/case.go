package active

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/wire"
)

// Role says which side of the protocol the IUT plays in a case.
type Role string

// Roles.
const (
	RoleResponder Role = "responder" // the tester sends data, the IUT answers
	RoleRequester Role = "requester" // the IUT sends data, the tester answers
	RoleEndpoint  Role = "endpoint"  // endpoint operations on QP 0x2
	RoleControl   Role = "control"   // the IUT's control interface (verbs semantics)
	RoleWire      Role = "wire"      // the format of every frame the IUT sends
)

// Case is an active conformance case: its catalog entry, the role the IUT
// plays and the procedure.
type Case struct {
	conformance.Case
	Role Role
	// MinPlanes is the number of planes the case needs; with fewer it is
	// NOT-APPLICABLE.
	MinPlanes int
	// IPv6 cases need the IUT on an IPv6 address (SRv6 encapsulation);
	// over IPv4 they are NOT-APPLICABLE.
	IPv6 bool
	// Run is the procedure; it reports through t.
	Run func(t *T) `json:"-"`
}

var (
	regMu  sync.Mutex
	reg    []*Case
	regErr error
	// caseSets build and register the built-in cases, one function per
	// group of cases (each cases_*.go file's init adds its own with
	// addCases); registerAll runs them once.
	caseSets []func()
	regOnce  sync.Once
)

// The cases are built, checked against the spec registry and added to the
// conformance catalog on first use (Cases, Select, Run, RegistrationErr,
// or conformance's whole catalog), not at the start of every program that
// imports the package: mrc-conform judge uses none of them.
func init() { conformance.RegisterLater(registerAll) }

// addCases adds a function that registers a group of cases. It is called
// from init functions.
func addCases(group func()) { caseSets = append(caseSets, group) }

func registerAll() {
	regOnce.Do(func() {
		for _, group := range caseSets {
			group()
		}
	})
}

// register adds a case to the active suite and to the conformance catalog.
// It is called from the functions given to addCases; the first error is
// kept and returned by Run and RegistrationErr.
func register(c Case) {
	c.Mode = conformance.Active
	if c.Topology == "" {
		c.Topology = "tester ↔ IUT, " + string(c.Role) + " role of the IUT"
	}
	regMu.Lock()
	defer regMu.Unlock()
	if err := conformance.Register(c.Case); err != nil && regErr == nil {
		regErr = err
		return
	}
	cc := c
	reg = append(reg, &cc)
}

// RegistrationErr returns the first error met while registering the
// built-in cases (a malformed case: a bug).
func RegistrationErr() error {
	registerAll()
	regMu.Lock()
	defer regMu.Unlock()
	return regErr
}

// Cases returns the active cases, sorted by ID.
func Cases() []Case {
	registerAll()
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Case, len(reg))
	for i, c := range reg {
		out[i] = *c
	}
	slices.SortFunc(out, func(a, b Case) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// T is the context of one running case: the IUT's control channel and
// data path, the clock, and the observations that make the verdict. Its
// methods that end the case (Fatalf, NotSupported, Require) stop the case
// goroutine like testing.T.FailNow.
type T struct {
	ctx   context.Context
	c     *Case
	s     *session
	rng   *rand.Rand
	seed  uint64
	start Time

	ok       int
	findings []conformance.Finding
	total    int
	inconc   []string
	notSupp  string
	err      error
	logs     []string
}

// stop is how the stopping methods leave the case goroutine.
func (t *T) stop() { runtime.Goexit() }

// Case returns the case being run.
func (t *T) Case() *Case { return t.c }

// Rand returns the case's random source, seeded from the run's seed and
// the case ID.
func (t *T) Rand() *rand.Rand { return t.rng }

// Now returns the current time of the link.
func (t *T) Now() Time { return t.s.tgt.Now() }

// Timing returns the timing profile of the run.
func (t *T) Timing() *Timing { return &t.s.tim }

// Planes is the number of planes of the link.
func (t *T) Planes() int { return t.s.tgt.Planes() }

// RealTime reports whether the link runs on a real clock.
func (t *T) RealTime() bool { return t.s.tgt.RealTime() }

// Lossless reports whether the link delivers every frame the IUT sends, so
// that a frame not seen was not sent. Only the in-process fabric without
// loss guarantees it.
func (t *T) Lossless() bool {
	l, ok := t.s.tgt.(interface{ Lossless() bool })
	return ok && l.Lossless()
}

// Logf records a line in the run log.
func (t *T) Logf(format string, args ...any) {
	line := fmt.Sprintf("%s %9.3fms: ", t.c.ID, float64(t.Now())/1e6) + fmt.Sprintf(format, args...)
	t.logs = append(t.logs, line)
	if t.s.logf != nil {
		t.s.logf("%s", line)
	}
}

// OK records n passing observations of the case.
func (t *T) OK(n int) { t.ok += n }

// Evidence locates a finding in the data path.
type Evidence struct {
	Frame *Frame
	PSN   *uint32
	EV    *uint32
}

// At returns Evidence for a received frame.
func At(f *RxFrame) Evidence {
	if f == nil {
		return Evidence{}
	}
	e := Evidence{Frame: &f.Frame}
	if f.Err == nil {
		psn := f.Pkt.BTH.PSN
		e.PSN = &psn
		ev := f.EV
		e.EV = &ev
	}
	return e
}

// Fail records a violation of requirement req.
func (t *T) Fail(req conformance.RequirementID, ev Evidence, expected, observed string, args ...any) {
	if len(args) > 0 {
		observed = fmt.Sprintf(observed, args...)
	}
	t.total++
	if _, ok := req.Requirement(); !ok && t.err == nil {
		// A case citing an ID the registry lacks is the tester's fault.
		t.err = &conformance.UnknownRequirementError{ID: string(req)}
	}
	f := conformance.Finding{Verdict: conformance.Fail, Requirement: req, Node: "iut", Plane: -1, TimeNs: int64(t.Now()),
		Expected: expected, Observed: observed, PSN: ev.PSN, EV: ev.EV}
	if !t.c.Strict() {
		f.Verdict = conformance.NonStrict
	}
	if ev.Frame != nil {
		f.Frame, f.TimeNs, f.Plane = ev.Frame.Seq, int64(ev.Frame.At), ev.Frame.Plane
	}
	t.Logf("%s %s: expected %s; observed %s", f.Verdict, req, expected, observed)
	if len(t.findings) < conformance.MaxFindings {
		t.findings = append(t.findings, f)
	}
}

// Check records a passing observation when cond holds and a failure of
// req otherwise; it returns cond.
func (t *T) Check(cond bool, req conformance.RequirementID, ev Evidence, expected, observed string, args ...any) bool {
	if cond {
		t.ok++
	} else {
		t.Fail(req, ev, expected, observed, args...)
	}
	return cond
}

// Inconclusive records that the tester could not create or observe a
// precondition; the case goes on.
func (t *T) Inconclusive(format string, args ...any) {
	r := fmt.Sprintf(format, args...)
	t.Logf("INCONCLUSIVE: %s", r)
	t.inconc = append(t.inconc, r)
}

// NotSupported ends the case as NOT-SUPPORTED: the IUT lacks what the
// case needs.
func (t *T) NotSupported(format string, args ...any) {
	t.notSupp = fmt.Sprintf(format, args...)
	t.Logf("NOT-SUPPORTED: %s", t.notSupp)
	t.stop()
}

// Fatalf ends the case as ERROR: a fault of the tester or its link.
func (t *T) Fatalf(format string, args ...any) {
	t.err = fmt.Errorf(format, args...)
	t.Logf("ERROR: %v", t.err)
	t.stop()
}

// Require ends the case when err is not nil: NOT-SUPPORTED when the IUT
// says it lacks the method or feature, ERROR otherwise.
func (t *T) Require(err error, what string) {
	if err == nil {
		return
	}
	if control.IsNotSupported(err) {
		t.NotSupported("%s: %v", what, err)
	}
	t.Fatalf("%s: %v", what, err)
}

// Call runs a control request that must succeed (see Require).
func (t *T) Call(method string, params, result any) {
	t.Require(t.TryCall(method, params, result), method)
}

// TryCall runs a control request and returns its error, for requests the
// IUT may refuse.
func (t *T) TryCall(method string, params, result any) error {
	return t.s.ctl.Call(t.ctx, method, params, result)
}

// Hello returns the IUT's hello answer.
func (t *T) Hello() *control.HelloResult { return t.s.hello }

// Codec returns the wire codec of the run's profile.
func (t *T) Codec() *wire.Codec { return t.s.codec }

// result turns the observations into the case's result.
func (t *T) result() conformance.Result {
	r := conformance.Result{Case: t.c.Case, Findings: t.findings, FindingCount: t.total, Checked: t.ok + t.total}
	if r.Findings == nil {
		r.Findings = []conformance.Finding{}
	}
	seed := int64(t.seed)
	r.Seed = &seed
	switch {
	case t.err != nil:
		r.Verdict, r.Reason = conformance.Error, "tester error: "+t.err.Error()
	case t.notSupp != "":
		r.Verdict, r.Reason = conformance.NotSupported, t.notSupp
	case t.total > 0 && t.c.Strict():
		r.Verdict = conformance.Fail
		r.Reason = fmt.Sprintf("%d of %d observations violate the requirement", t.total, r.Checked)
	case t.total > 0:
		r.Verdict = conformance.NonStrict
		r.Reason = fmt.Sprintf("%d of %d observations miss a SHOULD", t.total, r.Checked)
	case len(t.inconc) > 0:
		r.Verdict, r.Reason = conformance.Inconclusive, strings.Join(t.inconc, "; ")
	case t.ok > 0:
		r.Verdict, r.Reason = conformance.Pass, fmt.Sprintf("%d observations, all as required", t.ok)
	default:
		r.Verdict, r.Reason = conformance.Inconclusive, "the case made no observation"
	}
	return r
}

// runCase runs one case in its own goroutine, so that the stopping
// methods can end it, and turns a panic into an ERROR.
func (s *session) runCase(ctx context.Context, c *Case) (res conformance.Result, logs []string) {
	h := fnv64(c.ID)
	seed := s.seed ^ h
	t := &T{ctx: ctx, c: c, s: s, rng: rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909)), seed: seed}
	t.start = t.Now()
	s.caseBytes = 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				t.err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			}
		}()
		c.Run(t)
	}()
	<-done
	r := t.result()
	r.DurationNs = int64(t.Now() - t.start)
	return r, t.logs
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Addrs are a node's data-path addresses: one IP, one MAC per plane.
type Addrs struct {
	IP   netip.Addr
	MACs [][6]byte
}
