package conformance

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/openmrc/mrc/pcap"
)

// MaxInterfaces bounds the capture interfaces whose point and plane the
// judge remembers; the frames of further interfaces are resolved again
// each time (same answer, more work).
const MaxInterfaces = 256

// ifaceView is where the judge places one capture interface: its capture
// point and its fabric plane (-1 unknown).
type ifaceView struct {
	point string
	plane int
	ok    bool
}

// resolveInterface places a capture interface. Interface names are
// whatever the capture tool wrote. When the PICS's capture.points names
// the interface itself and places two or more interfaces at one node (one
// NIC port per plane, as dumpcap -i eth1 -i eth2 records them), those
// interfaces are one capture point, named by the first of them, and each
// is a plane: capture.planes says which, else the order of the names
// (eth1 before eth2 before eth10). Otherwise the interface's point and
// plane are those pcap read from its name.
func (p *PICS) resolveInterface(in *pcap.Interface) ifaceView {
	if in == nil {
		return ifaceView{point: "", plane: -1, ok: true}
	}
	node, named := p.Capture.Points[in.Name]
	if !named {
		return ifaceView{point: in.Point, plane: in.Plane, ok: true}
	}
	group := p.pointGroup(node)
	plane := in.Plane
	if pl, ok := p.Capture.Planes[in.Name]; ok {
		plane = pl
	} else if len(group) > 1 {
		plane = slices.Index(group, in.Name)
	}
	if len(group) < 2 {
		return ifaceView{point: in.Point, plane: plane, ok: true}
	}
	return ifaceView{point: group[0], plane: plane, ok: true}
}

// pointGroup returns the names capture.points places at node, in plane
// order (natural order of the names).
func (p *PICS) pointGroup(node string) []string {
	var g []string
	for name, n := range p.Capture.Points {
		if n == node {
			g = append(g, name)
		}
	}
	slices.SortFunc(g, naturalCompare)
	return g
}

// naturalCompare orders names with a numeric suffix by that number:
// eth2 before eth10.
func naturalCompare(a, b string) int {
	pa, na := splitNumber(a)
	pb, nb := splitNumber(b)
	if pa != pb || na < 0 || nb < 0 {
		return strings.Compare(a, b)
	}
	return na - nb
}

func splitNumber(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return s, -1
	}
	return s[:i], n
}

// view returns where interface id (described by in) is placed.
func (e *engine) view(id int, in *pcap.Interface) ifaceView {
	if id >= 0 && id < len(e.views) && e.views[id].ok {
		return e.views[id]
	}
	v := e.pics.resolveInterface(in)
	if id >= 0 && id < MaxInterfaces {
		for len(e.views) <= id {
			e.views = append(e.views, ifaceView{})
		}
		e.views[id] = v
	}
	return v
}

// lookahead holds a capture's first frames, before any is judged, when
// the capture has two or more interfaces: up to learnWindow of them within
// learnSpan bytes of the first, from which learnPlanes learns the planes
// (planes.go). Frames of a retaining Reader (a capture file) are held by
// reference, others copied; learnSpan bounds both.
// learnSpan is 1024 frames of a jumbo MTU (9000 bytes), and well within
// pcap.MaxRetained.
const learnSpan = 16 << 20

type lookahead struct {
	stable bool
	done   bool
	frames []pcap.Frame
	ins    []*pcap.Interface
	// ties holds the ties learnt so far, an earlier section's included
	// (learnPlanesAfter): a later section's lookahead starts with them.
	ties []planeTie
}

// next returns the lookahead of a new pcapng section, having released
// this one's frames.
func (la *lookahead) next(p *PICS, place func(*planeLearning), push func(*pcap.Frame, *pcap.Interface)) lookahead {
	la.release(p, place, push)
	return lookahead{stable: la.stable, ties: la.ties}
}

// hold holds frame f (captured on in, r's interface copy) and reports
// whether it did; false once the window is full or the capture has one
// interface. It is the test of done alone, inlined: a capture's frames
// past its first few are not held.
func (la *lookahead) hold(r *pcap.Reader, f *pcap.Frame, in *pcap.Interface) bool {
	return !la.done && la.holdFrame(r, f, in)
}

