package conformance

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// maxNotes bounds the capture notes.
const maxNotes = 100

// Bounds on the state the judge keeps. No field of a packet can make the
// judge hold more than this; when a bound is hit the affected cases become
// INCONCLUSIVE and the report says so.
const (
	// MaxFlowsPerPoint bounds the connections tracked at one capture point.
	MaxFlowsPerPoint = 1024
	// MaxFlows bounds the connections tracked at all capture points.
	MaxFlows = 1024
	// MaxEntries bounds the per-PSN, per-EV and pending entries kept over
	// all connections (up to about 300 bytes each: a sent PSN's record
	// keeps its header bytes, payloadID).
	MaxEntries = 1 << 20
	// MaxPSNsPerFlow bounds the PSNs of one connection tracked at once
	// (sent and not cumulatively acknowledged, or arrived beyond cack).
	MaxPSNsPerFlow = 1 << 16
	// MaxEVsPerFlow bounds the EVs remembered per connection.
	MaxEVsPerFlow = 1 << 14
	// MaxKeptFindings bounds the findings kept over all cases; the
	// counts stay exact, and a capture note says the bound was reached.
	MaxKeptFindings = 10000
	// MaxPending bounds each list of expected answers (probes, NACKs, ACKs).
	MaxPending = 4096
	// MaxPoints bounds the capture points (pcapng interfaces' points);
	// a capture note says the frames of the others are not judged.
	MaxPoints = 16
	// MaxNodes bounds the nodes told apart; the frames of further nodes
	// are judged as one node, "(other)".
	MaxNodes = 256
)

// obsKey identifies the observations of one case about one node at one
// capture point; at the end only the point nearest the node is kept.
type obsKey struct {
	cs    caseID
	point string
	node  string
}

// obsRow holds the observations of every case about one node at one
// capture point.
type obsRow [maxCases]obsCount

// rowSlots is the size of the engine's cache of the observation rows and
// node counts of (capture point, node) pairs (rowSlot).
const rowSlots = 64

// rowSlot caches the row and node counts of one (capture point, node)
// pair: found by a hash of the point's number and the node name's length
// and last byte, and checked by comparing the point pointer and the name
// (the node names are the engine's own strings, so mostly a pointer
// compare), a frame's observations hash no string while the pairs a
// capture interleaves fit in the cache.
type rowSlot struct {
	pt   *point
	node string
	row  *obsRow
	st   *npStat
	to   int  // frames addressed to the node at the point, not yet in toNode
	toIn bool // toNode holds the pair
	// passes counts, by pass list (engine.passList), the frames the node
	// sent at the point that failed no case, passing observations of
	// their list's cases (passBy) not yet in row; anyPass: some is not
	// zero.
	passes  [maxPassLists]int32
	anyPass bool
}

// maxPassLists bounds the (frame kind, opcode slot) pairs whose passing
// observations an engine counts in its row slots (passList); a frame of
// another pair counts them in its row at once.
const maxPassLists = 16

// passListLimit is maxPassLists; tests lower it to have every frame
// counted in its row at once.
var passListLimit = maxPassLists

// passList returns the index in rowSlot.passes of the pass list of frame
// kinds k and opcode slot s, numbering the pairs in the order frames show
// them; false once maxPassLists pairs are numbered and this is another.
func (e *engine) passList(k frameKind, s int) (int, bool) {
	if i := e.passIdx[k][s]; i != 0 {
		return int(i) - 1, true
	}
	if e.nPass >= passListLimit {
		return 0, false
	}
	e.passOf[e.nPass] = passPair{k, uint8(s)}
	e.nPass++
	e.passIdx[k][s] = uint8(e.nPass)
	return e.nPass - 1, true
}

// passPair is a frame kind and opcode slot with a pass list (passList).
type passPair struct {
	k frameKind
	s uint8
}

// slot returns the cache slot of node at pt, emptied for them when it held
// another pair. The hit tests the point and the string by data pointer and
// length, as rowMemo.holds, with no call; the rest is refill's, out of line,
// which compares the bytes (sameString) before it empties the slot.
func (e *engine) slot(pt *point, node string) *rowSlot {
	s := &e.slots[slotIndex(pt, node)]
	if !s.holds(pt, node) {
		e.refill(s, pt, node)
	}
	return s
}

// holds reports whether slot s is node's at pt by data pointer and length
// (slot's hit). The callers of every frame (countNode, countTo) test it
// themselves: slot, which calls refill, does not inline.
func (s *rowSlot) holds(pt *point, node string) bool {
	return s.pt == pt && len(s.node) == len(node) && unsafe.StringData(s.node) == unsafe.StringData(node)
}

// slotIndex returns the index in engine.slots of node at pt.
func slotIndex(pt *point, node string) int {
	h := pt.num*17 + len(node)*5
	if len(node) > 0 {
		h += int(node[len(node)-1])
	}
	return h & (rowSlots - 1)
}

// refill empties slot s for node at pt unless it holds them already under
// another copy of node's name.
func (e *engine) refill(s *rowSlot, pt *point, node string) {
	if s.pt == pt && sameString(s.node, node) {
		return
	}
	e.flushTo(s)
	*s = rowSlot{pt: pt, node: node}
}

