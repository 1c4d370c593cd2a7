package active

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
)

// Options configure an active run.
type Options struct {
	// PICS is the implementation's conformance statement; nil builds one
	// from the features the IUT declares in hello.
	PICS *conformance.PICS
	// Profile, when set, replaces the PICS's wire profile.
	Profile *spec.Profile
	// Deviations are accepted failures; nil means none.
	Deviations *conformance.Deviations
	// Today is the date deviations expire against; zero means now (UTC).
	Today time.Time
	// Cases selects cases by ID: comma-separated path.Match patterns
	// ("MRC-LR-*,MRC-EV-BAD-101"); empty means every active case.
	Cases string
	// Seed seeds every random choice of the tester (and of the inproc
	// peer); a run is reproducible from it.
	Seed uint64
	// Timing overrides the timing profile (SyntheticTiming for the
	// inproc transport, RealTiming otherwise).
	Timing *Timing
	// Logf, when set, receives the run log as it happens.
	Logf func(format string, args ...any)
	// Progress, when set, is called once per selected case as it ends,
	// with its position (1 to total), its result and the wall time it
	// took. The wire case, whose verdict covers the whole run, comes
	// last.
	Progress func(n, total int, r *conformance.Result, took time.Duration)
	// Capture, when set, receives a pcapng capture of every frame the
	// tester sent and received, one interface per plane; CaptureName is
	// its name in the report.
	Capture     io.Writer
	CaptureName string
}

// UsageError reports options that cannot work (exit status 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return "active: " + e.Msg }

// WireCaseID is the case that collects the strict wire checks of every
// frame the IUT sends during the run.
const WireCaseID = "MRC-WIRE-IUT-101"