// holdFrame is hold before the lookahead is done.
func (la *lookahead) holdFrame(r *pcap.Reader, f *pcap.Frame, in *pcap.Interface) bool {
	if len(la.frames) == learnWindow || in == nil ||
		len(la.frames) > 0 && f.Offset-la.frames[0].Offset > learnSpan {
		return false
	}
	if len(la.frames) == 0 && len(r.Interfaces()) < 2 {
		la.done = true
		return false
	}
	g := *f
	g.Comments = nil // as the merger holds frames of several interfaces
	if !la.stable {
		g.Data = slices.Clone(f.Data)
	}
	la.frames = append(la.frames, g)
	la.ins = append(la.ins, in)
	return true
}

// release learns the planes from the frames held, gives what it learnt
// to place, and passes the frames on to push, once. It is the test of
// done alone, inlined, as hold.
func (la *lookahead) release(p *PICS, place func(*planeLearning), push func(*pcap.Frame, *pcap.Interface)) {
	if !la.done {
		la.learn(p, place, push)
	}
}

// learn is release before the lookahead is done.
func (la *lookahead) learn(p *PICS, place func(*planeLearning), push func(*pcap.Frame, *pcap.Interface)) {
	la.done = true
	if len(la.frames) > 0 {
		l := learnPlanesAfter(p, la.frames, la.ins, la.ties)
		la.ties = append(la.ties, l.ties...)
		place(l)
	}
	for i := range la.frames {
		push(&la.frames[i], la.ins[i])
	}
	la.frames, la.ins = nil, nil
}

// describeInterfaces lists in info every interface the capture declared,
// in every section, by its capture-wide number (ifaceTable), where the
// judge placed it, and the frames its statistics say were lost: the
// reader holds the last section's at the end, and the earlier sections'
// as each ended (PastInterfaces, numbered as the judge numbers them when
// every section held frames); and marks the capture points of interfaces
// that carry two points' frames.
func (e *engine) describeInterfaces(info *CaptureInfo, r *pcap.Reader) {
	t := e.ifaces
	if t == nil {
		t = &ifaceTable{}
	}
	t.get(r, -1, noTime) // the last section's interfaces, with frames or not
	info.bases = t.bases
	last, past := r.Interfaces(), r.PastInterfaces()
	if len(past) != t.base {
		past = nil // a section without frames: numbered apart
	}
	for g, in := range t.all {
		v := e.view(g, in)
		stats := pcap.Interface{Name: t.written[g]}
		if k := g - t.base; k >= 0 && k < len(last) {
			stats.Dropped, stats.Known = last[k].Dropped, last[k].Known
		} else if g < len(past) {
			stats.Dropped, stats.Known = past[g].Dropped, past[g].Known
		}
		info.Interfaces = append(info.Interfaces, Interface{ID: g, Name: t.written[g], Point: v.point, Plane: v.plane, Dropped: stats.Dropped})
		e.noteLost(v.point, stats)
	}
	if t.rings > 0 {
		e.note("%d of the pcapng sections began past the middle of the frames before them: taken as later files of the same capture (a ring buffer's files put together with cat), their interfaces of names declared before as the same interfaces", t.rings)
	}
	e.noteSplit(t)
	for _, g := range e.copiedTwice() {
		if g < len(t.all) && !slices.Contains(t.mixed, g) {
			t.mixed = append(t.mixed, g)
		}
	}
	slices.Sort(t.mixed)
	for _, g := range t.mixed {
		v := e.view(g, t.all[g])
		if pt := e.points[v.point]; pt != nil && pt.mixed == "" {
			pt.mixed = t.written[g]
		}
		e.note("interface %s carries two capture points' frames: it saw again at least half of the first transmissions it carried, as the captures of two hosts whose interfaces have one name carry them once merged (mergecap makes interfaces alike one; mergecap -I none keeps them apart). The judge cannot tell which host saw which frame: at capture point %s, only failures decided from a frame alone are judged, and the other observations are INCONCLUSIVE", t.written[g], v.point)
	}
}

