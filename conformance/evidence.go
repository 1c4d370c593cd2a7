package conformance

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

const (
	maxSnapshots   = 32   // timelines kept around failures; a capture note says when more connections failed
	timelineRing   = 512  // events remembered per connection and point
	timelineAfter  = 64   // events recorded after a failure
	timelineEvents = 1200 // events in one timeline
)

// snapshot holds the timeline of one connection at one point around its
// failures.
type snapshot struct {
	key    flowKey
	point  string
	events []TimelineEvent
	ord    uint64 // when it was made (engine.ord), to merge shards' snapshots
}

type tlState struct {
	ring  []tlEntry
	head  int
	snap  *snapshot
	after int
}

// tlEntry is a timeline event as the ring keeps it: no pointer (its kind a
// code, not a string), so that recording one per frame is a plain store.
type tlEntry struct {
	frame   int
	ns      int64
	ev, psn uint32
	plane   int32
	kind    tlKind
}

// tlKind is a timeline event's kind (TimelineEvent.Kind).
type tlKind uint8

const (
	tlSend tlKind = iota
	tlRtx
	tlTrim
	tlSACK
	tlSkip
	tlBad
	tlNACK
	tlProbe
)

var tlKindNames = [...]string{tlSend: "send", tlRtx: "rtx", tlTrim: "trim", tlSACK: "sack", tlSkip: "skip", tlBad: "bad", tlNACK: "nack", tlProbe: "probe"}

func (k tlKind) String() string { return tlKindNames[k] }

// event is the entry as the report shows it.
func (t *tlEntry) event() TimelineEvent {
	return TimelineEvent{Frame: t.frame, TimeNs: t.ns, Plane: int(t.plane), EV: t.ev, PSN: t.psn, Kind: t.kind.String()}
}

// TimelineEventOf is how a timeline draws a decoded MRC packet that
// rides EV ev: its kind (send, rtx, trim for writes; sack, skip, bad for
// SACKs by their M field; nack; probe), the EV row (the entropy field of
// a SACK or NACK names the EV it answers) and the PSN. ok is false for
// packets a timeline leaves out. The judge and the active tester both
// draw with it.
func TimelineEventOf(p *wire.Packet, ev uint32) (te TimelineEvent, ok bool) {
	k, ev, psn, ok := tlKindOf(p, ev)
	if !ok {
		return te, false
	}
	return TimelineEvent{Kind: k.String(), EV: ev, PSN: psn}, true
}

// tlKindOf is TimelineEventOf's kind, EV and PSN.
func tlKindOf(p *wire.Packet, ev uint32) (k tlKind, tev, psn uint32, ok bool) {
	switch op := p.BTH.Opcode; {
	case op.IsWrite():
		k = tlSend
		switch {
		case p.Trimmed:
			k = tlTrim
		case p.BTH.Retransmit:
			k = tlRtx
		}
		return k, ev, p.BTH.PSN, true
	case op == wire.OpSACK:
		s := &p.SETH
		k = tlSACK
		switch s.M {
		case wire.MAlwaysSkip:
			k = tlBad
		case wire.MSkipOnce:
			k = tlSkip
		}
		return k, s.Entropy, s.AckPSN(), true
	case op == wire.OpNACK:
		return tlNACK, p.NETH.Entropy, p.NETH.NACKPSN, true
	case op == wire.OpProbe:
		return tlProbe, ev, 0, true
	}
	return 0, 0, 0, false
}

// tlPacket records the current frame's packet on its flow's timeline.
func (e *engine) tlPacket(pt *point, fl *flow, r *pcap.Record) {
	if e.tlDone(fl) {
		return
	}
	if k, ev, psn, ok := tlKindOf(&r.Packet, r.EV); ok {
		e.tlEvent(pt, fl, k, ev, psn)
	}
}

// tlDone reports whether fl's timeline can no longer reach a snapshot
// (snapRoom): its own is full, or it has none and the engine keeps
// maxSnapshots. Its events are then not recorded.
func (e *engine) tlDone(fl *flow) bool { return !e.snapRoom(fl) }

// tlEvent records a timeline event for the current frame.
func (e *engine) tlEvent(pt *point, fl *flow, kind tlKind, ev, psn uint32) {
	if fl == nil || e.tlDone(fl) {
		return
	}
	if fl.tl == nil {
		fl.tl = &tlState{}
	}
	s := fl.tl
	te := tlEntry{frame: e.frameNo, ns: e.now, plane: int32(pt.curPlane), ev: ev, psn: psn, kind: kind}
	if len(s.ring) < timelineRing {
		s.ring = append(s.ring, te)
	} else {
		s.ring[s.head] = te
		s.head = (s.head + 1) % timelineRing
	}
	if s.snap != nil && s.after > 0 && len(s.snap.events) < timelineEvents {
		s.snap.events = append(s.snap.events, te.event())
		s.after--
	}
}

