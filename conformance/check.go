package conformance

import (
	"fmt"
	"slices"
	"sync"

	"github.com/openmrc/mrc/wire"
)

// caseReq is a requirement of the spec registry as one passive case's
// check cites it: a typed index into caseReqs, made once, as the package
// is initialised, by caseID.req (each checks_*.go file declares its own
// next to its caseIDs) or by addChecks for the codec's requirements a
// check judges (check.codec). A finding cites a caseReq and is recorded
// under the caseReq's case: the failure functions (failWhy, undecidedWhy,
// bad) take no case of their own, so a finding cannot cite another case's
// requirement, and citing one costs an array index, no string. A
// requirement ID is written once, where its caseReq is made; checkChecks
// looks each up in the registry, its check's reqs and its
// case's catalog entry when the judge starts (ChecksErr) and in the
// package's tests.
type caseReq uint16

// maxCaseReqs bounds the caseReqs.
const maxCaseReqs = 256

var (
	// caseReqs are the requirements the checks cite, by caseReq: the
	// case, the requirement's ID, and whether addChecks made it for a
	// requirement of the codec (check.codec).
	caseReqs [maxCaseReqs]struct {
		cs    caseID
		codec bool
		id    RequirementID
	}
	numCaseReqs caseReq // the caseReqs made
)

// req makes the caseReq of requirement id, cited by case c's check (package
// variable initialisation, in file order).
func (c caseID) req(id RequirementID) caseReq {
	if numCaseReqs >= maxCaseReqs {
		panic("conformance: more than maxCaseReqs requirements cited by checks")
	}
	r := numCaseReqs
	caseReqs[r].cs, caseReqs[r].id = c, id
	numCaseReqs++
	return r
}

// codecReq returns the caseReq of the codec's requirement r for case c:
// the one c's check declares for it, else one made for it.
func (c caseID) codecReq(r wire.ReqID) caseReq {
	id := RequirementID(r.String())
	for q := range numCaseReqs {
		if caseReqs[q].cs == c && caseReqs[q].id == id {
			return q
		}
	}
	q := c.req(id)
	caseReqs[q].codec = true
	return q
}

// cs returns the case whose check cites r.
func (r caseReq) cs() caseID { return caseReqs[r].cs }

// id returns the requirement r cites.
func (r caseReq) id() RequirementID { return caseReqs[r].id }

func (r caseReq) String() string { return string(caseReqs[r].id) }