// noteSplit marks the capture points of interfaces of one name that
// followed one another in time (ifaceTable.split), when they are two
// points: a failure at either resting on a packet not seen there is
// INCONCLUSIVE (point.split), since the packet may be in the other's
// frames. A note says so, and how to put one capture's files together;
// after maxSplitNotes pairs, one note counts the rest.
func (e *engine) noteSplit(t *ifaceTable) {
	n := 0
	for _, ab := range t.split() {
		a, b := ab[0], ab[1]
		if t.spans[a].first >= t.spans[b].last {
			a, b = b, a // a the earlier
		}
		pa, pb := e.points[e.view(a, t.all[a]).point], e.points[e.view(b, t.all[b]).point]
		if pa == nil || pb == nil || pa == pb {
			continue
		}
		why := "interface " + t.all[b].Name + " (capture point " + pb.name + ") began after the last frame of " +
			t.all[a].Name + " (capture point " + pa.name + "), of the same name"
		for _, pt := range []*point{pa, pb} {
			if pt.split == "" {
				pt.split = why
			}
		}
		if n++; n <= maxSplitNotes {
			e.note("%s: as one interface's capture in two files put together with mergecap -I none (which keeps interfaces of one name apart), they are two capture points, and a failure at either resting on a packet not seen there is INCONCLUSIVE. Put one capture's files together with cat or mergecap", why)
		}
	}
	if n > maxSplitNotes {
		e.note("%d more pairs of interfaces of one name followed one another in time, at two capture points each (as above)", n-maxSplitNotes)
	}
}

// maxSplitNotes bounds the notes noteSplit writes one by one.
const maxSplitNotes = 8

// noteLost adds the frames the capture lost on interface in, by its
// statistics, to its point's count, and notes them: a FAIL at that point
// not decided from a frame alone could rest on one of them (engine.lost).
func (e *engine) noteLost(point string, in pcap.Interface) {
	if !in.Known || in.Dropped == 0 {
		return
	}
	if pt := e.points[point]; pt != nil {
		pt.lost = satAdd(pt.lost, in.Dropped)
	}
	e.note("interface %s (capture point %s) lost %d frames by its statistics: the capture does not hold them, and findings at that point not decided from a frame alone are INCONCLUSIVE", in.Name, point, in.Dropped)
}

// lateAt counts a frame the merger judges out of timestamp order
// (merger.onLate) at its capture point: findings there not decided from a
// frame alone are INCONCLUSIVE (unseen), as where the capture lost frames.
func (e *engine) lateAt(f *pcap.Frame, in *pcap.Interface) {
	if pt, _ := e.pointOf(f.Interface, in); pt != nil {
		pt.late++
	}
}

// noteLate keeps what the merger m saw of frames out of timestamp order
// (engine.reorder, for judgeEngine's second judgement) and notes them.
func (e *engine) noteLate(m *merger) {
	e.reorder = reorderSeen{late: m.late, need: m.need, window: m.win(), frames: m.pushed, bytes: m.bytes}
	if m.late == 0 {
		return
	}
	e.note("%d frames were judged after a frame with a later timestamp: %s", m.late, lateWhy(m.win()))
	if m.need > m.win() {
		e.note("the latest of them needed a window of %d frames (Options.Reorder, mrc-conform judge --reorder; at most %d)", m.need, MaxReorderLimit)
	}
}

// reorderSeen is what a judgement's merger saw of frames out of
// timestamp order: how many it judged late, the window that would have
// put them in place (merger.need), the window it had, and the frames and
// bytes it was given, for their mean length.
type reorderSeen struct {
	late          int
	need, window  int
	frames, bytes int64
}

// wider returns the window a capture file is judged again with when
// frames came later than the default window (opts.Reorder 0): what the
// latest needed, a quarter more, at most MaxReorderLimit and what
// reorderBudget bytes of frames of the mean length hold; 0 when no
// wider window would put a late frame in place.
func (s reorderSeen) wider(opts Options) int {
	if opts.Reorder != 0 || s.late == 0 || s.need <= s.window || s.frames == 0 {
		return 0
	}
	mean := max(1, s.bytes/s.frames)
	w := min(s.need+s.need/4, MaxReorderLimit, int(reorderBudget/mean))
	if w <= s.window {
		return 0
	}
	return w
}

// satAdd is a + b, or the largest uint64 when that overflows.
func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}