// snapshot copies the connection's recent timeline when a failure is
// recorded, and keeps recording a while after it.
func (e *engine) snapshot(pt *point, fl *flow) {
	if fl.tl == nil {
		fl.tl = &tlState{}
	}
	s := fl.tl
	if s.snap == nil {
		if len(e.snaps) >= maxSnapshots {
			return
		}
		if e.snaps == nil {
			// Flows hold pointers into it: it never grows past its first array.
			e.snaps = make([]snapshot, 0, maxSnapshots)
		}
		e.snaps = append(e.snaps, snapshot{key: fl.key, point: pt.name, ord: e.ord()})
		s.snap = &e.snaps[len(e.snaps)-1]
	}
	n := len(s.ring)
	for i := 0; i < n && len(s.snap.events) < timelineEvents; i++ {
		s.snap.events = append(s.snap.events, s.ring[(s.head+i)%n].event())
	}
	s.after = timelineAfter
}

// timelines turns the snapshots into the report's timelines, only for
// connections whose failures survived the capture-point selection.
func (e *engine) timelines(rep *Report) {
	keepConn := map[string]bool{}
	failFrames := map[int]bool{}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Verdict == Fail || f.Verdict == NonStrict {
				keepConn[f.Connection+"@"+f.Point] = true
				failFrames[f.Frame] = true
			}
		}
	}
	for i := range e.snaps {
		sn := &e.snaps[i]
		id := e.flowIDs[sn.key]
		if !keepConn[id+"@"+sn.point] {
			continue
		}
		evs := slices.Clone(sn.events)
		slices.SortStableFunc(evs, func(a, b TimelineEvent) int { return a.Frame - b.Frame })
		evs = slices.CompactFunc(evs, func(a, b TimelineEvent) bool { return a.Frame == b.Frame && a.Kind == b.Kind })
		for j := range evs {
			evs[j].Mark = failFrames[evs[j].Frame]
		}
		if len(evs) > timelineEvents {
			evs = evs[len(evs)-timelineEvents:]
		}
		rep.Timelines = append(rep.Timelines, Timeline{Connection: id + " at " + sn.point, Events: evs})
	}
	slices.SortFunc(rep.Timelines, func(a, b Timeline) int { return strings.Compare(a.Connection, b.Connection) })
}

// assignFlowIDs names the connections C1, C2, ... in key order, fills the
// report's connection list and rewrites the findings' connection names.
func (e *engine) assignFlowIDs(rep *Report) {
	type agg struct {
		key  flowKey
		best *flow
	}
	all := map[flowKey]*agg{}
	for _, pn := range sortedKeys(e.points) {
		for _, fl := range e.points[pn].sortedFlows() {
			a := all[fl.key]
			if a == nil {
				a = &agg{key: fl.key}
				all[fl.key] = a
			}
			if a.best == nil || fl.writes+fl.sacks+fl.nacks > a.best.writes+a.best.sacks+a.best.nacks {
				a.best = fl
			}
		}
	}
	keys := make([]flowKey, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	e.flowIDs = map[flowKey]string{}
	byName := map[string]string{}
	for i, k := range keys {
		id := fmt.Sprintf("C%d", i+1)
		e.flowIDs[k] = id
		byName[k.String()] = id
		f := all[k].best
		c := Connection{ID: id, Requester: k.req, Responder: k.rsp, ResponderQPN: k.qpn, Planes: []int{},
			EVs: len(f.evs), Writes: f.writes, Retransmits: f.retransmits, Trimmed: f.trimmed,
			SACKs: f.sacks, NACKs: f.nacks, ACKs: f.acks, Probes: f.prb, FirstFrame: f.firstFrame, LastFrame: f.lastFrame}
		if q, ok := e.requesterQP(f); ok {
			c.RequesterQPN = q
		}
		for pl := range f.planes {
			c.Planes = append(c.Planes, pl)
		}
		slices.Sort(c.Planes)
		rep.Connections = append(rep.Connections, c)
	}
	for _, row := range e.rows {
		for cs := range row {
			o := &row[cs]
			for i := range o.findings {
				o.findings[i].nameConnection(byName)
			}
			if r := o.last; r != nil {
				for i := range r.f {
					r.f[i].at.nameConnection(byName)
				}
			}
			if fs := o.firsts; fs != nil {
				for i := range fs {
					fs[i].nameConnection(byName)
				}
			}
		}
	}
}

// nameConnection names f's connections by their report IDs (C1, C2, ...)
// rather than by their keys.
func (f *Finding) nameConnection(byName map[string]string) {
	if id, ok := byName[f.Connection]; ok {
		f.Connection = id
	}
	f.at.nameConnection(byName)
}

// nameConnection renames p's connection by byName, as Finding's.
func (p *findingPlace) nameConnection(byName map[string]string) {
	if id, ok := byName[p.conn]; ok {
		p.conn = id
	}
}

// annotation returns the comments the judge adds to each frame: the FAIL,
// NON-STRICT and INCONCLUSIVE findings that name it, and a summary on the
// first frame.
func annotation(rep *Report) map[int][]string {
	out := map[int][]string{}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Frame == 0 {
				continue
			}
			dev := ""
			if res.Deviated() {
				dev = " [deviation " + strings.Join(res.Deviations, ",") + "]"
			}
			out[f.Frame] = append(out[f.Frame], fmt.Sprintf("%s %s (%s)%s: expected %s; observed %s",
				res.Case.ID, f.Verdict, f.Requirement, dev, f.Expected, f.Observed))
		}
	}
	s := rep.Summary
	head := fmt.Sprintf("mrc-conform judge %s: %s; MUST %d/%d passed, %d failed", Version, s.Result, s.MustPassed, s.MustTotal, s.MustFailed)
	if len(s.FailedCases) > 0 {
		head += " (" + strings.Join(s.FailedCases, ", ") + ")"
	}
	out[1] = append([]string{head}, out[1]...)
	return out
}