// A check is one passive case of the catalog: its case (a typed caseID
// whose name is the catalog entry), the requirements its findings cite,
// and the hooks through which the engine shows it frames. The engine keeps
// the observed-connection model (flows: PSN and MSN windows, SACK, NACK and
// ACK state, EV states; see flow.go) and calls the hooks of every check
// that has one whose case the capture decides (PICS.live), in
// registration order: the sent hooks with the model as it
// stood before the write (sentCtx says what the write is to it), every
// other hook once the model has taken its frame in. A hook reads the
// model; the state a check keeps of its own is a value of its own type,
// one per connection (check.state, connState), documented with its
// bound where it is declared, and read by no code outside the checks
// (TestChecksKeepModelReadOnly). A check whose rule is "X within T" may
// ask to be called when capture time passes a deadline (check.timer,
// engine.arm).
//
// Adding a passive case is one file's change, the checks file of its area
// (checks_*.go): its caseID, declared with its catalog entry
// (passiveCase(Case{...})), the caseReqs its findings cite (caseID.req) and
// its check value. When they disagree, checkChecks fails: the judge refuses
// to start (ChecksErr) and TestEveryPassiveCaseHasOneCheck fails. The
// golden verdicts (go test -run TestGoldenVerdicts -update-golden) and the
// READMEs' case counts (TestREADMECaseCounts) then follow.
type check struct {
	cs    caseID
	reqs  []caseReq    // the requirements the check's findings cite, besides the codec's (caseID.req)
	codec []wire.ReqID // the codec's findings (wire.Violation, wire.Error) judged under this case

	// frame judges the wire rules of every decoded frame of its kinds
	// and opcodes (frameOn, frameOps), as its sender sent it: each such
	// frame it does not fail (bad) is a passing observation of the case,
	// counted by the engine (hooks.passBy), unless frameSelf: then the
	// hook records its observations itself.
	frame     func(e *engine, x *frameCtx)
	frameSelf bool
	// frameOps are the opcodes whose frames the frame hook judges and
	// everyFrame counts (none: every opcode); the hook is not called for
	// others (hooks.frameBy).
	frameOps []wire.Opcode
	// frameOn are the kinds a frame must all be of for the frame hook to
	// judge it (none: every frame); the hook is not called for others
	// (hooks.frameBy).
	frameOn frameKind
	// everyFrame: every decoded frame (of the kinds everyOn and the
	// opcodes frameOps, when set) is a passing observation of the case
	// unless the codec found one of its violations (codec), with no hook
	// to call (hooks.passBy).
	everyFrame bool
	everyOn    frameKind
	// framesShow: its observations rest on the frames the capture holds,
	// not on which writes a responder had whole (a probe's answer, a
	// field of feedback, or what feedback says of the write it names, which
	// it shows arrived), so writes cut by the snap length leave them
	// decided (hooks.receipt).
	framesShow bool
	// sent judges a write as its requester sent it.
	sent func(e *engine, x *sentCtx)
	// resent judges a write as its requester sent it again (not a first
	// transmission, sentCtx.isNew): it is not called for first
	// transmissions, most writes. With sent it runs after it.
	resent func(e *engine, x *sentCtx)
	// sentOn are the kinds of write the sent hook acts on, any of them
	// (none: every write); resentOn, the resent hook's. A hook is not
	// called for a write of none of its kinds (hooks.sentBy): it would
	// return at once.
	sentOn, resentOn writeKind
	// msg judges a first transmission's place in its message (the MSN
	// window): the message the write starts, continues or ends.
	msg func(e *engine, x *msgCtx)
	// arrived judges a write as it reached the responder; arrivedOn are
	// the kinds of arrival it acts on, any of them (none: every
	// arrival): it is not called for others (hooks.arrivedBy).
	arrived   func(e *engine, x *arriveCtx)
	arrivedOn arriveKind
	// feedback judges a SACK, NACK or ACKNOWLEDGE (either view).
	feedback func(e *engine, x *fbCtx)
	// feedbackOps are the opcodes whose feedback the feedback hook
	// judges (none: all three); it is not called for others
	// (hooks.feedbackOp).
	feedbackOps []wire.Opcode
	// answer judges feedback that answers an arrival (a SACK's trigger,
	// a probe, a trimmed or out-of-window packet); answerOn are the kinds
	// of answer it acts on, any of them (none: every kind): it is not
	// called for others (hooks.answerBy).
	answer   func(e *engine, x *answerCtx)
	answerOn answerKinds
	// probe judges a RELIABILITY_PROBE_REQ as its requester sent it.
	probe func(e *engine, x *probeCtx)
	// endpoint judges an endpoint request or response.
	endpoint func(e *engine, x *epCtx)
	// badICRC judges a frame whose ICRC is bad, which no other hook is
	// shown (badicrc.go).
	badICRC func(e *engine, x *badCtx)
	// event sees the model's state changes (an EV retired, a QP fatal).
	event func(e *engine, x *eventCtx)
	// timer is called when capture time passes a deadline the check
	// armed (engine.arm; checkstate.go).
	timer func(e *engine, x *timerCtx)
	// finish judges what the end of the capture leaves pending on a
	// connection; finishPoint, at a capture point.
	finish      func(e *engine, pt *point, fl *flow)
	finishPoint func(e *engine, pt *point)

	// state is the check's own state on each connection (connState's
	// slot; nil: none), which its hooks reach through the connState
	// declared with the check (connState.of).
	state *stateSlot
}