// sameData reports whether a and b are one string, by data pointer and
// length: sameString's first test, with no call.
func sameData(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// sameString reports whether a and b are equal, comparing their bytes only
// when they are not one string: the node names a frame's hooks pass are
// the engine's own, so most compare by pointer without a call.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

type obsCount struct {
	used               bool
	ok, bad, undecided int
	okT, badT          int    // timing-dependent subsets of ok and bad
	okF                int    // ok decided from the frame alone (wireChecks)
	badA, badTA        int    // bad resting on a packet not seen (of them timing-dependent too)
	badF               int    // bad decided from the frame alone (onFrame)
	reason             string // first undecided reason
	reasonOrd          uint64
	findings           []Finding
	total              int
	last               *lastRing // the latest failures beyond findings
	// firsts holds the first failure of each kind beyond findings
	// (firstFails), made when the first of its kind is not kept.
	firsts *firstFails
}

// failKinds is how many kinds of failure failHow can name, one per
// combination of its bits (five occur: plain, onTiming, onAbsence, both,
// and onFrame alone).
const failKinds = int(onFrame) << 1

// firstFails holds, of an observation key's failures not kept in full
// (obsCount.findings), the first of each kind (failHow), in full, indexed
// by its failHow. Whether the report makes a failure INCONCLUSIVE
// (judgedFinding) depends on its kind and on what is known of its capture
// point only when the capture has been read (lost frames, trusted
// timestamps, the point's place); a key's verdict is FAIL only when one
// of its failures stays a FAIL, so then the first failure of that kind
// is in findings or here, and the report can show it (Result.showEvidence)
// though findings and the latest (lastRing) were all made INCONCLUSIVE.
// A key holds at most failKinds of them beyond MaxFindings and
// LastFindings, the evidence of each built once (failWhy's why).
type firstFails [failKinds]Finding

// holds reports whether f holds a failure of kind how.
func (f *firstFails) holds(how failHow) bool { return f != nil && f[how].Verdict == Fail }

// keepFirsts puts each failure of fs, findings o does not keep, in o's
// firstFails when it was judged before the one held of its kind: merging
// what several engines (parallel.go) held gives what one would have.
func (o *obsCount) keepFirsts(fs []Finding) {
	for i := range fs {
		f := &fs[i]
		if f.Verdict != Fail {
			continue // an undecided observation's finding (undecidedWhy)
		}
		how := f.how()
		if o.firsts.holds(how) && o.firsts[how].ord <= f.ord {
			continue
		}
		if o.firsts == nil {
			o.firsts = new(firstFails)
		}
		o.firsts[how] = *f
	}
}

// lastRing holds the last LastFindings findings of an observation key
// that were not kept in full (obsCount.findings), reduced to where and
// when they were judged (lastPlace): keeping one builds no text and
// allocates nothing. An engine allocates a key's ring once, when the
// key's findings first overflow.
type lastRing struct {
	f [LastFindings]lastPlace
	n int // findings put; the latest is f[(n-1)%LastFindings]
	i int // n%LastFindings, the slot of the next: kept, as LastFindings is no power of two
}

// lastPlace is a finding reduced to where and when it was judged, all
// that a finding in LastFindings keeps: the Finding placeOnly gives
// (finding), a third of its size, so that keeping the latest of a stream
// of failures copies little.
type lastPlace struct {
	req         RequirementID
	node, point string
	at          findingPlace
	ord         uint64
	verdict     Verdict
	how         failHow
}

// placeOf returns f reduced to where and when it was judged.
func placeOf(f *Finding) lastPlace {
	return lastPlace{req: f.Requirement, node: f.Node, point: f.Point, at: f.at, ord: f.ord, verdict: f.Verdict, how: f.how()}
}

// finding returns the Finding l stands for (Finding.placeOnly's).
func (l *lastPlace) finding() Finding {
	return Finding{Verdict: l.verdict, Requirement: l.req, Node: l.node, Point: l.point,
		Frame: l.at.frame, TimeNs: l.at.ns, Plane: l.at.plane, Connection: l.at.conn,
		timing: l.how&onTiming != 0, absent: l.how&onAbsence != 0, frame: l.how&onFrame != 0, ord: l.ord, at: l.at}
}

// put keeps l as the latest, dropping the oldest when the ring is full.
func (r *lastRing) put(l lastPlace) { *r.next() = l }

// next returns the slot of the latest, to be filled in place (the oldest
// when the ring is full): a failure kept last copies its place once.
func (r *lastRing) next() *lastPlace {
	l := &r.f[r.i]
	r.n++
	if r.i++; r.i == LastFindings {
		r.i = 0
	}
	return l
}

// all returns the findings held, oldest first.
func (r *lastRing) all() []Finding {
	if r == nil {
		return nil
	}
	out := make([]Finding, 0, min(r.n, LastFindings))
	for k := max(0, r.n-LastFindings); k < r.n; k++ {
		out = append(out, r.f[k%LastFindings].finding())
	}
	return out
}

// keepLast puts the findings of fs, with those o's ring holds, in o's
// ring in judging order, keeping the latest LastFindings.
func (o *obsCount) keepLast(fs []Finding) {
	if len(fs) == 0 {
		return
	}
	all := append(o.last.all(), fs...)
	slices.SortStableFunc(all, func(a, b Finding) int { return cmp.Compare(a.ord, b.ord) })
	o.last = &lastRing{}
	for i := range all {
		o.last.put(placeOf(&all[i]))
	}
}

type nodePoint struct{ node, point string }

type npStat struct {
	frames  int
	maxTTL  int
	firstNs int64
	lastNs  int64
}

// engine judges one capture, frame by frame.
type engine struct {
	pics *PICS
	// hk holds the hooks of the checks of the cases the PICS leaves to
	// the capture (PICS.live): a case whose verdict the PICS gives costs
	// no check, and its failures fill no evidence bound.
	hk     *hookSet
	loc    CaptureLocation // Options.CaptureLocation
	codec  *wire.Codec
	prof   *spec.Profile // the codec's, copied once (Profile returns a copy)
	mode   wire.EVMode
	grace  int64 // reaction time, ns
	tol    int64 // timer tolerance, ns
	dynMPR bool  // the PICS declares dynamic_mpr (looked up once, not per SACK)
	// trimNack and trimNackDeclared are the PICS's trim_nack feature
	// (Declared), looked up once, not per write.
	trimNack, trimNackDeclared bool
	// sentKinds are the kinds of every write the PICS decides (wMPR).
	sentKinds writeKind

	dec pcap.Decoder
	rec pcap.Record
	// tiePkt is where tieKey decodes a frame (the merger's, apart from
	// the frame judged), tieErr its decode's error (DecodeInto: none
	// allocated).
	tiePkt wire.Packet
	tieErr wire.Error
	tieCut []byte // a frame cut by the snap length, rebuilt (DecodeCut)
	// tieName is nodeHash's scratch buffer, tieAddrs its cache, tiePairs
	// pairHash's.
	tieName  []byte
	tieAddrs [64]tieAddr
	tiePairs [64]tiePair
	// pre is the next frame's record when a parallel worker decoded it
	// already (record).
	pre *pcap.Record
	// preICRC is the next frame's ICRC when the parallel reader computed
	// it (batch.judge; computeAhead).
	preICRC wire.PreICRC
	start   time.Time
	// epoch is start split once for the frames' times (pcap.Epoch),
	// made at the first frame judged (haveEpoch), start being set by then.
	epoch     pcap.Epoch
	haveEpoch bool
	started   bool
	now       int64 // current frame time since the first frame
	frameNo   int

	frames, mrcFrames, snapped, notMRC int
	fragments                          int      // IP fragments, discarded
	failedCases                        []caseID // cases the current frame failed in wireChecks
	fx                                 frameCtx // the hooks' contexts, reused frame to frame
	sx                                 sentCtx
	mx                                 msgCtx
	ax                                 arriveCtx
	fbx                                fbCtx
	ansx                               answerCtx
	ansArr, pendArr                    arrival // the arrival copies answerCtx.a and fbCtx.pend point to
	px                                 probeCtx
	epx                                epCtx
	bx                                 badCtx
	views                              []ifaceView // by interface ID
	lastNs                             int64

	// unsure, while the answer hooks run, is a frame seen with a bad ICRC
	// that the feedback may answer (answerCtx.unsure): their failures
	// are undecided (failUnsure).
	unsure int
	// cutFrames counts the writes cut by the snap length after their
	// headers, judged from them (cutWrite).
	cutFrames int

	rows  map[nodePoint]*obsRow
	slots [rowSlots]rowSlot // rows and nodes entries by point and node
	// passIdx numbers the (frame kind, opcode slot) pairs whose passing
	// observations the slots count (1 + their index in rowSlot.passes; 0:
	// none yet), passOf lists them by index and nPass counts them.
	passIdx [numKinds][opSlots]uint8
	passOf  [maxPassLists]passPair
	nPass   int
	lastRow rowMemo // the pair row returned last
	// senderSlot is the slot countNode found for the current frame's
	// sender; another pair's, once reused (wireChecks checks).
	senderSlot *rowSlot
	viewPts    []viewPoint // the point and plane of each interface's frames, by interface ID (pointOf)
	points     map[string]*point
	nodes      map[nodePoint]*npStat
	toNode     map[nodePoint]int  // frames addressed to a node, per point
	toPend     int                // slots whose pending counts are of pairs toNode lacks (countTo)
	discarded  map[discardKey]int // frames discarded before the BTH, by sender, point and why (discardKey)
	notes      []string
	noteOrd    []uint64 // ord of each note
	noteSeen   map[string]bool
	seq        int  // ord's position within the current frame
	idx        int  // the current frame's place in judging order (ord)
	external   bool // idx is set by the caller (a worker of a parallel judge)

	// nodesFull: nodes or toNode (with toPend) is at its bound, so that
	// countNode counts nothing more. Both only grow (flushTo moves a pair
	// from toPend into toNode), so it is set where they grow (noteNodes).
	nodesFull bool

	// ifaces is the judgement's interface table, once every frame is
	// read (Judge describes the interfaces from it).
	ifaces *ifaceTable
	// reorder is what the merger saw of frames out of timestamp order
	// (noteLate).
	reorder reorderSeen

	flowsTotal int                  // connections tracked, all points
	entries    int                  // entries of all connections' maps, recounted every 1024 frames
	bounded    bool                 // a state bound was hit: PASS verdicts are withheld
	boundsHit  [numStateBounds]bool // the bounds noted (boundOnce)
	pointsFull bool                 // MaxPoints was reached and noted
	// peakEntries is the most entries held at once before the last
	// recount (peak); sharded is set on a parallel judgement's merged
	// engine whose shards may have kept other state than one engine
	// (oneEngineDiffers).
	peakEntries int
	counted     int // entries as the last recount left them
	sharded     bool
	nodeNames   map[string]bool
	ownNodes    map[netip.Addr]bool   // the undeclared addresses among nodeNames (unmapped), each its own node
	addrNode    map[netip.Addr]string // node of an address, cached
	lastAddr    [2]addrName           // the last two addresses addrNode named
	pairs       [pairSlots]pairName   // address pairs nodeAddr named, by pairKey.slot
	kept        int                   // findings kept
	keptFull    bool                  // a finding was not kept for MaxKeptFindings
	snapsFull   bool                  // a failing connection's timeline was not kept for maxSnapshots

	timers timers   // the checks' pending deadlines (checkstate.go)
	tx     timerCtx // the timer hooks' context

	snaps  []snapshot // timeline snapshots around failures
	psnBuf []uint32   // scratch for hot checks (appendPSNs)

	scratch    []byte      // a frame rebuilt to compare payloads (samePayload)
	scratchPkt wire.Packet // its decode
	scratchErr wire.Error  // its decode's error (DecodeInto: none allocated)
	flowIDs    map[flowKey]string
}

func newEngine(p *PICS) *engine {
	e := &engine{
		hk: hookSetFor(p.live()), pics: p, codec: p.Codec(), mode: p.EVModeValue(),
		grace: p.reaction(), tol: p.tolerance(), dynMPR: p.Has("dynamic_mpr"),
		rows: map[nodePoint]*obsRow{}, points: map[string]*point{}, nodes: map[nodePoint]*npStat{},
		toNode: map[nodePoint]int{}, noteSeen: map[string]bool{}, nodeNames: map[string]bool{}, ownNodes: map[netip.Addr]bool{},
		discarded: map[discardKey]int{},
	}
	e.trimNack, e.trimNackDeclared = p.Declared("trim_nack")
	if p.Parameters.MPR != nil {
		e.sentKinds = wMPR
	}
	e.dec = pcap.Decoder{Codec: e.codec, EVMode: e.mode, Cut: true}
	prof := e.codec.Profile()
	e.prof = &prof
	return e
}

// note records a capture note once. A note made on a frame builds its
// text each time: one made again and again goes through a flag of its
// own (boundOnce, pointsFull) instead.
func (e *engine) note(f string, a ...any) {
	if len(e.notes) >= maxNotes {
		return
	}
	s := f // a note with no operands, as one per snapped frame, costs no formatting
	if len(a) > 0 {
		s = fmt.Sprintf(f, a...)
	}
	if e.noteSeen[s] {
		return
	}
	e.noteSeen[s] = true
	e.notes = append(e.notes, s)
	e.noteOrd = append(e.noteOrd, e.ord())
}

// ord is the judging order of what happens now: the frame and the
// position within it. Workers judging parts of a capture (Options.Jobs)
// tag what they keep with it, so that merging them gives what one engine
// would have kept.
func (e *engine) ord() uint64 {
	e.seq++
	return uint64(e.idx)<<24 | uint64(e.seq&(1<<24-1))
}

// count returns the observations of case cs about node at pt, marked
// used. The row of the last pair (lastRow) is taken here rather than
// through row: one call fewer per observation.
func (e *engine) count(cs caseID, pt *point, node string) *obsCount {
	var o *obsCount
	if m := &e.lastRow; m.holds(pt, node) {
		o = &m.row[cs]
	} else {
		o = &e.rowSlow(pt, node)[cs]
	}
	o.used = true
	return o
}

// row returns the observations about node at pt. The pair of the last
// call is kept apart (lastRow): a frame's hooks count observations of one
// or two nodes, mostly the same one in a row, and rows do not move.
func (e *engine) row(pt *point, node string) *obsRow {
	if m := &e.lastRow; m.holds(pt, node) {
		return m.row
	}
	return e.rowSlow(pt, node)
}

// rowSlow is row through the slot cache.
func (e *engine) rowSlow(pt *point, node string) *obsRow {
	s := e.slot(pt, node)
	if s.row == nil {
		e.findRow(s, pt, node)
	}
	e.lastRow = rowMemo{pt: pt, node: node, row: s.row}
	return s.row
}

// rowMemo is the pair row returned last and its row.
type rowMemo struct {
	pt   *point
	node string
	row  *obsRow
}

// holds reports whether m is the row of node at pt: the same point and
// the same string, by data pointer and length. A node's name is one
// string passed around, so this is its identity; another copy of the
// name is only a miss, which rowSlow answers by value.
func (m *rowMemo) holds(pt *point, node string) bool {
	return m.pt == pt && len(m.node) == len(node) && unsafe.StringData(m.node) == unsafe.StringData(node)
}

// findRow fills in slot s's row (node at pt), made on first use.
func (e *engine) findRow(s *rowSlot, pt *point, node string) {
	k := nodePoint{node, pt.name}
	if s.row = e.rows[k]; s.row == nil {
		s.row = new(obsRow)
		e.rows[k] = s.row
	}
}

// obsOf returns the observations of key k.
func (e *engine) obsOf(k obsKey) *obsCount { return &e.rows[nodePoint{k.node, k.point}][k.cs] }

// ok records a passing observation (count's work done here: the most
// frequent observation costs one call).
func (e *engine) ok(cs caseID, pt *point, node string, timing bool) {
	var o *obsCount
	if m := &e.lastRow; m.holds(pt, node) {
		o = &m.row[cs]
	} else {
		o = &e.rowSlow(pt, node)[cs]
	}
	o.used = true
	o.ok++
	if timing {
		o.okT++
	}
}

// judgedRow is the observation row of the node a hook context judges at
// its capture point (sentCtx: the requester; fbCtx and answerCtx: the
// responder, the frame's sender), found once by the hook runner, so that a
// hook's passing observation of that node finds no row (pass).
type judgedRow struct{ row *obsRow }

// pass records a passing observation of case cs about the judged node: ok
// without finding the row, inlined.
func (j judgedRow) pass(cs caseID, timing bool) {
	o := &j.row[cs]
	o.used = true
	o.ok++
	if timing {
		o.okT++
	}
}

// failHow qualifies a failing observation.
type failHow uint8

const (
	onTiming failHow = 1 << iota // decided from timestamps
	// onAbsence: the evidence is a packet not seen (an answer, a
	// transmission, an arrival): a FAIL only at a capture point at the
	// judged node's own interface, INCONCLUSIVE elsewhere, where the
	// packet may have been lost between the point and the node
	// (CaptureLocation).
	onAbsence
	// onFrame: decided from the frame alone (its fields, the PICS, the
	// profile): a frame the capture lost cannot have made it fail. Every
	// other failure may rest on one, and is INCONCLUSIVE at a capture
	// point whose capture lost frames (pcap.Interface.Dropped). Never
	// together with onTiming or onAbsence.
	onFrame
)

// failWhy records a failing observation of requirement req, under its
// case. why fills in
// the finding's evidence (PSN, EV, related frames, expected and observed
// text); it is called only when the finding is kept (MaxFindings,
// MaxKeptFindings), so that a steady stream of failures builds no text
// and allocates nothing. why may be nil.
func (e *engine) failWhy(req caseReq, pt *point, node string, how failHow, why func(f *Finding)) {
	cs := req.cs()
	if e.unsure != 0 {
		e.failUnsure(req, pt, node, why)
		return
	}
	var o *obsCount // count's work done here, as ok's: a failure of every frame costs one call
	if m := &e.lastRow; m.holds(pt, node) {
		o = &m.row[cs]
	} else {
		o = &e.rowSlow(pt, node)[cs]
	}
	o.used = true
	o.fail(how)
	o.total++
	switch r := o.last; {
	case r != nil && len(o.findings) >= MaxFindings && o.firsts.holds(how):
		// A steady stream of failures: o keeps no more findings, and
		// the first of this kind: the latest ring alone, filled here.
		l := r.next()
		l.req, l.node, l.point, l.ord, l.verdict, l.how = req.id(), node, pt.name, e.ord(), Fail, how
		l.at.frame, l.at.ns, l.at.plane, l.at.conn = e.frameNo, e.now, pt.curPlane, ""
		if fl := pt.curFlow; fl != nil {
			l.at.conn = fl.name()
		}
	case e.keepable(o):
		f := o.newFinding(req.id())
		if why != nil {
			why(f)
		}
		f.failed(how)
		e.placeFinding(f, pt, node)
	case !o.firsts.holds(how):
		e.firstOfKind(o, req, pt, node, how, why)
	default:
		e.putLast(o, Fail, req.id(), how, pt, node)
	}
	if fl := pt.curFlow; fl != nil {
		if e.snapRoom(fl) {
			e.snapshot(pt, fl) // the connection's timeline around the failure
		} else if fl.tl == nil || fl.tl.snap == nil {
			e.snapsFull = true // a connection failing with no timeline kept
		}
	}
}

// firstOfKind keeps a failure o has no room for, the first of its kind
// (firstFails), in full, and in o's ring of the latest as any other.
func (e *engine) firstOfKind(o *obsCount, req caseReq, pt *point, node string, how failHow, why func(f *Finding)) {
	if o.firsts == nil {
		o.firsts = new(firstFails)
	}
	f := &o.firsts[how]
	*f = Finding{Requirement: req.id()}
	if why != nil {
		why(f)
	}
	f.failed(how)
	e.placeAt(f, pt, node)
	if o.last == nil {
		o.last = &lastRing{}
	}
	o.last.put(placeOf(f))
}

// how is the kind of failure f is (failed's inverse).
func (f *Finding) how() failHow {
	var how failHow
	if f.timing {
		how |= onTiming
	}
	if f.absent {
		how |= onAbsence
	}
	if f.frame {
		how |= onFrame
	}
	return how
}

// failed makes f a FAIL decided as how says.
func (f *Finding) failed(how failHow) {
	f.Verdict, f.timing, f.absent, f.frame = Fail, how&onTiming != 0, how&onAbsence != 0, how&onFrame != 0
}

// fail counts a failing observation in o.
func (o *obsCount) fail(how failHow) {
	o.bad++
	timing := how&onTiming != 0
	if timing {
		o.badT++
	}
	if how&onAbsence != 0 {
		o.badA++
		if timing {
			o.badTA++
		}
	}
	if how&onFrame != 0 {
		o.badF++
	}
}

// snapRoom reports whether a failure on connection fl at the current
// frame's point adds to a timeline snapshot: its own while that has room,
// or a new one while the engine keeps fewer than maxSnapshots. A point
// away from a failing node may fail an observation of every frame, and
// its snapshot is soon full: then the failure costs this test alone.
func (e *engine) snapRoom(fl *flow) bool {
	if s := fl.tl; s != nil && s.snap != nil {
		return len(s.snap.events) < timelineEvents
	}
	return len(e.snaps) < maxSnapshots
}

// undecided records an observation the judge could not decide, with no
// finding (undecidedWhy keeps one).
func (e *engine) undecided(cs caseID, pt *point, node, reason string) {
	o := e.count(cs, pt, node)
	o.undecided++
	if o.reason == "" {
		o.reason, o.reasonOrd = reason, e.ord()
	}
}

// undecidedWhy records an observation of requirement req, under its case,
// the judge could not decide, with a finding whose evidence why fills in only when it is
// kept (failWhy).
func (e *engine) undecidedWhy(req caseReq, pt *point, node, reason string, why func(f *Finding)) {
	o := e.count(req.cs(), pt, node)
	o.undecided++
	if o.reason == "" {
		o.reason, o.reasonOrd = reason, e.ord()
	}
	o.total++
	if !e.keepable(o) {
		e.putLast(o, Inconclusive, req.id(), 0, pt, node)
		return
	}
	f := o.newFinding(req.id())
	if why != nil {
		why(f)
	}
	f.Verdict = Inconclusive
	if f.Observed == "" {
		f.Observed = reason
	}
	e.placeFinding(f, pt, node)
}

// newFinding appends a finding of requirement req to o's and returns it,
// for its evidence to be filled in place (no Finding built apart and
// copied), then placed.
func (o *obsCount) newFinding(req RequirementID) *Finding {
	o.findings = append(o.findings, Finding{Requirement: req})
	return &o.findings[len(o.findings)-1]
}

// keepable reports whether a finding of o would be kept; one that only
// MaxKeptFindings refuses sets keptFull.
func (e *engine) keepable(o *obsCount) bool {
	if len(o.findings) >= MaxFindings {
		return false
	}
	if e.kept >= MaxKeptFindings {
		e.keptFull = true
		return false
	}
	return true
}

// noteEvidenceBounds notes the bounds on the evidence kept that were
// reached: the verdicts and counts are whole, the findings and timelines
// shown are not. Made once the findings are all in (report), so that it
// is the same for any number of workers.
func (e *engine) noteEvidenceBounds() {
	if e.keptFull {
		e.note("more than %d findings: the later ones are counted in the verdicts but not kept as evidence", MaxKeptFindings)
	}
	if e.snapsFull {
		e.note("more than %d connections failed at a capture point: the timelines of the later ones are not kept", maxSnapshots)
	}
}

// putLast keeps a finding o had no room for, of verdict v under
// requirement id, decided as how says, in o's ring of the latest, placed
// at the current frame (here), with no Finding built.
func (e *engine) putLast(o *obsCount, v Verdict, id RequirementID, how failHow, pt *point, node string) {
	if o.last == nil {
		o.last = &lastRing{}
	}
	var conn string // here's place, filled in place: here is too big to inline
	if pt.curFlow != nil {
		conn = pt.curFlow.name()
	}
	// Every field stored one by one: a composite literal is built on the
	// stack and copied, twice the stores.
	l := o.last.next()
	l.req, l.node, l.point, l.ord, l.verdict, l.how = id, node, pt.name, e.ord(), v, how
	l.at.frame, l.at.ns, l.at.plane, l.at.conn = e.frameNo, e.now, pt.curPlane, conn
}

// placeFinding completes a finding just kept: where and when, by default the
// current frame's, and its place in judging order.
func (e *engine) placeFinding(f *Finding, pt *point, node string) {
	e.kept++
	e.placeAt(f, pt, node)
}

// placeAt completes a finding's where and when (by default the current
// frame's), records them (Finding.at), and gives it its place in judging
// order.
func (e *engine) placeAt(f *Finding, pt *point, node string) {
	f.Point, f.Node = pt.name, node
	if f.Frame == 0 {
		f.Frame = e.frameNo
	}
	if f.TimeNs == 0 {
		f.TimeNs = e.now
	}
	if f.Plane == 0 && pt.curPlane != 0 {
		f.Plane = pt.curPlane
	}
	f.at = e.here(pt)
	if f.Connection == "" {
		f.Connection = f.at.conn
	}
	f.ord = e.ord()
}

// here is the place of the frame being judged at pt: its number, time,
// plane and connection ("" when it is on none).
func (e *engine) here(pt *point) findingPlace {
	p := findingPlace{frame: e.frameNo, ns: e.now, plane: pt.curPlane}
	if pt.curFlow != nil {
		p.conn = pt.curFlow.name()
	}
	return p
}

// nodeAddr returns the node names of a decoded packet's inner source and
// destination addresses. The address pairs named are kept by their bytes
// (pairs), one per slot of their hash: a connection's frames alternate
// between its two directions, and a capture's connections take turns, so
// most frames are named without building an address.
func (e *engine) nodeAddr(p *wire.Packet) (src, dst string, ok bool) {
	_, udp, _ := p.Offsets()
	if udp == 0 {
		return "", "", false
	}
	var k pairKey
	if !p.IsIPv6 {
		// An IPv4 key is its a alone: a kept key that is not IPv6 has b, c
		// and d zero, and is k when its a is.
		k.a = uint64(binary.LittleEndian.Uint32(p.IP4.Src[:])) | uint64(binary.LittleEndian.Uint32(p.IP4.Dst[:]))<<32
		c := &e.pairs[k.slot()]
		if c.ok && c.k.a == k.a && !c.k.v6 {
			return c.src, c.dst, true
		}
		return e.nameAddr(p, c, &k)
	}
	le := binary.LittleEndian
	k = pairKey{le.Uint64(p.IP6.Src[:]), le.Uint64(p.IP6.Src[8:]), le.Uint64(p.IP6.Dst[:]), le.Uint64(p.IP6.Dst[8:]), true}
	c := &e.pairs[k.slot()]
	if c.ok && c.k.same(&k) {
		return c.src, c.dst, true
	}
	return e.nameAddr(p, c, &k)
}

// nameAddr is nodeAddr for an address pair its slot c does not hold: it
// names the pair, and keeps it in c. Out of nodeAddr, so that a pair kept
// costs no more than its lookup.
func (e *engine) nameAddr(p *wire.Packet, c *pairName, k *pairKey) (src, dst string, ok bool) {
	if p.IsIPv6 {
		src, dst = e.node(netip.AddrFrom16(p.IP6.Src)), e.node(netip.AddrFrom16(p.IP6.Dst))
	} else {
		src, dst = e.node(netip.AddrFrom4(p.IP4.Src)), e.node(netip.AddrFrom4(p.IP4.Dst))
	}
	// Only while every address named is in addrNode: named (planes.go)
	// then does not depend on lastAddr, which a kept pair skips.
	if len(e.addrNode) < MaxNodes {
		*c = pairName{k: *k, src: src, dst: dst, ok: true}
	}
	return src, dst, true
}

// pairKey is an address pair by its bytes: IPv6 source and destination
// in a, b and c, d; IPv4 both in a.
type pairKey struct {
	a, b, c, d uint64
	v6         bool
}

// same is *k == *o, field by field: the == of the struct compares its
// bytes through a call, for every frame. By pointer: a pairKey, of five
// fields, is no SSA value, and each copy of one is a copy through memory.
func (k *pairKey) same(o *pairKey) bool {
	return k.a == o.a && k.b == o.b && k.c == o.c && k.d == o.d && k.v6 == o.v6
}

// pairSlots is how many address pairs nodeAddr keeps named, one per slot
// of their hash: an incast capture's frames take turns among its node
// pairs (eight in the simulator's), which two most recent ones missed.
const pairSlots = 16

// slot is k's slot in engine.pairs. The source's bytes are rotated
// against the destination's, so that a pair's two directions do not
// always share a slot. By pointer, as same.
func (k *pairKey) slot() int {
	h := k.a ^ bits.RotateLeft64(k.b, 13) ^ bits.RotateLeft64(k.c, 29) ^ bits.RotateLeft64(k.d, 43)
	return int(h * 0x9e3779b97f4a7c15 >> 60)
}

// pairName is an address pair nodeAddr named.
type pairName struct {
	k        pairKey
	src, dst string
	ok       bool
}

// node names an address, lumping the nodes beyond MaxNodes together.
func (e *engine) node(a netip.Addr) string {
	for i := range e.lastAddr {
		if l := &e.lastAddr[i]; l.ok && l.a == a {
			return l.n // a frame's addresses are mostly the previous frame's
		}
	}
	if n, ok := e.addrNode[a]; ok {
		e.lastAddr[1], e.lastAddr[0] = e.lastAddr[0], addrName{a, n, true}
		return n
	}
	if len(e.nodeNames) >= MaxNodes && e.unseen(a) {
		e.boundOnce(boundNodes) // one node more, not named: naming allocates
		return "(other)"
	}
	n := e.pics.nodeOf(a)
	if e.nodeNames[n] {
		e.cacheNode(a, n)
		return n
	}
	if len(e.nodeNames) >= MaxNodes {
		e.boundOnce(boundNodes)
		return "(other)"
	}
	e.nodeNames[n] = true
	if !e.pics.declares(a) {
		e.ownNodes[a.Unmap()] = true
	}
	e.cacheNode(a, n)
	return n
}

// unseen reports whether address a is an undeclared address whose node
// (the address itself) is not among nodeNames, without naming it.
func (e *engine) unseen(a netip.Addr) bool {
	return !e.pics.declares(a) && !e.ownNodes[a.Unmap()]
}

type addrName struct {
	a  netip.Addr
	n  string
	ok bool
}

// cacheNode remembers an address's node (naming an undeclared address
// allocates), for at most MaxNodes addresses.
func (e *engine) cacheNode(a netip.Addr, n string) {
	if e.addrNode == nil {
		e.addrNode = map[netip.Addr]string{}
	}
	if len(e.addrNode) < MaxNodes {
		e.addrNode[a] = n
	}
}

// hitBound records that a state bound was reached.
func (e *engine) hitBound(what string) {
	e.bounded = true
	e.note("state bound reached: %s; PASS verdicts are withheld (INCONCLUSIVE)", what)
}

// stateBound names a bound that a full table meets on every frame once
// reached: its note is made once (boundOnce), and each later hit costs a
// flag test, no text.
type stateBound uint8

const (
	boundPending stateBound = iota // a connection's table of MaxPending entries
	boundPSNs                      // a connection's table of MaxPSNsPerFlow entries
	boundEVs                       // a connection's table of MaxEVsPerFlow entries
	boundEntries                   // MaxEntries over all connections
	boundNodes                     // MaxNodes
	numStateBounds
)

// boundOnce records that bound b was reached, noting it the first time.
func (e *engine) boundOnce(b stateBound) {
	e.bounded = true
	if e.boundsHit[b] {
		return
	}
	e.boundsHit[b] = true
	switch b {
	case boundPending:
		e.hitBound(fmt.Sprintf("a connection's table reached %d entries", MaxPending))
	case boundPSNs:
		e.hitBound(fmt.Sprintf("a connection's table reached %d entries", MaxPSNsPerFlow))
	case boundEVs:
		e.hitBound(fmt.Sprintf("a connection's table reached %d entries", MaxEVsPerFlow))
	case boundEntries:
		e.hitBound(fmt.Sprintf("%d entries over all connections", MaxEntries))
	case boundNodes:
		e.hitBound(fmt.Sprintf("more than %d nodes: the others are judged together as \"(other)\"", MaxNodes))
	}
}

// roomIn reports whether a map of n entries with its own bound (MaxPending,
// MaxPSNsPerFlow or MaxEVsPerFlow) may grow, within the global bound; when
// not, it records the bound (noRoom, out of line so that roomIn inlines).
func (e *engine) roomIn(n, bound int) bool {
	if n >= bound || e.entries >= MaxEntries {
		return e.noRoom(n, bound)
	}
	e.entries++
	return true
}

// noRoom records the bound that keeps a map of n entries with its own
// bound from growing (roomIn) and returns false.
func (e *engine) noRoom(n, bound int) bool {
	if n >= bound {
		switch bound {
		case MaxPending:
			e.boundOnce(boundPending)
		case MaxPSNsPerFlow:
			e.boundOnce(boundPSNs)
		case MaxEVsPerFlow:
			e.boundOnce(boundEVs)
		default:
			e.hitBound(fmt.Sprintf("a connection's table reached %d entries", bound))
		}
		return false
	}
	e.boundOnce(boundEntries)
	return false
}

// peak is the most entries roomIn has let the connections hold at once.
// entries grows only there, one at a time, and is set only by recount:
// its peaks are where recount finds it grown since the last (counted).
func (e *engine) peak() int {
	if e.entries == e.counted {
		return e.peakEntries
	}
	return max(e.peakEntries, e.entries)
}

// recount recomputes the entries held by all connections.
func (e *engine) recount() {
	e.peakEntries = e.peak()
	n := 0
	for _, pt := range e.points {
		n += len(pt.ep) + len(pt.psu)
		for _, f := range pt.flows {
			n += f.psns.len() + f.arrived.len() + len(f.refused) + len(f.badArr) + len(f.trimArr) + f.needSACK.len() +
				len(f.trimPend) + len(f.oorPend) + f.ackReq.len() + len(f.ackDue) + len(f.wimmExcess) + len(f.nackPend) + len(f.bad) + f.maybeBad.len() +
				len(f.evs) + len(f.held) + len(f.wimm) + len(f.probes)
			for _, s := range f.own { // the checks' states (checkState.entries)
				if s != nil {
					n += s.entries()
				}
			}
		}
	}
	e.entries, e.counted = n, n
}

func ttlOf(p *wire.Packet) int {
	switch {
	case p.SRv6:
		return int(p.Outer.HopLimit)
	case p.IsIPv6:
		return int(p.IP6.HopLimit)
	}
	return int(p.IP4.TTL)
}

func (e *engine) point(name string) *point {
	pt := e.points[name]
	if pt != nil {
		return pt
	}
	if len(e.points) >= MaxPoints {
		if !e.pointsFull {
			e.pointsFull = true
			e.note("more than %d capture points: the frames of the others are not judged", MaxPoints)
		}
		return nil
	}
	pt = newPoint(name)
	pt.num = len(e.points)
	e.points[name] = pt
	return pt
}

// viewPoint is the capture point and plane of an interface (pointOf).
type viewPoint struct {
	pt    *point
	plane int
}

// pointOf returns the capture point and plane of the frames of interface
// id: its view (view), with the point looked up once per interface; nil
// when the point is one more than MaxPoints.
func (e *engine) pointOf(id int, in *pcap.Interface) (*point, int) {
	if id >= 0 && id < len(e.viewPts) {
		if vp := &e.viewPts[id]; vp.pt != nil {
			return vp.pt, vp.plane
		}
	}
	v := e.view(id, in)
	pt := e.point(v.point)
	if pt != nil && id >= 0 && id < MaxInterfaces {
		for len(e.viewPts) <= id {
			e.viewPts = append(e.viewPts, viewPoint{})
		}
		e.viewPts[id] = viewPoint{pt, v.plane}
	}
	return pt, v.plane
}

// viewedPoint returns the capture point and plane pointOf found for the
// frames of interface id, nil when it found none yet: pointOf's first test,
// which inlines.
func (e *engine) viewedPoint(id int) (*point, int) {
	if id >= 0 && id < len(e.viewPts) {
		return e.viewPts[id].pt, e.viewPts[id].plane
	}
	return nil, 0
}

// setNow makes t the current frame's time.
func (e *engine) setNow(t int64) {
	e.now = t
	if t > e.lastNs {
		e.lastNs = t
	}
}

// frame judges one frame.
func (e *engine) frame(f *pcap.Frame, in *pcap.Interface) {
	e.frames++
	if e.frames%1024 == 0 {
		e.recount()
	}
	e.frameNo = f.Number
	if e.frameNo == 0 {
		e.frameNo = e.frames
	}
	if !e.started {
		e.start, e.started = f.Timestamp, true
	}
	if !e.haveEpoch {
		e.epoch, e.haveEpoch = pcap.NewEpoch(e.start), true
		e.dec.Start(e.start) // its records' Rel is then the frame's time (below)
	}
	pt, plane := e.viewedPoint(f.Interface)
	if pt == nil {
		pt, plane = e.pointOf(f.Interface, in)
	}
	if pt == nil {
		e.setNow(int64(e.epoch.Since(f.Timestamp)))
		return
	}
	r := e.record(f, in)
	if r == &e.rec {
		e.setNow(int64(r.Rel)) // e.epoch.Since(f.Timestamp), which the decode computed
	} else {
		e.setNow(int64(e.epoch.Since(f.Timestamp)))
	}
	if pt.n > 0 && e.now < pt.lastNs {
		pt.nonMonotonic = true
	}
	pt.n++
	pt.lastNs = e.now
	pt.curPlane, pt.curIface, pt.curFlow = plane, f.Interface, nil
	e.failedCases = e.failedCases[:0]
	e.seq = 0
	if !e.external {
		e.idx = e.frames
	}
	p := &r.Packet
	if fragment(p) {
		// Decoders discard IP fragments (WIRE-ENC-5, AMB-33): counted,
		// against their sender, not judged.
		e.fragments++
		e.discard(discardFragment, pt, p)
		return
	}
	if r.Err != nil {
		e.decodeError(pt, f, r)
		return
	}
	if r.Cut && !p.BTH.Opcode.IsWrite() {
		// Only writes are judged from their headers (cutWrite): the
		// others, feedback above all, would be judged as received whole.
		e.discardSnapped(pt, p)
		return
	}
	e.mrcFrames++
	if p.BTH.Opcode.IsWrite() {
		e.tiePlanes(pt, p)
	}
	src, dst, _ := e.nodeAddr(p)
	if e.timersDue() {
		e.fireTimers(src, dst)
	}
	if r.HasICRC() && !r.ICRCOK {
		// Its receiver discards a frame whose ICRC is bad (RSP-RCV-1), and
		// any of its fields may be the corrupted one: it is one
		// WIRE-ICRC-1 finding and nothing else.
		e.badICRC(pt, src, dst, r)
		return
	}
	e.countNode(pt, src, dst, p)
	e.wireChecks(pt, src, r)
	switch op := p.BTH.Opcode; {
	case op.IsWrite():
		e.write(pt, src, dst, r)
	case op == wire.OpSACK:
		e.sack(pt, src, dst, r)
	case op == wire.OpNACK:
		e.nack(pt, src, dst, r)
	case op == wire.OpAcknowledge:
		e.aeth(pt, src, dst, r)
	case op == wire.OpProbe:
		e.probe(pt, src, dst, r)
	case op == wire.OpEndpointReq, op == wire.OpEndpointResp:
		e.endpoint(pt, src, dst, r)
	}
}

// discardSnapped counts, against its sender, a frame the capture's snap
// length cut and that is not judged: within its headers, or not a write.
func (e *engine) discardSnapped(pt *point, p *wire.Packet) {
	e.snapped++
	e.discard(discardSnapped, pt, p)
	e.note("frames truncated by the capture's snap length are not judged, but writes cut after their headers")
}

// decodeError judges a frame the codec could not decode: a finding against
// its sender when it is on an MRC UDP port and whole, ignored otherwise.
func (e *engine) decodeError(pt *point, f *pcap.Frame, r *pcap.Record) {
	p := &r.Packet
	_, udp, _ := p.Offsets()
	// The decoder's errors are a *wire.Error or a *pcap.LinkError: a
	// type assertion, unlike errors.As, allocates nothing.
	we, ok := r.Err.(*wire.Error)
	if !ok {
		e.notMRC++ // not Ethernet
		return
	}
	if udp == 0 {
		e.decodeErrorBeforeUDP(pt, f, r, we)
		return
	}
	if !e.codec.AcceptsPort(p.UDP.DstPort) {
		e.notMRC++
		return
	}
	if f.Length > len(f.Data) && !r.Cut {
		e.discardSnapped(pt, p)
		return
	}
	src, dst, ok := e.nodeAddr(p)
	if !ok {
		return
	}
	if we.Req == wire.ReqBTH2 && p.BTH.Opcode&0xE0 != 0xC0 && !pt.knownQP(p.BTH.DestQP) {
		// MRC's opcodes lie in 0xC0-0xDF, a block RoCEv2 never uses:
		// an opcode outside it on a QP the capture shows no MRC traffic
		// for is plain RoCE sharing the port, not judged; one inside it
		// is an MRC frame whatever its QP (as the dissector shows it).
		e.notMRC++
		return
	}
	// Counted as a frame its sender sent here, so that the point is one
	// the finding is judged at (nearPoints) even when the sender has no
	// frame that decodes.
	e.countNode(pt, src, dst, p)
	e.failWhy(codecReq(we.Req), pt, src, onFrame, func(f *Finding) {
		f.Expected, f.Observed = "a frame that decodes", r.Err.Error()
		if p.BTH.Opcode.Valid() {
			f.PSN = u32p(p.BTH.PSN)
		}
	})
}

// decodeErrorBeforeUDP judges a frame that failed before its UDP header:
// a frame whose Ethernet or IP header is cut short or inconsistent is a
// finding (WIRE-ENC-1, WIRE-LEN-1) against its sender, or against the
// node the PICS places at the capture point when the IP header did not
// decode; a frame that is simply not MRC (another EtherType, another
// protocol or routing type) is not judged.
func (e *engine) decodeErrorBeforeUDP(pt *point, f *pcap.Frame, r *pcap.Record, we *wire.Error) {
	if errors.Is(we.Kind, wire.ErrUnsupported) {
		e.notMRC++
		return
	}
	if f.Length > len(f.Data) && !r.Cut {
		e.discardSnapped(pt, &r.Packet)
		return
	}
	src := e.senderOf(pt, &r.Packet)
	e.countNode(pt, src, "", &r.Packet)
	e.failWhy(codecReq(we.Req), pt, src, onFrame, func(f *Finding) { f.Expected, f.Observed = "a frame that decodes", r.Err.Error() })
}

// senderOf names the sender of a frame whose UDP header did not decode:
// its IP source when the IP header decoded, else the node the PICS places
// at the capture point, else unknownSender.
func (e *engine) senderOf(pt *point, p *wire.Packet) string {
	if ip, _, _ := p.Offsets(); ip != 0 {
		if p.IsIPv6 {
			return e.node(netip.AddrFrom16(p.IP6.Src))
		}
		return e.node(netip.AddrFrom4(p.IP4.Src))
	}
	if n, ok := e.pics.Capture.Points[pt.name]; ok {
		return n
	}
	return unknownSender
}

// discardKind is why a frame was discarded before its BTH was judged.
type discardKind uint8

const (
	discardFragment discardKind = iota // an IP fragment (WIRE-ENC-5, AMB-33)
	discardSnapped                     // cut by the capture's snap length
)

// discardKey is who sent discarded frames, where they were seen and why
// they were discarded: engine.discarded counts them for the capture notes
// (discardNote). Its keys are bounded by the nodes named (MaxNodes;
// further ones are "(other)"), the points (MaxPoints) and the two
// reasons.
type discardKey struct {
	node, point string
	why         discardKind
}

// discard counts a frame discarded before its BTH was judged against its
// sender (senderOf: its IP source, else the node the PICS places at the
// point), as a malformed frame's finding is. The node names and point
// names are the engine's own strings: counting allocates nothing once the
// key is in the map.
func (e *engine) discard(why discardKind, pt *point, p *wire.Packet) {
	e.discarded[discardKey{e.senderOf(pt, p), pt.name, why}]++
}

// maxDiscardNamed bounds the senders one capture note names
// (discardNote); the others are counted together.
const maxDiscardNamed = 8

// discardNote notes n frames discarded for why, as text says, naming the
// senders and points that account for them, most frames first (then by
// node and point), at most maxDiscardNamed of them.
func (e *engine) discardNote(why discardKind, n int, text string) {
	var ks []discardKey
	for k := range e.discarded {
		if k.why == why {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(a, b discardKey) int {
		return cmp.Or(cmp.Compare(e.discarded[b], e.discarded[a]), cmp.Compare(a.node, b.node), cmp.Compare(a.point, b.point))
	})
	var b strings.Builder
	fmt.Fprintf(&b, text, n)
	rest, sep := n, ":"
	for _, k := range ks[:min(len(ks), maxDiscardNamed)] {
		fmt.Fprintf(&b, "%s %d from %s at %s", sep, e.discarded[k], k.node, k.point)
		rest, sep = rest-e.discarded[k], ","
	}
	if others := len(ks) - maxDiscardNamed; others > 0 {
		fmt.Fprintf(&b, ", %d from %d other senders and points", rest, others)
	}
	e.note("%s", b.String())
}

// unknownSender is the node of frames whose sender cannot be told: they
// are judged whichever nodes the PICS names as DUT.
const unknownSender = "(unknown sender)"

// fragment reports whether a decoded IP header is a fragment's: IPv4 with
// more fragments or an offset, IPv6 with a Fragment header.
func fragment(p *wire.Packet) bool {
	ip, _, _ := p.Offsets()
	if ip == 0 {
		return false
	}
	if p.IsIPv6 {
		return p.IP6.NextHeader == 44
	}
	return p.IP4.FlagsFrag&0x3FFF != 0
}

// countNode records that node sent a frame at pt (and dst was sent one),
// for choosing the point nearest each node.
func (e *engine) countNode(pt *point, src, dst string, p *wire.Packet) {
	if e.nodesFull {
		return
	}
	c := &e.slots[slotIndex(pt, src)] // e.slot(pt, src), inline
	if !c.holds(pt, src) {
		e.refill(c, pt, src)
	}
	e.senderSlot = c
	if c.row != nil {
		// The sender's row is the one the frame's hooks want first
		// (wireChecks): found here, it costs them no second slot lookup.
		e.lastRow = rowMemo{pt: pt, node: src, row: c.row}
	}
	st := c.st
	if st == nil {
		k := nodePoint{src, pt.name}
		if st = e.nodes[k]; st == nil {
			st = &npStat{firstNs: e.now}
			e.nodes[k] = st
			e.noteNodes()
		}
		c.st = st
	}
	st.frames++
	st.lastNs = e.now
	if ip, _, _ := p.Offsets(); ip != 0 {
		st.maxTTL = max(st.maxTTL, ttlOf(p))
	}
	if dst != "" {
		// countTo's work when its slot counts the pair already, inline.
		if c := &e.slots[slotIndex(pt, dst)]; c.to != 0 && c.holds(pt, dst) {
			c.to++
		} else {
			e.countTo(pt, dst)
		}
	}
}

// noteNodes sets nodesFull once nodes or toNode reaches its bound.
func (e *engine) noteNodes() {
	e.nodesFull = len(e.nodes) >= MaxNodes*MaxPoints || len(e.toNode)+e.toPend >= MaxNodes*MaxPoints
}

// countTo counts a frame addressed to node at pt: in its rowSlot, added
// to toNode when the slot is taken by another pair or flushed.
func (e *engine) countTo(pt *point, node string) {
	c := &e.slots[slotIndex(pt, node)] // e.slot(pt, node), inline
	if !c.holds(pt, node) {
		e.refill(c, pt, node)
	}
	if c.to == 0 {
		if !c.toIn {
			_, c.toIn = e.toNode[nodePoint{node, pt.name}]
		}
		if !c.toIn {
			e.toPend++
			e.noteNodes()
		}
	}
	c.to++
}

// flushTo adds a slot's pending counts to toNode and its row.
func (e *engine) flushTo(c *rowSlot) {
	if c.anyPass {
		e.flushPasses(c)
	}
	if c.to == 0 {
		return
	}
	e.toNode[nodePoint{c.node, c.pt.name}] += c.to
	if !c.toIn {
		e.toPend--
	}
	c.to, c.toIn = 0, true
}

// flushPasses adds a slot's pending passing observations to its row.
func (e *engine) flushPasses(c *rowSlot) {
	if c.row == nil {
		e.findRow(c, c.pt, c.node)
	}
	for i, n := range c.passes[:e.nPass] {
		if n == 0 {
			continue
		}
		l := e.passOf[i]
		for _, cs := range e.hk.passBy(l.k, int(l.s)) {
			o := &c.row[cs]
			o.used = true
			o.ok += int(n)
			o.okF += int(n)
		}
		c.passes[i] = 0
	}
	c.anyPass = false
}

// flushToNode adds the pending counts to toNode and the rows; readers of
// toNode and of the rows' counts call it first.
func (e *engine) flushToNode() {
	for i := range e.slots {
		e.flushTo(&e.slots[i])
	}
}

// codecReq maps a requirement the codec reports (wire.Violation,
// wire.Error) to the requirement as the check that judges it cites it
// (check.codec). checkJudgeRequirements (ChecksErr: the judge's start and
// the package's tests) makes sure that every wire.ReqID is in the
// registry and judged by a check; wire.NoReq (an error that names no
// requirement) is judged under MRC-WIRE-BTH-001 as CodecRequirement names
// it, WIRE-BTH-1.
func codecReq(r wire.ReqID) caseReq {
	if r < wire.NumReqs && hooks.codecJudged[r] {
		return hooks.codecReqs[r]
	}
	return hooks.codecReqs[wire.ReqBTH1]
}

// nearPoints decides, for every node, the capture points whose view of it
// is judged: the points the PICS places at it; else its only point; else
// the point where its frames have the highest TTL (fewest hops from it);
// then one whose frames were all judged in timestamp order; then the
// earliest first frame; then the first name (nearer).
func (e *engine) nearPoints() (map[string][]string, []PointNode) {
	e.flushToNode()
	out := map[string][]string{}
	var how []PointNode
	declared := map[string][]string{}
	for pt, node := range e.pics.Capture.Points {
		// Interfaces placed at one node are one point, named by the first
		// (resolveInterface): the others are its planes, not points.
		if g := e.pics.pointGroup(node); len(g) < 2 || g[0] == pt {
			declared[node] = append(declared[node], pt)
		}
	}
	byNode := map[string][]string{}
	for k := range e.nodes {
		byNode[k.node] = append(byNode[k.node], k.point)
	}
	for k := range e.toNode {
		if _, seen := byNode[k.node]; !seen {
			byNode[k.node] = nil // a node that only receives
		}
	}
	allPoints := sortedKeys(e.points)
	for _, n := range sortedKeys(byNode) {
		if d := declared[n]; len(d) > 0 {
			slices.Sort(d)
			out[n] = d
			for _, p := range d {
				how = append(how, PointNode{Node: n, Point: p, How: e.declaredHow(p, n, allPoints)})
			}
			continue
		}
		cands := byNode[n]
		slices.Sort(cands)
		if len(allPoints) == 1 {
			out[n] = allPoints
			how = append(how, PointNode{Node: n, Point: allPoints[0], How: e.onlyPoint(allPoints[0])})
			continue
		}
		if len(cands) == 0 { // receives only: the point that saw most frames to it
			best, bn := "", -1
			for _, p := range allPoints {
				if c := e.toNode[nodePoint{n, p}]; c > bn {
					best, bn = p, c
				}
			}
			out[n] = []string{best}
			how = append(how, PointNode{Node: n, Point: best, How: "receives only; most frames to it"})
			continue
		}
		if len(cands) == 1 {
			out[n] = cands
			how = append(how, PointNode{Node: n, Point: cands[0], How: "only point that saw it send"})
			continue
		}
		best := cands[0]
		reason := "first name"
		for _, p := range cands[1:] {
			if why := e.nearer(n, p, best); why != "" {
				best, reason = p, why
			}
		}
		out[n] = []string{best}
		how = append(how, PointNode{Node: n, Point: best, How: reason})
		e.note("capture point %q taken as nearest node %s (%s); declare capture.points in the PICS to be sure", best, n, reason)
	}
	return out, how
}

// onlyPoint says how a node capture.points places nowhere is placed at
// the capture's only point: if the PICS places that point at another
// node, the point is away from this one, and the report says so.
func (e *engine) onlyPoint(point string) string {
	if at := e.pics.Capture.Points[point]; at != "" {
		return "only point, away from it: capture.points places it at " + at
	}
	return "only point"
}

// nearer says why capture point p is taken as nearer node n than point
// best, or "": the higher TTL; at equal TTLs, a point whose frames were
// all judged in timestamp order over one with frames judged out of it
// (point.late), where findings not decided from a frame alone are
// INCONCLUSIVE, so that a point that can decide them judges the node;
// then the first to see the node, where timestamps are trusted.
func (e *engine) nearer(n, p, best string) string {
	a, b := e.nodes[nodePoint{n, best}], e.nodes[nodePoint{n, p}]
	lateA, lateB := e.unseenAt(best, "").late > 0, e.unseenAt(p, "").late > 0
	switch {
	case b.maxTTL != a.maxTTL:
		if b.maxTTL > a.maxTTL {
			return "highest TTL"
		}
	case lateA != lateB:
		if lateA {
			return "frames judged in timestamp order"
		}
	case b.firstNs < a.firstNs && e.trusted(p) && e.trusted(best):
		return "first to see it"
	}
	return ""
}

// absentPoint is how a node is placed at a point capture.points declares
// and the capture does not have.
const absentPoint = "declared, no frame of the capture at it"

// declaredHow says how node is placed at point, which capture.points
// declares: a point no frame of the capture was seen at is noted, since
// the node's view is then judged nowhere (a PICS written for another
// capture's point names).
func (e *engine) declaredHow(point, node string, allPoints []string) string {
	if e.points[point] != nil {
		return "declared"
	}
	e.note("capture.points places capture point %q at node %s, and no frame of the capture was seen at it (its points: %s): %s's view is judged at no point; check the PICS's point names", point, node, strings.Join(allPoints, ", "), node)
	return absentPoint
}

// trusted reports whether a point's timestamps can time protocol events.
func (e *engine) trusted(point string) bool {
	if e.pics.Capture.Timestamps == "untrusted" {
		return false
	}
	pt := e.points[point]
	return pt != nil && !pt.nonMonotonic && (pt.n < 2 || pt.lastNs > 0)
}

// report builds the report from the observations.
func (e *engine) report(capInfo *CaptureInfo, devs *Deviations, today time.Time) *Report {
	near, how := e.nearPoints()
	rep := &Report{
		SchemaVersion: SchemaVersion,
		Tool:          ToolInfo{Name: "mrc-conform", Version: Version, Requirements: spec.NumRequirements()},
		Mode:          Passive,
		Timestamp:     time.Now(),
		Capture:       capInfo,
		PICS:          picsInfo(e.pics),
		Connections:   []Connection{},
		Frames:        []Frame{},
		Timelines:     []Timeline{},
	}
	capInfo.Frames, capInfo.MRCFrames, capInfo.DurationNs = e.frames, e.mrcFrames, e.lastNs
	for i := range how {
		how[i].AtNode = e.pics.AtNode(how[i].Point, how[i].Node, e.loc)
	}
	capInfo.PointNodes = how
	trustedAll := true
	for _, n := range sortedKeys(e.points) {
		if !e.trusted(n) {
			trustedAll = false
			if e.pics.Capture.Timestamps != "untrusted" {
				e.note("timestamps at capture point %q go backwards: timing cases there are INCONCLUSIVE", n)
			}
		}
	}
	for _, n := range sortedKeys(e.points) {
		if late := e.points[n].late; late > 0 {
			e.note("%d frames at capture point %q were judged out of timestamp order: findings there not decided from a frame alone are INCONCLUSIVE", late, n)
		}
	}
	if e.pics.Capture.Timestamps == "untrusted" {
		e.note("the PICS declares the timestamps untrusted: timing cases are INCONCLUSIVE")
	}
	capInfo.TimestampsTrusted = trustedAll && e.frames > 0
	e.assignFlowIDs(rep)
	keep := func(k obsKey) bool {
		if !e.pics.isDUT(k.node) && k.node != unknownSender {
			return false
		}
		return slices.Contains(near[k.node], k.point)
	}
	byCase := map[string][]obsKey{}
	for np, row := range e.rows {
		for cs := range row {
			if row[cs].used {
				byCase[caseNames[cs]] = append(byCase[caseNames[cs]], obsKey{caseID(cs), np.point, np.node})
			}
		}
	}
	for _, c := range passiveSorted() {
		if c.Mode != Passive {
			continue
		}
		res := Result{Case: c, Findings: []Finding{}}
		if v, why, preset := e.pics.preset(&c); preset {
			res.Verdict, res.Reason = v, why
		} else {
			e.aggregate(&c, &res, byCase[c.ID], keep)
		}
		rep.Results = append(rep.Results, res)
	}
	e.noteEvidenceBounds()
	capInfo.Notes = append([]string{}, e.notes...)
	active, expired := devs.Resolve(today)
	rep.Deviations = DeviationsInfo{Date: today.Format(time.DateOnly), List: []DeviationInfo{}}
	if devs != nil {
		rep.Deviations.File, rep.Deviations.SHA256 = devs.File, devs.SHA
	}
	e.timelines(rep)
	rep.Finalize(active, expired)
	return rep
}

// judgedFinding is a finding of key k as the report gives it: INCONCLUSIVE
// where the capture point's timestamps are not trusted and the finding
// rests on them, or it rests on a frame the capture may have lost or
// judged out of its place (u); NON-STRICT where case c is not a MUST.
func judgedFinding(f Finding, c *Case, k obsKey, untrusted, remote bool, u unseen) Finding {
	if untrusted && (c.Timing || f.timing) && f.Verdict == Fail {
		f.Verdict = Inconclusive
	}
	if f.Verdict == Fail && (u.any() && !f.frame || remote && f.absent) {
		f.Verdict = Inconclusive
		f.Observed += " (undecidable: " + unseenReason(k, remote, u) + ")"
	}
	if f.Verdict == Fail && !c.Strict() {
		f.Verdict = NonStrict
	}
	return f
}

// sample keeps, of a case's findings, the first MaxFindings (worst
// first, then by frame) in Findings, and the latest LastFindings judged
// of the others, and of last, in LastFindings.
func (res *Result) sample(last []Finding) {
	slices.SortStableFunc(res.Findings, func(a, b Finding) int {
		if a.Verdict != b.Verdict {
			return int(b.Verdict) - int(a.Verdict)
		}
		return a.Frame - b.Frame
	})
	if len(res.Findings) > MaxFindings {
		for i := range res.Findings[MaxFindings:] {
			last = append(last, res.Findings[MaxFindings+i].placeOnly())
		}
		res.Findings = res.Findings[:MaxFindings]
	}
	slices.SortStableFunc(last, func(a, b Finding) int { return cmp.Compare(a.ord, b.ord) })
	last = last[max(0, len(last)-LastFindings):]
	slices.SortStableFunc(last, func(a, b Finding) int { return a.Frame - b.Frame })
	res.LastFindings = last
}

// standing returns the passes, failures and undecided observations of key
// k of case c (o) as its capture point lets them stand: those its
// timestamps (untrusted), its place (remote) or what it did not see in
// place (u) cannot decide are undecided, and why says why (the first
// reason).
func (e *engine) standing(c *Case, k obsKey, o *obsCount, untrusted, remote bool, u unseen) (okN, badN, undN int, why string) {
	okN, badN, undN = o.ok, o.bad, o.undecided
	if untrusted {
		mvOK, mvBad := o.okT, o.badT
		if c.Timing {
			mvOK, mvBad = o.ok, o.bad
		}
		okN -= mvOK
		badN -= mvBad
		undN += mvOK + mvBad
		if mvOK+mvBad > 0 {
			why = "timestamps at capture point " + k.point + " are not trusted"
		}
	}
	if mv := o.unseenMoved(untrusted, c.Timing, remote, u.any()); mv > 0 {
		badN -= mv
		undN += mv
		if why == "" {
			why = unseenReason(k, remote, u)
		}
	}
	if u.mixed != "" || u.cut > 0 {
		// A pass there may rest on the other point's copy of a frame;
		// one not decided from the frame alone, on taking writes cut by
		// the snap length as had whole.
		mv := okN
		if u.mixed == "" {
			mv = max(0, okN-o.okF)
		}
		undN += mv
		okN -= mv
		if why == "" && mv > 0 {
			why = unseenReason(k, remote, u)
		}
	}
	return okN, badN, undN, why
}

func (e *engine) aggregate(c *Case, res *Result, keys []obsKey, keep func(obsKey) bool) {
	slices.SortFunc(keys, func(a, b obsKey) int {
		if x := strings.Compare(a.point, b.point); x != 0 {
			return x
		}
		return strings.Compare(a.node, b.node)
	})
	var ok, bad, und int
	var last, spare []Finding
	reason := ""
	for _, k := range keys {
		if !keep(k) {
			continue
		}
		o := e.obsOf(k)
		untrusted := !e.trusted(k.point)
		remote := !e.pics.AtNode(k.point, k.node, e.loc)
		u := e.unseenAt(k.point, k.node)
		if !hooks.receipt[k.cs] {
			u.cut = 0 // the writes cut are the node's to receive: this case does not rest on them
		}
		okN, badN, undN, why := e.standing(c, k, o, untrusted, remote, u)
		if reason == "" {
			reason = why
		}
		ok += okN
		bad += badN
		und += undN
		if o.reason != "" && reason == "" {
			reason = o.reason
		}
		judged := func(f Finding) Finding { return judgedFinding(f, c, k, untrusted, remote, u) }
		for _, f := range o.findings {
			res.Findings = append(res.Findings, judged(f))
		}
		for _, f := range o.last.all() {
			f = judged(f)
			f.Observed = "" // a finding kept last has no evidence text
			last = append(last, f)
		}
		if o.firsts != nil {
			for _, f := range o.firsts {
				if f.Verdict == Fail {
					spare = append(spare, judged(f))
				}
			}
		}
		res.FindingCount += o.total
	}
	res.Checked = ok + bad + und
	res.sample(last)
	switch {
	case bad > 0 && c.Strict():
		res.Verdict = Fail
		res.Reason = fmt.Sprintf("%d of %d observations violate the requirement", bad, res.Checked)
	case bad > 0 && normLevel(c.Level) == spec.Should:
		res.Verdict = NonStrict
		res.Reason = fmt.Sprintf("%d of %d observations miss a SHOULD", bad, res.Checked)
	case und > 0:
		res.Verdict = Inconclusive
		res.Reason = fmt.Sprintf("%d of %d observations undecidable: %s", und, res.Checked, reason)
	case ok > 0 && e.bounded:
		res.Verdict = Inconclusive
		res.Reason = fmt.Sprintf("%d observations passed, but a state bound was reached (see the capture notes)", ok)
	case ok > 0:
		res.Verdict = Pass
		res.Reason = fmt.Sprintf("%d observations, all as required", ok)
	default:
		res.Verdict = Inconclusive
		res.Reason = c.Inconclusive
		if res.Reason == "" {
			res.Reason = "nothing in the capture exercises this case"
		}
	}
	res.showEvidence(spare)
}

// showEvidence makes a FAIL or NON-STRICT verdict show a finding of its
// own verdict. When none of Findings and LastFindings is one (the first
// MaxFindings and the latest of each key were all made INCONCLUSIVE, and
// the failures that decided lie between them), the first judged of spare
// that is (the first failures of each kind beyond a key's findings,
// firstFails, as judgedFinding made them) takes the place of the last of
// Findings, which sample sorted least bad last.
func (res *Result) showEvidence(spare []Finding) {
	if res.Verdict != Fail && res.Verdict != NonStrict {
		return
	}
	for _, fs := range [][]Finding{res.Findings, res.LastFindings} {
		for i := range fs {
			if fs[i].Verdict == res.Verdict {
				return
			}
		}
	}
	first := -1
	for i := range spare {
		if spare[i].Verdict == res.Verdict && (first < 0 || spare[i].ord < spare[first].ord) {
			first = i
		}
	}
	if first < 0 {
		return
	}
	res.Findings = append(res.Findings[:min(len(res.Findings), MaxFindings-1)], spare[first])
}

// unseenMoved returns how many of o's failing observations may rest on
// a packet the capture point did not see in its place: at a point whose
// capture lost frames or judged frames out of timestamp order (lossy,
// unseen.any), every one not decided from the frame alone; at a point
// away from the node (remote), those resting on a packet not seen; less
// what untrusted timestamps moved already.
func (o *obsCount) unseenMoved(untrusted, timingCase, remote, lossy bool) int {
	switch {
	case untrusted && timingCase:
		return 0 // every failure moved already
	case lossy && untrusted:
		return o.bad - o.badF - o.badT // badF and badT are apart
	case lossy:
		return o.bad - o.badF
	case remote && untrusted:
		return o.badA - o.badTA
	case remote:
		return o.badA
	}
	return 0
}

// unseenReason says why a failure at point k.point may rest on a packet
// not seen there in its place: one of its interfaces carries two capture
// points' frames (u.mixed), or follows or precedes one of its name at
// another point (u.split), its capture lost frames (u.lost of them), or
// judged frames out of timestamp order (u.late), or it is away from
// k.node (remote).
func unseenReason(k obsKey, remote bool, u unseen) string {
	switch {
	case u.mixed != "":
		return fmt.Sprintf("interface %s of capture point %s carries two capture points' frames, so a packet seen or not seen there may be the other point's", u.mixed, k.point)
	case u.cut > 0:
		return fmt.Sprintf("%d writes to %s at capture point %s were cut by the snap length: their ICRC is not in the capture, so whether %s had each whole is not known", u.cut, k.node, k.point, k.node)
	case u.split != "":
		return fmt.Sprintf("%s (one interface's capture in two files?), so a packet not seen at capture point %s may be among the other point's frames", u.split, k.point)
	case u.lost > 0:
		return fmt.Sprintf("capture point %s lost %d frames (its interfaces' statistics), so a packet not seen there may be one of them", k.point, u.lost)
	case u.late > 0:
		return fmt.Sprintf("capture point %s judged %d frames out of timestamp order (%s), so a packet not seen there in its place may be one of them", k.point, u.late, lateWhy(u.window))
	case remote:
		return remoteReason(k.point, k.node)
	}
	return ""
}

// lateWhy says why frames are judged out of timestamp order, the judge
// holding back window frames.
func lateWhy(window int) string {
	return fmt.Sprintf("more than %d frames late in the file, or their interface's timestamps go backwards", window)
}

// unseen is what a capture point's capture says of the packets it may not
// have seen in their place: the frames it lost (its interfaces'
// statistics, point.lost), those it judged out of timestamp order
// (point.late), the interface of it that carries two capture points'
// frames (point.mixed: a pass there is undecidable too, aggregate), and
// its interface that one of another point, of the same name, came before
// or after (point.split: one capture's files put together apart).
type unseen struct {
	lost, late   uint64
	mixed, split string
	window       int // the frames the merger held back (late's reason)
	// cut counts the writes to the observation's node cut by the snap
	// length at the point (point.cutTo), for a case that rests on what
	// the node had whole (hooks.receipt): taken as arrived whole, each may
	// have had a bad ICRC, so an observation not decided from the frame
	// alone, pass or failure, is undecidable.
	cut int
}

// any reports whether a packet judged not seen, or not yet seen, at the
// point may have passed it, or been the other point's.
func (u unseen) any() bool {
	return u.lost > 0 || u.late > 0 || u.mixed != "" || u.split != "" || u.cut > 0
}

// unseenAt returns what point's capture says of the packets it may not
// have seen in their place, and of node's view there ("" none).
func (e *engine) unseenAt(point, node string) unseen {
	if pt := e.points[point]; pt != nil {
		return unseen{pt.lost, pt.late, pt.mixed, pt.split, e.reorder.window, pt.cutTo[node]}
	}
	return unseen{}
}

// remoteReason explains why evidence of absence does not decide at a
// capture point away from the node.
func remoteReason(point, node string) string {
	return "capture point " + point + " is not at " + node + "'s own interface, so a packet not seen there may have been lost between them (PICS capture.location, capture.points)"
}

func picsInfo(p *PICS) PICSInfo {
	info := PICSInfo{File: p.File(), SHA256: p.SHA256(), Implementation: p.Implementation,
		Profile: p.Codec().Profile().Name, EVMode: strings.ToLower(p.EVModeValue().String()), Features: []string{},
		DUT: slices.Clone(p.DUT)}
	for _, f := range sortedKeys(p.Features) {
		if p.Features[f] {
			info.Features = append(info.Features, f)
		}
	}
	return info
}