// Select returns the active cases whose IDs match patterns (see
// Options.Cases).
func Select(patterns string) ([]Case, error) {
	all := Cases()
	if strings.TrimSpace(patterns) == "" {
		return all, nil
	}
	var out []Case
	for _, pat := range strings.Split(patterns, ",") {
		pat = strings.TrimSpace(pat)
		if _, err := path.Match(pat, ""); err != nil {
			return nil, &UsageError{fmt.Sprintf("bad case pattern %q: %v", pat, err)}
		}
		n := 0
		for _, c := range all {
			if ok, _ := path.Match(pat, c.ID); ok && !slices.ContainsFunc(out, func(x Case) bool { return x.ID == c.ID }) {
				out = append(out, c)
				n++
			} else if ok {
				n++
			}
		}
		if n == 0 {
			return nil, &UsageError{fmt.Sprintf("pattern %q matches no active case", pat)}
		}
	}
	slices.SortFunc(out, func(a, b Case) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Run runs the selected active cases against the target and returns the
// report. An error means no report could be made: the IUT could not be
// reached or greeted, or the options are unusable.
func Run(ctx context.Context, tgt Target, opts Options) (*conformance.Report, error) {
	if err := RegistrationErr(); err != nil {
		return nil, err
	}
	started := time.Now()
	sel, err := Select(opts.Cases)
	if err != nil {
		return nil, err
	}
	s, err := greet(ctx, tgt, opts)
	if err != nil {
		return nil, err
	}
	today := opts.Today
	if today.IsZero() {
		today = time.Now().UTC()
	}
	tl := &timeline{codec: s.codec, mode: s.mode}
	capInfo, finishCapture, err := s.startCapture(opts, tl.tap)
	if err != nil {
		return nil, err
	}
	rep := &conformance.Report{
		SchemaVersion: conformance.SchemaVersion,
		Tool:          conformance.ToolInfo{Name: "mrc-conform", Version: conformance.Version, Requirements: spec.NumRequirements()},
		Mode:          conformance.Active,
		Timestamp:     started,
		Capture:       capInfo,
		PICS:          picsInfo(s.pics, s.hello, opts.PICS == nil),
		Connections:   []conformance.Connection{},
		Frames:        []conformance.Frame{},
		Timelines:     []conformance.Timeline{},
	}
	s.runCases(sel, opts, tl, rep)
	renum, err := finishCapture()
	if err != nil {
		return nil, err
	}
	renumber(rep, renum)
	finishDeviations(rep, opts.Deviations, today)
	return rep, nil
}

// greet says hello to the IUT and makes the run's session: the PICS (the
// one given, or what the IUT declares in hello, with the profile the
// options name), the IUT's addresses and the tester's, and the timing.
func greet(ctx context.Context, tgt Target, opts Options) (*session, error) {
	ctl := tgt.Control()
	hp := control.HelloParams{Client: "mrc-conform " + conformance.Version}
	if ta, ok := tgt.(interface{ TunnelAddr() string }); ok {
		hp.Tunnel = ta.TunnelAddr()
	}
	hello, err := ctl.HelloWith(ctx, hp)
	if err != nil {
		return nil, fmt.Errorf("active: hello: %w", err)
	}
	pics := opts.PICS
	if pics == nil {
		if pics, err = picsFromHello(hello); err != nil {
			return nil, err
		}
	}
	if opts.Profile != nil {
		if pics, err = pics.WithProfile(*opts.Profile); err != nil {
			return nil, &UsageError{err.Error()}
		}
	}
	s := &session{ctx: ctx, tgt: tgt, ctl: ctl, hello: hello, pics: pics, codec: pics.Codec(), mode: pics.EVModeValue(),
		seed: opts.Seed, logf: opts.Logf}
	if mode, err := evModeOf(hello.EVMode); err != nil || mode != s.mode {
		return nil, &UsageError{fmt.Sprintf("the IUT sends EV mode %q, the PICS declares %s", hello.EVMode, s.mode)}
	}
	if err := s.address(); err != nil {
		return nil, err
	}
	s.tim = runTiming(tgt, pics, opts)
	return s, nil
}

// address reads the IUT's addresses from hello, tells them to the target,
// and checks that the tester's fit them.
func (s *session) address() error {
	tgt := s.tgt
	var err error
	if s.iut, err = addrsOf(s.hello, tgt.Planes()); err != nil {
		return err
	}
	if pc, ok := tgt.(interface{ CheckPeer(netip.Addr) error }); ok {
		if err := pc.CheckPeer(s.iut.IP); err != nil {
			return err
		}
	}
	if pm, ok := tgt.(interface{ SetPeerMACs([][6]byte) }); ok {
		pm.SetPeerMACs(s.iut.MACs)
	}
	s.tester = tgt.Local()
	if len(s.tester.MACs) < tgt.Planes() || s.tester.IP.Is4() != s.iut.IP.Is4() {
		return &UsageError{fmt.Sprintf("tester addresses %v do not fit %d planes and IUT address %v", s.tester, tgt.Planes(), s.iut.IP)}
	}
	return nil
}

// runTiming is the run's timing profile: the options', else the real-time
// one (with the PICS's timer tolerance) on a real link, else the
// synthetic one.
func runTiming(tgt Target, pics *conformance.PICS, opts Options) Timing {
	switch {
	case opts.Timing != nil:
		return *opts.Timing
	case tgt.RealTime():
		var tol Time
		if v := pics.Capture.TimerToleranceNs; v != nil {
			tol = Time(*v)
		}
		return RealTiming(tol)
	}
	return SyntheticTiming()
}

// runCases runs the selected cases in order and adds their results to rep.
// The wire case, whose verdict covers every frame of the run, is completed
// (and reported to opts.Progress) last.
func (s *session) runCases(sel []Case, opts Options, tl *timeline, rep *conformance.Report) {
	wireIdx := -1
	var wireTook time.Duration
	for i := range sel {
		c := &sel[i]
		start := time.Now()
		res := s.runOne(c, tl, rep)
		s.checkDataPath(c, &res, rep.Results)
		if c.ID == WireCaseID {
			wireIdx, wireTook = len(rep.Results), time.Since(start)
		} else if opts.Progress != nil {
			n := len(rep.Results) + 1 // this case, less the deferred wire case
			if wireIdx >= 0 {
				n--
			}
			opts.Progress(n, len(sel), &res, time.Since(start))
		}
		rep.Results = append(rep.Results, res)
	}
	s.checkDataPath(nil, nil, rep.Results)
	if wireIdx >= 0 {
		s.mergeWire(&rep.Results[wireIdx])
		if opts.Progress != nil {
			opts.Progress(len(sel), len(sel), &rep.Results[wireIdx], wireTook)
		}
	}
}

// runOne runs case c, unless the PICS, the link, the IUT's address or a
// dead data path rules it out, and adds its timeline to rep.
func (s *session) runOne(c *Case, tl *timeline, rep *conformance.Report) conformance.Result {
	res := conformance.Result{Case: c.Case, Findings: []conformance.Finding{}}
	switch ok, why := picsApplies(s.pics, &c.Case); {
	case slices.Contains(s.pics.UnsupportedCases, c.ID):
		res.Verdict, res.Reason = conformance.NotSupported, "the PICS lists this case as unsupported"
	case !ok:
		res.Verdict, res.Reason = conformance.NotApplicable, why
	case c.MinPlanes > s.tgt.Planes():
		res.Verdict, res.Reason = conformance.NotApplicable, fmt.Sprintf("the case needs %d planes, the link has %d", c.MinPlanes, s.tgt.Planes())
	case c.IPv6 && !s.iut.IP.Is6():
		res.Verdict, res.Reason = conformance.NotApplicable, fmt.Sprintf("the case needs the IUT on an IPv6 address, it has %v", s.iut.IP)
	case s.deadPath != "":
		res.Verdict, res.Reason = conformance.Error, "not run: "+s.deadPath
	default:
		if s.logf != nil {
			s.logf("%s: %s", c.ID, c.Title)
		}
		tl.take() // frames between cases belong to none
		lost := s.lostFrames()
		res, _ = s.runCase(s.ctx, c)
		if n := s.lostFrames() - lost; n > 0 && c.ID != WireCaseID && slices.Contains(dataRoles, c.Role) {
			undecidedByLoss(&res, n)
		}
		s.delayed = nil
		if c.ID != WireCaseID {
			if t, ok := caseTimeline(&res, tl.take()); ok {
				rep.Timelines = append(rep.Timelines, t)
			}
		}
		if s.logf != nil {
			s.logf("%s: %s — %s", c.ID, res.Verdict, res.Reason)
		}
	}
	return res
}

// A FrameLoser is a target that counts the frames its data path lost
// before the cases saw them (SocketTarget.LostFrames).
type FrameLoser interface {
	LostFrames() uint64
}

// lostFrames returns the target's count of frames its data path lost, 0
// when it keeps none.
func (s *session) lostFrames() uint64 {
	if l, ok := s.tgt.(FrameLoser); ok {
		return l.LostFrames()
	}
	return 0
}

// undecidedByLoss makes the FAIL of a case during which the tester lost n
// frames on its data path INCONCLUSIVE: a frame the case never saw may be
// what it failed for. Only data cases are passed here, not the wire case,
// which judges each frame by its own fields.
func undecidedByLoss(res *conformance.Result, n uint64) {
	if res.Verdict != conformance.Fail {
		return
	}
	why := fmt.Sprintf("the tester's data path lost %d frames during the case (its queues were full), which the failure may rest on", n)
	res.Verdict, res.Reason = conformance.Inconclusive, why+": "+res.Reason
	for i := range res.Findings {
		if f := &res.Findings[i]; f.Verdict == conformance.Fail {
			f.Verdict, f.Observed = conformance.Inconclusive, f.Observed+" (undecidable: "+why+")"
		}
	}
}

// finishDeviations applies the deviations in force today and finalizes
// rep's summary.
func finishDeviations(rep *conformance.Report, devs *conformance.Deviations, today time.Time) {
	active, expired := devs.Resolve(today)
	rep.Deviations = conformance.DeviationsInfo{Date: today.Format(time.DateOnly), List: []conformance.DeviationInfo{}}
	if devs != nil {
		rep.Deviations.File, rep.Deviations.SHA256 = devs.File, devs.SHA
	}
	rep.Finalize(active, expired)
}

// dataRoles are the roles whose cases exchange frames with the IUT.
var dataRoles = []Role{RoleResponder, RoleRequester, RoleEndpoint, RoleWire}

// checkDataPath finds a dead data path in a real-time run: no frame from
// the IUT has ever reached the tester. That is a setup fault (a wrong
// --peer, --local or --iface, a firewall), not a device failure: once a
// data case ends FAIL, INCONCLUSIVE or ERROR without one frame from the
// IUT, that case and every data case run before it become ERROR and the
// rest are not run. At the end of the run (c nil) a run whose data cases
// all passed without one frame from the IUT is voided the same way.
func (s *session) checkDataPath(c *Case, res *conformance.Result, done []conformance.Result) {
	if s.deadPath != "" || s.rxFrames > 0 || !s.tgt.RealTime() {
		return
	}
	if c != nil {
		if !slices.Contains(dataRoles, c.Role) || s.deadPath != "" {
			return
		}
		switch res.Verdict {
		case conformance.NotApplicable, conformance.NotSupported:
			return
		}
		s.dataRan = append(s.dataRan, len(done))
		if res.Verdict == conformance.Pass {
			return
		}
	} else if len(s.dataRan) == 0 {
		return
	}
	s.deadPath = fmt.Sprintf("setup fault: not one frame from the IUT has reached the tester over the %s data path; check the IUT's data address (--peer, --local, --iface) and that it sends to the tester", s.tgt.Name())
	void := func(r *conformance.Result) {
		// Its findings rest on frames that never came: drop them.
		r.Verdict, r.Reason = conformance.Error, fmt.Sprintf("%s (the case ended %s: %s)", s.deadPath, r.Verdict, r.Reason)
		r.Findings, r.FindingCount = []conformance.Finding{}, 0
	}
	for _, i := range s.dataRan {
		if i < len(done) {
			void(&done[i])
		} else {
			void(res)
		}
	}
}

// mergeWire adds the wire observations of the whole run to the wire case.
func (s *session) mergeWire(r *conformance.Result) {
	switch r.Verdict {
	case conformance.Error, conformance.NotSupported, conformance.NotApplicable:
		return
	}
	w := &s.wire
	r.Checked += w.ok + w.total
	r.FindingCount += w.total
	for _, f := range w.findings {
		if len(r.Findings) < conformance.MaxFindings {
			r.Findings = append(r.Findings, f)
		}
	}
	switch {
	case w.total > 0:
		r.Verdict = conformance.Fail
		r.Reason = fmt.Sprintf("%d of %d frames the IUT sent break a wire rule", w.total, w.ok+w.total)
	case r.Verdict == conformance.Inconclusive && w.ok > 0, r.Verdict == conformance.Pass:
		r.Verdict = conformance.Pass
		r.Reason = fmt.Sprintf("%d frames the IUT sent, all well formed", w.ok)
	}
}

// ExitCode is the process exit status for a report: the report's own
// (conformance.Summary.ExitCode), which its text form prints.
func ExitCode(rep *conformance.Report) int { return rep.ExitCode() }

func picsApplies(p *conformance.PICS, c *conformance.Case) (bool, string) {
	for _, f := range c.Features {
		want := !strings.HasPrefix(f, "!")
		name := strings.TrimPrefix(f, "!")
		if p.Has(name) != want {
			if want {
				return false, "the PICS does not declare feature " + name
			}
			return false, "the PICS declares feature " + name + ", which this case excludes"
		}
	}
	return true, ""
}

// picsFromHello builds the PICS the IUT declares about itself.
func picsFromHello(h *control.HelloResult) (*conformance.PICS, error) {
	doc := map[string]any{"pics_version": conformance.PICSVersion, "features": map[string]bool{},
		"implementation": h.Implementation}
	feats := doc["features"].(map[string]bool)
	for _, f := range h.Features {
		if _, ok := conformance.FeatureDocs[f]; ok {
			feats[f] = true
		}
	}
	if h.EVMode != "" {
		doc["ev_mode"] = h.EVMode
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	p, err := conformance.ParsePICS(b)
	if err != nil {
		return nil, fmt.Errorf("active: the PICS the IUT declares in hello: %w", err)
	}
	return p, nil
}

func picsInfo(p *conformance.PICS, h *control.HelloResult, fromHello bool) conformance.PICSInfo {
	info := conformance.PICSInfo{File: p.File(), SHA256: p.SHA256(), Implementation: p.Implementation,
		Profile: p.Codec().Profile().Name, EVMode: strings.ToLower(p.EVModeValue().String()), Features: []string{},
		DUT: slices.Clone(p.DUT)}
	if info.Implementation == (conformance.Implementation{}) {
		hi := h.Implementation
		info.Implementation = conformance.Implementation{Vendor: hi.Vendor, Model: hi.Model, Version: hi.Version,
			Firmware: hi.Firmware, Driver: hi.Driver}
	}
	if fromHello {
		info.File, info.SHA256 = "(declared by the IUT in hello)", ""
	}
	for f, on := range p.Features {
		if on {
			info.Features = append(info.Features, f)
		}
	}
	slices.Sort(info.Features)
	return info
}

// addrsOf reads the IUT's addresses from hello.
func addrsOf(h *control.HelloResult, planes int) (Addrs, error) {
	var a Addrs
	if len(h.Ports) < planes {
		return a, &UsageError{fmt.Sprintf("the IUT has %d ports, the link %d planes", len(h.Ports), planes)}
	}
	for i := 0; i < planes; i++ {
		pt := h.Ports[i]
		ip, err := netip.ParseAddr(pt.IP)
		if err != nil {
			return a, &UsageError{fmt.Sprintf("the IUT's port %d has IP %q", pt.Port, pt.IP)}
		}
		if !ip.IsGlobalUnicast() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			return a, &UsageError{fmt.Sprintf("the IUT's port %d has IP %v, which is not a unicast address: refusing to send to it", pt.Port, ip)}
		}
		if i == 0 {
			a.IP = ip
		} else if ip != a.IP {
			return a, &UsageError{fmt.Sprintf("the IUT's ports have different IPs (%v, %v): one address per node is supported", a.IP, ip)}
		}
		hw, err := net.ParseMAC(pt.MAC)
		if err != nil || len(hw) != 6 {
			return a, &UsageError{fmt.Sprintf("the IUT's port %d has MAC %q", pt.Port, pt.MAC)}
		}
		if hw[0]&1 != 0 {
			return a, &UsageError{fmt.Sprintf("the IUT's port %d has MAC %v, which is not unicast: refusing to send to it", pt.Port, hw)}
		}
		a.MACs = append(a.MACs, [6]byte(hw))
	}
	return a, nil
}

// MaxCaptureBytes bounds the frame data a run's capture (--capture) holds
// in memory until it is written; later frames are left out, and the
// capture's notes say so.
const MaxCaptureBytes = 128 << 20

// captureLimit is MaxCaptureBytes; tests lower it.
var captureLimit = MaxCaptureBytes

// startCapture installs the link's tap, which calls also for every frame,
// and prepares the pcapng capture of the run. Frames are kept
// and written at the end in the order of their timestamps: the planes'
// taps report frames a little out of order, and a capture must show the
// wire's order. The finish function returns the renumbering from tap
// sequence numbers to frame numbers in the file.
func (s *session) startCapture(opts Options, also func(Frame)) (*conformance.CaptureInfo, func() (map[int]int, error), error) {
	if opts.Capture == nil {
		s.tgt.SetTap(also)
		return nil, func() (map[int]int, error) { s.tgt.SetTap(nil); return nil, nil }, nil
	}
	var ifs []pcap.Interface
	info := &conformance.CaptureInfo{File: opts.CaptureName, Format: "pcapng", Interfaces: []conformance.Interface{},
		PointNodes: []conformance.PointNode{}, Notes: []string{}, TimestampsTrusted: true}
	for pl := 0; pl < s.tgt.Planes(); pl++ {
		ifs = append(ifs, pcap.Interface{Point: "tester", Plane: pl, Description: "the conformance tester's side of plane " + fmt.Sprint(pl)})
		info.Interfaces = append(info.Interfaces, conformance.Interface{ID: pl, Name: pcap.InterfaceName("tester", pl), Point: "tester", Plane: pl})
	}
	start := time.Now()
	var frames []Frame
	size, cut := 0, 0
	s.tgt.SetTap(func(f Frame) {
		also(f)
		if size += len(f.Data); size > captureLimit {
			cut++
			return
		}
		frames = append(frames, f)
	})
	return info, func() (map[int]int, error) {
		s.tgt.SetTap(nil)
		slices.SortStableFunc(frames, func(a, b Frame) int { return cmp.Compare(a.At, b.At) })
		w, err := pcap.NewWriter(opts.Capture, ifs...)
		if err != nil {
			return nil, err
		}
		renum := make(map[int]int, len(frames))
		real := s.tgt.RealTime()
		for i, f := range frames {
			renum[f.Seq] = i + 1
			if err := w.WritePacket(frameTime(real, start, f.At), f.Plane, f.Data); err != nil {
				return nil, err
			}
		}
		info.Frames, info.MRCFrames = len(frames), len(frames)
		if err := writeDropped(w, s.tgt, info, frameTime(real, start, s.tgt.Now())); err != nil {
			return nil, err
		}
		if cut > 0 {
			info.Notes = append(info.Notes, fmt.Sprintf("the capture holds the first %d bytes of frames of the run (MaxCaptureBytes): %d later frames are not in it", captureLimit, cut))
		}
		if len(frames) > 0 {
			info.DurationNs = int64(frames[len(frames)-1].At - frames[0].At)
		}
		return renum, w.Flush()
	}, nil
}

// writeDropped writes, for a target whose tap counts the frames it lost
// (netio.Dropper), each plane's count into the capture as interface
// statistics at ts, which the passive judge reads (pcap.Interface.Dropped),
// and notes the planes that lost frames.
func writeDropped(w *pcap.Writer, tgt Target, info *conformance.CaptureInfo, ts time.Time) error {
	d, ok := tgt.(netio.Dropper)
	if !ok {
		return nil
	}
	for pl, n := range d.Dropped() {
		if pl >= tgt.Planes() {
			break
		}
		if err := w.WriteDropped(ts, pl, n); err != nil {
			return err
		}
		if n > 0 {
			info.Notes = append(info.Notes, fmt.Sprintf("the tap lost %d frames of plane %d before its reader took them (the kernel's count): the capture does not hold them", n, pl))
		}
	}
	return nil
}

// renumber rewrites the frame numbers of every finding to the capture's.
func renumber(rep *conformance.Report, renum map[int]int) {
	if renum == nil {
		return
	}
	for i := range rep.Timelines {
		evs := rep.Timelines[i].Events
		for j := range evs {
			if n, ok := renum[evs[j].Frame]; ok {
				evs[j].Frame = n
			}
		}
		slices.SortStableFunc(evs, func(a, b conformance.TimelineEvent) int { return a.Frame - b.Frame })
	}
	for i := range rep.Results {
		fs := rep.Results[i].Findings
		for j := range fs {
			if n, ok := renum[fs[j].Frame]; ok {
				fs[j].Frame = n
			}
			for k, r := range fs[j].Related {
				if n, ok := renum[r]; ok {
					fs[j].Related[k] = n
				}
			}
		}
	}
}