// frameKind is a set of kinds of decoded frame: a frame hook declares the
// kinds it judges (check.frameOn) and wireChecks calls it for frames of
// those kinds only, found once per frame (kindOf).
type frameKind uint8

const (
	kTrimmed   frameKind = 1 << iota // trimmed (wire.Packet.Trimmed)
	kUntrimmed                       // not trimmed
	kIPv6                            // IPv6 (inner header, under SRv6)
	kSRv6                            // SRv6-encapsulated
	kTSETH                           // carries a TSETH
	kWhole                           // whole, not cut by the snap length
	kCut                             // cut by the snap length after its headers (pcap.Record.Cut)
	numKinds   = 1 << iota
)

// kindOf returns the kinds of a decoded frame, cut by the snap length
// or not.
func kindOf(p *wire.Packet, cut bool) frameKind {
	k := kUntrimmed | kWhole
	if p.Trimmed {
		k = kTrimmed | kWhole
	}
	if cut {
		k ^= kWhole | kCut
	}
	if p.IsIPv6 {
		k |= kIPv6
	}
	if p.SRv6 {
		k |= kSRv6
	}
	if p.Decoded&wire.HasTSETH != 0 {
		k |= kTSETH
	}
	return k
}

// is reports whether k holds every kind of want.
func (k frameKind) is(want frameKind) bool { return k&want == want }

// opSlots is the number of opcode slots of the frame hook lists: one per
// MRC opcode (the low five bits of 0xC0-0xDF), one for every other.
const opSlots = 33

// opSlot returns the frame hook lists' slot of op. The frames the frame
// hooks see decoded, so their opcode is an MRC one, each in a slot of its
// own.
func opSlot(op wire.Opcode) int {
	if op&0xE0 != 0xC0 {
		return opSlots - 1
	}
	return int(op & 0x1F)
}

// writeKind is a set of kinds of write, as its requester sent it (kindOfWrite):
// a sent or resent hook declares the kinds it acts on (check.sentOn,
// resentOn) and sendWrite calls it for writes of at least one of them only.
// A hook keeps its own tests; the kinds spare the calls of hooks that would
// return at once, such as most resend hooks on a write a point sees out of
// order.
type writeKind uint16

const (
	wNew     writeKind = 1 << iota // a first transmission (sentCtx.isNew)
	wResend                        // not a first transmission
	wTracked                       // a resend of an outstanding PSN (sentCtx.tracked)
	wNACKed                        // a resend of a PSN a NACK was pending for (sentCtx.nack)
	wMPR                           // the PICS declares an MPR
	// The kinds below are rare: a write of any of them runs every hook
	// (hooks.sentAll), and hooks.sentBy has no lists for them.
	wNACKPend // NACKs are pending on the connection (flow.nackPend)
	wRetired  // the connection has a retired EV (flow.bad)
	wFatal    // the connection is fatal (flow.fatal)
	wPSU      // the point saw a port status update (point.psu)
	wSRv6     // SRv6-encapsulated
)

const (
	numSentLists = int(wMPR) << 1 // hooks.sentBy's lists: by the common kinds
	rareWrites   = wNACKPend | wRetired | wFatal | wPSU | wSRv6
)

// arriveKind is a set of kinds of arrival at the responder (arrive): an
// arrived hook declares the kinds it acts on (check.arrivedOn), and the
// engine calls it for arrivals of at least one of them only.
type arriveKind uint8

const (
	aTrimmed       arriveKind = 1 << iota // a new PSN that arrived trimmed (arrTrimmed)
	numArriveLists            = 1 << iota // hooks.arrivedBy's lists: by the kinds above
)

// answerKinds is a set of answerKinds (bit 1<<k for kind k): an answer
// hook declares the kinds it acts on (check.answerOn), and runAnswer
// calls it for answers of those kinds only.
type answerKinds uint8

// numAnswerKinds is the number of hooks.answerBy's lists: one per
// answerKind (ansTrigger to ansOOR), indexed by the kind.
const numAnswerKinds = int(ansOOR) + 1