// frameSummary returns the fields of the printer's line from the fourth
// on (number, relative time and interface, which Frame carries apart;
// every field when there are three or fewer), joined by single spaces:
// strings.Join(strings.Fields(line)[3:], " ") without the slice of
// fields.
func frameSummary(line []byte) string {
	from, end := 0, 0
	for n := 0; n < 4; n++ {
		start, e := nextField(line, end)
		if start == len(line) {
			from = 0 // three fields or fewer: all of them
			break
		}
		from, end = start, e
	}
	var b strings.Builder
	b.Grow(len(line) - from)
	for i := from; ; {
		start, end := nextField(line, i)
		if start == len(line) {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.Write(line[start:end])
		i = end
	}
	return b.String()
}

// asciiSpace marks the ASCII characters unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// nextField returns where the first field of line at or after i starts
// and ends (start is len(line) when there is none): fields are separated
// by white space (unicode.IsSpace).
func nextField(line []byte, i int) (start, end int) {
	for i < len(line) {
		if c := line[i]; c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			i++
		} else if r, n := utf8.DecodeRune(line[i:]); unicode.IsSpace(r) {
			i += n
		} else {
			break
		}
	}
	start = i
	for i < len(line) {
		if c := line[i]; c < utf8.RuneSelf {
			if asciiSpace[c] {
				break
			}
			i++
		} else if r, n := utf8.DecodeRune(line[i:]); !unicode.IsSpace(r) {
			i += n
		} else {
			break
		}
	}
	return start, i
}

// placed returns where the judge placed interface id of pcapng section
// section (Reader.Section), as the report lists it.
func (c *CaptureInfo) placed(section, id int) (Interface, bool) {
	if c == nil || section < 0 || section >= len(c.bases) {
		return Interface{}, false
	}
	g := c.bases[section] + id
	if g < 0 || g >= len(c.Interfaces) || c.Interfaces[g].ID != g {
		return Interface{}, false
	}
	return c.Interfaces[g], true
}

// enrich reads the capture again: it records the one-line decode of every
// frame the evidence names and, when w is set, writes the annotated
// pcapng.
func enrich(rep *Report, rd *pcap.Reader, c *wire.Codec, mode wire.EVMode, w *pcap.Writer, ifaces []pcap.Interface, sk *seeker) error {
	want := evidenceFrames(rep)
	var notes map[int][]string
	if w != nil {
		notes = annotation(rep)
	}
	var line []byte
	pr := pcap.NewPrinter(io.Discard, pcap.OutputText, c, mode)
	dec := pcap.Decoder{Codec: c, EVMode: mode, Cut: true}
	var rec pcap.Record
	var f pcap.Frame
	var first time.Time
	n := 0
	for sk.before(rd, n) {
		err := rd.Next(&f)
		if errors.Is(err, pcap.ErrFileChanged) {
			return err // cut short since the first pass read it
		}
		if err != nil {
			break // the first pass already reported how the file ends
		}
		n = max(n+1, f.Number) // sk may skip frames
		if f.Number == 0 {
			f.Number = n
		}
		if n == 1 {
			first = f.Timestamp
		}
		in := rd.Interface(f.Interface)
		if want[f.Number] {
			dec.Decode(&f, in, &rec)
			line = pr.Append(line[:0], &rec)
			pt, pl := "", -1
			if in != nil {
				pt, pl = in.Point, in.Plane
			}
			if v, ok := rep.Capture.placed(rd.Section(), f.Interface); ok {
				pt, pl = v.Point, v.Plane
			}
			rep.Frames = append(rep.Frames, Frame{Number: f.Number, TimeNs: f.Timestamp.Sub(first).Nanoseconds(), Point: pt, Plane: pl,
				Summary: frameSummary(line)})
		}
		if w != nil {
			out := f
			out.Comments = slices.Clone(f.Comments)
			for _, s := range notes[f.Number] {
				out.Comments = append(out.Comments, []byte(s))
			}
			// The copy is one section: interfaces numbered across the
			// file's sections, as Wireshark numbers them.
			out.Interface += len(rd.PastInterfaces())
			if out.Interface >= len(ifaces) {
				out.Interface = 0 // past MaxPastInterfaces
			}
			if err := w.WriteFrame(&out); err != nil {
				return err
			}
		}
	}
	slices.SortFunc(rep.Frames, func(a, b Frame) int { return a.Number - b.Number })
	if w != nil {
		return w.Flush()
	}
	return nil
}