// answerOn returns the set of kinds ks.
func answerOn(ks ...answerKind) answerKinds {
	var s answerKinds
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// caseID is a passive case of the catalog, as the checks record it: a
// typed index, so that an observation costs no string hashing. Each
// checks_*.go file declares the caseIDs of its checks with passiveCase;
// checkCaseNames checks the names against the catalog.
type caseID uint8

// maxCases bounds the passive cases (the observation rows are arrays).
const maxCases = 96

var (
	caseNames [maxCases]string // the catalog IDs of the passive cases, by caseID
	numCases  caseID           // the passive cases declared
)

// passiveCase declares the caseID of a passive case (package variable
// initialisation, in file order).
func passiveCase(cs Case) caseID {
	if numCases >= maxCases {
		panic("conformance: more than maxCases passive cases")
	}
	c := numCases
	caseNames[c] = cs.ID
	passiveCases = append(passiveCases, cs)
	numCases++
	return c
}

func (c caseID) String() string { return caseNames[c] }

// checks are the passive checks by case, order the same in registration
// order; hooks, the checks of each hook in registration order (buildHooks,
// but codecReqs, codecJudged and receipt, which addChecks fills).
var (
	checks    [maxCases]*check
	order     []*check
	hooksOnce sync.Once
	hooks     struct {
		hookSet // of every check: an engine runs those of its PICS's live cases (hookSetFor)
		// codecReqs are, by wire.ReqID, the requirement as the check
		// that judges the codec's findings of it cites it (check.codec);
		// codecJudged, whether one does.
		codecReqs   [wire.NumReqs]caseReq
		codecJudged [wire.NumReqs]bool
		// receipt holds the cases judged on what a responder did on the
		// writes it had (checks with arrived, feedback or answer hooks,
		// but framesShow): where writes were cut by the snap length, it
		// may not have had them whole (unseen.cut).
		receipt [maxCases]bool
	}
	checksErr error
)

// hookSet holds the checks of each hook, of a set of cases, in
// registration order (newHookSet).
type hookSet struct {
	frame, msg, arrived, feedback, answer, probe, endpoint, badICRC, event, finish, finishPoint []*check
	frameBy                                                                                     [numKinds][opSlots][]*check // the frame hooks by frame kind and opcode (opSlot)
	feedbackOp                                                                                  [256][]*check               // the feedback hooks by opcode
	// passAt are, by frame kind and opcode slot, where in passCases
	// the cases are of which a frame is a passing observation unless
	// it failed them (passBy): the everyFrame cases and those of the
	// frame hooks it is shown to (but frameSelf's).
	passAt    [numKinds][opSlots]struct{ off, n uint32 }
	passCases []caseID
	// arrivedBy are the arrived hooks an arrival of each set of
	// kinds runs (check.arrivedOn).
	arrivedBy [numArriveLists][]*check
	// answerBy are the answer hooks an answer of each kind runs
	// (check.answerOn).
	answerBy [numAnswerKinds][]*check
	// sentAll are the hooks a write of rare kinds runs: the sent
	// hooks for a first transmission, the sent and resent hooks for a
	// resend (by wResend). sentBy, those a write of common kinds runs,
	// by its kinds: sentAll's that act on one of them.
	sentAll [2][]func(e *engine, x *sentCtx)
	sentBy  [numSentLists][]func(e *engine, x *sentCtx)
}

// addChecks registers the checks of one area (each checks_*.go file's
// init). It maps the codec's requirements to their checks' caseReqs
// (caseID.codecReq); buildHooks makes the hook lists.
func addChecks(cs ...check) {
	for i := range cs {
		c := &cs[i]
		if c.cs >= numCases || checks[c.cs] != nil {
			if checksErr == nil {
				checksErr = &CatalogError{Case: fmt.Sprint(c.cs), Msg: "a check for no case, or a second check for one case"}
			}
			continue
		}
		checks[c.cs] = c
		hooks.receipt[c.cs] = (c.arrived != nil || c.feedback != nil || c.answer != nil) && !c.framesShow
		if c.state != nil {
			if c.state.i != 0 || numConnStates >= maxConnStates {
				if checksErr == nil {
					checksErr = &CatalogError{Case: c.cs.String(), Msg: "its check declares a state another check declares, or more than maxConnStates checks keep one"}
				}
			} else {
				numConnStates++
				c.state.i = numConnStates
			}
		}
		h := &hooks
		for _, r := range c.codec {
			if r >= wire.NumReqs || h.codecJudged[r] {
				if checksErr == nil {
					checksErr = &CatalogError{Case: c.cs.String(), Msg: "its check judges codec requirement " + r.String() + ", which is no wire.ReqID or another check judges"}
				}
				continue
			}
			h.codecReqs[r], h.codecJudged[r] = c.cs.codecReq(r), true
		}
		order = append(order, c)
	}
}

// buildHooks fills hooks' lists with every check's, once.
func buildHooks() {
	hooksOnce.Do(func() { hooks.hookSet = *newHookSet(allCases()) })
}

// newHookSet makes the hook lists of the checks of the cases live, in
// registration order: the lists by frame kind and opcode slot and by
// feedback opcode, over two thousand, are cut from one array each,
// counted first, instead of each growing by appends.
func newHookSet(live caseSet) *hookSet {
	h := &hookSet{}
	var nFrame, nPass [numKinds][opSlots]int
	var nFeedback [256]int
	total := [2]int{} // *check entries, caseID entries
	var run []*check
	for _, c := range order {
		if live.has(c.cs) {
			run = append(run, c)
		}
	}
	for _, c := range run {
		placeCheck(c, func(k frameKind, s int) { nFrame[k][s]++; total[0]++ },
			func(op int) { nFeedback[op]++; total[0]++ }, func(k frameKind, s int) { nPass[k][s]++; total[1]++ })
	}
	lists := make([]*check, total[0])
	h.passCases = make([]caseID, total[1])
	cut := func(n int) []*check { l := lists[:0:n]; lists = lists[n:]; return l }
	off := 0
	for k := range frameKind(numKinds) {
		for s := range opSlots {
			h.frameBy[k][s] = cut(nFrame[k][s])
			h.passAt[k][s].off = uint32(off)
			off += nPass[k][s]
		}
	}
	for op := range h.feedbackOp {
		h.feedbackOp[op] = cut(nFeedback[op])
	}
	for _, c := range run {
		placeCheck(c, func(k frameKind, s int) { h.frameBy[k][s] = append(h.frameBy[k][s], c) },
			func(op int) { h.feedbackOp[op] = append(h.feedbackOp[op], c) },
			func(k frameKind, s int) { a := &h.passAt[k][s]; h.passCases[int(a.off)+int(a.n)] = c.cs; a.n++ })
		h.add(c)
	}
	h.buildSentBy(run)
	for k := range arriveKind(numArriveLists) {
		for _, c := range h.arrived {
			if c.arrivedOn == 0 || c.arrivedOn&k != 0 {
				h.arrivedBy[k] = append(h.arrivedBy[k], c)
			}
		}
	}
	for k := range h.answerBy {
		for _, c := range h.answer {
			if c.answerOn == 0 || c.answerOn&(1<<k) != 0 {
				h.answerBy[k] = append(h.answerBy[k], c)
			}
		}
	}
	return h
}

// caseSet is a set of passive cases.
type caseSet [(maxCases + 63) / 64]uint64

func (s *caseSet) has(c caseID) bool { return s[c/64]&(1<<(c%64)) != 0 }
func (s *caseSet) add(c caseID)      { s[c/64] |= 1 << (c % 64) }

// allCases returns the set of every passive case.
func allCases() caseSet {
	var s caseSet
	for c := range numCases {
		s.add(c)
	}
	return s
}

// hookSets caches the hook lists of each set of live cases an engine was
// made for (hookSetFor): one per PICS a process judges with, at most
// maxHookSets; beyond, each engine makes its own.
var hookSets struct {
	sync.Mutex
	m map[caseSet]*hookSet
}

const maxHookSets = 64

// hookSetFor returns the hook lists of the checks of the cases live.
func hookSetFor(live caseSet) *hookSet {
	if live == allCases() {
		buildHooks()
		return &hooks.hookSet
	}
	hookSets.Lock()
	defer hookSets.Unlock()
	if h, ok := hookSets.m[live]; ok {
		return h
	}
	h := newHookSet(live)
	if hookSets.m == nil {
		hookSets.m = map[caseSet]*hookSet{}
	}
	if len(hookSets.m) < maxHookSets {
		hookSets.m[live] = h
	}
	return h
}

// placeCheck calls frame with each frame kind and opcode slot whose frame
// hook list holds c, feedback with each feedback opcode whose list holds
// it, and pass with each frame kind and opcode slot whose passBy list
// holds its case. The lists of kinds kindOf never gives (trimmed and
// untrimmed, or neither) stay empty.
func placeCheck(c *check, frame func(k frameKind, s int), feedback func(op int), pass func(k frameKind, s int)) {
	if c.frame != nil || c.everyFrame {
		placeFrames(c, frame, pass)
	}
	if c.feedback != nil {
		for op := range 256 {
			if len(c.feedbackOps) == 0 || slices.Contains(c.feedbackOps, wire.Opcode(op)) {
				feedback(op)
			}
		}
	}
}

// placeFrames is placeCheck's part for the frame hook and everyFrame.
func placeFrames(c *check, frame, pass func(k frameKind, s int)) {
	var slots [opSlots]bool
	for s := range opSlots {
		// The last slot, of the opcodes that are not MRC's, is a hook's
		// only when it declares no opcodes.
		slots[s] = len(c.frameOps) == 0 || s < opSlots-1 && slices.Contains(c.frameOps, wire.Opcode(0xC0|s))
	}
	for k := range frameKind(numKinds) {
		if k.is(kTrimmed) == k.is(kUntrimmed) || k.is(kWhole) == k.is(kCut) {
			continue // no frame is of this kind: kindOf gives one of each two
		}
		every := c.everyFrame && k.is(c.everyOn)
		hook := c.frame != nil && k.is(c.frameOn)
		if !every && !hook {
			continue
		}
		for s, ok := range slots {
			if !ok {
				continue
			}
			if hook {
				frame(k, s)
			}
			if every || hook && !c.frameSelf {
				pass(k, s)
			}
		}
	}
}

// passBy returns the cases of which a frame of kinds k and opcode slot s
// is a passing observation unless it failed them (passAt).
func (h *hookSet) passBy(k frameKind, s int) []caseID {
	a := h.passAt[k][s]
	return h.passCases[a.off : a.off+a.n]
}

// buildSentBy fills the sent hook lists by write kind (sentBy) with the
// hooks of run, in registration order.
func (h *hookSet) buildSentBy(run []*check) {
	for k := range writeKind(numSentLists) {
		if k&wNew != 0 == (k&wResend != 0) {
			continue // no write is of this kind: a write is new or resent
		}
		l := []func(e *engine, x *sentCtx){}
		for _, c := range run {
			if c.sent != nil && (c.sentOn == 0 || c.sentOn&k != 0) {
				l = append(l, c.sent)
			}
			if c.resent != nil && k&wResend != 0 && (c.resentOn == 0 || c.resentOn&k != 0) {
				l = append(l, c.resent)
			}
		}
		h.sentBy[k] = l
	}
}

// sentHooks returns the hooks a write of kinds k runs.
func (h *hookSet) sentHooks(k writeKind) []func(e *engine, x *sentCtx) {
	if k&rareWrites != 0 {
		if k&wResend != 0 {
			return h.sentAll[1]
		}
		return h.sentAll[0]
	}
	return h.sentBy[k]
}

// add appends c to the lists of the hooks it has, and its sent and
// resent hooks to sentAll.
func (h *hookSet) add(c *check) {
	if c.sent != nil {
		h.sentAll[0] = append(h.sentAll[0], c.sent)
		h.sentAll[1] = append(h.sentAll[1], c.sent)
	}
	if c.resent != nil {
		h.sentAll[1] = append(h.sentAll[1], c.resent)
	}
	for _, a := range []struct {
		set  bool
		list *[]*check
	}{
		{c.frame != nil, &h.frame}, {c.msg != nil, &h.msg},
		{c.arrived != nil, &h.arrived}, {c.feedback != nil, &h.feedback}, {c.answer != nil, &h.answer},
		{c.probe != nil, &h.probe}, {c.endpoint != nil, &h.endpoint}, {c.badICRC != nil, &h.badICRC}, {c.event != nil, &h.event},
		{c.finish != nil, &h.finish}, {c.finishPoint != nil, &h.finishPoint},
	} {
		if a.set {
			*a.list = append(*a.list, c)
		}
	}
}

// checkChecks checks the checks against the catalog and the registry: one
// check per passive case and one passive case per check, each with at
// least one hook and one requirement; and every requirement a check cites
// (caseReqs) in the registry, declared by its check (check.reqs, or the
// codec's, check.codec) and listed by its case in the catalog.
func checkChecks(cases []Case) error {
	if checksErr != nil {
		return checksErr
	}
	for cs, c := range checks[:numCases] {
		if c == nil {
			return &CatalogError{Case: caseID(cs).String(), Msg: "a passive case with no check: the judge records nothing for it"}
		}
		cat, ok := findCase(cases, c.cs.String())
		if !ok {
			return &CatalogError{Case: c.cs.String(), Msg: "a check for no passive case of the catalog"}
		}
		if len(c.reqs) == 0 && len(c.codec) == 0 {
			return &CatalogError{Case: cat.ID, Msg: "its check cites no requirement"}
		}
		for _, r := range c.reqs {
			if r >= numCaseReqs || r.cs() != c.cs {
				return &CatalogError{Case: cat.ID, Msg: "its check declares requirement " + r.String() + " of another case (caseID.req)"}
			}
		}
		for r := range numCaseReqs {
			if r.cs() != c.cs {
				continue
			}
			if err := checkCaseReq(c, &cat, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCaseReq checks requirement r as check c, of case cat, cites it: in
// the registry, declared by the check and listed by the case.
func checkCaseReq(c *check, cat *Case, r caseReq) error {
	id := r.id()
	if _, ok := id.Level(); !ok {
		return &CatalogError{Case: cat.ID, Msg: "its check cites requirement " + string(id) + ", which is not in the registry", Err: &UnknownRequirementError{ID: string(id)}}
	}
	if !caseReqs[r].codec && !slices.Contains(c.reqs, r) {
		return &CatalogError{Case: cat.ID, Msg: "its check cites requirement " + string(id) + ", which it does not declare (check.reqs)"}
	}
	if !slices.Contains(cat.Requirements, id) {
		what := "cites"
		if caseReqs[r].codec {
			what = "judges codec requirement"
		}
		return &CatalogError{Case: cat.ID, Msg: "its check " + what + " " + string(id) + ", which the case does not list"}
	}
	return nil
}

func findCase(cases []Case, id string) (Case, bool) {
	for _, c := range cases {
		if c.ID == id && c.Mode == Passive {
			return c, true
		}
	}
	return Case{}, false
}

// cites reports whether case cs's check declares requirement r.
func (c caseID) cites(r RequirementID) bool {
	k := checks[c]
	if k == nil {
		return false
	}
	for q := range numCaseReqs {
		if q.cs() == c && q.id() == r && (caseReqs[q].codec || slices.Contains(k.reqs, q)) {
			return true
		}
	}
	return false
}
